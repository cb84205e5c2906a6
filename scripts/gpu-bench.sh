#!/usr/bin/env bash
#===- gpu-bench.sh - bandwidth benchmark against the baselines ----------===#
#
# Usage: scripts/gpu-bench.sh BUILD_DIR BUNDLE_DIR OUT_DIR [BENCH_ARGS...]
#
# On a machine with a Hopper GPU and torch: installs the baseline packages
# carried in .whl/ at the repository root, if any (*.whl with pip, offline,
# into $SITE; *.tar.xz, unpacked wheel trees, extracted over it), then runs
# python/benchmarks/bench.py: memory ceilings, then every op, shape and
# implementation. OUT_DIR gets at most 7 files, no subfolders: bench.json,
# bench.md, bench.log (environment, progress, the report, and summarize.py's
# scoreboard and targets) and, with the default bf16 and f32,
# bench_{bf16,f32}_{fwd,bwd}.png.
#
# BUILD_DIR holds lib/libquack_runtime.so (or the library itself); BUNDLE_DIR
# is a kernel bundle or a bundle root (scripts/build-catalogue.sh). Further
# arguments go to bench.py after the defaults, so they override them (e.g.
# --ops softmax ce_fwd --impls quack_mlir torch_compile).
#
# Environment: PYTHON (default python3); SITE (default /tmp/site);
# BASELINES, the directories of wheels and trees to install, separated by
# colons (default: .whl/ at the repository root; the files of
# scripts/fetch-baselines.sh may be spread over several, and a file name
# found twice is installed from the first directory that has it);
# BENCH_BUDGET, seconds after which no measurement starts (default 450, so
# that a run ends in about 8 minutes; 0 for no limit); BENCH_TIMEOUT, a
# hard limit in seconds on the whole benchmark (default 3000).
#
#===----------------------------------------------------------------------===#
set -uo pipefail

if [ $# -lt 3 ]; then
  echo "usage: $0 BUILD_DIR BUNDLE_DIR OUT_DIR [BENCH_ARGS...]" >&2
  exit 2
fi
BUILD_DIR=$(cd "$1" && pwd) || { echo "no build dir $1" >&2; exit 2; }
BUNDLE_DIR=$(cd "$2" && pwd) || { echo "no bundle dir $2" >&2; exit 2; }
mkdir -p "$3" && OUT_DIR=$(cd "$3" && pwd) || exit 2
shift 3
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
SITE=${SITE:-/tmp/site}
BENCH_BUDGET=${BENCH_BUDGET:-450}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-3000}

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

LOG="$OUT_DIR/bench.log"
: >"$LOG"

# Baselines: liger-kernel, quack-kernels and what they need beyond torch.
BASELINES=${BASELINES:-$ROOT/.whl}
WHEELS=()
TREES=()
# A file name seen in an earlier directory is skipped: pip refuses two
# copies of one wheel in a single install, and would then install none.
declare -A SEEN=()
IFS=: read -r -a BASELINE_DIRS <<<"$BASELINES"
for dir in "${BASELINE_DIRS[@]}"; do
  for f in "$dir"/*.whl "$dir"/*.tar.xz; do
    [ -e "$f" ] || continue
    name=$(basename "$f")
    if [ -n "${SEEN[$name]:-}" ]; then
      echo "note: $f skipped, the same file as ${SEEN[$name]}" | tee -a "$LOG"
      continue
    fi
    SEEN[$name]=$f
    case $f in
      *.whl) WHEELS+=("$f") ;;
      *) TREES+=("$f") ;;
    esac
  done
done
if [ ${#WHEELS[@]} -gt 0 ] || [ ${#TREES[@]} -gt 0 ]; then
  mkdir -p "$SITE"
  if [ ${#WHEELS[@]} -gt 0 ]; then
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile \
      --no-cache-dir --upgrade --target "$SITE" "${WHEELS[@]}" 2>&1 |
      tee -a "$LOG"
    [ "${PIPESTATUS[0]}" -eq 0 ] ||
      echo "warning: pip could not install the carried wheels; the" \
        "baselines that need them will be n/a" | tee -a "$LOG"
  fi
  # After pip: pip --upgrade replaces the package directories it installs.
  for t in "${TREES[@]}"; do
    "$PYTHON" - "$t" "$SITE" <<'EOF' 2>&1 | tee -a "$LOG"
import sys, tarfile
with tarfile.open(sys.argv[1]) as tf:
    try:
        tf.extractall(sys.argv[2], filter="data")
    except TypeError:  # a Python without extraction filters
        tf.extractall(sys.argv[2])
EOF
  done
  export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
  # Path set-up that a site directory's .pth file would do.
  if [ -d "$SITE/nvidia_cutlass_dsl/dsl_packages" ]; then
    PYTHONPATH="$PYTHONPATH:$SITE/nvidia_cutlass_dsl/dsl_packages"
  fi
else
  echo "note: no wheels or trees in $BASELINES: Liger and QuACK columns" \
    "will be n/a" | tee -a "$LOG"
fi

export QUACK_MLIR_RUNTIME_LIB=$LIB
export QUACK_MLIR_BUNDLE=$BUNDLE_DIR
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1

{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(uname -n) $(uname -m)"
  echo "runtime: $LIB"
  echo "bundle: $BUNDLE_DIR"
  for b in $BUNDLES; do
    echo "  $(dirname "$b"): $(grep -c '"metadata"' "$b") variants"
  done
  if [ ${#WHEELS[@]} -gt 0 ] || [ ${#TREES[@]} -gt 0 ]; then
    echo "baseline packages (bytes):"
    du -b -- "${WHEELS[@]}" "${TREES[@]}"
  fi
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
    --format=csv,noheader 2>&1
  "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' 2>&1
} | tee -a "$LOG"

BUDGET_ARGS=()
if [ "$BENCH_BUDGET" != 0 ]; then
  BUDGET_ARGS=(--budget-seconds "$BENCH_BUDGET")
fi

echo "== benchmark" | tee -a "$LOG"
timeout --signal=KILL "$BENCH_TIMEOUT" "$PYTHON" \
  "$ROOT/python/benchmarks/bench.py" --out-dir "$OUT_DIR" \
  "${BUDGET_ARGS[@]}" "$@" 2>&1 | tee -a "$LOG"
RC=${PIPESTATUS[0]}
# The scoreboard against the best baseline and the targets, into the log.
if [ -f "$OUT_DIR/bench.json" ]; then
  echo "== summary" | tee -a "$LOG"
  "$PYTHON" "$ROOT/python/benchmarks/summarize.py" "$OUT_DIR/bench.json" \
    2>&1 | tee -a "$LOG"
fi
echo "benchmark exit $RC; results in $OUT_DIR: $(ls "$OUT_DIR" | tr '\n' ' ')" |
  tee -a "$LOG"
exit "$RC"
