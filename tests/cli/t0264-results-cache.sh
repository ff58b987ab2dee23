#!/bin/bash
# The results cache: a second identical run takes the first's evaluations (shown as reused,
# with their age) instead of checking and timing them again; --fresh evaluates everything;
# a changed task is never answered from the cache.
# needs: python3 with numpy
. "$(dirname "$0")/lib.sh"

python3 -c 'import numpy' 2>/dev/null || skip_rest "numpy is not installed for python3"
export KSEARCH_CACHE=$TMP/cache
$KS tasks import kernelbench tests/fixtures/kernelbench/36_RMS_middle.py --scale 0.02 --out "$TMP" >/dev/null 2>&1
ok $? "a small task to search"
task=$TMP/kb_36_rms_middle
run() { # run NAME [options]: a run of 3 candidates, its JSON summary in NAME.json
	local name=$1
	shift
	$KS run "$task" --budget 3 --top 1 --min-time 0.01 --out "$TMP/$name" --json "$@" \
		>"$TMP/$name.json" 2>"$TMP/$name.err"
}
run first
ok $? "a first run"
is "$(json_get "$TMP/first.json" 'd["cached"]["evaluations"]')" 0 "... evaluates every candidate"
[ -f "$KSEARCH_CACHE/results/results.sqlite" ]
ok $? "... and keeps them in the cache root (results/results.sqlite)"
run second
ok $? "the same run again"
is "$(json_get "$TMP/second.json" 'd["cached"]["evaluations"]')" 3 "... reuses the first run's three evaluations"
python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['cached']; sys.exit(not (0 <= d['newest_s'] <= d['oldest_s'] < 3600))" "$TMP/second.json"
ok $? "... and says how old they are"
is "$(json_get "$TMP/second.json" 'd["evaluated"]')" 3 "... which still count as the run's candidates"
$KS run "$task" --budget 3 --top 1 --min-time 0.01 --out "$TMP/third" >"$TMP/third.out" 2>&1
grep -q "^reused: 3 evaluations of earlier runs from the results cache, measured .* ago (--fresh" "$TMP/third.out"
ok $? "the summary says what was reused"
$KS cache | grep -q "^results .*evaluations kept across runs"
ok $? "ksearch cache lists the results cache and says what it is"
$KS cache clear results >/dev/null 2>&1 && [ ! -e "$KSEARCH_CACHE/results" ]
ok $? "ksearch cache clear results removes it, its journal files with it"
run cleared
is "$(json_get "$TMP/cleared.json" 'd["cached"]["evaluations"]')" 0 "... and the next run evaluates everything again"
run fresh --fresh
is "$(json_get "$TMP/fresh.json" 'd["cached"]["evaluations"]')" 0 "--fresh evaluates everything again"
sed -i 's/^tolerance: .*/tolerance: {atol: 2e-4, rtol: 1e-3, l2: 1e-5}/' "$task/task.yaml"
run changed
is "$(json_get "$TMP/changed.json" 'd["cached"]["evaluations"]')" 0 "a changed task is evaluated again"

done_testing
