#!/usr/bin/env bash
# ksearch cache: every entry of the cache root listed with its size (whatever wrote it),
# cleared all at once or by name, a running evaluation's scratch folder kept (issue 39).
. "$(dirname "$0")/lib.sh"
export KSEARCH_CACHE=$TMP/cache
TASK=$ROOT/tests/fixtures/eval/scale

"$KS" cache >"$TMP/empty.out" 2>&1
is "$?" 0 "an empty (absent) cache lists"
"$KS" eval "$TASK" "$ROOT/tests/fixtures/hostile/plain.c" --quick >/dev/null 2>&1
printf 'results' >"$KSEARCH_CACHE/eval-results.db" # what another part of ksearch may keep
"$KS" cache --json >"$TMP/list.json"
is "$?" 0 "ksearch cache --json"
json_get "$TMP/list.json" '" ".join(sorted(e["name"] for e in d["entries"]))' >"$TMP/names"
grep -q "eval-results.db inputs kernels reference" "$TMP/names"
ok $? "it lists the kernels, inputs, references and a file it does not know ($(cat "$TMP/names"))"
json_get "$TMP/list.json" '[e for e in d["entries"] if e["name"] == "kernels"][0]["bytes"] > 0 and [e for e in d["entries"] if e["name"] == "eval-results.db"][0]["bytes"] == 7' | grep -q True
ok $? "with their sizes"
"$KS" cache | grep -q "^kernels .*compiled kernels"
ok $? "the table says what each entry holds"

"$KS" cache clear eval-results.db >"$TMP/clear1.out" 2>&1
is "$?" 0 "clear by name"
[ ! -e "$KSEARCH_CACHE/eval-results.db" ] && [ -d "$KSEARCH_CACHE/kernels" ]
ok $? "... removes that entry only"
"$KS" cache clear no-such-thing >/dev/null 2>"$TMP/clear2.err"
is "$?" 2 "clearing an entry the cache does not have exits 2"
grep -q "has no 'no-such-thing'" "$TMP/clear2.err"
ok $? "... saying so"

mkdir -p "$KSEARCH_CACHE/scratch/run-$$-live01" # a live process's runner
"$KS" cache clear >"$TMP/clear3.out" 2>&1
is "$?" 0 "clear everything"
[ ! -e "$KSEARCH_CACHE/kernels" ] && [ ! -e "$KSEARCH_CACHE/inputs" ] && [ -d "$KSEARCH_CACHE/scratch/run-$$-live01" ]
ok $? "... but a running evaluation's scratch folder"
grep -q "^cleared [0-9.]* [KMG]*i*B from " "$TMP/clear3.out"
ok $? "... and says what it freed ($(cat "$TMP/clear3.out"))"
"$KS" cache frobnicate >/dev/null 2>"$TMP/sub.err"
is "$?" 2 "an unknown subcommand exits 2"
"$KS" cache --help | grep -q "least recently used"
ok $? "--help says what the cache holds and its cap"
done_testing
