#!/usr/bin/env python3
"""Phase 2 of config tuning: times the same kernels compiled with different
configs, each config in its own bundle root, on the GPU.

Phase 1, on the build machine, compiles one bundle root per config
(scripts/tune-build.sh: vectors per thread x rows per CTA, and the model's
own choice as `...-default`):

    scripts/tune-build.sh build/bin/quackc tune cross_entropy_fwd bf16 \\
        1024,4096

Phase 2, on the GPU (QUACK_MLIR_RUNTIME_LIB set as for the tests):

    python3 tune.py --roots tune/* --kernels cross_entropy_fwd \\
        --n 1024 4096 --dtype bf16 [--out tune.json] \\
        [--table kernels/tuning/sm_90.tsv]

With --table, the configs that beat the model's choice by more than the
margin become entries of the table that quack-select-config reads (compiled
into quackc: rebuild after editing it).

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


def logits(t, m, n):
    """Random logits [m, n] of dtype t and a target class per row."""
    return (torch.randn(m, n, device="cuda").to(DT[t]),
            torch.randint(0, n, (m,), device="cuda"))


# The cross-entropy kernels are timed in the variant the Python op and
# bench.py launch: with IGNORE (no target below equals it).
IGNORE_INDEX = -100


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
        key = (t, n, "true")

        def make():
            x, tg = logits(t, m, n)
            return x, tg, torch.empty(m, device="cuda"), torch.empty(
                m, device="cuda")

        def run(x, tg, loss, lse):
            lau.launch(key, m, (x.data_ptr(), n, tg.data_ptr(), IGNORE_INDEX,
                                loss.data_ptr(), lse.data_ptr()), stream())

        def check(x, tg, loss, lse):
            return lse.double(), torch.logsumexp(x.double(), -1)
        return lau, run, make, check, m * n * b + 16 * m
    if kernel == "cross_entropy_fwd_bwd":
        lau = Launcher("cross_entropy_fwd_bwd", ("T", "N", "IGNORE"))
        key = (t, n, "true")
        scale = float_bits(1.0 / m)

        def make():
            x, tg = logits(t, m, n)
            return x, tg, torch.empty(m, device="cuda"), torch.empty_like(x)

        def run(x, tg, loss, dx):
            lau.launch(key, m, (x.data_ptr(), n, tg.data_ptr(), scale,
                                IGNORE_INDEX, loss.data_ptr(), dx.data_ptr(),
                                n), stream())

        def check(x, tg, loss, dx):
            xd = x.double()
            ref = (torch.softmax(xd, -1) - torch.nn.functional.one_hot(
                tg, n).double()) / m
            return dx.double(), ref
        return lau, run, make, check, 2 * m * n * b + 12 * m
    if kernel == "cross_entropy_bwd":
        lau = Launcher("cross_entropy_bwd", ("T", "N", "IGNORE"))
        key = (t, n, "true")

        def make():
            x, tg = logits(t, m, n)
            lse = torch.logsumexp(x.float(), -1)
            dloss = torch.rand(m, device="cuda")
            return x, tg, lse, dloss, torch.empty_like(x)

        def run(x, tg, lse, dloss, dx):
            lau.launch(key, m, (x.data_ptr(), n, tg.data_ptr(),
                                lse.data_ptr(), dloss.data_ptr(),
                                IGNORE_INDEX, dx.data_ptr(), n), stream())

        def check(x, tg, lse, dloss, dx):
            ref = (torch.exp(x.double() - lse.double().unsqueeze(-1)) -
                   torch.nn.functional.one_hot(tg, n).double()) * \
                dloss.double().unsqueeze(-1)
            return dx.double(), ref
        return lau, run, make, check, 2 * m * n * b + 16 * m
    if kernel == "softmax_bwd":
        lau = Launcher("softmax_bwd", ("T", "N"))
        key = (t, n)

        def make():
            y = torch.softmax(torch.randn(m, n, device="cuda"), -1).to(DT[t])
            dy = torch.randn(m, n, device="cuda").to(DT[t])
            return dy, y, torch.empty_like(y)

        def run(dy, y, dx):
            lau.launch(key, m, (dy.data_ptr(), n, y.data_ptr(), n,
                                dx.data_ptr(), n), stream())

        def check(dy, y, dx):
            yd, dyd = y.double(), dy.double()
            return dx.double(), yd * (dyd - (dyd * yd).sum(-1, keepdim=True))
        return lau, run, make, check, 3 * m * n * b
    if kernel == "layernorm_fwd":
        lau = Launcher("layernorm_fwd", ("T", "TW", "N"),
                       fixed={"BIAS": "true"})
        key = (t, t, n)
        w = torch.randn(n, device="cuda").to(DT[t])
        bias = torch.randn(n, device="cuda").to(DT[t])
        eps = float_bits(1e-5)

        def make():
            x = torch.randn(m, n, device="cuda").to(DT[t])
            return (x, torch.empty_like(x), torch.empty(m, device="cuda"),
                    torch.empty(m, device="cuda"))

        def run(x, y, mean, rstd):
            lau.launch(key, m, (x.data_ptr(), n, w.data_ptr(),
                                bias.data_ptr(), eps, y.data_ptr(), n,
                                mean.data_ptr(), rstd.data_ptr()), stream())

        def check(x, y, mean, rstd):
            return y.double(), torch.nn.functional.layer_norm(
                x.double(), (n,), w.double(), bias.double(), 1e-5)
        return lau, run, make, check, 2 * m * n * b + 2 * n * b + 8 * m
    if kernel == "argmax":
        lau = Launcher("argmax", ("T", "N"))
        key = (t, n)
        cols = torch.arange(n, device="cuda")

        def make():
            x = torch.randn(m, n, device="cuda").to(DT[t])
            return x, torch.empty(m, dtype=torch.int64, device="cuda")

        def run(x, index):
            lau.launch(key, m, (x.data_ptr(), n, index.data_ptr()), stream())

        def check(x, index):
            # The first column of the maximum (randn has no NaN).
            hit = x == x.max(-1, keepdim=True).values
            ref = torch.where(hit, cols, n).min(-1).values
            return index.double(), ref.double()
        return lau, run, make, check, m * n * b + 8 * m
    if kernel in ("rmsnorm_bwd", "layernorm_bwd"):
        # Through the ops, which allocate the workspace of the sums over
        # rows. The check covers dx of the first rows (a float64 reference
        # of every row would not fit beside 2^31-element inputs); the GPU
        # suite checks the sums.
        layer = kernel == "layernorm_bwd"
        lau = None
        w = torch.randn(n, device="cuda").to(DT[t])
        rows = min(m, 64)

        def make():
            x = torch.randn(m, n, device="cuda").to(DT[t])
            dy = torch.randn(m, n, device="cuda").to(DT[t])
            xs = x[:rows].double()
            mean = torch.zeros(m, device="cuda")
            rstd = torch.full((m,), 1.0, device="cuda")
            mean[:rows] = xs.mean(-1).float() if layer else 0
            centred = xs - mean[:rows].double().unsqueeze(-1)
            rstd[:rows] = torch.rsqrt(centred.pow(2).mean(-1) + 1e-5).float()
            return (x, dy, mean, rstd)

        def run(x, dy, mean, rstd):
            if layer:
                return quack_mlir.layer_norm_backward(dy, x, w, mean, rstd)
            return quack_mlir.rmsnorm_backward(dy, x, w, rstd)

        def check(x, dy, mean, rstd):
            dx = run(x, dy, mean, rstd)[0][:rows].double()
            r = rstd[:rows].double().unsqueeze(-1)
            xhat = (x[:rows].double() - mean[:rows].double().unsqueeze(-1)) * r
            g = dy[:rows].double() * w.double()
            inner = g - xhat * (xhat * g).mean(-1, keepdim=True)
            if layer:
                inner = inner - g.mean(-1, keepdim=True)
            return dx, inner * r
        nbytes = 3 * m * n * b + (3 if layer else 2) * n * b + \
            (8 if layer else 4) * m
        return lau, run, make, check, nbytes
    raise SystemExit(f"tune.py: unknown kernel {kernel!r}; known: "
                     "softmax_fwd, rmsnorm_fwd, cross_entropy_fwd, "
                     "cross_entropy_fwd_bwd, cross_entropy_bwd, softmax_bwd, "
                     "layernorm_fwd, "
                     "argmax, rmsnorm_bwd, layernorm_bwd")


def check_rows(args, m, ends=512):
    """`args` cut to their first and last `ends` rows (every tensor whose
    first dimension is the M rows): the float64 reference of a whole
    8192 x 262144 input would take more memory than an 80 GB card has, and
    each row's result depends on that row alone."""
    if m <= 2 * ends:
        return args
    idx = torch.cat([torch.arange(ends), torch.arange(m - ends, m)]).cuda()
    return tuple(a[idx] if torch.is_tensor(a) and a.dim() >= 1 and
                 a.shape[0] == m else a for a in args)


