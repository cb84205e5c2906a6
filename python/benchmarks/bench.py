#!/usr/bin/env python3
"""Bandwidth of the quack_mlir kernels against torch eager, torch.compile,
Liger and QuACK, each as a share of the memory ceiling of its read/write mix
measured in the same run.

    QUACK_MLIR_BUNDLE=BUNDLE_ROOT QUACK_MLIR_RUNTIME_LIB=.../libquack_runtime.so \\
        python3 bench.py [--ops OP...] [--impls IMPL...] [--dtypes bf16 f32]
                         [--n N...] [--out-dir DIR] [--budget-seconds S]
    python3 bench.py --dry-run      # the plan only; imports nothing GPU-related

Ceilings, measured first (CUDA events, median of many batches):
  copy  1 read : 1 write    a 2 GiB device-to-device copy; 2 x 2 GiB moved
  read  read only           a full sum of a 2 GiB f32 tensor (torch.sum and a
                            Triton kernel, the faster counts); 2 GiB read
  2:1   2 reads : 1 write   torch.add of two 1 GiB tensors into a third; 3 GiB

Ops and the bytes counted: the minimum traffic, b = element size, M rows of
N elements, per-row statistics f32, targets int64.
  rmsnorm        2MNb + Nb + 4M      x read, y written; w; rstd       copy
  layernorm      2MNb + 2Nb + 8M     x, y; w, b; mean, rstd           copy
  softmax        2MNb                x, y                             copy
  softmax_bwd    3MNb                y, dy read, dx written           2:1
  ce_fwd         MNb + 16M           logits read; target 8M; loss,
                                     lse 4M each                      read
  ce_bwd         2MNb + 16M          logits read, dlogits written;
                                     target, lse, dloss               copy
  ce_fwd_bwd     2MNb + 12M          logits read, dlogits written;
                                     target, loss                     copy
  rmsnorm_bwd    3MNb + 2Nb + 4M     x, dy read, dx written; w, dw;
                                     rstd                             2:1
  layernorm_bwd  3MNb + 3Nb + 8M     x, dy, dx; w, dw, db; mean, rstd 2:1
The backward of cross-entropy reads the logits and writes their gradient,
a 1:1 mix, so it and the fused forward+backward are compared with the copy
ceiling; the norm and softmax backward passes read two M x N tensors and
write one (2:1).

What each implementation runs (the timed call; set-up such as a forward
pass that a backward needs is done before timing):
  quack_mlir     the quack_mlir ops; a backward through their autograd
                 where it exists, otherwise the catalogue kernel
                 (softmax_bwd, cross_entropy_fwd_bwd) through the generic
                 launcher; "n/a" where neither exists or the bundle has no
                 kernel for the shape.
  torch_eager    the torch ops; a backward is autograd of the eager forward
                 (torch's own backward kernels, from what autograd saved).
  torch_compile  torch.compile(dynamic=False) of the forward, or of the
                 backward formula given the saved statistics (rstd, mean,
                 softmax output, lse); one compiled function per (op, dtype),
                 recompiled per shape.
  liger          liger_kernel's Triton ops (autograd functions from
                 liger_kernel.ops.*; cross-entropy through its Triton kernel,
                 which writes the gradient over the logits when asked to).
  quack          QuACK (quack-kernels): quack.rmsnorm, quack.softmax and
                 quack.cross_entropy forward and backward functions.

Shapes: QuACK's sweep, M = 32768 for N = 256 ... 65536 by powers of 2, then
(16384, 131072) and (8192, 262144): M = min(32768, 2^31 / N) unless --m.
Every implementation is checked against a float64 reference (on rows spread
over the whole tensor, and on full column reductions) before it is timed; a
wrong one is reported and not timed. Timing: a batch of calls queued behind
a GPU sleep (so host launch cost is not measured), CUDA events around the
batch, the median of many batches; inputs rotate among enough fresh random
sets to pass 4x the 60 MB L2 when one set would fit, and each call's outputs
are kept until its set comes round again, so that they rotate through as
many blocks (not the one block the allocator would hand back each call,
whose writes could stay in the L2); about --target-seconds
of timing per (op, shape, implementation). Host time per call is measured
apart, on one row of 4096 bf16.

Order and budget: op by op (the wall time of each is printed), N ascending,
dtypes within each N. Before the first op, every implementation to be
measured is built (importing the baselines' modules) and torch.compile
compiles one trivial function (the seconds each took are printed and kept
as warm_up_s). torch.compile, Liger and QuACK
compile on the first call of each shape (counted in "first calls", not in
the timing). With
--budget-seconds no measurement starts after that many seconds from the
start, and each op gets at most an even share of what is left when it
starts, so that a short budget drops the largest N of every op rather than
whole ops; skipped measurements are listed as such.

Outputs: Markdown on stdout (and bench.md), JSON (--out, or bench.json in
--out-dir) and PNG plots in --out-dir.
"""

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir))

# Bound on import by load_gpu_modules(); the plan (--dry-run) needs none.
torch = None
F = None
quack_mlir = None
quack_mlir_error = None
DEVICE = "cuda"

L2_BYTES = 60 * 1024 * 1024
DTYPE_NAMES = ("bf16", "f16", "f32")
ELEM_SIZE = {"bf16": 2, "f16": 2, "f32": 4}
DEFAULT_NS = [1 << k for k in range(8, 19)]          # 256 ... 262144
DEFAULT_M = 32768
MAX_ELEMENTS = 1 << 31                                # M * N of the sweep
IMPLS = ("quack_mlir", "torch_compile", "torch_eager", "liger", "quack")
IMPL_TITLES = {"quack_mlir": "quack_mlir", "torch_compile": "torch.compile",
               "torch_eager": "torch eager", "liger": "Liger",
               "quack": "QuACK"}
CEILINGS = {"copy": "1 read : 1 write", "read": "read only",
            "r2w1": "2 reads : 1 write"}
CEILING_TITLES = {"copy": "copy", "read": "read-only", "r2w1": "2:1"}
TOL = {"bf16": 1e-2, "f16": 2e-3, "f32": 2e-5}
# Liger's row kernels hold a row in one Triton block of at most 64K elements.
LIGER_MAX_N = 65536
# A GPU sleep is spun in clock cycles; assuming the top clock makes a sleep
# last at least as long as asked.
SLEEP_CYCLES_PER_S = 2.0e9
# Rough costs for the plan's time estimate (seconds): per measurement beyond
# its timing (set-up, reference share, first call), and per first call of a
# new shape of each implementation (compilation).
EST_OVERHEAD_S = 0.08
EST_COMPILE_S = {"quack_mlir": 0.02, "torch_eager": 0.0,
                 "torch_compile": 1.5, "liger": 0.5, "quack": 1.2}
EST_STARTUP_S = 30.0


class NotAvailable(Exception):
    """The implementation has no such op or no kernel for this shape:
    reported as n/a with the reason (`short`: for the table cell)."""

    def __init__(self, reason, short=None):
        super().__init__(reason)
        self.short = short


class SetUpError(Exception):
    """An implementation that failed to set up (import, compile set-up):
    reported as an error."""

    def __init__(self, reason, short=None):
        super().__init__(reason)
        self.short = short


def remembered(e):
    """What to keep of an exception that will be raised again for every
    shape: its text, not the exception (its traceback would keep the frames
    of the first use, and their tensors, alive)."""
    if isinstance(e, NotAvailable):
        return ("n/a", str(e), e.short)
    return ("error", f"{type(e).__name__}: {e}", type(e).__name__)


def raise_remembered(kept):
    kind, reason, short = kept
    raise (NotAvailable if kind == "n/a" else SetUpError)(reason, short)


# ---------------------------------------------------------------------------
# Shapes and the plan


