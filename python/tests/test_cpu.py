"""Tests that need no GPU: bundle indexes, variant choice, the runtime
library's binding, and input validation on CPU tensors.

Torch-dependent tests skip (visibly) where torch is not installed; runtime
library tests skip where libquack_runtime.so is not built (set
QUACK_MLIR_BUILD_DIR or QUACK_MLIR_RUNTIME_LIB).
"""

import json
import os
import subprocess
import sys

import pytest

from quack_mlir import bundle as qb
from quack_mlir import _runtime as rt

METADATA = {
    "schema": 1, "kernel": "rmsnorm_fwd", "symbol": "rmsnorm_fwd",
    "cubin": "k.cubin", "arch": "sm_90", "bindings": {"N": 4096, "T": "bf16"},
    "params": [
        {"name": "M", "kind": "rows", "type": "i64"},
        {"name": "x", "kind": "matrix", "role": "input", "dtype": "bf16"},
        {"name": "x.row_stride", "kind": "row_stride", "of": "x",
         "type": "i64"},
        {"name": "w", "kind": "row", "role": "input", "dtype": "bf16"},
        {"name": "eps", "kind": "scalar", "role": "input", "type": "f32"},
        {"name": "y", "kind": "matrix", "role": "output", "dtype": "bf16"},
        {"name": "y.row_stride", "kind": "row_stride", "of": "y",
         "type": "i64"},
        {"name": "rstd", "kind": "per_row", "role": "output", "dtype": "f32"},
    ],
    "N": 4096, "alignment": 16, "grid": {"kind": "rows", "rows_per_cta": 1},
    "block": [256, 1, 1], "cluster": [1, 1, 1],
    "shared_bytes": {"static": 32, "dynamic": 0}, "hash": "5f1c",
}


def make_index(entries):
    return {"schema": 1, "arch": "sm_90", "kernels": [
        {"kernel": k, "bindings": b, "alignment": a,
         "metadata": f"{k}__{'_'.join(f'{x}-{y}' for x, y in b.items())}"
                     f"__a{a}.json"}
        for k, b, a in entries]}


@pytest.fixture
def bundle_dir(tmp_path):
    entries = [("rmsnorm_fwd", {"N": 4096, "T": "bf16"}, a) for a in (2, 8, 16)]
    entries += [("rmsnorm_fwd", {"N": 4096, "T": "f32"}, 16),
                ("rmsnorm_fwd", {"N": 1000, "T": "bf16"}, 16),
                ("softmax_fwd", {"N": 4096, "T": "bf16"}, 16)]
    index = make_index(entries)
    (tmp_path / "index.json").write_text(json.dumps(index))
    (tmp_path / "k.cubin").write_bytes(b"not a real cubin")
    for e in index["kernels"]:
        meta = dict(METADATA, alignment=e["alignment"],
                    bindings=e["bindings"], N=e["bindings"]["N"])
        (tmp_path / e["metadata"]).write_text(json.dumps(meta))
    return tmp_path


# --- bundle index and variant choice -------------------------------------


def test_alignment_of():
    assert qb.alignment_of(0x1000, 4096 * 2) == 256
    assert qb.alignment_of(0x1000, 4096 * 2, cap=16) == 16
    assert qb.alignment_of(0x1008) == 8
    assert qb.alignment_of(0x1000, 7 * 2) == 2
    assert qb.alignment_of(0x1000, 0) == 256  # zero does not limit
    assert qb.alignment_of() == 256


def test_variant_choice_takes_largest_dividing_alignment(bundle_dir):
    b = qb.Bundle(bundle_dir)
    assert b.arch == "sm_90"
    assert len(b.variants) == 6
    v = b.find("rmsnorm_fwd", {"N": 4096, "T": "bf16"}, 256)
    assert v.alignment == 16
    assert b.find("rmsnorm_fwd", {"N": 4096, "T": "bf16"}, 8).alignment == 8
    assert b.find("rmsnorm_fwd", {"T": "bf16", "N": 4096}, 4).alignment == 2
    assert b.metadata_path(v) == os.path.join(str(bundle_dir), v.metadata)
    assert b.find("rmsnorm_fwd", {"N": 4096, "T": "f32"}, 16).bindings == {
        "N": "4096", "T": "f32"}


def test_variant_missing_alignment_names_it(bundle_dir):
    b = qb.Bundle(bundle_dir)
    with pytest.raises(qb.KernelNotFoundError) as e:
        b.find("rmsnorm_fwd", {"N": 1000, "T": "bf16"}, 8)
    msg = str(e.value)
    assert "rmsnorm_fwd (N=1000, T=bf16, alignment 8)" in msg
    assert "need alignment [16]" in msg


