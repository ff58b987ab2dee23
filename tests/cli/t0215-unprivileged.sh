#!/usr/bin/env bash
# ksearch as a user without root's capabilities: the compiler's jail and the runner's sandbox
# cannot lower the capability bounding set there (that needs CAP_SETPCAP) and need not (with
# no_new_privs nothing can raise what the process holds); Landlock and seccomp still hold.
# As root the commands run as nobody (setpriv); as anyone else, as that user.
. "$(dirname "$0")/lib.sh"
KSA=$(cd "$(dirname "$KS")" && pwd)/$(basename "$KS")
TASK=$ROOT/tests/fixtures/eval/scale
as_user=()
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null || skip_rest "no setpriv (util-linux) to leave root"
	as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	"${as_user[@]}" test -x "$KSA" -a -r "$TASK/task.yaml" ||
		skip_rest "nobody cannot reach this checkout ($KSA)"
fi
W=$(mktemp -d)
chmod 777 "$W"
trap 'rm -rf "$TMP" "$W"' EXIT
# ks ARGS...: ksearch in $W as the unprivileged user, its own cache there
ks() { (cd "$W" && "${as_user[@]}" env HOME="$W" KSEARCH_CACHE="$W/cache" "$KSA" "$@"); }
who=$("${as_user[@]}" id -un 2>/dev/null || echo "uid $("${as_user[@]}" id -u)")

ks eval "$TASK" "$ROOT/tests/fixtures/hostile/plain.c" --reps 3 >"$TMP/out" 2>&1
rc=$?
ok $rc "eval as $who: the reference and the kernel compile in the jail and pass (rc $rc: $(grep -m1 -iE 'error|not permitted' "$TMP/out" | head -c 200))"
grep -q "sandbox: seccomp" "$TMP/out"
ok $? "eval as $who: the kernel ran sandboxed ($(grep -m1 '^sandbox:' "$TMP/out" | head -c 80))"

rm -f /tmp/ksearch-pwned-raw
ks eval "$TASK" "$ROOT/tests/fixtures/hostile/file_write_raw.c" --reps 3 >"$TMP/raw" 2>&1
grep -q "SANDBOX_VIOLATION" "$TMP/raw" && [ ! -e /tmp/ksearch-pwned-raw ]
ok $? "eval as $who: the kernel ran, its raw write outside scratch was refused and reported"
rm -f /tmp/ksearch-pwned-raw

ks run "$TASK" --budget 2 >"$TMP/run" 2>&1
rc=$?
ok $rc "run as $who finishes (rc $rc: $(tail -n 3 "$TMP/run" | head -c 200))"
ls "$W"/runs/*/best.c >/dev/null 2>&1
ok $? "run as $who writes its best kernel"
done_testing
