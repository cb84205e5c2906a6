#!/usr/bin/env python3
"""Scoreboard of bench.py results: for every (op, dtype, N), quack_mlir
against the best baseline measured in the same run, as a Markdown table.

    python3 summarize.py RUN.json [RUN.json ...]

A result within 2% of a baseline counts as a tie (the convention of
BENCHMARKS.md); every other shape is a win or a loss. A shape where
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


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    runs = []
    for path in argv[1:]:
        try:
            with open(path) as f:
                runs.append(json.load(f))
        except (OSError, ValueError) as e:
            print(f"summarize.py: cannot read {path}: {e}", file=sys.stderr)
            return 1
    print(scoreboard(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