def test_variant_missing_bindings_names_them(bundle_dir):
    b = qb.Bundle(bundle_dir)
    with pytest.raises(qb.KernelNotFoundError) as e:
        b.find("rmsnorm_fwd", {"N": 7, "T": "f16"}, 16)
    msg = str(e.value)
    assert "N=7, T=f16, alignment 16" in msg
    assert "N=4096, T=bf16" in msg  # lists what the bundle has
    with pytest.raises(qb.KernelNotFoundError, match="no layernorm_fwd"):
        b.find("layernorm_fwd", {"N": 7, "T": "f16"}, 16)


def test_variant_bindings_must_match_exactly(bundle_dir):
    b = qb.Bundle(bundle_dir)
    with pytest.raises(qb.KernelNotFoundError):
        b.find("rmsnorm_fwd", {"N": 4096}, 16)
    with pytest.raises(qb.KernelNotFoundError):
        b.find("rmsnorm_fwd", {"N": 4096, "T": "bf16", "EXTRA": 1}, 16)


@pytest.mark.parametrize("index, message", [
    ([], "must be a JSON object"),
    ({"schema": 2, "kernels": []}, "unsupported schema 2"),
    ({"schema": 1}, "\"kernels\" must be a list"),
    ({"schema": 1, "kernels": [{"kernel": "k", "alignment": 3,
                                "metadata": "k.json"}]}, "power of two"),
    ({"schema": 1, "kernels": [{"kernel": "k", "alignment": 16}]},
     "\"metadata\""),
    ({"schema": 1, "kernels": [{"alignment": 16, "metadata": "k.json"}]},
     "\"kernel\""),
])
def test_bad_index(tmp_path, index, message):
    (tmp_path / "index.json").write_text(json.dumps(index))
    with pytest.raises(qb.BundleError, match=message):
        qb.Bundle(tmp_path)


def test_missing_bundle(tmp_path):
    with pytest.raises(qb.BundleError, match="does not exist"):
        qb.Bundle(tmp_path / "nope")
    with pytest.raises(qb.BundleError, match="not a kernel bundle"):
        qb.Bundle(tmp_path)
    (tmp_path / "index.json").write_text("{")
    with pytest.raises(qb.BundleError, match="cannot read"):
        qb.Bundle(tmp_path)


def test_set_bundle_and_env(bundle_dir, monkeypatch):
    import quack_mlir
    monkeypatch.delenv("QUACK_MLIR_BUNDLE", raising=False)
    quack_mlir.set_bundle(None)
    with pytest.raises(quack_mlir.BundleError, match="QUACK_MLIR_BUNDLE"):
        quack_mlir.get_bundle()
    monkeypatch.setenv("QUACK_MLIR_BUNDLE", str(bundle_dir))
    assert quack_mlir.get_bundle().path == str(bundle_dir)
    quack_mlir.set_bundle(bundle_dir / "elsewhere")
    with pytest.raises(quack_mlir.BundleError, match="does not exist"):
        quack_mlir.get_bundle()
    quack_mlir.set_bundle(None)


# --- the runtime library ---------------------------------------------------


def _have_library():
    try:
        rt.find_library()
        return True
    except rt.RuntimeLibraryError:
        return False


needs_library = pytest.mark.skipif(
    not _have_library(),
    reason="libquack_runtime.so not found (build QuackRuntime and set "
           "QUACK_MLIR_BUILD_DIR or QUACK_MLIR_RUNTIME_LIB)")


def test_find_library_reports_what_it_tried(monkeypatch, tmp_path):
    monkeypatch.setenv("QUACK_MLIR_RUNTIME_LIB", str(tmp_path / "none.so"))
    with pytest.raises(rt.RuntimeLibraryError, match="none.so"):
        rt.find_library()


@needs_library
def test_kernel_metadata_through_the_library(bundle_dir):
    b = qb.Bundle(bundle_dir)
    v = b.find("rmsnorm_fwd", {"N": 4096, "T": "bf16"}, 16)
    k = rt.Kernel(b.metadata_path(v))
    assert k.name == "rmsnorm_fwd"
    assert k.n == 4096 and k.alignment == 16 and k.rows_per_cta == 1
    assert k.arch == "sm_90" and k.hash == "5f1c"
    assert k.num_args == 7
    assert [p.name for p in k.params] == [
        "M", "x", "x.row_stride", "w", "eps", "y", "y.row_stride", "rstd"]
    assert [p.kind for p in k.params][:3] == ["rows", "matrix", "row_stride"]
    assert k.params[2].of == 1
    assert k.binding("T") == "bf16" and k.binding("N") == "4096"
    assert k.binding("nope") is None
    # Argument checks happen before the driver is needed.
    args = [0x1000, 4096, 0x2000, rt.float_arg(1e-6), 0x3008, 4096, 0x4000]
    with pytest.raises(rt.KernelError, match=r'"y" \(address 0x3008\)') as e:
        k.launch(4, args)
    assert e.value.status == 6
    with pytest.raises(rt.KernelError, match="expected 7 arguments"):
        k.launch(4, args[:-1])
    args[4] = 0x3000
    k.launch(0, args)  # M == 0: nothing to do


