#!/usr/bin/env python3
"""Host cost per call of the quack_mlir ops, measured without a GPU.

The ops run on CPU tensors with the CUDA-only pieces replaced: x.is_cuda
reads True, the current device and stream are constants, and the runtime's
launch entry point is a C stub with the same signature (compiled here with
$CC, default cc), called through ctypes exactly as the real one. Everything
else is the real path: validation, output allocation (the CPU allocator,
not CUDA's caching one), variant choice from a real bundle and argument
marshalling. The real launch adds cuLaunchKernel's own cost on top.

    QUACK_MLIR_BUNDLE=ROOT python3 host_overhead_cpu.py [--profile OP]

ROOT must hold bundles of rmsnorm_fwd, softmax_fwd and layernorm_fwd for
bf16, N=4096 (`quackc kernels/X.qk --bundle=ROOT/X -D T=bf16 -D N=4096`).
"""

import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
import timeit

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir))
import quack_mlir  # noqa: E402
from quack_mlir import _ops, _runtime  # noqa: E402

STUB = r"""
#include <stddef.h>
#include <stdint.h>
int quack_rt_kernel_launch(void *k, int64_t m, const int64_t *args, int n,
                           void *stream, char *err, size_t len) {
  (void)k; (void)m; (void)args; (void)n; (void)stream; (void)err; (void)len;
  return 0;
}
"""


def stub_launch():
    d = tempfile.mkdtemp()
    src, lib = os.path.join(d, "stub.c"), os.path.join(d, "libstub.so")
    with open(src, "w") as f:
        f.write(STUB)
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC",
                    "-o", lib, src], check=True)
    fn = ctypes.CDLL(lib).quack_rt_kernel_launch
    fn.restype = ctypes.c_int
    return fn


def patch():
    torch.Tensor.is_cuda = property(lambda self: True)
    _ops._get_device = lambda: -1  # CPU tensors' get_device()
    _ops._raw_stream = lambda dev: 0
    torch.cuda.is_current_stream_capturing = lambda: False
    _runtime.load_library()
    _runtime._raw_launch = stub_launch()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--profile", choices=["rmsnorm", "softmax", "layer_norm"])
    args = ap.parse_args()
    patch()
    n = args.n
    x = torch.randn(1, n, dtype=torch.bfloat16)
    w = torch.randn(n, dtype=torch.bfloat16)
    b = torch.randn(n, dtype=torch.bfloat16)
    calls = {
        "rmsnorm": lambda: quack_mlir.rmsnorm(x, w, 1e-6),
        "softmax": lambda: quack_mlir.softmax(x),
        "layer_norm": lambda: quack_mlir.layer_norm(x, (n,), w, b, 1e-5),
        "torch.empty_like(x)": lambda: torch.empty_like(x),
        "x.new_empty(m, dtype=f32)":
            lambda: x.new_empty(1, dtype=torch.float32),
    }
    if args.profile:
        import cProfile
        import pstats
        fn = calls[args.profile]
        fn()
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.calls):
            fn()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(40)
        return 0
    for name, fn in calls.items():
        fn()
        t = min(timeit.repeat(fn, number=args.calls, repeat=5)) / args.calls
        print(f"{name:28s} {t * 1e6:6.2f} us/call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
