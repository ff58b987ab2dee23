/* One workload of one candidate: correctness on several seeds, then timing interleaved
 * with the yardsticks (the baseline, and the library where there is one), then correctness
 * again. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval/evaluator.h"
#include "eval/stats.h"
#include "ksearch/log.h"
#include "util/clock.h"
#include "util/os.h"
#include "util/proc.h"
#include "util/rng.h"

struct ks_eval_timing_seam ks_eval_timing = {.version = 1};

/* the worse of two errors, NaN the worst */
static double worse(double a, double b)
{
	return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
}

/* Compare one set of the runner's outputs (got: ks_eval_set_outputs) with the reference of
 * seed slot seed_idx; 1 when they match.  A correctness seed's errors are kept per seed. */
static int compare_outputs(struct ks_evaluator *ev, struct ks_wl_state *ws,
			   const unsigned char *got, int seed_idx, const char *when,
			   struct ks_wl_result *res, struct ks_buf *log)
{
	const struct ks_task *t = ev->task;
	size_t off = 0;
	int ok = 1, k = seed_idx < ev->o.nseeds ? seed_idx : -1;
	if (k >= 0 && res->nseeds <= k)
		res->nseeds = k + 1;
	if (k >= 0)
		res->seeds[k] = ev->seeds[seed_idx];
	for (int j = 0; j < t->ntensors; j++) {
		if (!t->tensors[j].is_output)
			continue;
		size_t numel = ws->numel[j];
		struct ks_compare c;
		ks_compare_tensors(t->tensors[j].dtype, got + ws->out_off[j], ws->ref[seed_idx] + off,
				   numel, t->tensors[j].name, t->atol, t->rtol, t->l2, &c);
		/* c's maxima are over finite outputs: with NaN or Inf among them the error is
		 * not a number, never 0 */
		double abs_err = c.nonfinite ? NAN : c.max_abs_err;
		double rel_err = c.nonfinite ? NAN : c.max_rel_err;
		res->max_abs_err = worse(res->max_abs_err, abs_err);
		res->max_rel_err = worse(res->max_rel_err, rel_err);
		if (k >= 0) {
			res->seed_abs_err[k] = worse(res->seed_abs_err[k], abs_err);
			res->seed_rel_err[k] = worse(res->seed_rel_err[k], rel_err);
		}
		ks_compare_tol_fold(&c, &res->tol_elem, &res->tol_l2);
		if (!c.passed) {
			if (ok)
				ks_buf_addf(log, "%s (seed %llu): %s; max abs err %.3g, rel L2 %.3g%s",
					    when, ev->seeds[seed_idx], c.detail, abs_err, c.rel_l2,
					    c.nonfinite ? " (over the finite outputs)" : "");
			ok = 0;
		}
		off += numel * ks_dtype_size(t->tensors[j].dtype);
	}
	return ok;
}

/* parse "times n warm block span t0 t1 ... [preempted]" into samples (us) and what the
 * runner says of the block: its seconds by its own clock, the calls' preemptions (-1 from a
 * runner that does not count them, or does not say) */
static int parse_times(const char *reply, double **out, int *n, struct ks_block_times *bt)
{
	char *p;
	long cnt = strtol(reply + 6, &p, 10);
	if (cnt <= 0 || cnt > 20000)
		return -1;
	bt->warm = strtoull(p, &p, 10) * 1e-9;
	bt->block = strtoull(p, &p, 10) * 1e-9;
	bt->span = strtoull(p, &p, 10) * 1e-9;
	double *s = malloc((size_t)cnt * sizeof(double));
	if (!s)
		return -1;
	for (long i = 0; i < cnt; i++)
		s[i] = strtoull(p, &p, 10) * 1e-3;
	char *end;
	long long pre = strtoll(p, &end, 10);
	bt->preempted = end != p && pre >= 0 ? pre : -1;
	*out = s;
	*n = (int)cnt;
	return 0;
}

static int append(double **dst, int *n, const double *src, int m)
{
	double *d = realloc(*dst, (size_t)(*n + m) * sizeof(double));
	if (!d)
		return -1;
	memcpy(d + *n, src, (size_t)m * sizeof(double));
	*dst = d;
	*n += m;
	return 0;
}

/* 1 when the runner's clock cannot be true against this process's wall clock (wall: the
 * seconds from sending the command to reading the reply), with why in log.  A clock run
 * fast shows as a block longer than wall; a clock slowed down as a span (the runner's own
 * time from reading the command to its reply) well short of wall.  Between them lie two
 * pipe wake-ups, which KS_SPAN_SLACK_S and KS_SPAN_SLACK_REL allow.  waited (this thread's
 * time waiting for a CPU during the block, the kernel's count) goes into the log only: it
 * accrues inside the runner's span too, so it cannot be taken out of the gap.  Reps that add up to far
 * less than the block mean the clock was lied to within the block. */
int ks_clock_untrue(const struct ks_block_times *bt, double sum, int cnt, double wall,
			double waited, struct ks_buf *log)
{
	double slack = KS_SPAN_SLACK_S > KS_SPAN_SLACK_REL * wall ? KS_SPAN_SLACK_S
								  : KS_SPAN_SLACK_REL * wall;
	const char *why = NULL;
	ks_debug("timing block: the runner's command took %.6f s, this process saw %.6f s (%.3f), "
		 "%.6f s of it waiting for a CPU", bt->span, wall, wall > 0 ? bt->span / wall : 0,
		 waited);
	if (bt->warm + bt->block > wall + 0.002 || bt->span > wall + 0.002)
		why = "the runner's clock ran faster than this process's";
	else if (bt->span < wall - slack)
		why = "the runner's clock ran slower than this process's";
	else if (sum > bt->block * 1.01 + 1e-4 || sum < 0.5 * bt->block - cnt * 20e-6)
		why = "the reps do not add up to the runner's block";
	if (why)
		ks_buf_addf(log, "%stiming cross-check failed: %s (reps sum to %.6f s, the runner's "
				 "block took %.6f s and its command %.6f s, this process saw %.6f s, "
				 "%.6f s of which waiting for a CPU)",
			    log->len ? "\n" : "", why, sum, bt->block, bt->span, wall, waited);
	return why != NULL;
}

