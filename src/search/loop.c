/* The search phase.  Each round asks the strategy for up to `jobs` proposals, compiles
 * them in parallel (the compile cache keeps the artifacts), then evaluates them one at a
 * time so no timing ever shares the cores with a compiler, and reports every outcome back.
 * A proposal whose candidate is already in the store (a resumed run) is answered from
 * the store instead of being evaluated again.  With workers (--devices), the batch is
 * evaluated concurrently on the pool and recorded in the same order. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/log.h"
#include "ksearch/worker.h"
#include "search/run_internal.h"

struct job {
	struct ks_run_state *st;
	const struct ks_template *tpl;
	const char *defines[KS_TEMPLATE_MAX_KNOBS + 1];
	char defs[KS_TEMPLATE_MAX_KNOBS + 1][128];
	struct ks_buf ident;
	int64_t stored_id;  /* candidate already in the store, 0 if none */
	int has_result;
	struct ks_artifact art;
	int compiled;
	double compile_ms;
	/* evaluated by the worker pool (see pool_evaluate) */
	int pooled;
	struct ks_eval_result pres;
	int pool_rc;
	struct ks_error pool_err;
};

static void *compile_job(void *arg)
{
	struct job *j = arg;
	struct ks_compile_req req = {.task = j->st->task, .source = j->tpl->source,
				     .defines = j->defines, .flags = j->st->o.eval.cflags};
	double t0 = ks_run_now();
	struct ks_error e = {0};
	if (j->st->be->compile(&req, &j->art, &e) == 0)
		j->compiled = 1;
	else
		ks_warn("compile: %s", e.msg);
	j->compile_ms = (ks_run_now() - t0) * 1e3;
	return NULL;
}

int ks_run_record(struct ks_run_state *st, int64_t id, const char *phase,
		  const struct ks_eval_result *res, struct ks_error *e)
{
	int rc = 0;
	const struct ks_task *t = st->task;
	for (int l = 0; l < 2 && !rc; l++) {
		const struct ks_wl_result *list = l ? res->checks : res->workloads;
		int n = l ? res->nchecks : res->nworkloads;
		for (int i = 0; i < n && !rc; i++) {
			const struct ks_wl_result *w = &list[i];
			struct ks_buf samples = KS_BUF_INIT;
			ks_buf_adds(&samples, "[");
			for (int k = 0; k < w->nsamples; k++)
				ks_buf_addf(&samples, "%s%.3f", k ? "," : "", w->samples_us[k]);
			ks_buf_adds(&samples, "]");
			int nseeds = w->nseeds ? w->nseeds : 1;
			for (int s = 0; s < nseeds && !rc; s++) {
				/* one row per seed; timing belongs to the first */
				struct ks_store_eval ev = {
					.candidate_id = id,
					.workload = l ? t->nworkloads + w->index : w->index,
					.seed = w->nseeds ? w->seeds[s] : 0, .phase = phase,
					.status = ks_status_name(w->status),
					.max_abs_err = w->nseeds ? w->seed_abs_err[s] : w->max_abs_err,
					.max_rel_err = w->nseeds ? w->seed_rel_err[s] : w->max_rel_err,
					.median_us = s ? NAN : w->median_us,
					.spread_pct = s ? NAN : w->spread_pct,
					.gflops = s ? NAN : w->gflops, .gbps = s ? NAN : w->gbps,
					.roofline_pct = s ? NAN : w->roofline_pct,
					.baseline_us = s ? NAN : w->baseline_us,
					.speedup = s ? NAN : w->speedup,
					.samples = s ? "[]" : ks_buf_str(&samples),
					.log = w->log};
				rc = ks_store_add_eval(st->store, &ev, e);
			}
			ks_buf_release(&samples);
		}
	}
	if (!rc)
		rc = ks_store_add_result(st->store, id, phase, ks_status_name(res->status),
					 res->speedup, e);
	return rc;
}

static void outcome_from_store(struct ks_run_state *st, int64_t id, struct ks_outcome *oc)
{
	struct ks_store_candidate *c = NULL;
	oc->candidate = (long)id;
	if (ks_store_get_candidate(st->store, id, &c, NULL) == 0) {
		int status = c->status ? ks_status_parse(c->status) : KS_STATUS_RUNTIME_ERROR;
		oc->status = status < 0 ? KS_STATUS_RUNTIME_ERROR : status;
		oc->passed = oc->status == KS_STATUS_PASSED;
		oc->score = oc->passed ? c->speedup : 0;
		ks_store_free(c);
	}
}

