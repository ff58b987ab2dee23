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

struct ks_eval_timing_seam ks_eval_timing = {.version = 1};

/* compare the runner's shared outputs with the reference of seed_idx; 1 when they match */
static int compare_outputs(struct ks_evaluator *ev, struct ks_wl_state *ws,
			   const unsigned char *got, int seed_idx, const char *when,
			   struct ks_wl_result *res, struct ks_buf *log)
{
	const struct ks_task *t = ev->task;
	size_t off = 0;
	int ok = 1;
	int k = seed_idx < 16 ? seed_idx : 15;
	if (res->nseeds <= k)
		res->nseeds = k + 1;
	res->seeds[k] = ev->seeds[seed_idx];
	for (int j = 0; j < t->ntensors; j++) {
		if (!t->tensors[j].is_output)
			continue;
		size_t numel;
		int64_t dims[KS_MAX_DIMS];
		ks_workload_shape(t, ws->wl, j, dims, &numel, NULL);
		struct ks_compare c;
		ks_compare_tensors(t->tensors[j].dtype, got + off, ws->ref[seed_idx] + off, numel,
				   t->tensors[j].name, t->atol, t->rtol, t->l2, &c);
		if (c.max_abs_err > res->max_abs_err || isnan(c.max_abs_err))
			res->max_abs_err = c.max_abs_err;
		if (c.max_rel_err > res->max_rel_err || isnan(c.max_rel_err))
			res->max_rel_err = c.max_rel_err;
		if (c.max_abs_err > res->seed_abs_err[k] || isnan(c.max_abs_err))
			res->seed_abs_err[k] = c.max_abs_err;
		if (c.max_rel_err > res->seed_rel_err[k] || isnan(c.max_rel_err))
			res->seed_rel_err[k] = c.max_rel_err;
		ks_compare_tol_fold(&c, &res->tol_elem, &res->tol_l2);
		if (!c.passed) {
			if (ok)
				ks_buf_addf(log, "%s (seed %d): %s; max abs err %.3g, rel L2 %.3g",
					    when, seed_idx, c.detail, c.max_abs_err, c.rel_l2);
			ok = 0;
		}
		off += numel * ks_dtype_size(t->tensors[j].dtype);
	}
	return ok;
}

