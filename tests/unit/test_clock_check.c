/* The runner's clock against this process's wall clock (ks_clock_untrue).  The first case
 * is the block of an honest attention kernel that a run at load 25 on 2 cores flagged
 * SUSPICIOUS (2026-12-06): one reply delayed past the slack, which is why a refused block
 * is timed again (time_block, KS_CLOCK_TRIES) rather than the slack widened; a clock slowed
 * fourfold is refused on every try, on an idle machine or a loaded one. */
#include <stdio.h>
#include <string.h>

#include "eval/evaluator.h"
#include "ksearch/buf.h"
#include "tap.h"

static int untrue(double block, double span, double wall, double waited, struct ks_buf *log)
{
	struct ks_block_times bt = {.warm = 0, .block = block, .span = span};
	return ks_clock_untrue(&bt, block, 10, wall, waited, log);
}

int main(void)
{
	struct ks_buf log = KS_BUF_INIT;
	ok(untrue(0.303, 0.346, 0.488, 0.09, &log) == 1,
	   "a reply delayed 142 ms past a 0.346 s span is refused (so the block is timed again)");
	ok(strstr(ks_buf_str(&log), "slower than this process's") &&
		   strstr(ks_buf_str(&log), "0.090000 s of which waiting for a CPU"),
	   "... and the log says so, with how long this process waited for a CPU");
	ks_buf_reset(&log);
	ok(untrue(0.303, 0.346, 0.440, 0.09, &log) == 0, "a delay inside the slack is not");
	ok(untrue(0.30, 0.34, 1.25, 0.30, &log) == 1,
	   "a clock slowed fourfold is refused, however long this process waited");
	ok(untrue(0.30, 0.34, 1.25, 0, &log) == 1, "... and on an idle machine");
	ok(untrue(0.50, 0.55, 0.50, 0, &log) == 1, "a clock run fast is refused");
	ok(untrue(0.30, 0.34, 0.36, 0, &log) == 0, "an honest block on an idle machine passes");
	ok(KS_CLOCK_TRIES >= 2, "a refused block is timed again (%d tries)", KS_CLOCK_TRIES);
	ks_buf_release(&log);
	return tap_done();
}
