#!/usr/bin/env bash
# The search-strategy ablation for attention at equal budget, on a GPU machine, from the
# repository root (about 6 minutes at the defaults):
#
#   KS_BIN=DIR OUT=DIR BUDGET=4 bash bench/cuda/attention_ablation.sh
#   (the naive kernel and torch SDPA come in the final table; the three runs take ~4 minutes)
#
# `ksearch run attention --backend cuda --strategy S --budget BUDGET --workloads 2,3` for
# S = random, evolve, wm (the builtin policy; same seed, same time limit), then every run's
# best kernel timed side by side in one process with the naive baseline.cu and torch SDPA's
# FlashAttention-2, cuDNN and math backends (bench/cuda/attention.py) on the headline
# workloads (B1 H32 L2048 D128, non-causal and causal); writes the "Ablation at equal
# budget" section of docs/results/cuda-attention.md.  `--context none|spec|full` is not
# varied: only the llm and cmd policies read it (src/policy/llm.c); the builtin policy
# proposes knob configurations without prompts.  Environment:
#   KS_BIN=DIR      ksearch, ksearch-runner, ksearch-runner-cuda (and DIR/devlibs: libraries
#                   the machine lacks), built elsewhere (default build)
#   BUDGET=N        candidates per run (default 4); TIME_LIMIT=D per run (default 70s)
#   STRATEGIES="random evolve wm"   the runs to make now; the table takes every strategy
#                   whose run is in RES (default /tmp/ks-attention-ablation), so a larger
#                   budget can be split over commands: STRATEGIES=random, then evolve, wm
#   REPS=N          attention.py repetitions (default 20)
#   DEVICES=0,1     one `ksearch worker` per listed GPU (default: in-process)
#   OUT=DIR         copy the section, the run summaries and the tables there
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
KS_BIN=$(cd "${KS_BIN:-build}" && pwd)
RES=${RES:-/tmp/ks-attention-ablation}
BUDGET=${BUDGET:-4}
TIME_LIMIT=${TIME_LIMIT:-70s}
STRATEGIES=${STRATEGIES-random evolve wm}
mkdir -p "$RES" docs/results
export KSEARCH_HOME=$ROOT KSEARCH_CACHE=${KSEARCH_CACHE:-$RES/cache}
log() { echo "== $(date -u +%H:%M:%S) $*"; }
if [ -d "$KS_BIN/devlibs" ]; then
	for f in "$KS_BIN"/devlibs/*.so*; do
		ldconfig -p | grep -q "$(basename "$f") " || cp -n "$f" /usr/local/lib/
	done
	ldconfig 2>/dev/null
fi
[ -x "$KS_BIN/ksearch-runner-cuda" ] || { echo "no $KS_BIN/ksearch-runner-cuda"; exit 1; }
A=tasks/attention
runs=()
kernels=()
for s in random evolve wm; do
	if [[ " $STRATEGIES " == *" $s "* ]]; then
		log "ksearch run attention --backend cuda --strategy $s --budget $BUDGET --workloads 2,3"
		rm -rf "$RES/run-$s" "$RES/best-$s.cu"
		opts=(--backend cuda --strategy "$s" --budget "$BUDGET" --workloads 2,3 --seed 1
			--time-limit "$TIME_LIMIT")
		[ -n "${DEVICES:-}" ] && opts+=(--devices "$DEVICES")
		timeout 240 "$KS_BIN/ksearch" run attention "${opts[@]}" --out "$RES/run-$s" --json \
			>"$RES/run-$s.json" 2>"$RES/run-$s.err"
		echo "rc=$?"
		tail -4 "$RES/run-$s.err"
	fi
	# a strategy run by an earlier command (STRATEGIES=random, then evolve, ...) counts too
	[ -s "$RES/run-$s.json" ] || continue
	runs+=(--run "$s=$RES/run-$s.json")
	if [ -f "$RES/run-$s/best.cu" ]; then
		cp "$RES/run-$s/best.cu" "$RES/best-$s.cu"
		kernels+=("$s=$RES/best-$s.cu")
	fi
done
[ ${#kernels[@]} -gt 0 ] || { echo "no run gave a best kernel"; exit 1; }
log "attention.py: each best kernel, the naive baseline.cu and torch SDPA, workloads 2,3"
first=${kernels[0]}
extra=()
for k in "${kernels[@]:1}"; do
	extra+=(--extra "${k%%=*} best=${k#*=}")
done
cmd="BUDGET=$BUDGET TIME_LIMIT=$TIME_LIMIT bash bench/cuda/attention_ablation.sh"
python3 bench/cuda/attention.py --kernel "${first#*=}" --kernel-label "${first%%=*} best" \
	"${extra[@]}" --baseline $A/baseline.cu --workloads 2,3 --reps "${REPS:-20}" \
	--out "$RES/ablation-table.md" --json "$RES/ablation.json" --command "$cmd" \
	2>&1 | tee "$RES/ablation.log"
python3 bench/cuda/attention_ablation.py "${runs[@]}" --table "$RES/ablation.json" \
	--budget "$BUDGET" --time-limit "$TIME_LIMIT" --command "$cmd" \
	--doc docs/results/cuda-attention.md
if [ -n "${OUT:-}" ]; then
	mkdir -p "$OUT"
	cp docs/results/cuda-attention.md "$RES"/run-*.json "$RES"/run-*.err "$RES"/best-*.cu \
		"$RES/ablation.json" "$RES/ablation-table.md" "$OUT"/ 2>/dev/null
fi
log "done"
