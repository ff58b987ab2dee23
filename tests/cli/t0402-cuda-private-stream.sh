#!/usr/bin/env bash
# needs: an NVIDIA GPU (the test reports "Skipped" without one).
# Work a kernel puts on a stream of its own is timed (issue 39): a kernel that launches on
# a private stream and returns without waiting is timed no faster than the same kernel on
# the stream ksearch gives it, on every workload of tasks/softmax and on the scale fixture
# (or its timing is SUSPICIOUS).  Before, the launch and the event wait were not counted,
# and such a softmax was timed 3-19% faster (H200).
. "$(dirname "$0")/lib.sh"
K=$ROOT/tests/fixtures/hostile_cuda/private_stream.cu
SCALE=$ROOT/tests/fixtures/eval/scale
SOFTMAX=$ROOT/tasks/softmax

"$KS" eval "$SCALE" "$K" --backend cuda --json --quick >"$TMP/probe.json" 2>"$TMP/probe.err"
if [ $? -eq 2 ] && grep -q "not available" "$TMP/probe.err"; then
	skip_rest "GPU checks: $(head -c 300 "$TMP/probe.err" | tr '\n' ' ')"
fi

# compare TASK NAME: the private-stream kernel and its twin, every workload of TASK
compare() {
	local task=$1 name=$2
	"$KS" eval "$task" "$K" --backend cuda --json --no-checks >"$TMP/$name.json" 2>"$TMP/$name.err"
	"$KS" eval "$task" "$K" --backend cuda --json --no-checks --cflags "-O3 -DSAME_STREAM" \
		>"$TMP/$name-twin.json" 2>"$TMP/$name-twin.err"
	is "$(json_get "$TMP/$name-twin.json" 'd["status"]' 2>/dev/null)" PASSED "$name: the twin on the given stream passes"
	local st
	st=$(json_get "$TMP/$name.json" 'd["status"]' 2>/dev/null || echo NO_JSON)
	case $st in
	SUSPICIOUS) ok 0 "$name on a private stream -> SUSPICIOUS" ;;
	PASSED)
		python3 - "$TMP/$name.json" "$TMP/$name-twin.json" <<'PY'
import json, sys
a, b = (json.load(open(p))["workloads"] for p in sys.argv[1:3])
bad = 0
for x, y in zip(a, b):
    r = x["median_us"] / y["median_us"]
    print("# %s: private %.1f us, given stream %.1f us (%.3f)" % (x["params"], x["median_us"], y["median_us"], r))
    bad |= r < 0.95
sys.exit(bad)
PY
		ok $? "$name on a private stream -> PASSED, no faster than on the given stream (within 5%)"
		;;
	*) ok 1 "$name on a private stream -> PASSED or SUSPICIOUS (got '$st')" ;;
	esac
}
compare "$SOFTMAX" softmax
compare "$SCALE" scale

done_testing