def root_kernels(root):
    """{(kernel, T, N)} that the bundle root `root` holds (its index files)."""
    old = os.environ.get("QUACK_MLIR_BUNDLE")
    os.environ["QUACK_MLIR_BUNDLE"] = root
    try:
        return bench.bundle_kernels() or set()
    finally:
        if old is None:
            del os.environ["QUACK_MLIR_BUNDLE"]
        else:
            os.environ["QUACK_MLIR_BUNDLE"] = old


def root_config(root, kernel, dtype, n):
    """The config that the metadata of `root`'s variant records, or {}."""
    for sub in sorted(os.listdir(root)):
        idx = os.path.join(root, sub, "index.json")
        try:
            with open(idx) as f:
                entries = json.load(f).get("kernels", [])
        except (OSError, ValueError):
            continue
        for e in entries:
            b = e.get("bindings", {})
            if (e.get("kernel"), b.get("T"), b.get("N")) == (kernel, dtype, n):
                with open(os.path.join(root, sub, e["metadata"])) as f:
                    return json.load(f).get("config", {})
    return {}


ELEMENT_BYTES = {"bf16": 2, "f16": 2, "f32": 4}


def root_labels(roots):
    """{root: label}: the root's directory name, or, where the roots come
    from several directories (two runs of scripts/tune-build.sh, one with
    QUACK_TUNE_KNOBS, name their roots alike), its path below the
    directories' common parent. Raises ValueError for a root given twice."""
    paths = {r: os.path.abspath(r) for r in roots}
    if len(set(paths.values())) != len(paths) or len(paths) != len(roots):
        raise ValueError("a root is given twice")
    parents = {os.path.dirname(p) for p in paths.values()}
    if len(parents) == 1:
        return {r: os.path.basename(p) for r, p in paths.items()}
    common = os.path.commonpath(list(parents))
    return {r: os.path.relpath(p, common) for r, p in paths.items()}


