#!/usr/bin/env bash
#===- tune-build.sh - phase 1 of config tuning: one bundle per config ----===#
#
# Usage: scripts/tune-build.sh QUACKC OUT_DIR KERNELS T_LIST N_LIST [ARGS...]
#
# For each catalogue kernel in KERNELS (comma-separated, e.g.
# cross_entropy_fwd,softmax_fwd), each T in T_LIST and each N in N_LIST
# (powers of two), compiles one bundle root per config: on the CTA-level
# path (N <= 16384) vectors per thread in 1, 2, 4, 8 and rows per CTA in 1,
# 2, 4, 8 (CTAs of 64 to 1024 threads); on the cluster path (N >= 8192)
# clusters of 2, 4, 8, 16 CTAs of 128, 256, 512 threads (up to 16 vectors
# per thread); configs that spill are left out; plus the model's own
# choice with the table of measured configs ignored (`default`), and the
# config the architecture's table gives (`table`). Roots are
# named OUT_DIR/<kernel>-<T>-N<N>-<config>; CTA-level roots force a cluster
# of 1 (kernels with sums over rows would take a cluster from 8192).
# Phase 2, on the GPU:
#
#   python3 python/benchmarks/tune.py --roots OUT_DIR/* --kernels ... \
#       --n ... --dtype T --table kernels/tuning/sm_90.tsv
#
# Further arguments go to quackc (default --arch=sm_90a). QUACK_TUNE_COPIES
# (comma-separated, default `global`) lists the copy paths to build each
# config with: `global,bulk` also builds every config with bulk copies into
# shared memory (roots named ...-bulk), and `tensor` with tensor copies
# (...-tensor); configs a copy path cannot serve are skipped.
# QUACK_TUNE_STAGES (comma-separated, default none) also builds each bulk
# or tensor config as a prefetching loop over that many shared-memory
# buffers (roots named ...-bulk-s3 for three). QUACK_TUNE_SUMS=shared also
# builds each config of a kernel with sums over rows with its partial sums
# in shared memory (roots named ...-sums-shared). QUACK_TUNE_KNOBS (e.g.
# `fma=1`) is added to every config, the model's own choice included, to
# tune the table for a knob the table does not record. QUACK_TUNE_ROWS
# (comma-separated, default 1,2,4,8) lists the rows per CTA tried on the
# CTA-level path (e.g. 1,2,4,8,16,32 for short rows, where one row is a
# few vectors).
#
#===----------------------------------------------------------------------===#
set -euo pipefail

if [ $# -lt 5 ]; then
  echo "usage: $0 QUACKC OUT_DIR KERNELS T_LIST N_LIST [ARGS...]" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
QUACKC=$1
OUT=$2
IFS=, read -r -a KERNELS <<<"$3"
IFS=, read -r -a TS <<<"$4"
IFS=, read -r -a NS <<<"$5"
shift 5
ARGS=("$@")
[ ${#ARGS[@]} -gt 0 ] || ARGS=(--arch=sm_90a)
IFS=, read -r -a COPIES <<<"${QUACK_TUNE_COPIES:-global}"
IFS=, read -r -a STAGES <<<"${QUACK_TUNE_STAGES:-}"
IFS=, read -r -a SUMS <<<"${QUACK_TUNE_SUMS:-}"
IFS=, read -r -a ROWS <<<"${QUACK_TUNE_ROWS:-1,2,4,8}"
KNOBS=${QUACK_TUNE_KNOBS:+,$QUACK_TUNE_KNOBS}
# A bad knob would make every compile fail, quietly: refuse it here.
if [ -n "$KNOBS" ] && ! "$QUACKC" "$ROOT/kernels/softmax.qk" \
    --kernel=softmax_fwd -D T=f32 -D N=64 --emit=quack -o /dev/null \
    --config="${KNOBS#,}"; then
  echo "QUACK_TUNE_KNOBS: quackc refuses '${KNOBS#,}'" >&2
  exit 1
fi
for sm in "${SUMS[@]}"; do
  if [ "$sm" != shared ] && [ "$sm" != registers ]; then
    echo "QUACK_TUNE_SUMS: sums must be shared or registers, got '$sm'" >&2
    exit 2
  fi
done
for s in "${STAGES[@]}"; do
  case $s in [2-8]) ;; *)
    echo "QUACK_TUNE_STAGES: stages must be 2 to 8, got '$s'" >&2
    exit 2 ;;
  esac
done
for r in "${ROWS[@]}"; do
  case $r in 1|2|4|8|16|32|64) ;; *)
    echo "QUACK_TUNE_ROWS: rows per CTA must be a power of two up to 64, got '$r'" >&2
    exit 2 ;;
  esac
