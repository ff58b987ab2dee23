#!/usr/bin/env bash
# Check (and time) settings of a CUDA attention template on a GPU machine without ksearch,
# with bench/probes/attention_probe.cu: each setting compiled by nvcc, run on the shapes of the
# attention task's checks (tasks/attention/task.yaml, GPU ones included) and on all its
# workloads, the GPU ones timed (back-to-back calls, no L2 flush: not ksearch's protocol).
# From the repository root:
#
#   TEMPLATE=tasks/attention/templates/cuda/flash_wgmma.cu bash bench/probes/attention_probe.sh \
#       WG=2,BN=128,STAGES=2 WG=2,BN=64,STAGES=2
#
# A setting with no knobs at all is "-" (the file's defaults).  TEMPLATE (default
# flash_wgmma.cu), ARCH (default 90a), REPS (default 20), SHAPES (checks, workloads or all, the
# default), OUT (default /tmp/ks-attention-probe: the binaries and compile logs).  Exit 1 when
# any shape fails or a setting does not compile.  BUILD_ONLY=1 compiles the settings into OUT
# and stops (nvcc needs no GPU); PREBUILT=1 then runs those binaries, given the same settings
# in the same order, on the GPU machine without compiling again.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TEMPLATE=$(cd "$ROOT" && realpath "${TEMPLATE:-tasks/attention/templates/cuda/flash_wgmma.cu}")
ARCH=${ARCH:-90a} REPS=${REPS:-20} OUT=${OUT:-/tmp/ks-attention-probe} SHAPES=${SHAPES:-all}
mkdir -p "$OUT"
# batch heads kv_heads seqlen kv_seqlen head_dim causal [sd]: the task's checks, in its order
CHECKS=(
	"2 3 3 1 1 64 0"              # single-token
	"1 2 2 1 1 64 1"              # single-token-causal
	"2 2 2 77 77 64 0"            # ragged-seqlen
	"1 3 3 77 77 128 1"           # ragged-causal
	"1 1 1 1000 1000 64 1"        # causal-long
	"1 4 4 130 130 32 1"          # small-head-dim
	"1 2 2 200 200 64 0 4"        # large-logits
	"1 2 2 1111 1111 128 0"       # ragged-long (GPU)
	"2 1 1 1111 1111 128 1"       # ragged-long-causal (GPU)
	"1 2 2 333 333 128 1 6"       # large-logits-causal (GPU)
	"2 6 2 77 77 64 0"            # gqa-ragged
	"1 4 1 130 130 128 1"         # gqa-causal
	"1 2 2 64 200 64 0"           # kv-longer
	"1 2 1 100 300 128 1"         # kv-longer-causal
	"1 2 2 300 100 64 1"          # kv-shorter-causal
	"1 8 2 1111 1111 128 1"       # gqa-long-causal (GPU)
	"1 2 2 500 1111 128 0"        # kv-longer-long (GPU)
	"1 2 2 1111 3000 128 1"       # kv-longer-causal-long (GPU)
)
# the task's workloads 0 and 1 (CPU sizes: checked, not timed), then 2..10 (GPU: timed)
UNTIMED=("1 4 4 512 512 64 0" "1 4 4 512 512 64 1")
TIMED=("1 32 32 2048 2048 128 0" "1 32 32 2048 2048 128 1" "4 32 32 4096 4096 128 1"
	"1 32 32 1024 1024 128 0" "1 32 32 4096 4096 128 0" "1 32 32 2048 2048 64 0"
	"1 32 8 2048 2048 128 0" "1 32 8 2048 2048 128 1" "1 32 32 8192 8192 128 0")
[ "$SHAPES" = workloads ] && CHECKS=()
[ "$SHAPES" = checks ] && UNTIMED=() TIMED=()
i=0
for s in "$@"; do
	[ -n "${PREBUILT:-}" ] && break
	defs=
	[ "$s" != - ] && defs=$(echo "$s" | tr ',' '\n' | sed 's/^/-D/' | tr '\n' ' ')
	# shellcheck disable=SC2086
	nvcc -std=c++17 -O3 -gencode arch=compute_$ARCH,code=sm_$ARCH -DKS_TEMPLATE="\"$TEMPLATE\"" \
		$defs -o "$OUT/probe$i" "$ROOT/bench/probes/attention_probe.cu" 2>"$OUT/compile$i.log" &
	i=$((i + 1))
done
wait
[ -n "${BUILD_ONLY:-}" ] && { ls "$OUT"/probe* 2>/dev/null; exit 0; }
rc=0 i=0
for s in "$@"; do
	echo "== $(basename "$TEMPLATE") $s"
	if [ ! -x "$OUT/probe$i" ]; then
		echo "compile failed:"; head -5 "$OUT/compile$i.log"; rc=1; i=$((i + 1)); continue
	fi
	for a in "${CHECKS[@]}" "${UNTIMED[@]}"; do
		# shellcheck disable=SC2086
		timeout 60 "$OUT/probe$i" $a || rc=1
	done
	for a in "${TIMED[@]}"; do
		# the sd argument (1) comes before the repetitions
		# shellcheck disable=SC2086
		timeout 120 "$OUT/probe$i" $a 1 "$REPS" || rc=1
	done
	i=$((i + 1))
done
exit $rc