def table_lines(results, margin, against="model"):
    """Entries for kernels/tuning/<arch>.tsv: per (kernel, dtype, N), the
    fastest config where it beats the model's own choice (the root labelled
    ...-default) by more than `margin`; with `against="table"`, where it
    beats the config the architecture's table gives (...-table): the
    entries of a tuning target's table (kernels/tuning/sm_90-h100.tsv),
    measured on that GPU."""
    suffix = "-default" if against == "model" else "-table"
    lines = []
    groups = {}
    for r in results:
        groups.setdefault((r["kernel"], r["dtype"], r["N"]), []).append(r)
    for (kernel, dtype, n), rows in sorted(groups.items()):
        default = [r for r in rows if r["config"].endswith(suffix)]
        if not default:
            continue
        # A root that forced its sums over rows into shared memory
        # (QUACK_TUNE_SUMS=shared) is an entry only where the table can say
        # so: split sums in a loop over shared-memory buffers (sums=K). All
        # of them shared, the entry would record none, and quackc, whose
        # registers may then not spill, would keep them there (layernorm_bwd
        # f32 at 16384 on an H100: 3.00 TB/s measured, 2.24 from the entry).
        # The baselines are no entries either.
        usable = [r for r in rows if not r["config"].endswith(
            ("-default", "-table")) and (
            "-sums-shared" not in r["config"] or (
                r.get("knobs", {}).get("sums") == "split" and
                r["knobs"].get("copy", "global") != "global" and
                r["knobs"].get("prefetch")))]
        if not usable:
            continue
        best = max(usable, key=lambda r: r["tbps"])
        base = default[0]["tbps"]
        cfg = best.get("knobs", {})
        if best["tbps"] <= base * (1 + margin) or not cfg:
            continue
        cluster = cfg.get("cluster_size", 1)
        # The copy path is always written: tune-build.sh compiles every
        # config with its copy path named, and for the entry's split the
        # rule may choose another than for the model's (the f32 backward
        # norms on the H100 took bulk copies without it, and spilled).
        copy = cfg.get("copy", "global")
        tail = f" {cluster} {copy}"
        if copy == "global":
            # A loop over rows with the next rows in registers on the
            # CTA-level path, where the model never makes one (the roots of
            # QUACK_TUNE_KNOBS=prefetch=1 have it, the default too).
            if cluster == 1 and cfg.get("prefetch"):
                tail += " prefetch"
        elif cfg.get("prefetch"):
            # A loop over several shared-memory buffers: their count.
            tail += f" {cfg.get('stages', 2)}"
            # The sums over rows it kept in shared memory, where it split
            # them (an entry's sums=K applies to kernels with more than K
            # sums; with all of them shared, the entry records none and
            # quackc searches again).
            if cfg.get("sums") == "split" and cfg.get("shared_sums"):
                tail += f" sums={cfg['shared_sums']}"
        lines.append(f"{kernel} {ELEMENT_BYTES[dtype]} {n} "
                     f"{cfg['vectors_per_thread']} {cfg['rows_per_cta']}"
                     + tail +
                     f"  # {dtype}: {base:.2f} -> {best['tbps']:.2f} TB/s")
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--roots", nargs="+", required=True,
                   help="bundle roots, one per config")
    p.add_argument("--kernels", nargs="+", default=["softmax_fwd"])
    p.add_argument("--n", nargs="+", type=int, required=True)
    p.add_argument("--dtype", default="bf16", choices=sorted(DT))
    p.add_argument("--m", type=int, default=32768,
                   help="rows (at most 2^31 / N elements in all)")
    p.add_argument("--out", help="write the results here (JSON)")
    p.add_argument("--table", help="append the configs that beat the "
                   "model's choice by more than --margin to this table "
                   "(kernels/tuning/<arch>.tsv), replacing earlier entries "
                   "of the same kernel, element size and N")
    p.add_argument("--against", choices=("model", "table"), default="model",
                   help="what an entry must beat: the model's choice (the "
                   "roots ...-default; the architecture's table) or the "
                   "config the architecture's table gives (...-table; a "
                   "tuning target's table)")
    p.add_argument("--margin", type=float, default=0.03,
                   help="relative gain a measured config needs (default 3%%)")
    a = p.parse_args()
    try:
        labels = root_labels(a.roots)
    except ValueError as e:
        p.error(f"--roots: {e}")
    if a.table and any(os.sep in label for label in labels.values()):
        # A table entry cannot record a knob (QUACK_TUNE_KNOBS) that set
        # one directory's roots apart from another's.
        p.error("--table takes the roots of one directory; compare "
                "directories without it")
    bench.load_gpu_modules()
    held = {root: root_kernels(root) for root in a.roots}
    results = []
    for kernel in a.kernels:
        for n in a.n:
            m = min(a.m, (1 << 31) // n)
            rows = []
            for root in a.roots:
                # Only the roots that compiled this kernel at this N.
                if (kernel, a.dtype, n) not in held[root]:
                    continue
                quack_mlir.set_bundle(root)
                lau, run, make, check, nbytes = case(kernel, a.dtype, m, n)
                sets = [make() for _ in range(max(1, (4 * L2) // nbytes + 1))]
                label = labels[root]
                try:
                    run(*sets[0])
                    torch.cuda.synchronize()
                except Exception as e:  # a config this N cannot use
                    rows.append((label, None, str(e).splitlines()[0]))
                    continue
                # The backward norms' check runs the op itself and covers
                # its first rows only.
                whole = kernel in ("rmsnorm_bwd", "layernorm_bwd")
                out, ref = check(*(sets[0] if whole else
                                   check_rows(sets[0], m)))
                err = ((out - ref).norm() / ref.norm()).item()
                if not err < 2e-2:
                    rows.append((label, None, f"wrong: rel err {err:.2e}"))
                    continue
                t = time_batches(run, sets, batch=5, reps=30, warmup=5)
                rows.append((label, nbytes / t / 1e12, ""))
                results.append({"kernel": kernel, "dtype": a.dtype, "N": n,
                                "M": m, "config": label,
                                "knobs": root_config(root, kernel, a.dtype, n),
                                "tbps": nbytes / t / 1e12})
            print(f"\n{kernel} {a.dtype} M={m} N={n}")
            for label, tb, note in sorted(
                    rows, key=lambda r: -(r[1] or 0)):
                print(f"  {label:28s} " +
                      (f"{tb:.3f} TB/s" if tb else f"-- {note}"))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)
    if a.table:
        write_table(a.table, table_lines(results, a.margin, a.against))


def write_table(path, lines):
    """Replaces the entries of `lines`' (kernel, bytes, N) in the table at
    `path` and appends the rest, keeping comments and other entries."""
    key = lambda line: tuple(line.split("#")[0].split()[:3])
    new = {key(line): line for line in lines}
    kept = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f.read().splitlines():
                fields = line.split("#")[0].split()
                if len(fields) >= 5 and tuple(fields[:3]) in new:
                    continue
                kept.append(line)
    with open(path, "w") as f:
        f.write("\n".join(kept + lines) + "\n")
    print(f"\n{len(lines)} entries written to {path}")


if __name__ == "__main__":
    main()
