#!/usr/bin/env bash
# `ksearch doctor` (src/cli/cmd_doctor.c), the report a first Mac user pastes into an issue
# (docs/macos.md), on this machine: its CPU part runs a task's baseline and rows of the
# hostile catalogue through the compiler's jail and the runner's sandbox and gets the
# statuses Linux gives; the MLX hostile part runs what this MLX can run and lists the rest
# as skipped with the reason (MLX's CPU build runs no custom kernel); a status other than
# the expected one is marked and makes the exit status 1; the report goes to --out too.
. "$(dirname "$0")/lib.sh"
[ "$(uname -s)" = Linux ] || skip_rest "the CPU part compares with Linux's statuses: on $(uname -s) its report is for a person to read"
"$KS" doctor --only sandbox --out "$TMP/report.md" >"$TMP/out.md" 2>"$TMP/err"
is "$?" 0 "doctor --only sandbox: every kernel got the status Linux gives"
sed 's/^/# /' "$TMP/out.md"
cmp -s "$TMP/out.md" "$TMP/report.md"
ok $? "--out holds the report printed"
is "$(grep -c '| ok |' "$TMP/out.md")" 11 "the baseline and 10 hostile kernels, each ok"
grep -q '^| hostile socket_connect.c | SANDBOX_VIOLATION | SANDBOX_VIOLATION | ok |' "$TMP/out.md"
ok $? "a network socket is a sandbox violation"
grep -q "^kernels isolated by: seccomp" "$TMP/out.md"
ok $? "the report names what isolated the kernels"
grep -q "^11 ran, 11 as expected, 0 unexpected, 0 skipped" "$TMP/out.md"
ok $? "the summary counts them"

"$KS" doctor --only hostile >"$TMP/hostile.md" 2>/dev/null
rc=$?
sed 's/^/# /' "$TMP/hostile.md" | head -20
if grep -q "CPU build" "$TMP/hostile.md"; then
	is "$rc" 0 "doctor --only hostile on MLX's CPU build: nothing ran, nothing failed"
	is "$(grep -c '| skipped |' "$TMP/hostile.md")" "$(grep -c '^[a-z]' "$ROOT/tests/fixtures/hostile_mlx/catalogue.txt" | awk '{print $1 * 2 - 2}')" \
		"every hostile MLX kernel and good kernel after it is listed as skipped"
	grep -q "| hostile metal/hang.mlx | skipped | | | custom kernels need MLX's Metal or CUDA backend" "$TMP/hostile.md"
	ok $? "... with the reason"
else
	skip "the MLX hostile part on MLX's CPU build" "this MLX runs custom kernels (or there is none)"
fi

# a status other than the expected one: marked, and exit status 1
home=$TMP/home
mkdir -p "$home/tests/fixtures/hostile"
for d in tasks include knowledge prompts; do ln -s "$ROOT/$d" "$home/$d"; done
ln -s "$ROOT/tests/fixtures/eval" "$home/tests/fixtures/eval"
cp "$ROOT/tests/fixtures/hostile/plain.c" "$home/tests/fixtures/hostile/"
echo "-       plain                   INCORRECT_NUMERICAL" >"$home/tests/fixtures/hostile/catalogue.txt"
KSEARCH_HOME=$home "$KS" doctor --only sandbox >"$TMP/wrong.md" 2>/dev/null
is "$?" 1 "a kernel that does not get its expected status: exit status 1"
grep -q '^| hostile plain.c | PASSED | INCORRECT_NUMERICAL | \*\*UNEXPECTED\*\* |' "$TMP/wrong.md"
ok $? "... and its row says so"

"$KS" doctor --only everything >/dev/null 2>"$TMP/usage"
is "$?" 2 "an unknown part is a usage error"
grep -q "sandbox, kernels, hostile" "$TMP/usage"
ok $? "... naming the parts"
done_testing
