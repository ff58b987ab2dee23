#!/bin/bash
# needs: cc
# ksearch compare tells what stands behind its verdicts: a warning when either run's report
# flags its measurements noisy (the final re-measurement's verdict, read as the report
# reads it), the phase each median comes from (final or search), each run's baseline and a
# warning when the baselines differ beyond the margin; --json carries the run folders,
# noisy flags and reasons, phases and baselines.
. "$(dirname "$0")/lib.sh"
export KSEARCH_CACHE=$TMP/cache

"$KS" run softmax --budget 2 --min-time 0.01 --out "$TMP/a" >"$TMP/run.out" 2>&1
ok $? "ksearch run softmax --budget 2 finishes"

# a quiet copy and a noisy one: the times doctored so that no verdict hangs on this
# machine's noise; B's final verdict flagged noisy, its baselines 1.5x A's, and one
# workload's final re-measurement gone (its median then comes from the search phase)
cp -r "$TMP/a" "$TMP/q"
cp -r "$TMP/a" "$TMP/n"
python3 - "$TMP/q/run.db" "$TMP/n/run.db" <<'PY'
import json, sqlite3, sys
for path, noisy in ((sys.argv[1], False), (sys.argv[2], True)):
    db = sqlite3.connect(path)
    db.execute("update evaluations set median_us = 100, baseline_us = ?, spread_pct = 5",
               (1500 if noisy else 1000,))
    for i, d in db.execute("select id, data from events where kind = 'final'").fetchall():
        d = json.loads(d)
        d["noisy"], d["noise"] = noisy, "the leaders' timings still spread 132% after 3 rounds" if noisy else ""
        db.execute("update events set data = ? where id = ?", (json.dumps(d), i))
    if noisy:
        w = db.execute("select min(idx) from workloads where is_check = 0").fetchone()[0]
        db.execute("delete from evaluations where phase = 'final' and workload = ?", (w,))
    db.commit()
PY
"$KS" compare "$TMP/q" "$TMP/q" >"$TMP/qq.out" 2>&1
ok $? "compare a quiet run with itself"
! grep -q "warning" "$TMP/qq.out"
ok $? "... and no warning: $(grep warning "$TMP/qq.out")"
grep -q " final .* final .*1.000x  SAME  *1000  *1000$" "$TMP/qq.out"
ok $? "... each median's phase and each run's baseline on the lines: $(sed -n 4p "$TMP/qq.out")"

"$KS" compare "$TMP/q" "$TMP/n" >"$TMP/qn.out" 2>&1
ok $? "compare the quiet run with the noisy one"
grep -q "^warning: run B's report flags its measurements noisy (the leaders' timings still spread 132% after 3 rounds)" "$TMP/qn.out"
ok $? "a warning names run B noisy, with the report's reason"
! grep -q "run A's report flags" "$TMP/qn.out"
ok $? "... and not run A"
grep -q "^warning: the baselines differ (.*: A 1000 us, B 1500 us)" "$TMP/qn.out"
ok $? "a warning says the baselines differ"
grep -q " final .* search .*1.000x" "$TMP/qn.out"
ok $? "the workload without a re-measurement says B's median is the search phase's"

"$KS" compare "$TMP/q" "$TMP/n" --json >"$TMP/qn.json" 2>"$TMP/qn.err"
ok $? "compare --json"
is "$(json_get "$TMP/qn.json" 'd["run_a"]["dir"] + " " + d["run_b"]["dir"]')" "$TMP/q $TMP/n" "--json has both run folders"
is "$(json_get "$TMP/qn.json" '[d["run_a"]["noisy"], d["run_b"]["noisy"], d["noisy"]]')" "[False, True, True]" "... the noisy flags"
json_get "$TMP/qn.json" 'd["run_b"]["noise"]' | grep -q "spread 132%"
ok $? "... B's reason"
is "$(json_get "$TMP/qn.json" '[(w["a_phase"], w["b_phase"]) for w in d["workloads"]][0]')" "('final', 'search')" "... each median's phase"
is "$(json_get "$TMP/qn.json" 'all(round(w["a_baseline_us"]) == 1000 and round(w["b_baseline_us"]) == 1500 and w["baselines_differ"] for w in d["workloads"])')" True "... each run's baseline, and that they differ"

done_testing
