#!/usr/bin/env bash
# The shipped selective_scan CUDA template at its defaults (state_scan.cu: PF 1, ITEMS 8,
# CPB 8, UNR 2, VEC 8) side by side with mamba_ssm's fused selective_scan_fwd in one process,
# on every cuda workload of the task (bench/cuda/selective_scan.py), in about 4 minutes with
# the mamba_ssm build.  From the repository root on a GPU machine with torch and nvcc:
#
#   MAMBA_SRC=.mamba-src OUT=DIR bash bench/cuda/scan_side_by_side.sh
#
# MAMBA_SRC: csrc/selective_scan of github.com/state-spaces/mamba (scripts/mamba_src.sh makes
# it).  Writes OUT/cuda-selective_scan-side-by-side.md (default OUT: /tmp/ks-scan-side).
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
K=tasks/selective_scan/templates/cuda/state_scan.cu
{ echo "#define PF 0"; cat "$K"; } >"$OUT/state_scan_pf0.cu" # the same kernel without staging
cmd="MAMBA_SRC=DIR bash bench/cuda/scan_side_by_side.sh"
python3 bench/cuda/selective_scan.py --kernel "$K" \
	--kernel-label "state_scan.cu defaults (PF 1)" \
	--extra "state_scan.cu PF 0=$OUT/state_scan_pf0.cu" \
	--mamba-src "$MAMBA_SRC" --mamba-build-dir "$OUT/mamba-build" --reps "${REPS:-50}" \
	--out "$OUT/cuda-selective_scan-side-by-side.md" --command "$cmd" 2>&1 | tee "$OUT/side.log"
