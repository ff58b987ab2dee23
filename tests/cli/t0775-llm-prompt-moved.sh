#!/usr/bin/env bash
# An improve prompt says which kernel to start from and which node its reply's IMPLEMENTS
# line names, also after the cycle moved to another node (the attention run's confusion:
# "The action being refined (node 9)" above "The cycle's best: candidate 9 of node 7"):
#   - the cycle's best on the cycle's own node: start from it, IMPLEMENTS names that node;
#   - a slower kernel credited to a new node ("IMPLEMENTS: new: ...") moves the cycle there
#     while the best stays the earlier node's: the prompt says the best was credited to that
#     node, that the cycle moved, how the new node's own kernel measured against the best,
#     and which node each kind of change names;
#   - a cycle whose only kernel is slower than the kernel it started from says so.
# needs: python3 (the fake model, tests/fake_llm/fake_llm_cmd.py)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake_llm.sh"
TASK=$ROOT/tests/fixtures/eval/scale
unset KSEARCH_API_KEY OPENAI_API_KEY

python3 - "$TMP/script.json" <<'EOF'
import json, sys
node = lambda i, parent, title: {
    "node_id": i, "parent_id": parent, "action": {"title": title, "description": "fake: " + title},
    "difficulty_1_to_5": 1, "overall_rating_0_to_10": 9 if i else 0, "confidence_0_to_1": 0.8,
    "impacts": {k: {"score": 5, "risk": "low", "notes": "fake"}
                for k in ("memory_bandwidth", "register_pressure", "compute_hw_fit")}}
doc = {"kernel_summary": "y = 2 x", "open_questions": [],
       "decision_tree": {"root_id": 0, "active_leaf_id": 1,
                         "nodes": [node(0, None, "baseline"), node(1, 0, "plain loop")]}}
def kernel(reps, tag):
    return ("```c\n#include <stdint.h>\n/* %s */\nvoid scale(const float *x, float *y, int32_t n)\n"
            "{\n\tfor (int r = 0; r < %d; r++) {\n\t\tfor (int32_t i = 0; i < n; i++)\n"
            "\t\t\ty[i] = 2.0f * x[i];\n\t\t__asm__ volatile(\"\" ::: \"memory\");\n\t}\n}\n```\n"
            % (tag, reps))
script = {"repeat_last": True, "purposes": {
    "init": [{"content": "```json\n%s\n```\n" % json.dumps(doc)}],
    "action": [{"content": "IMPLEMENTS: 1\nCHANGED: the plain loop\n\n" + kernel(1, "fast")},
               {"content": "CHANGED: forty passes\n\n" + kernel(40, "slower start")}],
    "improve": [{"content": "IMPLEMENTS: new: repeated passes\nCHANGED: thirty passes over the "
                            "data\nEXPECTED: 0.1x\n\n" + kernel(30, "slow")},
                {"content": "IMPLEMENTS: 2\nCHANGED: fewer passes {n}\n\n" + kernel(2, "two {n}"),
                 "numbered": True}],
    "edit": [{"content": "```json\n{\"ops\": []}\n```\n"}],
    "*": [{"content": "CHANGED: other {n}\n\n" + kernel(1, "other {n}"), "numbered": True}]}}
json.dump(script, open(sys.argv[1], "w"))
EOF
"$KS" run "$TASK" --policy cmd --backend cpu --min-time 0.01 --top 1 --jobs 2 --budget 12 \
	--llm-cmd "python3 $FAKE/fake_llm_cmd.py --script $TMP/script.json --state $TMP/a.state" \
	--out "$TMP/a" >"$TMP/a.out" 2>"$TMP/a.err"
ok $? "a cmd run of budget 12 completes (exit 0)"

improve() { # improve N: the N-th improve prompt's section on the best kernel
	python3 - "$TMP/a/run.db" "$1" <<'EOF'
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "select prompt from llm_exchanges where purpose = 'improve' order by id").fetchall()
p = rows[int(sys.argv[2]) - 1][0]
sec = p[p.index("## Best kernel so far"):]
print(sec[:sec.index("```")])
print([l for l in p.splitlines() if l.startswith("## The action being refined")][0])
EOF
}
improve 1 >"$TMP/i1" && improve 2 >"$TMP/i2"
ok $? "two improve prompts were asked"

grep -q "^## The action being refined (node 1)" "$TMP/i1" &&
	grep -q "^The cycle's best: candidate 1 of node 1 \"plain loop\"" "$TMP/i1" &&
	grep -q "^Start from this kernel: it is the only kernel this cycle has measured. It is node 1's own: a reply that stays within node 1's action says IMPLEMENTS: 1.$" "$TMP/i1"
ok $? "the best on the cycle's own node: start from it, IMPLEMENTS names the node"

grep -q "^## The action being refined (node 2)" "$TMP/i2" &&
	grep -q "^The cycle's best: candidate 1 of node 1 \"plain loop\"" "$TMP/i2" &&
	grep -q "^Start from this kernel: it is the fastest of the 2 kernels this cycle has measured. It was credited to node 1 \"plain loop\", not to node 2, the action above: the cycle moved to node 2 when a later kernel's IMPLEMENTS line named it; node 2's own best is candidate 2, [0-9.]*x (candidate 2 is slower than candidate 1 beyond the spreads" "$TMP/i2" &&
	grep -q "Build node 2's idea on this kernel and say IMPLEMENTS: 2; a change that only refines node 1's idea says IMPLEMENTS: 1.$" "$TMP/i2"
ok $? "after the cycle moved: the best is said to be another node's, and which node a reply names"

# a later cycle whose action (forty passes) was slower than the kernel it started from: its
# improve prompt does not call the only kernel it measured simply the fastest (the matmul
# run's finding)
python3 - "$TMP/a/run.db" <<'EOF'
import re, sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "select prompt from llm_exchanges where purpose = 'improve' order by id").fetchall()
lines = [l for (p,) in rows for l in p.splitlines() if l.startswith("Start from this kernel")]
pat = (r"^Start from this kernel: it is the only kernel this cycle has measured, though the "
       r"kernel the cycle started from, candidate (\d+), scored [0-9.]+x \(candidate \d+ is "
       r"slower than candidate \1 beyond the spreads")
sys.exit(0 if any(re.match(pat, l) for l in lines) else "no such line in:\n" + "\n".join(lines))
EOF
ok $? "a cycle's only kernel, slower than the kernel the cycle started from, is said to be so"

done_testing
