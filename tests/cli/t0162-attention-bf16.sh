#!/usr/bin/env bash
# needs: a C compiler with OpenMP (as the cpu backend does); no GPU.
# tasks/attention_bf16 runs attention's files with ATTN_BF16 1 through '// @ksearch include:':
# its baseline passes on cpu; its tolerance still separates a correct online softmax from one
# that skips the rescale (as t0160 does for fp16, here with the shipped flash.c template and
# its rescale factor replaced by 1); and a kernel that reads the bf16 inputs as fp16 fails.
. "$(dirname "$0")/lib.sh"
N=$ROOT/tasks/attention_bf16
A=$ROOT/tasks/attention

status() { # status FILE [eval args]: the overall status of FILE on attention_bf16
	local f=$1
	shift
	eval_status k "$N" "$f" --quick --no-baseline "$@"
}

st=$(status "$N/baseline.c")
is "$st" PASSED "attention_bf16 baseline.c passes on cpu"
[ "$st" = PASSED ] || head -c 1500 "$TMP/k.err" | sed 's/^/# /'

# flash.c as the bf16 wrapper sees it, with and without the online-softmax rescale: the
# factor exp(m - m') of the running sum and output becomes 1 (it stays 0 on the first tile)
bf16_flash() { # bf16_flash SED_SCRIPT > FILE
	printf '#define ATTN_BF16 1\n#define ATTN_FN attention_bf16\n'
	sed "$1" "$A/templates/cpu/flash.c"
}
bf16_flash '' >"$TMP/rescale.c"
bf16_flash 's/0\.0f : sexp(w->m\[r\] - mn)/0.0f : 1.0f/' >"$TMP/norescale.c"
grep -q '0.0f : 1.0f' "$TMP/norescale.c" && ! grep -q '0.0f : 1.0f' "$TMP/rescale.c"
ok $? "flash.c without the rescale made (the sed matched)"

st=$(status "$TMP/rescale.c" --workloads 0)
is "$st" PASSED "flash.c in bf16 with the rescale passes every check and workload 0"
[ "$st" = PASSED ] || head -c 1500 "$TMP/k.err" | sed 's/^/# /'

st=$(status "$TMP/norescale.c")
is "$st" INCORRECT_NUMERICAL "flash.c in bf16 without the rescale fails"
first=$(json_get "$TMP/k.json" \
	'[w.get("name", "workload") for w in d["checks"] + d["workloads"] if w["status"] != "PASSED"][0]' \
	2>/dev/null)
echo "# first failure: $first"

# a timed workload alone (no checks): the 512-key rows fail too, not only the edge cases
st=$(status "$TMP/norescale.c" --no-checks --workloads 0)
is "$st" INCORRECT_NUMERICAL "without the rescale the timed workload fails as well"
err=$(json_get "$TMP/k.json" 'd["workloads"][0]["max_abs_err"]' 2>/dev/null || echo None)
python3 -c "import sys; sys.exit(0 if $err > 0.05 else 1)" 2>/dev/null
ok $? "and by far more than the tolerance (max abs err $err, atol 5e-3 + rtol 2e-2)"

# the fp16 baseline under the bf16 entry's name: both are 2-byte elements, so before the
# task's prototype was force-included (issue 39) it compiled and read bf16 bit patterns as
# fp16 ones; now the compiler names the conflicting prototype
{ printf '#define ATTN_BF16 0\n#define ATTN_FN attention_bf16\n'; cat "$A/baseline.c"; } >"$TMP/f16.c"
st=$(status "$TMP/f16.c")
is "$st" COMPILE_ERROR "a kernel taking the inputs as fp16 is refused by attention_bf16's prototype"
grep -q "conflicting types for .attention_bf16" "$TMP/k.json"
ok $? "... the log names the conflicting prototype"

# and the wrappers hold no code of their own: each includes attention's file of its name
for w in baseline.c reference.c baseline.cu reference.cu templates/cpu/flash.c \
	templates/cpu/materialized.c templates/cuda/flash2.cu; do
	rel=$(sed -n 's|^// @ksearch include: ||p' "$N/$w")
	[ -n "$rel" ] && [ "$(cd "$(dirname "$N/$w")" && realpath "$rel")" = "$(realpath "$A/$w")" ] &&
		[ "$(grep -vc '^//\|^#define ATTN_BF16 1$\|^#define ATTN_FN attention_bf16$' "$N/$w")" = 0 ]
	ok $? "attention_bf16/$w includes attention/$w"
done
done_testing