/* parse "times n warm block t0 t1 ..." into samples (us) */
static int parse_times(const char *reply, double **out, int *n, double *warm_s, double *block_s)
{
	char *p;
	long cnt = strtol(reply + 6, &p, 10);
	if (cnt <= 0 || cnt > 20000)
		return -1;
	*warm_s = strtoull(p, &p, 10) * 1e-9;
	*block_s = strtoull(p, &p, 10) * 1e-9;
	double *s = malloc((size_t)cnt * sizeof(double));
	if (!s)
		return -1;
	for (long i = 0; i < cnt; i++)
		s[i] = strtoull(p, &p, 10) * 1e-3;
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

/* One timing block on runner r; the wall clock of this process cross-checks the runner's
 * own numbers, which a kernel running inside the runner could tamper with. */
static int time_block(struct ks_evaluator *ev, struct ks_runner *r, int is_baseline,
		      double **samples, int *n, struct ks_buf *log, int *suspicious,
		      struct ks_error *e)
{
	const struct ks_eval_opts *o = &ev->o;
	const char *reply;
	double max_s = o->min_time_s * 10 > 2 ? o->min_time_s * 10 : 2;
	int yard = is_baseline && o->yard_reps > 0;
	int warmup = yard ? (o->warmup < 1 ? o->warmup : 1) : o->warmup;
	int min_reps = yard ? o->yard_reps : o->min_reps;
	double t0 = ks_clock_s();
	int rc = ks_runner_cmd(r, o->timeout_s + max_s, &reply, e, "time %d %d %llu %d %llu %u %d",
			       warmup, min_reps, (unsigned long long)(o->min_time_s * 1e9),
			       o->max_reps, (unsigned long long)(max_s * 1e9),
			       (unsigned)(o->rep_ci_rel * 1e6 + 0.5), o->rep_ci_min_reps);
	double wall = ks_clock_s() - t0;
	if (rc)
		return rc;
	double *s = NULL, warm, block;
	int cnt;
	if (parse_times(reply, &s, &cnt, &warm, &block))
		return ks_error_set(e, KS_EPROTO, "malformed timing reply");
	double sum = 0;
	for (int i = 0; i < cnt; i++)
		sum += s[i] * 1e-6;
	/* the block cannot be longer than what we saw, nor the reps longer than the block;
	 * and reps that add up to far less than the block mean the clock was lied to */
	if (warm + block > wall + 0.002 || sum > block * 1.01 + 1e-4 ||
	    sum < 0.5 * block - cnt * 20e-6) {
		ks_buf_addf(log, "timing cross-check failed: reps sum to %.6f s, the runner's block "
				 "took %.6f s, this process saw %.6f s",
			    sum, block, wall);
		*suspicious = 1;
	}
	if (ks_eval_timing.adjust)
		ks_eval_timing.adjust(ks_eval_timing.ctx, is_baseline, s, cnt);
	rc = append(samples, n, s, cnt) ? ks_error_set(e, KS_ENOMEM, "out of memory") : 0;
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

static int fill_sets(struct ks_evaluator *ev, struct ks_runner *r, int nsets,
		     struct ks_wl_result *res, struct ks_error *e);
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
		else if (!compare_outputs(ev, ws, y->r->out, 0, "after the call", &scratch, &why))
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
	int rc = fill_sets(ev, y->r, nsets, NULL, &ke);
	if (rc)
		rc = ks_error_set(e, KS_EIO, "the %s failed to fill its inputs: %s",
				  y->y == KS_YARD_BASELINE ? "baseline" : label, ke.msg);
	return rc;
}

static int time_block(struct ks_evaluator *ev, struct ks_runner *r, int is_baseline,
		      double **samples, int *n, struct ks_buf *log, int *suspicious,
		      struct ks_error *e);

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
		    (rc = time_block(ev, ys[i].r, 1, &ys[i].samples, &ys[i].n, log, suspicious, e)))
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
 * that is input generation and goes to inputs. */
