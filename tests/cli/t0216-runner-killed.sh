#!/usr/bin/env bash
# A runner killed by someone else is not the kernel's fault: a SIGKILL that ksearch did not
# send, at a peak far below the runner's memory (the candidate's or a yardstick's), is
# evaluated again in fresh runners (until 2026-12-05 it was MEMORY_LIMIT and a search lost
# its leader); a SIGKILL at a big peak, or an allocation past --memory-limit, is still
# MEMORY_LIMIT.
. "$(dirname "$0")/lib.sh"
TASK=$ROOT/tests/fixtures/eval/scale
export KSEARCH_CACHE=$TMP/cache

# sleeps 2 s in its first call, with its pid in TMPDIR (the runner's scratch) meanwhile
cat >"$TMP/sleepy.c" <<'C'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static int calls;
void scale(const float *x, float *y, int32_t n)
{
	if (calls++ == 0) {
		char path[1024];
		snprintf(path, sizeof(path), "%s/sleeping", getenv("TMPDIR"));
		FILE *f = fopen(path, "w");
		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
		sleep(2);
	}
	for (int32_t i = 0; i < n; i++)
		y[i] = 2.0f * x[i];
}
C
# touches MB MiB, then kills itself: what an OOM kill or someone's kill -9 looks like
selfkill() { # selfkill MB
	cat <<C
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
void scale(const float *x, float *y, int32_t n)
{
	size_t big = (size_t)$1 << 20;
	volatile char *p = big ? malloc(big) : NULL;
	for (size_t i = 0; i < big; i += 4096)
		p[i] = 1;
	kill(getpid(), SIGKILL);
	for (int32_t i = 0; i < n; i++)
		y[i] = 2.0f * x[i] + (p ? p[0] - 1 : 0);
}
C
}
# grows by 64 MiB at a time, touching it, far past the limit
cat >"$TMP/grow.c" <<'C'
#include <stdint.h>
#include <stdlib.h>
void scale(const float *x, float *y, int32_t n)
{
	volatile char *p = NULL;
	for (int k = 0; k < 64; k++) {
		p = malloc((size_t)64 << 20);
		for (size_t i = 0; i < ((size_t)64 << 20); i += 4096)
			p[i] = 1;
	}
	for (int32_t i = 0; i < n; i++)
		y[i] = 2.0f * x[i] + p[0] - 1;
}
C
selfkill 0 >"$TMP/selfkill_small.c"

evaluate() { # evaluate NAME: ksearch eval of $TMP/NAME.c into $TMP/NAME.json
	"$KS" eval "$TASK" "$TMP/$1.c" --json --quick --timeout 10 --memory-limit 128M \
		>"$TMP/$1.json" 2>"$TMP/$1.err"
}
status() { json_status "$TMP/$1.json"; }
first_log() { json_get "$TMP/$1.json" 'd["checks"][0]["log"]' 2>/dev/null; }

# the pid a sleeping runner of ksearch process $1 wrote, other than $2: waits up to 60 s.
# Its scratch is a tmpfs in its own mount namespace (where it can have one): read through
# /proc/RUNNER/cwd, else the folder in the cache
sleeping_runner() {
	local f pid
	for _ in $(seq 1 600); do
		for f in $(pgrep -P "$1" ksearch-runner | sed 's|.*|/proc/&/cwd/sleeping|') \
			"$KSEARCH_CACHE"/scratch/run-"$1"-*/sleeping; do
			pid=$(cat "$f" 2>/dev/null)
			if [ -n "$pid" ] && [ "$pid" != "${2:-}" ]; then
				echo "$pid"
				return 0
			fi
		done
		sleep 0.1
	done
	return 1
}

