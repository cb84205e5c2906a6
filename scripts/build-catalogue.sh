#!/usr/bin/env bash
#===- build-catalogue.sh - compile the kernel catalogue into bundles -----===#
#
# Usage: scripts/build-catalogue.sh QUACKC OUT_DIR [N_LIST] [T_LIST] [ARGS...]
#
# Compiles every kernel of kernels/*.qk for T in T_LIST (default
# bf16,f16,f32) and N in N_LIST (default 256..16384 by powers of two), every
# alignment class, and the flag settings the Python ops use, into one bundle
# per description under OUT_DIR (OUT_DIR/<name>/index.json), and, for each
# tuning target of the architecture (TUNINGS, default h100; empty for
# none), one bundle per description with the variants whose config that
# target's table chooses (OUT_DIR/<name>-<target>), which the runtime uses
# on the devices the target names.
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
  for target in ${TUNINGS-h100}; do
    rm -rf "${OUT:?}/$name-$target"
    # Its notes name every variant it leaves to the architecture's bundle:
    # shown only where it fails.
    log=$OUT/.$name-$target.log
    # shellcheck disable=SC2086
    if ! "$QUACKC" "$qk" --bundle="$OUT/$name-$target" --tuning="$target" \
        -D T="$TS" -D TW=T -D N="$NS" ${FLAGS[$name]:-} "$@" >"$log" 2>&1; then
      cat "$log" >&2
      exit 1
    fi
    rm -f "$log"
    if ls "$OUT/$name-$target"/*.cubin >/dev/null 2>&1; then
      echo "$OUT/$name-$target: $(ls "$OUT/$name-$target"/*.cubin | wc -l)" \
        "variants for --tuning=$target"
    else
      rm -rf "${OUT:?}/$name-$target"  # its table names no kernel of $name
    fi
  done
done
