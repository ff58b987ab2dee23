#!/usr/bin/env bash
# The hostile catalogue's rows marked "load" (tests/fixtures/hostile/catalogue.txt: those
# whose status a timing, a scheduling or a wake-up could change) get the same status with
# the machine busy: 4 processes spinning per core beside the evaluations, load 8 on 2 cores
# (issue 39: under load 10, a catalogue case and a hardening probe changed status).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile_lib.sh"
export KS_TEST_API_KEY=sk-test-secret-0123456789

busy_loops $((4 * $(nproc)))
ok 0 "${#BUSY[@]} spinning processes started (load $(cut -d' ' -f1 /proc/loadavg))"

catalogue load
grep -q "calls on inputs the kernel had not seen took" "$TMP/memo_sampled.json"
ok $? "memo_sampled: its fresh calls were the slow ones, under load too"
grep -q "the runner's clock ran slower than this process's" "$TMP/clock_patch--no-sandbox.json"
ok $? "clock_patch --no-sandbox: the wall clock sees the slowed clock under load too"

done_testing
