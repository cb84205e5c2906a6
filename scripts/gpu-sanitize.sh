#!/usr/bin/env bash
#===- gpu-sanitize.sh - compute-sanitizer over the catalogue kernels -----===#
#
# Usage: scripts/gpu-sanitize.sh BUILD_DIR BUNDLE_DIR [OUT_DIR]
#
# On a Hopper machine with torch and compute-sanitizer: runs the catalogue's
# GPU tests at shapes that exercise the N tail (N = 7, 1000) and the row
# bound (M not a multiple of the rows per CTA), and the cluster path's
# distributed shared memory exchange, under memcheck, racecheck,
# synccheck and initcheck, and prints each tool's error summary. Exits
# nonzero if any tool reports an error. QUACK_SANITIZE_SELECT replaces the
# pytest -k selection (e.g. "test_argmax" for one kernel's tests).
#
#===----------------------------------------------------------------------===#
set -uo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR BUNDLE_DIR [OUT_DIR]" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "$1" && pwd)
BUNDLE=$(cd "$2" && pwd)
OUT=${3:-gpu-sanitize-out}
mkdir -p "$OUT"
SANITIZER=${COMPUTE_SANITIZER:-compute-sanitizer}
command -v "$SANITIZER" >/dev/null 2>&1 ||
  SANITIZER=/usr/local/cuda/bin/compute-sanitizer

export QUACK_MLIR_RUNTIME_LIB="$BUILD/lib/libquack_runtime.so"
export QUACK_MLIR_BUNDLE="$BUNDLE"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
# racecheck looks at quack's kernels only: torch's float64 reductions,
# which the tests' references and error measures use, report shared-memory
# hazards of their own (at::native::reduce_kernel). Older sanitizers without
# kernel filters check everything.
RACE_FILTER=()
if "$SANITIZER" --help 2>&1 | grep -q -- "--kernel-name-exclude"; then
  RACE_FILTER=(--kernel-name-exclude kns=reduce_kernel)
fi
echo "racecheck filter: ${RACE_FILTER[*]:-none}"

# Small shapes with tails: every kernel family, bf16 and f32; and the
# cluster path at clusters of 2 (an odd N, a partial last CTA) and 16, three
# rows each.
SELECT="(catalogue and (-7- or 1000-f32)) or ((test_rmsnorm or test_softmax or test_layer_norm) and 1000-3)"
SELECT="$SELECT or (cluster and (bf16-N16390-M3 or bf16-N262144-M3 or f32-N131072-M3))"
# Sums over rows (the persistent grid): one CTA per row group, and a cluster
# of 2 with more rows than resident clusters, so that the loop reuses the
# exchange slots and mbarriers.
SELECT="$SELECT or (backward and (f32-7-4099 or bf16-16384-4099))"
# Loops over several bulk-copy buffers with rows short of the table
# bucket's N (one CTA of 128 or 1024 threads, clusters of 2).
SELECT="$SELECT or (backward and (bf16-6000-3 or bf16-12000-3 or f32-12000-3))"
# Row argmax: tails, a cluster of 2 with an odd N, and of 16.
SELECT="$SELECT or (test_argmax and (bf16-7-3 or f32-1000-3 or bf16-16390-3 or bf16-262144-3))"
SELECT=${QUACK_SANITIZE_SELECT:-$SELECT}

status=0
for tool in memcheck racecheck synccheck initcheck; do
  log="$OUT/$tool.log"
  filter=()
  [ "$tool" = racecheck ] && filter=("${RACE_FILTER[@]}")
  "$SANITIZER" --tool "$tool" "${filter[@]}" --error-exitcode 99 \
    python3 -m pytest "$ROOT/python/tests" -q -p no:cacheprovider \
    -k "$SELECT" >"$log" 2>&1
  rc=$?
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -n 1)
  tests=$(grep -E "passed|failed" "$log" | tail -n 1)
  echo "$tool: exit $rc; ${summary:-no summary}; $tests"
  [ "$rc" -ne 0 ] && status=1
done
exit $status
