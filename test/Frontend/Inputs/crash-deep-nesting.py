"""Writes .qk files whose expressions or blocks nest 100000 levels deep.

Usage: crash-deep-nesting.py KIND OUT   (KIND: minus, parens, chain, if)
"""
import sys

DEPTH = 100000
HEAD = "kernel k<N, F: bool>(x: f32[M, N]) -> (y: f32[M, N]) {\n"
kind, out = sys.argv[1], sys.argv[2]
if kind == "minus":
    body = "  y = " + "-" * DEPTH + "x\n"
elif kind == "parens":
    body = "  y = " + "(" * DEPTH + "x" + ")" * DEPTH + "\n"
elif kind == "chain":
    body = "  y = x" + " + x" * DEPTH + "\n"
elif kind == "if":
    body = "if F {\n" * DEPTH + "  y = x\n" + "}\n" * DEPTH
else:
    sys.exit("unknown kind " + kind)
with open(out, "w") as f:
    f.write(HEAD + body + "}\n")