static int evaluate_job(struct ks_run_state *st, const struct ks_proposal *p, struct job *j,
			struct ks_outcome *oc, struct ks_error *e)
{
	struct ks_buf knobs = KS_BUF_INIT;
	ks_search_space_knobs_json(j->tpl, p->knobs, &knobs);
	struct ks_store_candidate c = {
		.source = j->tpl->source, .language = st->be->lang,
		.parent_id = p->parent_candidate > 0 ? p->parent_candidate : 0,
		.node_id = p->node, .action = p->title, .policy = "builtin",
		.family = j->tpl->family, .knobs = ks_buf_str(&knobs),
		.defines = ks_buf_str(&j->ident), .round = st->round};
	/* a candidate recorded before a crash but never evaluated keeps its id */
	int64_t id = j->stored_id;
	int rc = id ? 0 : ks_store_add_candidate(st->store, &c, &id, e);
	ks_buf_release(&knobs);
	if (rc)
		return rc;
	struct ks_eval_result res;
	if (j->pooled) {
		if (j->pool_rc) {
			if (e)
				*e = j->pool_err;
			return j->pool_rc;
		}
		res = j->pres; /* recorded and released here, in proposal order */
		j->pooled = 0;
		/* the worker compiled it: its log is the record */
		ks_store_finish_compile(st->store, id, res.status != KS_STATUS_COMPILE_ERROR,
					res.compile_log, NULL, 0, NULL);
	} else {
		ks_store_finish_compile(st->store, id, j->compiled && j->art.ok,
					ks_buf_str(&j->art.log), j->art.resources, j->compile_ms,
					NULL);
		if ((rc = ks_evaluator_run(st->ev, j->tpl->source, j->tpl->path, j->defines, &res,
					   e)))
			return rc;
	}
	rc = ks_run_record(st, id, "search", &res, e);
	oc->candidate = (long)id;
	oc->status = res.status;
	oc->passed = res.status == KS_STATUS_PASSED;
	oc->score = oc->passed ? res.speedup : 0;
	if (!oc->passed) {
		const char *why = res.compile_log && res.status == KS_STATUS_COMPILE_ERROR ? res.compile_log : "";
		for (int i = 0; i < res.nchecks && !why[0]; i++)
			if (res.checks[i].status != KS_STATUS_PASSED && res.checks[i].log)
				why = res.checks[i].log;
		for (int i = 0; i < res.nworkloads && !why[0]; i++)
			if (res.workloads[i].status != KS_STATUS_PASSED && res.workloads[i].log)
				why = res.workloads[i].log;
		ks_info("candidate %lld (%s %s): %s %.200s", (long long)id, j->tpl->family,
			ks_buf_str(&j->ident), ks_status_name(res.status), why);
	}
	ks_eval_result_release(&res);
	return rc;
}

/* ---- workers: a batch evaluated concurrently, recorded in proposal order --------------- */

static void pool_evaluate(struct ks_run_state *st, struct job *js, int n)
{
	struct ks_pool_job pj[16];
	struct ks_eval_result res[16];
	int map[16], m = 0;
	for (int i = 0; i < n; i++) {
		if (js[i].stored_id && js[i].has_result)
			continue;
		pj[m] = (struct ks_pool_job){.task = st->o.task, .opts = &st->o.eval,
					     .source = js[i].tpl->source, .path = js[i].tpl->path,
					     .defines = js[i].defines,
					     .units = st->task->nworkloads + st->task->nchecks};
		map[m++] = i;
	}
	if (!m)
		return;
	ks_run_progress_tick(st, "search", "evaluating a batch on the workers", 0);
	/* a failed job is reported when its turn to be recorded comes */
	ks_pool_evaluate_batch(st->pool, pj, m, res, NULL);
	for (int k = 0; k < m; k++) {
		struct job *j = &js[map[k]];
		j->pooled = 1;
		j->pres = res[k];
		j->pool_rc = pj[k].rc;
		j->pool_err = pj[k].err;
	}
}

