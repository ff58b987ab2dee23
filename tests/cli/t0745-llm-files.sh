#!/usr/bin/env bash
# --policy files: a model without an API.  Each prompt is written to RUN/llm/NNNN-PURPOSE.prompt.md
# and the run waits for RUN/llm/NNNN.reply.md, saying on stderr which file it waits for; Ctrl-C
# while it waits stops the run, --resume goes on from that prompt (a reply written meanwhile
# is taken at once), every exchange is recorded once, --llm-replay reproduces the run, and
# --llm-timeout bounds a wait.  The "agent" here is a shell loop answering with the fake model.
# needs: python3 (the fake model)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake_llm.sh"
TASK=$ROOT/tests/fixtures/eval/scale
FAST=(--backend cpu --min-time 0.01 --top 1 --jobs 2)
SCRIPT=$FAKE/scripts/loop_cpu.json
unset KSEARCH_API_KEY OPENAI_API_KEY

q() { # q DB SQL
	python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$1" "$2"
}
wait_for() { # wait_for FILE SECONDS: 0 once FILE exists
	for _ in $(seq 1 $(($2 * 10))); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
# answer every prompt file of DIR that has no reply yet, as an agent would (write, then rename)
responder() { # responder DIR STATE
	while :; do
		for p in "$1"/[0-9]*.prompt.md; do
			[ -e "$p" ] || continue
			n=$(basename "$p")
			n=${n%%-*}
			[ -e "$1/$n.reply.md" ] && continue
			python3 "$FAKE/fake_llm_cmd.py" --script "$SCRIPT" --state "$2" <"$p" \
				>"$1/$n.tmp" 2>/dev/null && mv "$1/$n.tmp" "$1/$n.reply.md"
		done
		sleep 0.1
	done
}
RESPONDER=
stop_responder() {
	[ -n "$RESPONDER" ] && kill "$RESPONDER" 2>/dev/null
	wait "$RESPONDER" 2>/dev/null
	RESPONDER=
}
trap 'stop_responder; rm -rf "$TMP"' EXIT

# ---- a run waits for its first reply; Ctrl-C stops it there --------------------------------
"$KS" run "$TASK" --policy files --budget 3 --out "$TMP/f" "${FAST[@]}" >/dev/null 2>"$TMP/f.err" &
pid=$!
wait_for "$TMP/f/llm/0001-init.prompt.md" 120
ok $? "the first prompt is written to RUN/llm/0001-init.prompt.md"
for _ in $(seq 1 50); do grep -q "0001.reply.md" "$TMP/f.err" && break; sleep 0.1; done
grep -q "waiting for the model: the prompt is $TMP/f/llm/0001-init.prompt.md, write the reply to $TMP/f/llm/0001.reply.md" "$TMP/f.err"
ok $? "stderr says which file the run waits for"
head -1 "$TMP/f/llm/0001-init.prompt.md" | grep -q "^### system"
grep -q "^PURPOSE: init" "$TMP/f/llm/0001-init.prompt.md"
ok $? "the prompt file holds the system message and the prompt, as --policy cmd gets them"
[ -s "$TMP/f/llm/README.md" ]
ok $? "the folder explains itself (README.md)"
sleep 1
kill -INT $pid
wait $pid
is "$?" 130 "Ctrl-C while the run waits for a reply stops it (exit 130, as a shell expects)"
is "$(q "$TMP/f/run.db" "select count(*) from llm_exchanges")" 0 \
	"... recording no exchange for the unanswered prompt"

# ---- the reply is written while ksearch is not running; --resume takes it and goes on ----
responder "$TMP/f/llm" "$TMP/f.state" &
RESPONDER=$!
wait_for "$TMP/f/llm/0001.reply.md" 60
ok $? "an agent answers the prompt file while the run is stopped"
"$KS" run --resume "$TMP/f" --json >"$TMP/f.json" 2>"$TMP/f2.err"
ok $? "--resume continues from the waiting prompt (exit 0)"
stop_responder
is "$(json_get "$TMP/f.json" 'd["evaluated"]')" 3 "... and evaluates the budget"
n=$(ls "$TMP/f/llm" | grep -c "\.prompt\.md$")
is "$(q "$TMP/f/run.db" "select count(*) from llm_exchanges")" "$n" \
	"every prompt file is one recorded exchange ($n)"
is "$(ls "$TMP/f/llm" | grep -c "^0001-")" 1 "... the waiting prompt was asked once, under its number"
is "$(q "$TMP/f/run.db" "select purpose from llm_exchanges order by id limit 1")" init \
	"... and the reply written meanwhile was taken as its reply"
is "$(json_get "$TMP/f.json" 'd["llm"]["prompt_tokens"]')" None "token counts are unknown"

# ---- the recorded run replays without anyone answering ------------------------------------
"$KS" run "$TASK" --policy files --llm-replay "$TMP/f" --budget 3 --out "$TMP/r" --json \
	"${FAST[@]}" >"$TMP/r.json" 2>"$TMP/r.err"
ok $? "--llm-replay reproduces the files run (exit 0)"
srcs="select group_concat(source_hash, ',') from (select * from candidates order by id)"
is "$(q "$TMP/r/run.db" "$srcs")" "$(q "$TMP/f/run.db" "$srcs")" "... with the same candidates"
[ ! -e "$TMP/r/llm" ]
ok $? "... writing no prompt files"

# ---- --llm-timeout bounds a wait ----------------------------------------------------------
"$KS" run "$TASK" --policy files --llm-timeout 1s --llm-max-failures 2 --budget 1 \
	--out "$TMP/t" "${FAST[@]}" >/dev/null 2>"$TMP/t.err"
is "$?" 0 "a run nobody answers ends after --llm-max-failures timed-out waits (exit 0)"
grep -q "no reply in $TMP/t/llm/0001.reply.md after 1 s" "$TMP/t.err"
ok $? "... saying which reply did not come"
is "$(q "$TMP/t/run.db" "select status from llm_exchanges order by id limit 1")" timeout \
	"... recorded as a timed-out exchange"

done_testing
