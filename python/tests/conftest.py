"""pytest setup: make python/ importable and describe the environment."""

import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__),
                                                os.pardir)))

# Tests choose their kernels: bundles, and the on-demand compiler only where
# a test turns it on (test_jit.py), even where quackc is on PATH.
os.environ.setdefault("QUACK_MLIR_JIT", "0")
