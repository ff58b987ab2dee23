#!/usr/bin/env bash
# needs: a C compiler; no GPU.
# The attention task's tolerance separates a correct online softmax from one that skips the
# rescale: the same flash-style kernel passes with the rescale and is INCORRECT_NUMERICAL
# without it, on the checks and on a timed workload alone.
. "$(dirname "$0")/lib.sh"
A=$ROOT/tasks/attention
F=$ROOT/tests/fixtures/attention/online_softmax.c

status() { # status [eval args]: the overall status of the fixture
	eval_status k "$A" "$F" --quick --no-baseline "$@"
}

st=$(status --define RESCALE=1 --workloads 0)
is "$st" PASSED "online softmax with the rescale passes every check and workload 0"
[ "$st" = PASSED ] || head -c 1500 "$TMP/k.err" | sed 's/^/# /'

st=$(status --define RESCALE=0)
is "$st" INCORRECT_NUMERICAL "online softmax without the rescale fails"
first=$(json_get "$TMP/k.json" \
	'[w.get("name", "workload") for w in d["checks"] + d["workloads"] if w["status"] != "PASSED"][0]' \
	2>/dev/null)
echo "# first failure: $first"

# a timed workload alone (no checks): the 512-key rows fail too, not only the edge cases
st=$(status --define RESCALE=0 --no-checks --workloads 0)
is "$st" INCORRECT_NUMERICAL "without the rescale the timed workload fails as well"
err=$(json_get "$TMP/k.json" 'd["workloads"][0]["max_abs_err"]' 2>/dev/null || echo None)
python3 -c "import sys; sys.exit(0 if $err > 0.05 else 1)" 2>/dev/null
ok $? "and by far more than the tolerance (max abs err $err, atol 2e-3 + rtol 2e-2)"
done_testing