def shapes_for(args):
    out = []
    for n in args.n:
        m = args.m if args.m else max(1, min(DEFAULT_M, MAX_ELEMENTS // n))
        out.append((m, n))
    return out


def elem_size(dname):
    return ELEM_SIZE[dname]


def torch_dtype(dname):
    return {"bf16": torch.bfloat16, "f16": torch.float16,
            "f32": torch.float32}[dname]


def bundle_kernels():
    """{(kernel, T, N)} present in $QUACK_MLIR_BUNDLE (bundle directories or
    roots, os.pathsep-separated), read from the index files alone; None
    when unset or unreadable."""
    spec = os.environ.get("QUACK_MLIR_BUNDLE")
    if not spec:
        return None
    found = set()
    for entry in spec.split(os.pathsep):
        if not entry:
            continue
        idx = [os.path.join(entry, "index.json")]
        if os.path.isdir(entry):
            idx += [os.path.join(entry, d, "index.json")
                    for d in sorted(os.listdir(entry))]
        for path in idx:
            try:
                with open(path) as f:
                    data = json.load(f)
            except (OSError, ValueError):
                continue
            for k in data.get("kernels", []):
                b = k.get("bindings", {})
                found.add((k.get("kernel"), b.get("T"), b.get("N")))
    return found


def static_na(op, impl, dname, n, kernels):
    """The reason an implementation is known to be n/a without a GPU, or
    None."""
    if impl == "liger":
        if op.name == "ce_bwd":
            return "no backward from a saved lse"
        if op.liger_row_kernel and n > LIGER_MAX_N:
            return f"N > {LIGER_MAX_N}"
    if impl == "quack_mlir" and kernels is not None:
        if (op.qm_kernel, dname, n) not in kernels:
            return f"no {op.qm_kernel} kernel in the bundle"
    return None


def plan(args):
    """[(op, dtype, M, N, impl, known n/a reason or None)] in run order."""
    kernels = bundle_kernels()
    rows = []
    for name in args.ops:
        op = OPS[name]
        for m, n in shapes_for(args):
            for dname in args.dtypes:
                for impl in args.impls:
                    rows.append((op, dname, m, n, impl,
                                 static_na(op, impl, dname, n, kernels)))
    return rows, kernels


def estimate_seconds(args, rows):
    """A rough estimate of the run's GPU time, from the constants above."""
    timing = 0.0
    compile_s = 0.0
    for op, dname, m, n, impl, na in rows:
        if na:
            continue
        timing += args.target_seconds + EST_OVERHEAD_S
        compile_s += EST_COMPILE_S[impl]
    ceilings = 3.0
    host = (0.3 * len(args.ops) * len(args.impls) if args.host_calls else 0)
    return {"startup": EST_STARTUP_S, "ceilings": ceilings,
            "timing": timing, "compile": compile_s, "host": host,
            "total": EST_STARTUP_S + ceilings + timing + compile_s + host}


def print_plan(args):
    rows, kernels = plan(args)
    shapes = shapes_for(args)
    n_na = sum(1 for r in rows if r[5])
    print(f"plan: {len(args.ops)} ops x {len(args.dtypes)} dtypes x "
          f"{len(shapes)} shapes x {len(args.impls)} implementations = "
          f"{len(rows)} measurements")
    print(f"  ops: {' '.join(args.ops)}")
    print(f"  dtypes: {' '.join(args.dtypes)}")
    print("  shapes (M, N): " + " ".join(f"({m},{n})" for m, n in shapes))
    print(f"  implementations: {' '.join(args.impls)}")
    if kernels is None:
        print("  quack_mlir: $QUACK_MLIR_BUNDLE not set or unreadable; "
              "kernel availability is found at run time")
    else:
        print(f"  quack_mlir: {len(kernels)} (kernel, T, N) combinations "
              "in the bundle")
    print(f"  known n/a without a GPU: {n_na}; to be measured: "
          f"{len(rows) - n_na}")
    by_reason = {}
    for op, dname, m, n, impl, na in rows:
        if na:
            key = (impl, op.name, na)
            by_reason[key] = by_reason.get(key, 0) + 1
    for (impl, opname, na), count in sorted(by_reason.items()):
        print(f"    {impl} {opname}: {na} ({count})")
    est = estimate_seconds(args, rows)
    print(f"estimated GPU time: {est['total']:.0f} s (start-up "
          f"{est['startup']:.0f}, ceilings {est['ceilings']:.0f}, timing "
          f"{est['timing']:.0f} at {args.target_seconds:g} s + "
          f"{EST_OVERHEAD_S:g} s each, first calls and compilation "
          f"{est['compile']:.0f}, host overhead {est['host']:.0f})")
    if args.budget_seconds:
        print(f"budget: no measurement starts after {args.budget_seconds:g} "
              "s; each op gets at most its share of what is left")
    per_op = {}
    for op, dname, m, n, impl, na in rows:
        if not na:
            per_op[op.name] = per_op.get(op.name, 0.0) + (
                args.target_seconds + EST_OVERHEAD_S + EST_COMPILE_S[impl])
    for name in args.ops:
        print(f"  {name}: ~{per_op.get(name, 0.0):.0f} s")


# ---------------------------------------------------------------------------
# GPU side: imports, timing, ceilings


def load_gpu_modules():
    global torch, F, quack_mlir, quack_mlir_error
    import torch as t
    torch = t
    F = t.nn.functional
    try:
        import quack_mlir as q
    except Exception as e:  # reported per measurement, as an error
        quack_mlir_error = f"{type(e).__name__}: {e}"
        print(f"error: quack_mlir did not import: {quack_mlir_error}",
              file=sys.stderr)
        q = None
    quack_mlir = q


def gpu_sleep_cycles():
    # About 2 ms at Hopper clocks: long enough to queue a batch behind it.
    return 4_000_000


def time_batches(fn, sets, batch, reps, warmup, sleep_cycles=None):
    """Median seconds per call of fn(*set), over `reps` batches of `batch`
    calls each, rotating over `sets`; each batch is queued behind a GPU
    sleep of `sleep_cycles` (default gpu_sleep_cycles()).

    What a call returns (the outputs it allocated) is kept until the same
    set comes round again. Dropped at once, every call's outputs would take
    the block the caching allocator just got back, and a kernel would write
    the same addresses call after call: where they fit in the L2 beside
    the inputs, part of those writes would never reach device memory.
    Kept, the outputs rotate through as many blocks as there are sets,
    like the inputs. (One set is one too large for the L2: nothing is
    kept, which spares the memory of a second output.)"""
    if sleep_cycles is None:
        sleep_cycles = gpu_sleep_cycles()
    kept = [None] * len(sets)
    keep = len(sets) > 1

    def call(i):
        out = fn(*sets[i])
        if keep:
            kept[i] = out

    for i in range(warmup):
        call(i % len(sets))
    torch.cuda.synchronize()
    times = []
    k = 0
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(sleep_cycles)
        start.record()
        for _ in range(batch):
            call(k % len(sets))
            k += 1
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / batch)
    return statistics.median(times)


def adaptive_time(fn, states, target_s, batch=None, reps=None):
    """Times fn(state) rotating over `states`: a short probe gives the GPU
    time and the host time per call, from which the batch (at least ~0.3 ms
    of GPU work), the sleep (long enough to queue the batch) and the number
    of batches (about target_s in all) follow. Returns (seconds per call,
    batch, reps)."""
    sets = [(s,) for s in states]
    torch.cuda.synchronize()
    torch.cuda._sleep(int(2e-3 * SLEEP_CYCLES_PER_S))
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    probe = 3
    start.record()
    h0 = time.perf_counter()
    for i in range(probe):
        fn(states[(i + 1) % len(states)])
    host = (time.perf_counter() - h0) / probe
    end.record()
    end.synchronize()
    gpu = max(start.elapsed_time(end) / 1e3 / probe, 1e-7)
    if batch is None:
        batch = max(1, min(64, math.ceil(3e-4 / gpu)))
        batch = max(1, min(batch, int(15e-3 / max(host, 1e-6))))
    sleep_s = min(20e-3, max(3e-4, 1.5 * batch * host + 2e-4))
    if reps is None:
        reps = max(5, min(200, int(target_s / (sleep_s + batch * gpu))))
    t = time_batches(fn, sets, batch, reps, warmup=0,
                     sleep_cycles=int(sleep_s * SLEEP_CYCLES_PER_S))
    return t, batch, reps


def copy_ceiling(nbytes=2 << 30, reps=30):
    src = torch.empty(nbytes // 4, dtype=torch.float32, device=DEVICE)
    src.uniform_()
    dst = torch.empty_like(src)
    t = time_batches(lambda a, b: b.copy_(a), [(src, dst)], batch=5,
                     reps=reps, warmup=3)
    del src, dst
    return 2 * nbytes / t, t


def read_ceiling(nbytes=2 << 30, reps=30):
    """Bytes per second of a full sum: torch.sum and, with Triton, a
    partial-sums kernel; returns (best, {method: (bytes/s, seconds)})."""
    x = torch.empty(nbytes // 4, dtype=torch.float32, device=DEVICE)
    x.uniform_()
    found = {}
    t = time_batches(lambda a: torch.sum(a), [(x,)], batch=5, reps=reps,
                     warmup=3)
    found["torch.sum"] = (nbytes / t, t)
    try:
        sys.path.insert(0, HERE)
        import _bench_kernels as bk
        out = torch.empty(bk.partial_sums_grid(x.numel()),
                          dtype=torch.float32, device=DEVICE)
        bk.partial_sums(x, out)
        if abs(out.double().sum().item() - x.double().sum().item()) > (
                1e-3 * x.numel()):
            raise RuntimeError("the partial sums do not add up")
        t = time_batches(lambda a, o: bk.partial_sums(a, o), [(x, out)],
                         batch=5, reps=reps, warmup=3)
        found["triton"] = (nbytes / t, t)
    except Exception as e:
        print(f"note: read ceiling without the Triton kernel: "
              f"{type(e).__name__}: {e}", file=sys.stderr)
    del x
    best = max(v[0] for v in found.values())
    return best, found


def r2w1_ceiling(nbytes=1 << 30, reps=30):
    a = torch.empty(nbytes // 4, dtype=torch.float32, device=DEVICE)
    b = torch.empty_like(a)
    c = torch.empty_like(a)
    a.uniform_()
    b.uniform_()
    t = time_batches(lambda p, q, r: torch.add(p, q, out=r), [(a, b, c)],
                     batch=5, reps=reps, warmup=3)
    del a, b, c
    return 3 * nbytes / t, t


def measure_ceilings():
    copy_bps, copy_t = copy_ceiling()
    read_bps, read_found = read_ceiling()
    r2w1_bps, r2w1_t = r2w1_ceiling()
    torch.cuda.empty_cache()
    return {
        "copy": {"bytes_per_s": copy_bps, "seconds": copy_t,
                 "bytes": 2 * (2 << 30), "how": "2 GiB device-to-device "
                 "copy (read + write)"},
        "read": {"bytes_per_s": read_bps,
                 "seconds": min(v[1] for v in read_found.values()),
                 "bytes": 2 << 30,
                 "how": "sum of a 2 GiB f32 tensor (" + ", ".join(
                     f"{k} {v[0] / 1e12:.3f} TB/s"
                     for k, v in read_found.items()) + "; the faster)",
                 "methods": {k: v[0] for k, v in read_found.items()}},
        "r2w1": {"bytes_per_s": r2w1_bps, "seconds": r2w1_t,
                 "bytes": 3 * (1 << 30), "how": "torch.add of two 1 GiB "
                 "f32 tensors into a third"},
    }


# ---------------------------------------------------------------------------
# Correctness


def rel_err(out, ref):
    out = out.double()
    if not torch.isfinite(out).all():
        return math.inf
    den = torch.linalg.vector_norm(ref).item()
    num = torch.linalg.vector_norm(out - ref).item()
    return num / den if den > 0 else num


def sample_rows(m, n, device):
    """Row indices spread over all M rows, about 4M elements in all."""
    k = max(1, min(m, max(8, (1 << 22) // n)))
    idx = torch.linspace(0, m - 1, k, device=device).round().long()
    return torch.unique(idx)


def chunks(m, n):
    step = max(1, (1 << 25) // n)
    for i in range(0, m, step):
        yield slice(i, min(m, i + step))


def as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def grads(y, wrt, g):
    return torch.autograd.grad(y, wrt, g, retain_graph=True)


def stream_handle():
    return torch.cuda.current_stream().cuda_stream


def qm_type(dtype):
    return {torch.bfloat16: "bf16", torch.float16: "f16",
            torch.float32: "f32"}[dtype]


def need_quack_mlir():
    if quack_mlir is None:
        raise ImportError(f"quack_mlir did not import: {quack_mlir_error}")
    return quack_mlir


def liger_row_check(n):
    if n > LIGER_MAX_N:
        raise NotAvailable(f"N > {LIGER_MAX_N}: Liger's row kernels hold "
                           "a row in one Triton block", f"N > {LIGER_MAX_N}")


class Impl:
    """One implementation of an op: prepare(inputs) -> state, before timing
    (a forward pass a backward needs, copies of inputs it overwrites);
    run(state) -> outputs, the timed call."""

    def __init__(self, run, prepare=None, note=None):
        self.run = run
        self.prepare = prepare or (lambda inp: inp)
        self.note = note


_modules = {}


def load_liger(name):
    """A liger_kernel.ops submodule (the Triton implementations)."""
    key = "liger:" + name
    if key not in _modules:
        try:
            import importlib
            _modules[key] = importlib.import_module("liger_kernel.ops." + name)
        except Exception as e:
            _modules[key] = ("n/a", f"liger_kernel not importable: "
                             f"{type(e).__name__}: {e}", "not importable")
    mod = _modules[key]
    if isinstance(mod, tuple):
        raise_remembered(mod)
    return mod


def add_pth_dirs():
    """Processes the .pth files of $PYTHONPATH entries (a --target install
    puts some packages' path set-up in .pth files, which Python reads only
    in site directories)."""
    import site
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry and os.path.isdir(entry) and any(
                f.endswith(".pth") for f in os.listdir(entry)):
            site.addsitedir(entry)


def load_quack(name):
    """A submodule of QuACK's `quack` package."""
    key = "quack:" + name
    if key not in _modules:
        try:
            add_pth_dirs()
            import importlib
            _modules[key] = importlib.import_module("quack." + name)
        except Exception as e:
            _modules[key] = ("n/a", f"quack (quack-kernels) not importable: "
                             f"{type(e).__name__}: {e}", "not importable")
    mod = _modules[key]
    if isinstance(mod, tuple):
        raise_remembered(mod)
    return mod


def compiled(fn):
    return torch.compile(fn, dynamic=False)


def _compile_once():
    """One torch.compile of a trivial function: Inductor's start-up."""
    x = torch.ones(8, device=DEVICE)
    compiled(lambda t: t * 2 + 1)(x)
    torch.cuda.synchronize()


# torch.compile bodies (module level: the same code object for every
# dtype, so one entry per shape).
RMS_EPS = 1e-6
LN_EPS = 1e-5


def tc_rmsnorm(x, w):
    xf = x.float()
    r = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + RMS_EPS)
    return (xf * r * w.float()).to(x.dtype)


def tc_layernorm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, LN_EPS)


def tc_softmax(x):
    return torch.softmax(x, dim=-1)


def tc_argmax(x):
    return torch.argmax(x, dim=-1)


def tc_softmax_bwd(dy, y):
    yf, dyf = y.float(), dy.float()
    return (yf * (dyf - (dyf * yf).sum(-1, keepdim=True))).to(y.dtype)


def tc_ce_fwd(x, t):
    return F.cross_entropy(x, t, reduction="none")


def _onehot(x, t):
    cols = torch.arange(x.shape[1], device=x.device)
    return (cols[None, :] == t[:, None]).float()


def tc_ce_bwd(x, t, lse, dloss):
    p = torch.exp(x.float() - lse[:, None])
    return ((p - _onehot(x, t)) * dloss[:, None]).to(x.dtype)


def tc_ce_fwd_bwd(x, t):
    xf = x.float()
    lse = torch.logsumexp(xf, -1)
    loss = lse - xf.gather(1, t[:, None])[:, 0]
    dx = (torch.exp(xf - lse[:, None]) - _onehot(x, t)).to(x.dtype)
    return loss, dx


def tc_rmsnorm_bwd(x, w, dy, rstd):
    xf, dyf = x.float(), dy.float()
    r = rstd[:, None]
    xhat = xf * r
    wdy = dyf * w.float()
    c1 = (xhat * wdy).mean(-1, keepdim=True)
    dx = ((wdy - xhat * c1) * r).to(x.dtype)
    dw = (dyf * xhat).sum(0).to(w.dtype)
    return dx, dw


def tc_layernorm_bwd(x, w, dy, mean, rstd):
    xf, dyf = x.float(), dy.float()
    r = rstd[:, None]
    xhat = (xf - mean[:, None]) * r
    wdy = dyf * w.float()
    c1 = (xhat * wdy).mean(-1, keepdim=True)
    c2 = wdy.mean(-1, keepdim=True)
    dx = ((wdy - xhat * c1 - c2) * r).to(x.dtype)
    dw = (dyf * xhat).sum(0).to(w.dtype)
    db = dyf.sum(0).to(w.dtype)
    return dx, dw, db


def requiring_grad(*ts):
    return [t.detach().requires_grad_() for t in ts]


# ---------------------------------------------------------------------------
# Ops


class Op:
    """One benchmarked operation: its inputs (a dict of tensors), the bytes
    it must move, a float64 reference, and its implementations (factories
    of Impl for a dtype)."""

    name = None
    title = None
    mix = "copy"             # the ceiling it is compared with
    kind = "fwd"             # plot group
    bytes_formula = None
    qm_kernel = None         # the catalogue kernel quack_mlir needs
    liger_row_kernel = True  # Liger holds a row in one block
    tol_factor = 1.0

    def inputs(self, m, n, dtype):
        raise NotImplementedError

    def nbytes(self, m, n, b):
        raise NotImplementedError

    def reference(self, inp, idx):
        """[(float64 tensor, by_rows)]: by_rows outputs are compared on
        rows `idx`, the others whole."""
        raise NotImplementedError

    def factories(self):
        raise NotImplementedError

    def compare(self, out, ref, idx):
        out = as_tuple(out)
        if len(out) < len(ref):
            return math.inf
        err = 0.0
        for (r, by_rows), o in zip(ref, out):
            if o is None:
                return math.inf
            err = max(err, rel_err(o[idx] if by_rows else o, r))
        return err


def _randn(m, n, dtype):
    return torch.randn(m, n, dtype=dtype, device=DEVICE)


class RMSNorm(Op):
    name = "rmsnorm"
    title = "RMSNorm forward"
    bytes_formula = "2MNb + Nb + 4M (x, y; w; rstd)"
    qm_kernel = "rmsnorm_fwd"
    eps = RMS_EPS

    def inputs(self, m, n, dtype):
        return {"x": _randn(m, n, dtype),
                "w": torch.randn(n, dtype=dtype, device=DEVICE)}

    def nbytes(self, m, n, b):
        return 2 * m * n * b + n * b + 4 * m

    def reference(self, inp, idx):
        xd = inp["x"][idx].double()
        y = (xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + self.eps)
             * inp["w"].double())
        return [(y, True)]

    def factories(self):
        eps = self.eps

        def qm(dtype):
            q = need_quack_mlir()
            return Impl(lambda s: q.rmsnorm(s["x"], s["w"], eps=eps,
                                            return_rstd=True)[0])

        def eager(dtype):
            return Impl(lambda s: F.rms_norm(s["x"], (s["x"].shape[-1],),
                                             s["w"], eps))

        def comp(dtype):
            fn = compiled(tc_rmsnorm)
            return Impl(lambda s: fn(s["x"], s["w"]))

        def liger(dtype):
            Fn = load_liger("rms_norm").LigerRMSNormFunction

            def prepare(inp):
                liger_row_check(inp["x"].shape[1])
                return inp
            return Impl(lambda s: Fn.apply(s["x"], s["w"], eps), prepare)

        def quack(dtype):
            qr = load_quack("rmsnorm")
            return Impl(lambda s: qr.rmsnorm_fwd(s["x"], s["w"], eps=eps,
                                                 store_rstd=True)[0])

        return {"quack_mlir": qm, "torch_eager": eager,
                "torch_compile": comp, "liger": liger, "quack": quack}


class LayerNorm(Op):
    name = "layernorm"
    title = "LayerNorm forward"
    bytes_formula = "2MNb + 2Nb + 8M (x, y; w, b; mean, rstd)"
    qm_kernel = "layernorm_fwd"
    eps = LN_EPS

    def inputs(self, m, n, dtype):
        return {"x": _randn(m, n, dtype),
                "w": torch.randn(n, dtype=dtype, device=DEVICE),
                "b": torch.randn(n, dtype=dtype, device=DEVICE)}

    def nbytes(self, m, n, b):
        return 2 * m * n * b + 2 * n * b + 8 * m

    def reference(self, inp, idx):
        xd = inp["x"][idx].double()
        d = xd - xd.mean(-1, keepdim=True)
        rstd = torch.rsqrt(d.pow(2).mean(-1, keepdim=True) + self.eps)
        return [(d * rstd * inp["w"].double() + inp["b"].double(), True)]

    def factories(self):
        eps = self.eps

        def qm(dtype):
            q = need_quack_mlir()
            return Impl(lambda s: q.layer_norm(
                s["x"], (s["x"].shape[-1],), s["w"], s["b"], eps,
                return_stats=True)[0])

        def eager(dtype):
            return Impl(lambda s: F.layer_norm(
                s["x"], (s["x"].shape[-1],), s["w"], s["b"], eps))

        def comp(dtype):
            fn = compiled(tc_layernorm)
            return Impl(lambda s: fn(s["x"], s["w"], s["b"]))

        def liger(dtype):
            Fn = load_liger("layer_norm").LigerLayerNormFunction

            def prepare(inp):
                liger_row_check(inp["x"].shape[1])
                return inp
            return Impl(lambda s: Fn.apply(s["x"], s["w"], s["b"], eps),
                        prepare)

        def quack(dtype):
            qr = load_quack("rmsnorm")

            def prepare(inp):
                # QuACK's LayerNorm takes f32 weight and bias.
                return {"x": inp["x"], "w": inp["w"].float(),
                        "b": inp["b"].float()}
            return Impl(lambda s: qr.layernorm_fwd(
                s["x"], s["w"], s["b"], eps=eps, return_rstd=True,
                return_mean=True)[0], prepare,
                note="f32 weight and bias (QuACK's LayerNorm takes no "
                     "other)")

        return {"quack_mlir": qm, "torch_eager": eager,
                "torch_compile": comp, "liger": liger, "quack": quack}


class Softmax(Op):
    name = "softmax"
    title = "Softmax forward"
    bytes_formula = "2MNb (x, y)"
    qm_kernel = "softmax_fwd"

    def inputs(self, m, n, dtype):
        return {"x": _randn(m, n, dtype)}

    def nbytes(self, m, n, b):
        return 2 * m * n * b

    def reference(self, inp, idx):
        return [(torch.softmax(inp["x"][idx].double(), dim=-1), True)]

    def factories(self):
        def qm(dtype):
            q = need_quack_mlir()
            return Impl(lambda s: q.softmax(s["x"]))

        def eager(dtype):
            return Impl(lambda s: torch.softmax(s["x"], dim=-1))

        def comp(dtype):
            fn = compiled(tc_softmax)
            return Impl(lambda s: fn(s["x"]))

        def liger(dtype):
            Fn = load_liger("softmax").LigerSoftmaxFunction

            def prepare(inp):
                liger_row_check(inp["x"].shape[1])
                return inp
            return Impl(lambda s: Fn.apply(s["x"]), prepare)

        def quack(dtype):
            qs = load_quack("softmax")
            return Impl(lambda s: qs.softmax_fwd(s["x"]))

        return {"quack_mlir": qm, "torch_eager": eager,
                "torch_compile": comp, "liger": liger, "quack": quack}


class ArgMax(Op):
    name = "argmax"
    title = "Row argmax"
    mix = "read"
    bytes_formula = "MNb + 8M (x read; int64 index written)"
    qm_kernel = "argmax"

    def inputs(self, m, n, dtype):
        return {"x": _randn(m, n, dtype)}

    def nbytes(self, m, n, b):
        return m * n * b + 8 * m

    def reference(self, inp, idx):
        # The first column of the maximum (randn has no NaN): exact, so any
        # index that differs shows as an error.
        x = inp["x"][idx]
        hit = x == x.max(-1, keepdim=True).values
        cols = torch.arange(x.shape[1], device=x.device)
        first = torch.where(hit, cols, x.shape[1]).min(-1).values
        return [(first.double(), True)]

    def factories(self):
        def qm(dtype):
            q = need_quack_mlir()
            return Impl(lambda s: q.argmax(s["x"]))

        def eager(dtype):
            return Impl(lambda s: torch.argmax(s["x"], dim=-1))

        def comp(dtype):
            fn = compiled(tc_argmax)
            return Impl(lambda s: fn(s["x"]))

        def none(dtype):
            raise NotAvailable("no argmax kernel in this package", "no op")

        return {"quack_mlir": qm, "torch_eager": eager,
                "torch_compile": comp, "liger": none, "quack": none}


class SoftmaxBwd(Op):
    name = "softmax_bwd"
    title = "Softmax backward"
    mix = "r2w1"
    kind = "bwd"
    bytes_formula = "3MNb (y, dy read; dx written)"
    qm_kernel = "softmax_bwd"
    tol_factor = 4.0

    def inputs(self, m, n, dtype):
        return {"x": _randn(m, n, dtype), "dy": _randn(m, n, dtype)}

    def nbytes(self, m, n, b):
        return 3 * m * n * b

    def reference(self, inp, idx):
        y = torch.softmax(inp["x"][idx].double(), dim=-1)
        dy = inp["dy"][idx].double()
        return [(y * (dy - (dy * y).sum(-1, keepdim=True)), True)]

    def factories(self):
        def qm(dtype):
            q = need_quack_mlir()
            t = qm_type(dtype)
            launcher = None

            def prepare(inp):
                nonlocal launcher
                (xr,) = requiring_grad(inp["x"])
                y = q.softmax(xr)
                if y.grad_fn is not None:
                    impl.note = "autograd of quack_mlir.softmax"
                    return {"y": y, "wrt": xr, "dy": inp["dy"]}
                if launcher is None:
                    from quack_mlir._launch import Launcher
                    launcher = Launcher("softmax_bwd", ("T", "N"))
                impl.note = ("the softmax_bwd catalogue kernel through the "
                             "generic launcher (quack_mlir.softmax has no "
                             "autograd)")
                return {"y": y.detach(), "dy": inp["dy"]}

            def run(s):
                if "wrt" in s:
                    return grads(s["y"], s["wrt"], s["dy"])[0]
                y, dy = s["y"], s["dy"]
                m, n = y.shape
                dx = torch.empty_like(y)
                st = n if m > 1 else 0
                launcher.launch((t, n), m, (dy.data_ptr(), st, y.data_ptr(),
                                            st, dx.data_ptr(), st),
                                stream_handle())
                return dx
            impl = Impl(run, prepare)
            return impl

        def eager(dtype):
            def prepare(inp):
                (xr,) = requiring_grad(inp["x"])
                return {"y": torch.softmax(xr, dim=-1), "wrt": xr,
                        "dy": inp["dy"]}
            return Impl(lambda s: grads(s["y"], s["wrt"], s["dy"])[0],
                        prepare)

        def comp(dtype):
            fn = compiled(tc_softmax_bwd)

            def prepare(inp):
                return {"y": torch.softmax(inp["x"], dim=-1),
                        "dy": inp["dy"]}
            return Impl(lambda s: fn(s["dy"], s["y"]), prepare)

        def liger(dtype):
            Fn = load_liger("softmax").LigerSoftmaxFunction

            def prepare(inp):
                liger_row_check(inp["x"].shape[1])
                (xr,) = requiring_grad(inp["x"])
                return {"y": Fn.apply(xr), "wrt": xr, "dy": inp["dy"]}
            return Impl(lambda s: grads(s["y"], s["wrt"], s["dy"])[0],
                        prepare)

        def quack(dtype):
            qs = load_quack("softmax")

            def prepare(inp):
                return {"y": qs.softmax_fwd(inp["x"]), "dy": inp["dy"]}
            return Impl(lambda s: qs.softmax_bwd(s["dy"], s["y"]), prepare)

        return {"quack_mlir": qm, "torch_eager": eager,
                "torch_compile": comp, "liger": liger, "quack": quack}


class CrossEntropyBase(Op):
    liger_row_kernel = False
    ignore_index = -100

    def inputs(self, m, n, dtype):
        x = _randn(m, n, dtype).mul_(2)
        t = torch.randint(0, n, (m,), device=DEVICE)
        # Upstream gradient per row, exactly representable in x's dtype (an
        # implementation may take it in that dtype).
        dloss = torch.rand(m, device=DEVICE).to(dtype).float()
        return {"x": x, "t": t, "dloss": dloss}

    @staticmethod
    def ref_parts(inp, idx):
        xd = inp["x"][idx].double()
        t = inp["t"][idx]
        lse = torch.logsumexp(xd, -1)
        loss = lse - xd.gather(1, t[:, None])[:, 0]
        p = torch.exp(xd - lse[:, None])
        hot = torch.nn.functional.one_hot(t, xd.shape[1]).double()
        return loss, p - hot


class CrossEntropyFwd(CrossEntropyBase):
    name = "ce_fwd"
    title = "Cross-entropy forward"
    mix = "read"
    bytes_formula = ("MNb + 16M (logits read; target 8M read; loss, lse "
                     "4M each written)")
    qm_kernel = "cross_entropy_fwd"

    def nbytes(self, m, n, b):
        return m * n * b + 16 * m

    def reference(self, inp, idx):
        loss, _ = self.ref_parts(inp, idx)
        return [(loss, True)]

    def factories(self):
        ii = self.ignore_index

        def qm(dtype):
            q = need_quack_mlir()
            return Impl(lambda s: q.cross_entropy(s["x"], s["t"],
                                                  reduction="none",
                                                  ignore_index=ii))

        def eager(dtype):
            return Impl(lambda s: F.cross_entropy(s["x"], s["t"],
                                                  reduction="none"))

        def comp(dtype):
            fn = compiled(tc_ce_fwd)
            return Impl(lambda s: fn(s["x"], s["t"]))

        def liger(dtype):
            return liger_ce_impl(grad=False)

        def quack(dtype):
            qce = load_quack("cross_entropy")
            return Impl(lambda s: qce.cross_entropy_fwd(
                s["x"], s["t"], ignore_index=ii, return_lse=True)[0])

        return {"quack_mlir": qm, "torch_eager": eager,
                "torch_compile": comp, "liger": liger, "quack": quack}


class CrossEntropyBwd(CrossEntropyBase):
    name = "ce_bwd"
    title = "Cross-entropy backward (from the saved lse)"
    mix = "copy"
    kind = "bwd"
    bytes_formula = ("2MNb + 16M (logits read, dlogits written; target, "
                     "lse, dloss read)")
    qm_kernel = "cross_entropy_bwd"
    tol_factor = 4.0

    def nbytes(self, m, n, b):
        return 2 * m * n * b + 16 * m

    def reference(self, inp, idx):
        _, g = self.ref_parts(inp, idx)
        return [(g * inp["dloss"][idx].double()[:, None], True)]

    def factories(self):
        ii = self.ignore_index

        def qm(dtype):
            q = need_quack_mlir()

            def prepare(inp):
                (xr,) = requiring_grad(inp["x"])
                loss = q.cross_entropy(xr, inp["t"], reduction="none",
                                       ignore_index=ii)
                if loss.grad_fn is None:
                    raise NotAvailable("quack_mlir.cross_entropy has no "
                                       "autograd", "no backward")
                return {"y": loss, "wrt": xr, "dy": inp["dloss"]}
            return Impl(lambda s: grads(s["y"], s["wrt"], s["dy"])[0],
                        prepare)

        def eager(dtype):
            def prepare(inp):
                (xr,) = requiring_grad(inp["x"])
                loss = F.cross_entropy(xr, inp["t"], reduction="none")
                return {"y": loss, "wrt": xr,
                        "dy": inp["dloss"].to(loss.dtype)}
            return Impl(lambda s: grads(s["y"], s["wrt"], s["dy"])[0],
                        prepare, note="autograd of F.cross_entropy, which "
                        "saves log-softmax rather than lse")

        def comp(dtype):
            fn = compiled(tc_ce_bwd)

            def prepare(inp):
                return {"x": inp["x"], "t": inp["t"], "dloss": inp["dloss"],
                        "lse": torch.logsumexp(inp["x"].float(), -1)}
            return Impl(lambda s: fn(s["x"], s["t"], s["lse"], s["dloss"]),
                        prepare)

        def liger(dtype):
            raise NotAvailable("no backward from a saved lse: Liger "
                               "writes dlogits in its forward kernel "
                               "(see ce_fwd_bwd)", "fused into its forward")

        def quack(dtype):
            qce = load_quack("cross_entropy")

            def prepare(inp):
                _, lse = qce.cross_entropy_fwd(inp["x"], inp["t"],
                                               ignore_index=ii,
                                               return_lse=True)
                return {"x": inp["x"], "t": inp["t"], "dloss": inp["dloss"],
                        "lse": lse}
            return Impl(lambda s: qce.cross_entropy_bwd(
                s["x"], s["t"], s["dloss"], s["lse"], ignore_index=ii),
                prepare)

        return {"quack_mlir": qm, "torch_eager": eager,
                "torch_compile": comp, "liger": liger, "quack": quack}


class CrossEntropyFwdBwd(CrossEntropyBase):
    name = "ce_fwd_bwd"
    title = "Cross-entropy forward + backward, fused (1 read : 1 write)"
    mix = "copy"
    kind = "bwd"
    bytes_formula = ("2MNb + 12M (logits read, dlogits written; target "
                     "read, loss written)")
    qm_kernel = "cross_entropy_fwd_bwd"
    tol_factor = 4.0

    def nbytes(self, m, n, b):
        return 2 * m * n * b + 12 * m

    def reference(self, inp, idx):
        # The gradient of the summed loss (an upstream gradient of 1).
        loss, g = self.ref_parts(inp, idx)
        return [(loss, True), (g, True)]

    def factories(self):
        ii = self.ignore_index

        def qm(dtype):
            need_quack_mlir()
            from quack_mlir._launch import Launcher, float_bits
            launcher = Launcher("cross_entropy_fwd_bwd", ("T", "N", "IGNORE"))
            t = qm_type(dtype)
            one = float_bits(1.0)

            def run(s):
                x, tg = s["x"], s["t"]
                m, n = x.shape
                loss = torch.empty(m, dtype=torch.float32, device=x.device)
                dx = torch.empty_like(x)
                st = n if m > 1 else 0
                launcher.launch((t, n, "true"), m, (
                    x.data_ptr(), st, tg.data_ptr(), one, ii,
                    loss.data_ptr(), dx.data_ptr(), st), stream_handle())
                return loss, dx
            return Impl(run, note="the cross_entropy_fwd_bwd catalogue "
                        "kernel through the generic launcher (grad_scale 1)")

        def eager(dtype):
            def prepare(inp):
                return {"x": inp["x"], "t": inp["t"],
                        "ones": torch.ones(inp["x"].shape[0],
                                           dtype=inp["x"].dtype,
                                           device=DEVICE)}

            def run(s):
                (xr,) = requiring_grad(s["x"])
                loss = F.cross_entropy(xr, s["t"], reduction="none")
                return loss, torch.autograd.grad(loss, xr, s["ones"])[0]
            return Impl(run, prepare)

        def comp(dtype):
            fn = compiled(tc_ce_fwd_bwd)
            return Impl(lambda s: fn(s["x"], s["t"]))

        def liger(dtype):
            return liger_ce_impl(grad=True)

        def quack(dtype):
            qce = load_quack("cross_entropy")
            return Impl(lambda s: qce.cross_entropy_fwd(
                s["x"], s["t"], ignore_index=ii, return_dx=True))

        return {"quack_mlir": qm, "torch_eager": eager,
                "torch_compile": comp, "liger": liger, "quack": quack}


def liger_ce_impl(grad):
    """Liger's cross-entropy Triton kernel, launched as its autograd
    function launches it but without the wrapper's per-call host
    synchronisations (counting ignored targets, checking their range). With
    `grad` it also writes the gradient of the summed loss over (a copy of)
    the logits."""
    ce = load_liger("cross_entropy")
    import triton
    kernel = ce.liger_cross_entropy_kernel
    max_block = ce.MAX_FUSED_SIZE

    def prepare(inp):
        x = inp["x"].clone() if grad else inp["x"]
        return {"x": x, "t": inp["t"]}

    def run(s):
        x, t = s["x"], s["t"]
        m, n = x.shape
        loss = torch.empty(m, dtype=torch.float32, device=x.device)
        kernel[(m,)](
            X_ptr=x, X_stride=x.stride(-2), Y_ptr=t, Y_stride=t.stride(-1),
            weight_ptr=None, loss_ptr=loss, z_loss_ptr=None,
            loss_stride=loss.stride(-1), token_accuracy_ptr=None,
            token_accuracy_stride=0, predicted_tokens_ptr=None,
            predicted_tokens_stride=0, n_cols=n, n_non_ignore=m,
            sum_non_ignore_weight=m, weight_sum=0.0,
            ignore_index=CrossEntropyBase.ignore_index,
            lse_square_scale=0.0, label_smoothing=0.0, reduction="sum",
            softcap=None, RETURN_Z_LOSS=False, RETURN_TOKEN_ACCURACY=False,
            RETURN_PREDICTED_TOKENS=False,
            BLOCK_SIZE=min(max_block, triton.next_power_of_2(n)),
            HAS_WEIGHT=False, HAS_SOFTCAPPING=False, HAS_GRADIENTS=grad,
            num_warps=32)
        return (loss, x) if grad else loss
    return Impl(run, prepare, note="its Triton kernel launched directly "
                "(the autograd wrapper synchronises with the host per call)"
                + ("; the gradient overwrites a copy of the logits"
                   if grad else ""))


class RMSNormBwd(Op):
    name = "rmsnorm_bwd"
    title = "RMSNorm backward (from the saved rstd)"
    mix = "r2w1"
    kind = "bwd"
    bytes_formula = "3MNb + 2Nb + 4M (x, dy read, dx written; w, dw; rstd)"
    qm_kernel = "rmsnorm_bwd"
    tol_factor = 4.0
    eps = RMS_EPS

    def inputs(self, m, n, dtype):
        return {"x": _randn(m, n, dtype),
                "w": (1 + 0.1 * torch.randn(n, device=DEVICE)).to(dtype),
                "dy": _randn(m, n, dtype)}

    def nbytes(self, m, n, b):
        return 3 * m * n * b + 2 * n * b + 4 * m

    def reference(self, inp, idx):
        x, w, dy = inp["x"], inp["w"].double(), inp["dy"]
        m, n = x.shape

        def parts(rows):
            xd, dyd = x[rows].double(), dy[rows].double()
            r = torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + self.eps)
            xhat = xd * r
            return xhat, dyd, r

        xhat, dyd, r = parts(idx)
        wdy = dyd * w
        dx = (wdy - xhat * (xhat * wdy).mean(-1, keepdim=True)) * r
        dw = torch.zeros(n, dtype=torch.float64, device=x.device)
        for rows in chunks(m, n):
            xh, dd, _ = parts(rows)
            dw += (dd * xh).sum(0)
        return [(dx, True), (dw, False)]

    def factories(self):
        eps = self.eps

        def qm(dtype):
            q = need_quack_mlir()

            def prepare(inp):
                xr, wr = requiring_grad(inp["x"], inp["w"])
                y = q.rmsnorm(xr, wr, eps=eps)
                if y.grad_fn is None:
                    raise NotAvailable("quack_mlir.rmsnorm has no backward "
                                       "(no autograd) yet", "no backward yet")
                return {"y": y, "wrt": (xr, wr), "dy": inp["dy"]}
            return Impl(lambda s: grads(s["y"], s["wrt"], s["dy"]), prepare)

        def eager(dtype):
            def prepare(inp):
                xr, wr = requiring_grad(inp["x"], inp["w"])
                y = F.rms_norm(xr, (xr.shape[-1],), wr, eps)
                return {"y": y, "wrt": (xr, wr), "dy": inp["dy"]}
            return Impl(lambda s: grads(s["y"], s["wrt"], s["dy"]), prepare)

        def comp(dtype):
            fn = compiled(tc_rmsnorm_bwd)

            def prepare(inp):
                x = inp["x"]
                rstd = torch.rsqrt(x.float().pow(2).mean(-1) + eps)
                return {"x": x, "w": inp["w"], "dy": inp["dy"], "rstd": rstd}
            return Impl(lambda s: fn(s["x"], s["w"], s["dy"], s["rstd"]),
                        prepare)

        def liger(dtype):
            Fn = load_liger("rms_norm").LigerRMSNormFunction

            def prepare(inp):
                liger_row_check(inp["x"].shape[1])
                xr, wr = requiring_grad(inp["x"], inp["w"])
                # Its default: dx overwrites dy, so it gets its own dy.
                y = Fn.apply(xr, wr, eps, 0.0, "llama", True, None)
                return {"y": y, "wrt": (xr, wr), "dy": inp["dy"].clone()}
            return Impl(lambda s: grads(s["y"], s["wrt"], s["dy"]), prepare,
                        note="in place (dx over dy), its default")

        def quack(dtype):
            qr = load_quack("rmsnorm")

            def prepare(inp):
                _, _, rstd = qr.rmsnorm_fwd(inp["x"], inp["w"], eps=eps,
                                            store_rstd=True)
                return {"x": inp["x"], "w": inp["w"], "dy": inp["dy"],
                        "rstd": rstd}
            return Impl(lambda s: qr.rmsnorm_bwd(s["x"], s["w"], s["dy"],
                                                 s["rstd"])[:2], prepare)

        return {"quack_mlir": qm, "torch_eager": eager,
                "torch_compile": comp, "liger": liger, "quack": quack}


class LayerNormBwd(Op):
    name = "layernorm_bwd"
    title = "LayerNorm backward (from the saved mean and rstd)"
    mix = "r2w1"
    kind = "bwd"
    bytes_formula = ("3MNb + 3Nb + 8M (x, dy read, dx written; w, dw, db; "
                     "mean, rstd)")
    qm_kernel = "layernorm_bwd"
    tol_factor = 4.0
    eps = LN_EPS

    def inputs(self, m, n, dtype):
        return {"x": _randn(m, n, dtype),
                "w": (1 + 0.1 * torch.randn(n, device=DEVICE)).to(dtype),
                "b": (0.1 * torch.randn(n, device=DEVICE)).to(dtype),
                "dy": _randn(m, n, dtype)}

    def nbytes(self, m, n, b):
        return 3 * m * n * b + 3 * n * b + 8 * m

    def reference(self, inp, idx):
        x, w, dy = inp["x"], inp["w"].double(), inp["dy"]
        m, n = x.shape

        def parts(rows):
            xd, dyd = x[rows].double(), dy[rows].double()
            mu = xd.mean(-1, keepdim=True)
            r = torch.rsqrt((xd - mu).pow(2).mean(-1, keepdim=True) +
                            self.eps)
            return (xd - mu) * r, dyd, r

        xhat, dyd, r = parts(idx)
        wdy = dyd * w
        dx = (wdy - xhat * (xhat * wdy).mean(-1, keepdim=True)
              - wdy.mean(-1, keepdim=True)) * r
        dw = torch.zeros(n, dtype=torch.float64, device=x.device)
        db = torch.zeros(n, dtype=torch.float64, device=x.device)
        for rows in chunks(m, n):
            xh, dd, _ = parts(rows)
            dw += (dd * xh).sum(0)
            db += dd.sum(0)
        return [(dx, True), (dw, False), (db, False)]

    def factories(self):
        eps = self.eps

        def qm(dtype):
            q = need_quack_mlir()

            def prepare(inp):
                xr, wr, br = requiring_grad(inp["x"], inp["w"], inp["b"])
                y = q.layer_norm(xr, (xr.shape[-1],), wr, br, eps)
                if y.grad_fn is None:
                    raise NotAvailable("quack_mlir.layer_norm has no "
                                       "backward (no autograd) yet",
                                       "no backward yet")
                return {"y": y, "wrt": (xr, wr, br), "dy": inp["dy"]}
            return Impl(lambda s: grads(s["y"], s["wrt"], s["dy"]), prepare)

        def eager(dtype):
            def prepare(inp):
                xr, wr, br = requiring_grad(inp["x"], inp["w"], inp["b"])
                y = F.layer_norm(xr, (xr.shape[-1],), wr, br, eps)
                return {"y": y, "wrt": (xr, wr, br), "dy": inp["dy"]}
            return Impl(lambda s: grads(s["y"], s["wrt"], s["dy"]), prepare)

        def comp(dtype):
            fn = compiled(tc_layernorm_bwd)

            def prepare(inp):
                var, mean = torch.var_mean(inp["x"].float(), -1,
                                           correction=0)
                return {"x": inp["x"], "w": inp["w"], "dy": inp["dy"],
                        "mean": mean, "rstd": torch.rsqrt(var + eps)}
            return Impl(lambda s: fn(s["x"], s["w"], s["dy"], s["mean"],
                                     s["rstd"]), prepare)

        def liger(dtype):
            Fn = load_liger("layer_norm").LigerLayerNormFunction

            def prepare(inp):
                liger_row_check(inp["x"].shape[1])
                xr, wr, br = requiring_grad(inp["x"], inp["w"], inp["b"])
                y = Fn.apply(xr, wr, br, eps)
                return {"y": y, "wrt": (xr, wr, br), "dy": inp["dy"]}
            return Impl(lambda s: grads(s["y"], s["wrt"], s["dy"]), prepare)

        def quack(dtype):
            qr = load_quack("rmsnorm")

            def prepare(inp):
                w, b = inp["w"].float(), inp["b"].float()
                _, rstd, mean = qr.layernorm_fwd(inp["x"], w, b, eps=eps,
                                                 return_rstd=True,
                                                 return_mean=True)
                return {"x": inp["x"], "w": w, "dy": inp["dy"],
                        "rstd": rstd, "mean": mean}
            return Impl(lambda s: qr.layernorm_bwd(
                s["x"], s["w"], s["dy"], s["rstd"], s["mean"],
                has_bias=True), prepare,
                note="f32 weight and bias (QuACK's LayerNorm takes no "
                     "other)")

        return {"quack_mlir": qm, "torch_eager": eager,
                "torch_compile": comp, "liger": liger, "quack": quack}


OPS = {op.name: op for op in (
    RMSNorm(), LayerNorm(), Softmax(), SoftmaxBwd(), CrossEntropyFwd(),
    CrossEntropyBwd(), CrossEntropyFwdBwd(), RMSNormBwd(), LayerNormBwd(),
    ArgMax())}
OP_ORDER = list(OPS)


# ---------------------------------------------------------------------------
# Running


class Budget:
    """--budget-seconds: no measurement starts after the deadline, and each
    op gets at most its share of what was left when it started."""

    def __init__(self, seconds, t0):
        self.seconds = seconds if seconds and seconds > 0 else None
        self.t0 = t0
        self.op_deadline = None
        self.reported = set()

    def start_op(self, ops_left):
        if self.seconds is None:
            return
        left = self.seconds - (time.monotonic() - self.t0)
        self.op_deadline = time.monotonic() + max(0.0, left) / max(1,
                                                                   ops_left)

    def over(self):
        return (self.seconds is not None and
                time.monotonic() - self.t0 > self.seconds)

    def why_stop(self):
        if self.seconds is None:
            return None
        now = time.monotonic()
        if self.over():
            return f"budget of {self.seconds:g} s reached"
        if self.op_deadline is not None and now > self.op_deadline:
            return "this op's share of the budget used up"
        return None


class Runner:
    def __init__(self, args, ceilings):
        self.args = args
        self.ceilings = ceilings
        self.impl_cache = {}
        self.results = []
        self.host = {}
        self.elapsed = {}
        self.notes = {}

    def impl(self, op, name, dtype):
        key = (op.name, name, dtype)
        if key not in self.impl_cache:
            try:
                self.impl_cache[key] = op.factories()[name](dtype)
            except Exception as e:  # raised again at each use
                self.impl_cache[key] = remembered(e)
        obj = self.impl_cache[key]
        if isinstance(obj, tuple):
            raise_remembered(obj)
        return obj

    def warm_up(self, ops, dtypes, compile_once=None):
        """Builds every implementation the run will measure (which imports
        the baselines' modules: several seconds each for Liger and QuACK)
        and compiles one trivial function with torch.compile (Inductor's
        start), before the first op: what these cost once then comes out
        of the whole budget rather than out of the first op's share. What
        fails is remembered, and each op reports it as before. Returns
        {implementation: seconds}."""
        spent = {}
        for name in self.args.impls:
            t0 = time.monotonic()
            for op in ops:
                for dname in dtypes:
                    try:
                        self.impl(op, name, torch_dtype(dname))
                    except Exception:  # remembered by impl()
                        pass
            if name == "torch_compile":
                try:
                    (compile_once or _compile_once)()
                except Exception:  # each shape's own compile reports it
                    pass
            spent[name] = time.monotonic() - t0
        return spent

    def keep_note(self, op, name, impl):
        if impl is not None and impl.note:
            self.notes.setdefault(op.name, {})[name] = impl.note

    def classify(self, row, e):
        not_found = ()
        if quack_mlir is not None:
            not_found = (quack_mlir.KernelNotFoundError,)
        if isinstance(e, (NotAvailable, SetUpError)):
            row["status"] = "n/a" if isinstance(e, NotAvailable) else "error"
            row["reason"] = str(e)
            if e.short:
                row["short"] = e.short
        elif not_found and isinstance(e, not_found):
            row["status"] = "n/a"
            row["reason"] = f"no kernel: {e}"
            row["short"] = "no kernel"
        elif isinstance(e, torch.cuda.OutOfMemoryError):
            row["status"], row["reason"] = "error", "out of GPU memory"
            row["short"] = "out of memory"
        else:
            row["status"] = "error"
            row["reason"] = f"{type(e).__name__}: {e}"
            row["short"] = type(e).__name__

    def measure(self, op, name, dname, sets, ref, idx, row):
        dtype = torch_dtype(dname)
        t0 = time.perf_counter()
        states = impl = None
        try:
            impl = self.impl(op, name, dtype)
            states = [impl.prepare(s) for s in sets]
            self.keep_note(op, name, impl)
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            out = impl.run(states[0])
            torch.cuda.synchronize()
            row["first_call_s"] = time.perf_counter() - t1
            err = op.compare(out, ref, idx)
            del out
            row["rel_err"] = err
            tol = TOL[dname] * op.tol_factor
            if not err <= tol:
                row["status"] = "wrong"
                row["reason"] = (f"relative error {err:.3g} > {tol:.3g}; "
                                 "not timed")
                return
            t2 = time.perf_counter()
            t, batch, reps = adaptive_time(impl.run, states,
                                           self.args.target_seconds,
                                           self.args.batch, self.args.reps)
            row["timing_s"] = time.perf_counter() - t2
            ceiling = self.ceilings[op.mix]["bytes_per_s"]
            row.update(status="ok", time_us=t * 1e6, batch=batch, reps=reps,
                       tbps=row["bytes"] / t / 1e12,
                       pct_ceiling=100 * row["bytes"] / t / ceiling)
        except Exception as e:
            self.classify(row, e)
        finally:
            del states
            row["wall_s"] = time.perf_counter() - t0
            if sum(s["x"].numel() for s in sets) * 4 > (1 << 30):
                torch.cuda.empty_cache()

    def run_op(self, op, budget):
        args = self.args
        t_op = time.monotonic()
        rows = []
        for m, n in shapes_for(args):
            for dname in args.dtypes:
                dtype = torch_dtype(dname)
                b = elem_size(dname)
                base = {"op": op.name, "dtype": dname, "M": m, "N": n,
                        "bytes": op.nbytes(m, n, b), "mix": op.mix}
                stop = budget.why_stop()
                if stop:
                    for name in args.impls:
                        rows.append(dict(base, impl=name, status="skipped",
                                         reason=stop))
                    self.say_once(budget, op, stop)
                    continue
                sets = ref = idx = None
                try:
                    first = op.inputs(m, n, dtype)
                    set_bytes = sum(v.numel() * v.element_size()
                                    for v in first.values())
                    nsets = max(1, min(64, math.ceil(4 * L2_BYTES /
                                                     set_bytes)))
                    sets = [first] + [op.inputs(m, n, dtype)
                                      for _ in range(nsets - 1)]
                    idx = sample_rows(m, n, first["x"].device)
                    ref = op.reference(first, idx)
                except Exception as e:
                    for name in args.impls:
                        row = dict(base, impl=name)
                        self.classify(row, e)
                        row["reason"] = "inputs or reference: " + row[
                            "reason"]
                        rows.append(row)
                        self.log(row)
                    sets = ref = None
                    torch.cuda.empty_cache()
                    continue
                for name in args.impls:
                    row = dict(base, impl=name, input_sets=nsets)
                    stop = budget.why_stop()
                    if stop:
                        row.update(status="skipped", reason=stop)
                        self.say_once(budget, op, stop)
                    else:
                        self.measure(op, name, dname, sets, ref, idx, row)
                    rows.append(row)
                    if row["status"] != "skipped":
                        self.log(row)
                del sets, ref, idx, first
                torch.cuda.empty_cache()
        self.results += rows
        # A few seconds per op; skipped only once the whole budget is spent.
        if args.host_calls and not budget.over():
            self.host[op.name] = self.host_overhead(op)
        wall = time.monotonic() - t_op
        self.elapsed[op.name] = {
            "wall_s": wall,
            "first_calls_s": sum(r.get("first_call_s", 0) for r in rows),
            "timing_s": sum(r.get("timing_s", 0) for r in rows)}
        return rows

    def host_overhead(self, op, n=4096, dname="bf16"):
        """Wall-clock microseconds per call on a one-row input: the host
        cost of a launch (the GPU keeps up)."""
        out = {}
        calls = self.args.host_calls
        for name in self.args.impls:
            try:
                impl = self.impl(op, name, torch.bfloat16)
                state = impl.prepare(op.inputs(1, n, torch.bfloat16))
                for _ in range(20):
                    impl.run(state)
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(calls):
                    impl.run(state)
                torch.cuda.synchronize()
                out[name] = (time.perf_counter() - t0) / calls * 1e6
            except Exception as e:
                out[name] = None
                if not isinstance(e, NotAvailable):
                    print(f"host overhead of {op.name} {name}: "
                          f"{type(e).__name__}: {str(e)[:200]}",
                          file=sys.stderr)
        return out

    def say_once(self, budget, op, why):
        if (op.name, why) not in budget.reported:
            budget.reported.add((op.name, why))
            print(f"{op.name}: {why}; not starting further measurements",
                  file=sys.stderr, flush=True)

    def log(self, r):
        if r["status"] == "ok":
            what = (f"{r['tbps']:.3f} TB/s ({r['pct_ceiling']:.1f}% of "
                    f"{CEILING_TITLES[r['mix']]}), {r['time_us']:.1f} us, "
                    f"batch {r['batch']} x {r['reps']}, first call "
                    f"{r['first_call_s']:.2f} s, {r['wall_s']:.2f} s")
        else:
            what = f"{r['status']}: {str(r.get('reason', ''))[:300]}"
        print(f"{r['op']} {r['dtype']} M={r['M']} N={r['N']} {r['impl']}: "
              f"{what}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Reports


def versions():
    import importlib.metadata as md
    v = {"python": platform.python_version()}
    for key, dist in (("torch", "torch"), ("triton", "triton"),
                      ("liger_kernel", "liger-kernel"),
                      ("quack_kernels", "quack-kernels"),
                      ("nvidia_cutlass_dsl", "nvidia-cutlass-dsl"),
                      ("matplotlib", "matplotlib")):
        try:
            v[key] = md.version(dist)
        except Exception:
            v[key] = None
    if torch is not None:
        v["torch"] = torch.__version__
        v["cuda"] = torch.version.cuda
    try:
        v["commit"] = subprocess.run(
            ["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, timeout=10).stdout.strip() or None
        # A tree that differs from its commit says so: the figures are
        # those of the files, not of the commit.
        if v["commit"] and subprocess.run(
                ["git", "-C", HERE, "status", "--porcelain",
                 "--untracked-files=no"], capture_output=True, text=True,
                timeout=30).stdout.strip():
            v["commit"] += "+modified"
    except Exception:
        v["commit"] = None
    return v


def driver_version():
    try:
        import ctypes
        lib = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int(0)
        if lib.cuDriverGetVersion(ctypes.byref(v)) == 0:
            return f"{v.value // 1000}.{(v.value % 1000) // 10}"
    except Exception:
        pass
    return None


def short(text, limit=60):
    text = " ".join(str(text).split()).replace("|", "/")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def cell(r, best):
    s = r["status"]
    if s == "ok":
        txt = f"{r['tbps']:.3f} ({r['pct_ceiling']:.1f}%)"
        return f"**{txt}**" if best else txt
    if s == "wrong":
        return f"wrong (err {r['rel_err']:.2g})"
    if s == "n/a":
        return "n/a: " + short(r.get("short") or r.get("reason", ""), 40)
    if s == "skipped":
        return "skipped (budget)"
    return "error: " + short(r.get("short") or r.get("reason", ""), 40)


def op_table(op, rows, impls, dtypes, ceilings):
    c = ceilings[op.mix]
    lines = [f"### {op.title}", "",
             f"Bytes: {op.bytes_formula}. % of the "
             f"{CEILING_TITLES[op.mix]} ceiling ({CEILINGS[op.mix]}), "
             f"{c['bytes_per_s'] / 1e12:.3f} TB/s. TB/s (% of ceiling).", ""]
    lines.append("| dtype | N | M | " + " | ".join(
        IMPL_TITLES[i] for i in impls) + " |")
    lines.append("|---|---|---|" + "---|" * len(impls))
    keyed = {(r["dtype"], r["N"], r["M"], r["impl"]): r for r in rows}
    shapes = sorted({(r["N"], r["M"]) for r in rows})
    for dname in dtypes:
        for n, m in shapes:
            cells = [keyed.get((dname, n, m, i)) for i in impls]
            ok = [x["tbps"] for x in cells if x and x["status"] == "ok"]
            top = max(ok) if ok else None
            lines.append(f"| {dname} | {n} | {m} | " + " | ".join(
                cell(x, x["status"] == "ok" and x["tbps"] == top)
                if x else "-" for x in cells) + " |")
    return "\n".join(lines)


def op_notes(op, rows, runner):
    lines = []
    notes = runner.notes.get(op.name, {})
    for impl, note in notes.items():
        lines.append(f"- {IMPL_TITLES[impl]}: {note}.")
    # Full reasons for the n/a and error cells, each once.
    seen = {}
    for r in rows:
        if r["status"] in ("n/a", "error", "wrong"):
            key = (r["impl"], r["status"], short(r.get("reason", ""), 300))
            seen.setdefault(key, []).append(f"{r['dtype']} N={r['N']}")
    for (impl, status, reason), where in seen.items():
        at = ", ".join(where[:6]) + (f" and {len(where) - 6} more"
                                     if len(where) > 6 else "")
        lines.append(f"- {IMPL_TITLES[impl]} {status} ({at}): {reason}")
    skipped = {}
    for r in rows:
        if r["status"] == "skipped":
            skipped[r["reason"]] = skipped.get(r["reason"], 0) + 1
    for reason, count in skipped.items():
        lines.append(f"- {count} measurements skipped: {reason} "
                     "(--budget-seconds)")
    el = runner.elapsed.get(op.name)
    if el:
        lines.append(f"- elapsed: {el['wall_s']:.1f} s (first calls, "
                     f"including compilation, {el['first_calls_s']:.1f} s; "
                     f"timing {el['timing_s']:.1f} s)")
    host = runner.host.get(op.name)
    if host:
        lines.append("- host time per call, one row of 4096 bf16 (us): " +
                     ", ".join(f"{IMPL_TITLES[k]} {v:.1f}" if v is not None
                               else f"{IMPL_TITLES[k]} -"
                               for k, v in host.items()))
    return "\n".join(lines)


def header_md(meta, ceilings):
    v = meta["versions"]
    lines = [f"## Bandwidth, {meta['date']}", "",
             f"- Device: {meta['device']} (driver {meta['driver']}); torch "
             f"{v.get('torch')}, CUDA {v.get('cuda')}, triton "
             f"{v.get('triton')}, liger-kernel {v.get('liger_kernel')}, "
             f"quack-kernels {v.get('quack_kernels')}, nvidia-cutlass-dsl "
             f"{v.get('nvidia_cutlass_dsl')}; commit {v.get('commit')}.",
             "- Command: `" + meta["command"] + "`", "",
             "| ceiling | mix | TB/s | measured as |", "|---|---|---|---|"]
    for k in ("copy", "read", "r2w1"):
        c = ceilings[k]
        lines.append(f"| {CEILING_TITLES[k]} | {CEILINGS[k]} | "
                     f"{c['bytes_per_s'] / 1e12:.3f} | {c['how']} |")
    return "\n".join(lines)


def write_json(path, meta, ceilings, runner, finished):
    data = dict(meta, ceilings=ceilings, finished=finished,
                host_us_per_call=runner.host, elapsed_per_op=runner.elapsed,
                notes=runner.notes, results=runner.results)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, default=str)
    os.replace(tmp, path)


def n_label(n):
    return f"{n // 1024}K" if n >= 1024 and n % 1024 == 0 else str(n)


def write_plots(out_dir, args, results, ceilings, layout):
    """TB/s against N (log2) per op and dtype, one line per implementation,
    the op's ceiling dashed; `grid`: one PNG per dtype and direction."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:
        print(f"note: no plots, matplotlib is not available "
              f"({type(e).__name__}: {e})", file=sys.stderr)
        return []
    colors = dict(zip(IMPLS, ("#d62728", "#1f77b4", "#7f7f7f", "#2ca02c",
                              "#9467bd")))
    markers = dict(zip(IMPLS, ("o", "s", "^", "D", "v")))
    written = []

    def draw(ax, op, dname):
        rows = [r for r in results if r["op"] == op.name and
                r["dtype"] == dname]
        for impl in args.impls:
            pts = sorted((r["N"], r["tbps"]) for r in rows
                         if r["impl"] == impl and r["status"] == "ok")
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts],
                        marker=markers[impl], color=colors[impl],
                        label=IMPL_TITLES[impl], linewidth=1.5,
                        markersize=4)
        c = ceilings[op.mix]["bytes_per_s"] / 1e12
        ax.axhline(c, linestyle="--", color="black", linewidth=1,
                   label=f"{CEILING_TITLES[op.mix]} ceiling {c:.2f}")
        ns = sorted({r["N"] for r in rows}) or args.n
        ax.set_xscale("log", base=2)
        ax.set_xticks(ns)
        ax.set_xticklabels([n_label(n) for n in ns], fontsize=7)
        top = max([c] + [r["tbps"] for r in rows if r["status"] == "ok"])
        ax.set_ylim(0, top * 1.15)
        ax.set_title(f"{op.title} ({dname})", fontsize=9)
        ax.set_xlabel("N (M = min(32768, 2^31/N))" if not args.m else
                      f"N (M = {args.m})", fontsize=8)
        ax.set_ylabel("TB/s", fontsize=8)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6, loc="lower right")

    ops = [OPS[o] for o in args.ops]
    if layout == "per-op":
        for op in ops:
            for dname in args.dtypes:
                fig, ax = plt.subplots(figsize=(6, 4))
                draw(ax, op, dname)
                fig.tight_layout()
                path = os.path.join(out_dir, f"bench_{op.name}_{dname}.png")
                fig.savefig(path, dpi=110)
                plt.close(fig)
                written.append(path)
        return written
    for dname in args.dtypes:
        for kind in ("fwd", "bwd"):
            group = [op for op in ops if op.kind == kind]
            if not group:
                continue
            cols = min(3, len(group))
            nrows = math.ceil(len(group) / cols)
            fig, axes = plt.subplots(nrows, cols, figsize=(5 * cols,
                                                           3.6 * nrows),
                                     squeeze=False)
            for ax, op in zip(axes.flat, group):
                draw(ax, op, dname)
            for ax in list(axes.flat)[len(group):]:
                ax.axis("off")
            fig.suptitle(f"{'Forward' if kind == 'fwd' else 'Backward'} "
                         f"ops, {dname}: TB/s against N", fontsize=11)
            fig.tight_layout()
            path = os.path.join(out_dir, f"bench_{dname}_{kind}.png")
            fig.savefig(path, dpi=100)
            plt.close(fig)
            written.append(path)
    return written


# ---------------------------------------------------------------------------


def parse_args(argv, default_ops):
    ap = argparse.ArgumentParser(
        description=" ".join(__doc__.split("\n\n")[0].split()),
        epilog="See the module docstring (bench.py) for the bytes counted "
               "per op and what each implementation runs.")
    ap.add_argument("--ops", nargs="+", default=list(default_ops),
                    choices=OP_ORDER, metavar="OP",
                    help="ops to run, in this order (default: all: "
                         + " ".join(OP_ORDER) + ")")
    ap.add_argument("--impls", nargs="+", default=list(IMPLS),
                    choices=IMPLS, metavar="IMPL",
                    help="implementations (default: all: "
                         + " ".join(IMPLS) + ")")
    ap.add_argument("--dtypes", nargs="+", default=["bf16", "f32"],
                    choices=DTYPE_NAMES)
    ap.add_argument("--n", type=int, nargs="+", default=DEFAULT_NS,
                    help="row lengths (default 256 ... 262144 by powers "
                         "of 2)")
    ap.add_argument("--m", type=int, default=None,
                    help="rows for every N (default min(32768, 2^31 / N))")
    ap.add_argument("--out", help="write the JSON results here")
    ap.add_argument("--out-dir", help="write bench.json, bench.md and the "
                    "PNG plots into this directory")
    ap.add_argument("--plots", choices=("grid", "per-op", "none"),
                    default="grid", help="grid: one PNG per dtype and "
                    "direction (forward, backward); per-op: one per op and "
                    "dtype (default grid)")
    ap.add_argument("--budget-seconds", type=float, default=None,
                    help="start no measurement after this many seconds "
                         "(from the start of the run), and give each op at "
                         "most its share of what is left; skipped ones are "
                         "reported")
    ap.add_argument("--target-seconds", type=float, default=0.15,
                    help="timing per (op, shape, implementation), beyond "
                         "its first calls (default 0.15)")
    ap.add_argument("--reps", type=int, default=None,
                    help="fixed number of timed batches (default: from "
                         "--target-seconds)")
    ap.add_argument("--batch", type=int, default=None,
                    help="fixed calls per batch (default: at least ~0.3 ms "
                         "of GPU work)")
    ap.add_argument("--host-calls", type=int, default=500,
                    help="calls for the host time per call (0: skip)")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the plan and the estimated GPU time; "
                         "imports nothing GPU-related")
    return ap.parse_args(argv)


def main(argv=None, default_ops=tuple(OP_ORDER)):
    args = parse_args(argv, default_ops)
    if args.dry_run:
        print_plan(args)
        return 0
    t_start = time.monotonic()
    load_gpu_modules()
    if not torch.cuda.is_available():
        print("error: no CUDA device", file=sys.stderr)
        return 2
    out_dir = args.out_dir
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
    json_path = args.out or (os.path.join(out_dir, "bench.json")
                             if out_dir else None)
    props = torch.cuda.get_device_properties(0)
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime(
                "%Y-%m-%dT%H:%M:%SZ"),
            "device": props.name, "driver": driver_version(),
            "sm_count": props.multi_processor_count,
            "versions": versions(),
            "command": " ".join(["bench.py"] + (sys.argv[1:] if argv is None
                                                else list(argv))),
            "bundle": os.environ.get("QUACK_MLIR_BUNDLE"),
            "args": vars(args)}
    rows, _ = plan(args)
    est = estimate_seconds(args, rows)
    print(f"plan: {len(rows)} measurements; estimated {est['total']:.0f} s "
          "of GPU time", file=sys.stderr, flush=True)

    ceilings = measure_ceilings()
    report = []

    def emit(text):
        print(text, flush=True)
        report.append(text)

    emit(header_md(meta, ceilings))
    print("ceilings: " + ", ".join(
        f"{k} {v['bytes_per_s'] / 1e12:.3f} TB/s"
        for k, v in ceilings.items()), file=sys.stderr, flush=True)

    # One static-shape graph per (op, dtype, shape): allow that many.
    for knob in ("cache_size_limit", "recompile_limit"):
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 256)
    for knob in ("accumulated_cache_size_limit",
                 "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 4096)

    runner = Runner(args, ceilings)
    budget = Budget(args.budget_seconds, t_start)
    meta["warm_up_s"] = runner.warm_up([OPS[name] for name in args.ops],
                                       args.dtypes)
    if meta["warm_up_s"]:
        print("warm-up: " + ", ".join(
            f"{k} {v:.1f} s" for k, v in meta["warm_up_s"].items()),
            file=sys.stderr, flush=True)
    finished = False
    try:
        for i, name in enumerate(args.ops):
            op = OPS[name]
            budget.start_op(len(args.ops) - i)
            op_rows = runner.run_op(op, budget)
            emit("")
            emit(op_table(op, op_rows, args.impls, args.dtypes, ceilings))
            emit("")
            emit(op_notes(op, op_rows, runner))
            el = runner.elapsed[name]
            print(f"== {name}: {el['wall_s']:.1f} s elapsed "
                  f"({time.monotonic() - t_start:.0f} s since start)",
                  file=sys.stderr, flush=True)
            if json_path:
                write_json(json_path, meta, ceilings, runner, False)
        finished = True
    finally:
        total = time.monotonic() - t_start
        skipped = sum(1 for r in runner.results if r["status"] == "skipped")
        emit("")
        emit(f"Total {total:.0f} s; {len(runner.results)} measurements, "
             f"{sum(1 for r in runner.results if r['status'] == 'ok')} "
             f"timed, {skipped} skipped for the budget"
             + ("" if finished else "; the run was interrupted") + ".")
        meta["total_s"] = total
        if json_path:
            write_json(json_path, meta, ceilings, runner, finished)
            print(f"wrote {json_path}", file=sys.stderr)
        if out_dir:
            with open(os.path.join(out_dir, "bench.md"), "w") as f:
                f.write("\n".join(report) + "\n")
            if args.plots != "none":
                for p in write_plots(out_dir, args, runner.results,
                                     ceilings, args.plots):
                    print(f"wrote {p}", file=sys.stderr)
    return 1 if any(r["status"] in ("error", "wrong") and
                    r["impl"] == "quack_mlir" for r in runner.results) else 0


if __name__ == "__main__":
    sys.exit(main())
