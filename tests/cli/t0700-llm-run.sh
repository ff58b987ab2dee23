#!/usr/bin/env bash
# ksearch run --policy llm / cmd against the fake model (tests/fake_llm): LLM-written kernels
# are evaluated, the tree follows the model's edit scripts, --llm-replay reproduces the run,
# every failure class is survived with a log line, and the API key never leaks.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake_llm.sh"
TASK=$ROOT/tests/fixtures/eval/scale
FAST=(--backend cpu --min-time 0.01 --top 1 --jobs 2)
KEY=sk-test-7f3a9c1e5b2d4f60a8e1 # the scripts' replies mention it too
export KSEARCH_API_KEY=$KEY
unset OPENAI_API_KEY

q() { # q DB SQL
	python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$1" "$2"
}


no_key() { # no_key FILE... : the key's bytes appear in none of them
	! grep -l -a -F "$KEY" "$@" >/dev/null 2>&1
}

# ---- usage errors: exit 2 with a message --------------------------------------------------
"$KS" run "$TASK" --policy llm --llm-model fake --out "$TMP/u1" >/dev/null 2>"$TMP/u1.err"
is "$?" 2 "--policy llm without --llm-base-url exits 2"
grep -q -- "--llm-base-url" "$TMP/u1.err"
ok $? "... and names the missing option"
"$KS" run "$TASK" --policy cmd --out "$TMP/u2" >/dev/null 2>"$TMP/u2.err"
is "$?" 2 "--policy cmd without --llm-cmd exits 2"
"$KS" run "$TASK" --policy llm --llm-base-url http://127.0.0.1:9/v1 --llm-model m \
	--context most --out "$TMP/u3" >/dev/null 2>&1
is "$?" 2 "a bad --context exits 2"

# ---- a whole run whose kernels come from the model ---------------------------------------
start_server "$FAKE/scripts/scale_cpu.json" "$TMP/req.jsonl"
"$KS" run "$TASK" --policy llm --llm-base-url "http://127.0.0.1:$PORT/v1" --llm-model fake \
	--budget 10 --out "$TMP/a" --json "${FAST[@]}" >"$TMP/a.json" 2>"$TMP/a.err"
ok $? "llm run completes against the fake server (exit 0)"
stop_server
DB=$TMP/a/run.db
n=$(q "$DB" "select count(*) from candidates where policy='llm'")
[ "$n" -ge 5 ]
ok $? "LLM-written candidates are recorded with policy llm ($n)"
[ "$(q "$DB" "select count(*) from candidate_results where phase='search' and status='PASSED'")" -ge 3 ]
ok $? "several of them pass"
is "$(q "$DB" "select count(*) from candidate_results where phase='search' and status='COMPILE_ERROR'")" 1 \
	"the kernel that does not compile is recorded as COMPILE_ERROR"
is "$(q "$DB" "select count(*) from candidates c join candidates p on c.parent_id = p.id where c.action like '%/ debug' and p.id = (select candidate_id from candidate_results where status='COMPILE_ERROR')")" 1 \
	"its debug fix is a child of the failing candidate"
[ "$(q "$DB" "select count(*) from candidates where defines like '-DBLOCK=%' and family='blocked-scale'")" -ge 1 ]
ok $? "the @ksearch kernel's knobs were tuned without the model"
is "$(q "$DB" "select count(*) from llm_exchanges where purpose='init'")" 1 "one init exchange is recorded"
[ "$(q "$DB" "select count(*) from llm_exchanges where purpose='edit'")" -ge 2 ] &&
	[ "$(q "$DB" "select count(*) from llm_exchanges where purpose='repair'")" -ge 2 ]
ok $? "edit exchanges and correction rounds are recorded"
is "$(json_get "$TMP/a.json" 'd["llm"]["calls"]')" "$(q "$DB" "select count(*) from llm_exchanges")" \
	"--json reports the LLM calls the store holds"
[ "$(json_get "$TMP/a.json" 'd["llm"]["prompt_tokens"]')" -ge 1500 ]
ok $? "--json reports prompt tokens"
snaps=$(q "$DB" "select count(*) from tree_snapshots")
[ "$snaps" -ge 3 ]
ok $? "the world model is snapshotted every round ($snaps)"
python3 - "$DB" <<'EOF'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
first = json.loads(db.execute("select json from tree_snapshots order by version limit 1").fetchone()[0])
last = json.loads(db.execute("select json from tree_snapshots order by version desc limit 1").fetchone()[0])
t0 = {n["action"]["title"]: n for n in first["decision_tree"]["nodes"]}
t1 = {n["action"]["title"]: n for n in last["decision_tree"]["nodes"]}
assert "parallelize with OpenMP" in t0 and len(t0) == 4, t0.keys()
assert t0["parallelize with OpenMP"].get("result") is None, "a forged result survived init"
assert "unroll the loop by 8" in t1, "the edit script's insert is missing"
assert t1["unroll the loop by 8"]["parent_id"] == t1["parallelize with OpenMP"]["node_id"]
assert abs(t1["blocked loop with a BLOCK knob"]["prior_rating"] - 7.5) < 1e-9, "update_node lost"
assert 0 in [n["node_id"] for n in last["decision_tree"]["nodes"]], "the root was deleted"
measured = [n for n in t1.values() if n.get("result")]
assert measured and all(n["result"]["candidate_id"] < 99 for n in measured)
EOF
ok $? "snapshots: init tree imported (forged result dropped), edit inserts and updates applied, root kept"
grep -q "delete_node.*root.*immutable" "$TMP/a.err" && grep -q "reserved.*skipped" "$TMP/a.err"
ok $? "rejected edit scripts are logged (root deletion; attaching a result, then skipped)"
grep -q '"Authorization": "Bearer '"$KEY"'"' "$TMP/req.jsonl"
ok $? "the key is sent to the endpoint as a bearer token"
"$KS" report "$TMP/a" >/dev/null 2>&1
no_key "$TMP/a"/run.db* "$TMP/a/report.md" "$TMP/a/report.html" "$TMP/a.err" "$TMP/a.json"
ok $? "the key appears in neither run.db, the reports, stderr nor the JSON"

