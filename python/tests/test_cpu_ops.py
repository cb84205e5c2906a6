"""Tests that need no GPU: bundle roots and bundle paths, the generic
launcher's variant choice across several bundles, and the input validation
of softmax and layer_norm on CPU tensors.

Torch-dependent tests skip (visibly) where torch is not installed; launcher
tests skip where libquack_runtime.so is not built.
"""

import json
import os
import threading

import pytest

from quack_mlir import bundle as qb
from quack_mlir import _launch
from quack_mlir import _runtime as rt


def _matrix(name, role, t):
    return [{"name": name, "kind": "matrix", "role": role, "dtype": t},
            {"name": f"{name}.row_stride", "kind": "row_stride", "of": name,
             "type": "i64"}]


def params_of(kernel, t):
    """The metadata params of the catalogue kernels (kernels/*.qk)."""
    p = [{"name": "M", "kind": "rows", "type": "i64"}]
    if kernel == "softmax_fwd":
        p += _matrix("x", "input", t) + _matrix("y", "output", t)
    elif kernel == "rmsnorm_fwd":
        p += _matrix("x", "input", t)
        p += [{"name": "w", "kind": "row", "role": "input", "dtype": t},
              {"name": "eps", "kind": "scalar", "role": "input",
               "type": "f32"}]
        p += _matrix("y", "output", t)
        p += [{"name": "rstd", "kind": "per_row", "role": "output",
               "dtype": "f32"}]
    elif kernel == "layernorm_fwd":
        p += _matrix("x", "input", t)
        p += [{"name": "w", "kind": "row", "role": "input", "dtype": t},
              {"name": "b", "kind": "row", "role": "input", "dtype": t},
              {"name": "eps", "kind": "scalar", "role": "input",
               "type": "f32"}]
        p += _matrix("y", "output", t)
        p += [{"name": "mean", "kind": "per_row", "role": "output",
               "dtype": "f32"},
              {"name": "rstd", "kind": "per_row", "role": "output",
               "dtype": "f32"}]
    return p


# The bindings quackc records for the catalogue kernels besides T and N
# (weights follow T; the flag settings the Python ops use).
EXTRA_BINDINGS = {
    "rmsnorm_fwd": {"RESIDUAL": "false", "BIAS": "false", "OFFSET": "false"},
    "layernorm_fwd": {"BIAS": "true"},
}


def bindings_of(kernel, t, n, extra):
    b = {"N": n, "T": t}
    if extra and kernel in EXTRA_BINDINGS:
        b["TW"] = t
        b.update(EXTRA_BINDINGS[kernel])
    return b


def write_bundle(path, entries, tag="", extra=False):
    """A bundle directory of fake variants: entries are (kernel, T, N,
    alignment). `tag` goes into each variant's hash, to tell bundles
    apart."""
    os.makedirs(path, exist_ok=True)
    index = []
    for kernel, t, n, a in entries:
        name = f"{kernel}__T-{t}__N-{n}__a{a}"
        meta = {
            "schema": 1, "kernel": kernel, "symbol": kernel,
            "cubin": name + ".cubin", "arch": "sm_90",
            "bindings": bindings_of(kernel, t, n, extra),
            "params": params_of(kernel, t),
            "N": n, "alignment": a,
            "grid": {"kind": "rows", "rows_per_cta": 1},
            "block": [256, 1, 1], "cluster": [1, 1, 1],
            "shared_bytes": {"static": 32, "dynamic": 0},
            "hash": f"{tag}{name}",
        }
        with open(os.path.join(path, name + ".json"), "w") as f:
            json.dump(meta, f)
        with open(os.path.join(path, name + ".cubin"), "wb") as f:
            f.write(b"not a real cubin")
        index.append({"kernel": kernel,
                      "bindings": bindings_of(kernel, t, n, extra),
                      "alignment": a, "metadata": name + ".json"})
    with open(os.path.join(path, "index.json"), "w") as f:
        json.dump({"schema": 1, "arch": "sm_90", "compiler": "0.1.0",
                   "kernels": index}, f)
    return str(path)


