#!/usr/bin/env bash
# What the prompts of a run with a model show is true (the findings of four real models'
# runs, docs/llm.md), checked on the prompts a run records in run.db:
#   - a kernel's code reads as it ran: the knob values it was timed with are in its #defines
#     and its @ksearch defaults, one value per knob;
#   - code and feedback are always one candidate's, named; the cycle's kernel is its best as
#     measured, knob-tuned variants included, not its last;
#   - an action builds on the kernel of the node it was placed under, and the prompt says
#     which candidate of which node that is, why, and what else was measured on the path;
#   - a node ksearch made with placeholder scores is said to have them until an edit scores it,
#     and one made for "IMPLEMENTS: new: TITLE" is described by the reply's CHANGED line;
#   - knob tuning is told: how many configurations of how many, which won, or why none ran;
#   - the machine's load and the spreads are told, and which differences are inside them, each
#     comparison naming both kernels, the tree's by the same rule;
#   - a CPU's facts are in a CPU's terms, its measured roofs said to be measured under the
#     load their probes recorded (not the load when the prompt is written), and an empty
#     knowledge section is left out; the edit prompt names the field that prunes a node;
#   - a cycle that ended on its share counts the candidates its attempts list and says so.
# needs: python3 (the fake model, tests/fake_llm/fake_llm_cmd.py)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake_llm.sh"
TASK=$ROOT/tests/fixtures/eval/scale
unset KSEARCH_API_KEY OPENAI_API_KEY

"$KS" run "$TASK" --policy cmd --backend cpu --min-time 0.01 --top 1 --jobs 2 --budget 8 \
	--llm-cmd "python3 $FAKE/fake_llm_cmd.py --script $FAKE/scripts/loop_truth.json --state $TMP/a.state" \
	--out "$TMP/a" >"$TMP/a.out" 2>"$TMP/a.err"
ok $? "a cmd run of budget 8 completes (exit 0)"
DB=$TMP/a/run.db

cat >"$TMP/check.py" <<'EOF'
import re, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select purpose, prompt from llm_exchanges order by id").fetchall()
cands = {i: (s, d, sp) for i, s, d, sp in db.execute(
    "select c.id, c.source, c.defines, r.speedup from candidates c left join candidate_results r "
    "on r.candidate_id = c.id and r.phase = 'search'")}

def section(p, head):
    """the text of the prompt section whose heading starts with head, or None"""
    i = p.find("\n## " + head)
    if i < 0:
        return None
    body = p[p.index("\n", i + 1) + 1:]
    j = body.find("\n## ")
    return body if j < 0 else body[:j]

def code_of(sec):
    m = re.search(r"```c\n(.*?)```", sec, re.S)
    return m.group(1)

def named(sec):
    """the candidate the line above a code block names, None for the starting kernel"""
    m = re.search(r"candidate (\d+)", sec.split("```")[0])
    return int(m.group(1)) if m else None

def baked_ok(code, k):
    """code is candidate k's source with its knob values as it ran"""
    src, defines, _ = cands[k]
    if not defines:
        return code.strip() == src.strip(), "not the candidate's source"
    for name, val in re.findall(r"-D(\w+)=(\S+)", defines):
        vals = set(re.findall(r"#\s*define\s+%s\s+(\S+)" % name, code))
        if vals != {val}:
            return False, "#define %s says %s, it ran with %s" % (name, sorted(vals), val)
        line = re.search(r"^\s*%s:.*$" % name, code, re.M).group(0)
        if "default: %s" % val not in line:
            return False, "the block says %r, it ran with %s" % (line, val)
    return True, ""

