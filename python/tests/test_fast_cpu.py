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
    env = {k: v for k, v in os.environ.items()
           if k != "QUACK_FAST_CPU_TESTING"}
    proc = subprocess.run(["bash", SCRIPT, str(out), sys.executable],
                          capture_output=True, text=True, timeout=600,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


def run(script, env=None, check=True):
    full = dict(os.environ)
    for name in ("QUACK_MLIR_FAST", "QUACK_MLIR_FAST_LIB",
                 "QUACK_MLIR_FAST_TESTING", "QUACK_FAST_CPU_TESTING"):
        full.pop(name, None)
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
      _fast.cross_entropy(x, t, -100, False), _fast.softmax("x"),
      _fast.rmsnorm_backward(x, x, w, r),
      _fast.layer_norm_backward(x, x, w, r, r),
      _fast.cross_entropy_backward(x, t, r, r, -100),
      _fast.softmax_backward(x, x))
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
    assert out[1] == "None None None None None None None None None"
    assert out[2:8] == [f"{op}: {x} must be on a CUDA device, it is on cpu"
                        for op, x in (("softmax", "x"), ("rmsnorm", "x"),
                                      ("layer_norm", "x"),
                                      ("cross_entropy", "logits"),
                                      ("rmsnorm_backward", "x"),
                                      ("layer_norm_backward", "x"))]
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
    # A module built for another torch is refused, with both versions.
    other = run("import torch; built = torch.__version__; "
                "torch.__version__ = '0.0'\n" + script +
                "print(_fast.info()['reason'].endswith("
                "f'built for torch {built}, this is torch 0.0; rebuild it "
                "with scripts/build-torch-ext.sh'))",
                {"QUACK_MLIR_FAST_LIB": str(module_dir)}).stdout
    assert "'active': False" in other and other.endswith("True\n"), other
    # A file that is not a module: a quiet fallback, with the reason.
    junk = tmp_path / "junk.so"
    junk.write_text("not a shared object")
    broken = run(script, {"QUACK_MLIR_FAST_LIB": str(junk)}).stdout
    assert "'active': False" in broken and str(junk) in broken


