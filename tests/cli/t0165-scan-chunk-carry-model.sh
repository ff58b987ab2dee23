#!/usr/bin/env bash
# needs: a C compiler; no GPU.
# The chunk/carry arithmetic of tasks/selective_scan/templates/cuda/chunk_carry.cu, modelled
# step for step in C (bench/cuda/chunk_carry_model.c: lane walks, Kogge-Stone lane scan,
# warp-total combine, tile carries, polynomial exp2), matches the task's reference.c within
# the task's tolerance on the shapes of the task's checks, for several knob settings.  This
# checks the algebra; the CUDA kernel itself runs only on a GPU (bench/cuda/chunk_carry_check.sh).
. "$(dirname "$0")/lib.sh"

CC=${CC:-cc}
command -v "$CC" >/dev/null || skip_rest "no C compiler ($CC)"
S=$ROOT/tasks/selective_scan
for knobs in "WPC=1 ITEMS=8 UNR=2 POLY=0" "WPC=2 ITEMS=8 UNR=2 POLY=1" \
	"WPC=4 ITEMS=4 UNR=4 POLY=2" "WPC=2 ITEMS=16 UNR=1 POLY=0"; do
	# shellcheck disable=SC2086
	defs=$(printf -- '-D%s ' $knobs)
	# shellcheck disable=SC2086
	"$CC" -O2 $defs "$ROOT/bench/cuda/chunk_carry_model.c" -x c -Dselective_scan=ref_scan \
		"$S/reference.c" -lm -o "$TMP/model" 2>"$TMP/cc.err"
	ok $? "model builds with $knobs" || { sed 's/^/# /' "$TMP/cc.err"; continue; }
	# the task's checks (single-step, ragged, odd-dstate, slow-decay, softplus-linear,
	# exp-underflow, ragged-long) at reduced channel counts, and a long slow-decaying row
	for shape in "2 8 1 16" "2 24 77 16" "1 19 100 5" "1 16 2000 16 -7 -7" \
		"1 16 64 16 25 25" "2 8 1500 16 3 3 3" "3 5 4099 16" "1 2 9000 16 -6 -6"; do
		# shellcheck disable=SC2086
		out=$("$TMP/model" $shape)
		ok $? "$knobs shape $shape: $out"
	done
done
done_testing