/* the seconds this thread has waited for a CPU, as the kernel counts them (NAN: unknown):
 * what a log of a refused block says about the machine's load */
static double waits_now(void)
{
	return ks_sched_wait_s(0);
}

static double waited_since(double w0)
{
	double w1 = waits_now();
	return isfinite(w0) && isfinite(w1) && w1 > w0 ? w1 - w0 : 0;
}

/* One timing block on runner r: its samples (us) into *s, *cnt, and whether this process's
 * wall clock contradicts the runner's (why in why) */
static int time_block_once(struct ks_evaluator *ev, struct ks_runner *r, int is_baseline,
			   double **s, int *cnt, struct ks_block_times *bt, int *untrue,
			   struct ks_buf *why, struct ks_error *e)
{
	const struct ks_eval_opts *o = &ev->o;
	const char *reply;
	double max_s = o->min_time_s * 10 > 2 ? o->min_time_s * 10 : 2;
	int yard = is_baseline && o->yard_reps > 0;
	int warmup = yard ? (o->warmup < 1 ? o->warmup : 1) : o->warmup;
	int min_reps = yard ? o->yard_reps : o->min_reps;
	double q0 = waits_now(), t0 = ks_clock_s();
	int rc = ks_runner_cmd(r, o->timeout_s + max_s, &reply, e, "time %d %d %llu %d %llu %u %d",
			       warmup, min_reps, (unsigned long long)(o->min_time_s * 1e9),
			       o->max_reps, (unsigned long long)(max_s * 1e9),
			       (unsigned)(o->rep_ci_rel * 1e6 + 0.5), o->rep_ci_min_reps);
	double wall = ks_clock_s() - t0, waited = waited_since(q0);
	if (rc)
		return rc;
	if (parse_times(reply, s, cnt, bt))
		return ks_error_set(e, KS_EPROTO, "malformed timing reply");
	double sum = 0;
	for (int i = 0; i < *cnt; i++)
		sum += (*s)[i] * 1e-6;
	*untrue = ks_clock_untrue(bt, sum, *cnt, wall, waited, why);
	return 0;
}

/* One timing block on runner r; the wall clock of this process cross-checks the runner's
 * own numbers, which a kernel running inside the runner could tamper with.  A block the
 * cross-check refuses is timed again, up to KS_CLOCK_TRIES in all: a loaded machine can
 * delay one reply past the slack (an honest attention kernel at load 25 on 2 cores, once in
 * a final phase), a slowed clock fails every time.  Only a refused last try is SUSPICIOUS.
 * The kept try's preemptions are added to *preempted (NULL: not kept), which stays -1 once
 * a block could not count them. */
static int time_block(struct ks_evaluator *ev, struct ks_runner *r, int is_baseline,
		      double **samples, int *n, long long *preempted, struct ks_buf *log,
		      int *suspicious, struct ks_error *e)
{
	struct ks_buf why = KS_BUF_INIT;
	struct ks_block_times bt = {.preempted = -1};
	double *s = NULL;
	int cnt = 0, untrue = 0, rc = 0;
	for (int try = 1; try <= KS_CLOCK_TRIES && !rc; try++) {
		free(s);
		s = NULL;
		rc = time_block_once(ev, r, is_baseline, &s, &cnt, &bt, &untrue, &why, e);
		if (!rc && !untrue)
			break;
	}
	if (!rc && untrue)
		*suspicious = 1;
	if (why.len)
		ks_buf_addf(log, "%s%s%s", log->len ? "\n" : "", ks_buf_str(&why),
			    untrue ? "" : "\n(the block was timed again and the cross-check "
					  "passed: one delayed reply, not a slowed clock)");
	ks_buf_release(&why);
	if (!rc && ks_eval_timing.adjust)
		ks_eval_timing.adjust(ks_eval_timing.ctx, is_baseline, s, cnt);
	if (!rc && append(samples, n, s, cnt))
		rc = ks_error_set(e, KS_ENOMEM, "out of memory");
	if (!rc && preempted && *preempted >= 0)
		*preempted = bt.preempted < 0 ? -1 : *preempted + bt.preempted;
	free(s);
	return rc;
}

static void kernel_failed(struct ks_runner *r, struct ks_wl_result *res, struct ks_buf *log,
			  const char *phase)
{
	struct ks_buf why = KS_BUF_INIT;
	res->status = ks_runner_fate(r, &why);
	ks_buf_addf(log, "%s%s: %s", log->len ? "\n" : "", phase, ks_buf_str(&why));
	if (res->status == KS_STATUS_RUNTIME_ERROR && strstr(ks_buf_str(&why), "signal 11"))
		ks_buf_adds(log, "\nhint: inputs are read-only; a write to an input or past the "
				 "end of an output faults");
	ks_buf_release(&why);
}

/* the dtype the arithmetic runs in: the first floating-point input's */
static enum ks_dtype compute_dtype(const struct ks_task *t)
{
	for (int j = 0; j < t->ntensors; j++)
		if (!t->tensors[j].is_output && t->tensors[j].dtype != KS_DT_I32 &&
		    t->tensors[j].dtype != KS_DT_I64)
			return t->tensors[j].dtype;
	return KS_DT_F32;
}

const char *ks_eval_phase_name(enum ks_eval_phase p)
{
	static const char *const names[KS_PHASE_COUNT] = {"reference", "start",   "inputs",
							  "check",     "compare", "timing"};
	return p >= 0 && p < KS_PHASE_COUNT ? names[p] : "?";
}