check = sys.argv[2]
shown = 0
for purpose, p in rows:
    heads = {"action": ["Parent kernel"], "improve": ["Best kernel so far"],
             "edit": ["The cycle's kernel"], "debug": ["Failing kernel"],
             "repeat": ["Best kernel so far"], "direct": ["Best kernel so far"]}.get(purpose, [])
    for h in heads:
        sec = section(p, h)
        k = named(sec)
        if check == "one-candidate" and k is not None:
            ok, why = baked_ok(code_of(sec), k)
            assert ok, "%s prompt, %s: candidate %d: %s" % (purpose, h, k, why)
            fb = section(p, "Its evaluation feedback") or section(p, "Evaluation feedback")
            if fb is not None and purpose != "debug":
                assert fb.startswith("candidate %d:" % k), (purpose, k, fb[:80])
            shown += 1
        if check == "best" and purpose == "edit":
            att = section(p, "The cycle's attempts")
            passed = [int(c) for c in re.findall(r"candidate (\d+) PASSED", att)]
            best = max(passed, key=lambda c: cands[c][2])
            ok, why = baked_ok(code_of(sec), best)
            assert ok, "the edit does not show the cycle's best, candidate %d of %s" % (best, passed)
            fb = section(p, "Its evaluation feedback")
            assert "%.3fx the baseline" % cands[best][2] in fb.split("\n")[0], (
                "the feedback is not candidate %d's: %s" % (best, fb.split("\n")[0]))
            shown += 1
        if check == "consistent" and sec and "@ksearch" in sec:
            # naming aside: a knob's #defines and its block default say one value
            code = code_of(sec)
            for name, default in re.findall(r"^\s*(\w+):\s*\{values:.*default:\s*(\w+)", code, re.M):
                vals = set(re.findall(r"#\s*define\s+%s\s+(\S+)" % name, code))
                assert vals <= {default}, "%s prompt, %s: %s is %s in the block, %s in #defines" % (
                    purpose, h, name, default, sorted(vals))
            shown += 1
        if check == "defines" and k is not None and cands[k][1]:
            shown += 1
assert shown, "no prompt showed a code section for check %s" % check
EOF
for c in consistent one-candidate best defines; do
	out=$(python3 "$TMP/check.py" "$DB" $c 2>&1)
	ok $? "check $c${out:+: $out}"
done
# consistent: no code shown says two values for a knob (its #defines against its @ksearch
# default); one-candidate: every code shown is one candidate's, named, with its own feedback
# and its knob values in its #defines and @ksearch defaults; best: each edit prompt shows the
# fastest kernel of the cycle's attempts with that kernel's feedback; defines: a tuned
# variant was shown at least once

prompt() { # prompt N: the prompt of exchange N (1-based, in call order)
	python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select prompt from llm_exchanges order by id limit 1 offset ' + sys.argv[2]).fetchone()[0])" \
		"$DB" "$(($1 - 1))"
}
for i in $(seq 1 11); do prompt "$i" >"$TMP/p$i"; done

# the first action builds on the starting kernel, and says what it is
sed -n '/^## Parent kernel/,/^```/p' "$TMP/p2" >"$TMP/first"
grep -q "^This is the starting kernel (baseline.c of the task: the baseline itself, 1.0x by definition)." "$TMP/first" &&
	grep -q "^Why this kernel: no node on node .*'s path has a passing kernel yet." "$TMP/first"
ok $? "the first action's parent is the starting kernel, said to be the baseline itself"

# the action on node 5, under the slow node 3, which is under the fast node 1
sed -n '/^## Parent kernel/,/^## Evaluation feedback/p' "$TMP/p7" >"$TMP/parent"
grep -q "^## The action to implement (node 5)" "$TMP/p7" && grep -q "/\* slow kernel \*/" "$TMP/parent" &&
	grep -q "Why this kernel: node 5 refines node 3, its parent in the tree" "$TMP/parent" &&
	grep -q "Also measured on its path: node 1's candidate [12], " "$TMP/parent"
ok $? "an action builds on the kernel of the node it is under, and says why and what else was measured"

grep -q "^Placeholder scores: ksearch made node 6 itself" "$TMP/p9" &&
	! grep -q "^Placeholder scores" "$TMP/p10"
ok $? "an IMPLEMENTS: new node's placeholder scores are said until an edit scores them"
sed -n '/^\[6\] /,/^\[/p' "$TMP/p9" >"$TMP/new6"
grep -q "^    a fused idea (as the reply that made it said, while working on node 5)" "$TMP/new6" &&
	! grep -q "an idea the model's kernel implemented" "$TMP/new6"
ok $? "... and its description is the reply's CHANGED line, not a generic one"

grep -q "knobs: ksearch tunes them without you: up to 1 of the 2 other feasible configurations" "$TMP/p3" &&
	grep -q "knobs: tuning of candidate 1 done: 2 of 3 configurations measured" "$TMP/p3"
ok $? "knob tuning is told: how many configurations of how many, and which won"
grep -q "knobs: not tuned: 3 candidates are left in the budget, and tuning spends at most 1/4" "$TMP/p8"
ok $? "... and when it does not run, why"

