#!/usr/bin/env bash
# needs: a C compiler with OpenMP (as the cpu backend does); no GPU.
# Every shipped task's CPU kernels are correct: the baseline and each CPU knob template at
# its defaults pass every check and workload (short timing), and so do the variants that
# take a different code path on this machine (AVX512-BF16 where the CPU has it).
. "$(dirname "$0")/lib.sh"

passes() { # passes TASK_DIR FILE [eval args]
	local dir=$1 f=$2
	shift 2
	local st
	st=$(eval_status k "$dir" "$f" --quick --no-baseline "$@")
	is "$st" PASSED "$(basename "$dir") ${f#$dir/}${*:+ $*} passes every check and workload"
	[ "$st" = PASSED ] || { head -c 1000 "$TMP/k.err"; json_get "$TMP/k.json" \
		'[(w["name"], w["log"]) for w in d["checks"]+d["workloads"] if w["log"]]' \
		2>/dev/null | head -c 1500; } | sed 's/^/# /'
}

for dir in "$ROOT"/tasks/*/; do
	dir=${dir%/}
	[ -f "$dir/task.yaml" ] || continue
	[ -f "$dir/baseline.c" ] && passes "$dir" "$dir/baseline.c"
	for f in "$dir"/templates/cpu/*.c; do
		[ -f "$f" ] && passes "$dir" "$f"
	done
done

B=$ROOT/tasks/matmul_bf16
if grep -qw avx512_bf16 /proc/cpuinfo 2>/dev/null; then
	passes "$B" "$B/templates/cpu/blocked.c" --define DOT=1
	passes "$B" "$B/templates/cpu/blocked.c" --define DOT=1,VEC=8,PACK_A=0,MR=4,NV=3,KC=128
else
	echo "# skip the DOT=1 path of matmul_bf16: this CPU has no AVX512-BF16"
fi
# amx.c runs its tile path where the CPU has AMX (else its plain loop, tested above)
if grep -qw amx_tile /proc/cpuinfo 2>/dev/null; then
	passes "$B" "$B/templates/cpu/amx.c" --define BMT=1,BNT=3,ORDER=1
	passes "$B" "$B/templates/cpu/amx.c" --define BMT=2,BNT=1,THREADS=1
	passes "$B" "$B/templates/cpu/amx.c" --define BMT=1,BNT=1,THREADS=2
fi
done_testing
