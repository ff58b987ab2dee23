#!/usr/bin/env bash
# ksearch run: a search completes, writes best.c and the reports, is reproducible per seed,
# and survives kill -9: --resume ends with exactly the budget evaluated, nothing twice.
. "$(dirname "$0")/lib.sh"
# a results cache of its own: evaluations that other tests' runs of this task left in the
# shared one (ctest's KSEARCH_CACHE) would answer its candidates without phases or time
export KSEARCH_CACHE=$TMP/cache
TASK=$ROOT/tests/fixtures/eval/scale
FAST=(--min-time 0.01 --top 2 --jobs 2)

count() { # count DB SQL
	python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$1" "$2"
}

# --fresh: every candidate evaluated here, its phases measured, whatever an earlier run of the
# same suite left in the results cache ($KSEARCH_CACHE is the build's, shared by the runs)
"$KS" run "$TASK" --budget 5 --seed 3 --out "$TMP/a" --json --fresh "${FAST[@]}" >"$TMP/a.json" 2>"$TMP/a.err"
ok $? "run completes (exit 0)"
is "$(json_get "$TMP/a.json" 'd["evaluated"]')" 5 "--json reports the budget evaluated"
is "$(json_get "$TMP/a.json" 'd["strategy"]')" wm "default strategy is wm"
best=$(json_get "$TMP/a.json" 'd["best"]["source_file"]')
[ -f "$best" ] && [ -f "$TMP/a/report.md" ] && [ -f "$TMP/a/report.html" ]
ok $? "best.c, report.md and report.html are written"
"$KS" eval "$TASK" "$best" --quick --json >"$TMP/best.json" 2>/dev/null
is "$(json_get "$TMP/best.json" 'd["status"]')" PASSED "the best kernel passes ksearch eval on its own"
is "$(count "$TMP/a/run.db" "select count(*) from candidate_results where phase='search'")" 5 \
	"the store holds one search result per candidate"
[ "$(count "$TMP/a/run.db" "select count(*) from tree_snapshots")" -ge 1 ]
ok $? "world-model snapshots are stored"
"$KS" report "$TMP/a" --json >"$TMP/rep.json"
is "$(json_get "$TMP/rep.json" 'd["evaluated"]')" 5 "ksearch report --json agrees"
# where each candidate's time went: one breakdown per evaluated candidate, phases that add
# up to its wall time, the mean in --json and the report
is "$(count "$TMP/a/run.db" "select count(*) from events where kind='eval_times'")" 5 \
	"one time breakdown is recorded per evaluated candidate"
python3 - "$TMP/a/run.db" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for (data,) in db.execute("select data from events where kind='eval_times'"):
    d = json.loads(data)
    parts = sum(d[k] for k in ("compile_s", "reference_s", "start_s", "inputs_s", "check_s",
                               "compare_s", "timing_s", "other_s"))
    assert abs(parts - d["total_s"]) < 1e-6 * max(1, d["total_s"]), d
    assert d["timing_s"] > 0 and d["check_s"] > 0 and d["start_s"] > 0, d
    assert d["compare_s"] > 0 and d["inputs_s"] > 0, d
    # the runner's own steps happen inside the inputs and check phases
    runner = [d["runner_" + k + "_s"] for k in ("generate", "upload", "call", "download", "checksum")]
    assert d["runner_generate_s"] > 0 and d["runner_call_s"] > 0, d
    assert sum(runner) <= d["inputs_s"] + d["check_s"] + 1e-3, d
    # ... and the steps of its start inside the start phase: exec, sandbox and the host
    # pages of the sets are never free; device init is nothing on the cpu
    start = [d["runner_" + k + "_s"] for k in ("exec", "sandbox", "load", "init", "alloc_host",
                                                "alloc_device", "reset")]
    assert d["runner_exec_s"] > 0 and d["runner_sandbox_s"] > 0, d
    assert d["runner_alloc_host_s"] > 0, d
    assert sum(start) <= d["start_s"] + 1e-3, d
    # the workload's 4 MiB input comes from the input cache (issue 12)
    assert d["runner_cached_bytes"] >= 4 << 20, d
PY
ok $? "... its phases are measured and add up to the candidate's wall time"
# the cpu backend's quiet cores: in each round (--jobs 2) every compile ended before the
# first evaluation began (a device backend may overlap them: tests/unit/test_round.c)
python3 - "$TMP/a/run.db" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rounds = {}
for (data,) in db.execute("select data from events where kind='eval_times'"):
    d = json.loads(data)
    rounds.setdefault(d["batch"], []).append(d)
assert max(len(r) for r in rounds.values()) == 2, rounds
for r in rounds.values():
    assert max(d["compile_end_at_s"] for d in r) <= min(d["eval_start_at_s"] for d in r), r
PY
ok $? "... and on the cpu no candidate of a round is evaluated before all are compiled"
json_get "$TMP/a.json" 'd["time_per_candidate"]' | grep -q "per candidate (5 evaluated here): .* s = compile .* compare .* timing .* other .*; runner: generate .* checksum .*; runner start: exec .* init .* reset .*; input cache [0-9]* MiB"
ok $? "--json gives the mean breakdown per candidate"
grep -q "## Where the time went" "$TMP/a/report.md" && grep -q "| timing |" "$TMP/a/report.md"
ok $? "the report shows where the time went"