const char *ks_eval_part_name(enum ks_eval_part p)
{
	static const char *const names[KS_PART_COUNT] = {
		"generate", "upload", "call",       "download",     "checksum", "exec",
		"sandbox",  "load",   "init",       "alloc_host",   "alloc_device", "reset"};
	return p >= 0 && p < KS_PART_COUNT ? names[p] : "?";
}

/* a fill reply "ok GEN UP SUM [CACHED]" (ns, bytes) into res's parts; the fill's seconds (0
 * from a runner that does not say) */
static double fill_parts(const char *reply, struct ks_wl_result *res)
{
	unsigned long long gen = 0, up = 0, sum = 0, cached = 0;
	int n = sscanf(reply, "ok %llu %llu %llu %llu", &gen, &up, &sum, &cached);
	if (n < 3)
		return 0;
	if (n == 4)
		res->inputs_cached_bytes += (double)cached;
	res->part_s[KS_PART_GENERATE] += gen * 1e-9;
	res->part_s[KS_PART_UPLOAD] += up * 1e-9;
	res->part_s[KS_PART_CHECKSUM] += sum * 1e-9;
	return (gen + up + sum) * 1e-9;
}

/* a call reply "done NS INTACT POISON CALL DOWN SUM" (ns) into res's parts */
static void call_parts(const char *reply, struct ks_wl_result *res)
{
	unsigned long long poison = 0, call = 0, down = 0, sum = 0;
	if (sscanf(reply, "done %*u %*d %llu %llu %llu %llu", &poison, &call, &down, &sum) != 4)
		return;
	res->part_s[KS_PART_UPLOAD] += poison * 1e-9;
	res->part_s[KS_PART_CALL] += call * 1e-9;
	res->part_s[KS_PART_DOWNLOAD] += down * 1e-9;
	res->part_s[KS_PART_CHECKSUM] += sum * 1e-9;
}

/* charge the time since *mark to phase p */
static void lap(struct ks_wl_result *res, enum ks_eval_phase p, double *mark)
{
	double now = ks_clock_s();
	res->phase_s[p] += now - *mark;
	*mark = now;
}

/* A yardstick: a trusted kernel timed in the same session as the candidate, in blocks
 * interleaved with the candidate's while the candidate's runner is stopped: the task's
 * baseline, and its vendor library where it has one (ev->yard[]).  The one place that
 * decides what is timed interleaved: yardstick_start. */
struct yardstick {
	enum ks_yard y;
	struct ks_yard_wl *yw; /* its state on this workload, samples kept for the run */
	int measure;           /* timed in this evaluation */
	struct ks_runner *r;
	double *samples;
	int n;
};

static int fill_sets(struct ks_evaluator *ev, struct ks_wl_state *ws, struct ks_runner *r,
		     int nsets, struct ks_wl_result *res, struct ks_error *e);
static double fill_parts(const char *reply, struct ks_wl_result *res);
static void lap(struct ks_wl_result *res, enum ks_eval_phase p, double *mark);

/* Whether y is timed in this evaluation: when it is on (compiled, wanted) and trusted on
 * this workload, unless the options reuse it (the search phase: once per run and workload,
 * by the first candidate that reaches timing) and the workload has its samples already.
 * When it is, its runner is started and filled with the candidate's input sets.  The
 * library is checked against the reference on its first run on a workload (seed 0) and
 * not trusted when it is wrong, nor when it cannot start (a shared library missing at run
 * time): a yardstick less, with the log saying why, not a failed evaluation.  The baseline
 * is the task's own, trusted code. */
static int yardstick_start(struct ks_evaluator *ev, struct ks_wl_state *ws, int nsets,
			   struct yardstick *y, struct ks_buf *log, struct ks_error *e)
{
	const struct ks_eval_opts *o = &ev->o;
	struct ks_yard_wl *yw = y->yw;
	const char *label = ev->yard[y->y].label, *reply;
	struct ks_error ke = {0};
	y->measure = ev->yard[y->y].on && !yw->wrong && !(o->reuse_baseline && yw->n);
	if (!y->measure)
		return 0;
	if (ks_eval_open_runner(ev, ws, ev->yard[y->y].art.path, nsets, 0, o->memory_limit,
				&y->r, &ke)) {
		ks_runner_free(y->r);
		y->r = NULL;
		y->measure = 0;
		if (y->y == KS_YARD_BASELINE)
			return ks_error_set(e, KS_EIO, "the baseline failed to start: %s", ke.msg);
		yw->wrong = 1;
		ks_buf_addf(log, "%s%s (library.%s) did not start, not timed: %s",
			    log->len ? "\n" : "", label, ev->be->ext, ke.msg);
		ks_warn("library '%s' did not start, not timed: %s", label, ke.msg);
		return 0;
	}
	if (y->y == KS_YARD_LIBRARY && !yw->checked) {
		struct ks_wl_result scratch;
		memset(&scratch, 0, sizeof(scratch));
		struct ks_buf why = KS_BUF_INIT;
		yw->checked = 1;
		if (ks_runner_cmd(y->r, o->timeout_s, &reply, &ke, "fill 0 %llu", ev->seeds[0]) ||
		    ks_runner_cmd(y->r, o->timeout_s, &reply, &ke, "call 0"))
			ks_runner_fate(y->r, &why), yw->wrong = 1;
		else if (!compare_outputs(ev, ws, ks_eval_set_outputs(y->r, ws, 0), 0, "after the call",
					  &scratch, &why))
			yw->wrong = 1;
		if (yw->wrong) {
			ks_buf_addf(log, "%s%s (library.%s) is not trusted on this workload, not "
					 "timed: %s",
				    log->len ? "\n" : "", label, ev->be->ext, ks_buf_str(&why));
			ks_warn("library '%s' fails the reference check, not timed: %s", label,
				ks_buf_str(&why));
			ks_buf_release(&why);
			ks_runner_free(y->r);
			y->r = NULL;
			y->measure = 0;
			return 0;
		}
		ks_buf_release(&why);
	}
	int rc = fill_sets(ev, ws, y->r, nsets, NULL, &ke);
	if (rc)
		rc = ks_error_set(e, KS_EIO, "the %s failed to fill its inputs: %s",
				  y->y == KS_YARD_BASELINE ? "baseline" : label, ke.msg);
	return rc;
}