@pytest.fixture
def root(tmp_path):
    """A bundle root as `quackc X.qk --bundle=ROOT/X` per .qk file leaves
    it, plus a second root whose bundle adds wider variants."""
    r = tmp_path / "root"
    write_bundle(r / "rmsnorm", [("rmsnorm_fwd", t, n, a)
                                 for t in ("bf16", "f32") for n in (7, 4096)
                                 for a in (2, 4, 8, 16)
                                 if a >= (4 if t == "f32" else 2)])
    write_bundle(r / "softmax", [("softmax_fwd", "bf16", n, a)
                                 for n in (7, 4096) for a in (2, 16)])
    write_bundle(r / "layernorm", [("layernorm_fwd", "bf16", 4096, a)
                                   for a in (2, 4, 8, 16)])
    (r / "notes").mkdir()  # not a bundle: ignored
    other = tmp_path / "other"
    write_bundle(other / "softmax_wide", [("softmax_fwd", "bf16", 4096, 8),
                                          ("softmax_fwd", "bf16", 4096, 16)],
                 tag="other:")
    return r, other


# --- finding bundles -------------------------------------------------------


def test_bundle_root_takes_every_subdirectory(root):
    r, _ = root
    dirs = qb.find_bundle_dirs(str(r))
    assert [os.path.basename(d) for d in dirs] == [
        "layernorm", "rmsnorm", "softmax"]
    s = qb.BundleSet(r)
    assert {v.kernel for v in s.variants} == {
        "rmsnorm_fwd", "softmax_fwd", "layernorm_fwd"}
    v = s.find("layernorm_fwd", {"T": "bf16", "N": 4096}, 256)
    assert v.alignment == 16
    assert v.metadata_path == os.path.join(str(r), "layernorm",
                                           v.metadata)
    assert s.metadata_path(v) == v.metadata_path


def test_bundle_path_with_pathsep_and_lists(root):
    r, other = root
    spec = os.pathsep.join([str(r), str(other)])
    s = qb.BundleSet(spec)
    assert len(s.bundles) == 4
    assert s.path == os.pathsep.join(s.paths)
    assert qb.BundleSet([r, other]).paths == s.paths
    # A bundle directory itself works too, alone or in a list.
    one = qb.BundleSet(str(r / "softmax"))
    assert one.path == str(r / "softmax")
    assert qb.BundleSet([r / "softmax", r / "rmsnorm"]).paths == [
        str(r / "softmax"), str(r / "rmsnorm")]


def test_variant_choice_across_bundles(root):
    r, other = root
    s = qb.BundleSet([r, other])
    key = {"T": "bf16", "N": 4096}
    # Tie at 16: the earlier bundle's variant.
    v = s.find("softmax_fwd", key, 64)
    assert v.alignment == 16 and v.directory == str(r / "softmax")
    # 8 exists only in the second root.
    v = s.find("softmax_fwd", key, 8)
    assert v.alignment == 8 and v.directory == str(other / "softmax_wide")
    assert s.find("softmax_fwd", key, 4).alignment == 2
    # Order decides ties: the other root first.
    v = qb.BundleSet([other, r]).find("softmax_fwd", key, 16)
    assert v.directory == str(other / "softmax_wide")
    assert [v.alignment for v in s.candidates("softmax_fwd", key)] == [
        16, 16, 8, 2]


def test_missing_kernel_names_every_bundle(root):
    r, other = root
    s = qb.BundleSet([r, other])
    with pytest.raises(qb.KernelNotFoundError) as e:
        s.candidates("softmax_fwd", {"T": "f16", "N": 4096})
    msg = str(e.value)
    assert "softmax_fwd (N=4096, T=f16)" in msg
    assert str(other) in msg and str(r) in msg
    assert "N=4096, T=bf16" in msg
    with pytest.raises(qb.KernelNotFoundError, match="no cross_entropy_fwd"):
        s.find("cross_entropy_fwd", {"T": "bf16", "N": 7}, 16)