static int fill_call(struct ks_runner *r, double timeout_s, int s, unsigned long long seed,
		     const char **reply, struct ks_wl_result *res, double *mark,
		     struct ks_error *e)
{
	double fill_s = 0;
	int rc = ks_runner_send(r, e, "fill %d %llu", s, seed);
	if (!rc && !(rc = ks_runner_send(r, e, "call %d", s)) &&
	    !(rc = ks_runner_wait(r, timeout_s, reply, e))) {
		fill_s = fill_parts(*reply, res);
		if (!(rc = ks_runner_wait(r, timeout_s, reply, e)))
			call_parts(*reply, res);
	}
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

/* every rotating set, set s with the inputs of seed s mod nseeds: one batch of commands;
 * the runner's fill times go to res's parts when res is not NULL (the candidate's) */
static int fill_sets(struct ks_evaluator *ev, struct ks_runner *r, int nsets,
		     struct ks_wl_result *res, struct ks_error *e)
{
	const char *reply;
	int rc = 0, sent = 0;
	for (int s = 0; s < nsets && !rc; s++)
		if (!(rc = ks_runner_send(r, e, "fill %d %llu", s, ev->seeds[s % ev->o.nseeds])))
			sent++;
	for (int k = 0; k < sent && !rc; k++)
		if (!(rc = ks_runner_wait(r, ev->o.timeout_s, &reply, e)) && res)
			fill_parts(reply, res);
	return rc;
}

/* ks_eval_workload's one attempt; *outside set when the candidate's runner, or a
 * yardstick's that failed the evaluation, was killed by someone else (ks_runner_fate's
 * killed_outside) */
static int workload_once(struct ks_evaluator *ev, struct ks_wl_state *ws, const char *lib,
			 struct ks_runner **candp, struct ks_wl_result *res, int *outside,
			 struct ks_error *e)
{
	double mark = ks_clock_s();
	const struct ks_eval_opts *o = &ev->o;
	struct ks_buf log = KS_BUF_INIT;
	struct ks_runner *cand = NULL;
	struct yardstick yard[KS_YARD_COUNT];
	for (int y = 0; y < KS_YARD_COUNT; y++)
		yard[y] = (struct yardstick){.y = (enum ks_yard)y, .yw = &ws->yard[y]};
	struct ks_error ke = {0};
	const char *reply;
	int rc = 0, timed = !ws->is_check;
	/* the one place before any fill of this workload (reference, candidate, yardsticks) */
	ks_eval_inputs_ensure(ev, ws);
	lap(res, KS_PHASE_INPUTS, &mark);
	for (int s = 0; s < o->nseeds; s++)
		if ((rc = ks_eval_reference(ev, ws, s, e)))
			goto out;
	int nsets = timed ? ws->nsets : 1;
	lap(res, KS_PHASE_REFERENCE, &mark);
	int failed_setup = ks_eval_candidate_runner(ev, ws, lib, nsets, candp, res->part_s, &ke);
	cand = *candp;
	*candp = NULL; /* handed back below when this workload passes */
	if (failed_setup) {
		if (!cand) {
			rc = ks_error_set(e, ke.code, "%s", ke.msg);
			goto out;
		}
		/* the kernel's constructors run at load: their failure is the kernel's */
		kernel_failed(cand, res, &log, "load");
		ks_buf_addf(&log, " (%s)", ke.msg);
		goto out;
	}
	lap(res, KS_PHASE_START, &mark);
	/* correctness right after each call, on fresh buffers per seed */
	for (int s = 0; s < o->nseeds; s++) {
		if (fill_call(cand, o->timeout_s, 0, ev->seeds[s], &reply, res, &mark, &ke)) {
			kernel_failed(cand, res, &log, "call");
			goto out;
		}
		int intact = 1;
		sscanf(reply, "done %*u %d", &intact);
		if (!check_outputs(ev, ws, cand->out, s, "after the call", res, &log, &mark)) {
			res->status = KS_STATUS_INCORRECT_NUMERICAL;
			goto out;
		}
		if (!intact) {
			ks_buf_adds(&log, "the kernel modified its inputs");
			res->status = KS_STATUS_INCORRECT_NUMERICAL;
			goto out;
		}
	}
	if (!timed)
		goto out;
	lap(res, KS_PHASE_CHECK, &mark);

