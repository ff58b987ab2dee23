#!/usr/bin/env bash
# issue 16, item 3: `ksearch run selective_scan --backend cuda` with the built-in policy, then
# the run's best kernel side by side in one process with mamba_ssm's fused selective_scan_fwd
# (built from its public source while the search runs: nvcc on the CPU does not disturb GPU
# timing), the shipped chunk_carry.cu and state_scan.cu at their defaults, torch's loop and
# log-depth scan and the memory floor (bench/cuda/selective_scan.py).  On a GPU machine with
# torch and nvcc, from the repository root:
#
#   MAMBA_SRC=.mamba-src OUT=DIR bash bench/cuda/scan_search.sh
#
# KS_BIN: the folder with ksearch and its runners (build).  BUDGET (24), TIME_LIMIT (240s: the
# search phase stops proposing after it), WORKLOADS (4,6: b1 L2048 and b8 L2048, the issue's
# two goals), TOP (2).  MAMBA_SRC: scripts/mamba_src.sh's copy of csrc/selective_scan.
# Writes OUT/run (the run folder), OUT/run.json and OUT/cuda-selective_scan-search.md.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
KS=$(cd "${KS_BIN:-build}" && pwd)/ksearch
MAMBA_SRC=${MAMBA_SRC:-.mamba-src}
OUT=${OUT:-/tmp/ks-scan-search}
BUDGET=${BUDGET:-24} TIME_LIMIT=${TIME_LIMIT:-240s} WORKLOADS=${WORKLOADS:-4,6} TOP=${TOP:-2}
mkdir -p "$OUT"
[ -f "$MAMBA_SRC/selective_scan_fwd_kernel.cuh" ] || {
	echo "scan_search.sh: '$MAMBA_SRC' has no selective_scan_fwd_kernel.cuh (scripts/mamba_src.sh GIT_DIR)" >&2
	exit 2
}
python3 bench/cuda/selective_scan.py --build-only --mamba-src "$MAMBA_SRC" \
	--mamba-build-dir "$OUT/mamba-build" >"$OUT/mamba-build.log" 2>&1 &
build=$!
rm -rf "$OUT/run"
"$KS" run selective_scan --backend cuda --budget "$BUDGET" --time-limit "$TIME_LIMIT" \
	--workloads "$WORKLOADS" --top "$TOP" --out "$OUT/run" --json >"$OUT/run.json" 2>"$OUT/run.log"
rc=$?
tail -6 "$OUT/run.log"
wait "$build" || { echo "scan_search.sh: the mamba_ssm build failed:" >&2; tail -20 "$OUT/mamba-build.log" >&2; }
[ "$rc" -eq 0 ] && [ -f "$OUT/run/best.cu" ] || { echo "scan_search.sh: the run exited $rc without best.cu" >&2; exit 1; }
T=tasks/selective_scan/templates/cuda
cmd="MAMBA_SRC=DIR BUDGET=$BUDGET TIME_LIMIT=$TIME_LIMIT WORKLOADS=$WORKLOADS bash bench/cuda/scan_search.sh"
python3 bench/cuda/selective_scan.py --kernel "$OUT/run/best.cu" --kernel-label "the run's best.cu" \
	--extra "chunk_carry.cu defaults=$T/chunk_carry.cu" --extra "state_scan.cu defaults=$T/state_scan.cu" \
	--mamba-src "$MAMBA_SRC" --mamba-build-dir "$OUT/mamba-build" --reps "${REPS:-50}" \
	--run-json "$OUT/run.json" --out "$OUT/cuda-selective_scan-search.md" --command "$cmd" 2>&1 |
	tee "$OUT/side.log" | tail -40
