#!/usr/bin/env bash
#===- build-catalogue.sh - compile the kernel catalogue into bundles -----===#
#
# Usage: scripts/build-catalogue.sh QUACKC OUT_DIR [N_LIST] [T_LIST] [ARGS...]
#
# Compiles every kernel of kernels/*.qk for T in T_LIST (default
# bf16,f16,f32) and N in N_LIST (default 256..16384 by powers of two), every
# alignment class, and the flag settings the Python ops use, into one bundle
# per description under OUT_DIR (OUT_DIR/<name>/index.json).
#
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
QUACKC=$1
OUT=$2
NS=${3:-256,512,1024,2048,4096,8192,16384}
TS=${4:-bf16,f16,f32}
shift $(( $# < 4 ? $# : 4 ))
# Further arguments go to quackc (e.g. --arch=sm_90a --fail-on-spills).

# Weights follow the activation type (TW=T); flags as the Python ops use them.
declare -A FLAGS=(
  [rmsnorm]="-D RESIDUAL=false,true -D BIAS=false -D OFFSET=false"
  [layernorm]="-D BIAS=true,false"
  [softmax]=""
  [cross_entropy]="-D IGNORE=false,true"
)

mkdir -p "$OUT"
for qk in "$ROOT"/kernels/*.qk; do
  name=$(basename "$qk" .qk)
  rm -rf "${OUT:?}/$name"
  # shellcheck disable=SC2086
  "$QUACKC" "$qk" --bundle="$OUT/$name" -D T="$TS" -D TW=T -D N="$NS" \
    ${FLAGS[$name]:-} "$@" | tail -n 1
done
