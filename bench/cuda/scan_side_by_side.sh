#!/usr/bin/env bash
# The shipped selective_scan CUDA templates side by side with mamba_ssm's fused
# selective_scan_fwd in one process, on every cuda workload of the task
# (bench/cuda/selective_scan.py), in about 4 minutes with the mamba_ssm build:
# TEMPLATE (chunk_carry.cu, parallel over the sequence, by default) at its defaults and at
# each setting of SETTINGS, and the other of chunk_carry.cu and state_scan.cu (one channel
# per warp, or SPLIT warps, sequential) at its defaults.  From the
# repository root on a GPU machine with torch and nvcc:
#
#   MAMBA_SRC=.mamba-src OUT=DIR bash bench/cuda/scan_side_by_side.sh
#
# MAMBA_SRC: csrc/selective_scan of github.com/state-spaces/mamba (scripts/mamba_src.sh makes
# it).  SETTINGS="WPC=4,CPB=2 ..." more settings of TEMPLATE (default chunk_carry.cu; none by
# default), each a row.
# Writes OUT/cuda-selective_scan-side-by-side.md (default OUT: /tmp/ks-scan-side).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
MAMBA_SRC=${MAMBA_SRC:-.mamba-src}
OUT=${OUT:-/tmp/ks-scan-side}
mkdir -p "$OUT"
[ -f "$MAMBA_SRC/selective_scan_fwd_kernel.cuh" ] || {
	echo "scan_side_by_side.sh: '$MAMBA_SRC' has no selective_scan_fwd_kernel.cuh (scripts/mamba_src.sh GIT_DIR)" >&2
	exit 2
}
T=tasks/selective_scan/templates/cuda
TEMPLATE=${TEMPLATE:-chunk_carry.cu}
K=$T/$TEMPLATE
other=state_scan.cu # the other shipped template at its defaults, a row too
[ "$TEMPLATE" = state_scan.cu ] && other=chunk_carry.cu
extras=(--extra "$other defaults=$T/$other")
for c in ${SETTINGS:-}; do # "A=1,B=2": the same template with those knob values
	f=$OUT/${TEMPLATE%.cu}_${c//[,=]/_}.cu
	echo "$c" | tr ',' '\n' | sed 's/^\([A-Z_0-9]*\)=\(.*\)$/#define \1 \2/' >"$f"
	cat "$K" >>"$f"
	extras+=(--extra "$TEMPLATE ${c//,/ }=$f") # label=file, split at the last "="
done
cmd="MAMBA_SRC=DIR${SETTINGS:+ TEMPLATE=$TEMPLATE SETTINGS=\"$SETTINGS\"} bash bench/cuda/scan_side_by_side.sh"
python3 bench/cuda/selective_scan.py --kernel "$K" \
	--kernel-label "$TEMPLATE defaults" "${extras[@]}" \
	--mamba-src "$MAMBA_SRC" --mamba-build-dir "$OUT/mamba-build" --reps "${REPS:-50}" \
	--out "$OUT/cuda-selective_scan-side-by-side.md" --command "$cmd" 2>&1 | tee "$OUT/side.log"