# ---- replay: same replies in order, same code, same candidates ---------------------------
"$KS" run "$TASK" --policy llm --llm-replay "$TMP/a" --budget 10 --out "$TMP/r" --json \
	"${FAST[@]}" >"$TMP/r.json" 2>"$TMP/r.err"
ok $? "--llm-replay completes without a model"
srcs="select group_concat(source_hash || ' ' || defines, ';') from (select * from candidates order by id)"
is "$(q "$TMP/r/run.db" "$srcs")" "$(q "$DB" "$srcs")" "the replayed run's candidate sources equal the original's"
is "$(q "$TMP/r/run.db" "select group_concat(purpose) from llm_exchanges")" \
	"$(q "$DB" "select group_concat(purpose) from llm_exchanges")" "it asked for the same replies in order"
! grep -q "replay diverged\|replay exhausted" "$TMP/r.err"
ok $? "the replay never diverged"

# ---- the LLM budget ends the search phase, the final re-measurement still runs -----------
"$KS" run "$TASK" --policy llm --llm-replay "$TMP/a" --llm-max-calls 3 --budget 10 \
	--out "$TMP/m" --json "${FAST[@]}" >"$TMP/m.json" 2>"$TMP/m.err"
ok $? "a run whose LLM budget runs out completes (exit 0)"
is "$(json_get "$TMP/m.json" 'd["llm"]["calls"]')" 3 "... after exactly --llm-max-calls exchanges"
grep -q "search phase ended.*llm call budget spent" "$TMP/m.err" &&
	grep -q "^final: candidate" "$TMP/m.err"
ok $? "... says why it stopped and still re-measures the best"

# ---- failure classes ----------------------------------------------------------------------
start_server "$FAKE/scripts/scale_faults.json" "$TMP/req2.jsonl"
"$KS" run "$TASK" --policy llm --llm-base-url "http://127.0.0.1:$PORT/v1" --llm-model fake \
	--llm-timeout 2 --budget 3 --out "$TMP/f" --json "${FAST[@]}" >"$TMP/f.json" 2>"$TMP/f.err"
ok $? "a run through every failure class completes (exit 0)"
stop_server
is "$(json_get "$TMP/f.json" 'd["evaluated"]')" 3 "... and spends its budget"
for pat in "HTTP 429.*retrying in 1.0s" "HTTP 500.*retrying" "reply JSON invalid" "is not JSON" \
	"starting from the root alone" "timed out" "transfer closed" "larger than the .*cap" \
	"reply has no code block" "COMPILE_ERROR" "root node 0 is immutable"; do
	grep -q "$pat" "$TMP/f.err"
	ok $? "logged: $pat"
done
[ "$(q "$TMP/f/run.db" "select count(*) from llm_exchanges where status != 'ok'")" -ge 2 ]
ok $? "failed exchanges are recorded with their status"
no_key "$TMP/f"/run.db* "$TMP/f/report.md" "$TMP/f/report.html" "$TMP/f.err" "$TMP/f.json"
ok $? "no key leak in the failure run"

# ---- the command policy: kill -9 mid-run, then --resume retraces the recorded exchanges -----
CMD="python3 $FAKE/fake_llm_cmd.py --script $FAKE/scripts/scale_cpu.json --state $TMP/k.state"
"$KS" run "$TASK" --policy cmd --llm-cmd "$CMD" --budget 3 --out "$TMP/k" "${FAST[@]}" \
	>/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 600); do
	n=$(q "$TMP/k/run.db" "select count(*) from candidate_results" 2>/dev/null || echo 0)
	[ "${n:-0}" -ge 1 ] && break
	sleep 0.1
done
{ kill -9 $pid && wait $pid; } 2>/dev/null
before=$(q "$TMP/k/run.db" "select count(*) from candidate_results where phase='search'")
"$KS" run --resume "$TMP/k" --json >"$TMP/k.json" 2>"$TMP/k.err"
ok $? "a killed cmd run resumes (killed with $before of 3 evaluated)"
grep -q "resume: retracing [1-9][0-9]* recorded LLM exchanges" "$TMP/k.err"
ok $? "the resume retraces the recorded exchanges instead of asking again"
is "$(q "$TMP/k/run.db" "select count(*) from candidate_results where phase='search'")" 3 \
	"exactly the budget is evaluated after the resume"
[ "$(json_get "$TMP/k.json" 'd["reused"]')" -ge "$before" ]
ok $? "recorded candidates were taken from the store, not evaluated again"
is "$(q "$TMP/k/run.db" "select count(*) from candidates where policy='cmd'")" 3 \
	"the cmd run's candidates are recorded with policy cmd"
[ "$(q "$TMP/k/run.db" "select count(*) from llm_exchanges where purpose='init' and status='ok'")" = 1 ]
ok $? "its exchanges are recorded once, the retraced ones not again"
no_key "$TMP/k"/run.db* "$TMP/k.err" "$TMP/k.json"
ok $? "no key leak in the cmd run"

done_testing
