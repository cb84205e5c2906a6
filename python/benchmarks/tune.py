#!/usr/bin/env python3
"""Phase 2 of config tuning: times the same kernels compiled with different
configs, each config in its own bundle root, on the GPU.

Phase 1, on the build machine, compiles one bundle root per config:

    for c in default cluster=8 threads=32; do
      scripts/build-catalogue.sh build/bin/quackc tune/$c 1024,65536 bf16 \\
          --alignments=16 $( [ $c = default ] || echo --config=$c )
    done

Phase 2, on the GPU (QUACK_MLIR_RUNTIME_LIB set as for the tests):

    python3 tune.py --roots tune/* --kernels softmax_fwd rmsnorm_fwd \\
        --n 1024 65536 --dtype bf16 [--out tune.json]

Every variant is checked against a float64 reference before it is timed;
timing is bench.py's (CUDA events, batches behind a GPU sleep, median,
inputs rotated past the L2). Prints one table per (kernel, N), fastest
first, with the config each bundle's metadata records.
"""

import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir))
sys.path.insert(0, HERE)
import quack_mlir  # noqa: E402
from quack_mlir._launch import Launcher, float_bits  # noqa: E402
import bench  # noqa: E402
from bench import time_batches  # noqa: E402

DT = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
L2 = 60 << 20


def stream():
    return torch.cuda.current_stream().cuda_stream


def case(kernel, t, m, n):
    """(launcher, key, make_inputs, launch(args), check(args), bytes)."""
    b = torch.finfo(DT[t]).bits // 8
    if kernel == "softmax_fwd":
        lau = Launcher("softmax_fwd", ("T", "N"))
        key = (t, n)

        def make():
            x = torch.randn(m, n, device="cuda").to(DT[t])
            return x, torch.empty_like(x)

        def run(x, y):
            lau.launch(key, m, (x.data_ptr(), n, y.data_ptr(), n), stream())

        def check(x, y):
            return y.double(), torch.softmax(x.double(), -1)
        return lau, run, make, check, 2 * m * n * b
    if kernel == "rmsnorm_fwd":
        lau = Launcher("rmsnorm_fwd", ("T", "TW", "N"),
                       fixed={"RESIDUAL": "false", "BIAS": "false",
                              "OFFSET": "false"})
        key = (t, t, n)
        w = torch.randn(n, device="cuda").to(DT[t])
        eps = float_bits(1e-6)

        def make():
            x = torch.randn(m, n, device="cuda").to(DT[t])
            return x, torch.empty_like(x), torch.empty(m, device="cuda")

        def run(x, y, r):
            lau.launch(key, m, (x.data_ptr(), n, w.data_ptr(), eps,
                                y.data_ptr(), n, r.data_ptr()), stream())

        def check(x, y, r):
            xd = x.double()
            ref = xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6)
            return y.double(), ref * w.double()
        return lau, run, make, check, 2 * m * n * b + n * b + 4 * m
    if kernel == "cross_entropy_fwd":
        lau = Launcher("cross_entropy_fwd", ("T", "N", "IGNORE"))
        key = (t, n, "false")

        def make():
            x = torch.randn(m, n, device="cuda").to(DT[t])
            tg = torch.randint(0, n, (m,), device="cuda")
            return x, tg, torch.empty(m, device="cuda"), torch.empty(
                m, device="cuda")

        def run(x, tg, loss, lse):
            lau.launch(key, m, (x.data_ptr(), n, tg.data_ptr(),
                                loss.data_ptr(), lse.data_ptr()), stream())

        def check(x, tg, loss, lse):
            return lse.double(), torch.logsumexp(x.double(), -1)
        return lau, run, make, check, m * n * b + 16 * m
    raise SystemExit(f"tune.py: unknown kernel {kernel!r}; known: "
                     "softmax_fwd, rmsnorm_fwd, cross_entropy_fwd")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--roots", nargs="+", required=True,
                   help="bundle roots, one per config")
    p.add_argument("--kernels", nargs="+", default=["softmax_fwd"])
    p.add_argument("--n", nargs="+", type=int, required=True)
    p.add_argument("--dtype", default="bf16", choices=sorted(DT))
    p.add_argument("--out", help="write the results here (JSON)")
    a = p.parse_args()
    bench.load_gpu_modules()
    results = []
    for kernel in a.kernels:
        for n in a.n:
            m = min(32768, (1 << 31) // n)
            rows = []
            for root in a.roots:
                quack_mlir.set_bundle(root)
                lau, run, make, check, nbytes = case(kernel, a.dtype, m, n)
                sets = [make() for _ in range(max(1, (4 * L2) // nbytes + 1))]
                label = os.path.basename(os.path.normpath(root))
                try:
                    run(*sets[0])
                    torch.cuda.synchronize()
                except Exception as e:  # a config this N cannot use
                    rows.append((label, None, str(e).splitlines()[0]))
                    continue
                out, ref = check(*sets[0])
                err = ((out - ref).norm() / ref.norm()).item()
                if not err < 2e-2:
                    rows.append((label, None, f"wrong: rel err {err:.2e}"))
                    continue
                t = time_batches(run, sets, batch=5, reps=30, warmup=5)
                rows.append((label, nbytes / t / 1e12, ""))
                results.append({"kernel": kernel, "dtype": a.dtype, "N": n,
                                "M": m, "config": label,
                                "tbps": nbytes / t / 1e12})
            print(f"\n{kernel} {a.dtype} M={m} N={n}")
            for label, tb, note in sorted(
                    rows, key=lambda r: -(r[1] or 0)):
                print(f"  {label:28s} " +
                      (f"{tb:.3f} TB/s" if tb else f"-- {note}"))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
