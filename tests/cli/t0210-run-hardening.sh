#!/usr/bin/env bash
# Issue 13, run level: every option is checked before anything is written, a run has one
# writer (DIR/run.lock), and --resume refuses a damaged database.
. "$(dirname "$0")/lib.sh"
TASK=$ROOT/tests/fixtures/eval/scale
K=$ROOT/tests/fixtures/hostile/plain.c
KSA=$(cd "$(dirname "$KS")" && pwd)/$(basename "$KS")

refused() { # refused "what" ARGS...: exit 2, a message, and no file written in the cwd
	local what=$1
	shift
	local d
	d=$(mktemp -d)
	(cd "$d" && "$KSA" "$@" >/dev/null 2>"$TMP/err")
	local rc=$?
	ok $((rc != 2 || $(ls -A "$d" | wc -l) != 0)) "$what: exit 2, nothing written (rc $rc: $(head -c 120 "$TMP/err"))"
	rm -rf "$d"
}

refused "eval --timeout nan" eval "$TASK" "$K" --timeout nan
refused "eval --timeout inf" eval "$TASK" "$K" --timeout inf
refused "eval --min-time nan" eval "$TASK" "$K" --min-time nan
refused "eval --memory-limit inf" eval "$TASK" "$K" --memory-limit inf
refused "eval --reps -1" eval "$TASK" "$K" --reps -1
refused "eval --threads -1" eval "$TASK" "$K" --threads -1
refused "eval --peak-gbps nan" eval "$TASK" "$K" --peak-gbps nan
refused "run --time-limit nan" run "$TASK" --time-limit nan
refused "run --jobs 0" run "$TASK" --jobs 0
refused "run --jobs -1" run "$TASK" --jobs -1
refused "run --jobs 100000" run "$TASK" --jobs 100000
refused "run --top -3" run "$TASK" --top -3
refused "run --threads -1" run "$TASK" --threads -1
refused "run --strategy foo" run "$TASK" --strategy foo
refused "run --backend foo" run "$TASK" --backend foo
refused "run --devices abc" run "$TASK" --devices abc
refused "run --llm-base-url ftp://x" run "$TASK" --policy llm --llm-base-url ftp://x --llm-model m
refused "run --context foo" run "$TASK" --context foo
refused "run --llm-cmd without --policy cmd" run "$TASK" --llm-cmd cat
refused "run of a task that does not exist" run /nonexistent-task
refused "report --top -3" report /nonexistent-run --top -3
refused "translate of a folder" translate "$ROOT/tasks/softmax" --to metal

# a finished small run to resume
D=$TMP/run
"$KS" run "$TASK" --budget 2 --out "$D" --min-time 0.01 >/dev/null 2>"$TMP/run.err"
ok $? "a small run finishes"

# a resumed run keeps its options: one that differs is refused, naming the difference
"$KS" run --resume "$D" --budget 5 >/dev/null 2>"$TMP/rb.err"
is "$?" 2 "--resume with another --budget is refused"
grep -q "budget 5 differs from the run's budget 2" "$TMP/rb.err"
ok $? "... naming the difference: $(head -c 160 "$TMP/rb.err")"
"$KS" run "$ROOT/tasks/softmax" --resume "$D" >/dev/null 2>"$TMP/rt.err"
is "$?" 2 "--resume with another task is refused"
"$KS" run --resume "$D" --strategy random >/dev/null 2>"$TMP/rs.err"
is "$?" 2 "--resume with another --strategy is refused"
"$KS" run --resume "$D" --out "$TMP/elsewhere" >/dev/null 2>&1
is "$?" 2 "--resume with --out is refused"
"$KS" run --resume "$D" --budget 2 >/dev/null 2>&1
is "$?" 0 "--resume with the run's own --budget is fine"

# one writer: while another process holds the run's lock, neither --resume nor a new run
# in the same folder starts
exec 9>>"$D/run.lock"
flock -n 9
ok $? "this shell holds the run's lock"
"$KS" run --resume "$D" >/dev/null 2>"$TMP/lock.err"
is "$?" 2 "--resume of a run in use is refused"
grep -q "in use by another ksearch process" "$TMP/lock.err"
ok $? "the error says the run is in use"
exec 9>&-

# a damaged database: --resume refuses it and rewrites nothing
cp "$D/best.c" "$TMP/best.before"
size=$(stat -c %s "$D/run.db")
python3 - "$D/run.db" <<'PY'
import os, sys
p = sys.argv[1]
n = os.path.getsize(p)
with open(p, "r+b") as f:
    f.seek(max(4096, n // 2 - 16384))
    f.write(b"\x5a" * 32768)
PY
"$KS" run --resume "$D" >/dev/null 2>"$TMP/damaged.err"
is "$?" 2 "--resume of a damaged database is refused (size $size)"
grep -qi "damaged\|malformed\|not a database" "$TMP/damaged.err"
ok $? "the error says the database is damaged: $(head -c 160 "$TMP/damaged.err")"
cmp -s "$D/best.c" "$TMP/best.before"
ok $? "best.c is left as it was"

done_testing
