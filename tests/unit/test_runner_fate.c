/* What a runner's SIGKILL means (ks_runner_fate): ksearch's own kill after an error, the
 * CPU-time backstop (TIMEOUT), an out-of-memory kill at a big peak (MEMORY_LIMIT), or
 * someone else's at a small one (RUNTIME_ERROR, killed_outside: the evaluator tries a fresh
 * runner).  Before 2026-12-05 every SIGKILL not sent by ksearch was MEMORY_LIMIT. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "eval/runner_client.h"
#include "tap.h"

#define MIB ((size_t)1 << 20)

/* a runner already reaped after a SIGKILL, as wait4 left it */
static enum ks_status fate(int ours, size_t peak, double cpu_s, size_t as, double cpu_limit,
			   int *outside, char *why, size_t n)
{
	struct ks_runner r;
	memset(&r, 0, sizeof(r));
	r.pid = -1;
	r.cmd_fd = r.reply_fd = r.log_fd = -1;
	r.reaped = 1;
	r.wstatus = SIGKILL; /* WIFSIGNALED, WTERMSIG == SIGKILL */
	r.killed = ours;
	r.peak_rss = peak;
	r.cpu_used_s = cpu_s;
	r.address_space = as;
	r.cpu_limit_s = cpu_limit;
	struct ks_buf log = KS_BUF_INIT;
	enum ks_status st = ks_runner_fate(&r, &log);
	snprintf(why, n, "%s", ks_buf_str(&log));
	ks_buf_release(&log);
	*outside = r.killed_outside;
	return st;
}

int main(void)
{
	char why[512];
	int outside, killed = SIGKILL; /* a variable: Darwin's wait macros take its address */
	ok(WIFSIGNALED(killed) && WTERMSIG(killed) == SIGKILL, "a wait status of SIGKILL");

	enum ks_status st = fate(1, 10 * MIB, 1, 1024 * MIB, 100, &outside, why, sizeof(why));
	ok(st == KS_STATUS_RUNTIME_ERROR && !outside && strstr(why, "stopped after"),
	   "killed by ksearch after an error: RUNTIME_ERROR (%s)", why);

	st = fate(0, 10 * MIB, 103.5, 1024 * MIB, 100, &outside, why, sizeof(why));
	ok(st == KS_STATUS_TIMEOUT && !outside && strstr(why, "CPU time limit"),
	   "killed past its CPU-time backstop: TIMEOUT (%s)", why);

	st = fate(0, 700 * MIB, 1, 1024 * MIB, 100, &outside, why, sizeof(why));
	ok(st == KS_STATUS_MEMORY_LIMIT && !outside && strstr(why, "out of memory"),
	   "killed at 700 MiB of a 1 GiB address space: MEMORY_LIMIT (%s)", why);

	st = fate(0, 40 * MIB, 1, 1024 * MIB, 100, &outside, why, sizeof(why));
	ok(st == KS_STATUS_RUNTIME_ERROR && outside && strstr(why, "did not send"),
	   "killed at 40 MiB of 1 GiB: not memory, killed from outside (%s)", why);

	/* no address-space limit (GPU runners): judged against the machine's memory */
	st = fate(0, 40 * MIB, 1, 0, 0, &outside, why, sizeof(why));
	ok(st == KS_STATUS_RUNTIME_ERROR && outside,
	   "no limit, killed at 40 MiB: killed from outside (%s)", why);
	return tap_done();
}
