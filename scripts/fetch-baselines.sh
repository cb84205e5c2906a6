#!/usr/bin/env bash
#===- fetch-baselines.sh - the baseline packages for gpu-bench.sh -------===#
#
# Usage: scripts/fetch-baselines.sh [OUT_DIR]
#
# On a machine with pip and PyPI (the GPU machine needs none): downloads the
# packages of the benchmark's baselines for CPython 3.12 on x86-64 Linux
# into OUT_DIR (default .whl/ at the repository root, which gpu-bench.sh
# installs from): liger-kernel 0.8.5, and QuACK (quack-kernels 0.6.5) with
# what it needs beyond torch: nvidia-cutlass-dsl 4.8.1, apache-tvm-ffi,
# torch-c-dlpack-ext and einops.
#
# Since 4.4, nvidia-cutlass-dsl is a metadata-only wheel whose .pth file
# puts nvidia_cutlass_dsl/dsl_packages on sys.path; the `cutlass` package
# itself is spread over nvidia-cutlass-dsl-libs-core (its Python sources:
# cutlass.cutlass_dsl, cutlass.cute, ...), -libs-base (cutlass._mlir) and
# -libs-cu13 (the compiled IR library, and cu13/: the runtime library
# libcute_dsl_runtime.so with its header). A run without -libs-core fails
# to import QuACK with "No module named 'cutlass.cutlass_dsl'"; one without
# the runtime library imports, but every kernel fails to compile ("The
# CUTE_DSL runtime library could not be resolved"): cutlass looks for it in
# cu13/lib beside dsl_packages. libs-core is kept as a wheel; libs-base and
# libs-cu13 (about 280 MB unpacked) are unpacked and packed as two trees
# that gpu-bench.sh extracts over the installed wheels:
# cutlass-dsl-4.8.1.tar.xz (about 52 MB: the IR library and the Python
# bindings) and cutlass-dsl-runtime-4.8.1.tar.xz (about 13 MB: cu13/lib
# and cu13/include, without the stubs of other platforms and the static
# library).
# gpu-bench.sh adds dsl_packages to PYTHONPATH itself, as the .pth file
# would in a site directory.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:-$ROOT/.whl}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

download() {
  "$PYTHON" -m pip download -q --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$1" "${@:2}"
}

echo "== wheels into $OUT"
download "$OUT" liger-kernel==0.8.5 quack-kernels==0.6.5 \
  nvidia-cutlass-dsl==4.8.1 nvidia-cutlass-dsl-libs-core==4.8.1 \
  apache-tvm-ffi==0.1.15.post2 torch-c-dlpack-ext==0.1.5 einops==0.8.2

TAR=$OUT/cutlass-dsl-4.8.1.tar.xz
RUNTIME_TAR=$OUT/cutlass-dsl-runtime-4.8.1.tar.xz
if [ -f "$TAR" ] && [ -f "$RUNTIME_TAR" ]; then
  echo "== $TAR and $RUNTIME_TAR exist; not rebuilt"
else
  TMP=$(mktemp -d)
  trap 'rm -rf "$TMP"' EXIT
  echo "== nvidia-cutlass-dsl-libs-base and -libs-cu13, unpacked"
  download "$TMP" nvidia-cutlass-dsl-libs-base==4.8.1 \
    nvidia-cutlass-dsl-libs-cu13==4.8.1
  mkdir "$TMP/tree" "$TMP/runtime"
  for w in "$TMP"/nvidia_cutlass_dsl_libs_base-*.whl \
           "$TMP"/nvidia_cutlass_dsl_libs_cu13-*.whl; do
    "$PYTHON" -m zipfile -e "$w" "$TMP/tree"
  done
  mkdir -p "$TMP/runtime/nvidia_cutlass_dsl"
  mv "$TMP/tree/nvidia_cutlass_dsl/cu13" "$TMP/runtime/nvidia_cutlass_dsl/"
  rm -rf "$TMP/runtime/nvidia_cutlass_dsl/cu13/lib/stubs" \
    "$TMP"/runtime/nvidia_cutlass_dsl/cu13/lib/*.a
  if [ ! -f "$TMP/runtime/nvidia_cutlass_dsl/cu13/lib/libcute_dsl_runtime.so" ]; then
    echo "error: no cu13/lib/libcute_dsl_runtime.so in" \
      "nvidia-cutlass-dsl-libs-cu13" >&2
    exit 1
  fi
  echo "== packing $TAR and $RUNTIME_TAR (xz -9e: several minutes)"
  XZ_OPT="-9e -T0" tar -C "$TMP/tree" -cJf "$TAR.part" .
  mv "$TAR.part" "$TAR"
  XZ_OPT="-9e -T0" tar -C "$TMP/runtime" -cJf "$RUNTIME_TAR.part" .
  mv "$RUNTIME_TAR.part" "$RUNTIME_TAR"
fi
ls -l "$OUT"
du -sh "$OUT"
