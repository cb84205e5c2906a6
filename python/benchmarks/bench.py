#!/usr/bin/env python3
"""Forward bandwidth of the quack_mlir ops against torch eager and
torch.compile, measured against the copy ceiling of the same run.

    QUACK_MLIR_BUNDLE=DIR_OR_ROOT QUACK_MLIR_BUILD_DIR=BUILD \
        python3 bench.py [--ops rmsnorm softmax layernorm] [--out r.json]

Bytes counted (b = element size): rmsnorm 2*M*N*b + N*b + 4*M (x, y,
weight, rstd); softmax 2*M*N*b (x, y); layernorm 2*M*N*b + 2*N*b + 8*M (x, y,
weight, bias, mean, rstd). Each implementation's output is checked against
a float64 reference before it is timed. Timing: CUDA events around a batch
of calls queued behind a GPU sleep (so host launch cost is not measured),
rotating among enough fresh input sets to defeat the 60 MB L2; the median
of many batches is reported. Host time per call is measured apart, on one
row of 4096 bf16.
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir))
import quack_mlir  # noqa: E402

L2_BYTES = 60 * 1024 * 1024
DTYPE_NAMES = {"bf16": torch.bfloat16, "f16": torch.float16,
               "f32": torch.float32}


def gpu_sleep_cycles():
    # About 2 ms at Hopper clocks: long enough to queue a batch behind it.
    return 4_000_000


def time_batches(fn, sets, batch, reps, warmup):
    """Median seconds per call of fn(*set), over `reps` batches of `batch`
    calls each, rotating over `sets`."""
    for i in range(warmup):
        fn(*sets[i % len(sets)])
    torch.cuda.synchronize()
    times = []
    k = 0
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(gpu_sleep_cycles())
        start.record()
        for _ in range(batch):
            fn(*sets[k % len(sets)])
            k += 1
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / batch)
    return statistics.median(times)


def copy_ceiling(nbytes=2 << 30, reps=30):
    src = torch.empty(nbytes // 4, dtype=torch.float32, device="cuda")
    src.uniform_()
    dst = torch.empty_like(src)
    t = time_batches(lambda a, b: b.copy_(a), [(src, dst)], batch=5,
                     reps=reps, warmup=3)
    del src, dst
    return 2 * nbytes / t, t


TOL = {torch.bfloat16: 1e-2, torch.float16: 2e-3, torch.float32: 1e-5}
F = torch.nn.functional


def rel_err(out, ref):
    out = out.double()
    if not torch.isfinite(out).all():
        return math.inf
    return (torch.linalg.vector_norm(out - ref) /
            torch.linalg.vector_norm(ref)).item()


class Op:
    """One benchmarked operation: its inputs, byte count, reference and
    implementations (each a function of the inputs returning the output
    compared with the reference)."""

    name = None
    eps = None

    def inputs(self, m, n, dtype):
        raise NotImplementedError

    def nbytes(self, m, n, elem):
        raise NotImplementedError

    def reference(self, *args):
        raise NotImplementedError

    def impls(self):
        raise NotImplementedError


class RMSNorm(Op):
    name = "rmsnorm"
    title = "RMSNorm forward"
    eps = 1e-6

    def inputs(self, m, n, dtype):
        return (torch.randn(m, n, dtype=dtype, device="cuda"),
                torch.randn(n, dtype=dtype, device="cuda"))

    def nbytes(self, m, n, elem):
        return 2 * m * n * elem + n * elem + 4 * m

    def reference(self, x, w):
        xd = x.double()
        return (xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + self.eps)
                * w.double())

    def impls(self):
        eps = self.eps

        def manual(x, w):
            xf = x.float()
            r = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
            return (xf * r * w.float()).to(x.dtype)

        return {
            "quack_mlir": lambda x, w: quack_mlir.rmsnorm(
                x, w, eps=eps, return_rstd=True)[0],
            "torch_eager": lambda x, w: F.rms_norm(x, (x.shape[-1],), w, eps),
            "torch_compile": torch.compile(manual, dynamic=False),
        }


class Softmax(Op):
    name = "softmax"
    title = "Softmax forward"

    def inputs(self, m, n, dtype):
        return (torch.randn(m, n, dtype=dtype, device="cuda"),)

    def nbytes(self, m, n, elem):
        return 2 * m * n * elem

    def reference(self, x):
        return torch.softmax(x.double(), dim=-1)

    def impls(self):
        def manual(x):
            return torch.softmax(x, dim=-1)

        return {
            "quack_mlir": lambda x: quack_mlir.softmax(x),
            "torch_eager": lambda x: torch.softmax(x, dim=-1),
            "torch_compile": torch.compile(manual, dynamic=False),
        }


class LayerNorm(Op):
    name = "layernorm"
    title = "LayerNorm forward"
    eps = 1e-5

    def inputs(self, m, n, dtype):
        return (torch.randn(m, n, dtype=dtype, device="cuda"),
                torch.randn(n, dtype=dtype, device="cuda"),
                torch.randn(n, dtype=dtype, device="cuda"))

    def nbytes(self, m, n, elem):
        return 2 * m * n * elem + 2 * n * elem + 8 * m

    def reference(self, x, w, b):
        xd = x.double()
        d = xd - xd.mean(-1, keepdim=True)
        rstd = torch.rsqrt(d.pow(2).mean(-1, keepdim=True) + self.eps)
        return d * rstd * w.double() + b.double()

    def impls(self):
        eps = self.eps

        def manual(x, w, b):
            return F.layer_norm(x, (x.shape[-1],), w, b, eps)

        return {
            "quack_mlir": lambda x, w, b: quack_mlir.layer_norm(
                x, (x.shape[-1],), w, b, eps, return_stats=True)[0],
            "torch_eager": lambda x, w, b: F.layer_norm(
                x, (x.shape[-1],), w, b, eps),
            "torch_compile": torch.compile(manual, dynamic=False),
        }


OPS = {op.name: op for op in (RMSNorm(), Softmax(), LayerNorm())}


def host_overhead_us(op, fn, n=4096, dtype=torch.bfloat16, calls=2000):
    """Wall-clock microseconds per call on a one-row input: the host cost of
    a launch (the GPU keeps up)."""
    args = op.inputs(1, n, dtype)
    for _ in range(20):
        fn(*args)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def run_op(op, args, ceiling, impl_names):
    impls = op.impls()
    host = {}
    for name in impl_names:
        try:
            host[name] = host_overhead_us(op, impls[name])
        except Exception as e:
            host[name] = None
            print(f"host overhead of {op.name} {name}: "
                  f"{type(e).__name__}: {e}", file=sys.stderr)
    results = []
    m = args.m
    for dname in args.dtypes:
        dtype = DTYPE_NAMES[dname]
        elem = torch.tensor([], dtype=dtype).element_size()
        for n in args.n:
            nbytes = op.nbytes(m, n, elem)
            per_set = m * n * elem
            nsets = max(1, min(8, math.ceil(3 * L2_BYTES / per_set)))
            sets = [op.inputs(m, n, dtype) for _ in range(nsets)]
            ref = op.reference(*sets[0])
            for name in impl_names:
                fn = impls[name]
                row = {"op": op.name, "dtype": dname, "M": m, "N": n,
                       "impl": name, "bytes": nbytes, "input_sets": nsets}
                try:
                    err = rel_err(fn(*sets[0]), ref)
                    row["rel_err"] = err
                    if not err < TOL[dtype]:
                        row["error"] = (f"wrong result (relative error "
                                        f"{err:.3g})")
                    else:
                        t = time_batches(fn, sets, args.batch, args.reps,
                                         warmup=5)
                        row["time_us"] = t * 1e6
                        row["tbps"] = nbytes / t / 1e12
                        row["pct_copy"] = 100 * nbytes / t / ceiling
                except Exception as e:  # report and go on with the others
                    row["error"] = f"{type(e).__name__}: {e}"
                results.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
            del sets, ref
            torch.cuda.empty_cache()
    return results, host


def print_table(op, m, ceiling, results, host):
    print()
    print(f"{op.title}, M={m}; copy ceiling {ceiling / 1e12:.3f} TB/s")
    print()
    print("| dtype | N | impl | time (us) | TB/s | % of copy |")
    print("|---|---|---|---|---|---|")
    for r in results:
        if "error" in r:
            print(f"| {r['dtype']} | {r['N']} | {r['impl']} | - | - | "
                  f"{r['error'][:60]} |")
        else:
            print(f"| {r['dtype']} | {r['N']} | {r['impl']} | "
                  f"{r['time_us']:.1f} | {r['tbps']:.3f} | "
                  f"{r['pct_copy']:.1f} |")
    print()
    print(f"{op.title}: host time per call, one row of 4096 bf16 (us): " +
          ", ".join(f"{k} {v:.1f}" if v is not None else f"{k} -"
                    for k, v in host.items()))


def main(argv=None, default_ops=("rmsnorm", "softmax", "layernorm")):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", nargs="+", default=list(default_ops),
                    choices=sorted(OPS))
    ap.add_argument("--out", help="write results as JSON here")
    ap.add_argument("--m", type=int, default=32768)
    ap.add_argument("--n", type=int, nargs="+",
                    default=[1024, 4096, 8192, 16384])
    ap.add_argument("--dtypes", nargs="+", default=["bf16", "f32"],
                    choices=sorted(DTYPE_NAMES))
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--impls", nargs="+",
                    default=["quack_mlir", "torch_eager", "torch_compile"],
                    choices=["quack_mlir", "torch_eager", "torch_compile"])
    args = ap.parse_args(argv)

    props = torch.cuda.get_device_properties(0)
    ceiling, copy_t = copy_ceiling()
    print(f"device: {props.name}; torch {torch.__version__}; copy ceiling "
          f"{ceiling / 1e12:.3f} TB/s (2 GiB copy, {copy_t * 1e3:.3f} ms)")

    # One static-shape graph per (op, dtype, N): allow that many recompiles.
    for knob in ("cache_size_limit", "recompile_limit"):
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 64)
    all_results, all_host = [], {}
    for name in args.ops:
        op = OPS[name]
        results, host = run_op(op, args, ceiling, args.impls)
        all_results += results
        all_host[name] = host
        print_table(op, args.m, ceiling, results, host)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": props.name, "torch": torch.__version__,
                       "copy_ceiling_bytes_per_s": ceiling,
                       "bundle": os.environ.get("QUACK_MLIR_BUNDLE"),
                       "host_us_per_call": all_host,
                       "results": all_results}, f, indent=1)
        print(f"\nwrote {args.out}")
    return 1 if any("error" in r and r["impl"] == "quack_mlir"
                    for r in all_results) else 0


if __name__ == "__main__":
    sys.exit(main())
