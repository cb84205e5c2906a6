#!/usr/bin/env bash
#===- fuzz.sh - build and run one libFuzzer target for a fixed time ------===#
#
# Usage: scripts/fuzz.sh TARGET SECONDS [extra libFuzzer flags...]
#   TARGET: layout | qk | mlir | compile (quack-fuzz-TARGET), or `build` to
#           only configure and build every target.
#
# Configures $QUACK_FUZZ_BUILD (default build-fuzz/) with clang and
# -DQUACK_ENABLE_FUZZERS=ON (every quack library instrumented for coverage,
# ASan and UBSan), builds the target with -j${QUACK_FUZZ_JOBS:-1}, collects
# the seed corpus from kernels/ and test/ (fuzz/collect-corpus.py) and runs
# the fuzzer for SECONDS. The growing corpus stays in BUILD/corpus/TARGET;
# crashes land in BUILD/artifacts/TARGET/ and make the script fail.
# Reproduce one with: BUILD/fuzz/quack-fuzz-TARGET CRASH_FILE
# (QUACK_FUZZ_VERBOSE=1 prints the diagnostics). docs/robustness.md has more.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${QUACK_FUZZ_BUILD:-$ROOT/build-fuzz}
JOBS=${QUACK_FUZZ_JOBS:-1}

if [ $# -lt 1 ]; then
  sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
TARGET=$1
SECONDS_TO_RUN=${2:-60}
shift 2 || shift $#

case "$TARGET" in
  layout|qk|mlir|compile|build) ;;
  *) echo "fuzz.sh: unknown target '$TARGET' (layout, qk, mlir, compile)" >&2
     exit 2 ;;
esac

CXX_CLANG=${QUACK_FUZZ_CXX:-}
if [ -z "$CXX_CLANG" ]; then
  for c in clang++ clang++-22 clang++-19 clang++-16 clang++-14; do
    if command -v "$c" >/dev/null; then CXX_CLANG=$c; break; fi
  done
fi
if [ -z "$CXX_CLANG" ]; then
  echo "fuzz.sh: no clang++ found (apt-get install clang); libFuzzer needs clang" >&2
  exit 3
fi
CC_CLANG=${CXX_CLANG/clang++/clang}

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$CC_CLANG" -DCMAKE_CXX_COMPILER="$CXX_CLANG" \
    -DQUACK_ENABLE_FUZZERS=ON -DQUACK_ENABLE_TESTS=OFF \
    ${QUACK_FUZZ_CMAKE_ARGS:-}
fi

if [ "$TARGET" = build ]; then
  ninja -C "$BUILD" -j"$JOBS" quack-fuzzers
  exit 0
fi
ninja -C "$BUILD" -j"$JOBS" "quack-fuzz-$TARGET"

python3 "$ROOT/fuzz/collect-corpus.py" "$BUILD/seeds" >/dev/null
CORPUS=$BUILD/corpus/$TARGET
ARTIFACTS=$BUILD/artifacts/$TARGET
mkdir -p "$CORPUS" "$ARTIFACTS"
LOG=$BUILD/fuzz-$TARGET.log

# Inputs beyond these sizes are ignored by the targets anyway.
case "$TARGET" in
  layout) MAX_LEN=256 ;;
  *) MAX_LEN=4096 ;;
esac

echo "== quack-fuzz-$TARGET for ${SECONDS_TO_RUN}s (log: $LOG)"
set +e
"$BUILD/fuzz/quack-fuzz-$TARGET" -max_total_time="$SECONDS_TO_RUN" \
  -max_len="$MAX_LEN" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
  -artifact_prefix="$ARTIFACTS/" "$@" "$CORPUS" "$BUILD/seeds/$TARGET" \
  >"$LOG" 2>&1
RC=$?
set -e
grep -E '^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::average_exec_per_sec)' "$LOG" || true
if [ $RC -ne 0 ]; then
  grep -E 'ERROR|runtime error|fuzzer:|SUMMARY|Test unit written' "$LOG" | head -20
  echo "fuzz.sh: quack-fuzz-$TARGET failed (exit $RC); see $LOG" >&2
  exit 1
fi
echo "fuzz.sh: quack-fuzz-$TARGET: no crash"
