#!/usr/bin/env bash
# Knob configurations of one attention template, checked and then timed side by side, on a GPU
# machine, from the repository root:
#
#   KS_BIN=DIR OUT=DIR CONFIGS="WG=2,BN=128,STAGES=3 WG=2,BN=128,STAGES=2,WS=1" \
#     WORKLOADS=2,3 bash bench/cuda/attention_configs.sh
#
# Each configuration first passes `ksearch eval attention TEMPLATE --backend cuda --define C
# --quick --no-baseline` (3 seeds of every CUDA workload and every check against the
# reference); those that pass are timed in one process with torch SDPA's FlashAttention-2,
# cuDNN and math backends by bench/cuda/attention.py, the first as the kernel under test.
#   TEMPLATE=FILE   default tasks/attention/templates/cuda/flash_wgmma.cu; a configuration
#                   FILE.cu:K=V,... names its own file (two versions of a template side by
#                   side: FILE.cu:WG=2,TMA=2 beside WG=2,TMA=2)
#   KS_BIN=DIR      ksearch and its runners (DIR/devlibs: libraries the machine lacks)
#   REPS=N          attention.py repetitions (default 20); OUT=DIR: the tables and eval logs
#   TASK=NAME       attention (default) or attention_bf16 (bf16 inputs to every implementation)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
KS_BIN=$(cd "${KS_BIN:-build}" && pwd)
TEMPLATE=${TEMPLATE:-tasks/attention/templates/cuda/flash_wgmma.cu}
OUT=${OUT:-/tmp/ks-attention-configs}
TASK=${TASK:-attention}
mkdir -p "$OUT"
export KSEARCH_HOME=$ROOT KSEARCH_CACHE=${KSEARCH_CACHE:-$OUT/cache}
[ -d "$KS_BIN/devlibs" ] && bash scripts/pack-binaries.sh --install "$KS_BIN" 2>/dev/null
# a configuration's file and knobs (FILE.cu:K=V,... or K=V,... of TEMPLATE)
cfg_file() { if [[ $1 == *.cu:* ]]; then echo "${1%%:*}"; else echo "$TEMPLATE"; fi; }
cfg_knobs() { echo "${1##*.cu:}"; }
passed=()
n=0
for c in ${CONFIGS:?CONFIGS: space-separated K=V,K=V lists}; do
	n=$((n + 1))
	log=$OUT/eval-$n-$(basename "$(cfg_file "$c")" .cu)-$(cfg_knobs "$c" | tr '=,' '__').json
	"$KS_BIN/ksearch" eval "$TASK" "$(cfg_file "$c")" --backend cuda --define "$(cfg_knobs "$c")" \
		--quick --no-baseline --json >"$log" 2>"${log%.json}.err"
	st=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$log" \
		2>/dev/null || echo "NO_RESULT")
	echo "eval $c: $st"
	[ "$st" = PASSED ] && passed+=("$c") || tail -5 "${log%.json}.err"
done
[ ${#passed[@]} -gt 0 ] || { echo "no configuration passed"; exit 1; }
label() { # LABEL: the file's name (with its folder where not TEMPLATE) and the knobs
	local f name k
	f=$(cfg_file "$1") k=$(cfg_knobs "$1")
	name=$(basename "$f" .cu)
	[ "$f" != "$TEMPLATE" ] && name="$f"
	k=${k//=/}
	echo "$name ${k//,/ }"
}
extra=()
for c in "${passed[@]:1}"; do
	extra+=(--extra "$(label "$c")=$(cfg_file "$c"):$(cfg_knobs "$c")")
done
dtype=f16
[ "$TASK" = attention_bf16 ] && dtype=bf16 # its workloads and entry point
python3 bench/cuda/attention.py --dtype "$dtype" \
	--kernel "$(cfg_file "${passed[0]}"):$(cfg_knobs "${passed[0]}")" \
	--kernel-label "$(label "${passed[0]}")" "${extra[@]}" \
	--workloads "${WORKLOADS:-2,3}" --reps "${REPS:-20}" --out "$OUT/configs.md" \
	--json "$OUT/configs.json" \
	--command "TASK=$TASK TEMPLATE=$TEMPLATE CONFIGS=\"${CONFIGS}\" WORKLOADS=${WORKLOADS:-2,3} bash bench/cuda/attention_configs.sh"
