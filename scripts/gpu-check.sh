#!/usr/bin/env bash
#===- gpu-check.sh - GPU tests and benchmark of the Python package -------===#
#
# Usage: scripts/gpu-check.sh BUILD_DIR BUNDLE_DIR [OUT_DIR]
#
# On a machine with a Hopper GPU and torch: runs the GPU pytest suite (each
# test under a timeout) and then the forward benchmarks (rmsnorm, softmax,
# layernorm; python/benchmarks/bench.py), writing logs and JSON to OUT_DIR
# (default ./gpu-check-out). BUILD_DIR holds lib/libquack_runtime.so (or the
# library itself); BUNDLE_DIR is a kernel bundle (index.json) or a bundle
# root (a directory of bundles, e.g. one `quackc X.qk --bundle=ROOT/X` per
# kernel). Environment: PYTHON (default python3), TEST_TIMEOUT seconds per
# test (default 600), BENCH_ARGS extra benchmark arguments (e.g.
# "--ops softmax").
#
# Where the ops' C++ launch path is built beside the runtime for this Python
# (scripts/build-torch-ext.sh) and loads, the suite runs with it required
# (QUACK_MLIR_FAST=1), and then the op tests run a second time on the
# Python path alone (QUACK_MLIR_FAST=0), so that both paths are tested.
# environment.txt says which; a module that does not load is named there
# and the suite runs once, on the Python path.
#
#===----------------------------------------------------------------------===#
set -uo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 BUILD_DIR BUNDLE_DIR [OUT_DIR]" >&2
  exit 2
fi
BUILD_DIR=$(cd "$1" && pwd) || { echo "no build dir $1" >&2; exit 2; }
BUNDLE_DIR=$(cd "$2" && pwd) || { echo "no bundle dir $2" >&2; exit 2; }
OUT_DIR=${3:-gpu-check-out}
mkdir -p "$OUT_DIR" && OUT_DIR=$(cd "$OUT_DIR" && pwd)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
TEST_TIMEOUT=${TEST_TIMEOUT:-600}

LIB=""
for f in "$BUILD_DIR/lib/libquack_runtime.so" "$BUILD_DIR/libquack_runtime.so"; do
  [ -f "$f" ] && LIB=$f && break
done
if [ -z "$LIB" ]; then
  echo "error: no libquack_runtime.so in $BUILD_DIR or $BUILD_DIR/lib" >&2
  exit 2
fi
BUNDLES=$(ls -d "$BUNDLE_DIR"/index.json "$BUNDLE_DIR"/*/index.json 2>/dev/null)
if [ -z "$BUNDLES" ]; then
  echo "error: no index.json in $BUNDLE_DIR or its subdirectories: neither a" \
    "kernel bundle nor a bundle root" >&2
  exit 2
fi
export QUACK_MLIR_RUNTIME_LIB=$LIB
export QUACK_MLIR_BUNDLE=$BUNDLE_DIR
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
# The C++ launch path: required where it is built beside the runtime and
# loads (a module that does not load is reported, and the suite runs on the
# Python path alone, rather than failing every op's test).
FAST=""
FAST_NOTE="not built beside the runtime for this Python"
SUFFIX=$("$PYTHON" -c 'import importlib.machinery as m; print(m.EXTENSION_SUFFIXES[0])')
if [ "${QUACK_MLIR_FAST:-}" = 0 ]; then
  FAST_NOTE="turned off (QUACK_MLIR_FAST=0)"
elif [ -f "$(dirname "$LIB")/_quack_fast$SUFFIX" ]; then
  FAST_NOTE=$(env -u QUACK_MLIR_FAST "$PYTHON" -c '
from quack_mlir import _fast
i = _fast.info()
print("in use, " + i["path"] if i["active"] else "does not load: " + i["reason"])' 2>&1 | tail -1)
  if [[ $FAST_NOTE == "in use, "* ]]; then
    FAST=1
    export QUACK_MLIR_FAST=1
  fi
fi

{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(uname -n) $(uname -m)"
  echo "runtime: $LIB"
  echo "bundle: $BUNDLE_DIR"
  for b in $BUNDLES; do
    echo "  $(dirname "$b"): $(grep -c '"metadata"' "$b") variants"
  done
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' 2>&1
  echo "C++ launch path: $FAST_NOTE"
} | tee "$OUT_DIR/environment.txt"

# Per-test timeouts with pytest-timeout when installed; otherwise a timeout
# on the whole run (a hung kernel must not hang the check).
TIMEOUT_ARGS=()
if "$PYTHON" -c 'import pytest_timeout' 2>/dev/null; then
  TIMEOUT_ARGS=(--timeout="$TEST_TIMEOUT")
  WHOLE=()
else
  echo "note: pytest-timeout not installed; one timeout for the whole run"
  WHOLE=(timeout --signal=KILL 3600)
fi

echo "== pytest"
"${WHOLE[@]}" "$PYTHON" -m pytest "$ROOT/python/tests" -rs -v \
  "${TIMEOUT_ARGS[@]}" --junitxml="$OUT_DIR/pytest.xml" 2>&1 |
  tee "$OUT_DIR/pytest.log"
TEST_RC=${PIPESTATUS[0]}
if [ -n "$FAST" ]; then
  echo "== pytest (the Python launch path alone)"
  OP_TESTS=()
  for t in "$ROOT"/python/tests/test_*_gpu.py; do
    [ "$(basename "$t")" = test_fast_gpu.py ] || OP_TESTS+=("$t")
  done
  QUACK_MLIR_FAST=0 "${WHOLE[@]}" "$PYTHON" -m pytest "${OP_TESTS[@]}" -rs -q \
    "${TIMEOUT_ARGS[@]}" --junitxml="$OUT_DIR/pytest-python-path.xml" 2>&1 |
    tee "$OUT_DIR/pytest-python-path.log"
  PY_RC=${PIPESTATUS[0]}
  [ "$TEST_RC" -eq 0 ] && TEST_RC=$PY_RC
fi

echo "== benchmark"
# shellcheck disable=SC2086
timeout --signal=KILL 3600 "$PYTHON" "$ROOT/python/benchmarks/bench.py" \
  --out "$OUT_DIR/bench.json" ${BENCH_ARGS:-} 2>"$OUT_DIR/bench.err" |
  tee "$OUT_DIR/bench.md"
BENCH_RC=${PIPESTATUS[0]}

echo "pytest exit $TEST_RC, benchmark exit $BENCH_RC; logs in $OUT_DIR"
[ "$TEST_RC" -eq 0 ] && [ "$BENCH_RC" -eq 0 ]
