#!/usr/bin/env bash
# The evaluator gives every hostile or broken kernel the right status and stays up, as
# root, with secrets in its environment.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile_lib.sh"
export KS_TEST_API_KEY=sk-test-secret-0123456789
export GITHUB_TOKEN=ghp_test_secret
rm -f /tmp/ksearch-pwned-*
# a secret outside the project that the compiler must not read (include_secret,
# incbin_secret name this path)
PLANTED=/tmp/ksearch-planted-secret.h
echo "KSEARCH_PLANTED_SECRET_5e1f root:\$6\$planted" >"$PLANTED"

# the catalogue: every kernel of tests/fixtures/hostile/catalogue.txt gets its status
catalogue
grep -q "file write outside the scratch directory: '.*/inputs/v2/ksearch-pwned.bin'" "$TMP/input_cache_write.json"
ok $? "input_cache_write: the refused write into the input cache is named"
grep -q "calls on inputs the kernel had not seen took" "$TMP/memo_sampled.json"
ok $? "memo_sampled: the log says its fresh calls were slower than its timed ones"
"$KS" eval "$TASK" "$H/clock_patch.c" --json --quick --cflags -DHONEST >"$TMP/clock_honest.json" 2>/dev/null
patched=$(json_get "$TMP/clock_patch.json" 'd["workloads"][0]["median_us"]')
honest=$(json_get "$TMP/clock_honest.json" 'd["workloads"][0]["median_us"]')
python3 -c "import sys; sys.exit(0 if $patched >= 0.5 * $honest else 1)"
ok $? "clock_patch is timed honestly: its patch was refused ($patched us, its honest twin $honest us)"
# without the sandbox the patch works (no W^X refusal): the evaluator's wall clock sees it
grep -q "the runner's clock ran slower than this process's" "$TMP/clock_patch--no-sandbox.json"
ok $? "clock_patch --no-sandbox: the cross-check names a slowed clock"
grep -q "memfd_create" "$TMP/memfd_hold.json"
ok $? "memfd_hold: the log names memfd_create"
grep -q "conflicting types for .scale" "$TMP/prototype_mismatch.json"
ok $? "prototype_mismatch: the compiler names the conflicting prototype"
grep -q "more than the 64 MiB a kernel may be" "$TMP/big_artifact.json"
ok $? "big_artifact: the log says the library is too big"
[ -z "$(find "$KSEARCH_CACHE/kernels" -name 'kernel.so*' -size +64M)" ]
ok $? "big_artifact: no library of more than 64 MiB stays in the kernel cache"
# threads: a pids cgroup of its own as root, RLIMIT_NPROC otherwise
"$KS" eval "$TASK" "$H/plain.c" --json --quick >"$TMP/describe.json" 2>/dev/null
if [ "$(id -u)" != 0 ] || grep -q "pids cgroup" "$TMP/describe.json"; then
	expect thread_bomb PASSED
else
	skip "thread_bomb -> PASSED" "root without a writable pids cgroup: threads are not bounded here"
fi
# the probe probes: as root, without the sandbox, nothing bounds them
[ "$(id -u)" = 0 ] && expect thread_bomb INCORRECT_NUMERICAL --no-sandbox
# scratch: a tmpfs of its own where the runner can have a mount namespace
if unshare -m true 2>/dev/null || unshare -Urm true 2>/dev/null; then
	expect scratch_fill PASSED
else
	skip "scratch_fill -> PASSED" "no mount namespace here: scratch has no quota"
fi
expect scratch_fill INCORRECT_NUMERICAL --no-sandbox

# a runner does not outlive a killed ksearch
"$KS" eval "$TASK" "$H/infinite_loop.c" --quick --timeout 60 >/dev/null 2>&1 &
ks_pid=$!
# the reference's runners come and go; the one that stays for 2 s spins in the call
runner="" seen=0
for _ in $(seq 1 60); do
	sleep 0.5
	r=$(pgrep -P "$ks_pid" ksearch-runner | head -1)
	if [ -n "$r" ] && [ "$r" = "$runner" ]; then seen=$((seen + 1)); else seen=0; fi
	runner=$r
	[ $seen -ge 4 ] && break
done
kill -9 "$ks_pid"
wait "$ks_pid" 2>/dev/null
gone=1
for _ in $(seq 1 30); do
	if [ -n "$runner" ] && ! kill -0 "$runner" 2>/dev/null; then gone=0; break; fi
	sleep 0.1
done
ok $gone "the kernel's runner (pid ${runner:-none found}) dies with ksearch"

# issue 13: the compiler is sandboxed (Landlock, memory/file/CPU limits, no network)
t0=$(date +%s)
expect include_dev_zero COMPILE_ERROR
expect macro_bomb COMPILE_ERROR
t1=$(date +%s)
[ $((t1 - t0)) -lt 100 ]
ok $? "/dev/zero and the macro bomb end within their limits ($((t1 - t0)) s)"
! grep -q "KSEARCH_PLANTED_SECRET" "$TMP/include_secret.json" "$TMP/incbin_secret.json"
ok $? "no text of a file outside the readable folders reaches the compile log"

# issue 13: a kernel source is a regular text file
printf 'void scale(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = 2.0f * x[i]; }\n\0 not C at all (\n' >"$TMP/nul.c"
"$KS" eval "$TASK" "$TMP/nul.c" --quick >/dev/null 2>"$TMP/nul.err"
is "$?" 2 "a source with a NUL byte is a usage error"
grep -q "NUL byte at offset" "$TMP/nul.err"
ok $? "the error says where the NUL byte is"
mkfifo "$TMP/fifo.c"
timeout 20 "$KS" eval "$TASK" "$TMP/fifo.c" --quick >/dev/null 2>"$TMP/fifo.err"
is "$?" 2 "a FIFO as kernel is refused at once"
grep -q "not a regular file (a FIFO)" "$TMP/fifo.err"
ok $? "the error says it is a FIFO"
"$KS" eval "$TASK" "$TMP" --quick >/dev/null 2>"$TMP/dir.err"
is "$?" 2 "a directory as kernel is refused"

