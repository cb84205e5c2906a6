#!/usr/bin/env python3
"""Host time per call of the quack_mlir ops on a GPU, against torch eager.

Each op runs on a few rows (M = 1 and 8 by default) of N = 4096 bf16, so
that the GPU finishes every launch long before the host issues the next and
the wall clock measures the host: Python, validation, allocation, autograd
and the launch itself. One measurement is a loop of --calls calls, the
device synchronised once before the loop and once after it (inside the timed
interval, so a GPU that fell behind would show); the table gives the median
of --reps such loops, after --warmup calls. Where the ops' C++ launch path
is in use (_quack_fast beside the runtime), each op is also timed on the
Python path alone, in the same run (column "Python path").

    QUACK_MLIR_BUNDLE=DIR QUACK_MLIR_RUNTIME_LIB=.../libquack_runtime.so \\
        python3 python/benchmarks/host_overhead.py [--m 1 8] [--ops ...]
    python3 python/benchmarks/host_overhead.py --bundle DIR --profile rmsnorm_fwd_bwd

DIR is a bundle root such as `scripts/build-catalogue.sh build/bin/quackc DIR
4096 bf16 --arch=sm_90a` writes (softmax_fwd/bwd, rmsnorm_fwd/bwd,
layernorm_fwd/bwd and cross_entropy_fwd/bwd for bf16 at N = 4096). Ops whose
kernels are missing are reported as such. `--profile OP` runs cProfile over
one loop of OP's quack_mlir call and prints the 25 entries of most own time.
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PY_DIR = os.path.join(HERE, os.pardir)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", help="bundle path (default: "
                    "$QUACK_MLIR_BUNDLE)")
    ap.add_argument("--runtime-lib", help="libquack_runtime.so (default: "
                    "$QUACK_MLIR_RUNTIME_LIB, then the package's search)")
    ap.add_argument("--pkg", default=PY_DIR,
                    help="directory holding the quack_mlir package to "
                    "measure (default: this checkout's python/)")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--m", type=int, nargs="+", default=[1, 8],
                    help="rows per call (small: the GPU must keep up)")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16", "f32"])
    ap.add_argument("--calls", type=int, default=2000,
                    help="calls per timed loop")
    ap.add_argument("--reps", type=int, default=7,
                    help="timed loops per (op, M, implementation)")
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--ops", nargs="+", help="ops to run (default: all; "
                    "see --list)")
    ap.add_argument("--no-torch", action="store_true",
                    help="skip torch's own eager equivalents")
    ap.add_argument("--list", action="store_true", help="list the ops")
    ap.add_argument("--profile", metavar="OP",
                    help="cProfile one loop of OP (quack_mlir) instead")
    ap.add_argument("--profile-impl", default="quack_mlir",
                    choices=["quack_mlir", "torch"])
    ap.add_argument("--json", help="also write the results here")
    return ap.parse_args(argv)


def build_ops(torch, qm, n, dtype):
    """name -> (description, make(m) -> (quack fn, torch fn or None)).

    make() allocates the inputs once; each fn is one call of the op."""
    F = torch.nn.functional
    dev = "cuda"
    eps = 1e-5

    grad = torch.autograd.grad

    def inputs(m, grad=False):
        x = torch.randn(m, n, device=dev, dtype=dtype, requires_grad=grad)
        w = (1 + 0.1 * torch.randn(n, device=dev, dtype=dtype)
             ).requires_grad_(grad)
        b = (0.1 * torch.randn(n, device=dev, dtype=dtype)
             ).requires_grad_(grad)
        dy = torch.randn(m, n, device=dev, dtype=dtype)
        return x, w, b, dy

    def softmax(m):
        x, _, _, _ = inputs(m)
        return (lambda: qm.softmax(x, -1)), (lambda: torch.softmax(x, -1))

    def rmsnorm(m):
        x, w, _, _ = inputs(m)
        ref = None
        if hasattr(F, "rms_norm"):
            def ref():
                return F.rms_norm(x, (n,), w, eps)
        return (lambda: qm.rmsnorm(x, w, eps)), ref

    def layer_norm(m):
        x, w, b, _ = inputs(m)
        return ((lambda: qm.layer_norm(x, (n,), w, b, eps)),
                (lambda: F.layer_norm(x, (n,), w, b, eps)))

    def cross_entropy(m):
        x, _, _, _ = inputs(m)
        t = torch.randint(0, n, (m,), device=dev)
        return ((lambda: qm.cross_entropy(x, t, reduction="none")),
                (lambda: F.cross_entropy(x, t, reduction="none")))

    def rmsnorm_bwd(m):
        # The backward alone, from the saved statistics (no autograd).
        x, w, _, dy = inputs(m)
        _, rstd = qm.rmsnorm(x, w, eps, return_rstd=True)
        return (lambda: qm.rmsnorm_backward(dy, x, w, rstd)), None

    def softmax_bwd(m):
        x, _, _, dy = inputs(m)
        y = qm.softmax(x)
        return ((lambda: qm.softmax_backward(dy, y)),
                (lambda: torch._softmax_backward_data(dy, y, -1, dtype)))

    def softmax_fwd_bwd(m):
        x, _, _, dy = inputs(m, grad=True)

        def q():
            return grad(qm.softmax(x), (x,), dy)

        def ref():
            return grad(torch.softmax(x, -1), (x,), dy)
        return q, ref

    def layer_norm_bwd(m):
        x, w, b, dy = inputs(m)
        _, mean, rstd = qm.layer_norm(x, (n,), w, b, eps, return_stats=True)
        return (lambda: qm.layer_norm_backward(dy, x, w, mean, rstd)), None

    def rmsnorm_fwd_bwd(m):
        # Forward with autograd, then the gradients of x and w.
        x, w, _, dy = inputs(m, grad=True)

        def q():
            return grad(qm.rmsnorm(x, w, eps), (x, w), dy)
        ref = None
        if hasattr(F, "rms_norm"):
            def ref():
                return grad(F.rms_norm(x, (n,), w, eps), (x, w), dy)
        return q, ref

    def layer_norm_fwd_bwd(m):
        x, w, b, dy = inputs(m, grad=True)

        def q():
            return grad(qm.layer_norm(x, (n,), w, b, eps), (x, w, b), dy)

        def ref():
            return grad(F.layer_norm(x, (n,), w, b, eps), (x, w, b), dy)
        return q, ref

    def cross_entropy_fwd_bwd(m):
        x, _, _, _ = inputs(m, grad=True)
        t = torch.randint(0, n, (m,), device=dev)
        dl = torch.randn(m, device=dev, dtype=torch.float32)

        def q():
            return grad(qm.cross_entropy(x, t, reduction="none"), (x,), dl)

        def ref():
            return grad(F.cross_entropy(x, t, reduction="none"), (x,),
                        dl.to(dtype))
        return q, ref

    def empty_like(m):
        # The floor every op pays: one output allocation.
        x, _, _, _ = inputs(m)
        return None, (lambda: torch.empty_like(x))

    return {
        "softmax_fwd": ("quack_mlir.softmax / torch.softmax", softmax),
        "rmsnorm_fwd": ("quack_mlir.rmsnorm / F.rms_norm", rmsnorm),
        "layer_norm_fwd": ("quack_mlir.layer_norm / F.layer_norm",
                           layer_norm),
        "cross_entropy_fwd": ("quack_mlir.cross_entropy / F.cross_entropy "
                              "(reduction='none', no grad)", cross_entropy),
        "rmsnorm_bwd": ("quack_mlir.rmsnorm_backward (direct, no autograd)",
                        rmsnorm_bwd),
        "layer_norm_bwd": ("quack_mlir.layer_norm_backward (direct)",
                           layer_norm_bwd),
        "softmax_bwd": ("quack_mlir.softmax_backward / "
                        "torch._softmax_backward_data", softmax_bwd),
        "softmax_fwd_bwd": ("forward with autograd + torch.autograd.grad "
                            "of x", softmax_fwd_bwd),
        "rmsnorm_fwd_bwd": ("forward with autograd + torch.autograd.grad "
                            "of x, w", rmsnorm_fwd_bwd),
        "layer_norm_fwd_bwd": ("forward with autograd + torch.autograd.grad "
                               "of x, w, b", layer_norm_fwd_bwd),
        "cross_entropy_fwd_bwd": ("forward with autograd + "
                                  "torch.autograd.grad of the logits",
                                  cross_entropy_fwd_bwd),
        "empty_like": ("torch.empty_like(x) alone (reference floor)",
                       empty_like),
    }


class python_path_only:
    """With `on`, the ops take their Python path (the C++ entry points are
    set aside) for the duration."""

    def __init__(self, fast, on):
        self.fast, self.on, self.saved = fast, on, {}

    def __enter__(self):
        if self.on:
            self.saved = {n: getattr(self.fast, n) for n in self.fast._NAMES}
            for n in self.saved:
                setattr(self.fast, n, None)

    def __exit__(self, *exc):
        for n, f in self.saved.items():
            setattr(self.fast, n, f)


def time_loop(torch, fn, calls, reps, warmup):
    """Median seconds per call over `reps` loops of `calls` calls."""
    for _ in range(warmup):
        fn()
    sync = torch.cuda.synchronize
    clock = time.perf_counter
    per_call = []
    for _ in range(reps):
        sync()
        t0 = clock()
        for _ in range(calls):
            fn()
        sync()
        per_call.append((clock() - t0) / calls)
    return statistics.median(per_call), min(per_call)


def profile(torch, fn, calls, warmup, top=25):
    import cProfile
    import pstats
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    prof.disable()
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)


def main(argv=None):
    args = parse_args(argv)
    if args.bundle:
        os.environ["QUACK_MLIR_BUNDLE"] = args.bundle
    if args.runtime_lib:
        os.environ["QUACK_MLIR_RUNTIME_LIB"] = args.runtime_lib
    if not os.environ.get("QUACK_MLIR_BUNDLE"):
        print("host_overhead.py: set QUACK_MLIR_BUNDLE or pass --bundle",
              file=sys.stderr)
        return 2
    sys.path.insert(0, os.path.abspath(args.pkg))
    import torch
    import quack_mlir as qm
    if not torch.cuda.is_available():
        print("host_overhead.py: no CUDA device", file=sys.stderr)
        return 2
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16,
             "f32": torch.float32}[args.dtype]
    ops = build_ops(torch, qm, args.n, dtype)
    if args.list:
        for name, (desc, _) in ops.items():
            print(f"{name:24s} {desc}")
        return 0
    not_found = (qm.KernelNotFoundError, qm.BundleError)

    if args.profile:
        if args.profile not in ops:
            print(f"unknown op {args.profile}; --list shows them",
                  file=sys.stderr)
            return 2
        fns = ops[args.profile][1](args.m[0])
        fn = fns[0] if args.profile_impl == "quack_mlir" else fns[1]
        if fn is None:
            print(f"{args.profile} has no {args.profile_impl} call",
                  file=sys.stderr)
            return 2
        print(f"cProfile of {args.profile} ({args.profile_impl}), "
              f"M={args.m[0]}, N={args.n} {args.dtype}, {args.calls} calls")
        profile(torch, fn, args.calls, args.warmup)
        return 0

    names = args.ops or list(ops)
    for name in names:
        if name not in ops:
            print(f"unknown op {name}; --list shows them", file=sys.stderr)
            return 2
    print(f"device: {torch.cuda.get_device_name()}  torch "
          f"{torch.__version__}  python {sys.version.split()[0]}")
    print(f"N={args.n} {args.dtype}; median of {args.reps} loops of "
          f"{args.calls} calls (us per call; min in parentheses)")
    print(f"quack_mlir from {os.path.dirname(qm.__file__)}")
    from quack_mlir import _fast
    fast = _fast.info()
    print("C++ launch path: " + (f"in use ({fast['path']})" if fast["active"]
                                 else f"not in use ({fast['reason']})"))
    rows = []
    for name in names:
        desc, make = ops[name]
        for m in args.m:
            row = {"op": name, "m": m}
            try:
                q, ref = make(m)
            except not_found as e:
                row["error"] = f"{type(e).__name__}: {str(e)[:160]}"
                rows.append(row)
                continue
            impls = [("quack_mlir", q), ("torch", ref)]
            if fast["active"]:
                # The same call on the Python path alone, in this run.
                impls.insert(1, ("python_path", q))
            for impl, fn in impls:
                if fn is None or (impl == "torch" and args.no_torch):
                    continue
                try:
                    with python_path_only(_fast, impl == "python_path"):
                        med, best = time_loop(torch, fn, args.calls,
                                              args.reps, args.warmup)
                except not_found as e:
                    row["error"] = f"{type(e).__name__}: {str(e)[:160]}"
                    break
                row[impl] = med * 1e6
                row[impl + "_min"] = best * 1e6
            rows.append(row)

    def cell(r, k):
        v = r.get(k)
        return (f"{v:7.2f} ({r[k + '_min']:6.2f})" if v is not None
                else f"{'-':>16s}")
    print()
    both = fast["active"]
    print(f"{'op':24s} {'M':>3s} {'quack_mlir':>16s} " +
          (f"{'Python path':>16s} " if both else "") +
          f"{'torch eager':>16s} {'ratio':>6s}")
    for r in rows:
        if "error" in r and "quack_mlir" not in r:
            print(f"{r['op']:24s} {r['m']:3d}  {r['error']}")
            continue
        ratio = (f"{r['quack_mlir'] / r['torch']:6.2f}"
                 if r.get("quack_mlir") and r.get("torch") else f"{'':6s}")
        print(f"{r['op']:24s} {r['m']:3d} {cell(r, 'quack_mlir')} " +
              (f"{cell(r, 'python_path')} " if both else "") +
              f"{cell(r, 'torch')} {ratio}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(),
                       "torch": torch.__version__, "n": args.n,
                       "dtype": args.dtype, "calls": args.calls,
                       "reps": args.reps, "fast_path": fast["active"],
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
