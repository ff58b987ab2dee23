#!/bin/bash
# ksearch report: usage and error handling; the report of a real `ksearch run` (the world
# model's tree as the search wrote it); then the synthetic run that the report unit test
# writes (tests/unit/test_report.c, KS_REPORT_FIXTURE_DIR) for exact leaderboard numbers.
. "$(dirname "$0")/lib.sh"

"$KS" report --help >"$TMP/help" 2>&1
ok $? "report --help exits 0"
grep -q "ksearch report RUN_DIR" "$TMP/help"
ok $? "help shows the usage line"
grep -q -- "--json" "$TMP/help" && grep -q -- "--top" "$TMP/help"
ok $? "help lists --json and --top"

"$KS" report >/dev/null 2>"$TMP/err"
is "$?" 2 "no RUN_DIR: exit 2"
grep -q "needs RUN_DIR" "$TMP/err"
ok $? "no RUN_DIR: says what is missing"

"$KS" report "$TMP/missing" >"$TMP/out" 2>"$TMP/err"
is "$?" 2 "missing dir: exit 2"
is "$(cat "$TMP/err")" "ksearch report: no run database in '$TMP/missing' (expected $TMP/missing/run.db)" \
	"missing dir: clear message"
is "$(wc -c <"$TMP/out")" 0 "missing dir: nothing on stdout"

mkdir -p "$TMP/empty"
"$KS" report "$TMP/empty" --json >/dev/null 2>"$TMP/err"
is "$?" 2 "dir without run.db: exit 2"
grep -q "no run database in '$TMP/empty' (expected $TMP/empty/run.db)" "$TMP/err"
ok $? "dir without run.db: clear message"
test ! -e "$TMP/empty/report.md" && test ! -e "$TMP/empty/run.db"
ok $? "dir without run.db: nothing created"

echo "not a database" >"$TMP/empty/run.db"
"$KS" report "$TMP/empty" >/dev/null 2>"$TMP/err"
is "$?" 2 "corrupt run.db: exit 2"
test -s "$TMP/err"
ok $? "corrupt run.db: an error message"

"$KS" report "$TMP/empty" --md --json >/dev/null 2>"$TMP/err"
is "$?" 2 "two formats: exit 2"
"$KS" report "$TMP/empty" --top 0 >/dev/null 2>"$TMP/err"
is "$?" 2 "--top 0: exit 2"
grep -q -- "option .--top. must be from 1 to 1000" "$TMP/err"
ok $? "--top 0: says the range"

# a real search on a tiny task: its report must draw the tree the search recorded.  The
# task (tests/fixtures/eval/scale plus a library.c) has OpenBLAS as its library yardstick;
# without OpenBLAS installed the run skips it with a note and the library checks skip.
REAL="$TMP/real"
"$KS" run "$ROOT/tests/fixtures/library/scale" --budget 5 --seed 2 --out "$REAL" --min-time 0.01 \
	--top 2 --jobs 2 >"$TMP/real.out" 2>"$TMP/real.err"
ok $? "ksearch run writes a real run"
grep -qE '^\[final\] [0-9]+m[0-9]{2}s \| round 1, 1/[0-9]+ candidate #[0-9]+: ' "$TMP/real.err"
ok $? "[final] lines name the candidate and show the elapsed time"
grep -qE '^\[1/5\] [0-9]+m[0-9]{2}s \| best .* \| ETA \? \|' "$TMP/real.err"
ok $? "no ETA from the first candidate alone (it paid for setup)"
grep -qE '^\[4/5\] .* \| ETA [0-9]+m[0-9]{2}s \|' "$TMP/real.err"
ok $? "an ETA once the rate is known"
sqlite3_titles() { # the action titles and ids of the latest snapshot, one "id<TAB>title" a line
	python3 -c '
import json, sqlite3, sys
row = sqlite3.connect(sys.argv[1]).execute(
    "select json from tree_snapshots order by version desc limit 1").fetchone()
for n in json.loads(row[0])["decision_tree"]["nodes"]:
    print("%s\t%s" % (n["node_id"], n["action"]["title"]))' "$1"
}
sqlite3_titles "$REAL/run.db" >"$TMP/titles"
test "$(wc -l <"$TMP/titles")" -ge 5
ok $? "the run recorded a tree of at least 5 nodes ($(wc -l <"$TMP/titles"))"
"$KS" report "$REAL" >/dev/null
ok $? "report of the real run"
sed -n '/^## World model/,/^## Failures/p' "$REAL/report.md" >"$TMP/tree.md"
missing=0
while IFS=$'\t' read -r id title; do
	esc=$(printf '%s' "$title" | sed 's/>/\\>/g')
	grep -qF "[$id] $esc" "$TMP/tree.md" || { echo "# node $id '$title' missing"; missing=$((missing + 1)); }
