#!/usr/bin/env bash
# The attention templates through MLX on an NVIDIA GPU or Apple silicon, against MLX's own
# attention (mx.fast.scaled_dot_product_attention), in a few minutes, from the repository root:
#
#   KS_BIN=DIR OUT=DIR bash bench/mlx/attention.sh
#
# `ksearch eval attention tasks/attention/templates/mlx/TEMPLATE.cuda.mlx --backend mlx` for
# each configuration (by default the wgmma template at its defaults: the persistent grid and
# TMA; then without TMA; and flash2's best configuration of docs/results/cuda-attention.md),
# every mlx workload and check; then REPEATS timing-only evaluations of the first
# configuration on the headline workloads, for the spread of the ratio between processes;
# writes docs/results/mlx-attention.md (anew after every step, so a run cut short leaves the
# table of what it measured).  Where ksearch-runner-mlx's probe says metal=1 (Apple
# silicon) the configurations are flash_simd.metal.mlx's instead and the table goes to
# docs/results/mlx-attention-metal.md.  Environment:
#   KS_BIN=DIR      ksearch, ksearch-runner, ksearch-runner-mlx (and DIR/devlibs: libraries
#                   the machine lacks), built elsewhere (default build)
#   MLX_SITE=DIR    MLX's CUDA build unpacked (default /tmp/site; bench/mlx/gpu_env.sh)
#   CONFIGS="T:A=1,B=2 ..."  template T (tasks/attention/templates/mlx/T.cuda.mlx; flash2
#                   when "T:" is left out) and its knob values
#   REPS=N          timed repetitions per block (default 20); REPEATS=N (default 3)
#   RUN_BUDGET=N    also `ksearch run attention --backend mlx --budget N --workloads 2,3`
#   OUT=DIR         copy the table and the JSON there
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
KS_BIN=$(cd "${KS_BIN:-build}" && pwd)
RES=${RES:-/tmp/ks-mlx-attention}
mkdir -p "$RES" docs/results
export KSEARCH_HOME=$ROOT KSEARCH_CACHE=${KSEARCH_CACHE:-$RES/cache}
log() { echo "== $(date -u +%H:%M:%S) $*"; }
if [ -d "$KS_BIN/devlibs" ]; then
	for f in "$KS_BIN"/devlibs/*.so*; do
		ldconfig -p | grep -q "$(basename "$f") " || cp -n "$f" /usr/local/lib/
	done
	ldconfig 2>/dev/null
fi
. bench/mlx/gpu_env.sh "${MLX_SITE:-/tmp/site}"
probe=$("$KS_BIN/ksearch-runner-mlx" --probe 2>&1)
log "probe: $probe"
RESULT=docs/results/mlx-attention.md
case "$probe" in
*metal=1*)
	RESULT=docs/results/mlx-attention-metal.md
	python3 -c "import mlx.core as mx; print(mx.metal.device_info().get('device_name', 'Apple GPU'))" \
		>"$RES/gpu.txt" 2>/dev/null || echo "Apple GPU" >"$RES/gpu.txt"
	DEFAULT_CONFIGS="flash_simd:BK=16,WM=4,QR=1 flash_simd:BK=16,WM=2,QR=2 flash_simd:BK=8,WM=4,QR=1" ;;
*cuda=1*)
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$RES/gpu.txt"
	DEFAULT_CONFIGS="flash_wgmma:WG=2,BN=128,STAGES=3,WS=1,PERSIST=1,TMA=1 flash_wgmma:WG=2,BN=128,STAGES=3,WS=1,PERSIST=1,TMA=0 flash2:BM=128,BN=32,WARPS=4,STAGES=2,QREG=0,EXP2=1" ;;
*) echo "ksearch-runner-mlx has no GPU MLX here (CUDA or Metal): $probe"; exit 1 ;;
esac
cat "$RES/gpu.txt"

CONFIGS=${CONFIGS:-$DEFAULT_CONFIGS}
REPS=${REPS:-20}
# template file (the .cuda.mlx or .metal.mlx of that name) and knob values of a CONFIGS entry
tmpl() {
	local t=flash2 f
	[[ $1 == *:* ]] && t=${1%%:*}
	for f in tasks/attention/templates/mlx/$t.cuda.mlx tasks/attention/templates/mlx/$t.metal.mlx; do
		[ -f "$f" ] && { echo "$f"; return; }
	done
	echo "tasks/attention/templates/mlx/$t.cuda.mlx" # the error names it
}
knobs() { echo "${1#*:}"; }
evals=()
reps=()
run=()
# the table from what has been measured so far, after every step: a run cut short (a device
# call's time limit) still leaves its results
report() {
	python3 bench/mlx/attention_report.py "${evals[@]}" "${reps[@]}" "${run[@]}" \
		--device "$(cat "$RES/gpu.txt")" --probe "$probe" --out "$RESULT" \
		--command "CONFIGS='$CONFIGS' REPS=$REPS REPEATS=${REPEATS:-3} RUN_BUDGET=${RUN_BUDGET:-} bash bench/mlx/attention.sh" ||
		return
	if [ -n "${OUT:-}" ]; then
		mkdir -p "$OUT"
		cp "$RESULT" "$OUT"/
	fi
}
n=0
for c in $CONFIGS; do
	n=$((n + 1))
	log "eval $c: every mlx workload and check"
	timeout 480 "$KS_BIN/ksearch" eval attention "$(tmpl "$c")" --backend mlx --define "$(knobs "$c")" \
		--reps "$REPS" --json >"$RES/eval-$n.json" 2>"$RES/eval-$n.err"
	echo "rc=$?"
	tail -3 "$RES/eval-$n.err"
	evals+=(--eval "$c=$RES/eval-$n.json")
	report
done
first=${CONFIGS%% *}
for r in $(seq 1 "${REPEATS:-3}"); do
	log "repeat $r: $first, headline workloads, timing only"
	timeout 60 "$KS_BIN/ksearch" eval attention "$(tmpl "$first")" --backend mlx --define "$(knobs "$first")" --reps "$REPS" \
		--workloads 2,3 --no-checks --json >"$RES/repeat-$r.json" 2>"$RES/repeat-$r.err"
	echo "rc=$?"
	reps+=(--repeat "$RES/repeat-$r.json")
	report
done
if [ -n "${RUN_BUDGET:-}" ]; then
	log "ksearch run attention --backend mlx --budget $RUN_BUDGET --workloads 2,3"
	rm -rf "$RES/run"
	timeout 300 "$KS_BIN/ksearch" run attention --backend mlx --budget "$RUN_BUDGET" --workloads 2,3 \
		--time-limit "${RUN_TIME:-150s}" --out "$RES/run" --json >"$RES/run.json" 2>"$RES/run.err"
	echo "rc=$?"
	tail -12 "$RES/run.err"
	run=(--run "$RES/run.json" --run-log "$RES/run.err")
fi
report
if [ -n "${OUT:-}" ]; then
	cp "$RES"/*.json "$RES"/*.err "$OUT"/ 2>/dev/null
fi
log "done"
