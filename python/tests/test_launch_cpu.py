"""The Python launch path without a GPU: quack_mlir._launch.Launcher, the
runtime library and a stand-in CUDA driver that records every launch
(unittests/Runtime/FakeCudaDriver.h). Checks which variant each alignment
of the arguments gets, the order and encoding of the arguments the kernel
receives, that launches from several threads keep their own argument
arrays, and the workspace and finishing launch of a sum over rows.

Each test runs a script in a subprocess: the runtime opens the driver once
per process. Skipped where libquack_runtime.so or the stand-in
(BUILD/unittests/lib/libquack-fake-cuda.so) is not built (set
QUACK_MLIR_BUILD_DIR).
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

from quack_mlir import _runtime as rt

from test_cpu import METADATA, make_index

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(
    rt.__file__)))


def fake_driver():
    build = os.environ.get("QUACK_MLIR_BUILD_DIR") or os.path.join(
        PYTHON_DIR, os.pardir, "build")
    path = os.path.join(build, "unittests", "lib", "libquack-fake-cuda.so")
    if not os.path.isfile(path):
        pytest.skip(f"the stand-in CUDA driver is not built ({path}); "
                    "set QUACK_MLIR_BUILD_DIR")
    return os.path.abspath(path)


@pytest.fixture
def bundle(tmp_path):
    """rmsnorm_fwd bf16 N=4096 in alignments 16, 8 and 2, told apart by
    their CTA sizes (256, 512, 1024 threads)."""
    blocks = {16: 256, 8: 512, 2: 1024}
    index = make_index([("rmsnorm_fwd", {"N": 4096, "T": "bf16"}, a)
                        for a in blocks])
    (tmp_path / "index.json").write_text(json.dumps(index))
    (tmp_path / "k.cubin").write_bytes(b"not a real cubin")
    for e in index["kernels"]:
        meta = dict(METADATA, alignment=e["alignment"],
                    block=[blocks[e["alignment"]], 1, 1])
        (tmp_path / e["metadata"]).write_text(json.dumps(meta))
    return tmp_path


# The stand-in driver's records (FakeCudaDriver.h) as ctypes structures, and
# the library with its control functions as `fake` (DRIVER: its path, as a
# Python expression). test_fast_cpu.py reads launches through it too.
DRIVER_RECORDS = """
import ctypes

class Launch(ctypes.Structure):
    _fields_ = [("ex", ctypes.c_int), ("function", ctypes.c_void_p),
                ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shared_bytes", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("cluster", ctypes.c_uint * 3),
                ("params", ctypes.c_uint64 * 32),
                ("symbol", ctypes.c_char * 64)]

class TensorMap(ctypes.Structure):
    _fields_ = [("data_type", ctypes.c_int), ("rank", ctypes.c_uint),
                ("address", ctypes.c_uint64), ("dims", ctypes.c_uint64 * 5),
                ("strides", ctypes.c_uint64 * 4), ("box", ctypes.c_uint * 5),
                ("element_strides", ctypes.c_uint * 5),
                ("l2_promotion", ctypes.c_int), ("marker", ctypes.c_uint64)]

fake = ctypes.CDLL(DRIVER)
fake.fake_cuda_get_launch.restype = ctypes.POINTER(Launch)
fake.fake_cuda_get_tensor_map.restype = ctypes.POINTER(TensorMap)
fake.fake_cuda_count.argtypes = [ctypes.c_char_p]
"""


def run(script, bundle):
    """Runs `script` after a prelude that loads the stand-in's control
    functions as `fake`; returns its stdout."""
    try:
        lib = rt.find_library()
    except rt.RuntimeLibraryError as e:
        pytest.skip(str(e))
    driver = fake_driver()
    prelude = f"""
import ctypes, sys, threading
sys.path.insert(0, {PYTHON_DIR!r})
""" + DRIVER_RECORDS.replace("DRIVER", repr(driver)) + """

def launches():
    return [fake.fake_cuda_get_launch(i).contents
            for i in range(fake.fake_cuda_num_launches())]

def tensor_maps():
    return [fake.fake_cuda_get_tensor_map(i).contents
            for i in range(fake.fake_cuda_num_tensor_maps())]

from quack_mlir._launch import Launcher, float_bits
"""
    env = dict(os.environ, QUACK_RT_CUDA_LIBRARY=driver,
               QUACK_MLIR_RUNTIME_LIB=lib, QUACK_MLIR_BUNDLE=str(bundle),
               QUACK_MLIR_DEVICE_NAME="")
    out = subprocess.run([sys.executable, "-c", prelude + script], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_alignment_picks_the_variant_and_arguments_arrive_in_order(bundle):
    out = run("""
