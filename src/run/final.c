/* The end of a run: the top candidates of the search are measured again with more
 * repetitions, interleaved with the baseline, and the best is chosen on that
 * re-measurement (a single lucky measurement never wins: no winner's curse).  Repetitions
 * stop when each median is known to +-2% (or at a cap).  Round 1 measures every candidate;
 * the later rounds measure the two leaders again, alternating, until their order is
 * decided, their gap is known to within the noise threshold, or a cap of rounds or time
 * (the stop rule, final_pick.h).  The crown goes to another candidate than the search's
 * leader only when it wins by more than the noise; final_record.c writes the verdict. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/log.h"
#include "ksearch/worker.h"
#include "run/final_impl.h"

/* a new result becomes the one recorded: the first, or a failure after passes */
static void keep_result(struct ks_final_pending *p, struct ks_eval_result *res)
{
	if (p->have_res)
		ks_eval_result_release(&p->res);
	p->res = *res;
	memset(res, 0, sizeof(*res));
	p->have_res = 1;
	p->fc.passed = p->res.status == KS_STATUS_PASSED;
	if (!p->fc.passed)
		return;
	free(p->fc.wl);
	p->fc.nwl = p->res.nworkloads;
	p->fc.wl = calloc(p->fc.nwl ? (size_t)p->fc.nwl : 1, sizeof(*p->fc.wl));
	if (!p->fc.wl)
		p->fc.passed = 0;
}

/* pool one round's samples into the candidate; a failing round ends its candidacy and
 * becomes the result recorded */
static void take_round(struct ks_final_pending *p, struct ks_eval_result *res, int ok)
{
	if (!ok) {
		p->fc.passed = 0;
		ks_eval_result_release(res);
		return;
	}
	if (!p->have_res || res->status != KS_STATUS_PASSED) {
		keep_result(p, res);
		if (!p->fc.passed)
			return;
		res = &p->res;
	}
	for (int w = 0; p->fc.wl && w < p->fc.nwl && w < res->nworkloads; w++) {
		const struct ks_wl_result *x = &res->workloads[w];
		/* a worker's result carries the baseline's median only: pool that */
		int nb = x->nbaseline_samples;
		const double *bs = nb ? x->baseline_samples_us : &x->baseline_us;
		if (!nb && x->baseline_us > 0)
			nb = 1;
		int nl = x->nlibrary_samples;
		const double *ls = nl ? x->library_samples_us : &x->library_us;
		if (!nl && x->library_us > 0)
			nl = 1;
		if (ks_final_pool_add(&p->fc.wl[w].cand, &p->fc.wl[w].ncand, x->samples_us,
				      x->nsamples) ||
		    ks_final_pool_add(&p->fc.wl[w].base, &p->fc.wl[w].nbase, bs, nb) ||
		    ks_final_pool_add(&p->fc.wl[w].lib, &p->fc.wl[w].nlib, ls, nl))
			p->fc.passed = 0; /* out of memory: no figure to trust */
	}
	if (res != &p->res)
		ks_eval_result_release(res);
}

/* the pending candidates named in which[] on the workers, all at once, one per device */
static int measure_pooled(struct ks_final_run *f, const struct ks_eval_opts *o,
			  const int *which, int nw, struct ks_error *e)
{
	struct ks_run_state *st = f->st;
	struct ks_eval_result res[KS_RUN_MAX_TOP];
	struct ks_pool_job jobs[KS_RUN_MAX_TOP];
	memset(res, 0, sizeof(res));
	for (int k = 0; k < nw; k++) {
		struct ks_final_pending *p = &f->pd[which[k]];
		jobs[k] = (struct ks_pool_job){.task = st->o.task, .opts = o,
					       .source = ks_buf_str(&p->src), .defines = p->defs.list,
					       .units = st->task->nworkloads + st->task->nchecks};
	}
	char what[128];
	snprintf(what, sizeof(what), "round %d: re-measuring %d candidates on the workers",
		 f->prog.rounds + 1, nw);
	ks_run_progress_tick(st, "final", what, 0);
	int rc = ks_pool_evaluate_batch(st->pool, jobs, nw, res, e);
	for (int k = 0; k < nw; k++)
		take_round(&f->pd[which[k]], &res[k], jobs[k].rc == 0);
	return rc;
}

/* the pending candidates named in which[]: on the workers when the run has them, else
 * here, one after the other */
