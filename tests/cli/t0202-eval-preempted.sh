#!/usr/bin/env bash
# The preempted-calls note (docs/evaluation.md, "Preempted calls"): the runner counts the
# involuntary context switches of its threads over the timed calls, the eval JSON carries
# the count per workload ("preempted", over "samples" calls), and a count of one or more per
# call puts a note in the workload's log.  An OpenMP kernel meeting at barriers every call
# (tests/fixtures/eval/kernels/omp_barriers.c), as many threads as cores, beside twice as
# many busy loops as cores: its threads are preempted, and the note says so.  Sizes come
# from the machine (nproc); the note's absence is never asserted (a CI machine is shared).
. "$(dirname "$0")/lib.sh"
TASK=$ROOT/tests/fixtures/eval/scale

[ "$(uname -s)" = Linux ] || skip_rest "only Linux counts involuntary context switches (getrusage)"

preempted() { # preempted FILE: the first workload's count, "None" when not counted
	json_get "$1" 'd["workloads"][0].get("preempted", "missing")' 2>/dev/null || echo NO_JSON
}

# a plain kernel: the count is there, a number (0 or more: the machine is shared)
st=$(eval_status plain "$TASK" "$ROOT/tests/fixtures/hostile/plain.c" --quick)
is "$st" PASSED "plain kernel -> PASSED"
n=$(preempted "$TMP/plain.json")
[[ $n =~ ^[0-9]+$ ]]
ok $? "plain kernel: the JSON carries its timed calls' preemptions (got '$n')"

cores=$(nproc)
busy_loops $((2 * cores))
ok 0 "${#BUSY[@]} busy loops started beside $cores cores (load $(cut -d' ' -f1 /proc/loadavg))"

threads=$((cores > 2 ? cores : 2))
st=$(eval_status barriers "$TASK" "$ROOT/tests/fixtures/eval/kernels/omp_barriers.c" --quick \
	--threads "$threads")
is "$st" PASSED "an OpenMP kernel with barriers under load -> PASSED (the note changes no status)"
n=$(preempted "$TMP/barriers.json")
calls=$(json_get "$TMP/barriers.json" 'd["workloads"][0]["samples"]' 2>/dev/null)
[[ $n =~ ^[0-9]+$ ]] && [ "$n" -gt 0 ]
ok $? "its $threads threads were preempted during the timed calls ($n times over $calls calls)"
log=$(json_get "$TMP/barriers.json" 'd["workloads"][0]["log"]' 2>/dev/null)
# the note follows the rule (one per call); whether the count reaches it depends on the
# machine's other load (measured: 117 over 10 calls at load 4.6 on 2 cores, 9 over 22 at
# load 12), so the test holds the note to the rule rather than requiring it
if [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge "${calls:-1}" ]; then
	grep -q "the kernel's threads were preempted $n times over $calls timed calls" <<<"$log"
else
	! grep -q "the kernel's threads were preempted" <<<"$log"
fi
rc=$?
ok $rc "... and the workload's log has the note exactly when the count reaches one per call"
[ $rc -eq 0 ] || sed 's/^/# /' <<<"$log"

done_testing
