#!/usr/bin/env bash
# The K-Search loop with a model behaves like K-Search (issue 40), checked on what a run
# records (the prompts it sent are in run.db): the tree is revised once a cycle has a quarter of
# the budget; the model's active_leaf_id is followed, or the model is told which rule it
# broke; a kernel is credited to the node its IMPLEMENTS line names; improve prompts carry
# the cycle's attempts; a repeated kernel gets a repeat prompt; what ksearch could not use (a
# dropped @ksearch block, an unusable reply) goes back to the model, into the events and
# report.md; a code block over the source limit is one unusable reply, which neither ends the
# run nor its --resume; token counts of a command are unknown, not 0.
# needs: python3 (the fake model, tests/fake_llm/fake_llm_cmd.py)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake_llm.sh"
TASK=$ROOT/tests/fixtures/eval/scale
FAST=(--backend cpu --min-time 0.01 --top 1 --jobs 2)
unset KSEARCH_API_KEY OPENAI_API_KEY

q() { # q DB SQL
	python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$1" "$2"
}
prompt() { # prompt DB N: the prompt of exchange N (1-based, in call order)
	q "$1" "select prompt from llm_exchanges order by id limit 1 offset $(($2 - 1))"
}
fake() { # fake SCRIPT STATE: the --llm-cmd of the fake model
	echo "python3 $FAKE/fake_llm_cmd.py --script $1 --state $2"
}

# ---- the loop: cadence, the model's choice of node, credit, history ----------------------
"$KS" run "$TASK" --policy cmd --llm-cmd "$(fake "$FAKE/scripts/loop_cpu.json" "$TMP/a.state")" \
	--budget 8 --out "$TMP/a" --json "${FAST[@]}" >"$TMP/a.json" 2>"$TMP/a.err"
ok $? "a cmd run of budget 8 completes (exit 0)"
DB=$TMP/a/run.db
is "$(json_get "$TMP/a.json" 'd["evaluated"]')" 8 "... evaluating its budget"
edits=$(q "$DB" "select count(*) from llm_exchanges where purpose='edit'")
[ "$edits" -ge 3 ]
ok $? "the tree is revised at least every quarter of the budget ($edits edit rounds in 8)"
grep -q "the tree is revised once a cycle has 2 candidates, knob tuning's included" "$TMP/a.err"
ok $? "... and the run says how often"
prompt "$DB" 2 >"$TMP/p2"
grep -q "^## The action to implement (node 2)" "$TMP/p2"
ok $? "the first action is the node the model named (active_leaf_id 2: difficulty 4, rating 1)"
grep -q "expected: 1.70x the baseline; the loop is bandwidth bound" "$TMP/p2"
ok $? "... its prompt shows the speedup the model expected and why"
is "$(q "$DB" "select node_id from candidates where id = 2")" 3 \
	"a kernel whose IMPLEMENTS line names node 3 is credited to node 3"
python3 - "$DB" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
p = db.execute("select prompt from llm_exchanges where purpose = 'improve' order by id").fetchone()[0]
h = p[p.index("## This cycle's attempts"):]
h = h[:h.index("\n## ")]
assert "1. action, node 2: candidate 1 PASSED" in h, h
assert "changed: vector loop over x" in h and "expected: 1.7x: wider stores" in h, h
assert " us ±" in h, "no spread per workload: " + h
EOF
ok $? "the improve prompt carries the cycle's attempts: status, speedup and spread, what changed"
python3 - "$DB" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select purpose, prompt from llm_exchanges order by id").fetchall()
i = [p for p, _ in rows].index("edit")
after = [t for p, t in rows[i + 1:] if p == "action"][0]
assert "your active_leaf_id 2 was not followed: node 2 is closed" in after, after[-3000:]
edit = rows[i][1]
# the cycle's best of its two passing kernels, as measured (noisy: either may win)
best = db.execute("select candidate_id from candidate_results where phase = 'search' and "
                  "candidate_id in (1, 2) order by speedup desc limit 1").fetchone()[0]
