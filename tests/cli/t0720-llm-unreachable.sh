#!/usr/bin/env bash
# A model that cannot be reached stops the run at once (exit 2, a message that says what to
# check, no run folder left); one that answered before survives later failures; a replay
# with nothing to replay is refused, and one that runs out ends the run normally.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake_llm.sh"
FAKE_IDLE=60 FAKE_LIFETIME=120
TASK=$ROOT/tests/fixtures/eval/scale
FAST=(--backend cpu --min-time 0.01 --top 1 --jobs 2)
unset KSEARCH_API_KEY OPENAI_API_KEY no_proxy NO_PROXY http_proxy https_proxy all_proxy


# nothing listens on port 1: connection refused, retried once as usual (backoff of about
# 15-30 s), then the run stops; it runs beside the checks below to keep the test short
"$KS" run "$TASK" --policy llm --llm-base-url http://127.0.0.1:1/v1 --llm-model m --budget 3 \
	--out "$TMP/p" "${FAST[@]}" >/dev/null 2>"$TMP/p.err" &
closed_pid=$!

# ---- --policy cmd: a command the shell cannot run --------------------------------------
"$KS" run "$TASK" --policy cmd --llm-cmd 'ksearch-no-such-model-cli --stdin' --budget 3 \
	--out "$TMP/c" "${FAST[@]}" >/dev/null 2>"$TMP/c.err"
is "$?" 2 "cmd: a command that is not found (status 127) exits 2"
grep -q "^ksearch run: .*'ksearch-no-such-model-cli --stdin' exited with status 127.*check --llm-cmd" "$TMP/c.err"
ok $? "... with a message naming the command"
is "$(grep -c "exited with status 127" "$TMP/c.err")" 2 "... after one call (one warning, one error)"
[ ! -e "$TMP/c" ]
ok $? "... and leaves no run folder"

printf '#!/bin/sh\necho hi\n' >"$TMP/noexec.sh"
chmod -x "$TMP/noexec.sh"
"$KS" run "$TASK" --policy cmd --llm-cmd "$TMP/noexec.sh" --budget 3 --out "$TMP/x" \
	"${FAST[@]}" >/dev/null 2>"$TMP/x.err"
is "$?" 2 "cmd: a command that is not executable (status 126) exits 2"

"$KS" run "$TASK" --policy cmd --llm-cmd 'cat >/dev/null; exit 3' --llm-max-failures 2 \
	--budget 3 --out "$TMP/e" --json "${FAST[@]}" >"$TMP/e.json" 2>"$TMP/e.err"
is "$?" 0 "cmd: another exit status is a failed exchange, the run goes on (exit 0)"
json_get "$TMP/e.json" 'd["stopped"]' | grep -q "2 model replies in a row gave nothing new"
ok $? "... until --llm-max-failures replies gave nothing new"

# ---- --policy llm: HTTP 401 from an endpoint that never answered -----------------------
# the fake server stands in as the proxy, so a base URL on another machine needs no network
cat >"$TMP/401.json" <<'EOF'
{"steps": [{"status": 401, "body": "{\"error\": {\"message\": \"no key given\"}}"}], "repeat_last": true}
EOF
start_server "$TMP/401.json" "$TMP/401.jsonl"
http_proxy=http://127.0.0.1:$PORT "$KS" run "$TASK" --policy llm \
	--llm-base-url http://api.example.invalid/v1 --llm-model m --budget 3 --out "$TMP/a" \
	"${FAST[@]}" >/dev/null 2>"$TMP/a.err"
