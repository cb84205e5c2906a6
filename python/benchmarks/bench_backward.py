"""Benchmark of the normalisation backward passes (dx and the weight/bias
gradients summed over rows) against torch eager and torch.compile of the
same computation, with the device-to-device copy ceiling measured in the
same run.

Usage: python bench_backward.py [--m 32768] [--ns 1024,4096,...] [--json F]
Needs QUACK_MLIR_BUNDLE (holding rmsnorm_bwd, layernorm_bwd) and the
runtime library, as the package does.
"""

import argparse
import json
import statistics
import sys

import torch

import quack_mlir

EPS = 1e-5


def timed(fn, sets, reps=50, warmup=5):
    """Median milliseconds of fn(*set), rotating over input sets so that no
    launch reads what the previous one left in L2."""
    for i in range(warmup):
        fn(*sets[i % len(sets)])
    torch.cuda.synchronize()
    times = []
    for i in range(reps):
        a, b = torch.cuda.Event(True), torch.cuda.Event(True)
        a.record()
        fn(*sets[i % len(sets)])
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def copy_ceiling(nbytes=2 << 30):
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = timed(lambda: dst.copy_(src), [()], reps=30)
    return 2 * nbytes / ms / 1e9  # TB/s


def rms_torch(dy, x, w, rstd):
    r = rstd.unsqueeze(-1)
    xhat = x.float() * r
    g = dy.float() * w.float()
    dx = (g - xhat * (xhat * g).mean(-1, keepdim=True)) * r
    return dx.to(x.dtype), (dy.float() * xhat).sum(0).to(w.dtype)


def ln_torch(dy, x, w, mean, rstd):
    r = rstd.unsqueeze(-1)
    xhat = (x.float() - mean.unsqueeze(-1)) * r
    g = dy.float() * w.float()
    dx = (g - g.mean(-1, keepdim=True) -
          xhat * (xhat * g).mean(-1, keepdim=True)) * r
    return (dx.to(x.dtype), (dy.float() * xhat).sum(0).to(w.dtype),
            dy.float().sum(0).to(w.dtype))


def rel(a, b):
    return ((a.double() - b.double()).norm() /
            b.double().norm().clamp_min(1e-30)).item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--m", type=int, default=32768)
    p.add_argument("--ns", default="1024,2048,4096,8192,16384,32768,65536")
    p.add_argument("--dtypes", default="bf16,f32")
    p.add_argument("--json")
    args = p.parse_args()
    dts = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
    ceiling = copy_ceiling()
    print(f"copy ceiling: {ceiling:.3f} TB/s  ({torch.cuda.get_device_name()})")
    c_rms, c_ln = torch.compile(rms_torch), torch.compile(ln_torch)
    rows = []
    for dname in args.dtypes.split(","):
        dt = dts[dname]
        for n in map(int, args.ns.split(",")):
            m = args.m
            sets_rms, sets_ln = [], []
            for _ in range(3):
                x = torch.randn(m, n, device="cuda").to(dt)
                dy = torch.randn(m, n, device="cuda").to(dt)
                w = torch.randn(n, device="cuda").to(dt)
                xf = x.float()
                mean = xf.mean(-1)
                rstd_ln = torch.rsqrt(xf.var(-1, unbiased=False) + EPS)
                rstd = torch.rsqrt(xf.pow(2).mean(-1) + EPS)
                del xf
                sets_rms.append((dy, x, w, rstd))
                sets_ln.append((dy, x, w, mean, rstd_ln))
            nbytes = 3 * m * n * x.element_size()
            for op, sets, ours, eager, comp in (
                    ("rmsnorm_bwd", sets_rms, quack_mlir.rmsnorm_backward,
                     rms_torch, c_rms),
                    ("layernorm_bwd", sets_ln, quack_mlir.layer_norm_backward,
                     ln_torch, c_ln)):
                got = ours(*sets[0])
                ref = eager(*sets[0])
                errs = [rel(a, b) for a, b in zip(got, ref)]
                tol = 2e-2 if dt != torch.float32 else 1e-4
                if max(errs) > tol:
                    print(f"{op} {dname} N={n}: WRONG (errors {errs})")
                    sys.exit(1)
                row = {"op": op, "dtype": dname, "M": m, "N": n}
                for impl, fn in (("quack_mlir", ours), ("torch", eager),
                                 ("torch.compile", comp)):
                    ms = timed(fn, sets)
                    row[impl] = nbytes / ms / 1e9
                rows.append(row)
                print(f"{op:14s} {dname:4s} M={m} N={n:6d}  "
                      f"quack_mlir {row['quack_mlir']:.2f}  torch "
                      f"{row['torch']:.2f}  torch.compile "
                      f"{row['torch.compile']:.2f} TB/s  "
                      f"({row['quack_mlir'] / ceiling:.0%} of copy)",
                      flush=True)
            del sets_rms, sets_ln
            torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"copy_TBps": ceiling, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
