#!/usr/bin/env bash
# Issue 39: what a kernel, a task's files or a task's reference cannot do to ksearch or
# through it: crash it or poison its cache with what it leaves in scratch (item 6), learn
# through the compiler which files exist outside its jail (item 20), widen the compiler's
# jail through task.yaml (item 10), read files outside the task through a link (item 20),
# reach ksearch's environment or the host's sockets from reference.py (item 9).
# needs: python3 with numpy for the reference.py cases (skipped without)
. "$(dirname "$0")/lib.sh"
TASK=$ROOT/tests/fixtures/eval/scale
H=$ROOT/tests/fixtures/hostile
export KSEARCH_CACHE=$TMP/cache
export KS_TEST_API_KEY=sk-test-secret-0123456789

status_of() { # status_of KERNEL [TASK]: prints the status (with the exit code when they disagree)
	local k=$1 task=${2:-$TASK}
	"$KS" eval "$task" "$k" --json --quick --timeout 5 --memory-limit 512M \
		>"$TMP/st.json" 2>"$TMP/st.err"
	local rc=$? st
	st=$(json_get "$TMP/st.json" 'd["status"]' 2>/dev/null || echo "NO_JSON(rc=$rc)")
	if { [ "$st" = PASSED ] && [ $rc -ne 0 ]; } || { [ "$st" != PASSED ] && [ $rc -ne 1 ]; }; then
		st="$st(rc=$rc)"
	fi
	echo "$st"
}

# --- item 6: a tree left in scratch -------------------------------------------------
is "$(status_of "$H/scratch_deep_tree.c")" PASSED "scratch_deep_tree -> PASSED, ksearch stays up"
[ -z "$(ls -A "$KSEARCH_CACHE/scratch" 2>/dev/null)" ]
ok $? "its scratch folder, 3000 levels deep, is removed"
# what a killed evaluation left, as deep, is swept when the next one starts
python3 - "$KSEARCH_CACHE/scratch/run-999999999-left" <<'EOF'
import os, sys
os.makedirs(sys.argv[1])
fd = os.open(sys.argv[1], os.O_RDONLY)
for _ in range(3000):
    os.mkdir("d", dir_fd=fd)
    sub = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = sub
EOF
is "$(status_of "$H/plain.c")" PASSED "the next evaluation on that cache starts and passes"
[ ! -e "$KSEARCH_CACHE/scratch/run-999999999-left" ]
ok $? "a dead process's 3000-level scratch tree is swept"

done_testing