@needs_library
def test_kernel_load_errors(tmp_path):
    with pytest.raises(rt.KernelError, match="missing.json") as e:
        rt.Kernel(tmp_path / "missing.json")
    assert e.value.status == 3
    (tmp_path / "bad.json").write_text(json.dumps(dict(METADATA, schema=2)))
    with pytest.raises(rt.KernelError, match="unsupported schema 2"):
        rt.Kernel(tmp_path / "bad.json")


@needs_library
def test_no_driver_gives_a_clear_error(tmp_path, bundle_dir):
    # A fresh process, so that the driver is opened with the override.
    code = f"""
import sys
sys.path.insert(0, {os.path.dirname(os.path.dirname(rt.__file__))!r})
from quack_mlir import _runtime as rt
try:
    rt.driver_init()
except rt.KernelError as e:
    print("ERROR", e.status, e)
k = rt.Kernel({str(bundle_dir / "rmsnorm_fwd__N-4096_T-bf16__a16.json")!r})
try:
    k.launch(4, [0x1000, 4096, 0x2000, 0, 0x3000, 4096, 0x4000])
except rt.KernelError as e:
    print("LAUNCH", e.status, e)
"""
    env = dict(os.environ, QUACK_RT_CUDA_LIBRARY=str(tmp_path / "libcuda.so"))
    env["QUACK_MLIR_RUNTIME_LIB"] = rt.find_library()
    out = subprocess.run([sys.executable, "-c", code], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "ERROR 4 cannot open the CUDA driver library" in out.stdout
    assert "LAUNCH 4 cannot open the CUDA driver library" in out.stdout
    assert "QUACK_RT_ERROR_DRIVER_UNAVAILABLE" in out.stdout


def test_float_arg_bits():
    import struct
    assert struct.pack("<q", rt.float_arg(1e-6)) == struct.pack("<d", 1e-6)


# --- input validation (CPU tensors; needs torch) ---------------------------


@pytest.fixture
def torch():
    return pytest.importorskip("torch", reason="torch is not installed")


def test_rejects_non_tensors(torch):
    import quack_mlir
    w = torch.ones(8)
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        quack_mlir.rmsnorm([1.0] * 8, w)
    with pytest.raises(TypeError, match="weight must be a torch.Tensor"):
        quack_mlir.rmsnorm(torch.ones(2, 8), None)
    with pytest.raises(TypeError, match="eps must be a float"):
        quack_mlir.rmsnorm(torch.ones(2, 8), w, eps="1e-6")


def test_rejects_bad_dtypes(torch):
    import quack_mlir
    with pytest.raises(TypeError, match="x has dtype torch.float64"):
        quack_mlir.rmsnorm(torch.ones(2, 8, dtype=torch.float64),
                           torch.ones(8, dtype=torch.float64))
    with pytest.raises(TypeError, match="weight has dtype torch.float32 but "
                                        "x has torch.bfloat16"):
        quack_mlir.rmsnorm(torch.ones(2, 8, dtype=torch.bfloat16),
                           torch.ones(8))


def test_rejects_bad_shapes(torch):
    import quack_mlir
    with pytest.raises(ValueError, match="0-d tensor"):
        quack_mlir.rmsnorm(torch.tensor(1.0), torch.ones(1))
    with pytest.raises(ValueError, match=r"weight must have shape \[N\] = "
                                         r"\[8\], got \[7\]"):
        quack_mlir.rmsnorm(torch.ones(2, 8), torch.ones(7))
    with pytest.raises(ValueError, match=r"got \[1, 8\]"):
        quack_mlir.rmsnorm(torch.ones(2, 8), torch.ones(1, 8))
    with pytest.raises(ValueError, match="N\\) must be positive"):
        quack_mlir.rmsnorm(torch.ones(2, 0), torch.ones(0))


def test_rejects_bad_strides(torch):
    import quack_mlir
    x = torch.ones(8, 4).t()
    with pytest.raises(ValueError, match="last dimension of x must have "
                                         "stride 1"):
        quack_mlir.rmsnorm(x, torch.ones(8))
    with pytest.raises(ValueError, match="weight must be contiguous"):
        quack_mlir.rmsnorm(torch.ones(2, 8), torch.ones(16)[::2])


def test_rejects_cpu_tensors(torch):
    import quack_mlir
    with pytest.raises(ValueError, match="x must be on a CUDA device, it is "
                                         "on cpu"):
        quack_mlir.rmsnorm(torch.ones(2, 8), torch.ones(8))