def test_bad_bundle_paths(tmp_path):
    with pytest.raises(qb.BundleError, match="does not exist"):
        qb.BundleSet(str(tmp_path / "nope"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(qb.BundleError, match="is neither a kernel bundle "
                                             r"\(.*\) nor a bundle root"):
        qb.BundleSet(tmp_path / "empty")
    with pytest.raises(qb.BundleError, match="empty kernel bundle path"):
        qb.BundleSet(os.pathsep)


def test_set_bundle_takes_a_root(root, monkeypatch):
    import quack_mlir
    r, other = root
    monkeypatch.setenv("QUACK_MLIR_BUNDLE",
                       os.pathsep.join([str(r), str(other)]))
    quack_mlir.set_bundle(None)
    try:
        assert len(quack_mlir.get_bundle().bundles) == 4
        quack_mlir.set_bundle(r)
        assert len(quack_mlir.get_bundle().bundles) == 3
        quack_mlir.set_bundle([r / "softmax"])
        assert quack_mlir.get_bundle().paths == [str(r / "softmax")]
    finally:
        quack_mlir.set_bundle(None)


# --- the generic launcher ---------------------------------------------------


def test_bits_function():
    f = _launch._bits_function(((0, 1), (1, 2), (2, 1), (3, 2)))
    assert f((0x1000, 4096, 0x2000, 4096)) == 0
    assert f((0x1000, 7, 0x2000, 4096)) == 14
    assert f((0x1008, 4096, 0x2000, 4096)) == 8
    assert f((0x1000, 4096, 0x2000, 0)) == 0
    assert _launch._bits_function(())((1, 2)) == 0


def test_float_bits():
    assert _launch.float_bits(1e-6) == rt.float_arg(1e-6)
    assert _launch.float_bits(1e-6) == rt.float_arg(1e-6)  # cached
    assert _launch.float_bits(1) == rt.float_arg(1.0)


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


@pytest.fixture
def use_bundles(root):
    import quack_mlir
    r, other = root
    quack_mlir.set_bundle([r, other])
    yield r, other
    quack_mlir.set_bundle(None)


@needs_library
def test_launcher_layout_from_metadata(use_bundles):
    ln = _launch.Launcher("layernorm_fwd", ("T", "N"))
    fam = ln.family(("bf16", 4096))
    # x, x.row_stride (2 bytes per element), w, b, y, y.row_stride, mean,
    # rstd; eps (index 4) is no pointer.
    assert fam.layout == ((0, 1), (1, 2), (2, 1), (3, 1), (5, 1), (6, 2),
                          (7, 1), (8, 1))


def _ln_args(x=0x10000, xs=4096, w=0x20000, b=0x30000, y=0x40000, ys=4096,
             mean=0x50000, rstd=0x60000):
    return (x, xs, w, b, rt.float_arg(1e-5), y, ys, mean, rstd)


@needs_library
@pytest.mark.parametrize("args, alignment", [
    (_ln_args(), 16),
    (_ln_args(x=0x10008), 8),
    (_ln_args(mean=0x50004), 4),
    (_ln_args(xs=4098), 4),       # 8196-byte rows
    (_ln_args(xs=4097), 2),       # 8194-byte rows
    (_ln_args(ys=4100), 8),
    (_ln_args(b=0x30002), 2),
    (_ln_args(xs=0, ys=0), 16),   # M = 1: strides do not count
])
def test_launcher_picks_the_widest_usable_variant(use_bundles, args,
                                                  alignment):
    ln = _launch.Launcher("layernorm_fwd", ("T", "N"))
    k = ln.select(("bf16", 4096), args)
    assert k.name == "layernorm_fwd" and k.alignment == alignment
    assert k.n == 4096 and k.binding("T") == "bf16"
    ln.launch(("bf16", 4096), 0, args)  # M = 0: checked, nothing launched


@needs_library
def test_launcher_across_bundles(use_bundles):
    r, other = use_bundles
    sm = _launch.Launcher("softmax_fwd", ("T", "N"))
    args = (0x10000, 4096, 0x20000, 4096)
    assert sm.select(("bf16", 4096), args).path.startswith(str(r))
    k = sm.select(("bf16", 4096), (0x10008, 4096, 0x20000, 4096))
    assert k.alignment == 8 and k.path.startswith(str(other))
    assert k.hash.startswith("other:")
    assert sm.select(("bf16", 7), (0x10000, 7, 0x20000, 7)).alignment == 2
    for a in (args, (0x10008, 4096, 0x20000, 4096)):
        sm.launch(("bf16", 4096), 0, a)


@needs_library
def test_launcher_errors(use_bundles):
    rms = _launch.Launcher("rmsnorm_fwd", ("T", "N"))
    args = (0x10000, 4096, 0x20000, rt.float_arg(1e-6), 0x30000, 4096,
            0x40000)
    # f32 variants need 4-byte alignment; a 2-byte misaligned pointer has
    # none.
    with pytest.raises(qb.KernelNotFoundError,
                       match=r"alignment 2\).*need alignment \[4, 8, 16\]"):
        rms.select(("f32", 4096), (0x10002,) + args[1:])
    with pytest.raises(qb.KernelNotFoundError,
                       match=r"rmsnorm_fwd \(N=1000, T=bf16\)"):
        rms.launch(("bf16", 1000), 4, args)
    # The runtime's own checks still run: a null pointer with M > 0.
    with pytest.raises(rt.KernelError, match="null pointer"):
        rms.launch(("bf16", 4096), 4, (0,) + args[1:])
    # The wrong number of arguments.
    with pytest.raises((ValueError, rt.KernelError)):
        rms.launch(("bf16", 4096), 0, args[:-1] + (0x40000, 0x50000))


@needs_library
def test_launcher_from_other_threads(use_bundles):
    sm = _launch.Launcher("softmax_fwd", ("T", "N"))
    args = (0x10000, 4096, 0x20000, 4096)
    sm.launch(("bf16", 4096), 0, args)
    errors = []

    plan = sm._plan(("bf16", 4096), args)

    def work():
        try:
            for _ in range(50):
                sm.launch(("bf16", 4096), 0, args)
            # This thread's argument array is kept and reused.
            own = plan.others[threading.get_ident()]
            sm.launch(("bf16", 4096), 0, args)
            assert plan.others[threading.get_ident()] is own
            assert own[0] is not plan.arr
            with pytest.raises(rt.KernelError, match="null pointer"):
                sm.launch(("bf16", 4096), 2, (0,) + args[1:])
        except BaseException as e:  # noqa: B036 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert 1 <= len(plan.others) <= 4


@needs_library
def test_launcher_remembers_workspace_sizes(use_bundles, monkeypatch):
    # A kernel without sums over rows needs no workspace (and no driver to
    # say so); the size is asked once per (device, M) and variant.
    sm = _launch.Launcher("softmax_fwd", ("T", "N"))
    args = (0x10000, 4096, 0x20000, 4096)
    kernel = sm.select(("bf16", 4096), args)
    assert sm.workspace_bytes(("bf16", 4096), 5, args, 0) == 0
    asked = []
    real = kernel.workspace_size

    def counting(m):
        asked.append(m)
        return real(m)
    monkeypatch.setattr(kernel, "workspace_size", counting)
    assert sm.workspace_bytes(("bf16", 4096), 5, args, 0) == 0
    assert asked == []
    assert sm.workspace_bytes(("bf16", 4096), 6, args, 0) == 0
    assert sm.workspace_bytes(("bf16", 4096), 5, args, 1) == 0
    assert asked == [6, 5]
    # The cache stays bounded when M keeps changing.
    for m in range(3 * _launch._WS_CACHE_MAX):
        sm.workspace_bytes(("bf16", 4096), m, args, 0)
    plan = sm._plan(("bf16", 4096), args)
    assert 0 < len(plan.ws) <= _launch._WS_CACHE_MAX


@needs_library
def test_set_bundle_forgets_launcher_caches(use_bundles, tmp_path):
    import quack_mlir
    sm = _launch.Launcher("softmax_fwd", ("T", "N"))
    sm.select(("bf16", 4096), (0x10000, 4096, 0x20000, 4096))
    assert sm._families
    quack_mlir.set_bundle(write_bundle(tmp_path / "b2", [
        ("softmax_fwd", "bf16", 4096, 4)], tag="b2:"))
    assert not sm._families
    k = sm.select(("bf16", 4096), (0x10000, 4096, 0x20000, 4096))
    assert k.hash.startswith("b2:") and k.alignment == 4


# --- validation of the ops (CPU tensors; needs torch) ----------------------


@pytest.fixture
def torch():
    return pytest.importorskip("torch", reason="torch is not installed")


def test_softmax_validation(torch):
    import quack_mlir
    x = torch.ones(2, 8)
    with pytest.raises(TypeError, match="softmax: x must be a torch.Tensor"):
        quack_mlir.softmax([1.0, 2.0])
    with pytest.raises(ValueError, match=r"only the last dimension is "
                                         r"supported \(dim=-1 or dim=1 for "
                                         r"this 2-d x\), got dim=0"):
        quack_mlir.softmax(x, dim=0)
    with pytest.raises(ValueError, match="got dim=-2"):
        quack_mlir.softmax(torch.ones(2, 3, 8), dim=-2)
    with pytest.raises(TypeError, match="dim must be an int"):
        quack_mlir.softmax(x, dim=None)
    with pytest.raises(ValueError, match="0-d tensor"):
        quack_mlir.softmax(torch.tensor(1.0))
    with pytest.raises(TypeError, match="x has dtype torch.float64"):
        quack_mlir.softmax(x.double())
    with pytest.raises(ValueError, match="N\\) must be positive"):
        quack_mlir.softmax(torch.ones(2, 0))
    with pytest.raises(ValueError, match="last dimension of x must have "
                                         "stride 1"):
        quack_mlir.softmax(torch.ones(8, 4).t())
    with pytest.raises(ValueError, match="cannot be viewed as rows"):
        quack_mlir.softmax(torch.ones(4, 5, 8)[:, 1:4])
    with pytest.raises(ValueError, match="rows of x overlap"):
        quack_mlir.softmax(torch.ones(1, 8).expand(3, 8))
    with pytest.raises(ValueError, match="x must be on a CUDA device, it is "
                                         "on cpu"):
        quack_mlir.softmax(x)
    # The last dimension by its positive index is accepted (then refused
    # for being on the CPU).
    with pytest.raises(ValueError, match="CUDA device"):
        quack_mlir.softmax(torch.ones(2, 3, 8), dim=2)


def test_layer_norm_validation(torch):
    import quack_mlir
    ln = quack_mlir.layer_norm
    x = torch.ones(2, 8, dtype=torch.bfloat16)
    w = torch.ones(8, dtype=torch.bfloat16)
    b = torch.zeros(8, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="weight is None; this op needs "
                                         "both weight and bias"):
        ln(x, (8,))
    with pytest.raises(ValueError, match="bias is None"):
        ln(x, (8,), w, None)
    with pytest.raises(ValueError, match=r"only normalization over the "
                                         r"last dimension.*\[2, 8\]"):
        ln(x, (2, 8), w, b)
    with pytest.raises(ValueError, match=r"normalized_shape=\[7\] does not "
                                         r"match the last dimension of x"):
        ln(x, 7, w, b)
    with pytest.raises(TypeError, match="normalized_shape must be an int"):
        ln(x, 8.0, w, b)
    with pytest.raises(TypeError, match="eps must be a float"):
        ln(x, 8, w, b, eps="1e-5")
    with pytest.raises(TypeError, match="layer_norm: x must be a "
                                        "torch.Tensor"):
        ln([1.0] * 8, 8, w, b)
    with pytest.raises(TypeError, match="weight must be a torch.Tensor"):
        ln(x, 8, [1.0] * 8, b)
    with pytest.raises(TypeError, match="bias has dtype torch.float32 but "
                                        "x has torch.bfloat16"):
        ln(x, 8, w, b.float())
    with pytest.raises(ValueError, match=r"bias must have shape \[N\] = "
                                         r"\[8\], got \[1, 8\]"):
        ln(x, 8, w, b.view(1, 8))
    with pytest.raises(ValueError, match="weight must be contiguous"):
        ln(x, 8, torch.ones(16, dtype=torch.bfloat16)[::2], b)
    with pytest.raises(ValueError, match="x must be on a CUDA device"):
        ln(x, torch.Size([8]), w, b)
    with pytest.raises(ValueError, match="x must be on a CUDA device"):
        ln(x, [8], w, b, 1e-5, True)


def test_rmsnorm_validation_order(torch):
    # Structural errors come before device errors, so CPU tensors show them.
    import quack_mlir
    x = torch.ones(3, 8)
    with pytest.raises(ValueError, match="rmsnorm: weight must have shape"):
        quack_mlir.rmsnorm(x, torch.ones(9))
    with pytest.raises(ValueError, match="rows of x overlap"):
        quack_mlir.rmsnorm(torch.ones(1, 8).expand(3, 8), torch.ones(8))


def test_ops_are_registered(torch):
    import quack_mlir  # noqa: F401 - registers the ops
    for name in ("rmsnorm_fwd", "softmax_fwd", "layernorm_fwd",
                 "cross_entropy_fwd", "rmsnorm_bwd", "softmax_bwd",
                 "layernorm_bwd", "cross_entropy_bwd"):
        assert hasattr(torch.ops.quack_mlir, name)


def test_fake_implementations(torch):
    import quack_mlir  # noqa: F401
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x = torch.empty(4, 5, 64, dtype=torch.bfloat16)
        w = torch.empty(64, dtype=torch.bfloat16)
        y = torch.ops.quack_mlir.softmax_fwd(x)
        assert y.shape == x.shape and y.dtype == x.dtype
        dx = torch.ops.quack_mlir.softmax_bwd(x, y)
        assert dx.shape == x.shape and dx.dtype == x.dtype
        logits = torch.empty(20, 64, dtype=torch.bfloat16)
        t = torch.empty(20, dtype=torch.int64)
        loss, lse = torch.ops.quack_mlir.cross_entropy_fwd(logits, t, -100)
        assert loss.shape == (20,) and lse.dtype == torch.float32
        dx = torch.ops.quack_mlir.cross_entropy_bwd(logits, t, lse, loss, -1)
        assert dx.shape == logits.shape and dx.dtype == logits.dtype
        y, mean, rstd = torch.ops.quack_mlir.layernorm_fwd(x, w, w, 1e-5)
        assert y.shape == x.shape and y.is_contiguous()
        assert mean.shape == (20,) and rstd.dtype == torch.float32
        y, rstd = torch.ops.quack_mlir.rmsnorm_fwd(x, w, 1e-6)
        assert rstd.shape == (20,)


@needs_library
def test_ops_pass_arguments_in_metadata_order(torch, tmp_path, monkeypatch):
    """Runs the ops on CPU tensors with the CUDA-only pieces stubbed (is_cuda,
    current device and stream, the C launch) and checks what reaches the
    runtime: the variant, M, and every argument in metadata order."""
    import quack_mlir
    from quack_mlir import _ops
    n = 64
    root = tmp_path / "b"
    for k in ("rmsnorm_fwd", "softmax_fwd", "layernorm_fwd"):
        write_bundle(root / k, [(k, t, n, a) for t in ("bf16", "f32")
                                for a in (2, 4, 16) if t != "f32" or a > 2],
                     extra=True)
    quack_mlir.set_bundle(root)
    calls = []

    def fake_launch(handle, m, arr, nargs, stream, err, err_len):
        calls.append((handle.value, m.value, list(arr)[:nargs],
                      stream.value))
        return 0

    monkeypatch.setattr(torch.Tensor, "is_cuda",
                        property(lambda self: True), raising=False)
    monkeypatch.setattr(_ops, "_get_device", lambda: -1)
    monkeypatch.setattr(_ops, "_raw_stream", lambda dev: 0x5000)
    rt.load_library()
    monkeypatch.setattr(rt, "_raw_launch", fake_launch)
    try:
        x = torch.randn(3, 5, n, dtype=torch.bfloat16)
        w = torch.randn(n, dtype=torch.bfloat16)
        b = torch.randn(n, dtype=torch.bfloat16)
        eps = rt.float_arg(1e-5)

        y, rstd = quack_mlir.rmsnorm(x, w, 1e-5, return_rstd=True)
        _, m, args, stream = calls.pop()
        assert (m, stream) == (15, 0x5000)
        assert args == [x.data_ptr(), n, w.data_ptr(), eps, y.data_ptr(), n,
                        rstd.data_ptr()]
        assert y.shape == x.shape and rstd.shape == (15,)

        xs = torch.randn(7, n + 3, dtype=torch.bfloat16)[:, :n]
        y = quack_mlir.softmax(xs)
        _, m, args, _ = calls.pop()
        assert m == 7
        assert args == [xs.data_ptr(), n + 3, y.data_ptr(), n]
        # The variant: 2-byte aligned, as the row stride is 134 bytes.
        from quack_mlir.softmax import _kernel as sm
        assert sm.select(("bf16", n), tuple(args)).alignment == 2

        y, mean, rstd = quack_mlir.layer_norm(x[0, :1], n, w, b,
                                              return_stats=True)
        _, m, args, _ = calls.pop()
        assert m == 1
        assert args == [x.data_ptr(), 0, w.data_ptr(), b.data_ptr(), eps,
                        y.data_ptr(), 0, mean.data_ptr(), rstd.data_ptr()]
        assert y.shape == (1, n) and mean.shape == (1,)

        # Statistics nobody asked for go to the device's scratch buffer:
        # the same one at every call, with no tensor returned for them.
        monkeypatch.setattr(_ops, "_scratch", {})
        monkeypatch.setattr(torch.cuda, "is_current_stream_capturing",
                            lambda: False)
        quack_mlir.rmsnorm(x, w, 1e-5)
        first = calls.pop()[2]
        quack_mlir.rmsnorm(x, w, 1e-5)
        second = calls.pop()[2]
        scratch = _ops._scratch[-1]
        assert scratch.dtype == torch.float32 and scratch.numel() >= 15
        assert first[6] == second[6] == scratch.data_ptr()
        quack_mlir.layer_norm(x, n, w, b)
        args = calls.pop()[2]
        assert args[7] == args[8] == scratch.data_ptr()
        # More rows than the buffer holds: a tensor of their own.
        big = torch.randn(_ops._SCRATCH_ROWS + 1, n, dtype=torch.bfloat16)
        quack_mlir.rmsnorm(big, w, 1e-5)
        assert calls.pop()[2][6] != scratch.data_ptr()
        # layer_norm's two unread statistics still share one tensor there.
        quack_mlir.layer_norm(big, n, w, b)
        args = calls.pop()[2]
        assert args[7] == args[8] != scratch.data_ptr()
        # The first scratch buffer is not allocated inside a graph capture
        # (the graph's pool would own it): that call gets its own tensor.
        monkeypatch.setattr(_ops, "_scratch", {})
        monkeypatch.setattr(torch.cuda, "is_current_stream_capturing",
                            lambda: True)
        quack_mlir.rmsnorm(x, w, 1e-5)
        calls.pop()
        assert not _ops._scratch

        # M = 0 launches nothing.
        quack_mlir.softmax(torch.empty(0, n))
        assert not calls
    finally:
        quack_mlir.set_bundle(None)


def test_cross_entropy_validation():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    import quack_mlir
    x = torch.zeros(4, 8)
    with pytest.raises(TypeError, match="target must be torch.int64"):
        quack_mlir.cross_entropy(x, torch.zeros(4, dtype=torch.int32))
    with pytest.raises(ValueError, match="target has 3 rows but logits has 4"):
        quack_mlir.cross_entropy(x, torch.zeros(3, dtype=torch.int64))
    with pytest.raises(ValueError, match="reduction must be"):
        quack_mlir.cross_entropy(x, torch.zeros(4, dtype=torch.int64),
                                 reduction="avg")
    with pytest.raises(ValueError, match="logits must be a 2-d tensor"):
        quack_mlir.cross_entropy(torch.zeros(8),
                                 torch.zeros(4, dtype=torch.int64))
    with pytest.raises(ValueError, match="must be on a CUDA device"):
        quack_mlir.cross_entropy(x, torch.zeros(4, dtype=torch.int64))


def test_softmax_backward_validation_on_cpu_tensors():
    """softmax_backward names dy or y in its errors."""
    torch = pytest.importorskip("torch")
    import quack_mlir
    y = torch.rand(8, 64)
    with pytest.raises(ValueError, match="dy must have y's shape"):
        quack_mlir.softmax_backward(y[:4], y)
    with pytest.raises(TypeError, match="dy has dtype torch.float16 but y"):
        quack_mlir.softmax_backward(y.half(), y)
    with pytest.raises(TypeError, match="softmax_backward: y must be a "
                       "torch.Tensor"):
        quack_mlir.softmax_backward(y, [1.0])
    with pytest.raises(TypeError, match="softmax_backward: y has dtype "
                       "torch.float64"):
        quack_mlir.softmax_backward(y.double(), y.double())
    with pytest.raises(ValueError, match="the last dimension of y must have "
                       "stride 1"):
        quack_mlir.softmax_backward(y.t(), y.t())
    with pytest.raises(ValueError, match="y must be on a CUDA device"):
        quack_mlir.softmax_backward(y, y)


def test_backward_validation_on_cpu_tensors():
    """rmsnorm_backward and layer_norm_backward name the bad argument before
    touching a device."""
    torch = pytest.importorskip("torch")
    import quack_mlir
    x = torch.randn(8, 64)
    w = torch.randn(64)
    r = torch.randn(8)
    with pytest.raises(ValueError, match="dy must have x's shape"):
        quack_mlir.rmsnorm_backward(x[:4], x, w, r)
    with pytest.raises(TypeError, match="dy has dtype"):
        quack_mlir.rmsnorm_backward(x.half(), x, w, r)
    with pytest.raises(TypeError, match="rstd must have dtype torch.float32"):
        quack_mlir.rmsnorm_backward(x, x, w, r.double())
    with pytest.raises(ValueError, match=r"rstd must have shape \[M\] = \[8\]"):
        quack_mlir.rmsnorm_backward(x, x, w, r[:3])
    with pytest.raises(ValueError, match=r"weight must have shape \[N\]"):
        quack_mlir.layer_norm_backward(x, x, w[:3], r, r)
    with pytest.raises(TypeError, match="mean must be a torch.Tensor"):
        quack_mlir.layer_norm_backward(x, x, w, 0.5, r)
    with pytest.raises(ValueError, match="x must be on a CUDA device"):
        quack_mlir.layer_norm_backward(x, x, w, r, r)