int ks_run_search(struct ks_run_state *st, struct ks_error *e)
{
	int64_t done = 0;
	int rc = ks_store_count_evaluated(st->store, &done, e);
	if (rc)
		return rc;
	st->evaluated_at_start = (int)done;
	if (done)
		ks_info("resuming: %lld of %d candidates already evaluated", (long long)done,
			st->o.budget);
	int jobs = st->o.jobs > 0 ? st->o.jobs : 1;
	if (st->pool && jobs < ks_pool_size(st->pool))
		jobs = ks_pool_size(st->pool); /* one candidate per worker at least */
	if (jobs > 16)
		jobs = 16;
	/* on resume, recorded outcomes are replayed through the strategy in the same order,
	 * which rebuilds its state; only then do new evaluations start counting */
	while (!ks_run_stop_requested()) {
		int left = st->o.budget - st->evaluated;
		if (left <= 0)
			break;
		if (st->o.time_limit_s > 0 && ks_run_now() - st->t0 > st->o.time_limit_s) {
			ks_info("time limit reached after %d candidates", st->evaluated);
			break;
		}
		struct ks_proposal props[16];
		int n = 0, want = jobs < left ? jobs : left;
		if ((rc = ks_strategy_propose(st->strategy, props, want, &n, e)))
			return rc;
		if (n == 0) {
			ks_info("the search space is exhausted after %d candidates", st->evaluated);
			break;
		}
		struct job *js = calloc((size_t)n, sizeof(*js));
		if (!js)
			return ks_error_set(e, KS_ENOMEM, "out of memory");
		pthread_t th[16];
		int started[16] = {0};
		for (int i = 0; i < n; i++) {
			struct job *j = &js[i];
			j->st = st;
			j->tpl = st->space.tpl[props[i].template_index];
			ks_buf_init(&j->ident, 4096);
			ks_artifact_init(&j->art);
			ks_search_space_defines(j->tpl, props[i].knobs, &j->ident, j->defs, j->defines,
						KS_TEMPLATE_MAX_KNOBS + 1);
			ks_store_find_candidate(st->store, j->tpl->source, ks_buf_str(&j->ident),
						&j->stored_id, &j->has_result, NULL);
			/* workers compile for themselves; here only for local evaluation */
			if (!(j->stored_id && j->has_result) && !st->pool)
				started[i] = pthread_create(&th[i], NULL, compile_job, j) == 0;
		}
		for (int i = 0; i < n; i++)
			if (started[i])
				pthread_join(th[i], NULL);
		if (st->pool)
			pool_evaluate(st, js, n);
		/* evaluate (or replay) in proposal order: the strategy sees outcomes in the same
		 * sequence on every run with this seed */
		for (int i = 0; i < n && !rc; i++) {
			struct job *j = &js[i];
			struct ks_outcome oc = {.candidate = -1};
			if (j->stored_id && j->has_result) {
				outcome_from_store(st, j->stored_id, &oc);
				st->reused++;
			} else {
				if (ks_run_stop_requested() && !j->pooled)
					break;
				ks_run_progress_tick(st, "search", props[i].title, 0);
				if ((rc = evaluate_job(st, &props[i], j, &oc, e)))
					break;
			}
			st->evaluated++;
			if (oc.passed) {
				st->passed++;
				if (oc.score > st->best)
					st->best = oc.score;
			} else {
				st->failed++;
			}
			st->last_status = ks_status_name(oc.status);
			st->last_speedup = oc.score;
			st->last_candidate = oc.candidate;
			if ((rc = ks_strategy_observe(st->strategy, &props[i], &oc, e)))
				break;
			ks_run_progress_tick(st, "search", props[i].title, 1);
		}
		for (int i = 0; i < n; i++) {
			ks_buf_release(&js[i].ident);
			ks_artifact_release(&js[i].art);
			if (js[i].pooled)
				ks_eval_result_release(&js[i].pres);
		}
		free(js);
		if (rc)
			return rc;
		struct ks_buf snap = KS_BUF_INIT;
		snap.cap = (size_t)16 << 20;
		if (ks_strategy_snapshot(st->strategy, &snap, NULL) == 0 && snap.len) {
			int version;
			ks_store_add_snapshot(st->store, st->round, ks_buf_str(&snap), &version, NULL);
		}
		ks_buf_release(&snap);
		st->round++;
	}
	return 0;
}