static int time_block(struct ks_evaluator *ev, struct ks_runner *r, int is_baseline,
		      double **samples, int *n, long long *preempted, struct ks_buf *log,
		      int *suspicious, struct ks_error *e);

/* one block of every yardstick timed here, with the candidate's process stopped: nothing
 * it left running (a spinning thread, say) can slow them down.  1: the candidate could not
 * be stopped (it died: its fate says why). */
static int yardstick_block(struct ks_evaluator *ev, struct yardstick *ys, int n,
			   struct ks_runner *cand, struct ks_buf *log, int *suspicious,
			   struct ks_error *e)
{
	int any = 0, rc = 0;
	for (int i = 0; i < n; i++)
		any |= ys[i].measure;
	if (!any)
		return 0;
	if (ks_runner_pause(cand))
		return 1;
	for (int i = 0; i < n && !rc; i++)
		if (ys[i].measure &&
		    (rc = time_block(ev, ys[i].r, 1, &ys[i].samples, &ys[i].n, NULL, log, suspicious,
				     e)))
			ks_error_wrap(e, "timing the %s",
				      ys[i].y == KS_YARD_BASELINE ? "baseline" : ev->yard[ys[i].y].label);
	ks_runner_resume(cand);
	return rc;
}

/* keep what was measured for the run (the last measurement's samples), stop the runner */
static void yardstick_finish(struct yardstick *y)
{
	if (y->measure && y->n) {
		free(y->yw->samples);
		y->yw->samples = y->samples;
		y->yw->n = y->n;
		y->samples = NULL;
	}
	free(y->samples);
	y->samples = NULL;
	y->n = 0;
	y->measure = 0; /* finished: a second call only makes sure nothing is left */
	ks_runner_free(y->r);
	y->r = NULL;
}

/* a yardstick's median into *us and candidate median / it into *speedup, its samples
 * copied to the result (what the final re-measurement pools) */
static void yard_result(const struct ks_yard_wl *yw, double cand_us, double *us,
			double *speedup, double **samples, int *n)
{
	if (!yw->n)
		return;
	struct ks_stats st;
	*samples = malloc(sizeof(double) * (size_t)yw->n);
	if (*samples) {
		memcpy(*samples, yw->samples, sizeof(double) * (size_t)yw->n);
		*n = yw->n;
	}
	ks_stats_compute(yw->samples, (size_t)yw->n, &st);
	*us = st.median;
	*speedup = cand_us > 0 ? st.median / cand_us : 0;
}

/* Fill set s with seed's inputs and call the kernel on it: two commands, one round trip.
 * The time since *mark is correctness (check), less what the runner says its fill took:
 * that is input generation and goes to inputs.  *call_us: the call's time as the runner
 * measured it. */
static int fill_call(struct ks_runner *r, double timeout_s, int s, unsigned long long seed,
		     const char **reply, struct ks_wl_result *res, double *mark, double *call_us,
		     struct ks_error *e)
{
	double fill_s = 0;
	unsigned long long ns = 0;
	int rc = ks_runner_send(r, e, "fill %d %llu", s, seed);
	if (!rc && !(rc = ks_runner_send(r, e, "call %d", s)) &&
	    !(rc = ks_runner_wait(r, timeout_s, reply, e))) {
		fill_s = fill_parts(*reply, res);
		if (!(rc = ks_runner_wait(r, timeout_s, reply, e))) {
			call_parts(*reply, res);
			sscanf(*reply, "done %llu", &ns);
		}
	}
	*call_us = (double)ns * 1e-3;
	lap(res, KS_PHASE_CHECK, mark);
	if (fill_s > res->phase_s[KS_PHASE_CHECK])
		fill_s = res->phase_s[KS_PHASE_CHECK];
	res->phase_s[KS_PHASE_CHECK] -= fill_s;
	res->phase_s[KS_PHASE_INPUTS] += fill_s;
	return rc;
}

/* compare_outputs, with the time before it charged to check and its own to compare */
static int check_outputs(struct ks_evaluator *ev, struct ks_wl_state *ws,
			 const unsigned char *got, int seed_idx, const char *when,
			 struct ks_wl_result *res, struct ks_buf *log, double *mark)
{
	lap(res, KS_PHASE_CHECK, mark);
	int ok = compare_outputs(ev, ws, got, seed_idx, when, res, log);
	lap(res, KS_PHASE_COMPARE, mark);
	return ok;
}

/* the seed slot of timed set s: the rotation's own seeds, never a correctness call's */
static int timed_slot(const struct ks_wl_state *ws, int s)
{
	return KS_SEED_TIMED + s % ws->ntimed_seeds;
}

/* every rotating set, each with the inputs of its timed seed: one batch of commands; the
 * runner's fill times go to res's parts when res is not NULL (the candidate's) */
static int fill_sets(struct ks_evaluator *ev, struct ks_wl_state *ws, struct ks_runner *r,
		     int nsets, struct ks_wl_result *res, struct ks_error *e)
{
	const char *reply;
	int rc = 0, sent = 0;
	for (int s = 0; s < nsets && !rc; s++)
		if (!(rc = ks_runner_send(r, e, "fill %d %llu", s, ev->seeds[timed_slot(ws, s)])))
			sent++;
	for (int k = 0; k < sent && !rc; k++)
		if (!(rc = ks_runner_wait(r, ev->o.timeout_s, &reply, e)) && res)
			fill_parts(reply, res);
	return rc;
}

