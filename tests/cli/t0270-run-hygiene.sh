#!/bin/bash
# Run hygiene and comparison: a run that fails before its first candidate leaves no folder;
# two runs started in the same second get two folders; ksearch compare says FAST/SLOW/SAME
# per workload; did-you-mean for commands, options, tasks, backends and strategies;
# ksearch help CMD; the exhaustive strategy.
. "$(dirname "$0")/lib.sh"

KSA=$(cd "$(dirname "$KS")" && pwd)/ksearch
export KSEARCH_CACHE=$TMP/cache
mkdir -p "$TMP/work"

# --- did-you-mean and help (no runs needed)
$KS rn >/dev/null 2>"$TMP/e"; grep -q "'rn' is not a command; did you mean 'run'?" "$TMP/e"
ok $? "a mistyped command gets a suggestion"
$KS tasks show sofmax >/dev/null 2>"$TMP/e"; grep -q "unknown task 'sofmax' .*did you mean 'softmax'?" "$TMP/e"
ok $? "a mistyped task gets a suggestion"
$KS run softmax --budgte 3 >/dev/null 2>"$TMP/e"; grep -q "unknown option '--budgte'; did you mean '--budget'?" "$TMP/e"
ok $? "a mistyped option gets a suggestion"
$KS run softmax --backend cpuu >/dev/null 2>"$TMP/e"; grep -q "did you mean 'cpu'?" "$TMP/e"
ok $? "a mistyped backend gets a suggestion"
$KS run softmax --strategy exhaustiv >/dev/null 2>"$TMP/e"; grep -q "did you mean 'exhaustive'?" "$TMP/e"
ok $? "a mistyped strategy gets a suggestion"
$KS help compare >"$TMP/h" 2>&1
ok $? "ksearch help compare"
grep -q "usage: ksearch compare RUN_A RUN_B" "$TMP/h" && grep -q "half its interquartile range" "$TMP/h"
ok $? "... prints the command's help, with what makes a difference significant"
$KS help tasks import >"$TMP/h" 2>&1 && grep -q "kernelbench" "$TMP/h"
ok $? "ksearch help tasks import"
$KS help evl >/dev/null 2>"$TMP/e"; is "$?" 2 "help for an unknown command fails"
grep -q "did you mean 'eval'" "$TMP/e"
ok $? "... with a suggestion"

# --- a run that fails before its first candidate leaves nothing behind
cp -r tests/fixtures/pyref/pyref_rmsnorm "$TMP/notemplates" 2>/dev/null
sed -i 's/^name: pyref_rmsnorm/name: notemplates/' "$TMP/notemplates/task.yaml"
(cd "$TMP/work" && "$KSA" run "$TMP/notemplates" --budget 2 >/dev/null 2>"$TMP/fail.err")
is "$?" 2 "a run without templates fails"
[ ! -e "$TMP/work/runs" ]
ok $? "... and leaves no run folder"
! grep -q "what was recorded is in" "$TMP/fail.err"
ok $? "... nor points to one"
mkdir "$TMP/given"
"$KSA" run "$TMP/notemplates" --budget 2 --out "$TMP/given" >/dev/null 2>&1
[ -d "$TMP/given" ] && [ -z "$(ls -A "$TMP/given")" ]
ok $? "--out naming an existing folder: the folder stays, empty"

# --- two runs started in the same second, on an imported elementwise task
"$KSA" tasks import kernelbench tests/fixtures/import/19_ReLU_small.py --out "$TMP" >/dev/null 2>&1 ||
	skip_rest "the relu fixture does not import here"
task=$TMP/kb_19_relu_small
# the names of the next seconds are taken already, as by runs started just before
now=$(date +%s)
for k in 0 1 2 3 4 5 6 7 8 9; do
	d=$TMP/work/runs/kb_19_relu_small-$(date -d "@$((now + k))" +%Y%m%d-%H%M%S)
	mkdir -p "$d" && echo taken >"$d/marker"
done
(cd "$TMP/work" && "$KSA" run "$task" --budget 1 --strategy exhaustive >"$TMP/a.out" 2>"$TMP/a.err") &
pa=$!
(cd "$TMP/work" && "$KSA" run "$task" --budget 1 --strategy exhaustive >"$TMP/b.out" 2>"$TMP/b.err") &
pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
is "$ra$rb" 00 "two runs started together both finish"
ls -d "$TMP"/work/runs/*/run.db | sed 's|/run.db$||' >"$TMP/dirs"
is "$(wc -l <"$TMP/dirs")" 2 "... in two folders"
grep -c -- '-[0-9]\{6\}-[23]$' "$TMP/dirs" >"$TMP/n"
is "$(cat "$TMP/n")" 2 "... named with -2 and -3 after the taken name of their second"
is "$(cat "$TMP"/work/runs/*/marker | sort -u)" taken "the folders already there are untouched"
A=$(sed -n 1p "$TMP/dirs"); B=$(sed -n 2p "$TMP/dirs")
grep -q "exhaustive: the space has [0-9]* feasible configurations but the budget is 1" "$TMP/a.err"
ok $? "exhaustive says when the space is larger than the budget"

# a new run into a folder holding a run is refused and takes nothing away
"$KSA" run "$task" --budget 1 --out "$A" >/dev/null 2>"$TMP/held.err"
is "$?" 2 "--out naming a run's folder is refused"
grep -q "already holds a run" "$TMP/held.err" && [ -s "$A/run.db" ] && [ -e "$A/best.c" ]
ok $? "... and the run there keeps its database and files"

# --- compare: a run against itself is SAME everywhere; a doctored copy is FAST and SLOW
$KS compare "$A" "$A" >"$TMP/same.out" 2>&1
ok $? "compare a run with itself"
grep -q "batch_size=16 dim=4099 .* 1.000x  SAME" "$TMP/same.out"
ok $? "... SAME at 1.000x"
# (the times are doctored so that the verdict does not hang on this machine's noise)
cp -r "$A" "$TMP/base"
cp -r "$A" "$TMP/slow"
python3 - "$TMP/base/run.db" "$TMP/slow/run.db" <<'PY'
import sqlite3, sys
for path, factor in ((sys.argv[1], 1), (sys.argv[2], 10)):
    db = sqlite3.connect(path)
    db.execute("update evaluations set median_us = median_us * ?, spread_pct = 5", (factor,))
    db.commit()
PY
$KS compare "$TMP/base" "$TMP/slow" --json >"$TMP/slow.json" 2>"$TMP/slow.err"
is "$(json_get "$TMP/slow.json" 'd["workloads"][0]["verdict"]')" SLOW "ten times the time is SLOW"
$KS compare "$TMP/slow" "$TMP/base" --json >"$TMP/fast.json" 2>/dev/null
is "$(json_get "$TMP/fast.json" 'd["workloads"][0]["verdict"]')" FAST "... and the other way FAST"
is "$(json_get "$TMP/fast.json" 'round(d["geomean_ratio"], 3)')" 0.1 "B/A is 0.1"
python3 - "$TMP/slow/run.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("update evaluations set median_us = median_us / 10 * 1.03, spread_pct = 5")
db.commit()
PY
$KS compare "$TMP/base" "$TMP/slow" --json >"$TMP/near.json" 2>/dev/null
is "$(json_get "$TMP/near.json" 'd["workloads"][0]["verdict"]')" SAME "3% slower inside spreads of 5% is SAME"
$KS compare "$A" runs/does-not-exist >/dev/null 2>"$TMP/e"
is "$?" 2 "comparing with a missing run is an error"

done_testing
