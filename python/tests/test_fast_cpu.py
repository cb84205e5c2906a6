"""The C++ launch path (_quack_fast) without a GPU: scripts/build-torch-ext.sh
builds it against the torch installed here; it loads, declines every case
that is not a CUDA tensor (the Python path then words the error), refuses
bad calls with a message, and the switches (QUACK_MLIR_FAST=0/1,
QUACK_MLIR_FAST_LIB) do what _fast.py says. Each case runs in a subprocess:
the module is loaded once per process.

Skipped where torch, g++ or the CUDA headers are missing.
"""

import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

from quack_mlir import _runtime as rt  # noqa: E402

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(rt.__file__)))
ROOT = os.path.dirname(PYTHON_DIR)
SCRIPT = os.path.join(ROOT, "scripts", "build-torch-ext.sh")


@pytest.fixture(scope="module")
def module_dir(tmp_path_factory):
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    if not shutil.which(os.environ.get("CXX", "g++")):
        pytest.skip("no C++ compiler")
    if not os.path.isfile(os.path.join(cuda, "include",
                                       "cuda_runtime_api.h")):
        pytest.skip(f"no CUDA headers in {cuda}/include")
    if not os.path.isfile(os.path.join(sysconfig.get_paths()["include"],
                                       "Python.h")):
        pytest.skip("no Python.h for this interpreter")
    out = tmp_path_factory.mktemp("fast")
    proc = subprocess.run(["bash", SCRIPT, str(out), sys.executable],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


def run(script, env=None, check=True):
    full = dict(os.environ)
    full.pop("QUACK_MLIR_FAST", None)
    full.pop("QUACK_MLIR_FAST_LIB", None)
    full.update(env or {})
    full["PYTHONPATH"] = PYTHON_DIR + os.pathsep + full.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", script], env=full,
                          capture_output=True, text=True, timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def runtime_or_skip():
    try:
        return rt.find_library()
    except rt.RuntimeLibraryError as e:
        pytest.skip(str(e))


def test_builds_loads_and_declines_cpu_tensors(module_dir):
    runtime_or_skip()
    out = run("""
import torch, quack_mlir as qm
from quack_mlir import _fast
info = _fast.info()
print(info["active"], info["variants"], bool(info["path"]))
x = torch.randn(4, 8)
w = torch.ones(8)
t = torch.zeros(4, dtype=torch.long)
r = torch.ones(4)
print(_fast.softmax(x), _fast.rmsnorm(x, w, 1e-6, False),
      _fast.layer_norm(x, 8, w, w, 1e-5, True),
      _fast.cross_entropy(x, t, -100), _fast.softmax("x"),
      _fast.rmsnorm_backward(x, x, w, r),
      _fast.layer_norm_backward(x, x, w, r, r))
for call in (lambda: qm.softmax(x), lambda: qm.rmsnorm(x, w),
             lambda: qm.layer_norm(x, 8, w, w),
             lambda: qm.cross_entropy(x, t),
             lambda: qm.rmsnorm_backward(x, x, w, r),
             lambda: qm.layer_norm_backward(x, x, w, r, r)):
    try:
        call()
    except ValueError as e:
        print(e)
for call in (lambda: _fast.softmax(), lambda: _fast.rmsnorm(x, w)):
    try:
        call()
    except TypeError as e:
        print(e)
""", {"QUACK_MLIR_FAST_LIB": str(module_dir)}).stdout.splitlines()
    assert out[0] == "True 0 True"
    assert out[1] == "None None None None None None None"
    assert out[2:8] == [f"{op}: x must be on a CUDA device, it is on cpu"
                        for op in ("softmax", "rmsnorm", "layer_norm",
                                   "cross_entropy", "rmsnorm_backward",
                                   "layer_norm_backward")]
    assert out[8] == "_quack_fast.softmax(x) takes 1 arguments, got 0"
    assert out[9].startswith("_quack_fast.rmsnorm(x, weight, eps, keep_rstd)"
                             " takes 4 arguments, got 2")


def test_init_is_checked(module_dir):
    runtime_or_skip()
    out = run(f"""
import glob, importlib.util
import torch  # the module links torch's libraries, loaded by torch
path = glob.glob({str(module_dir)!r} + "/_quack_fast*")[0]
spec = importlib.util.spec_from_file_location("_quack_fast", path)
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
try:
    m.softmax(torch.randn(2, 2))
except RuntimeError as e:
    print(e)
for args in ((0, 1, print, RuntimeError, int),
             (1, 0, print, RuntimeError, int),
             (1, 1, 2, RuntimeError, int), (1, 1, print, RuntimeError)):
    try:
        m.init(*args)
    except (ValueError, TypeError) as e:
        print(type(e).__name__, e)
""").stdout.splitlines()
    assert out == [
        "_quack_fast: init() was not called",
        "ValueError _quack_fast.init: a function address is null",
        "ValueError _quack_fast.init: a function address is null",
        "TypeError _quack_fast.init: resolve and KernelError must be "
        "callable and Parameter a type",
        "TypeError _quack_fast.init(launch_address, workspace_size_address, "
        "resolve, KernelError, Parameter) takes 5 arguments"]


def test_switches(module_dir, tmp_path):
    runtime_or_skip()
    script = """
from quack_mlir import _fast
try:
    print(_fast.info())
except _fast.FastPathError as e:
    print("FastPathError:", e)
"""
    off = run(script, {"QUACK_MLIR_FAST_LIB": str(module_dir),
                       "QUACK_MLIR_FAST": "0"}).stdout
    assert "'active': False" in off and "QUACK_MLIR_FAST=0" in off
    missing = str(tmp_path / "nothing")
    quiet = run(script, {"QUACK_MLIR_FAST_LIB": missing}).stdout
    assert "'active': False" in quiet and "no _quack_fast module" in quiet
    loud = run(script, {"QUACK_MLIR_FAST_LIB": missing,
                        "QUACK_MLIR_FAST": "1"}).stdout
    assert loud.startswith("FastPathError: QUACK_MLIR_FAST=1 but the C++ "
                           "launch path cannot be used")
    bad = run(script, {"QUACK_MLIR_FAST": "yes"}).stdout
    assert bad.startswith("FastPathError: QUACK_MLIR_FAST must be 0 or 1")
    # A file that is not a module: a quiet fallback, with the reason.
    junk = tmp_path / "junk.so"
    junk.write_text("not a shared object")
    broken = run(script, {"QUACK_MLIR_FAST_LIB": str(junk)}).stdout
    assert "'active': False" in broken and str(junk) in broken


def test_script_usage():
    proc = subprocess.run(["bash", SCRIPT], capture_output=True, text=True)
    assert proc.returncode == 2 and "usage:" in proc.stderr
    proc = subprocess.run(["bash", SCRIPT, "/tmp/x", "no-such-python"],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "no Python interpreter 'no-such-python'" in proc.stderr
