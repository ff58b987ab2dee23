/* The rule of the preempted-calls note (ks_preempted_note, docs/evaluation.md "Preempted
 * calls"): at least KS_PREEMPTED_PER_CALL involuntary context switches per timed call on
 * average, with the count and the calls in the note; none when fewer or not counted. */
#include <stdio.h>
#include <string.h>

#include "eval/evaluator.h"
#include "ksearch/buf.h"
#include "tap.h"

int main(void)
{
	struct ks_buf log = KS_BUF_INIT;
	ok(ks_preempted_note(37, 12, &log) == 1, "37 preemptions over 12 timed calls: noted");
	ok(strstr(ks_buf_str(&log), "preempted 37 times over 12 timed calls") &&
		   strstr(ks_buf_str(&log), "the machine's load set part of this figure"),
	   "... with the count, the calls and what it means (%s)", ks_buf_str(&log));
	ks_buf_reset(&log);
	ok(ks_preempted_note(12, 12, &log) == 1, "one per call on average: noted");
	ks_buf_reset(&log);
	ok(ks_preempted_note(11, 12, &log) == 0 && log.len == 0,
	   "fewer than one per call: no note (a lone preempted call is the spread's)");
	ok(ks_preempted_note(0, 12, &log) == 0, "none: no note");
	ok(ks_preempted_note(-1, 12, &log) == 0 && log.len == 0, "not counted (-1): no note");
	ok(ks_preempted_note(5, 0, &log) == 0, "no timed calls: no note");
	ks_buf_adds(&log, "an earlier line");
	ks_preempted_note(40, 10, &log);
	ok(strstr(ks_buf_str(&log), "an earlier line\nthe kernel's threads") != NULL,
	   "the note is a line of its own after what the log holds");
	ks_buf_release(&log);
	return tap_done();
}
