#!/usr/bin/env bash
#===- setup.sh - install dependencies, build quack, compile the catalogue --===#
#
# Usage: scripts/setup.sh [--deps-only] [BUILD_DIR]
#
# On a fresh Debian 12 machine: installs LLVM/MLIR 22 and the build tools from
# Debian's packages (as root, or through sudo), builds the compiler, the
# runtime and the tests with CMake + Ninja, then compiles the kernel
# catalogue into BUILD_DIR/kernels (an ahead-of-time bundle per description)
# and prints what it produced. --deps-only stops after installing.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEPS_ONLY=0
if [ "${1:-}" = "--deps-only" ]; then
  DEPS_ONLY=1
  shift
fi
BUILD=${1:-$ROOT/build}
LLVM_BIN=/usr/lib/llvm-22/bin

PACKAGES=(cmake ninja-build g++ libgtest-dev
          llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
          python3 python3-pip)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "== installing: ${missing[*]}"
  $SUDO apt-get update -q
  if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
      "${missing[@]}"; then
    echo "error: could not install ${missing[*]}." >&2
    echo "LLVM/MLIR 22 come from Debian 12's security suite; check that" >&2
    echo "/etc/apt/sources.list(.d) includes bookworm-security." >&2
    exit 1
  fi
fi
if ! python3 -m pytest --version >/dev/null 2>&1; then
  echo "== installing pytest"
  python3 -m pip install -q pytest || \
    python3 -m pip install -q --break-system-packages pytest
fi
if ! command -v ptxas >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/ptxas ]; then
  echo "note: ptxas (CUDA Toolkit) not found: cubins cannot be assembled and"
  echo "      the tests that need it will be reported as unsupported."
fi
[ "$DEPS_ONLY" -eq 1 ] && exit 0

echo "== configuring $BUILD"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DLLVM_EXTERNAL_LIT="$LLVM_BIN/lit" >/dev/null
echo "== building"
ninja -C "$BUILD" quackc quack-opt QuackRuntime

echo "== compiling the kernel catalogue into $BUILD/kernels"
export PATH="$PATH:/usr/local/cuda/bin"
"$ROOT/scripts/build-catalogue.sh" "$BUILD/bin/quackc" "$BUILD/kernels"
echo "== produced"
for d in "$BUILD"/kernels/*/; do
  printf '  %-40s %3d kernels\n' "$d" "$(ls "$d"/*.cubin | wc -l)"
done
echo "runtime: $BUILD/lib/libquack_runtime.so"
