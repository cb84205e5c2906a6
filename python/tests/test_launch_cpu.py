"""The Python launch path without a GPU: quack_mlir._launch.Launcher, the
runtime library and a stand-in CUDA driver that records every launch
(unittests/Runtime/FakeCudaDriver.h). Checks which variant each alignment
of the arguments gets, the order and encoding of the arguments the kernel
receives, and that launches from several threads keep their own argument
arrays.

Each test runs a script in a subprocess: the runtime opens the driver once
per process. Skipped where libquack_runtime.so or the stand-in
(BUILD/unittests/lib/libquack-fake-cuda.so) is not built (set
QUACK_MLIR_BUILD_DIR).
"""

import json
import os
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

class Launch(ctypes.Structure):
    _fields_ = [("ex", ctypes.c_int), ("function", ctypes.c_void_p),
                ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shared_bytes", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("cluster", ctypes.c_uint * 3),
                ("params", ctypes.c_uint64 * 32)]

fake = ctypes.CDLL({driver!r})
fake.fake_cuda_get_launch.restype = ctypes.POINTER(Launch)
fake.fake_cuda_count.argtypes = [ctypes.c_char_p]

def launches():
    return [fake.fake_cuda_get_launch(i).contents
            for i in range(fake.fake_cuda_num_launches())]

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
