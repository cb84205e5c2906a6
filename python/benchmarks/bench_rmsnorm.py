#!/usr/bin/env python3
"""RMSNorm forward bandwidth: `bench.py --ops rmsnorm` (kept for its old
command line; see bench.py for the methodology).

    QUACK_MLIR_BUNDLE=DIR QUACK_MLIR_BUILD_DIR=BUILD \
        python3 bench_rmsnorm.py [--out results.json]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(default_ops=("rmsnorm",)))
