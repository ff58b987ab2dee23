#!/usr/bin/env bash
# A run killed after it created its store but before it recorded the run (task, spec and
# policy are set up in between; kill -9 in its first half second): --resume says so and how to
# start again, and a new run into the same folder starts there instead of refusing it.
. "$(dirname "$0")/lib.sh"
TASK=$ROOT/tests/fixtures/eval/scale
FAST=(--min-time 0.01 --top 1 --jobs 1)

"$KS" run "$TASK" --budget 1 --out "$TMP/r" "${FAST[@]}" >/dev/null 2>&1
is "$?" 0 "a one-candidate run to take its store from"
# what the killed start leaves: the store's schema and version, no run, no candidate
python3 - "$TMP/r/run.db" <<'PY'
import os, sqlite3, sys
path = sys.argv[1]
old = sqlite3.connect(path)
schema = [r[0] for r in old.execute("select sql from sqlite_master where sql is not null order by rowid")]
version = old.execute("select * from schema_version").fetchall()
user_version = old.execute("pragma user_version").fetchone()[0]
old.close()
for suffix in ("", "-wal", "-shm"):
    if os.path.exists(path + suffix):
        os.remove(path + suffix)
new = sqlite3.connect(path)
for sql in schema:
    new.execute(sql)
for row in version:
    new.execute("insert into schema_version values (%s)" % ",".join("?" * len(row)), row)
new.execute("pragma user_version = %d" % user_version)
new.commit()
new.close()
PY
is "$?" 0 "emptied to the state of a start killed before its run row"

"$KS" run --resume "$TMP/r" >/dev/null 2>"$TMP/resume.err"
is "$?" 2 "--resume of it exits 2"
grep -qF "'$TMP/r' holds no run: its start was stopped before the run was recorded; start it again with 'ksearch run TASK --out $TMP/r'" "$TMP/resume.err"
ok $? "... saying what happened and how to start again ($(head -c 300 "$TMP/resume.err"))"

"$KS" run "$TASK" --budget 1 --out "$TMP/r" --json "${FAST[@]}" >"$TMP/again.json" 2>"$TMP/again.err"
is "$?" 0 "a new run into the same folder starts there"
is "$(json_get "$TMP/again.json" 'd["evaluated"]')" 1 "... and evaluates its budget"
"$KS" report "$TMP/r" >/dev/null 2>&1
is "$?" 0 "... and its report renders"

# a folder that holds a recorded run is still refused
"$KS" run "$TASK" --budget 1 --out "$TMP/r" "${FAST[@]}" >/dev/null 2>"$TMP/held.err"
is "$?" 2 "a folder with a recorded run is refused"
grep -qF "already holds a run" "$TMP/held.err"
ok $? "... with --resume suggested"

done_testing
