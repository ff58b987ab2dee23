#!/usr/bin/env bash
# Check (and time) settings of a CUDA attention template on a GPU machine without ksearch,
# with bench/cuda/attention_probe.cu: each setting compiled by nvcc, run on the shapes of the
# attention task's checks (tasks/attention/task.yaml) and on the headline workloads, the last
# three timed (back-to-back calls, no L2 flush: not ksearch's protocol).  From the repository
# root:
#
#   TEMPLATE=tasks/attention/templates/cuda/flash_wgmma.cu bash bench/cuda/attention_probe.sh \
#       WG=2,BN=128,STAGES=2 WG=2,BN=64,STAGES=2
#
# TEMPLATE (default flash_wgmma.cu), ARCH (default 90a), REPS (default 20), OUT (default
# /tmp/ks-attention-probe: the binaries and compile logs).  Exit 1 when any shape fails.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TEMPLATE=$(cd "$ROOT" && realpath "${TEMPLATE:-tasks/attention/templates/cuda/flash_wgmma.cu}")
ARCH=${ARCH:-90a} REPS=${REPS:-20} OUT=${OUT:-/tmp/ks-attention-probe}
mkdir -p "$OUT"
# batch heads seqlen head_dim causal [sd]: the task's checks (as their shapes)
CHECKS=("2 3 1 64 0" "1 2 1 64 1" "2 2 77 64 0" "1 3 77 128 1" "1 1 1000 64 1" "1 4 130 32 1"
	"1 2 200 64 0 4" "1 2 1111 128 0" "2 1 1111 128 1" "1 2 333 128 1 6" "1 4 512 64 0"
	"1 4 512 64 1")
TIMED=("1 32 2048 128 0" "1 32 2048 128 1" "1 32 2048 64 0")
i=0
for s in "$@"; do
	defs=$(echo "$s" | tr ',' '\n' | sed 's/^/-D/' | tr '\n' ' ')
	# shellcheck disable=SC2086
	nvcc -std=c++17 -O3 -gencode arch=compute_$ARCH,code=sm_$ARCH -DKS_TEMPLATE="\"$TEMPLATE\"" \
		$defs -o "$OUT/probe$i" "$ROOT/bench/cuda/attention_probe.cu" 2>"$OUT/compile$i.log" &
	i=$((i + 1))
done
wait
rc=0 i=0
for s in "$@"; do
	echo "== $(basename "$TEMPLATE") $s"
	if [ ! -x "$OUT/probe$i" ]; then
		echo "compile failed:"; head -5 "$OUT/compile$i.log"; rc=1; i=$((i + 1)); continue
	fi
	for a in "${CHECKS[@]}"; do
		# shellcheck disable=SC2086
		timeout 30 "$OUT/probe$i" $a || rc=1
	done
	for a in "${TIMED[@]}"; do
		# shellcheck disable=SC2086
		timeout 60 "$OUT/probe$i" $a 1 "$REPS" || rc=1
	done
	i=$((i + 1))
done
exit $rc