def test_script_usage(tmp_path):
    proc = subprocess.run(["bash", SCRIPT], capture_output=True, text=True)
    assert proc.returncode == 2 and "usage:" in proc.stderr
    proc = subprocess.run(["bash", SCRIPT, "/tmp/x", "no-such-python"],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "no Python interpreter 'no-such-python'" in proc.stderr
    # An interpreter without headers, one without torch, no CUDA headers.
    headless = tmp_path / "headless"
    headless.write_text("#!/bin/sh\necho /nonexistent .so\n")
    headless.chmod(0o755)
    proc = subprocess.run(["bash", SCRIPT, str(tmp_path / "o"),
                           str(headless)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "has no Python.h in /nonexistent" in proc.stderr, proc.stderr
    torchless = tmp_path / "torchless"
    torchless.write_text(f"#!/bin/sh\nexec {sys.executable} -S -I "
                         "-c 'raise ImportError' \"$@\"\n")
    torchless.chmod(0o755)
    proc = subprocess.run(["bash", SCRIPT, str(tmp_path / "o"),
                           sys.executable], capture_output=True, text=True,
                          env=dict(os.environ, TORCH_PYTHON=str(torchless)))
    assert proc.returncode == 1
    assert "cannot import torch" in proc.stderr, proc.stderr
    proc = subprocess.run(["bash", SCRIPT, str(tmp_path / "o"),
                           sys.executable], capture_output=True, text=True,
                          env=dict(os.environ,
                                   CUDA_HOME=str(tmp_path / "nocuda")))
    assert proc.returncode == 1
    assert "no CUDA headers in" in proc.stderr, proc.stderr


# --- The C++ path against the Python path, through the stand-in driver ---
#
# The module's CPU-testing build takes CPU tensors for device 0's; the
# Python path is pointed at CPU tensors the same way (its device and stream
# lookups replaced). Both launch real kernels as quackc compiles them (f32,
# N = 64, alignments 16 and 4) through the runtime into the stand-in
# driver, which records each launch: the kernel, grid, block, shared bytes
# and parameters must be the same, with each path's own output tensors (and
# scratch buffers and workspaces) in the same places.

sys.path.insert(0, os.path.join(ROOT, "python", "benchmarks"))
import launch_path_cpu  # noqa: E402


@pytest.fixture(scope="module")
def testing_module_dir(tmp_path_factory, module_dir):
    # module_dir first: it skips where the machine cannot build either.
    out = tmp_path_factory.mktemp("fast-testing")
    try:
        launch_path_cpu.build_testing_module(str(out))
    except RuntimeError as e:
        # What the machine lacks skips; a compile error fails.
        last = str(e).strip().splitlines()[-1]
        if any(k in last for k in ("has no Python.h", "no CUDA headers",
                                   "cannot import torch")):
            pytest.skip(last)
        raise
    return out


@pytest.fixture(scope="module")
def stand_in_env(testing_module_dir, compiled_root):
    """The environment of a script that runs the ops on CPU tensors through
    the runtime into the stand-in driver, with the CPU-testing module."""
    from test_launch_cpu import fake_driver
    lib = runtime_or_skip()
    env = launch_path_cpu.environment(
        os.path.dirname(os.path.dirname(lib)), str(testing_module_dir),
        str(compiled_root), True)
    env["QUACK_RT_CUDA_LIBRARY"] = fake_driver()
    env["QUACK_MLIR_RUNTIME_LIB"] = lib
    return env


@pytest.fixture(scope="module")
def compiled_root(tmp_path_factory):
    from test_launch_cpu import quackc
    root = tmp_path_factory.mktemp("fast-kernels")
    launch_path_cpu.compile_kernels(quackc(), str(root))
    return root


# The stand-in driver's launch records (FakeCudaDriver.h), read by the
# scripts below.
from test_launch_cpu import DRIVER_RECORDS  # noqa: E402

FAKE = "import os\n" + DRIVER_RECORDS.replace(
    "DRIVER", 'os.environ["QUACK_RT_CUDA_LIBRARY"]') + r'''
# Parameters per kernel, M included (docs/abi.md); a finishing kernel's:
# the row slots, the workspace and one per sum.
PARAMS = {"softmax_fwd": 5, "softmax_bwd": 7, "rmsnorm_fwd": 8,
          "layernorm_fwd": 10, "cross_entropy_fwd": 7,
          "cross_entropy_bwd": 9, "rmsnorm_bwd": 11, "layernorm_bwd": 13,
          "rmsnorm_bwd_finish": 3, "layernorm_bwd_finish": 4}
for symbol, count in PARAMS.items():
    fake.fake_cuda_set_symbol_params(symbol.encode(), count)

def records(first, names):
    """The launches recorded since the first-th as comparable tuples:
    pointers named by `names` (address -> name), other host-range addresses
    (scratch buffers, workspaces) as "buffer", negative values signed."""
    out = []
    for i in range(first, fake.fake_cuda_num_launches()):
        l = fake.fake_cuda_get_launch(i).contents
        params = []
        for p in l.params[:PARAMS[l.symbol.decode()]]:
            if p in names:
                params.append(names[p])
            elif 1 << 32 < p < 1 << 63:
                params.append("buffer")
            elif p >= 1 << 63:
                params.append(p - (1 << 64))
            else:
                params.append(p)
        out.append((l.symbol.decode(), l.ex, l.function, tuple(l.grid),
                    tuple(l.block), l.shared_bytes, tuple(l.cluster),
                    tuple(params)))
    return out
'''

COMPARE = launch_path_cpu.POINT_AT_CPU + FAKE + r'''
import sys
import quack_mlir as qm
from quack_mlir import _fast
from quack_mlir.cross_entropy import _backward as ce_backward
from quack_mlir.cross_entropy import _forward as ce_forward
from quack_mlir.layernorm import layer_norm_backward_checked, \
    layer_norm_forward
from quack_mlir.rmsnorm import rmsnorm_backward_checked, rmsnorm_forward
from quack_mlir.softmax import softmax_backward_checked, softmax_forward

info = _fast.info()
assert info["active"], info
mod = _fast._module

def run(fn, names):
    """Runs fn(); returns (its result, [launch as comparable tuples], how
    many launches the C++ path made)."""
    first = fake.fake_cuda_num_launches()
    before = mod.launches()
    out = fn()
    served = mod.launches() - before
    return out, records(first, names(out)), served

def flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]

def check(label, fast_fn, py_fn, inputs, outputs=None):
    def names(out):
        d = {t.data_ptr(): n for n, t in inputs.items()}
        for i, t in enumerate(flat(out)):
            if t is not None:
                d.setdefault(t.data_ptr(), f"out{i}")
        return d
    out_f, rec_f, served_f = run(fast_fn, names)
    out_p, rec_p, served_p = run(py_fn, names)
    # A kernel with sums over rows launches its finishing kernel too.
    assert served_f >= 1 and len(rec_f) in (served_f, 2 * served_f), (
        label, served_f, rec_f)
    assert served_p == 0, (label, "the Python path launched from C++")
    assert rec_f == rec_p, (label, rec_f, rec_p)
    for a, b in zip(flat(out_f), flat(out_p)):
        assert (a.shape, a.dtype, a.stride()) == (b.shape, b.dtype,
                                                  b.stride()), label
    print("ok", label, [r[0] for r in rec_f], rec_f[0][3][0], rec_f[0][4][0],
          rec_f[0][-1])

torch.manual_seed(0)
n = 64
base = torch.randn(4096)
def rows(m, offset=0, stride=n):
    return base[offset:offset + m * stride].view(m, stride)[:, :n]

w = torch.randn(n)
b = torch.randn(n)
for label, x in (("contiguous", rows(8)), ("offset", rows(8, 1)),
                 ("row stride 72", rows(8, 0, 72)),
                 ("row stride 65", rows(8, 0, 65)), ("one row", rows(1)),
                 ("3-d", base[:6 * n].view(2, 3, n))):
    ins = {"x": x, "w": w, "b": b}
    check("softmax " + label, lambda: qm.softmax(x),
          lambda: softmax_forward(x), ins)
    check("rmsnorm " + label, lambda: qm.rmsnorm(x, w, 1e-5, True),
          lambda: rmsnorm_forward(x, w, 1e-5), ins)
    check("rmsnorm unread " + label, lambda: qm.rmsnorm(x, w, 1e-5),
          lambda: rmsnorm_forward(x, w, 1e-5, keep_rstd=False)[0], ins)
    check("layer_norm " + label,
          lambda: qm.layer_norm(x, n, w, b, 1e-5, True),
          lambda: layer_norm_forward(x, w, b, 1e-5), ins)
    check("layer_norm unread " + label,
          lambda: qm.layer_norm(x, [n], w, b, 1e-5),
          lambda: layer_norm_forward(x, w, b, 1e-5, keep_stats=False)[0],
          ins)
    if x.dim() == 2:
        m = x.shape[0]
        t = torch.randint(0, n, (m,))
        t[0] = -100
        check("cross_entropy " + label,
              lambda: qm.cross_entropy(x, t, reduction="none"),
              lambda: ce_forward(x, t, -100, keep_lse=False)[0],
              dict(ins, t=t))
        lse, dl = torch.rand(m), torch.rand(m)
        check("cross_entropy_backward " + label,
              lambda: _fast.cross_entropy_backward(x, t, lse, dl, -100),
              lambda: ce_backward(x, t, lse, dl, -100),
              dict(ins, t=t, lse=lse, dl=dl))
    xc = x.contiguous()
    m = xc.reshape(-1, n).shape[0]
    dy = torch.randn(xc.shape)
    r1 = torch.rand(m)
    r2 = torch.rand(m)
    bins = {"x": x, "w": w, "dy": dy, "r1": r1, "r2": r2}
    check("rmsnorm_backward " + label,
          lambda: qm.rmsnorm_backward(dy, xc, w, r1),
          lambda: rmsnorm_backward_checked(dy, xc, w, r1),
          dict(bins, x=xc))
    check("layer_norm_backward " + label,
          lambda: qm.layer_norm_backward(dy, xc, w, r1, r2),
          lambda: layer_norm_backward_checked(dy, xc, w, r1, r2),
          dict(bins, x=xc))
    check("softmax_backward " + label,
          lambda: qm.softmax_backward(dy, x),
          lambda: softmax_backward_checked(dy, x), bins)

# Autograd: the forward and the backward both launch from C++.
x = torch.randn(8, n, requires_grad=True)
wg = w.clone().requires_grad_()
before = mod.launches()
y = qm.rmsnorm(x, wg, 1e-5)
dx, dw = torch.autograd.grad(y, (x, wg), torch.randn(8, n))
print("autograd launches", mod.launches() - before,
      dx.shape == x.shape, dw.shape == wg.shape)
before = mod.launches()
bg = b.clone().requires_grad_()
y = qm.layer_norm(x, n, wg, bg, 1e-5)
grads = torch.autograd.grad(y, (x, wg, bg), torch.randn(8, n))
print("layer_norm autograd launches", mod.launches() - before,
      [g.shape == v.shape for g, v in zip(grads, (x, wg, bg))])
before = mod.launches()
t = torch.randint(0, n, (8,))
loss = qm.cross_entropy(x, t)
(dx,) = torch.autograd.grad(loss, (x,))
print("cross_entropy autograd launches", mod.launches() - before,
      dx.shape == x.shape)
before = mod.launches()
(dx,) = torch.autograd.grad(qm.softmax(x), (x,), torch.randn(8, n))
print("softmax autograd launches", mod.launches() - before,
      dx.shape == x.shape)
print("variants", mod.size())
'''


def test_same_launches_as_the_python_path(stand_in_env):
    out = run(COMPARE, stand_in_env).stdout.splitlines()
    oks = [line for line in out if line.startswith("ok ")]
    # 6 layouts x 10 calls (rmsnorm and layer_norm with kept and unread
    # statistics), less cross_entropy's two on the 3-d input.
    assert len(oks) == 6 * 10 - 2, out
    assert "softmax autograd launches 2 True" in out, out
    assert "layer_norm autograd launches 2 [True, True, True]" in out, out
    assert "autograd launches 2 True True" in out, out
    assert "cross_entropy autograd launches 2 True" in out, out


def test_testing_build_needs_its_switch(testing_module_dir):
    runtime_or_skip()
    out = run("""
from quack_mlir import _fast
print(_fast.info())
""", {"QUACK_MLIR_FAST_LIB": str(testing_module_dir)}).stdout
    assert "'active': False" in out and "CPU tests" in out, out


COMPILE = launch_path_cpu.POINT_AT_CPU + FAKE + r'''
import quack_mlir as qm


def symbols(fn):
    first = fake.fake_cuda_num_launches()
    fn()
    return [fake.fake_cuda_get_launch(i).contents.symbol.decode()
            for i in range(first, fake.fake_cuda_num_launches())]

n = 64
x = torch.randn(8, n, requires_grad=True)
w = torch.randn(n, requires_grad=True)
b = torch.randn(n, requires_grad=True)
t = torch.randint(0, n, (8,))
steps = [
    ("softmax", lambda x: qm.softmax(x).sum(), (x,)),
    ("rmsnorm", lambda x, w: qm.rmsnorm(x, w, 1e-5).sum(), (x, w)),
    ("layer_norm", lambda x, w, b: qm.layer_norm(x, n, w, b, 1e-5).sum(),
     (x, w, b)),
    ("cross_entropy", lambda x: qm.cross_entropy(x, t), (x,)),
]
for name, f, args in steps:
    g = torch.compile(f, backend="aot_eager", fullgraph=True)
    print(name, symbols(lambda: torch.autograd.grad(g(*args), args)))
'''


def test_torch_compile_captures_every_op_and_its_backward(stand_in_env):
    """torch.compile (fullgraph, AOT autograd) captures each op as its
    torch.library ops, forward and backward, whose kernels then launch (on
    CPU tensors, into the stand-in driver)."""
    out = run(COMPILE, stand_in_env).stdout.splitlines()
    assert out == [
        "softmax ['softmax_fwd', 'softmax_bwd']",
        "rmsnorm ['rmsnorm_fwd', 'rmsnorm_bwd', 'rmsnorm_bwd_finish']",
        "layer_norm ['layernorm_fwd', 'layernorm_bwd', "
        "'layernorm_bwd_finish']",
        "cross_entropy ['cross_entropy_fwd', 'cross_entropy_bwd']"], out


DIFFERENTIAL = launch_path_cpu.POINT_AT_CPU + FAKE + r'''
import random, sys
import quack_mlir as qm
from quack_mlir import _fast

assert _fast.info()["active"]
NAMES = _fast._NAMES
rng = random.Random(int(sys.argv[1]))
torch.manual_seed(int(sys.argv[1]))

def tensors(obj):
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [t for o in obj for t in tensors(o)]
    return []

def outcome(call, inputs):
    """What a call does: its launches (pointers named) and its outputs'
    layouts, or its exception."""
    first = fake.fake_cuda_num_launches()
    try:
        out = call()
    except Exception as e:
        return ("raises", type(e).__name__, str(e))
    names = {}
    for i, t in enumerate(inputs):
        names.setdefault(t.data_ptr(), f"in{i}")
    outs = tensors(out)
    for i, t in enumerate(outs):
        names.setdefault(t.data_ptr(), f"out{i}")
    return ("ok", records(first, names), [(tuple(t.shape), t.dtype, t.stride(),
                              t.requires_grad) for t in outs])

def both(call, inputs):
    fast = outcome(call, inputs)
    saved = {n: getattr(_fast, n) for n in NAMES}
    for n in NAMES:
        setattr(_fast, n, None)
    try:
        slow = outcome(call, inputs)
    finally:
        for n, f in saved.items():
            setattr(_fast, n, f)
    return fast, slow

def layout(shape, dtype=torch.float32):
    """A tensor of `shape` in a random layout: contiguous, one element off,
    a slice of wider rows, every other column, rows repeated by expand, or
    transposed."""
    kind = rng.choice(["contiguous"] * 4 + ["offset", "wide", "step",
                                            "expand", "transposed"])
    n = shape[-1]
    if kind == "offset":
        return torch.randn(int(torch.tensor(shape).prod()) + 1,
                           dtype=dtype)[1:].view(shape)
    if kind == "wide" and len(shape) >= 2:
        return torch.randn(*shape[:-1], n + rng.choice([1, 8]),
                           dtype=dtype)[..., :n]
    if kind == "step":
        return torch.randn(*shape[:-1], 2 * n, dtype=dtype)[..., ::2]
    if kind == "expand" and len(shape) >= 2:
        return torch.randn(*shape[:-2], 1, n, dtype=dtype).expand(shape)
    if kind == "transposed" and len(shape) >= 2:
        return torch.randn(*shape[:-2], n, shape[-2],
                           dtype=dtype).transpose(-1, -2)
    return torch.randn(*shape, dtype=dtype)

def vector(n, dtype):
    kind = rng.choice(["ok"] * 16 + ["short", "dtype", "step", "grad",
                                     "param"])
    if kind == "short":
        return torch.randn(n - 1, dtype=dtype)
    if kind == "dtype":
        return torch.randn(n, dtype=torch.float64)
    if kind == "step":
        return torch.randn(2 * n, dtype=dtype)[::2]
    if kind == "grad":
        return torch.randn(n, dtype=dtype, requires_grad=True)
    if kind == "param":
        return torch.nn.Parameter(torch.randn(n, dtype=dtype))
    return torch.randn(n, dtype=dtype)

mismatches = []
launched = raised = served = 0
for case in range(int(sys.argv[2])):
    n = rng.choice([64] * 9 + [32])
    dtype = rng.choice([torch.float32] * 9 + [torch.bfloat16])
    lead = rng.choice([(8,), (1,), (0,), (2, 3), ()])
    shape = (*lead, n)
    x = layout(shape, dtype)
    if rng.random() < 0.25:
        x.requires_grad_(x.is_leaf)
    grad = rng.random() < 0.5
    op = rng.choice(["softmax", "rmsnorm", "layer_norm", "cross_entropy",
                     "softmax_backward", "rmsnorm_backward",
                     "layer_norm_backward"])
    w, b = vector(n, dtype), vector(n, dtype)
    m = x.numel() // n if n else 0
    eps = rng.choice([1e-5, 1e-6, 0])
    if op == "softmax":
        dim = rng.choice([-1, -1, -1, x.dim() - 1, -1.0])
        call, inputs = (lambda: qm.softmax(x, dim)), [x]
    elif op == "rmsnorm":
        keep = rng.choice([True, False])
        call, inputs = (lambda: qm.rmsnorm(x, w, eps, keep)), [x, w]
    elif op == "layer_norm":
        ns = rng.choice([n, [n], (n,), torch.Size([n]), n + 1])
        keep = rng.choice([True, False])
        call = lambda: qm.layer_norm(x, ns, w, b, eps, keep)
        inputs = [x, w, b]
    elif op == "cross_entropy":
        t = torch.randint(0, n, (max(m, 0),))
        if m and rng.random() < 0.5:
            t[0] = -100
        if rng.random() < 0.2:
            t = torch.randint(0, n, (2 * m,))[::2]
        red = rng.choice(["none", "mean", "sum"])
        ign = rng.choice([-100, -100, 3, 2 ** 70])
        call = lambda: qm.cross_entropy(x, t, reduction=red, ignore_index=ign)
        inputs = [x, t]
    else:
        dy = layout(shape, dtype) if rng.random() < 0.3 else \
            torch.randn(shape, dtype=dtype)
        r1 = rng.choice([torch.rand(m)] * 6 + [
            torch.rand(m + 1), torch.rand(m, dtype=torch.float64)])
        r2 = torch.rand(m)
        if op == "softmax_backward":
            call, inputs = (lambda: qm.softmax_backward(dy, x)), [dy, x]
        elif op == "rmsnorm_backward":
            call = lambda: qm.rmsnorm_backward(dy, x, w, r1)
            inputs = [dy, x, w, r1]
        else:
            call = lambda: qm.layer_norm_backward(dy, x, w, r1, r2)
            inputs = [dy, x, w, r1, r2]
    before = _fast._module.launches()
    with torch.set_grad_enabled(grad):
        fast, slow = both(call, inputs)
    served += _fast._module.launches() > before
    launched += fast[0] == "ok" and bool(fast[1])
    raised += fast[0] == "raises"
    if fast != slow:
        mismatches.append((case, op, tuple(x.shape), x.stride(), fast, slow))
print("cases", int(sys.argv[2]), "mismatches", len(mismatches))
print("launched", launched, "raised", raised, "served from C++", served)
for mm in mismatches[:5]:
    print(mm)
'''


def test_differential_against_the_python_path(stand_in_env):
    """Random layouts, dtypes, operands and arguments (some wrong): every
    call does the same with the C++ path as without it, the same launches
    with the same arguments and outputs of the same layout, or the same
    exception with the same message."""
    proc = subprocess.run([sys.executable, "-c", DIFFERENTIAL, "7", "600"],
                          env=stand_in_env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "cases 600 mismatches 0", proc.stdout[-6000:]
    # Not vacuous: many calls launch, many of them from C++, many raise.
    counts = lines[1].split()
    launched, raised, served = int(counts[1]), int(counts[3]), int(counts[7])
    assert launched > 150 and served > 100 and raised > 80, lines[1]


def test_launch_path_benchmark_runs(testing_module_dir, tmp_path):
    """launch_path_cpu.py (BENCHMARKS.md's host times on the build machine)
    runs both paths and writes every op of both to its JSON."""
    lib = runtime_or_skip()
    from test_launch_cpu import fake_driver, quackc
    quackc()
    fake_driver()
    out = tmp_path / "lp.json"
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "python", "benchmarks",
                                      "launch_path_cpu.py"),
         "--build", os.path.dirname(os.path.dirname(lib)),
         "--fast-lib", str(testing_module_dir), "--calls", "200",
         "--reps", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    import json
    res = json.loads(out.read_text())
    assert set(res) == {"cpp", "python"}
    assert set(res["cpp"]) == set(res["python"])
    assert {"softmax", "rmsnorm_backward", "cross_entropy fwd+bwd (autograd)",
            "torch.empty_like"} <= set(res["cpp"])
    assert all(v > 0 for r in res.values() for v in r.values())


BAD_ANSWERS = r'''
import glob, importlib.util, sys
import torch
path = glob.glob(sys.argv[1] + "/_quack_fast*")[0]
spec = importlib.util.spec_from_file_location("_quack_fast", path)
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)

class Owner:
    pass

answers = [
    "not a tuple",
    ([(0, 1)], 0, 4, Owner()),          # a null handle
    ([(0, 1)], 0x1000, 3, Owner()),     # three arguments for four
    ([(9, 1)], 0x1000, 4, Owner()),     # a term past the arguments
    ([(0, 3)], 0x1000, 4, Owner()),     # a scale that is not a power of 2
    ([0], 0x1000, 4, Owner()),          # a term that is not a pair
    (5, 0x1000, 4, Owner()),            # terms not a sequence
]
x = torch.randn(4, 64)
for answer in answers:
    m.clear()
    m.init(1, 1, lambda *a, answer=answer: answer, RuntimeError,
           torch.nn.Parameter)
    try:
        m.softmax(x)
        print("launched")
    except (RuntimeError, TypeError) as e:
        print(type(e).__name__, e)
print("remembered", m.size())
'''


def test_bad_resolver_answers_are_refused(testing_module_dir):
    """The module checks the resolver's answer before it remembers or
    launches anything (the answers are wrong on purpose)."""
    out = run(BAD_ANSWERS.replace("sys.argv[1]",
                                  repr(str(testing_module_dir))))
    lines = out.stdout.splitlines()
    assert lines == [
        "TypeError _quack_fast: the resolver must answer a tuple (terms, "
        "handle, nargs, owner)",
        "RuntimeError _quack_fast: a null kernel handle",
        "RuntimeError _quack_fast: the kernel takes 3 arguments after M, "
        "this op passes 4",
        "RuntimeError _quack_fast: an alignment term out of range",
        "RuntimeError _quack_fast: an alignment term out of range",
        "RuntimeError _quack_fast: an alignment term out of range",
        "TypeError terms must be a sequence",
        "remembered 0"], lines


DRIVER_ERRORS = launch_path_cpu.POINT_AT_CPU + FAKE + r'''
import quack_mlir as qm
x = torch.randn(8, 64)
w = torch.randn(64)
qm.softmax(x)
fake.fake_cuda_fail(b"cuLaunchKernel", 700)
for call in (lambda: qm.softmax(x),
             lambda: qm.rmsnorm_backward(x, x, w, torch.rand(8))):
    try:
        call()
        print("no error")
    except qm.KernelError as e:
        print(type(e).__name__, e)
fake.fake_cuda_fail(b"cuLaunchKernel", 0)
print(qm.softmax(x).shape)
'''


def test_driver_errors_raise_kernel_error(stand_in_env):
    """A launch the driver refuses raises the runtime's KernelError, naming
    the call and the driver's error, from the C++ path as from Python."""
    out = run(DRIVER_ERRORS, stand_in_env).stdout.splitlines()
    assert len(out) == 3, out
    for line, kernel in zip(out, ("softmax_fwd", "rmsnorm_bwd")):
        assert line.startswith(f'KernelError kernel "{kernel}": '
                               "cuLaunchKernel failed: "
                               "CUDA_ERROR_ILLEGAL_ADDRESS"), out
    assert out[2] == "torch.Size([8, 64])", out
