#!/usr/bin/env bash
# Ctrl-C and --resume, as the summary tells them: an interrupted run names its best on the
# search-phase figure (said to be one), writes best.c and agrees with its report, and exits
# 130 as a shell expects of Ctrl-C (143 for SIGTERM) once it has saved what it had; resuming
# a finished run prints the figure its report gives (the final re-measurement's), and never
# "(re-measured)" for a figure that was not.  The summary fits 100 columns.
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

stopped() { # stopped SIGNAL N DIR OUT [ARGS...]: a run of 12 into DIR, sent SIGNAL once N
	# candidates are in (the search is far from its end); stdout in OUT; its exit status
	local sig=$1 n=$2 dir=$3 out=$4 got
	shift 4
	# --fresh: evaluated here (the time table), not taken from an earlier run's results
	"$KS" run "$TASK" --budget 12 --out "$dir" --fresh "${FAST[@]}" "$@" >"$out" 2>"$out.err" &
	local pid=$!
	for _ in $(seq 1 600); do
		got=$(count "$dir/run.db" "select count(*) from candidate_results where phase='search'" 2>/dev/null || echo 0)
		[ "${got:-0}" -ge "$n" ] && break
		sleep 0.1
	done
	kill "-$sig" $pid
	wait $pid
}

# Ctrl-C once two candidates are in
stopped INT 2 "$D" "$TMP/i.out"
is "$?" 130 "an interrupted run exits 130 (Ctrl-C, as a shell expects)"
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
grep -q "^time: [0-9.]* s per candidate (the mean of [0-9]* evaluated here), in seconds:" "$TMP/i.out" &&
	grep -q "^  candidate  *compile [0-9.]*, reference" "$TMP/i.out" &&
	grep -q "^  runner start  *exec [0-9.]*," "$TMP/i.out" &&
	grep -q "^  input cache  *[0-9]* MiB read per candidate" "$TMP/i.out"
ok $? "... its time per candidate is a table: $(grep -A1 '^time:' "$TMP/i.out" | tr '\n' '|')"
long=$(awk '/^time:/ { on = 1 } on && !/^(time:|  )/ { on = 0 } on && length($0) > 99' "$TMP/i.out")
ok $([ -z "$long" ]; echo $?) "... and the table fits 100 columns${long:+: $long}"

# SIGTERM stops it the same way, and --json still prints the summary
stopped TERM 1 "$TMP/term" "$TMP/t.json" --json
is "$?" 143 "a run stopped by SIGTERM exits 143"
is "$(json_get "$TMP/t.json" 'd["stopped"].split(" ")[0]')" interrupted "... after printing its --json summary (stopped: interrupted)"

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