/* What one attempt at a workload carries between its phases. */
struct attempt {
	struct ks_evaluator *ev;
	struct ks_wl_state *ws;
	struct ks_runner *cand;
	struct ks_wl_result *res;
	struct ks_buf log;
	double mark;          /* the phase clock (lap) */
	double fresh_us[KS_MAX_SEEDS + 1 + KS_PROBE_SEEDS]; /* calls on inputs never shown
				 before (the first correctness call excepted: it also starts the
				 kernel up) */
	int nfresh;
	double seen_us[1 + KS_PROBE_SEEDS]; /* check_fresh's calls on inputs seen before */
	int nseen;
	double *cs;           /* the candidate's timed samples (us) */
	int ncs, nblocks, reps_max, suspicious;
	long long preempted;  /* its timed calls' involuntary context switches, -1: not counted */
};

/* Correctness right after each call, on fresh buffers per seed.  0, or 1 when the kernel
 * failed (res->status says how). */
static int check_seeds(struct attempt *at)
{
	struct ks_evaluator *ev = at->ev;
	const char *reply;
	struct ks_error ke = {0};
	for (int s = 0; s < ev->o.nseeds; s++) {
		double us;
		if (fill_call(at->cand, ev->o.timeout_s, 0, ev->seeds[s], &reply, at->res, &at->mark,
			      &us, &ke)) {
			kernel_failed(at->cand, at->res, &at->log, "call");
			return 1;
		}
		if (s > 0)
			at->fresh_us[at->nfresh++] = us;
		int intact = 1;
		sscanf(reply, "done %*u %d", &intact);
		if (!check_outputs(ev, at->ws, ks_eval_set_outputs(at->cand, at->ws, 0), s,
				   "after the call", at->res, &at->log, &at->mark)) {
			at->res->status = KS_STATUS_INCORRECT_NUMERICAL;
			return 1;
		}
		if (!intact) {
			ks_buf_adds(&at->log, "the kernel modified its inputs");
			at->res->status = KS_STATUS_INCORRECT_NUMERICAL;
			return 1;
		}
	}
	return 0;
}

/* The count floor first, then more blocks while the median is not known well enough; each
 * block of the yardsticks (candidate stopped), then the candidate's.  rc for infrastructure
 * faults; a kernel's failure sets res->status. */
static int time_blocks(struct attempt *at, struct yardstick *yard, struct ks_error *e)
{
	const struct ks_eval_opts *o = &at->ev->o;
	struct ks_error ke = {0};
	for (int b = 0; b < o->max_blocks; b++) {
		if (b >= o->blocks &&
		    (o->ci_rel <= 0 || ks_stats_enough(at->cs, (size_t)at->ncs, o->ci_rel, 0, 0)))
			break;
		at->nblocks++;
		int before = at->ncs;
		int rc = yardstick_block(at->ev, yard, KS_YARD_COUNT, at->cand, &at->log,
					 &at->suspicious, e);
		if (rc == 1)
			kernel_failed(at->cand, at->res, &at->log, "before timing the baseline");
		if (rc)
			return rc == 1 ? 0 : rc;
		if (time_block(at->ev, at->cand, 0, &at->cs, &at->ncs, &at->preempted, &at->log,
			       &at->suspicious, &ke)) {
			if (ke.code == KS_ETIMEOUT || at->cand->reaped || at->cand->timed_out) {
				kernel_failed(at->cand, at->res, &at->log, "timing");
				return 0;
			}
			return ks_error_set(e, ke.code, "timing: %s", ke.msg);
		}
		if (at->ncs - before > at->reps_max)
			at->reps_max = at->ncs - before;
	}
	return 0;
}

/* Which timed sets to compare after timing, into sets[]: every set the calls wrote (the
 * first `written` of the rotation) while their outputs add up to at most KS_CHECK_BYTES,
 * else a random subset that does (at least KS_CHECK_MIN_SETS), drawn now, after the timing,
 * from the system's random numbers: the kernel cannot know which.  Returns the count. */
static int pick_sets(const struct ks_wl_state *ws, int written, int *sets)
{
	int n = written;
	size_t per = ws->out_bytes ? ws->out_bytes : 1;
	if ((size_t)written * per > KS_CHECK_BYTES) {
		n = (int)(KS_CHECK_BYTES / per);
		n = n < KS_CHECK_MIN_SETS ? KS_CHECK_MIN_SETS : n;
		n = n > written ? written : n;
	}
	for (int s = 0; s < written; s++)
		sets[s] = s;
	uint64_t key = 0;
	if (ks_os_random(&key, sizeof(key)))
		key = ks_clock_ns();
	for (int i = 0; i < n; i++) { /* a partial Fisher-Yates shuffle */
		int j = i + (int)(ks_rng_u64(key, 0, (uint64_t)i) % (uint64_t)(written - i));
		int t = sets[i];
		sets[i] = sets[j];
		sets[j] = t;
	}
	return n;
}

/* Correctness of the timed calls' outputs (pick_sets').  Where the kernel writes the shared
 * output file itself, the runner is stopped first: no thread the kernel left behind can
 * finish (or fix) an output after the block ended.  A device's outputs are downloaded by
 * the runner (snap), which waits for the device. */
static void check_timed_sets(struct attempt *at)
{
	struct ks_evaluator *ev = at->ev;
	struct ks_wl_state *ws = at->ws;
	int written = ev->o.warmup > at->reps_max ? ev->o.warmup : at->reps_max;
	written = written > ws->nsets ? ws->nsets : written;
	int sets[KS_RUNNER_MAX_SETS], n = pick_sets(ws, written, sets);
	const char *reply;
	struct ks_error ke = {0};
	int stopped = at->cand->direct && ks_runner_pause(at->cand) == 0;
	if (at->cand->direct && !stopped) {
		kernel_failed(at->cand, at->res, &at->log, "after timing");
		return;
	}
	for (int k = 0; k < n && at->res->status == KS_STATUS_PASSED; k++) {
		if (!stopped && ks_runner_cmd(at->cand, ev->o.timeout_s, &reply, &ke, "snap %d", sets[k])) {
			kernel_failed(at->cand, at->res, &at->log, "after timing");
			break;
		}
		if (!check_outputs(ev, ws, ks_eval_set_outputs(at->cand, ws, sets[k]),
				   timed_slot(ws, sets[k]), "after the timed calls", at->res, &at->log,
				   &at->mark))
			at->res->status = KS_STATUS_INCORRECT_NUMERICAL;
	}
	if (stopped)
		ks_runner_resume(at->cand);
}

