#!/usr/bin/env bash
# run --out DIR never writes over a folder of the user's (issue 39 item 18): a folder that
# holds files and no run is refused with exit 2, untouched; an empty one, a new one and a
# killed start are used; --devices and --worker-cmd stay usable with --resume.
. "$(dirname "$0")/lib.sh"
TASK=$ROOT/tests/fixtures/eval/scale
export KSEARCH_CACHE=$TMP/cache
RUN=(run "$TASK" --budget 1 --top 0 --min-time 0.01)

mkdir "$TMP/mine"
echo "my notes" >"$TMP/mine/report.md"
echo "int mine;" >"$TMP/mine/best.c"
sums=$(cd "$TMP/mine" && md5sum report.md best.c)
"$KS" "${RUN[@]}" --out "$TMP/mine" >/dev/null 2>"$TMP/err"
is "$?" 2 "--out a folder holding the user's report.md and best.c: exit 2"
is "$(cd "$TMP/mine" && md5sum report.md best.c)" "$sums" "... both files are as they were"
is "$(ls -A "$TMP/mine" | wc -l)" 2 "... and nothing was added (no run.db, no run.lock)"
grep -q -- "--out '$TMP/mine' holds 2 files that are not a run" "$TMP/err"
ok $? "... the message says what the folder holds ($(head -c 160 "$TMP/err"))"
grep -q "choose a new or empty folder" "$TMP/err"
ok $? "... and what to do"

# one hidden file is a file too
mkdir "$TMP/dot" && touch "$TMP/dot/.notes"
"$KS" "${RUN[@]}" --out "$TMP/dot" >/dev/null 2>"$TMP/err"
is "$?" 2 "--out a folder holding only a dot file: exit 2"

mkdir "$TMP/empty"
"$KS" "${RUN[@]}" --out "$TMP/empty" >/dev/null 2>"$TMP/err"
is "$?" 0 "--out an empty folder: the run is made there"
[ -f "$TMP/empty/run.db" ] && [ -f "$TMP/empty/report.md" ]
ok $? "... with its run.db and report.md"

"$KS" "${RUN[@]}" --out "$TMP/new/sub" >/dev/null 2>"$TMP/err"
is "$?" 0 "--out a folder that does not exist: made"

# a folder holding a run is the run's: the old message, no new refusal
"$KS" "${RUN[@]}" --out "$TMP/empty" >/dev/null 2>"$TMP/err"
is "$?" 2 "--out a folder holding a run: exit 2"
grep -q "already holds a run: continue it with --resume" "$TMP/err"
ok $? "... with the message that says to resume it"

# where the workers run is not part of the run: --devices / --worker-cmd with --resume
"$KS" run --resume "$TMP/empty" --worker-cmd "true {device}" >/dev/null 2>"$TMP/err"
is "$?" 0 "--resume with --worker-cmd is accepted ($(head -c 160 "$TMP/err"))"
"$KS" run --resume "$TMP/empty" --devices 0 >/dev/null 2>"$TMP/err"
is "$?" 0 "--resume with --devices is accepted ($(head -c 160 "$TMP/err"))"

done_testing
