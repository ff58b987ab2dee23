/* The evaluator's fast paths (issue 12), on the real cpu runner and the scale test task:
 * one runner process serves every check and workload of a candidate (reset between them,
 * results still right), and a timing block ends early once the median is known, after its
 * floor on samples; the final's yardsticks take their own count floor (yard_reps).  Runs from the source root (ctest's working directory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/evaluator.h"
#include "ksearch/task.h"
#include "tap.h"
#include "util/clock.h"

static struct ks_task *task;
static struct ks_evaluator *ev;

/* every check and then the workload in one runner: the same process, each PASSED, the
 * workload with a speedup (the second candidate's against the baseline timed by the first) */
static void test_one_runner(int nth)
{
	struct ks_runner *cand = NULL;
	struct ks_error e = {0};
	pid_t pid = -1;
	int same = 1, passed = 0;
	for (int pass = 1; pass >= 0; pass--)
		for (int i = 0; i < ev->nwl; i++) {
			struct ks_wl_state *ws = &ev->wl[i];
			if (ws->is_check != pass)
				continue;
			struct ks_wl_result res;
			memset(&res, 0, sizeof(res));
			res.status = KS_STATUS_PASSED;
			int rc = ks_eval_workload(ev, ws, ev->yard[KS_YARD_BASELINE].art.path, &cand, &res, &e);
			ok(rc == 0 && res.status == KS_STATUS_PASSED, "%s %d: %s %s",
			   pass ? "check" : "workload", ws->index, ks_status_name(res.status),
			   rc ? e.msg : res.log ? res.log : "");
			passed += rc == 0 && res.status == KS_STATUS_PASSED;
			if (!ws->is_check)
				ok(res.baseline_us > 0 && res.speedup > 0 && ws->yard[KS_YARD_BASELINE].n > 0 &&
				   ws->yard[KS_YARD_BASELINE].samples,
				   "candidate %d: baseline %.1f us (%d samples kept for the run)", nth,
				   res.baseline_us, ws->yard[KS_YARD_BASELINE].n);
			if (!cand) {
				same = 0;
			} else {
				if (pid > 0 && cand->pid != pid)
					same = 0;
				pid = cand->pid;
			}
			free(res.samples_us);
			free(res.baseline_samples_us);
			free(res.log);
		}
	is_int(passed, ev->nwl, "every check and workload passed");
	ok(same && pid > 0, "one runner process (pid %d) served all %d of them", (int)pid, ev->nwl);
	ks_runner_free(cand);
}

/* n from "times n warm block ..." */
static int reps_of(const char *reply)
{
	return strncmp(reply, "times ", 6) ? -1 : atoi(reply + 6);
}

static void test_interval_stop(void)
{
	struct ks_wl_state *ws = NULL;
	for (int i = 0; i < ev->nwl && !ws; i++)
		if (!ev->wl[i].is_check)
			ws = &ev->wl[i];
	struct ks_runner *r = NULL;
	struct ks_error e = {0};
	const char *reply;
	int rc = ks_eval_open_runner(ev, ws, ev->yard[KS_YARD_BASELINE].art.path, 1, 0, ev->o.memory_limit, &r, &e);
	if (!ok(rc == 0, "runner for the timed workload (%s)", e.msg)) {
		ks_runner_free(r);
		return;
	}
	ok(ks_runner_cmd(r, 30, &reply, &e, "fill 0 1") == 0, "fill (%s)", e.msg);
	/* a floor of 20 s: without the interval stop this block would take 20 s (or 20000 reps) */
	double t0 = ks_clock_s();
	rc = ks_runner_cmd(r, 60, &reply, &e, "time 1 10 %llu 20000 %llu %u %d", 20000000000ull,
			   40000000000ull, 50000u, 24);
	double wall = ks_clock_s() - t0;
	int n = rc ? -1 : reps_of(reply);
	ok(n >= 24 && n < 20000, "the interval stop ended the block after %d reps (floor 24)", n);
	ok(wall < 15, "...in %.2f s instead of the 20 s floor", wall);
	/* without a target (the old protocol, and the final's): the time floor holds */
	t0 = ks_clock_s();
	rc = ks_runner_cmd(r, 60, &reply, &e, "time 1 10 %llu 20000 %llu", 100000000ull,
			   40000000000ull);
	wall = ks_clock_s() - t0;
	n = rc ? -1 : reps_of(reply);
	ok(n >= 10 && wall >= 0.1, "no target: %d reps in %.2f s, the 0.1 s floor met", n, wall);
	ks_runner_free(r);
}

/* the final's yardsticks: yard_reps replaces the count floor of their blocks (and their
 * warm-up is one call), the candidate's blocks keep min_reps */
static void test_yard_reps(int yard_reps, int want_base)
{
	struct ks_eval_opts o;
	ks_eval_opts_init(&o);
	o.min_time_s = 1e-6; /* the count floors decide */
	o.min_reps = 10;
	o.blocks = 2;
	o.yard_reps = yard_reps;
	struct ks_evaluator *fev = NULL;
	struct ks_error e = {0};
	if (!ok(ks_evaluator_new(task, &o, &fev, &e) == 0, "evaluator (%s)", e.msg))
		return;
	for (int i = 0; i < fev->nwl; i++) {
		struct ks_wl_state *ws = &fev->wl[i];
		if (ws->is_check)
			continue;
		struct ks_runner *cand = NULL;
		struct ks_wl_result res;
		memset(&res, 0, sizeof(res));
		res.status = KS_STATUS_PASSED;
		int rc = ks_eval_workload(fev, ws, fev->yard[KS_YARD_BASELINE].art.path, &cand, &res, &e);
		ok(rc == 0 && res.status == KS_STATUS_PASSED, "yard_reps %d: workload %d %s", yard_reps,
		   ws->index, rc ? e.msg : ks_status_name(res.status));
		ok(res.nsamples == 20, "yard_reps %d: the candidate's 2 blocks of 10 reps (%d)",
		   yard_reps, res.nsamples);
		ok(res.nbaseline_samples == want_base, "yard_reps %d: the baseline's %d samples (%d)",
		   yard_reps, want_base, res.nbaseline_samples);
		ks_runner_free(cand);
		free(res.samples_us);
		free(res.baseline_samples_us);
		free(res.library_samples_us);
		free(res.log);
		break;
	}
	ks_evaluator_free(fev);
}

int main(void)
{
	struct ks_error e = {0};
	if (ks_task_load("tests/fixtures/eval/scale", &task, &e)) {
		ok(0, "load the scale task: %s", e.msg);
		return tap_done();
	}
	struct ks_eval_opts o;
	ks_eval_opts_init(&o);
	o.min_time_s = 0.02;
	o.blocks = 1;
	o.reuse_baseline = 1;
	if (ks_evaluator_new(task, &o, &ev, &e)) {
		/* no compiler or runner here: nothing of this can run */
		printf("# skipped: %s\n", e.msg);
		ks_task_free(task);
		return 77;
	}
	test_one_runner(1);
	test_one_runner(2); /* reuses the baseline's samples */
	test_interval_stop();
	test_yard_reps(0, 20);
	test_yard_reps(3, 6);
	ks_evaluator_free(ev);
	ks_task_free(task);
	return tap_done();
}
