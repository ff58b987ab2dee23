#!/usr/bin/env bash
# ksearch run --policy llm against a model that answers in the original K-Search's own
# format (string node ids, {"active_leaf_id", "ops"} edit scripts, a kernel in every reply)
# with HTTP 429 and 500, prose without code, truncated JSON and a kernel that does not
# compile mixed in: the whole budget is evaluated, LLM-written kernels pass, the run replays
# without a model, runs on workers with --devices, and the API key never leaks.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake_llm.sh"
FAKE_IDLE=120 FAKE_LIFETIME=600
TASK=$ROOT/tasks/softmax
SCRIPT=$FAKE/scripts/softmax_ksearch.json
FAST=(--backend cpu --min-time 0.01 --top 1 --jobs 2 --threads 1)
KEY=sk-test-3c8e0b27d94a4f1e9a55
export KSEARCH_API_KEY=$KEY
unset OPENAI_API_KEY

q() { # q DB SQL
	python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$1" "$2"
}

no_key() { # no_key FILE... : the key's bytes appear in none of them
	! grep -r -l -a -F "$KEY" "$@" >/dev/null 2>&1
}

# ---- a whole run in K-Search's format ---------------------------------------------------
start_server "$SCRIPT" "$TMP/req.jsonl"
"$KS" run "$TASK" --policy llm --llm-base-url "http://127.0.0.1:$PORT/v1" --llm-model fake \
	--budget 10 --out "$TMP/a" --json "${FAST[@]}" >"$TMP/a.json" 2>"$TMP/a.err"
ok $? "a run against a K-Search-format model completes (exit 0)"
stop_server
DB=$TMP/a/run.db
is "$(json_get "$TMP/a.json" 'd["evaluated"]')" 10 "the whole budget of 10 is evaluated"
is "$(json_get "$TMP/a.json" 'd["stopped"]')" None "it did not stop early"
is "$(q "$DB" "select count(*) from candidate_results where phase='search'")" 10 \
	"... and recorded"
[ "$(q "$DB" "select count(*) from candidates c join candidate_results r on r.candidate_id = c.id where c.policy='llm' and r.phase='search' and r.status='PASSED'")" -ge 1 ]
ok $? "at least one LLM-written kernel passes"
grep -q "init: the model's world model has 4 nodes" "$TMP/a.err"
ok $? "the K-Search init document is imported (string ids, nodes out of order)"
! grep -q "world model was rejected" "$TMP/a.err"
ok $? "... and not rejected"
grep -q "edit: the model's script applied" "$TMP/a.err"
ok $? "a K-Search edit script ({active_leaf_id, ops}) is applied"
is "$(q "$DB" "select count(*) from candidate_results where phase='search' and status='COMPILE_ERROR'")" 1 \
	"the kernel that does not compile is recorded as COMPILE_ERROR"
grep -q "HTTP 429" "$TMP/a.err" && grep -q "HTTP 500" "$TMP/a.err"
ok $? "the 429 and the 500 were retried"
grep -q "llm edit reply unusable (reply JSON invalid" "$TMP/a.err"
ok $? "the truncated JSON is logged as unusable"
grep -q "evaluating the kernel of the model's edit reply" "$TMP/a.err"
ok $? "... and the kernel beside it is evaluated all the same"
python3 - "$DB" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
last = json.loads(db.execute("select json from tree_snapshots order by version desc limit 1").fetchone()[0])
text = json.dumps(last)
for mid in ('"a1"', '"a2"', '"a4"'):
    assert mid in text, "the model's id %s is not kept" % mid
PY
ok $? "the model's own node ids are kept in the tree"
"$KS" report "$TMP/a" >/dev/null 2>&1
no_key "$TMP/a" "$TMP/a.err" "$TMP/a.json"
ok $? "the API key appears nowhere in the run folder, stderr or the JSON"
grep -q "Bearer $KEY" "$TMP/req.jsonl"
ok $? "... while the endpoint got it"

# ---- the same run replayed without a model ----------------------------------------------
"$KS" run "$TASK" --policy llm --llm-replay "$TMP/a" --budget 10 --out "$TMP/r" --json \
	"${FAST[@]}" >"$TMP/r.json" 2>"$TMP/r.err"
ok $? "--llm-replay of that run completes"
is "$(json_get "$TMP/r.json" 'd["evaluated"]')" 10 "the replay evaluates 10 again"
srcs="select group_concat(source_hash, ';') from (select * from candidates order by id)"
is "$(q "$TMP/r/run.db" "$srcs")" "$(q "$DB" "$srcs")" "... the same kernels in the same order"
no_key "$TMP/r" "$TMP/r.err"
ok $? "no key in the replayed run"

# ---- an LLM run evaluated on workers (--devices) ------------------------------------------
start_server "$SCRIPT" "$TMP/req2.jsonl"
"$KS" run "$TASK" --policy llm --llm-base-url "http://127.0.0.1:$PORT/v1" --llm-model fake \
	--budget 3 --devices 0,1 --out "$TMP/d" --json "${FAST[@]}" >"$TMP/d.json" 2>"$TMP/d.err"
ok $? "an llm run with --devices 0,1 completes"
stop_server
grep -q "2 worker(s) evaluate the candidates" "$TMP/d.err"
ok $? "... its candidates are evaluated by two workers"
is "$(json_get "$TMP/d.json" 'd["evaluated"]')" 3 "... the whole budget"
no_key "$TMP/d" "$TMP/d.err"
ok $? "no key in the workers' run"

# ---- a model that only ever repeats one kernel: evaluated once, then the run says why ---
python3 - "$SCRIPT" "$TMP/same.json" <<'PY'
import json, sys
full = json.load(open(sys.argv[1]))
kernel = full["purposes"]["direct"][0]["content"]
json.dump({"repeat_last": True, "purposes": {"*": [{"content": kernel}]}}, open(sys.argv[2], "w"))
PY
start_server "$TMP/same.json" "$TMP/req3.jsonl"
"$KS" run "$TASK" --policy llm --llm-base-url "http://127.0.0.1:$PORT/v1" --llm-model fake \
	--budget 6 --llm-max-failures 3 --out "$TMP/s" --json "${FAST[@]}" >"$TMP/s.json" 2>"$TMP/s.err"
ok $? "a run whose model repeats itself completes (exit 0)"
stop_server
is "$(q "$TMP/s/run.db" "select count(*) from candidates")" 1 "the repeated kernel is evaluated once"
grep -q "repeated .*not evaluated again" "$TMP/s.err"
ok $? "... the repeats are logged, not evaluated"
json_get "$TMP/s.json" 'd["stopped"]' | grep -q "3 model replies in a row gave nothing new"
ok $? "--json says why the search stopped early"
is "$(q "$TMP/s/run.db" "select count(*) from events where kind='stopped'")" 1 \
	"the reason is recorded in the run's events"
grep -q "The search stopped early.*3 model replies in a row gave nothing new" "$TMP/s/report.md"
ok $? "... and shown in the report"
"$KS" report "$TMP/s" --json >"$TMP/s.report.json" 2>/dev/null
json_get "$TMP/s.report.json" 'd["stopped"]' | grep -q "gave nothing new"
ok $? "... and in report --json"

done_testing