/* One probe call on set 0 after a fill with seed slot `slot`'s seed + shift, compared with
 * its reference when `when` is not NULL (shift 0 only); its time into *us.  0, or 1 when the
 * kernel failed. */
static int probe_call(struct attempt *at, int slot, unsigned long long shift, const char *when,
		      double *us)
{
	const char *reply;
	struct ks_error ke = {0};
	if (fill_call(at->cand, at->ev->o.timeout_s, 0, at->ev->seeds[slot] + shift, &reply, at->res,
		      &at->mark, us, &ke)) {
		kernel_failed(at->cand, at->res, &at->log, "final call");
		return 1;
	}
	if (when && !check_outputs(at->ev, at->ws, ks_eval_set_outputs(at->cand, at->ws, 0), slot,
				   when, at->res, &at->log, &at->mark)) {
		at->res->status = KS_STATUS_INCORRECT_NUMERICAL;
		return 1;
	}
	return 0;
}

/* After timing, calls in pairs, each after a fill of set 0: one on inputs the kernel was
 * never shown (the first compared with its reference: a buffer it has used, refilled, so a
 * kernel that caches results by pointer fails here; the others timed only, needing no
 * reference), one on inputs it had in the timed calls (timed only: the timed sets' outputs
 * were compared).  Both kinds find the
 * kernel as idle as the other (its threads asleep after the fill), so an honest kernel
 * takes as long on either however busy the machine; their times feed the fresh-inputs
 * check. */
static void check_fresh(struct attempt *at, int try)
{
	/* a try after the first: inputs no try has shown, all timed only */
	unsigned long long shift = (unsigned long long)(try - 1) * KS_SEED_SLOTS;
	for (int k = 0; k <= KS_PROBE_SEEDS && at->res->status == KS_STATUS_PASSED; k++) {
		double us;
		if (probe_call(at, k ? KS_SEED_PROBE + k - 1 : KS_SEED_FRESH, shift,
			       k || try > 1 ? NULL : "on a reused buffer with new inputs", &us))
			return;
		at->fresh_us[at->nfresh++] = us;
		if (probe_call(at, timed_slot(at->ws, 0), 0, NULL, &us))
			return;
		at->seen_us[at->nseen++] = us;
	}
}

/* the smallest and the largest of n call times (INFINITY and -INFINITY when n is 0) */
static double least(const double *v, int n)
{
	double m = INFINITY;
	for (int i = 0; i < n; i++)
		m = fmin(m, v[i]);
	return m;
}

static double most(const double *v, int n)
{
	double m = -INFINITY;
	for (int i = 0; i < n; i++)
		m = fmax(m, v[i]);
	return m;
}

/* 1 when even the fastest call on inputs the kernel had never been shown (the correctness
 * calls after the first, check_fresh's) took far longer than the slowest of check_fresh's
 * calls on inputs it had seen: a call on seen inputs was answered from what an earlier call
 * left (a cache of results, outputs left in place, work handed to a thread), not computed,
 * and so were the timed calls, which are all on seen inputs.  The fastest of one kind
 * against the slowest of the other, each call after a fill: a busy machine that slows some
 * calls of either kind changes nothing. */
static int fresh_inputs_slower(const struct attempt *at, struct ks_buf *log)
{
	if (at->nfresh == 0 || at->nseen == 0)
		return 0;
	double fastest = least(at->fresh_us, at->nfresh), slowest = most(at->seen_us, at->nseen);
	ks_debug("fresh inputs: fastest of %d calls %.1f us, on seen inputs the slowest of %d "
		 "%.1f us (%.2fx)",
		 at->nfresh, fastest, at->nseen, slowest, slowest > 0 ? fastest / slowest : 0);
	if (fastest <= KS_FRESH_FACTOR * slowest + KS_FRESH_SLACK_US)
		return 0;
	ks_buf_addf(log, "%scalls on inputs the kernel had not seen took %.1f us at the fastest "
			 "(%d calls), calls on inputs it had seen %.1f us at the slowest (%d calls): "
			 "the timed calls reused what earlier calls left",
		    log->len ? "\n" : "", fastest, at->nfresh, slowest, at->nseen);
	return 1;
}

/* check_fresh and the fresh-inputs check, both again when it fires, KS_FRESH_TRIES in all,
 * on the new probes alone: a loaded machine can delay a few calls by scheduler ticks (an
 * OpenMP kernel of 0.4 ms calls, 2 threads beside 3-4 busy processes on 2 cores: calls of
 * 8 to 12 ms), a kernel answering from what earlier calls left is slower on new inputs
 * every time.  Only a last try that fires makes the timing SUSPICIOUS. */
static void fresh_check(struct attempt *at)
{
	struct ks_buf why = KS_BUF_INIT;
	int fired = 0;
	for (int try = 1; try <= KS_FRESH_TRIES && at->res->status == KS_STATUS_PASSED; try++) {
		if (try > 1)
			at->nfresh = at->nseen = 0;
		ks_buf_reset(&why);
		check_fresh(at, try);
		fired = at->res->status == KS_STATUS_PASSED && fresh_inputs_slower(at, &why);
		if (!fired)
			break;
		ks_debug("fresh-inputs check fired, try %d of %d", try, KS_FRESH_TRIES);
	}
	if (fired) {
		ks_buf_addf(&at->log, "%s%s (%d tries)", at->log.len ? "\n" : "", ks_buf_str(&why),
			    KS_FRESH_TRIES);
		at->suspicious = 1;
	}
	ks_buf_release(&why);
}

