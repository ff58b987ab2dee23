#!/usr/bin/env bash
# What a --policy cmd command answers is taken as it is: a reply is complete when the shell
# exits (a background child holding stdout is not waited for), a kernel where JSON was
# wanted is named as such, and an empty reply is an unusable reply that a replay reproduces.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake_llm.sh"
TASK=$ROOT/tests/fixtures/eval/scale
FAST=(--backend cpu --min-time 0.01 --top 1 --jobs 2)
unset KSEARCH_API_KEY OPENAI_API_KEY

q() { # q DB SQL
	python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$1" "$2"
}

# ---- a command that leaves a background child holding stdout -----------------------------
printf '#!/bin/sh\ncat >/dev/null; (sleep 1000 &); echo "prose only"\n' >"$TMP/bgchild.sh"
chmod +x "$TMP/bgchild.sh"
t0=$(date +%s)
"$KS" run "$TASK" --policy cmd --llm-cmd "$TMP/bgchild.sh" --llm-timeout 20 \
	--llm-max-failures 2 --budget 2 --out "$TMP/bg" "${FAST[@]}" >/dev/null 2>"$TMP/bg.err"
is "$?" 0 "a command leaving a background child on stdout: the run goes on (exit 0)"
elapsed=$(($(date +%s) - t0))
! grep -q "timed out" "$TMP/bg.err"
ok $? "... no call waits for the child (no timeout)"
[ "$elapsed" -lt 20 ]
ok $? "... the run takes less than one --llm-timeout (${elapsed}s)"
grep -q "reply has no" "$TMP/bg.err"
ok $? "... its replies are read (and found unusable: prose only)"
[ "$(q "$TMP/bg/run.db" "select count(*) from llm_exchanges where reply like 'prose only%'")" -ge 1 ]
ok $? "... and recorded"

# ---- a kernel where JSON was wanted --------------------------------------------------------
cat >"$TMP/conly.sh" <<'EOF'
#!/bin/sh
cat >/dev/null
cat <<'KERNEL'
```c
void f(float *y)
{
	for (int i = 0; i < 2; i++) { y[i] = 0; }
}
```
KERNEL
EOF
chmod +x "$TMP/conly.sh"
"$KS" run "$TASK" --policy cmd --llm-cmd "$TMP/conly.sh" --llm-max-failures 1 --budget 1 \
	--out "$TMP/c" "${FAST[@]}" >/dev/null 2>"$TMP/c.err"
is "$?" 0 "a command answering a kernel only: the run goes on (exit 0)"
grep -q "llm init reply unusable (reply has no JSON object (it has a \`\`\`c block: the JSON was expected in a \`\`\`json block))" "$TMP/c.err"
ok $? "... the init reply is said to hold a \`\`\`c block instead of JSON"
! grep -q "reply JSON invalid" "$TMP/c.err"
ok $? "... not reported as invalid JSON inside the C code"

# ---- an empty reply is recorded as one, and replayed --------------------------------------
python3 - "$FAKE/scripts/scale_cpu.json" "$TMP/empty.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["purposes"]["action"] = [{"content": ""}] + d["purposes"]["action"]
json.dump(d, open(sys.argv[2], "w"))
EOF
CMD="python3 $FAKE/fake_llm_cmd.py --script $TMP/empty.json --state $TMP/e.state"
"$KS" run "$TASK" --policy cmd --llm-cmd "$CMD" --budget 3 --out "$TMP/e" --json "${FAST[@]}" \
	>"$TMP/e.json" 2>"$TMP/e.err"
is "$?" 0 "a cmd run whose first action reply is empty completes (exit 0)"
is "$(json_get "$TMP/e.json" 'd["evaluated"]')" 3 "... evaluating its budget"
is "$(q "$TMP/e/run.db" "select status from llm_exchanges where error like '%wrote no reply on stdout%'")" \
	parse_error "... the empty reply is recorded as an unusable reply"
is "$(q "$TMP/e/run.db" "select count(*) from llm_exchanges where status = 'replay_mismatch'")" 0 \
	"... not as a replay divergence"
"$KS" run "$TASK" --policy cmd --llm-replay "$TMP/e" --budget 3 --out "$TMP/r" --json \
	"${FAST[@]}" >"$TMP/r.json" 2>"$TMP/r.err"
is "$?" 0 "its replay completes (exit 0)"
is "$(json_get "$TMP/r.json" 'd["evaluated"]')" 3 "... reproducing every candidate"
is "$(json_get "$TMP/r.json" 'd["stopped"]')" None "... without stopping at the empty reply"
is "$(q "$TMP/r/run.db" "select count(*) from llm_exchanges")" \
	"$(q "$TMP/e/run.db" "select count(*) from llm_exchanges")" "... through every recorded exchange"

done_testing
