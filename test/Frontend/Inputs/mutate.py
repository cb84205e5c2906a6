#!/usr/bin/env python3
"""Runs quackc over truncated and mutated copies of the kernel catalogue.

Usage: mutate.py QUACKC KERNEL_DIR WORK_DIR [--seed S] [--mutants N]
                 [--stride B] [--jobs J]

For every KERNEL_DIR/*.qk: every prefix at a stride of B bytes (plus the
whole file less its last byte) and N seeded mutations (byte flips, span
deletions, token swaps, duplications and insertions of tokens the language
uses). Each input is compiled with `quackc --emit=quack -D T=bf16 -D N=64`
plus a binding for every other compile-time parameter of the original file
(another type parameter: f32; a flag: true or false, by input; anything
else: 64), and every other input also with `--emit=gpu`. quackc must exit with 0 or 1
(a signal or any other exit code is a failure) and must print `error:` on
stderr whenever it exits with 1. Failing inputs are kept in WORK_DIR and
listed with the command that reproduces them. Deterministic for a given
seed.
"""

import argparse
import concurrent.futures
import os
import random
import re
import subprocess
import sys

TOKEN = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|[0-9][0-9.eE+-]*|->|\S")
INSERTS = [
    "(", ")", "[", "]", "{", "}", ",", ":", "=", "-", "+", "*", "/", "->",
    "<", ">", "0", "1", "-1", "1e400", "0.5", "99999999999999999999", "M",
    "N", "T", "x", "f32", "bf16", "i1", "kernel", "sum(", "mean(", "max(",
    "rsqrt(", "exp(", "x[", "\n", "#", "\t", "\x00", "\xff", "é",
]


def tokens(text):
    return [(m.start(), m.end()) for m in TOKEN.finditer(text)]


def mutate(text, rng):
    """One to three random edits of `text`."""
    for _ in range(rng.randint(1, 3)):
        toks = tokens(text)
        kind = rng.randrange(6)
        if kind == 0 and text:  # flip a byte
            i = rng.randrange(len(text))
            text = text[:i] + chr(rng.randrange(1, 128)) + text[i + 1:]
        elif kind == 1 and text:  # delete a span
            i = rng.randrange(len(text))
            text = text[:i] + text[i + rng.randint(1, 12):]
        elif kind == 2 and len(toks) > 1:  # swap two tokens
            (a0, a1), (b0, b1) = sorted(rng.sample(toks, 2))
            text = (text[:a0] + text[b0:b1] + text[a1:b0] + text[a0:a1] +
                    text[b1:])
        elif kind == 3 and toks:  # delete a token
            a0, a1 = rng.choice(toks)
            text = text[:a0] + text[a1:]
        elif kind == 4 and toks:  # duplicate a token
            a0, a1 = rng.choice(toks)
            text = text[:a1] + " " + text[a0:a1] + text[a1:]
        else:  # insert a token
            i = rng.randrange(len(text) + 1)
            text = text[:i] + rng.choice(INSERTS) + text[i:]
    return text


GENERICS = re.compile(r"kernel\s+\w+\s*<([^>]*)>")


def bindings(text, rng):
    """-D arguments for the compile-time parameters declared in `text`."""
    values = {"T": "bf16", "N": "64"}
    for group in GENERICS.findall(text):
        for param in group.split(","):
            name, _, kind = (x.strip() for x in param.partition(":"))
            if not name or name in values:
                continue
            if kind == "bool":
                values[name] = rng.choice(["true", "false"])
            elif re.search(r":\s*" + re.escape(name) + r"\s*\[", text):
                values[name] = "f32"
            else:
                values[name] = "64"
    args = []
    for name, value in values.items():
        args += ["-D", f"{name}={value}"]
    return args


def run(quackc, path, emit, defs):
    cmd = [quackc, path, "--emit=" + emit] + defs + ["-o", os.devnull]
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=60)
    except subprocess.TimeoutExpired:
        return cmd, "timed out after 60 s"
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode < 0:
        return cmd, f"killed by signal {-p.returncode}:\n{err[-2000:]}"
    if p.returncode not in (0, 1):
        return cmd, f"exit code {p.returncode}:\n{err[-2000:]}"
    if p.returncode == 1 and "error:" not in err:
        return cmd, f"exit code 1 without 'error:':\n{err[-2000:]}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("quackc")
    ap.add_argument("kernels")
    ap.add_argument("work")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--mutants", type=int, default=20)
    ap.add_argument("--stride", type=int, default=41)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()

    os.makedirs(args.work, exist_ok=True)
    rng = random.Random(args.seed)
    inputs = []
    for name in sorted(os.listdir(args.kernels)):
        if not name.endswith(".qk"):
            continue
        with open(os.path.join(args.kernels, name), encoding="utf-8") as f:
            text = f.read()
        stem = name[:-3]
        cuts = sorted(set(range(0, len(text), args.stride)) | {len(text) - 1})
        for n in cuts:
            inputs.append((f"{stem}-prefix{n}.qk", text[:n],
                           bindings(text, rng)))
        for i in range(args.mutants):
            inputs.append((f"{stem}-mutant{i}.qk", mutate(text, rng),
                           bindings(text, rng)))

    jobs = []
    for i, (name, text, defs) in enumerate(inputs):
        path = os.path.join(args.work, name)
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)
        jobs.append((path, "quack", defs))
        if i % 2 == 0:
            jobs.append((path, "gpu", defs))

    failures = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for result in pool.map(lambda j: run(args.quackc, *j), jobs):
            if result:
                failures.append(result)
    for cmd, why in failures:
        print("FAIL: " + " ".join(cmd) + "\n  " + why.replace("\n", "\n  "))
    print(f"{len(inputs)} inputs, {len(jobs)} runs, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
