#!/usr/bin/env python3
"""Compile speed of quackc on the CPU: every catalogue kernel, description to
cubin (ptxas included), as a process per variant and in one process.

    python3 compile_speed.py build/bin/quackc [--n 4096 65536] [--runs 5]

- process: `quackc X.qk --kernel K -D ... -o out.cubin`, one process per
  variant; the median of --runs runs of each variant is reported (it
  includes process start, MLIR context creation, the pipeline, LLVM's NVPTX
  backend and one ptxas process).
- in-process: `quackc X.qk --bundle=DIR -D T=... -D N=...
  --cluster-fallbacks=0` compiles every variant of a description in one
  process (a context per worker thread, one ptxas process per variant and
  per search trial); the wall time divided by the number of variants
  written. The bundle compiles on every hardware thread by default, so
  this is a throughput on this machine's cores; --jobs 1 gives one
  variant at a time.

Needs no GPU. Prints a Markdown table.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                    os.pardir)
# Each catalogue kernel with the bindings the Python ops use.
KERNELS = [
    ("rmsnorm", "rmsnorm_fwd",
     ["TW=T", "RESIDUAL=false", "BIAS=false", "OFFSET=false"]),
    ("layernorm", "layernorm_fwd", ["TW=T", "BIAS=true"]),
    ("softmax", "softmax_fwd", []),
    ("softmax", "softmax_bwd", []),
    ("cross_entropy", "cross_entropy_fwd", ["IGNORE=true"]),
    ("cross_entropy", "cross_entropy_bwd", ["IGNORE=true"]),
    ("cross_entropy", "cross_entropy_fwd_bwd", ["IGNORE=true"]),
]


def defines(pairs):
    out = []
    for p in pairs:
        out += ["-D", p]
    return out


def run(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"compile_speed.py: {' '.join(cmd)} failed:\n"
                         f"{r.stderr.strip()}")
    return dt, r.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("quackc")
    p.add_argument("--n", nargs="+", type=int, default=[4096, 65536])
    p.add_argument("--dtypes", nargs="+", default=["bf16", "f32"])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--out", help="write the results here (JSON)")
    p.add_argument("--jobs", type=int, default=0,
                   help="quackc --jobs for the in-process figure (default "
                   "0: one per hardware thread)")
    a = p.parse_args()
    if not os.access(a.quackc, os.X_OK):
        print(f"compile_speed.py: {a.quackc} is not an executable",
              file=sys.stderr)
        return 2
    results = []
    # Every variant's process median and the in-process totals, for the
    # row over the whole list (the target is a median per variant).
    every = []
    total_s = 0.0
    total_variants = 0
    with tempfile.TemporaryDirectory() as tmp:
        print("| kernel | process: median ms per variant (min–max over "
              "variants) | in-process: ms per variant |")
        print("|---|---|---|")
        for qk, kernel, flags in KERNELS:
            src = os.path.join(ROOT, "kernels", qk + ".qk")
            medians = []
            for t in a.dtypes:
                for n in a.n:
                    cmd = [a.quackc, src, "--kernel", kernel, "-o",
                           os.path.join(tmp, "k.cubin")] + defines(
                               [f"T={t}", f"N={n}"] + flags)
                    times = [run(cmd)[0] for _ in range(a.runs)]
                    medians.append(statistics.median(times))
            bundle = os.path.join(tmp, kernel)
            # The variants the process figures compile, not their cluster
            # fallbacks (a bundle's default).
            cmd = [a.quackc, src, f"--bundle={bundle}", "--kernel", kernel,
                   "--alignments=16", "--cluster-fallbacks=0",
                   f"--jobs={a.jobs}"] + defines(
                       ["T=" + ",".join(a.dtypes),
                        "N=" + ",".join(map(str, a.n))] + flags)
            dt, _ = run(cmd)
            with open(os.path.join(bundle, "index.json")) as f:
                count = len(json.load(f)["kernels"])
            per = dt / max(count, 1)
            med = statistics.median(medians)
            every += medians
            total_s += dt
            total_variants += count
            print(f"| {kernel} | {med * 1e3:.0f} ({min(medians) * 1e3:.0f}–"
                  f"{max(medians) * 1e3:.0f}) | {per * 1e3:.0f} "
                  f"({count} variants) |")
            results.append({"kernel": kernel, "process_median_s": med,
                            "process_min_s": min(medians),
                            "process_max_s": max(medians),
                            "in_process_s_per_variant": per,
                            "variants": count})
        med = statistics.median(every)
        print(f"| all {len(KERNELS)} kernels | {med * 1e3:.0f} "
              f"({min(every) * 1e3:.0f}–{max(every) * 1e3:.0f}) | "
              f"{total_s / max(total_variants, 1) * 1e3:.0f} "
              f"({total_variants} variants) |")
        results.append({"kernel": "all", "process_median_s": med,
                        "process_min_s": min(every),
                        "process_max_s": max(every),
                        "in_process_s_per_variant":
                            total_s / max(total_variants, 1),
                        "variants": total_variants})
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
