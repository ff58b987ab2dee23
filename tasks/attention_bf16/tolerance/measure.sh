#!/usr/bin/env bash
# The measurements behind attention_bf16's tolerance (task.yaml, README.md), on the CPU:
#   bash tasks/attention_bf16/tolerance/measure.sh [KERNEL...]     (from the repo root)
# KERNEL: emu (flash2.cu's numerics, flash2_numerics.c), base (baseline.c), nr (the CPU
# flash.c template with the online-softmax rescale removed); default all three, in bf16,
# and emu in f16 against the fp16 task's tolerance for comparison.  A few minutes on 2 cores.
set -eu
cd "$(dirname "$0")"
A=../../attention
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
F="-O3 -march=native -fopenmp -w"
for bf in 0 1; do
	cc $F -c -DATTN_BF16=$bf -DATTN_FN=ref_attention $A/reference.c -o $W/r$bf.o
	cc $F -c -DATTN_BF16=$bf -DATTN_FN=emu_attention flash2_numerics.c -o $W/e$bf.o
	cc $F -c -DATTN_BF16=$bf -DATTN_FN=base_attention $A/baseline.c -o $W/b$bf.o
	# the rescale factor exp(m - m') replaced by 1 (it stays 0 for the first tile)
	sed 's/0.0f : sexp(w->m\[r\] - mn)/0.0f : 1.0f/' $A/templates/cpu/flash.c >$W/nr.c
	grep -q '0.0f : 1.0f' $W/nr.c
	cc $F -c -DATTN_BF16=$bf -DATTN_FN=nr_attention $W/nr.c -o $W/n$bf.o
	cc $F -DATTN_BF16=$bf measure.c $W/r$bf.o $W/e$bf.o $W/b$bf.o $W/n$bf.o -lm -o $W/measure$bf
done
# the task's workloads (the first two) and checks; the L2048 headline on 8 of its 32 heads
SHAPES="1 4 4 512 512 64 0 1
1 4 4 512 512 64 1 1
2 2 2 77 77 64 0 1
1 3 3 77 77 128 1 1
1 1 1 1000 1000 64 1 1
1 4 4 130 130 32 1 1
1 2 2 200 200 64 0 4
1 2 2 64 64 64 0 8
2 6 2 77 77 64 0 1
1 4 1 130 130 128 1 1
1 2 2 64 200 64 0 1
1 2 1 100 300 128 1 1
1 2 2 300 100 64 1 1
1 2 2 1111 1111 128 0 1
2 1 1 1111 1111 128 1 1
1 2 2 333 333 128 1 6
1 8 2 1111 1111 128 1 1
1 2 2 500 1111 128 0 1
1 2 2 1111 3000 128 1 1
1 8 8 2048 2048 128 0 1
1 8 8 2048 2048 128 1 1"
for k in ${@:-emu base nr}; do
	echo "== bf16 $k (atol 5e-3, rtol 2e-2)"
	echo "$SHAPES" | $W/measure1 "$k"
done
if [ $# -eq 0 ]; then
	echo "== f16 emu (attention's atol 2e-3, rtol 2e-2)"
	echo "$SHAPES" | $W/measure0 emu
fi