done <"$TMP/titles"
is "$missing" 0 "report.md draws every node of the snapshot with its id and title"
grep -q "^- \*\*★ \[0\] naive baseline\*\* — rating 5.0/10, confidence 0.50" "$TMP/tree.md"
ok $? "report.md: the root, starred, with rating and confidence"
grep -qE "^  - .*family: .* [0-9]+ visits?, [0-9]+ attempts?, candidate #[0-9]+ measured [0-9.]+x \((search|final)\)" "$TMP/tree.md"
ok $? "report.md: a family node with visits, attempts, its candidate and measured speedup"
test "$(grep -c '★' "$TMP/tree.md")" -ge 3
ok $? "report.md: a path of at least three nodes to the best is starred"
"$KS" report "$REAL" --json >"$TMP/real.json"
is "$(json_get "$TMP/real.json" 'd["tree"]["nodes"]')" "$(wc -l <"$TMP/titles")" "--json: tree node count"
bestnode=$(json_get "$TMP/real.json" '[c["node"] for c in d["candidates"] if c["id"] == d["best"]["candidate"]][0]')
is "$(json_get "$TMP/real.json" 'd["tree"]["best_path"][-1]["node"]')" "$bestnode" \
	"--json: the best path ends at the best candidate's node"
grep -o '<div class="tree">' "$REAL/report.html" >/dev/null &&
	grep -q '<li class="bestpath"><strong>★ \[0\] naive baseline</strong>' "$REAL/report.html" &&
	grep -qF "$(sed -n 2p "$TMP/titles" | cut -f2 | sed 's/>/\&gt;/g')" "$REAL/report.html"
ok $? "report.html draws the tree with real titles"
"$KS" report "$REAL" --md --tree 3 >"$TMP/fold.md"
grep -qE "Showing [0-9]+ of $(wc -l <"$TMP/titles") nodes" "$TMP/fold.md" &&
	grep -qE "more nodes? folded" "$TMP/fold.md"
ok $? "--tree 3 folds the tree (best path and active leaf always drawn) and counts the rest"
"$KS" report "$REAL" --tree 0 >/dev/null 2>"$TMP/err"
is "$?" 2 "--tree 0: exit 2"

# the leaderboard keeps each phase's figures in columns of their own: the re-measured
# candidates (the real run re-measured 2) in the final's part, the rest in the search's
sed -n '/^### Ranked by the final re-measurement/,/^### Ranked by the search phase/p' "$REAL/report.md" >"$TMP/lb_final"
sed -n '/^### Ranked by the search phase/,/^## /p' "$REAL/report.md" >"$TMP/lb_search"
is "$(grep -cE '^\| [0-9]+ \| [0-9]+ \|' "$TMP/lb_final")" \
	"$(json_get "$TMP/real.json" 'sum(1 for c in d["candidates"] if c["final_status"] == "PASSED")')" \
	"the final's part of the leaderboard holds every candidate that passed the final"
# (an empty search part: every passing candidate was re-measured)
{ ! grep -qE '^\| [0-9]+ \| [0-9]+ \|' "$TMP/lb_search" || grep -q '| speedup (search) |' "$TMP/lb_search"; } &&
	! grep -q '(final)' "$TMP/lb_search"
ok $? "the search's part names its phase and holds no final figure"
grep -qE '^How sure: #[0-9]+ ' "$REAL/report.md"
ok $? "report.md says how sure the final's choice is"
is "$(json_get "$TMP/real.json" 'd["best"]["candidate"] == int(d["final_verdict"].split("#")[1].split()[0])')" True \
	"--json: the best is the candidate the verdict names first"

# the roofline chart of the real run: the roofs it used, the best and the baseline placed
python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$REAL/roofline.svg"
ok $? "roofline.svg is well-formed XML"
grep -q 'class="roof"' "$REAL/roofline.svg" && grep -q 'class="rl-best"' "$REAL/roofline.svg" &&
	grep -q 'class="rl-baseline"' "$REAL/roofline.svg"
ok $? "roofline.svg draws the roof, the best kernel and the baseline"
grep -q '](roofline.svg)' "$REAL/report.md" && grep -qE 'min\([0-9.e+]+ GFLOP/s f32 compute, intensity x [0-9.e+]+ GB/s memory\)' "$REAL/report.md"
ok $? "report.md links the roofline chart and states the roofs"
is "$(grep -o '<svg ' "$REAL/report.html" | wc -l)" 2 "report.html inlines both charts"