fake.fake_cuda_set_num_params(8)
rms = Launcher("rmsnorm_fwd", ("T", "N"))
key = ("bf16", 4096)
def args(x, stride):
    return (x, stride, 0x20000, float_bits(1e-5), 0x30000, 4096, 0x40000)
rms.launch(key, 3, args(0x10000, 4096), 0x5eed)  # all 16-byte aligned
rms.launch(key, 3, args(0x10008, 4096), 0)       # x 8-byte aligned
rms.launch(key, 3, args(0x10000, 4097), 0)       # odd row stride: 2 bytes
rms.launch(key, 1, args(0x10000, 0), 0)          # one row, stride 0
for l in launches():
    eps = ctypes.c_float.from_buffer_copy(bytes(l.params)[32:36]).value
    print(l.block[0], l.grid[0], hex(l.stream or 0),
          [hex(p) for p in l.params[:8]], f"{eps:.1e}")
print("loads", fake.fake_cuda_count(b"cuModuleLoadData"))
""", bundle)
    lines = out.splitlines()
    params = "'0x10000', '0x1000', '0x20000'"
    assert lines[0].startswith("256 3 0x5eed ['0x3', " + params), out
    # eps (a double's bits) arrives as the f32 the parameter declares.
    assert lines[0].endswith("'0x30000', '0x1000', '0x40000'] 1.0e-05"), out
    assert lines[1].startswith("512 3 0x0 ['0x3', '0x10008', "), out
    assert lines[2].startswith("1024 3 0x0 ['0x3', '0x10000', '0x1001', "), out
    assert lines[3].startswith("256 1 0x0 ['0x1', '0x10000', '0x0', "), out
    # One module per variant, loaded once.
    assert lines[4] == "loads 3", out


def test_threads_keep_their_own_arguments(bundle):
    out = run("""
fake.fake_cuda_set_num_params(2)
rms = Launcher("rmsnorm_fwd", ("T", "N"))
key = ("bf16", 4096)
def worker(base):
    for i in range(200):
        x = base + 16 * i
        rms.launch(key, 1 + i % 5,
                   (x, 4096, 0x20000, 0, 0x30000, 4096, 0x40000), 0)
threads = [threading.Thread(target=worker, args=(b,))
           for b in (0x100000, 0x200000, 0x300000)]
for t in threads: t.start()
for t in threads: t.join()
seen = sorted((l.params[1], l.params[0]) for l in launches())
expected = sorted((b + 16 * i, 1 + i % 5)
                  for b in (0x100000, 0x200000, 0x300000) for i in range(200))