	/* rotating input sets, each with one of the seeds' inputs (references known) */
	if (fill_sets(ev, cand, nsets, res, &ke)) {
		kernel_failed(cand, res, &log, "fill");
		goto out;
	}
	for (int y = 0; y < KS_YARD_COUNT; y++)
		if ((rc = yardstick_start(ev, ws, nsets, &yard[y], &log, e)))
			goto out;
	lap(res, KS_PHASE_INPUTS, &mark);
	double *cs = NULL;
	int ncs = 0, suspicious = 0, reps_max = 0;
	/* the count floor first, then more blocks while the median is not known well enough */
	int nblocks = 0;
	for (int b = 0; b < o->max_blocks; b++) {
		if (b >= o->blocks &&
		    (o->ci_rel <= 0 || ks_stats_enough(cs, (size_t)ncs, o->ci_rel, 0, 0)))
			break;
		nblocks++;
		int before = ncs;
		if ((rc = yardstick_block(ev, yard, KS_YARD_COUNT, cand, &log, &suspicious, e))) {
			free(cs);
			if (rc == 1) {
				rc = 0;
				kernel_failed(cand, res, &log, "before timing the baseline");
			}
			goto out;
		}
		if (time_block(ev, cand, 0, &cs, &ncs, &log, &suspicious, &ke)) {
			free(cs);
			if (ke.code == KS_ETIMEOUT || cand->reaped || cand->timed_out) {
				kernel_failed(cand, res, &log, "timing");
				goto out;
			}
			rc = ks_error_set(e, ke.code, "timing: %s", ke.msg);
			goto out;
		}
		if (ncs - before > reps_max)
			reps_max = ncs - before;
	}
	/* correctness again: outputs left by the timed calls, then fresh inputs in a buffer the
	 * kernel has seen before (a kernel that caches results by pointer fails here).  Only
	 * the sets the calls wrote: a slow kernel (or a loaded machine) may end a block before
	 * the rotation reaches every set, whose outputs then still hold the poison */
	lap(res, KS_PHASE_TIMING, &mark);
	int written = o->warmup > reps_max ? o->warmup : reps_max;
	int post = nsets < o->nseeds ? nsets : o->nseeds;
	if (post > written)
		post = written;
	for (int s = 0; s < post && res->status == KS_STATUS_PASSED; s++) {
		if (ks_runner_cmd(cand, o->timeout_s, &reply, &ke, "snap %d", s)) {
			kernel_failed(cand, res, &log, "after timing");
			break;
		}
		if (!check_outputs(ev, ws, cand->out, s, "after the timed calls", res, &log, &mark))
			res->status = KS_STATUS_INCORRECT_NUMERICAL;
	}
	if (res->status == KS_STATUS_PASSED) {
		int s = 1 % o->nseeds;
		if (fill_call(cand, o->timeout_s, 0, ev->seeds[s], &reply, res, &mark, &ke))
			kernel_failed(cand, res, &log, "final call");
		else if (!check_outputs(ev, ws, cand->out, s, "on a reused buffer with new inputs",
					res, &log, &mark))
			res->status = KS_STATUS_INCORRECT_NUMERICAL;
	}
	struct ks_stats cst;
	ks_stats_compute(cs, (size_t)ncs, &cst);
	res->median_us = cst.median;
	res->spread_pct = cst.spread_pct;
	res->samples_us = cs;
	res->nsamples = ncs;
	res->blocks = nblocks;
	if (cst.median > 0) {
		res->gflops = ws->flops / (cst.median * 1e3);
		res->gbps = ws->bytes / (cst.median * 1e3);
	}
	for (int y = 0; y < KS_YARD_COUNT; y++)
		yardstick_finish(&yard[y]);
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
	if (floor_us > 0 && cst.median > 0) {
		if (cst.median * o->suspicious_factor < floor_us) {
			ks_buf_addf(&log, "%sfaster than the hardware allows: %.2f us < roofline floor "
					  "%.2f us",
				    log.len ? "\n" : "", cst.median, floor_us);
			suspicious = 1;
		}
	}
	if (suspicious && res->status == KS_STATUS_PASSED)
		res->status = KS_STATUS_SUSPICIOUS;
out:
	*outside = cand && cand->killed_outside;
	/* a yardstick's runner killed the same way fails the evaluation (rc): as worth a
	 * second try, or a search loses its final re-measurement to someone's kill -9 */
	for (int y = 0; y < KS_YARD_COUNT && rc; y++)
		if (yard[y].r && yard[y].r->reaped) {
			struct ks_buf why = KS_BUF_INIT;
			ks_runner_fate(yard[y].r, &why);
			ks_buf_release(&why);
			*outside |= yard[y].r->killed_outside;
		}
	if (cand && rc == 0 && res->status == KS_STATUS_PASSED)
		*candp = cand; /* the next workload's, reset */
	else if (cand)
		ks_runner_free(cand);
	/* what is left (correctness after timing, a failure's teardown) is checking */
	lap(res, KS_PHASE_CHECK, &mark);
	for (int y = 0; y < KS_YARD_COUNT; y++)
		yardstick_finish(&yard[y]); /* (a second time on success: nothing left) */
	res->log = ks_buf_detach(&log, NULL);
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
