#!/usr/bin/env bash
# CUDA benchmarks on a GPU machine, in one command from the repository root:
#
#   bash bench/cuda/run.sh [ceilings] [softmax] [matmul] [matmul_bf16] [attention]
#                          [selective_scan] [attention-check]   (no argument: all but attention-check)
#
# builds ksearch, measures the device's ceilings (bench/cuda/ceilings.cu), runs
# `ksearch run TASK --backend cuda` with the builtin policy, then times the best kernel side
# by side with torch in one process (bench/cuda/compare.py) and writes
# docs/results/cuda-TASK.md (attention: against torch SDPA's FlashAttention-2, cuDNN and math
# backends, bench/cuda/attention.py; attention-check first validates reference.cu, baseline.cu
# and the template with `ksearch eval` and times template configurations, ATTN_SWEEP).  Each phase fits in a few minutes; run them in separate
# commands where a command's time is limited.  Environment:
#   BUDGET=N        candidates per `ksearch run` (default 16)
#   TIME_LIMIT=D    stop proposing after D (e.g. 5m), then finalise (default: none)
#   DEVICES=0,1     one `ksearch worker` per listed GPU (default: evaluate in-process)
#   BUILD=DIR       build directory (default build-bench)
#   SKIP_BUILD=1    use BUILD as it is (binaries built elsewhere, e.g. with their libraries
#                   in BUILD/devlibs when the GPU machine lacks the -dev packages)
#   KSEARCH_CUDA_ARCH, KSEARCH_DEVICE, KSEARCH_NVCC   as for ksearch
#   OUT=DIR         also copy the tables and logs there (the device tool's result folder)
#   MAMBA_SRC=DIR   selective_scan: a copy of csrc/selective_scan of github.com/state-spaces/mamba
#                   (never part of this repository); bench/cuda/selective_scan.py builds
#                   mamba_ssm's fused forward kernel from it and times it alongside
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-$ROOT/build-bench}
BUDGET=${BUDGET:-16}
RES=$BUILD/bench-cuda
mkdir -p "$RES" docs/results
export KSEARCH_HOME=$ROOT KSEARCH_CACHE=${KSEARCH_CACHE:-$BUILD/cache}
PHASES=${*:-ceilings softmax matmul matmul_bf16 attention selective_scan}
log() { echo "== $(date -u +%H:%M:%S) $*"; }
save() { [ -n "${OUT:-}" ] && mkdir -p "$OUT" && cp "$@" "$OUT"/ 2>/dev/null; return 0; }