# issue 13: leftovers of killed evaluations are swept at start; a live process's are kept
dead=$(sh -c 'echo $$')
IN=$KSEARCH_CACHE/inputs/v2
mkdir -p "$KSEARCH_CACHE/scratch/run-$dead-stale1/sub" "$KSEARCH_CACHE/scratch/run-$$-live01" \
	"$KSEARCH_CACHE/kernels/zz/zz0123" "$IN"
touch "$KSEARCH_CACHE/scratch/run-$dead-stale1/sub/f" "$KSEARCH_CACHE/kernels/zz/zz0123/kernel.so.tmp.$dead" \
	"$KSEARCH_CACHE/kernels/zz/zz0123/kernel.so.tmp.$$" "$IN/0123.bin.tmp.$dead" "$IN/0123.bin.tmp.$$"
expect plain PASSED
[ ! -e "$KSEARCH_CACHE/scratch/run-$dead-stale1" ] && [ ! -e "$KSEARCH_CACHE/kernels/zz/zz0123/kernel.so.tmp.$dead" ] &&
	[ ! -e "$IN/0123.bin.tmp.$dead" ]
ok $? "a dead process's scratch folder, temporary library and input cache file are removed"
[ -d "$KSEARCH_CACHE/scratch/run-$$-live01" ] && [ -e "$KSEARCH_CACHE/kernels/zz/zz0123/kernel.so.tmp.$$" ] &&
	[ -e "$IN/0123.bin.tmp.$$" ]
ok $? "a live process's are kept"
rm -f "$IN/0123.bin.tmp.$$"

# thread placement is dropped from the runner's environment (the filter cannot tell a
# thread id of the runner from another process's pid)
OMP_PROC_BIND=true OMP_PLACES=cores expect openmp PASSED

# the probes really probe: an ordinary variable does reach the kernel, and without the
# sandbox the raw /proc read does leak
OMP_KSEARCH_PROBE_LEAK=1 expect env_secret INCORRECT_NUMERICAL
expect proc_environ_raw INCORRECT_NUMERICAL --no-sandbox
expect input_cache_write INCORRECT_NUMERICAL --no-sandbox

for f in exec write raw; do
	[ ! -e /tmp/ksearch-pwned-$f ]
	ok $? "no file /tmp/ksearch-pwned-$f was created"
done
rm -f /tmp/ksearch-pwned-*

# an honest kernel whose timed calls the machine slowed (back to back slow, one at a time
# fast, as load makes an OpenMP kernel's) passes, its figure marked as the load's
expect backtoback_slow PASSED
grep -q "the machine's load set this figure" <(json_get "$TMP/backtoback_slow.json" 'd["workloads"][0]["log"]')
ok $? "... its timing is marked as set by the machine's load"

# a faked libc clock does not make the kernel look fast
"$KS" eval "$TASK" "$H/fake_clock.c" --json --quick --no-checks >"$TMP/clock.json" 2>/dev/null
med=$(json_get "$TMP/clock.json" 'd["workloads"][0]["median_us"]')
python3 -c "import sys; sys.exit(0 if float('$med') > 500 else 1)"
ok $? "fake_clock is timed honestly (median ${med} us > 500 us)"

# the roofline floor flags impossible speed
st=$(status_of plain --peak-gbps 0.001 --peak-gflops 0.001)
is "$st" SUSPICIOUS "faster than the roofline floor -> SUSPICIOUS"

# the failure log says what happened
grep -q "SIGSEGV\|signal 11\|Segmentation" "$TMP/segfault.json"
ok $? "segfault log names the signal"
grep -q "y\[" "$TMP/partial_write.json"
ok $? "partial_write log shows the first mismatching element"
# issue 39: an output left NaN has an error of nan (not 0); what was not run says so
"$KS" eval "$TASK" "$H/partial_write.c" --quick >"$TMP/partial.out" 2>&1
grep -qE "^one +INCORRECT_NUMERICAL +nan +nan" "$TMP/partial.out" &&
	grep -q "max abs err nan" "$TMP/partial.out"
ok $? "partial_write: its NaN output's error is nan in the table and the log"
grep -qE "^odd +not run +- +-$" "$TMP/partial.out" && grep -qE "^n=1048576 +not run( +-)+$" "$TMP/partial.out"
ok $? "partial_write: the check and the workload not run say so, with no numbers"
json_get "$TMP/partial_write.json" 'd["workloads"][0]["evaluated"] is False and d["checks"][0]["evaluated"] is True' | grep -q True
ok $? "partial_write --json: \"evaluated\" tells what was run"
grep -q "expected ';'\|error" "$TMP/compile_error.json"
ok $? "compile_error log carries the compiler message"
grep -q "undefined reference to .scale" "$TMP/wrong_name.json"
ok $? "a misspelled entry point names the missing symbol"

grep -q "rt_sigqueueinfo" "$TMP/sigqueue_parent.json"
ok $? "a trapped call is named in the log"
grep -q "blocked system call [0-9]* (syslog)" "$TMP/syslog_read.json"
ok $? "a call off the allow-list is named in the log"

# secrets never appear in any output
! grep -rq "sk-test-secret\|ghp_test_secret\|KSEARCH_PLANTED_SECRET" "$TMP"
ok $? "no secret in any output"

rm -f "$PLANTED"
done_testing