is "$?" 2 "llm: HTTP 401 before any reply exits 2"
stop_server
is "$(grep -c "no API key (KSEARCH_API_KEY" "$TMP/a.err")" 1 \
	"... after one warning that no API key is set for a remote endpoint"
grep -q "^ksearch run: .*HTTP 401.*KSEARCH_API_KEY" "$TMP/a.err"
ok $? "... and an error that names HTTP 401 and KSEARCH_API_KEY"
is "$(wc -l <"$TMP/401.jsonl")" 1 "... after a single request"
[ ! -e "$TMP/a" ]
ok $? "... and leaves no run folder"

# ---- once the endpoint has answered, a failure is a blip the run survives ---------------
python3 - "$FAKE/scripts/scale_cpu.json" "$TMP/later.json" <<'EOF'
import json, sys
init = json.load(open(sys.argv[1]))["purposes"]["init"][:1]
json.dump({"purposes": {"init": init, "*": [{"status": 401}]}, "repeat_last": True},
          open(sys.argv[2], "w"))
EOF
start_server "$TMP/later.json" "$TMP/later.jsonl"
KSEARCH_API_KEY=sk-test-0123456789abcdef "$KS" run "$TASK" --policy llm \
	--llm-base-url "http://127.0.0.1:$PORT/v1" --llm-model m --llm-max-failures 2 --budget 3 \
	--out "$TMP/l" --json "${FAST[@]}" >"$TMP/l.json" 2>"$TMP/l.err"
is "$?" 0 "llm: HTTP 401 after the endpoint answered is survived (exit 0)"
stop_server
json_get "$TMP/l.json" 'd["stopped"]' | grep -q "gave nothing new"
ok $? "... and counts as a reply that gave nothing new"
! grep -q "no API key" "$TMP/l.err"
ok $? "... no key warning when a key is set"

q() { # q DB SQL
	python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$1" "$2"
}

# ---- --llm-replay ------------------------------------------------------------------------
"$KS" run "$TASK" --budget 1 --out "$TMP/b" "${FAST[@]}" >/dev/null 2>&1
ok $? "a builtin run to replay"
"$KS" run "$TASK" --policy llm --llm-replay "$TMP/b" --budget 3 --out "$TMP/rb" \
	"${FAST[@]}" >/dev/null 2>"$TMP/rb.err"
is "$?" 2 "replaying a run without LLM exchanges exits 2"
grep -q "holds no recorded LLM exchanges (it was made with the builtin policy?)" "$TMP/rb.err"
ok $? "... and says why"
! grep -q "replay exhausted" "$TMP/rb.err" && [ ! -e "$TMP/rb" ]
ok $? "... before asking anything, leaving no run folder"

start_server "$FAKE/scripts/scale_cpu.json" "$TMP/req.jsonl"
"$KS" run "$TASK" --policy llm --llm-base-url "http://127.0.0.1:$PORT/v1" --llm-model m \
	--budget 3 --out "$TMP/s" "${FAST[@]}" >/dev/null 2>&1
ok $? "an llm run of 3 candidates to replay"
stop_server
"$KS" run "$TASK" --policy llm --llm-replay "$TMP/s" --budget 6 --out "$TMP/rs" --json \
	"${FAST[@]}" >"$TMP/rs.json" 2>"$TMP/rs.err"
is "$?" 0 "a replay that runs out after reproducing the recorded run exits 0"
# the model's candidates come back in order; with more budget left than the recorded run had,
# a kernel with an @ksearch block may also get its knobs tuned (no model needed for that)
model_srcs="select group_concat(source_hash) from (select * from candidates where defines = '' order by id)"
is "$(q "$TMP/rs/run.db" "$model_srcs")" "$(q "$TMP/s/run.db" "$model_srcs")" \
	"... having evaluated the recorded candidates"
json_get "$TMP/rs.json" 'd["stopped"]' | grep -q "^replay exhausted: .*(--llm-replay)"
ok $? "... and says it stopped because the replay is exhausted"
is "$(grep -c "failed after.*replay exhausted" "$TMP/rs.err")" 1 "... after asking past the end once"

"$KS" run "$TASK" --policy cmd --llm-cmd 'cat >/dev/null; echo no code here' \
	--llm-max-failures 2 --budget 3 --out "$TMP/n" "${FAST[@]}" >/dev/null 2>&1
ok $? "a cmd run whose model never wrote code"
"$KS" run "$TASK" --policy llm --llm-replay "$TMP/n" --budget 3 --out "$TMP/rn" \
	"${FAST[@]}" >/dev/null 2>"$TMP/rn.err"
is "$?" 2 "a replay that ends before any candidate exits 2"
grep -q "ended before any candidate was evaluated: replay exhausted" "$TMP/rn.err" &&
	[ ! -e "$TMP/rn" ]
ok $? "... says so and leaves no run folder"

# ---- the closed port, started at the top ------------------------------------------------
wait "$closed_pid"
is "$?" 2 "llm: an endpoint where nothing listens exits 2"
grep -q "^ksearch run: .*has not answered once.*Couldn't connect.*check --llm-base-url, the network and KSEARCH_API_KEY" "$TMP/p.err"
ok $? "... with a message that says what to check"
is "$(grep -c "attempt 1:" "$TMP/p.err")" 1 "... after the retries of one request only"
! grep -q "no API key" "$TMP/p.err" && [ ! -e "$TMP/p" ]
ok $? "... no key warning for a local endpoint, no run folder left"

done_testing
