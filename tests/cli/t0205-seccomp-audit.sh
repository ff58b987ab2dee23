#!/usr/bin/env bash
# The runner's seccomp allow-list in audit mode (KSEARCH_SECCOMP_AUDIT=FILE in ksearch's
# environment): ordinary kernels make no call outside the list, an unlisted call is
# recorded by name and allowed, and what the deny filter traps stays a violation.
. "$(dirname "$0")/lib.sh"
TASK=$ROOT/tests/fixtures/eval/scale
H=$ROOT/tests/fixtures/hostile
A=$TMP/audit.txt

status_of() { # status_of KERNEL: the JSON's status
	eval_status "$1" "$TASK" "$H/$1.c" --quick --timeout 5 --memory-limit 512M
}

export KSEARCH_SECCOMP_AUDIT=$A
for k in plain openmp simd scratch_write; do
	is "$(status_of $k)" PASSED "$k passes in audit mode"
done
grep -q '"sandbox": *"seccomp in audit mode' "$TMP/plain.json"
ok $? "the evaluation record says the sandbox ran in audit mode"
[ -e "$A" ] && [ ! -s "$A" ]
ok $? "ordinary kernels (plain, openmp, simd, scratch_write) make no call outside the allow-list: $(sort -u "$A" 2>/dev/null | tr '\n' ' ')"

# syslog is outside the list, not dangerous: recorded and allowed (it then fails EPERM
# without CAP_SYSLOG, or reads the log where dmesg_restrict is 0: y[0] spoiled)
st=$(status_of syslog_read)
[ "$st" = PASSED ] || [ "$st" = INCORRECT_NUMERICAL ]
ok $? "syslog_read is allowed in audit mode (got $st)"
grep -q "^ksearch-runner [0-9]* syslog$" "$A"
ok $? "the audit file names the call and the runner: $(sort -u "$A" | tr '\n' ' ')"

# the deny filter still holds
is "$(status_of sigqueue_parent)" SANDBOX_VIOLATION "sigqueue_parent is still a violation in audit mode"
is "$(status_of exec)" SANDBOX_VIOLATION "exec is still a violation in audit mode"
! grep -q "rt_sigqueueinfo\|execve" "$A"
ok $? "trapped calls are not recorded as allowed"

# a relative file name is ksearch's working directory's, not the runner's scratch
mkdir -p "$TMP/cwd"
(cd "$TMP/cwd" && KSEARCH_SECCOMP_AUDIT=rel.txt "$KS" eval "$TASK" "$H/syslog_read.c" --quick \
	--timeout 5 >/dev/null 2>&1)
grep -q " syslog$" "$TMP/cwd/rel.txt"
ok $? "a relative audit file is made in ksearch's working directory"

# without audit mode the same call is a violation
unset KSEARCH_SECCOMP_AUDIT
is "$(status_of syslog_read)" SANDBOX_VIOLATION "without audit mode syslog_read is a violation"
! grep -q "audit mode" "$TMP/syslog_read.json"
ok $? "and the record does not mention audit mode"
done_testing