# the library yardstick (OpenBLAS) beside the baseline: headline, leaderboard, chart, JSON
if pkg-config --exists openblas 2>/dev/null; then
	grep -qE '^best: candidate [0-9]+, [0-9.]+x the baseline, [0-9.]+x OpenBLAS \(re-measured\)' "$TMP/real.out"
	ok $? "ksearch run's summary gives the speedup over the baseline and over OpenBLAS"
	grep -qE '^\*\*Best: [0-9.]+x the baseline, [0-9.]+x OpenBLAS\*\*' "$REAL/report.md"
	ok $? "report.md's headline gives the speedup over OpenBLAS"
	grep -qE '^\| # \| id \| action \| family / knobs \| status \| speedup \(final\) \| speedup \(search\) \| vs OpenBLAS \(final\) \|' "$REAL/report.md" &&
		grep -qE '^\| 1 \| [0-9]+ \| .* \| [0-9.]+x ±[0-9.]+% \| [0-9.]+x ±[0-9.]+% \| [0-9.]+x \|' "$REAL/report.md"
	ok $? "report.md's leaderboard has a vs OpenBLAS column of the final's figures, the best's first"
	grep -qE '\| OpenBLAS \(us\) \| vs OpenBLAS \|' "$REAL/report.md"
	ok $? "report.md's best-per-workload table has the library's median and speedup"
	grep -q 'vs OpenBLAS (final)</th>' "$REAL/report.html"
	ok $? "report.html's leaderboard has the library column"
	grep -q 'class="rl-library"' "$REAL/roofline.svg" && grep -q '<title>OpenBLAS, n=1048576: ' "$REAL/roofline.svg"
	ok $? "roofline.svg places the library, named"
	is "$(json_get "$TMP/real.json" 'd["best"]["library"], d["best"]["speedup_vs_library"] > 0')" "OpenBLAS True" \
		"report --json: the best's speedup over the library"
	is "$(json_get "$TMP/real.json" '[w["library_us"] > 0 for c in d["candidates"] if c["id"] == d["best"]["candidate"] for w in c["workloads"] if w["phase"] == "final" and w["median_us"]][0]')" True \
		"report --json: the library's median per workload"
else
	skip "the library yardstick in the real run's reports" "OpenBLAS is not installed (libopenblas-dev)"
fi

# the check rows of the best's table: nothing timed there, so dashes, never 0.00
grep ' (check) |' "$REAL/report.md" >"$TMP/checks"
test -s "$TMP/checks" && ! grep -q '| 0\.00 |' "$TMP/checks" && grep -q '| — | — |' "$TMP/checks"
ok $? "check rows show dashes where nothing was timed"

# a synthetic run, written by the unit test through the store API
UT=${KS_BIN:-build}/test_report
if [ -x "$UT" ]; then
	RUN="$TMP/run"
	KS_REPORT_FIXTURE_DIR="$RUN" "$UT" >"$TMP/ut.log" 2>&1
	ok $? "fixture run written by test_report"
	"$KS" report "$RUN" >"$TMP/paths"
	ok $? "report RUN writes the files"
	is "$(cat "$TMP/paths")" "$RUN/report.md
$RUN/report.html
$RUN/convergence.svg
$RUN/roofline.svg" "prints the four paths"
	test -s "$RUN/report.md" && test -s "$RUN/report.html" && test -s "$RUN/convergence.svg" &&
		test -s "$RUN/roofline.svg"
	ok $? "report.md, report.html, convergence.svg and roofline.svg exist"
	grep -q "](convergence.svg)" "$RUN/report.md"
	ok $? "report.md links the chart"
	ls "$RUN" | grep -q '\.tmp\.' && r=1 || r=0
	ok $r "no temporary files left"
	"$KS" report "$RUN" --json >"$TMP/r.json"
	ok $? "--json exits 0"
	is "$(json_get "$TMP/r.json" 'd["evaluated"]')" 30 "--json evaluated"
	is "$(json_get "$TMP/r.json" 'len(d["candidates"])')" 31 "--json lists every candidate"
	is "$(json_get "$TMP/r.json" 'd["best"]["candidate"], d["best"]["phase"]')" "27 final" \
		"--json best from the final re-measurement"
	"$KS" report "$RUN" --top 2 --md >"$TMP/r.md"
	grep -q '^| 2 | 20 |' "$TMP/r.md" && ! grep -q '^| 3 | ' "$TMP/r.md"
	ok $? "--top 2 limits the leaderboard"
	"$KS" report "$RUN" --html | grep -qi '<script'
	is "$?" 1 "--html has no script element"
	"$KS" report "$RUN" --svg | python3 -c 'import sys, xml.dom.minidom as m; m.parseString(sys.stdin.read())'
	ok $? "--svg is well-formed XML"
	"$KS" report "$RUN" --html | python3 -c '
import sys, html.parser
class P(html.parser.HTMLParser):
    def __init__(s): super().__init__(); s.stack = []; s.bad = 0
    def handle_starttag(s, t, a):
        if t not in ("meta", "br", "hr", "img", "link", "input"): s.stack.append(t)
    def handle_endtag(s, t):
        if not s.stack or s.stack.pop() != t: s.bad += 1
p = P(); p.feed(sys.stdin.read()); sys.exit(1 if p.bad or p.stack else 0)'
	ok $? "--html tags balanced"
else
	echo "# skip: $UT not built"
fi

done_testing
