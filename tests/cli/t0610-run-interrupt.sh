#!/usr/bin/env bash
# Ctrl-C and --resume, as the summary tells them: an interrupted run names its best on the
# search-phase figure (said to be one), writes best.c and agrees with its report; resuming a
# finished run prints the figure its report gives (the final re-measurement's), and never
# "(re-measured)" for a figure that was not.
. "$(dirname "$0")/lib.sh"
TASK=$ROOT/tests/fixtures/eval/scale
FAST=(--min-time 0.01 --top 2 --jobs 2)
D=$TMP/intr

count() { # count DB SQL
	python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$1" "$2"
}
figure() { # figure FILE PATTERN: the first "N.NNx" on the first line matching PATTERN
	grep -m1 -- "$2" "$1" | grep -o '[0-9][0-9.]*x' | head -1
}

# Ctrl-C once two candidates are in (of 12: the search is far from its end)
"$KS" run "$TASK" --budget 12 --out "$D" "${FAST[@]}" >"$TMP/i.out" 2>"$TMP/i.err" &
pid=$!
for _ in $(seq 1 600); do
	n=$(count "$D/run.db" "select count(*) from candidate_results where phase='search'" 2>/dev/null || echo 0)
	[ "${n:-0}" -ge 2 ] && break
	sleep 0.1
done
kill -INT $pid
wait $pid
is "$?" 0 "an interrupted run exits 0"
grep -q "stopped early: interrupted" "$TMP/i.out"
ok $? "... stopped early by Ctrl-C: $(grep -m1 '^run ' "$TMP/i.out")"
! grep -q "no candidate passed" "$TMP/i.out"
ok $? "... and does not say that no candidate passed"
grep -q "^best: candidate [0-9]*, .*(search-phase figure, not re-measured: interrupted; --resume $D to finish)" "$TMP/i.out"
ok $? "... names its best on the search-phase figure, said to be one: $(grep -m1 '^best:' "$TMP/i.out")"
[ -s "$D/best.c" ] && grep -q "search phase, not re-measured" "$D/best.c"
ok $? "... writes best.c, whose header says the figure was not re-measured"
grep -q "(search phase, not re-measured)" "$D/report.md" && ! grep -q "not written yet" "$D/report.md"
ok $? "... and the report reads the same, with best.c written"
is "$(figure "$TMP/i.out" '^best:')" "$(figure "$D/report.md" 'Best:')" "... the summary's figure is the report's"
is "$(count "$D/run.db" "select count(*) from evaluations where phase='final'")" 0 \
	"... nothing was re-measured"

# --resume finishes it: the final re-measures, and the summary says so
"$KS" run --resume "$D" >"$TMP/r.out" 2>"$TMP/r.err"
is "$?" 0 "--resume of the interrupted run completes"
grep -q "^best: candidate [0-9]*, .*(re-measured)" "$TMP/r.out"
ok $? "... its best is re-measured: $(grep -m1 '^best:' "$TMP/r.out")"

# --resume of the finished run: the report's figure, nothing evaluated, not "stopped early"
"$KS" run --resume "$D" >"$TMP/f.out" 2>"$TMP/f.err"
is "$?" 0 "--resume of the finished run exits 0"
grep -q "Best: .* (final re-measurement)" "$D/report.md"
ok $? "... whose report's best is the final re-measurement's"
is "$(figure "$TMP/f.out" '^best:')" "$(figure "$D/report.md" 'Best:')" \
	"... the summary prints the report's (re-measured) figure"
is "$(figure "$TMP/f.out" '^best:')" "$(figure "$TMP/r.out" '^best:')" \
	"... the one the run ended with"
grep -q "(the run was already finished; nothing evaluated)" "$TMP/f.out" && ! grep -q "stopped early" "$TMP/f.out"
ok $? "... and says the run was already finished: $(grep -m1 '^run ' "$TMP/f.out")"
"$KS" run --resume "$D" --json >"$TMP/f.json" 2>/dev/null
is "$(json_get "$TMP/f.json" 'd["best"]["phase"]')" final "--json: the best's figure is the final's"
"$KS" report "$D" --json >"$TMP/rep.json" 2>/dev/null
is "$(json_get "$TMP/f.json" 'round(d["best"]["speedup_vs_baseline"], 4)')" \
	"$(json_get "$TMP/rep.json" 'round(d["best"]["speedup_vs_baseline"], 4)')" \
	"--json: the same figure as ksearch report --json"
done_testing