# --- killed once from outside while its first call sleeps: evaluated again, and passes
"$KS" eval "$TASK" "$TMP/sleepy.c" --json --quick --timeout 10 >"$TMP/once.json" 2>"$TMP/once.err" &
ks=$!
r1=$(sleeping_runner $ks)
ok $? "the candidate's runner is sleeping in its first call"
kill -9 "$r1"
wait $ks
is "$?" 0 "killed once from outside: ksearch eval exits 0"
is "$(status once)" PASSED "... and the kernel PASSED (not MEMORY_LIMIT)"
first_log once | grep -q "SIGKILL that ksearch did not send, at a peak of [0-9]* MiB"
ok $? "... its log says the first runner was killed, at what peak"
first_log once | grep -q "evaluated again in a fresh runner"
ok $? "... and that it was evaluated again"
grep -q "was killed from outside; evaluating it again" "$TMP/once.err"
ok $? "... with a warning"

# --- killed twice: a status, but not MEMORY_LIMIT
"$KS" eval "$TASK" "$TMP/sleepy.c" --json --quick --timeout 10 >"$TMP/twice.json" 2>"$TMP/twice.err" &
ks=$!
r1=$(sleeping_runner $ks) && kill -9 "$r1"
r2=$(sleeping_runner $ks "$r1") && kill -9 "$r2"
ok $? "the fresh runner was killed too"
wait $ks
is "$?" 1 "killed twice: exit 1"
is "$(status twice)" RUNTIME_ERROR "... RUNTIME_ERROR, not MEMORY_LIMIT"

# --- the baseline's runner killed while it is timed: evaluated again, not a failed run
mkdir -p "$TMP/yard" && cp -r "$TASK" "$TMP/yard/" && cp "$TMP/sleepy.c" "$TMP/yard/scale/baseline.c"
"$KS" eval "$TMP/yard/scale" "$ROOT/tests/fixtures/hostile/plain.c" --json --quick --timeout 10 \
	>"$TMP/yard.json" 2>"$TMP/yard.err" &
ks=$!
r1=$(sleeping_runner $ks) && kill -9 "$r1"
ok $? "the baseline's runner is sleeping in its first timed call"
wait $ks
is "$?" 0 "baseline's runner killed from outside: ksearch eval exits 0"
is "$(status yard)" PASSED "... the kernel PASSED"
json_get "$TMP/yard.json" 'd["workloads"][0]["speedup_vs_baseline"] > 0' | grep -q True
ok $? "... with the baseline timed in the fresh runners"
grep -q "was killed from outside; evaluating it again" "$TMP/yard.err"
ok $? "... with a warning"

# --- the same from the kernel itself, deterministic
evaluate selfkill_small
is "$(status selfkill_small)" RUNTIME_ERROR "a kernel that SIGKILLs itself at a small peak: RUNTIME_ERROR"
[ "$(first_log selfkill_small | grep -c "SIGKILL that ksearch did not send")" = 2 ]
ok $? "... after a second try in a fresh runner"
# what the runner may use, as it reported: its address space (set from this machine's cache
# size and --memory-limit), or the machine's memory when that is smaller
room=$(first_log selfkill_small | sed -n 's/.*far below the \([0-9.]*\) GiB it may use.*/\1/p' | head -1)
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0 else 1)" "${room:-0}" 2>/dev/null
ok $? "the runner's log says what it may use (${room:-nothing} GiB)"
big=$(python3 -c "print(int(float('${room:-0}') * 1024 * 0.6))")
selfkill "$big" >"$TMP/selfkill_big.c"
evaluate selfkill_big
is "$(status selfkill_big)" MEMORY_LIMIT "SIGKILLed at $big MiB of its $room GiB: MEMORY_LIMIT"
first_log selfkill_big | grep -q "killed by SIGKILL at a peak of [0-9.]* GiB of the $room GiB it may use: out of memory"
ok $? "... its log gives the peak and what it may use"
! grep -q "evaluating it again" "$TMP/selfkill_big.err"
ok $? "... and it is not tried again"
evaluate grow
is "$(status grow)" MEMORY_LIMIT "a kernel that allocates past --memory-limit: MEMORY_LIMIT"

done_testing