# same seed, same proposals: the first round is proposed before any measurement, so it
# must match exactly (later rounds follow measured times, which are noisy; the strategies'
# unit tests check full determinism for identical outcomes)
"$KS" run "$TASK" --budget 2 --seed 3 --out "$TMP/b" "${FAST[@]}" >/dev/null 2>&1
q="select group_concat(family || ' ' || defines, ';') from (select * from candidates where id <= 2 order by id)"
is "$(count "$TMP/b/run.db" "$q")" "$(count "$TMP/a/run.db" "$q")" "same seed gives the same first proposals"
for s in evolve random anneal; do
	"$KS" run "$TASK" --budget 3 --strategy $s --out "$TMP/$s" --json "${FAST[@]}" >"$TMP/$s.json" 2>/dev/null
	is "$(json_get "$TMP/$s.json" 'd["evaluated"]')" 3 "strategy $s runs to its budget"
done

# kill -9 in the middle, then resume to exactly the budget
"$KS" run "$TASK" --budget 8 --seed 5 --out "$TMP/k" "${FAST[@]}" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 600); do
	n=$(count "$TMP/k/run.db" "select count(*) from candidate_results" 2>/dev/null || echo 0)
	[ "${n:-0}" -ge 3 ] && break
	sleep 0.1
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
before=$(count "$TMP/k/run.db" "select count(*) from candidate_results where phase='search'")
[ "$before" -ge 3 ] && [ "$before" -lt 8 ]
ok $? "killed mid-run with $before of 8 evaluated"
"$KS" run --resume "$TMP/k" --json >"$TMP/k.json" 2>"$TMP/k.err"
ok $? "resume completes"
is "$(count "$TMP/k/run.db" "select count(*) from candidate_results where phase='search'")" 8 \
	"exactly the budget is evaluated after the resume"
is "$(count "$TMP/k/run.db" "select count(*) from (select distinct source_hash, defines from candidates)")" \
	"$(count "$TMP/k/run.db" "select count(*) from candidates")" "no candidate was created twice"
reused=$(json_get "$TMP/k.json" 'd["reused"]')
[ "$reused" -ge "$before" ]
ok $? "the resumed run took $reused recorded outcomes from the store instead of re-evaluating"
is "$(count "$TMP/k/run.db" "select status from run")" finished "the run is marked finished"
# resuming a finished run evaluates and re-measures nothing; its reports are written again
rows=$(count "$TMP/k/run.db" "select count(*) from evaluations")
rm -f "$TMP/k/report.md"
"$KS" run --resume "$TMP/k" --json >"$TMP/k2.json" 2>"$TMP/k2.err"
ok $? "resuming the finished run exits 0"
is "$(count "$TMP/k/run.db" "select count(*) from evaluations")" "$rows" \
	"... evaluates and re-measures nothing"
[ -s "$TMP/k/report.md" ] && grep -q "is finished: writing its reports again" "$TMP/k2.err"
ok $? "... writes its reports again and says so"
is "$(json_get "$TMP/k2.json" 'd["evaluated"]')" 8 "... and reports the run's 8 candidates"

# errors a user makes
"$KS" run no_such_task --budget 2 --out "$TMP/x" >/dev/null 2>"$TMP/x.err"
is $? 2 "unknown task exits 2"
grep -q "no_such_task" "$TMP/x.err"
ok $? "and names it"
"$KS" run "$TASK" --budget 2 --out "$TMP/a" >/dev/null 2>"$TMP/again.err"
is $? 2 "an existing run folder is refused"
grep -q -- "--resume" "$TMP/again.err"
ok $? "and the message suggests --resume"
"$KS" run "$TASK" --strategy nope --out "$TMP/y" >/dev/null 2>&1
is $? 2 "unknown strategy exits 2"

# --workloads: the search tunes for the chosen timed workloads only, the report says so,
# and a resumed run keeps the choice; an index out of range is refused before any work
W=$TMP/sel/scale
mkdir -p "$TMP/sel" && cp -r "$TASK" "$W"
sed -i 's/^  - {n: 1048576}$/  - {n: 1048576}\n  - {n: 65536}/' "$W/task.yaml"
"$KS" run "$W" --budget 2 --workloads 1 --out "$TMP/w" --json "${FAST[@]}" >"$TMP/w.json" 2>"$TMP/w.err"
ok $? "run --workloads 1 completes"
grep -q "tuning for timed workloads 1 only" "$TMP/w.err"
ok $? "and says at the start what it tunes for"
is "$(count "$TMP/w/run.db" "select group_concat(label) from workloads where is_check = 0")" \
	"n=65536" "only the chosen workload is recorded and timed"
grep -q "| tuned for | only 1 of the task's timed workloads" "$TMP/w/report.md"
ok $? "the report says the run was tuned for workload 1 only"
"$KS" run --resume "$TMP/w" --budget 3 >/dev/null 2>&1
is "$(count "$TMP/w/run.db" "select group_concat(distinct e.workload) from evaluations e
	join workloads w on w.idx = e.workload where w.is_check = 0")" 1 \
	"the resumed run still times workload 1 only"
"$KS" run "$W" --budget 2 --workloads 2 --out "$TMP/w2" >/dev/null 2>"$TMP/w2.err"
is $? 2 "--workloads out of range exits 2"
grep -q "out of range (the task has 2 for this backend" "$TMP/w2.err"
ok $? "and says how many there are"

# a run folder whose path holds a quote and a backslash: --json stays valid JSON
odd="$TMP/odd \"dir\\x"
mkdir -p "$odd"
"$KS" run "$TASK" --budget 2 --out "$odd/run" --json "${FAST[@]}" >"$TMP/odd.json" 2>/dev/null
is "$(json_get "$TMP/odd.json" 'd["run_dir"]')" "$odd/run" "--json escapes the run folder's path"
done_testing
