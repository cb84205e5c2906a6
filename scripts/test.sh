#!/usr/bin/env bash
#===- test.sh - run every test that this machine can run -----------------===#
#
# Usage: scripts/test.sh [BUILD_DIR]
#
# Builds what is missing, then runs check-quack (lit: dialect, passes,
# front end, quackc, ptxas over the catalogue; GoogleTest: layout algebra and
# runtime) and the Python tests (GPU tests skip, visibly, without a GPU).
#
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-$ROOT/build}
export PATH="$PATH:/usr/local/cuda/bin"

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit
fi
echo "== check-quack"
ninja -C "$BUILD" check-quack

echo "== python tests"
export QUACK_MLIR_BUILD_DIR="$BUILD"
python3 -m pytest "$ROOT/python/tests" -rs -q