python3 - "$TMP" <<'EOF'
import re, sys
for i in (2, 3, 5, 6, 9):
    p = open("%s/p%d" % (sys.argv[1], i)).read()
    sec = p[p.index("## How far the measurements can be trusted"):]
    m = re.search(r"the machine (was|is) (not loaded|loaded)\b.*?load average ([\d.]+) on (\d+) CPUs", sec, re.S | re.I)
    assert m, sec[:300]
    loaded = float(m.group(3)) > int(m.group(4))
    assert (m.group(2) == "loaded") == loaded, m.group(0)
    assert "plus half its spread, plus 1%" in sec
att = open("%s/p3" % sys.argv[1]).read()
assert re.search(r"against what it started from: (candidate 2 is (faster|slower) than candidate 1 "
                 r"|no measured difference between candidate 2 and candidate 1)", att), att
EOF
ok $? "the machine's load and the rule for differences are told; attempts say where a difference is inside the spreads"

python3 - "$TMP" <<'EOF'
import re, sys
trees = 0
for i in range(1, 12):
    p = open("%s/p%d" % (sys.argv[1], i)).read()
    assert "against it:" not in p, "p%d: a comparison whose subject is 'it'" % i
    assert "below the best kernel above it" not in p, "p%d: 'below' on the speedup alone" % i
    for line in re.findall(r"^\[\d+\] .*measured: candidate \d+.*$", p, re.M):
        m = re.search(r"measured: candidate (\d+), [\d.]+x the baseline \(the best kernel above "
                      r"it on its path: node \d+'s candidate (\d+), [\d.]+x; (.*)\)$", line)
        if not m:
            continue
        a, b, says = m.groups()
        assert re.match(r"candidate %s is (faster|slower) than candidate %s |no measured difference "
                        r"between candidate %s and candidate %s" % (a, b, a, b), says), line
        trees += 1
assert trees, "no tree named the best kernel above a node"
EOF
ok $? "each comparison names both kernels; the tree judges a node against the kernel above it by the spreads, as the rest of the prompt does"

sed -n '/^## Target hardware/,/^## /p' "$TMP/p1" >"$TMP/hw"
grep -q "f32 SIMD lanes" "$TMP/hw" && ! grep -Eq "simd_width|smem_per_block|threads per group" "$TMP/hw" &&
	grep -q "measured, not the hardware's limits" "$TMP/hw" &&
	grep -Eq "^- mem_bandwidth_gbps: .*\(measured .* by the memcpy probe at load [0-9.]+ on [0-9]+ cores" "$TMP/hw" &&
	! grep -q "under load average" "$TMP/hw"
ok $? "a CPU's facts in a CPU's terms, its measured roofs said to be measured and under the load their probes recorded"
"$KS" prompt softmax --purpose action --context spec >"$TMP/spec" 2>/dev/null &&
	grep -q "^## Target hardware" "$TMP/spec" && ! grep -q "^## Knowledge for this target" "$TMP/spec"
ok $? "--context spec: no empty knowledge section"
python3 - "$TMP" <<'EOF'
import re, sys
ended = 0
for i in range(1, 12):
    p = open("%s/p%d" % (sys.argv[1], i)).read()
    m = re.search(r"^- cycle ended: (\d+) candidates since the tree was last revised, (\d+) of them "
                  r"knob tuning's \(the tree is revised once a cycle has (\d+) candidates, knob "
                  r"tuning's included; a kernel's knob tuning is finished first", p, re.M)
    if not m:
        continue
    n, tuned, cap = map(int, m.groups())
    att = p[p.index("## The cycle's attempts"):]
    att = att[:att.index("\n## ", 1)]
    lines = [l for l in re.findall(r"^\d+\. (.*)$", att, re.M) if "REPEATED" not in l]
    assert n == len(lines) and n >= cap, (i, m.group(0), lines)
    assert tuned == len([l for l in lines if l.startswith("knob tuning")]), (i, m.group(0), lines)
    ended += 1
assert ended, "no edit prompt said why its cycle ended"
EOF
ok $? "a cycle that ended on its share counts the candidates its attempts list, knob tuning's included, and says so"
grep -q "the tree is revised once a cycle has 2 candidates, knob tuning's included" "$TMP/a.err"
ok $? "... as the run's first log line does"
grep -qF '{"op": "update_node", "node_id": 4, "node": {"status": "pruned"}}' "$TMP/p3"
ok $? "the edit prompt names the field that prunes a node"

done_testing
