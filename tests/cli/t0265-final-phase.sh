#!/bin/bash
# The final phase is honest: --top 0 re-measures nothing (the search's figures stand, said
# so), values out of range are refused rather than capped, and the final's time is in the
# summary, the JSON and the report.
# needs: python3 with numpy
. "$(dirname "$0")/lib.sh"

python3 -c 'import numpy' 2>/dev/null || skip_rest "numpy is not installed for python3"
export KSEARCH_CACHE=$TMP/cache
$KS tasks import kernelbench tests/fixtures/kernelbench/36_RMS_middle.py --scale 0.02 --out "$TMP" >/dev/null 2>&1
task=$TMP/kb_36_rms_middle
$KS run "$task" --budget 2 --top 0 --min-time 0.01 --out "$TMP/top0" --json >"$TMP/top0.json" 2>"$TMP/top0.err"
ok $? "--top 0 runs"
is "$(json_get "$TMP/top0.json" 'd["phases"]["final_rounds"]')" 0 "... and re-measures nothing"
is "$(json_get "$TMP/top0.json" 'd["best"]["phase"]')" search "... the best stands on its search-phase figure"
grep -q "final: skipped (--top 0)" "$TMP/top0.err"
ok $? "... and says so"
$KS run "$task" --budget 2 --top 17 --out "$TMP/top17" >/dev/null 2>"$TMP/top17.err"
is "$?" 2 "--top 17 is refused, not capped"
grep -q "option '--top' must be from 0 to 16, got 17" "$TMP/top17.err"
ok $? "... naming the range"
$KS run "$task" --budget 2 --top 2 --min-time 0.01 --out "$TMP/top2" >"$TMP/top2.out" 2>&1
grep -q "^phases: search [0-9.]* s, final re-measurement [0-9.]* s ([1-9][0-9]* rounds\?, [0-9]*%)" "$TMP/top2.out"
ok $? "the summary gives the final's share of the time"
grep -q "the final re-measurement of the top candidates [0-9.]* s of it" "$TMP/top2/report.md"
ok $? "... and so does the report"
grep -qE "^final stopped: .+" "$TMP/top2.out"
ok $? "the summary says why the final stopped"

# the stop rule (src/run/final_pick.h): at least 2 rounds when two candidates passed, then
# until the leaders' order is decided, the noise is below the threshold, or a cap; the JSON
# says how many rounds and why, and the report says it too
$KS run "$task" --budget 3 --top 3 --min-time 0.01 --out "$TMP/top3" --json >"$TMP/top3.json" 2>"$TMP/top3.err"
ok $? "--top 3 runs"
stop=$(json_get "$TMP/top3.json" 'd["phases"]["final_stop"]')
rounds=$(json_get "$TMP/top3.json" 'd["phases"]["final_rounds"]')
case "$stop" in
one_candidate) test "$rounds" = 1 ;;
decided | noise_below_threshold | round_cap | time_cap) test "$rounds" -ge 2 && test "$rounds" -le 6 ;;
*) false ;;
esac
ok $? "the JSON gives the rounds ($rounds) and why they stopped ($stop)"
test -n "$(json_get "$TMP/top3.json" 'd["phases"]["final_stop_reason"]')"
ok $? "... and the reason in words"
$KS report "$TMP/top3" --json >"$TMP/top3.report.json"
is "$(json_get "$TMP/top3.report.json" 'd["final"]["stop"], d["final"]["rounds"]')" "$stop $rounds" \
	"report --json keeps the same rounds and reason"
grep -qE "The final measured $rounds rounds? and stopped: " "$TMP/top3/report.md"
ok $? "report.md says how many rounds and why they stopped"

done_testing