static int measure(struct ks_final_run *f, const struct ks_eval_opts *o, const int *which,
		   int nw, struct ks_error *e)
{
	struct ks_run_state *st = f->st;
	if (st->pool)
		return measure_pooled(f, o, which, nw, e);
	struct ks_evaluator *ev = NULL;
	int rc = ks_evaluator_new(st->task, o, &ev, e);
	for (int k = 0; k < nw && !rc; k++) {
		struct ks_final_pending *p = &f->pd[which[k]];
		const struct ks_store_candidate *c = &f->list[p->index];
		struct ks_eval_result res;
		char what[320];
		memset(&res, 0, sizeof(res));
		snprintf(what, sizeof(what), "round %d, %d/%d candidate #%lld: %s", f->prog.rounds + 1,
			 k + 1, nw, (long long)c->id, c->action ? c->action : "");
		ks_run_progress_tick(st, "final", what, 0);
		rc = ks_evaluator_run(ev, ks_buf_str(&p->src), NULL, p->defs.list, &res, e);
		take_round(p, &res, rc == 0);
	}
	ks_evaluator_free(ev);
	return rc;
}

/* the final's timing: more repetitions than the search, each median to +-2% */
static void final_opts(struct ks_final_run *f)
{
	const struct ks_eval_opts *so = &f->st->o.eval;
	struct ks_eval_opts *fo = &f->fo;
	*fo = *so;
	fo->min_time_s = so->min_time_s * 3 > 0.3 ? so->min_time_s * 3 : 0.3;
	fo->blocks = 3;
	fo->ci_rel = 0.02;
	fo->max_blocks = 6;
	fo->reuse_baseline = 0;
	fo->rep_ci_rel = 0; /* the fixed time floor per block, as before */
	/* the yardsticks keep a block beside each of the candidate's, with a count floor of 3
	 * (pooled over the blocks and the round's candidates): a naive baseline of 0.17 s a
	 * call took 12 calls a block and most of the final's time */
	fo->yard_reps = 3;
	/* the rounds after the first only tell the leaders apart: the candidates alone, the
	 * same binaries whose checks passed in round 1.  The yardsticks keep round 1's samples,
	 * taken in blocks interleaved with every candidate's; timing them again (a naive
	 * baseline of 0.17 s a call) was half of a round */
	f->lo = *fo;
	f->lo.skip_baseline = f->lo.skip_library = f->lo.skip_checks = 1;
}

/* the candidates in search order, up to --top; those re-measured by an earlier process of
 * a resumed run keep their figure.  --top 0 keeps the search phase's leader alone */
static int collect(struct ks_final_run *f, struct ks_error *e)
{
	int top = f->no_final ? 1 : f->st->o.final_top < KS_RUN_MAX_TOP ? f->st->o.final_top
									 : KS_RUN_MAX_TOP;
	int rc = 0;
	for (size_t i = 0; i < f->n && f->np < top && !rc; i++) {
		const struct ks_store_candidate *c = &f->list[i];
		if (!c->has_result || !c->status || strcmp(c->status, "PASSED"))
			continue;
		struct ks_final_pending *p = &f->pd[f->np++];
		p->index = i;
		p->fc.id = (long)c->id;
		p->fc.search_speedup = c->speedup;
		p->fc.passed = 1;
		if (c->has_final) {
			p->fc.passed = c->final_status && !strcmp(c->final_status, "PASSED");
			p->fc.known_speedup = c->final_speedup;
			continue;
		}
		if (!(rc = ks_defines_parse(&p->defs, c->defines, e)))
			rc = ks_store_get_source(f->st->store, c->id, &p->src, e);
	}
	return rc;
}

static int final_open(struct ks_final_run *f, struct ks_error *e)
{
	int rc = ks_store_list_candidates(f->st->store, KS_STORE_ORDER_BEST, &f->list, &f->n, e);
	if (rc)
		return rc;
	final_opts(f);
	f->no_final = f->st->o.final_top <= 0;
	f->was_busy = ks_final_machine_busy(f->busy, sizeof(f->busy));
	if ((rc = ks_final_record_roofs(f->st, e)))
		return rc;
	return collect(f, e);
}

static void stats_all(struct ks_final_run *f)
{
	for (int k = 0; k < f->np; k++) {
		ks_final_cand_stats(&f->pd[k].fc);
		f->fc[k] = f->pd[k].fc;
	}
}

/* the leaders to measure again, in an order alternating with the round, against drift;
 * those re-measured by an earlier process are left out.  Returns how many */
static int next_leaders(struct ks_final_run *f, int *which)
{
	int lead[2], nl = ks_final_leaders(f->fc, f->np, lead, 2), re[2], nre = 0, nw = 0;
	for (int j = 0; j < nl; j++)
		if (!f->list[f->pd[lead[j]].index].has_final)
			re[nre++] = lead[j];
	for (int j = 0; j < nre; j++)
		which[nw++] = re[(j + f->prog.rounds) % nre];
	return nw;
}

