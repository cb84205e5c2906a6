#!/usr/bin/env python3
"""Scoreboard of bench.py results: for every (op, dtype, N), quack_mlir
against the best baseline measured in the same run, as a Markdown table.

    python3 summarize.py RUN.json [RUN.json ...]

A result within 2% of a baseline counts as a tie (the convention of
BENCHMARKS.md); every other shape is a win or a loss. After the table, the
speed-of-light targets, each against the ceiling of the kernel's own
read/write mix as bench.py reports it: forward kernels (rmsnorm,
layernorm, softmax, ce_fwd) at least 90% from N = 4096 and 75% up to
N = 2048; backward kernels and the fused cross-entropy at least 80% from
N = 4096. Every missed shape is named. A shape where
quack_mlir has a figure but no baseline does (each refused it, failed or
was not run) is listed with quack_mlir's figure and counted apart, and so
is one where quack_mlir has none (skipped or failed): neither is dropped,
so that a target checked against this table sees every shape. Nothing here
needs torch or a GPU.
"""

import json
import sys

TIE = 0.02
BASELINES = ("torch_compile", "liger", "quack", "torch_eager")
NAMES = {"torch_compile": "torch.compile", "liger": "Liger", "quack": "QuACK",
         "torch_eager": "torch eager"}


def scoreboard(runs):
    cells = {}
    order = []
    for run in runs:
        for r in run["results"]:
            key = (r["op"], r["dtype"], r["N"])
            if key not in cells:
                cells[key] = {}
                order.append(key)
            if r.get("status") == "ok":
                cells[key][r["impl"]] = r
            elif r["impl"] == "quack_mlir":
                cells[key].setdefault("_ours_status", r.get("status", "?"))
    lines = ["| op | dtype | N | quack_mlir TB/s (% ceiling) | best baseline "
             "| ratio | |", "|---|---|---|---|---|---|---|"]
    tally = {"win": 0, "tie": 0, "loss": 0}
    unmatched = 0
    unmeasured = 0
    for key in order:
        c = cells[key]
        ours = c.get("quack_mlir")
        base = [c[b] for b in BASELINES if b in c]
        op, dtype, n = key
        if not ours:
            if "_ours_status" in c:
                unmeasured += 1
                lines.append(f"| {op} | {dtype} | {n} | "
                             f"{c['_ours_status']} | | | |")
            continue
        if not base:
            unmatched += 1
            lines.append(
                f"| {op} | {dtype} | {n} | {ours['tbps']:.3f} "
                f"({ours['pct_ceiling']:.1f}%) | none measured | | |")
            continue
        best = max(base, key=lambda r: r["tbps"])
        ratio = ours["tbps"] / best["tbps"]
        verdict = ("win" if ratio > 1 + TIE else
                   "loss" if ratio < 1 - TIE else "tie")
        tally[verdict] += 1
        lines.append(
            f"| {op} | {dtype} | {n} | {ours['tbps']:.3f} "
            f"({ours['pct_ceiling']:.1f}%) | {NAMES[best['impl']]} "
            f"{best['tbps']:.3f} | {ratio:.2f} | {verdict} |")
    lines.append("")
    lines.append(f"{tally['win']} wins, {tally['tie']} ties (within "
                 f"{TIE:.0%}), {tally['loss']} losses." +
                 (f" {unmatched} without a baseline." if unmatched else "") +
                 (f" {unmeasured} without a quack_mlir figure." if unmeasured
                  else ""))
    return "\n".join(lines)


FORWARD = ("rmsnorm", "layernorm", "softmax", "ce_fwd")
BACKWARD = ("rmsnorm_bwd", "layernorm_bwd", "softmax_bwd", "ce_bwd",
            "ce_fwd_bwd")
# (name, ops, the N it covers, % of the ceiling to reach).
TARGETS = (
    ("forward, N >= 4096", FORWARD, lambda n: n >= 4096, 90.0),
    ("forward, N <= 2048", FORWARD, lambda n: n <= 2048, 75.0),
    ("backward and ce_fwd_bwd, N >= 4096", BACKWARD, lambda n: n >= 4096,
     80.0),
)


def targets(runs):
    """The targets met per group, and the shapes that miss them, from
    quack_mlir's figures (the first run with one wins, as in the table)."""
    ours = {}
    for run in runs:
        for r in run["results"]:
            if r["impl"] == "quack_mlir" and r.get("status") == "ok":
                ours.setdefault((r["op"], r["dtype"], r["N"]), r)
    lines = ["", "| target | met | missed (TB/s, % of ceiling) |",
             "|---|---|---|"]
    for name, ops, covers, pct in TARGETS:
        cells = [k for k in ours if k[0] in ops and covers(k[2])]
        if not cells:
            continue
        missed = sorted(k for k in cells if ours[k]["pct_ceiling"] < pct)
        words = ", ".join(
            f"{op} {dt} {n} ({ours[(op, dt, n)]['tbps']:.3f}, "
            f"{ours[(op, dt, n)]['pct_ceiling']:.1f}%)"
            for op, dt, n in missed)
        lines.append(f"| {name}: {pct:.0f}% | {len(cells) - len(missed)}"
                     f"/{len(cells)} | {words or 'none'} |")
    return "\n".join(lines) if len(lines) > 3 else ""


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    runs = []
    for path in argv[1:]:
        try:
            with open(path) as f:
                run = json.load(f)
        except (OSError, ValueError) as e:
            print(f"summarize.py: cannot read {path}: {e}", file=sys.stderr)
            return 1
        if not (isinstance(run, dict) and isinstance(run.get("results"), list)
                and all(isinstance(r, dict) and {"op", "dtype", "N", "impl"}
                        <= r.keys() for r in run["results"])):
            print(f"summarize.py: {path} is not a bench.py run (a JSON "
                  "object whose \"results\" list holds op, dtype, N and "
                  "impl for each measurement)", file=sys.stderr)
            return 1
        runs.append(run)
    print(scoreboard(runs))
    report = targets(runs)
    if report:
        print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