/* A note in the log when the timed calls took far longer than the kernel's fastest single
 * call around them (the correctness calls, the fresh-inputs probes): the machine's load, not
 * the kernel, set the figure.  Measured: an OpenMP kernel of 0.4 ms single calls, 2
 * threads beside 3-4 busy processes on 2 cores, timed at 8 to 12 ms a call with a spread of
 * 0.1% (each barrier waited for a preempted thread's next scheduler slice).  The status
 * stands: the kernel did nothing wrong, the figure is marked for the reader and the model.
 * ks_preempted_note counts what this guesses at, but does not make it redundant: a thread
 * that slept at a barrier and waited for a CPU after its wake-up was never preempted (its
 * switch out was voluntary), and macOS counts no preemptions; this ratio sees both. */
static void disturbed_note(const struct attempt *at, double median, struct ks_buf *log)
{
	double fastest = fmin(least(at->fresh_us, at->nfresh), least(at->seen_us, at->nseen));
	if (!isfinite(fastest) || !(median > KS_DISTURBED_FACTOR * fastest + KS_DISTURBED_SLACK_US))
		return;
	ks_buf_addf(log, "%stimed calls took %.1f us at the median, %.0fx the fastest single call "
			 "(%.1f us): the machine's load set this figure, not the kernel (its calls "
			 "waited for a CPU); time it again on a quiet machine or with fewer --threads",
		    log->len ? "\n" : "", median, median / fastest, fastest);
}

int ks_preempted_note(long long preempted, int calls, struct ks_buf *log)
{
	/* one per call on average: a preempted thread of a loaded machine waits a scheduler
	 * slice (milliseconds), so the median call then most likely held such a wait; fewer
	 * leave most calls, and the median, untouched (a lone slow call is the spread's) */
	if (preempted < 0 || calls <= 0 || (double)preempted < KS_PREEMPTED_PER_CALL * calls)
		return 0;
	ks_buf_addf(log, "%sthe kernel's threads were preempted %lld times over %d timed calls "
			 "(involuntary context switches): the machine's load set part of this "
			 "figure; time it again on a quiet machine or with fewer --threads",
		    log->len ? "\n" : "", preempted, calls);
	return 1;
}

/* The timed samples into res: median, rates, the yardsticks' medians and speedups, the
 * roofline; the floor and the fresh-inputs check may make the timing SUSPICIOUS. */
static void timing_result(struct attempt *at)
{
	struct ks_evaluator *ev = at->ev;
	const struct ks_eval_opts *o = &ev->o;
	struct ks_wl_state *ws = at->ws;
	struct ks_wl_result *res = at->res;
	struct ks_stats cst;
	ks_stats_compute(at->cs, (size_t)at->ncs, &cst);
	res->median_us = cst.median;
	res->spread_pct = cst.spread_pct;
	res->samples_us = at->cs;
	res->nsamples = at->ncs;
	at->cs = NULL;
	res->blocks = at->nblocks;
	res->preempted = at->preempted;
	disturbed_note(at, cst.median, &at->log);
	ks_preempted_note(at->preempted, res->nsamples, &at->log);
	if (cst.median > 0) {
		res->gflops = ws->flops / (cst.median * 1e3);
		res->gbps = ws->bytes / (cst.median * 1e3);
	}
	yard_result(&ws->yard[KS_YARD_BASELINE], cst.median, &res->baseline_us, &res->speedup,
		    &res->baseline_samples_us, &res->nbaseline_samples);
	yard_result(&ws->yard[KS_YARD_LIBRARY], cst.median, &res->library_us,
		    &res->library_speedup, &res->library_samples_us, &res->nlibrary_samples);
	/* roofline: the fastest time the hardware allows */
	double floor_us = 0;
	if (o->peak_gflops > 0 && ws->flops > 0)
		floor_us = ws->flops / (o->peak_gflops * 1e3);
	if (o->peak_gbps > 0 && ws->bytes > 0 && ws->bytes / (o->peak_gbps * 1e3) > floor_us)
		floor_us = ws->bytes / (o->peak_gbps * 1e3);
	/* "% of roofline": achieved over attainable at this arithmetic intensity, in the
	 * task's dtype; SUSPICIOUS keeps the physical floor above */
	double att = ks_roofline_attainable(o, compute_dtype(ev->task), ws->flops, ws->bytes);
	double bw = o->roof_gbps > 0 ? o->roof_gbps : o->peak_gbps;
	if (cst.median > 0 && att > 0 && ws->flops > 0)
		res->roofline_pct = res->gflops / att * 100;
	else if (cst.median > 0 && bw > 0 && ws->bytes > 0)
		res->roofline_pct = res->gbps / bw * 100;
	if (floor_us > 0 && cst.median > 0 && cst.median * o->suspicious_factor < floor_us) {
		ks_buf_addf(&at->log, "%sfaster than the hardware allows: %.2f us < roofline floor "
				      "%.2f us",
			    at->log.len ? "\n" : "", cst.median, floor_us);
		at->suspicious = 1;
	}
	if (at->suspicious && res->status == KS_STATUS_PASSED)
		res->status = KS_STATUS_SUSPICIOUS;
}

/* The timed part of a workload: the yardsticks started, the rotating sets filled, the
 * blocks timed, then correctness again (the timed calls' outputs, then fresh inputs in a
 * reused buffer) and the result.  rc for infrastructure faults. */
static int timed_phase(struct attempt *at, struct yardstick *yard, struct ks_error *e)
{
	struct ks_evaluator *ev = at->ev;
	struct ks_error ke = {0};
	int rc = 0;
	lap(at->res, KS_PHASE_CHECK, &at->mark);
	if (fill_sets(ev, at->ws, at->cand, at->ws->nsets, at->res, &ke)) {
		kernel_failed(at->cand, at->res, &at->log, "fill");
		return 0;
	}
	for (int y = 0; y < KS_YARD_COUNT; y++)
		if ((rc = yardstick_start(ev, at->ws, at->ws->nsets, &yard[y], &at->log, e)))
			return rc;
	lap(at->res, KS_PHASE_INPUTS, &at->mark);
	if ((rc = time_blocks(at, yard, e)) || at->res->status != KS_STATUS_PASSED)
		return rc;
	lap(at->res, KS_PHASE_TIMING, &at->mark);
	check_timed_sets(at);
	fresh_check(at);
	for (int y = 0; y < KS_YARD_COUNT; y++)
		yardstick_finish(&yard[y]);
	timing_result(at);
	return 0;
}