tag = {1: "/* vector loop */", 2: "/* streaming stores */"}[best]
kernel = edit[edit.index("## The cycle's kernel"):]
assert tag in kernel[:kernel.index("\n## ", 5)], "the edit prompt does not show the cycle's best kernel"
later = [t for p, t in rows[i + 1:] if "## World model" in t][-1]
assert "notes: CURRENT: measured." in later, "no reflection notes in the tree"
EOF
ok $? "an active_leaf_id naming a closed node is refused and the model told which rule; the edit prompt shows the cycle's kernel; reflection notes stay on the node"
python3 - "$DB" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
p = db.execute("select prompt from llm_exchanges where purpose = 'debug'").fetchone()[0]
base = p[p.index("## Known-good base kernel"):p.index("## Failing kernel")]
assert "y[i] = 2.0f * x[i];" in base, base
assert "## Reference implementation" in p and "reference.c" in p, "no reference source"
EOF
ok $? "the debug prompt shows the known-good base kernel and the reference source"
prompt "$DB" 1 >"$TMP/p1"
grep -q "^The kernels run on this CPU: .* f32 SIMD lanes;.*OpenMP threads in force" "$TMP/p1" &&
	! grep -q "CUDA concepts on this target" "$TMP/p1"
ok $? "a CPU run's prompts carry the CPU's facts and no CUDA concept map"
is "$(json_get "$TMP/a.json" 'd["llm"]["prompt_tokens"]')" None \
	"--json: a command's token counts are unknown (null), not 0"
grep -q "^llm: .*tokens unknown" "$TMP/a.err"
ok $? "... and the log says so"
grep -q "| 12 | 12 | unknown | unknown |" "$TMP/a/report.md"
ok $? "... and report.md"

# ---- what ksearch could not use goes back to the model -----------------------------------
"$KS" run "$TASK" --policy cmd --llm-cmd "$(fake "$FAKE/scripts/loop_reject.json" "$TMP/b.state")" \
	--budget 4 --out "$TMP/b" --json "${FAST[@]}" >"$TMP/b.json" 2>"$TMP/b.err"
ok $? "a run whose model sends what cannot be used completes (exit 0)"
DB=$TMP/b/run.db
q "$DB" "select prompt from llm_exchanges where id = (select min(id) from llm_exchanges where id > (select min(id) from llm_exchanges where purpose = 'action'))" >"$TMP/b1"
grep -q "^- the @ksearch block of candidate 1 was dropped (.*lacks the key 'family')" "$TMP/b1"
ok $? "a dropped @ksearch block is told to the model in the next prompt, with the reason"
q "$DB" "select prompt from llm_exchanges where purpose = 'repeat'" >"$TMP/b2"
grep -q "Your last kernel is identical to candidate 1" "$TMP/b2"
ok $? "a repeated kernel gets a prompt of its own kind naming the candidate"
q "$DB" "select prompt from llm_exchanges where id = (select min(id) from llm_exchanges where id > (select max(id) from llm_exchanges where purpose = 'repair'))" >"$TMP/b3"
grep -q "^- your 'repeat' reply could not be used: .*no code block" "$TMP/b3"
ok $? "an unusable reply is told to the model in its next prompt"
is "$(q "$DB" "select group_concat(distinct json_extract(data, '\$.what')) from (select data from events where kind = 'llm_rejected' order by id)")" \
	"knob_block,repeat,unusable_reply" "each is an event of the run"
grep -q "^What the run could not use from the model" "$TMP/b/report.md" &&
	grep -q "^- the @ksearch block of candidate 1 was dropped" "$TMP/b/report.md"
ok $? "... and report.md lists them"

# ---- a code block over the source limit: one unusable reply, --resume survives it --------
python3 - "$FAKE/scripts/loop_cpu.json" "$TMP/big.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
big = "```c\n" + "/* %s */\n" % ("x" * 100) * 12000 + "void scale(const float *x, float *y, int n) {}\n```\n"
d["purposes"]["action"] = [{"content": "IMPLEMENTS: 2\n" + big}] + d["purposes"]["action"]
json.dump(d, open(sys.argv[2], "w"))
EOF
"$KS" run "$TASK" --policy cmd --llm-cmd "$(fake "$TMP/big.json" "$TMP/c.state")" --budget 3 \
	--out "$TMP/c" "${FAST[@]}" >/dev/null 2>"$TMP/c.err" &
pid=$!
for _ in $(seq 1 900); do
	n=$(q "$TMP/c/run.db" "select count(*) from candidate_results" 2>/dev/null || echo 0)
	[ "${n:-0}" -ge 1 ] && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
{ kill -9 $pid && wait $pid; } 2>/dev/null
grep -q "the code block is [0-9]* bytes, over the 1048576-byte limit of a kernel source" "$TMP/c.err"
ok $? "a 1.2 MB code block is an unusable reply, with the reason"
"$KS" run --resume "$TMP/c" --json >"$TMP/c.json" 2>"$TMP/c2.err"
ok $? "--resume of that run replays the oversized reply and completes (exit 0)"
is "$(json_get "$TMP/c.json" 'd["evaluated"]')" 3 "... evaluating its budget"

done_testing