done
for copy in "${COPIES[@]}"; do
  case $copy in global|bulk|tensor) ;; *)
    echo "QUACK_TUNE_COPIES: unknown copy path '$copy' (global, bulk, tensor)" >&2
    exit 2 ;;
  esac
done

# The description and the flag settings of each kernel (those the Python
# ops use most).
file_of() {
  case $1 in
    rmsnorm_*) echo rmsnorm ;;
    layernorm_*) echo layernorm ;;
    softmax_*) echo softmax ;;
    cross_entropy_*) echo cross_entropy ;;
    argmax) echo argmax ;;
    *) echo "unknown catalogue kernel '$1'" >&2; return 1 ;;
  esac
}
flags_of() {
  case $1 in
    rmsnorm_fwd) echo "-D RESIDUAL=false -D BIAS=false -D OFFSET=false" ;;
    rmsnorm_bwd) echo "-D RESIDUAL=false -D OFFSET=false" ;;
    layernorm_*) echo "-D BIAS=true" ;;
    cross_entropy_*) echo "-D IGNORE=true" ;;
    *) echo "" ;;
  esac
}
bytes_of() {
  case $1 in bf16|f16) echo 2 ;; f32) echo 4 ;;
    *) echo "unknown T '$1'" >&2; return 1 ;;
  esac
}

mkdir -p "$OUT"
built=0
for k in "${KERNELS[@]}"; do
  qk=$(file_of "$k")
  # shellcheck disable=SC2207
  flags=($(flags_of "$k"))
  for t in "${TS[@]}"; do
    b=$(bytes_of "$t")
    vec=$(( 16 / b ))
    for n in "${NS[@]}"; do
      compile() { # dir, extra args
        local dir=$1; shift
        rm -rf "$dir"
        if "$QUACKC" "$ROOT/kernels/$qk.qk" --kernel="$k" --bundle="$dir/$qk" \
            --cluster-fallbacks=0 \
            -D T="$t" -D TW=T -D N="$n" "${flags[@]}" --alignments=16 \
            "${ARGS[@]}" "$@" >/dev/null 2>"$dir.err"; then
          rm -f "$dir.err"; built=$((built + 1))
        else
          rm -rf "$dir"  # a config this N cannot use; see $dir.err
        fi
      }
      variants() { # name, config knobs: one root per copy path, stages
        local name=$1 knobs=$2 copy suffix s sm kn           # and sums
        for copy in "${COPIES[@]}"; do
          for sm in "" "${SUMS[@]}"; do
            suffix="" kn="$knobs,copy=$copy"
            [ "$copy" != global ] && suffix="-$copy"
            [ -n "$sm" ] && suffix="$suffix-sums-$sm" kn="$kn,sums=$sm"
            compile "$OUT/$name$suffix" --config="$kn$KNOBS" --fail-on-spills
            [ "$copy" != global ] || continue
            for s in "${STAGES[@]}"; do
              compile "$OUT/$name$suffix-s$s" \
                --config="$kn,prefetch=1,stages=$s$KNOBS" --fail-on-spills
            done
          done
        done
      }
      compile "$OUT/$k-$t-N$n-default" --config="tuned=0$KNOBS"
      # What the catalogue compiles (the architecture's table, or the model
      # where it has no entry): the baseline of a tuning target's table
      # (tune.py --against table).
      if [ -n "$KNOBS" ]; then
        compile "$OUT/$k-$t-N$n-table" --config="${KNOBS#,}"
      else
        compile "$OUT/$k-$t-N$n-table"
      fi
      if [ "$n" -ge 8192 ]; then
        # The cluster path: clusters of 2-16 CTAs of 128-512 threads, each
        # thread with 1-16 vectors (from N = 8192, where kernels with sums
        # over rows already take it, up to 16384 beside the CTA-level path).
        for cl in 2 4 8 16; do
          for threads in 128 256 512; do
            vpt=$(( n / vec / cl / threads ))
            [ "$vpt" -ge 1 ] && [ "$vpt" -le 16 ] || continue
            variants "$k-$t-N$n-c$cl-t$threads" "cluster=$cl,threads=$threads"
          done
        done
        [ "$n" -le 16384 ] || continue
      fi
      for vpt in 1 2 4 8; do
        threads=$(( n / vec / vpt ))
        [ "$threads" -ge 1 ] && [ "$threads" -le 1024 ] || continue
        for rows in "${ROWS[@]}"; do
          cta=$(( threads * rows ))
          [ "$cta" -ge 64 ] && [ "$cta" -le 1024 ] || continue
          variants "$k-$t-N$n-v$vpt-r$rows" \
            "cluster=1,threads=$threads,rows=$rows"
        done
      done
    done
  done
done
echo "wrote $built bundle roots under $OUT"
