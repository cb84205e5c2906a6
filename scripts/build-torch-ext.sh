#!/usr/bin/env bash
# Builds _quack_fast, the eager ops' launch path in C++
# (python/quack_mlir/csrc/fast.cpp), into OUT_DIR.
#
#   scripts/build-torch-ext.sh OUT_DIR [PYTHON]
#
# PYTHON (default python3) is the interpreter the module is for: its
# headers and extension suffix are used. Torch's headers and libraries come
# from the torch that $TORCH_PYTHON (default: PYTHON) imports; that torch
# must be the version the GPU machine runs, and PYTHON's minor version that
# machine's Python. The package loads the module from beside
# libquack_runtime.so or from $QUACK_MLIR_FAST_LIB; put OUT_DIR = the
# runtime's directory (build/lib) and nothing else needs setting.
# QUACK_MLIR_FAST=0 turns the module off at run time.
#
# QUACK_FAST_CPU_TESTING=1 builds the variant the CPU tests use, which takes
# CPU tensors for device 0's (python/tests/test_fast_cpu.py); the package
# loads that one only when QUACK_MLIR_FAST_TESTING=1.
#
# Needs g++ (C++17) and the CUDA toolkit's headers ($CUDA_HOME, default
# /usr/local/cuda); about a minute of one core.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ "${1:0:1}" = "-" ]; then
  echo "usage: $0 OUT_DIR [PYTHON]" >&2
  exit 2
fi
OUT=$1
PY=${2:-python3}
TORCH_PY=${TORCH_PYTHON:-$PY}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRC=$HERE/python/quack_mlir/csrc/fast.cpp
CUDA=${CUDA_HOME:-/usr/local/cuda}
CXX=${CXX:-g++}

command -v "$PY" >/dev/null 2>&1 || {
  echo "error: no Python interpreter '$PY'" >&2; exit 1; }
read -r PYINC SUFFIX < <("$PY" -c '
import sysconfig
print(sysconfig.get_paths()["include"], sysconfig.get_config_var("EXT_SUFFIX"))')
[ -f "$PYINC/Python.h" ] || {
  echo "error: $PY has no Python.h in $PYINC (install its development headers)" >&2
  exit 1; }
TORCH_INFO=$("$TORCH_PY" -c '
import os, torch
print(os.path.dirname(torch.__file__), int(torch._C._GLIBCXX_USE_CXX11_ABI),
      torch.__version__)' 2>/dev/null) || {
  echo "error: $TORCH_PY cannot import torch (set TORCH_PYTHON to an" \
       "interpreter that can)" >&2
  exit 1; }
read -r TORCH ABI VERSION <<<"$TORCH_INFO"
[ -f "$CUDA/include/cuda_runtime_api.h" ] || {
  echo "error: no CUDA headers in $CUDA/include (set CUDA_HOME)" >&2; exit 1; }

TESTING=()
[ "${QUACK_FAST_CPU_TESTING:-}" = 1 ] && TESTING=(-DQUACK_FAST_CPU_TESTING)

mkdir -p "$OUT"
DEST=$OUT/_quack_fast$SUFFIX
# -O2 and no debug information: the module's job is to be short.
"$CXX" -std=c++17 -O2 -fPIC -shared -fvisibility=hidden \
  -D_GLIBCXX_USE_CXX11_ABI="$ABI" \
  -DQUACK_FAST_TORCH_VERSION="\"$VERSION\"" \
  "${TESTING[@]}" \
  -isystem "$TORCH/include" -isystem "$TORCH/include/torch/csrc/api/include" \
  -isystem "$CUDA/include" -isystem "$PYINC" \
  -Wall -Wextra -Wno-unused-parameter \
  "$SRC" -o "$DEST.tmp" \
  -L"$TORCH/lib" -lc10 -lc10_cuda -ltorch_cpu -ltorch_python
mv "$DEST.tmp" "$DEST"
echo "built $DEST (torch $VERSION, $("$PY" -c 'import sys; print(sys.version.split()[0])'))"
