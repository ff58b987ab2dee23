#!/usr/bin/env bash
# CPU benchmarks against libraries, in one command from the repository root:
#
#   bash bench/cpu/run.sh [softmax] [matmul] [matmul_bf16]   (no argument: softmax matmul)
#
# builds ksearch, runs `ksearch run TASK` with the builtin policy on the cpu backend, then
# times the best kernel side by side with library implementations in one process
# (bench/cpu/compare.py: OpenBLAS sgemm through numpy and ONNX Runtime for matmul, ONNX
# Runtime and numpy for softmax) and writes docs/results/cpu-libraries.md.  numpy,
# onnxruntime and onnx are installed into BUILD/bench-venv from PyPI on first use.
# Environment:
#   BUDGET_MATMUL=N, BUDGET_SOFTMAX=N, BUDGET_MATMUL_BF16=N   candidates per run (40, 16, 10)
#   BUILD=DIR       build directory (default build-bench)
#   THREADS="N ..." thread counts to compare at, each for every implementation
#                   (default: all logical CPUs, then 1: a single thread is far less
#                   disturbed by a shared or virtual machine's scheduling)
#   MIN_TIME=S      seconds of timed calls per implementation and workload (2)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-$ROOT/build-bench}
THREADS=${THREADS:-$(nproc) 1}
RES=$BUILD/bench-cpu
OUTMD=docs/results/cpu-libraries.md
mkdir -p "$RES"
export KSEARCH_HOME=$ROOT KSEARCH_CACHE=${KSEARCH_CACHE:-$BUILD/cache}
PHASES=${*:-softmax matmul}
log() { echo "== $(date -u +%H:%M:%S) $*"; }

log "build"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DKS_WERROR=OFF >"$RES/cmake.log" 2>&1 &&
	cmake --build "$BUILD" -j"$(nproc)" >>"$RES/cmake.log" 2>&1 || { tail -30 "$RES/cmake.log"; exit 1; }
PY=$BUILD/bench-venv/bin/python
if ! "$PY" -c "import numpy, onnxruntime, onnx" 2>/dev/null; then
	log "python environment (numpy, onnxruntime, onnx)"
	python3 -m venv "$BUILD/bench-venv" && "$PY" -m pip install -q numpy onnxruntime onnx || exit 1
fi

{
	echo "# CPU: ksearch's best kernels against libraries"
	echo
	echo "Each section: \`ksearch run TASK\` (builtin policy, cpu backend), then the best kernel timed"
	echo "side by side with the libraries in one process (bench/cpu/compare.py). Library time / this"
	echo "above 1 means the ksearch kernel is faster."
} >"$OUTMD"
for task in $PHASES; do
	case $task in
	matmul) budget=${BUDGET_MATMUL:-40} ;;
	softmax) budget=${BUDGET_SOFTMAX:-16} ;;
	matmul_bf16) budget=${BUDGET_MATMUL_BF16:-10} ;;
	*) echo "unknown phase '$task' (softmax, matmul, matmul_bf16)"; exit 2 ;;
	esac
	log "ksearch run $task --budget $budget"
	rm -rf "$RES/run-$task"
	"$BUILD/ksearch" run "$task" --budget "$budget" --out "$RES/run-$task" --json \
		>"$RES/run-$task.json" 2>"$RES/run-$task.err" || { tail -20 "$RES/run-$task.err"; exit 1; }
	tail -4 "$RES/run-$task.err"
	for th in $THREADS; do
		log "compare $task, $th thread(s)"
		OMP_NUM_THREADS=$th "$PY" bench/cpu/compare.py --task "$task" --kernel "$RES/run-$task/best.c" \
			--kernel-label "ksearch best (budget $budget)" --threads "$th" --min-time "${MIN_TIME:-2}" \
			--out "$OUTMD" --append \
			--command "bash bench/cpu/run.sh $task  # ksearch run $task --budget $budget; bench/cpu/compare.py --threads $th" ||
			exit 1
	done
	cp "$RES/run-$task/best.c" "$RES/best-$task.c"
done
log "done: $OUTMD"
