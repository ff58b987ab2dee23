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

# --- item 20: the compiler cannot tell which files exist outside its jail ---------------
# the file has_include_oracle.c names (t0200 plants the same one: only ours is removed)
SHARED=/tmp/ksearch-planted-secret.h
[ -e "$SHARED" ] || { echo "KSEARCH_PLANTED_SECRET root:\$6\$planted" >"$SHARED" && ours=1; }
PLANTED=$TMP/planted-secret.txt
echo "KSEARCH_PLANTED_SECRET root:\$6\$planted" >"$PLANTED"
is "$(status_of "$H/has_include_oracle.c")" PASSED \
	"has_include_oracle -> PASSED (/etc/passwd and a planted file look missing)"
is "$(status_of "$H/include_secret.c")" COMPILE_ERROR "include_secret -> COMPILE_ERROR"
grep -q "No such file or directory" "$TMP/st.json" && ! grep -q "Permission denied" "$TMP/st.json"
ok $? "... and its log says the file is not there, not that it is forbidden"

# --- items 10 and 20: task data never widens the jail, never reaches a file elsewhere --
HT=$ROOT/tests/fixtures/hostile_tasks
refused() { # refused TASK_DIR "message": exit 2 before anything is compiled, the message given
	"$KS" eval "$1" "$H/plain.c" --quick >"$TMP/ref.out" 2>"$TMP/ref.err"
	local rc=$?
	is "$rc" 2 "$(basename "$1"): refused with exit 2"
	grep -qF -- "$2" "$TMP/ref.err"
	ok $? "... saying '$2' ($(head -c 200 "$TMP/ref.err"))"
	! grep -q "KSEARCH_PLANTED_SECRET\|sk-test-secret" "$TMP/ref.out" "$TMP/ref.err"
	ok $? "... and nothing of the planted secret or the key is printed"
}
refused "$HT/libs_wrapper" "libs_wrapper/task.yaml:13:54: '-L/' is not a folder inside the task's"
refused "$HT/libs_option" "libs_option/task.yaml:13:36: expected link flags -lNAME or -LDIR"
refused "$HT/pkg_path" "pkg_path/task.yaml:13:37: expected a pkg-config package name"
refused "$HT/core_var_secret" "core_var_secret/task.yaml:13:78: expected the variable that picks"
refused "$HT/include_escape" "include_escape/baseline.c:3: the file it includes leads out of the task's folder (to '/etc/passwd')"
# a task.yaml, a README.md or a baseline.c that links out of the task's folder
for f in task.yaml README.md baseline.c; do
	rm -rf "$TMP/scale" && cp -r "$TASK" "$TMP/scale" && ln -sf "$PLANTED" "$TMP/scale/$f"
	refused "$TMP/scale" "'$TMP/scale/$f' leads out of the task's folder (to '$PLANTED')"
	"$KS" tasks show "$TMP/scale" >"$TMP/show.out" 2>&1
	! grep -q "KSEARCH_PLANTED_SECRET" "$TMP/show.out"
	ok $? "tasks show with $f linked out prints none of it"
done
# what a task may link to: its own files, and a sibling task's (a variant of a base task)
rm -rf "$TMP/tasks" && mkdir -p "$TMP/tasks" && cp -r "$TASK" "$TMP/tasks/scale"
cp -r "$TASK" "$TMP/tasks/scale2" && sed -i 's/^name: scale$/name: scale2/' "$TMP/tasks/scale2/task.yaml"
ln -sf ../scale/README.md "$TMP/tasks/scale2/README.md"
printf '// @ksearch include: ../scale/baseline.c\n' >"$TMP/tasks/scale2/notes.c"
"$KS" tasks show "$TMP/tasks/scale2" >/dev/null 2>"$TMP/err"
ok $? "a link and an include into a sibling task are the task's ($(head -c 200 "$TMP/err"))"
# -L of a folder inside the task, made absolute for the compile
rm -rf "$TMP/lib" && mkdir "$TMP/lib" && cp -r "$ROOT/tests/fixtures/library/scale" "$TMP/lib/scale" && mkdir "$TMP/lib/scale/libs"
sed -i 's|pkg-config: openblas}|pkg-config: openblas, libs: "-Llibs -lm"}|' "$TMP/lib/scale/task.yaml"
"$KS" tasks show "$TMP/lib/scale" >/dev/null 2>"$TMP/err"
ok $? "libs '-Llibs -lm' (a folder of the task's) is accepted ($(head -c 200 "$TMP/err"))"
[ -n "${ours:-}" ] && rm -f "$SHARED"

# --- item 9: reference.py runs in the jail, without ksearch's environment or sockets ------
python3 -c 'import numpy' 2>/dev/null || skip_rest "numpy is not installed for python3"
cp -r "$HT/pyref_escape" "$TMP/pyref_escape"
echo "$TMP/host.sock" >"$TMP/pyref_escape/sock.txt"
python3 - "$TMP/host.sock" "$TMP/got" <<'EOF' &
import socket, sys, threading
got = open(sys.argv[2], "ab", buffering=0)
def serve(addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(addr)
    s.listen(8)
    while True:
        c, _ = s.accept()
        got.write(c.recv(100) + b"\n")
        c.close()
for a in [sys.argv[1], "\0ksearch-test-abstract"]:
    threading.Thread(target=serve, args=(a,), daemon=True).start()
threading.Event().wait(600)
EOF
listener=$!
for _ in $(seq 1 50); do [ -S "$TMP/host.sock" ] && break; sleep 0.1; done
# the probe probes: run by hand, outside the jail, it sees the key and reaches the socket
(cd "$TMP/pyref_escape" && python3 -c 'import reference; reference.escape()') >/dev/null 2>&1
ok $((!$?)) "reference.py run by hand with the key set raises (the probe can fail)"
(cd "$TMP/pyref_escape" && env -u KS_TEST_API_KEY python3 -c 'import reference; reference.escape()') \
	>/dev/null 2>"$TMP/by_hand.err"
grep -q "reference.py connected to '$TMP/host.sock'" "$TMP/by_hand.err"
ok $? "... and without the key it reaches the host socket"
: >"$TMP/got"
is "$(status_of "$TMP/pyref_escape/baseline.c" "$TMP/pyref_escape")" PASSED \
	"pyref_escape: the baseline passes against a reference.py that tries to escape"
grep -q "saw the key\|connected to" "$TMP/st.err"
ok $((!$?)) "... which saw no key and reached no socket ($(head -c 200 "$TMP/st.err"))"
is "$(wc -c <"$TMP/got")" 0 "... and the listener got nothing"
kill "$listener" 2>/dev/null
wait "$listener" 2>/dev/null

done_testing
