#!/usr/bin/env python3
"""Collects the seed corpora of the fuzz targets from the repository.

Usage: fuzz/collect-corpus.py OUT_DIR

Writes OUT_DIR/<target>/<name>: .qk descriptions (kernels/, test/) for
quack-fuzz-qk and quack-fuzz-compile; .mlir files that use the quack dialect,
whole and split at `// -----`, for quack-fuzz-mlir; layout and swizzle texts
found in the tests (#quack.layout<...>, "shape:stride" strings in the layout
unit tests) plus a few hand-picked ones for quack-fuzz-layout.
"""

import hashlib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LAYOUT_SEEDS = [
    "8:1", "(4,8)", "(4,8):(8,1)", "(2,(3,4)):(1,(2,6))", "(4,2):(-1,4)",
    "((2,2),(4,2)):((1,8),(2,16))", "(8,4):(0,1)", "(3,5):(5,1)", "1:0",
    "(2,3,4):(12,4,1)", "Sw<3,4,3>", "Sw<2,3,-3>",
]


def files(top, suffixes):
    for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
        for name in sorted(names):
            if name.endswith(suffixes):
                yield os.path.join(dirpath, name)


def put(out, target, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    counts = {}

    def add(target, data):
        put(out, target, data)
        counts[target] = counts.get(target, 0) + 1

    for path in list(files("kernels", (".qk",))) + list(files("test", (".qk",))):
        text = open(path, encoding="utf-8", errors="replace").read()
        add("qk", text)
        add("compile", text)
    for path in files("test", (".mlir",)):
        text = open(path, encoding="utf-8", errors="replace").read()
        if "quack" not in text:
            continue
        add("mlir", text)
        for chunk in re.split(r"^// -----\s*$", text, flags=re.M):
            if "quack" in chunk:
                add("mlir", chunk)
    layouts = set(LAYOUT_SEEDS)
    for path in list(files("test", (".mlir",))) + list(
            files("unittests/Layout", (".cpp",))):
        text = open(path, encoding="utf-8", errors="replace").read()
        layouts.update(re.findall(r"#quack\.layout<([^>\"]*)>", text))
        layouts.update(
            s for s in re.findall(r'"([-0-9(),: ]+)"', text) if ":" in s)
    for text in sorted(layouts):
        add("layout", text)
    for target in sorted(counts):
        print(f"{target}: {counts[target]} seeds in {os.path.join(out, target)}")


if __name__ == "__main__":
    main()
