#!/usr/bin/env bash
#===- sanitize.sh - ASan + UBSan over the libraries that read user input --===#
#
# Usage: scripts/sanitize.sh [BUILD_DIR]     (default: build-asan/)
#
# Configures BUILD_DIR with -fsanitize=address,undefined (the system C++
# compiler; gcc is fine) and QUACK_ENABLE_COMPILER=OFF, so that no MLIR code
# is compiled, builds the layout library and the runtime (metadata JSON
# reader, kernel metadata, C API, and its launches against the stand-in CUDA
# driver of unittests/Runtime) with their GoogleTests, and runs the tests.
# Any sanitizer report fails the run. The front end and the dialect are
# covered by the fuzzers instead (scripts/fuzz.sh, docs/robustness.md).
# Takes about two minutes on two cores from scratch, seconds when built.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-$ROOT/build-asan}
JOBS=${QUACK_SANITIZE_JOBS:-1}
FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g1"

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DQUACK_ENABLE_COMPILER=OFF -DQUACK_ENABLE_TESTS=ON \
    -DCMAKE_CXX_FLAGS="$FLAGS" -DCMAKE_C_FLAGS="$FLAGS" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
fi
ninja -C "$BUILD" -j"$JOBS" QuackLayoutTests QuackRuntimeTests \
  QuackRuntimeLaunchTests

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in QuackLayoutTests QuackRuntimeTests QuackRuntimeLaunchTests; do
  echo "== $t (ASan + UBSan)"
  if ! "$BUILD/unittests/$t" --gtest_brief=1; then
    echo "sanitize.sh: $t failed" >&2
    status=1
  fi
done
exit $status