# binaries built on another machine may bring the libraries this one lacks
if [ -d "$BUILD/devlibs" ]; then
	for f in "$BUILD"/devlibs/*.so*; do
		ldconfig -p | grep -q "$(basename "$f") " || cp -n "$f" /usr/local/lib/
	done
	ldconfig 2>/dev/null
fi
if [ -n "${SKIP_BUILD:-}" ] && [ -x "$BUILD/ksearch" ]; then
	log "using the prebuilt $BUILD (SKIP_BUILD)"
else
	log "build"
	cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DKS_WERROR=OFF >"$RES/cmake.log" 2>&1 &&
		cmake --build "$BUILD" -j"$(nproc)" >>"$RES/cmake.log" 2>&1 || {
		tail -30 "$RES/cmake.log"
		exit 1
	}
fi
[ -x "$BUILD/ksearch-runner-cuda" ] || { echo "ksearch-runner-cuda was not built (CUDA toolkit not found by CMake)"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$RES/gpu.txt"

CEIL=$RES/ceilings.json
needs_ceil=0
for p in ceilings softmax matmul matmul_bf16; do [[ " $PHASES " == *" $p "* ]] && needs_ceil=1; done
if [[ " $PHASES " == *" ceilings "* ]] || { [ $needs_ceil = 1 ] && [ ! -s "$CEIL" ]; }; then
	log "ceilings"
	ARCH=${KSEARCH_CUDA_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d . | sed 's/^90$/90a/;s/^100$/100a/')}
	nvcc -O3 -gencode "arch=compute_$ARCH,code=sm_$ARCH" bench/cuda/ceilings.cu -o "$RES/ceilings" -lcublas &&
		"$RES/ceilings" "${KSEARCH_DEVICE:-0}" | tee "$CEIL" || exit 1
	save "$CEIL"
fi

for task in softmax matmul matmul_bf16 selective_scan; do
	[[ " $PHASES " == *" $task "* ]] || continue
	log "ksearch run $task --backend cuda --budget $BUDGET"
	rm -rf "$RES/run-$task"
	opts=(--backend cuda --budget "$BUDGET")
	[ -n "${TIME_LIMIT:-}" ] && opts+=(--time-limit "$TIME_LIMIT")
	[ -n "${DEVICES:-}" ] && opts+=(--devices "$DEVICES")
	cmd="ksearch run $task ${opts[*]} --out $RES/run-$task --json"
	mpid=
	if [ "$task" = selective_scan ] && [ -n "${MAMBA_SRC:-}" ]; then
		# build mamba_ssm's kernel (one nvcc process, minutes) while the search runs
		MAMBA_BUILD=${MAMBA_BUILD:-$RES/mamba-build}
		python3 bench/cuda/selective_scan.py --build-only --mamba-src "$MAMBA_SRC" \
			--mamba-build-dir "$MAMBA_BUILD" >"$RES/mamba-build.log" 2>&1 &
		mpid=$!
	fi
	"$BUILD/ksearch" run "$task" "${opts[@]}" --out "$RES/run-$task" --json \
		>"$RES/run-$task.json" 2>"$RES/run-$task.err"
	rc=$?
	tail -5 "$RES/run-$task.err"
	kernel=$RES/run-$task/best.cu
	label="ksearch best (builtin policy, budget $BUDGET)"
	if [ $rc -ne 0 ] || [ ! -f "$kernel" ]; then
		# no search result: compare the first template at its defaults, and say so
		kernel=$(ls tasks/$task/templates/cuda/*.cu | head -1)
		why="ksearch run failed, rc=$rc"
		[ $rc -eq 0 ] && why="no candidate of the ksearch run passed"
		label="template $(basename "$kernel") at its default knobs ($why)"
		cmd="($why: see run-$task.err)"
	fi
	extra=()
	for f in tasks/$task/templates/cuda/*.cu; do
		[ "$f" = "$kernel" ] || extra+=(--extra "template $(basename "$f" .cu) (default knobs)=$f")
	done
	log "compare $task: $label"
	if [ "$task" = selective_scan ]; then
		# mamba_ssm's fused kernel, torch and the memory floor (bench/cuda/selective_scan.py)
		[ -n "$mpid" ] && { wait "$mpid"; tail -2 "$RES/mamba-build.log"; }
		python3 bench/cuda/selective_scan.py --kernel "$kernel" --kernel-label "$label" "${extra[@]}" \
			--baseline "tasks/$task/baseline.cu" ${MAMBA_SRC:+--mamba-src "$MAMBA_SRC"} \
			${MAMBA_BUILD:+--mamba-build-dir "$MAMBA_BUILD"} --run-json "$RES/run-$task.json" \
			--out "docs/results/cuda-$task.md" \
			--command "BUDGET=$BUDGET TIME_LIMIT=${TIME_LIMIT:-} MAMBA_SRC=${MAMBA_SRC:+DIR} bash bench/cuda/run.sh $task  # $cmd; python3 bench/cuda/selective_scan.py" \
			2>&1 | tee "$RES/compare-$task.log"
		cp "$kernel" "$RES/best-$task.cu" 2>/dev/null
		save "docs/results/cuda-$task.md" "$RES/run-$task.err" "$RES/best-$task.cu"
		continue
	fi
	python3 bench/cuda/compare.py --task "$task" --kernel "$kernel" --kernel-label "$label" "${extra[@]}" \
		--baseline "tasks/$task/baseline.cu" --ceilings "$CEIL" --run-json "$RES/run-$task.json" \
		--out "docs/results/cuda-$task.md" \
		--command "BUDGET=$BUDGET TIME_LIMIT=${TIME_LIMIT:-} DEVICES=${DEVICES:-} bash bench/cuda/run.sh $task  # $cmd; python3 bench/cuda/compare.py" \
		2>&1 | tee "$RES/compare-$task.log"
	cp "$kernel" "$RES/best-$task.cu" 2>/dev/null
	save "docs/results/cuda-$task.md" "$RES/run-$task.err" "$RES/best-$task.cu"
done
A=tasks/attention
if [[ " $PHASES " == *" attention-check "* ]]; then
	log "attention-check: reference.cu, baseline.cu and the template, each with ksearch eval"
	ev() { # ev NAME FILE [eval args]: status and errors of one evaluation, full JSON kept
		"$BUILD/ksearch" eval attention "$2" --backend cuda --json --quick --no-baseline "${@:3}" \
			>"$RES/eval-$1.json" 2>"$RES/eval-$1.err"
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(sys.argv[2], d["status"]); [print("  %-22s %-20s err %.2e us %s %s" % (w.get("name") or w.get("params"), w["status"], w.get("max_abs_err") or 0, w.get("median_us"), (w.get("log") or "")[:200])) for w in d["checks"] + d["workloads"]]' \
			"$RES/eval-$1.json" "$1" 2>&1 || tail -5 "$RES/eval-$1.err"
		grep -h "reference.cu gives" "$RES/eval-$1.err"
	}
	ev reference $A/reference.cu --workloads 0,1
	ev baseline $A/baseline.cu --workloads 0,1,2,3
	ev flash2 $A/templates/cuda/flash2.cu
	save "$RES"/eval-*.json
	sweep=()
	for c in ${ATTN_SWEEP:-BM=64,BN=64,WARPS=4 BM=128,BN=128,WARPS=8}; do
		sweep+=(--extra "flash2 ${c//=/}=$A/templates/cuda/flash2.cu:$c")
	done
	python3 bench/cuda/attention.py --kernel $A/templates/cuda/flash2.cu --kernel-label "flash2 (default knobs)" \
		"${sweep[@]}" --workloads "${ATTN_WORKLOADS:-2,3,7}" --reps 10 --out "$RES/attention-sweep.md" \
		--json "$RES/attention-sweep.json" 2>&1 | tee "$RES/attention-sweep.log"
	save "$RES/attention-sweep.md"
fi
if [[ " $PHASES " == *" attention "* ]]; then
	log "ksearch run attention --backend cuda --budget $BUDGET"
	rm -rf "$RES/run-attention"
	opts=(--backend cuda --budget "$BUDGET")
	[ -n "${TIME_LIMIT:-}" ] && opts+=(--time-limit "$TIME_LIMIT")
	[ -n "${DEVICES:-}" ] && opts+=(--devices "$DEVICES")
	"$BUILD/ksearch" run attention "${opts[@]}" --out "$RES/run-attention" --json \
		>"$RES/run-attention.json" 2>"$RES/run-attention.err"
	rc=$?
	tail -25 "$RES/run-attention.err"
	kernel=$RES/run-attention/best.cu
	label="ksearch best (builtin policy, budget $BUDGET)"
	if [ $rc -ne 0 ] || [ ! -f "$kernel" ]; then
		kernel=$A/templates/cuda/flash2.cu
		label="template flash2.cu at its default knobs (ksearch run gave no best kernel, rc=$rc)"
	fi
	cp "$kernel" "$RES/best-attention.cu"
	extra=()
	for t in $A/templates/cuda/*.cu; do
		n=$(basename "$t" .cu)
		extra+=(--extra "template $n (default knobs)=$t")
	done
	# more template configurations, TEMPLATE:K=V,... (flash2 when TEMPLATE: is left out),
	# e.g. ATTN_EXTRA='BM=128,BN=32,WARPS=4,QREG=0 flash_wgmma:WG=2,BN=64'
	for c in ${ATTN_EXTRA:-}; do
		t=flash2
		[[ $c == *:* ]] && t=${c%%:*} c=${c#*:}
		extra+=(--extra "$t ${c//=/}=$A/templates/cuda/$t.cu:$c")
	done
	log "compare attention: $label"
	python3 bench/cuda/attention.py --kernel "$kernel" --kernel-label "$label" "${extra[@]}" \
		--baseline $A/baseline.cu \
		--reps "${REPS:-20}" --out docs/results/cuda-attention.md --json "$RES/attention.json" \
		--command "BUDGET=$BUDGET TIME_LIMIT=${TIME_LIMIT:-} ATTN_EXTRA='${ATTN_EXTRA:-}' REPS=${REPS:-20} bash bench/cuda/run.sh attention  # ksearch run attention ${opts[*]}; python3 bench/cuda/attention.py" \
		2>&1 | tee "$RES/compare-attention.log"
	cp "$RES/run-attention/report.md" "$RES/report-attention.md" 2>/dev/null
	save docs/results/cuda-attention.md "$RES/run-attention.err" "$RES/best-attention.cu" \
		"$RES/attention.json" "$RES/report-attention.md"
fi
log "done"