/* round 1 measures every candidate, the later ones the leaders, until the stop rule */
static int final_rounds(struct ks_final_run *f, struct ks_error *e)
{
	int which[KS_RUN_MAX_TOP], nw = 0, rc = 0;
	for (int k = 0; k < f->np; k++)
		if (!f->list[f->pd[k].index].has_final)
			which[nw++] = k;
	f->stop = f->no_final ? KS_FINAL_SKIPPED
		  : !f->np    ? KS_FINAL_ALONE
		  : !nw       ? KS_FINAL_MEASURED_EARLIER
			      : KS_FINAL_GO_ON;
	while (f->stop == KS_FINAL_GO_ON) {
		if (ks_run_stop_requested()) {
			f->stop = KS_FINAL_INTERRUPTED;
			break;
		}
		double t0 = ks_run_now();
		rc = measure(f, f->prog.rounds ? &f->lo : &f->fo, which, nw, e);
		double took = ks_run_now() - t0;
		if (f->prog.rounds++)
			f->prog.later_s += took;
		else
			f->prog.round1_s = took;
		f->prog.last_s = took;
		stats_all(f);
		if (rc) {
			f->stop = KS_FINAL_FAILED;
			break;
		}
		f->stop = ks_final_stop_rule(f->fc, f->np, &f->prog, &f->noise_pct);
		if (f->stop == KS_FINAL_GO_ON && !(nw = next_leaders(f, which)))
			f->stop = KS_FINAL_MEASURED_EARLIER;
	}
	return rc;
}

/* the verdict and how far to trust it, into the log and the result */
static void final_say(struct ks_final_run *f)
{
	struct ks_run_result *r = f->r;
	char why[256];
	ks_final_stop_text(f->stop, f->noise_pct, why, sizeof(why));
	if (f->skipped && f->no_final)
		ks_info("final: skipped (--top 0): the search phase's figures stand");
	else if (f->skipped)
		ks_info("final: skipped, the run was interrupted (--resume %s re-measures)",
			f->st->dir);
	else
		ks_info("final: %s; %d round%s, stopped: %s", f->v.text, f->prog.rounds,
			f->prog.rounds == 1 ? "" : "s", why);
	if (f->noisy)
		ks_warn("noisy measurements: %s; rerun on a quiet machine to trust the ranking",
			f->noise);
	r->final_rounds = f->prog.rounds;
	snprintf(r->final_stop, sizeof(r->final_stop), "%s", ks_final_stop_key(f->stop));
	snprintf(r->final_stop_reason, sizeof(r->final_stop_reason), "%s", why);
	r->final_noisy = f->noisy;
	snprintf(r->final_noise, sizeof(r->final_noise), "%s", f->noise);
	snprintf(r->final_verdict, sizeof(r->final_verdict), "%s", f->skipped ? "" : f->v.text);
}

static void final_free(struct ks_final_run *f)
{
	for (int k = 0; k < f->np; k++) {
		ks_buf_release(&f->pd[k].src);
		ks_defines_release(&f->pd[k].defs);
		ks_eval_result_release(&f->pd[k].res);
		ks_final_cand_release(&f->pd[k].fc);
	}
	ks_store_free(f->list);
	free(f);
}

int ks_run_final(struct ks_run_state *st, struct ks_run_result *r, struct ks_error *e)
{
	struct ks_final_run *f = calloc(1, sizeof(*f));
	if (!f)
		return ks_error_set(e, KS_ENOMEM, "final re-measurement: out of memory");
	f->st = st;
	f->r = r;
	f->t_start = ks_run_now();
	f->noise_pct = NAN;
	f->stop = KS_FINAL_FAILED;
	int rc = final_open(f, e);
	if (!rc)
		rc = final_rounds(f, e);
	stats_all(f);
	ks_final_choose(f->fc, f->np, &f->v);
	/* Ctrl-C before the final measured anything: no verdict, but the search phase's leader
	 * still stands, on its search-phase figure and said to be one; --resume re-measures it */
	f->skipped = f->v.chosen < 0 && f->prog.rounds == 0 &&
		     (f->stop == KS_FINAL_INTERRUPTED || f->no_final);
	int wrc = ks_final_record_results(f, rc, rc ? NULL : e);
	rc = rc ? rc : wrc;
	ks_final_judge_noise(f);
	final_say(f);
	if (!rc && !f->skipped)
		rc = ks_final_record_verdict(f, e);
	if (!rc)
		rc = ks_final_crown(f, e);
	if (!rc && r->best_candidate > 0)
		rc = ks_final_record_shapes(f, e);
	final_free(f);
	return rc;
}