/* ks_eval_workload's one attempt; *outside set when the candidate's runner, or a
 * yardstick's that failed the evaluation, was killed by someone else (ks_runner_fate's
 * killed_outside) */
static int workload_once(struct ks_evaluator *ev, struct ks_wl_state *ws, const char *lib,
			 struct ks_runner **candp, struct ks_wl_result *res, int *outside,
			 struct ks_error *e)
{
	struct attempt at = {.ev = ev, .ws = ws, .res = res, .log = KS_BUF_INIT,
			     .mark = ks_clock_s()};
	struct yardstick yard[KS_YARD_COUNT];
	for (int y = 0; y < KS_YARD_COUNT; y++)
		yard[y] = (struct yardstick){.y = (enum ks_yard)y, .yw = &ws->yard[y]};
	struct ks_error ke = {0};
	int rc = 0;
	/* the one place before any fill of this workload (reference, candidate, yardsticks) */
	ks_eval_inputs_ensure(ev, ws);
	lap(res, KS_PHASE_INPUTS, &at.mark);
	int slots[KS_SEED_SLOTS], nslots = ks_eval_seed_slots(ev, ws, 0, slots);
	for (int k = 0; k < nslots; k++)
		if ((rc = ks_eval_reference(ev, ws, slots[k], e)))
			goto out;
	lap(res, KS_PHASE_REFERENCE, &at.mark);
	int failed_setup = ks_eval_candidate_runner(ev, ws, lib, ws->is_check ? 1 : ws->nsets,
						    candp, res->part_s, &ke);
	at.cand = *candp;
	*candp = NULL; /* handed back below when this workload passes */
	if (failed_setup) {
		if (!at.cand) {
			rc = ks_error_set(e, ke.code, "%s", ke.msg);
			goto out;
		}
		/* the kernel's constructors run at load: their failure is the kernel's */
		kernel_failed(at.cand, res, &at.log, "load");
		ks_buf_addf(&at.log, " (%s)", ke.msg);
		goto out;
	}
	lap(res, KS_PHASE_START, &at.mark);
	if (!check_seeds(&at) && !ws->is_check)
		rc = timed_phase(&at, yard, e);
out:
	free(at.cs);
	*outside = at.cand && at.cand->killed_outside;
	/* a yardstick's runner killed the same way fails the evaluation (rc): as worth a
	 * second try, or a search loses its final re-measurement to someone's kill -9 */
	for (int y = 0; y < KS_YARD_COUNT && rc; y++)
		if (yard[y].r && yard[y].r->reaped) {
			struct ks_buf why = KS_BUF_INIT;
			ks_runner_fate(yard[y].r, &why);
			ks_buf_release(&why);
			*outside |= yard[y].r->killed_outside;
		}
	if (at.cand && rc == 0 && res->status == KS_STATUS_PASSED)
		*candp = at.cand; /* the next workload's, reset */
	else if (at.cand)
		ks_runner_free(at.cand);
	/* what is left (correctness after timing, a failure's teardown) is checking */
	lap(res, KS_PHASE_CHECK, &at.mark);
	for (int y = 0; y < KS_YARD_COUNT; y++)
		yardstick_finish(&yard[y]); /* (a second time on success: nothing left) */
	res->log = ks_buf_detach(&at.log, NULL);
	return rc;
}

/* res as before an attempt: what identifies the workload and the time spent stay */
static void wl_result_redo(struct ks_wl_result *res)
{
	struct ks_wl_result keep = *res;
	free(res->samples_us);
	free(res->baseline_samples_us);
	free(res->library_samples_us);
	free(res->log);
	memset(res, 0, sizeof(*res));
	res->index = keep.index;
	res->is_check = keep.is_check;
	res->label = keep.label;
	res->params_json = keep.params_json;
	memcpy(res->phase_s, keep.phase_s, sizeof(res->phase_s));
	memcpy(res->part_s, keep.part_s, sizeof(res->part_s));
	res->inputs_cached_bytes = keep.inputs_cached_bytes;
	res->status = KS_STATUS_PASSED;
}

int ks_eval_workload(struct ks_evaluator *ev, struct ks_wl_state *ws, const char *lib,
		     struct ks_runner **candp, struct ks_wl_result *res, struct ks_error *e)
{
	int outside = 0;
	int rc = workload_once(ev, ws, lib, candp, res, &outside, e);
	if (!outside)
		return rc;
	/* a SIGKILL that was not ours, not the CPU backstop's and not out of memory: an
	 * operator or a watchdog, most likely.  Once more in fresh runners before the kernel
	 * is blamed (or the evaluation fails); a second such death (a kernel that kills
	 * itself) keeps its status. */
	char *first = res->log, first_error[sizeof(e->msg)];
	snprintf(first_error, sizeof(first_error), "%s", rc && e ? e->msg : "");
	res->log = NULL;
	ks_warn("a runner of workload '%s' was killed from outside; evaluating it again in a "
		"fresh runner",
		res->label ? res->label : "?");
	wl_result_redo(res);
	rc = workload_once(ev, ws, lib, candp, res, &outside, e);
	struct ks_buf log = KS_BUF_INIT;
	ks_buf_addf(&log, "%s\nevaluated again in a fresh runner%s%s",
		    first && first[0] ? first : first_error,
		    res->log && res->log[0] ? ":\n" : "", res->log ? res->log : "");
	free(first);
	free(res->log);
	res->log = ks_buf_detach(&log, NULL);
	return rc;
}
