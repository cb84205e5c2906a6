#!/usr/bin/env python3
"""Host time per call of the ops' two launch paths, on a machine without a
GPU: the C++ path (_quack_fast, built for CPU tests) and the checked Python
path, each launching real kernels (f32, N = 64, as quackc compiles them)
through libquack_runtime.so into the stand-in CUDA driver, which records
the launch and returns at once. CPU tensors stand for CUDA ones, so the
figures leave out the CUDA caching allocator and the driver's own launch;
what they show is the Python, validation and runtime work each path adds.

    python3 python/benchmarks/launch_path_cpu.py --build build [--json F]

Needs the build directory (quackc, the runtime and the stand-in driver,
unittests/lib/libquack-fake-cuda.so), torch, g++, the CUDA headers and
ptxas. Each path runs in a process of its own (the runtime opens the driver
once per process).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# (bundle name, description, kernel, bindings): what the ops launch, f32
# at N = 64, 16- and 4-byte alignment.
KERNELS = [
    ("softmax", "softmax.qk", "softmax_fwd", ["T=f32", "N=64"]),
    ("softmax_bwd", "softmax.qk", "softmax_bwd", ["T=f32", "N=64"]),
    ("rmsnorm", "rmsnorm.qk", "rmsnorm_fwd",
     ["T=f32", "TW=T", "N=64", "RESIDUAL=false", "BIAS=false",
      "OFFSET=false"]),
    ("rmsnorm_bwd", "rmsnorm.qk", "rmsnorm_bwd",
     ["T=f32", "TW=T", "N=64", "RESIDUAL=false", "OFFSET=false"]),
    ("layernorm", "layernorm.qk", "layernorm_fwd",
     ["T=f32", "TW=T", "N=64", "BIAS=true"]),
    ("layernorm_bwd", "layernorm.qk", "layernorm_bwd",
     ["T=f32", "TW=T", "N=64", "BIAS=true"]),
    ("cross_entropy", "cross_entropy.qk", "cross_entropy_fwd",
     ["T=f32", "N=64", "IGNORE=true"]),
    ("cross_entropy_bwd", "cross_entropy.qk", "cross_entropy_bwd",
     ["T=f32", "N=64", "IGNORE=true"]),
]


def compile_kernels(quackc, root):
    """Compiles KERNELS into bundles under `root` (a bundle root)."""
    env = dict(os.environ)
    env["PATH"] = env.get("PATH", "") + ":/usr/local/cuda/bin"
    for name, qk, kernel, binds in KERNELS:
        cmd = [quackc, os.path.join(ROOT, "kernels", qk),
               f"--kernel={kernel}", "--alignments=16,4",
               f"--bundle={os.path.join(root, name)}"]
        for b in binds:
            cmd += ["-D", b]
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=300, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr}")


def build_testing_module(out):
    """Builds _quack_fast for CPU tests into `out`."""
    proc = subprocess.run(
        ["bash", os.path.join(ROOT, "scripts", "build-torch-ext.sh"), out,
         sys.executable], capture_output=True, text=True, timeout=600,
        env=dict(os.environ, QUACK_FAST_CPU_TESTING="1"))
    if proc.returncode != 0:
        raise RuntimeError("build-torch-ext.sh failed:\n" + proc.stderr)


def environment(build, fast_lib, bundle, fast):
    """The environment of a process that launches into the stand-in."""
    env = dict(os.environ)
    env.update({
        "QUACK_RT_CUDA_LIBRARY": os.path.join(
            build, "unittests", "lib", "libquack-fake-cuda.so"),
        "QUACK_MLIR_RUNTIME_LIB": os.path.join(build, "lib",
                                               "libquack_runtime.so"),
        "QUACK_MLIR_BUNDLE": bundle, "QUACK_MLIR_DEVICE_NAME": "",
        "QUACK_MLIR_FAST_LIB": fast_lib, "QUACK_MLIR_FAST_TESTING": "1",
        "QUACK_MLIR_FAST": "1" if fast else "0",
        "PYTHONPATH": os.path.join(ROOT, "python") + os.pathsep +
        env.get("PYTHONPATH", "")})
    return env


# Run in each process: the Python path is pointed at CPU tensors (its
# device and stream lookups replaced), as the CPU-testing build takes them.
POINT_AT_CPU = """
import torch
from quack_mlir import _ops
_ops.device = lambda op, x, *named, name="x": 0
_ops._get_device = lambda: 0
_ops._raw_stream = lambda dev: 0
torch.cuda.is_current_stream_capturing = lambda: False
"""

TIMING = POINT_AT_CPU + """
import json, statistics, sys, time
import quack_mlir as qm
from quack_mlir import _fast
calls, reps = int(sys.argv[1]), int(sys.argv[2])
n, m = 64, 8
torch.manual_seed(0)
x, dy = torch.randn(m, n), torch.randn(m, n)
w, b = torch.randn(n), torch.randn(n)
t, r, dl = torch.randint(0, n, (m,)), torch.rand(m), torch.rand(m)
xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()
cases = {
    "softmax": lambda: qm.softmax(x),
    "rmsnorm": lambda: qm.rmsnorm(x, w, 1e-5),
    "layer_norm": lambda: qm.layer_norm(x, (n,), w, b, 1e-5),
    "cross_entropy": lambda: qm.cross_entropy(x, t, reduction="none"),
    "rmsnorm_backward": lambda: qm.rmsnorm_backward(dy, x, w, r),
    "layer_norm_backward": lambda: qm.layer_norm_backward(dy, x, w, r, r),
    "softmax_backward": lambda: qm.softmax_backward(dy, x),
    "softmax fwd+bwd (autograd)": lambda: torch.autograd.grad(
        qm.softmax(xg), (xg,), dy),
    "rmsnorm fwd+bwd (autograd)": lambda: torch.autograd.grad(
        qm.rmsnorm(xg, wg, 1e-5), (xg, wg), dy),
    "cross_entropy fwd+bwd (autograd)": lambda: torch.autograd.grad(
        qm.cross_entropy(xg, t, reduction="none"), (xg,), dl),
    "torch.empty_like": lambda: torch.empty_like(x),
}
out = {"fast": _fast.info()["active"]}
for name, fn in cases.items():
    for _ in range(calls // 10):
        fn()
    per = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        per.append((time.perf_counter() - t0) / calls * 1e6)
    out[name] = statistics.median(per)
print(json.dumps(out))
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True,
                    help="build directory (quackc, runtime, stand-in)")
    ap.add_argument("--fast-lib", help="a CPU-testing build of _quack_fast "
                    "(default: built into a temporary directory)")
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args(argv)
    build = os.path.abspath(args.build)
    quackc = os.path.join(build, "bin", "quackc")
    for path in (quackc, os.path.join(build, "lib", "libquack_runtime.so"),
                 os.path.join(build, "unittests", "lib",
                              "libquack-fake-cuda.so")):
        if not os.path.isfile(path):
            print(f"launch_path_cpu.py: {path} is missing; build the "
                  "project first", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory() as tmp:
        fast_lib = args.fast_lib
        if not fast_lib:
            fast_lib = os.path.join(tmp, "fast")
            build_testing_module(fast_lib)
        bundle = os.path.join(tmp, "kernels")
        compile_kernels(quackc, bundle)
        results = {}
        for fast in (True, False):
            proc = subprocess.run(
                [sys.executable, "-c", TIMING, str(args.calls),
                 str(args.reps)], capture_output=True, text=True,
                env=environment(build, fast_lib, bundle, fast), timeout=900)
            if proc.returncode != 0:
                print(proc.stderr[-3000:], file=sys.stderr)
                return 1
            res = json.loads(proc.stdout.strip().splitlines()[-1])
            if res.pop("fast") != fast:
                print("launch_path_cpu.py: the C++ path was "
                      f"{'not ' if fast else ''}in use where it should "
                      f"{'' if fast else 'not '}be", file=sys.stderr)
                return 1
            results["cpp" if fast else "python"] = res
    print(f"us per call, median of {args.reps} loops of {args.calls} "
          "(M = 8, N = 64, f32 CPU tensors, stand-in driver)")
    print(f"{'op':34s} {'C++ path':>9s} {'Python path':>12s} {'saved':>7s}")
    for name, cpp in results["cpp"].items():
        py = results["python"][name]
        print(f"{name:34s} {cpp:9.2f} {py:12.2f} {py - cpp:7.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
