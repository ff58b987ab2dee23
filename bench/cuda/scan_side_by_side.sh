#!/usr/bin/env bash
# The shipped selective_scan CUDA templates side by side with mamba_ssm's fused
# selective_scan_fwd in one process, on every cuda workload of the task
# (bench/cuda/selective_scan.py), in about 4 minutes with the mamba_ssm build:
# chunk_carry.cu (parallel over the sequence) at its defaults and at each setting of
# SETTINGS, and state_scan.cu (one channel per warp, sequential) at its defaults.  From the
# repository root on a GPU machine with torch and nvcc:
#
#   MAMBA_SRC=.mamba-src OUT=DIR bash bench/cuda/scan_side_by_side.sh
#
# MAMBA_SRC: csrc/selective_scan of github.com/state-spaces/mamba (scripts/mamba_src.sh makes
# it).  SETTINGS="WPC=4,CPB=2 ..." more chunk_carry settings (default: none), each a row.
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
K=$T/chunk_carry.cu
extras=(--extra "state_scan.cu defaults=$T/state_scan.cu")
for c in ${SETTINGS:-}; do # "A=1,B=2": the same template with those knob values
	f=$OUT/chunk_carry_${c//[,=]/_}.cu
	echo "$c" | tr ',' '\n' | sed 's/^\([A-Z_0-9]*\)=\(.*\)$/#define \1 \2/' >"$f"
	cat "$K" >>"$f"
	extras+=(--extra "chunk_carry.cu ${c//,/ }=$f") # label=file, split at the last "="
done
cmd="MAMBA_SRC=DIR${SETTINGS:+ SETTINGS=\"$SETTINGS\"} bash bench/cuda/scan_side_by_side.sh"
python3 bench/cuda/selective_scan.py --kernel "$K" \
	--kernel-label "chunk_carry.cu defaults" "${extras[@]}" \
	--mamba-src "$MAMBA_SRC" --mamba-build-dir "$OUT/mamba-build" --reps "${REPS:-50}" \
	--out "$OUT/cuda-selective_scan-side-by-side.md" --command "$cmd" 2>&1 | tee "$OUT/side.log"