print("launches", len(seen), "match", seen == expected)
""", bundle)
    assert "launches 600 match True" in out, out


@pytest.fixture
def sum_bundle(tmp_path):
    """colsum f32 N=64 (unittests/Runtime/Inputs/colsum.json, which the
    runtime's launch tests use too): dw = the sum of x's rows, through a
    persistent grid of 4 rows per CTA, a workspace and a finishing launch."""
    meta = json.loads(open(os.path.join(
        PYTHON_DIR, os.pardir, "unittests", "Runtime", "Inputs",
        "colsum.json")).read())
    index = make_index([("colsum", {"N": 64, "T": "f32"}, 16)])
    (tmp_path / "index.json").write_text(json.dumps(index))
    (tmp_path / meta["cubin"]).write_bytes(b"not a real cubin")
    (tmp_path / index["kernels"][0]["metadata"]).write_text(json.dumps(meta))
    return tmp_path


def test_workspace_sized_per_rows_and_finishing_launch(sum_bundle):
    out = run("""
fake.fake_cuda_set_num_params(3)
cs = Launcher("colsum", ("T", "N"))
key = ("f32", 64)
args = (0x10000, 64, 0x30000, 0)
# The stand-in keeps 2 CTAs per SM on 132 SMs resident: 264 row groups.
print("ws", cs.workspace_bytes(key, 100, args, 0),
      cs.workspace_bytes(key, 10000, args, 0),
      cs.workspace_bytes(key, 100, args, 0))
cs.launch(key, 10000, args[:-1] + (0x40000,), 0)
for l in launches():
    print(l.grid[0], l.grid[1], l.block[0], [hex(p) for p in l.params[:3]])
""", sum_bundle)
    lines = out.splitlines()
    # 25 and 264 row groups of 4 rows, 64 f32 columns each.
    assert lines[0] == f"ws {25 * 4 * 64 * 4} {264 * 4 * 64 * 4} " \
                       f"{25 * 4 * 64 * 4}", out
    assert lines[1] == "264 1 128 ['0x2710', '0x10000', '0x40']", out
    # Finish: 64 columns / 32 per CTA, one output; S = 264 x 4 row slots.
    assert lines[2] == "2 1 256 ['0x420', '0x40000', '0x30000']", out


def quackc():
    build = os.environ.get("QUACK_MLIR_BUILD_DIR") or os.path.join(
        PYTHON_DIR, os.pardir, "build")
    path = os.environ.get("QUACK_MLIR_QUACKC") or os.path.join(
        build, "bin", "quackc")
    if not os.path.isfile(path) or not (
            shutil.which("ptxas") or os.path.isfile("/usr/local/cuda/bin/ptxas")):
        pytest.skip("needs quackc (QUACK_MLIR_BUILD_DIR or QUACK_MLIR_QUACKC) "
                    "and ptxas")
    return path


@pytest.fixture
def compiled_bundle(tmp_path):
    """What quackc writes for rmsnorm_fwd f32 at N = 131072: clusters of 16
    CTAs, x through a tensor copy at 16-byte alignment, and the same kernel
    on clusters of 8 and 4 as fallbacks."""
    kernels = os.path.join(PYTHON_DIR, os.pardir, "kernels", "rmsnorm.qk")
    env = dict(os.environ)
    env["PATH"] = env.get("PATH", "") + ":/usr/local/cuda/bin"
    out = subprocess.run(
        [quackc(), kernels, "--kernel=rmsnorm_fwd", "-D", "T=f32", "-D",
         "TW=T", "-D", "N=131072", "-D", "RESIDUAL=false", "-D", "BIAS=false",
         "-D", "OFFSET=false", f"--bundle={tmp_path / 'b'}"],
        capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    return tmp_path / "b"


RMS_LAUNCH = """
rms = Launcher("rmsnorm_fwd", ("T", "TW", "N"),
               fixed={"RESIDUAL": "false", "BIAS": "false", "OFFSET": "false"})
rms.launch(("f32", "f32", 131072), 5,
           (0x100000, 131072, 0x200000, float_bits(1e-6), 0x300000, 131072,
            0x400000), 0)
for l in launches():
    print("launch", l.ex, l.grid[0], l.block[0], l.cluster[0], l.shared_bytes,
          [hex(p) for p in l.params[:9]])
for m in tensor_maps():
    print("map", m.rank, hex(m.address), list(m.dims[:3]), list(m.strides[:2]),
          list(m.box[:3]), hex(m.marker))
"""


def test_compiled_metadata_launches_as_written(compiled_bundle):
    """The compiler's metadata, the runtime and the launcher agree: the
    variant quackc wrote for aligned rows runs on its cluster of 16 with
    the tensor map its recipe describes, passed after the arguments."""
    meta = json.loads((compiled_bundle / "index.json").read_text())
    own = next(k for k in meta["kernels"] if k["alignment"] == 16 and
               "__c" not in k["metadata"])
    own = json.loads((compiled_bundle / own["metadata"]).read_text())
    (recipe,) = own["tensor_maps"]
    assert own["cluster"][0] == 16 and recipe["of"] == "x"
    out = run("fake.fake_cuda_set_num_params(9)\n" + RMS_LAUNCH,
              compiled_bundle)
    lines = out.splitlines()
    assert len(lines) == 2, out
    launch, tmap = lines[0].split(" ", 6), lines[1]
    assert launch[1:6] == ["1", str(5 * 16), str(own["block"][0]), "16",
                           str(own["shared_bytes"].get("dynamic", 0))], out
    box = recipe["box"]
    assert tmap.startswith(
        f"map 3 0x100000 [{box[0]}, {131072 // box[0]}, 5] "
        f"[{box[0] * 4}, {131072 * 4}] {box}"), out
    # The map is the parameter after M and the seven arguments.
    assert launch[6].endswith(f"'{tmap.split()[-1]}']"), out


def test_compiled_fallback_serves_where_the_cluster_cannot_run(
        compiled_bundle):
    out = run("fake.fake_cuda_set_max_clusters(4, 8)\n"
              "fake.fake_cuda_set_num_params(8)\n" + RMS_LAUNCH,
              compiled_bundle)
    lines = out.splitlines()
    # Clusters of 8, no tensor copy (the fallback loads x itself).
    assert len(lines) == 1 and lines[0].startswith(f"launch 1 {5 * 8} "), out
    assert lines[0].split()[4] == "8", out
