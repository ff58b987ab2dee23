/* The search driver, the only one: every policy (builtin, llm, cmd) is driven here.
 *
 * Each round asks the policy for up to `jobs` candidates, compiles them in parallel (once:
 * the artifact is what gets evaluated), then evaluates them one at a time — or hands the
 * batch to the worker pool (--devices, --worker-cmd) — records every outcome and reports it
 * back in proposal order.  Where the backend's timing shares the host's cores (cpu), every
 * compile of the round ends before its first evaluation; where a device times the kernels
 * (timing_tolerates_host_load), candidate i is evaluated as soon as 0..i are compiled, while
 * the later ones still compile (round.c).
 *
 * A candidate the store already holds with a result is not evaluated again: when it was
 * recorded before this process started (a resumed run) its outcome is replayed to the
 * policy and counts against the budget as it did then; when this process evaluated it
 * already, the policy repeated itself and is told so (no budget spent).  "passed" has one
 * definition, outcome_set(). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/log.h"
#include "ksearch/worker.h"
#include "eval/wire.h"
#include "run/round.h"
#include "run/run_internal.h"
#include "util/clock.h"
#include "eval/result_cache.h"
#include "util/env.h"

_Static_assert(KS_ROUND_MAX >= KS_POLICY_MAX_PROPOSALS, "a round holds one propose call");

#define MAX_REPEATS 50 /* consecutive repeated candidates before the driver gives up */

struct job {
	struct ks_run_state *st;
	struct ks_policy_cand c;
	int64_t stored_id;  /* candidate already in the store, 0 if none */
	int has_result;
	int seen;           /* evaluated or replayed by this process already: a repeat */
	struct ks_artifact art;
	int compiled;
	double compile_ms;
	double compile_end; /* ks_clock_s() when its compile ended (0: not compiled here) */
	/* evaluated by the worker pool (see pool_evaluate) */
	int pooled;
	struct ks_eval_result pres;
	int pool_rc;
	struct ks_error pool_err;
};

/* the one definition of a passing candidate */
static void outcome_set(struct ks_policy_outcome *oc, int status, double speedup)
{
	oc->status = status;
	oc->passed = status == KS_STATUS_PASSED && speedup > 0 && isfinite(speedup);
	oc->score = oc->passed ? speedup : 0;
}

static void compile_job(struct job *j)
{
	struct ks_compile_req req = {.task = j->st->task, .source = j->c.source,
				     .defines = j->c.defines, .flags = j->st->o.eval.cflags};
	double t0 = ks_clock_s();
	struct ks_error e = {0};
	if (j->st->be->compile(&req, &j->art, &e) == 0)
		j->compiled = 1;
	else
		ks_warn("compile: %s", e.msg);
	j->compile_end = ks_clock_s();
	j->compile_ms = (j->compile_end - t0) * 1e3;
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
					.library_us = s || !(w->library_us > 0) ? NAN : w->library_us,
					.tol_elem = s ? NAN : w->tol_elem,
					.tol_l2 = s ? NAN : w->tol_l2,
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

static void outcome_from_store(struct ks_run_state *st, int64_t id, struct ks_policy_outcome *oc)
{
	struct ks_store_candidate *c = NULL;
	oc->candidate = (long)id;
	outcome_set(oc, KS_STATUS_RUNTIME_ERROR, 0);
	if (ks_store_get_candidate(st->store, id, &c, NULL) == 0) {
		int status = c->status ? ks_status_parse(c->status) : KS_STATUS_RUNTIME_ERROR;
		outcome_set(oc, status < 0 ? KS_STATUS_RUNTIME_ERROR : status, c->speedup);
		ks_store_free(c);
	}
}

/* the first log line that says why a candidate failed */
static const char *failure_reason(const struct ks_eval_result *res)
{
	if (res->status == KS_STATUS_COMPILE_ERROR && res->compile_log)
		return res->compile_log;
	for (int l = 0; l < 2; l++) {
		const struct ks_wl_result *list = l ? res->workloads : res->checks;
		int n = l ? res->nworkloads : res->nchecks;
		for (int i = 0; i < n; i++)
			if (list[i].status != KS_STATUS_PASSED && list[i].log && list[i].log[0])
				return list[i].log;
	}
	return "";
}

/* Where a candidate's wall time went: compile (in parallel with the batch's others), the
 * evaluator's phases, and the rest (recording, the driver).  Kept per candidate as an event
 * of kind "eval_times" and summed for the run's summary line.  Workers report no phases:
 * their evaluation is one "other" figure. */
static void record_times(struct ks_run_state *st, int64_t id, const struct job *j,
			 const struct ks_eval_result *res, double t_eval, double wall_s)
{
	double compile_s = j->pooled ? 0 : j->compile_ms / 1e3, phases = 0;
	json_t *d = json_object();
	json_object_set_new(d, "candidate_id", json_integer((json_int_t)id));
	json_object_set_new(d, "compile_s", json_real(compile_s));
	for (int k = 0; k < KS_PHASE_COUNT; k++) {
		char key[32];
		snprintf(key, sizeof(key), "%s_s", ks_eval_phase_name(k));
		json_object_set_new(d, key, json_real(res->phase_s[k]));
		st->phase_sum[k] += res->phase_s[k];
		phases += res->phase_s[k];
	}
	/* inside inputs and check: what the candidate's runner spent on each step */
	for (int k = 0; k < KS_PART_COUNT; k++) {
		char key[40];
		snprintf(key, sizeof(key), "runner_%s_s", ks_eval_part_name(k));
		json_object_set_new(d, key, json_real(res->part_s[k]));
		st->part_sum[k] += res->part_s[k];
	}
	json_object_set_new(d, "runner_cached_bytes", json_real(res->inputs_cached_bytes));
	st->cached_sum += res->inputs_cached_bytes;
	double other = wall_s > phases ? wall_s - phases : 0;
	json_object_set_new(d, "other_s", json_real(other));
	json_object_set_new(d, "total_s", json_real(compile_s + wall_s));
	/* when, in seconds since the run started, its compile ended and its evaluation began:
	 * the order of a round's compiles and evaluations, as it happened (tests/cli/t0600) */
	json_object_set_new(d, "batch", json_integer(st->batches));
	if (j->compile_end > 0)
		json_object_set_new(d, "compile_end_at_s", json_real(j->compile_end - st->t0));
	json_object_set_new(d, "eval_start_at_s", json_real(t_eval - st->t0));
	st->compile_sum += compile_s;
	st->other_sum += other;
	st->wall_sum += compile_s + wall_s;
	st->ntimed++;
	char *text = json_dumps(d, JSON_COMPACT);
	char msg[160];
	snprintf(msg, sizeof(msg), "candidate %lld: %.2f s (compile %.2f s, check %.2f s, timing "
				   "%.2f s)",
		 (long long)id, compile_s + wall_s, compile_s, res->phase_s[KS_PHASE_CHECK],
		 res->phase_s[KS_PHASE_TIMING]);
	if (text)
		ks_store_add_event(st->store, "debug", "eval_times", msg, text, NULL);
	free(text);
	json_decref(d);
}

/* evaluate one new candidate (or take the pool's result), record it, fill oc; the result
 * stays in *res for the policy until the caller releases it */
/* the results cache's key of a job: its source and knobs, the task, the options that
 * change a result (the roofs aside: they are measured again at each run's start, and a
 * reused result's "% of roofline" is its own run's) */
static void cache_key(struct ks_run_state *st, const struct job *j, char key[65])
{
	json_t *opts = ks_wire_opts(&st->o.eval);
	const char *name;
	json_t *v;
	void *tmp;
	json_object_foreach_safe(opts, tmp, name, v) {
		(void)v;
		if (!strncmp(name, "peak_", 5) || !strncmp(name, "roof_", 5))
			json_object_del(opts, name);
	}
	char *otxt = opts ? json_dumps(opts, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(opts);
	struct ks_error e = {0};
	if (!st->task_hash[0] && ks_task_hash(st->task, st->task_hash, &e))
		snprintf(st->task_hash, sizeof(st->task_hash), "?");
	char compiler[512];
	snprintf(compiler, sizeof(compiler), "%s|%s|%s", ks_env_get()->cc ? ks_env_get()->cc : "",
		 ks_env_get()->cc_env ? ks_env_get()->cc_env : "", st->o.eval.cflags ? st->o.eval.cflags : "");
	struct ks_results_key k = {.source = j->c.source, .defines = j->c.ident,
				   .task_hash = st->task_hash, .backend = st->be->name,
				   .compiler = compiler, .options = otxt};
	ks_results_key_hex(&k, key);
	free(otxt);
}

/* evaluate the compiled job, or take an earlier run's identical evaluation from the
 * results cache (not with --fresh); a new evaluation goes into the cache */
static int evaluate_cached(struct ks_run_state *st, struct job *j, struct ks_eval_result *res,
			   struct ks_error *e)
{
	if (!st->results_tried && !st->o.fresh) {
		struct ks_error oe = {0};
		st->results_tried = 1;
		if (ks_results_open(&st->results, &oe))
			ks_warn("no results cache: %s", oe.msg);
	}
	char key[65];
	double age = 0;
	if (st->results) {
		cache_key(st, j, key);
		if (ks_results_get(st->results, key, res, &age)) {
			if (!st->cached++ || age < st->cached_age_min_s)
				st->cached_age_min_s = age;
			if (age > st->cached_age_max_s)
				st->cached_age_max_s = age;
			ks_info("%s: reused from the results cache (measured %.0f s ago)", j->c.title, age);
			return 0;
		}
	}
	int rc = ks_evaluator_run_artifact(st->ev, &j->art, res, e);
	struct ks_error pe = {0};
	if (!rc && st->results && ks_results_put(st->results, key, res, &pe))
		ks_warn("the results cache: %s", pe.msg);
	return rc;
}

static int evaluate_job(struct ks_run_state *st, struct job *j, struct ks_eval_result *res,
			struct ks_policy_outcome *oc, struct ks_error *e)
{
	const struct ks_policy_cand *c = &j->c;
	struct ks_store_candidate row = {
		.source = c->source, .language = st->be->lang,
		.parent_id = c->parent > 0 ? c->parent : 0, .node_id = c->node,
		.action = c->title, .policy = c->policy, .family = c->family,
		.knobs = c->knobs && c->knobs[0] ? c->knobs : "{}", .defines = c->ident,
		.round = st->round};
	double t_eval = ks_clock_s();
	/* a candidate recorded before a crash but never evaluated keeps its id */
	int64_t id = j->stored_id;
	int rc = id ? 0 : ks_store_add_candidate(st->store, &row, &id, e);
	if (rc)
		return rc;
	/* a candidate whose evaluation took the evaluator down twice is recorded as failed
	 * (by the store) instead of being tried again on every resume */
	int abandoned = 0;
	if ((rc = ks_store_begin_eval(st->store, id, &abandoned, e)))
		return rc;
	if (abandoned) {
		oc->candidate = (long)id;
		outcome_set(oc, KS_STATUS_RUNTIME_ERROR, 0);
		ks_warn("candidate %lld (%s): RUNTIME_ERROR, its evaluation took ksearch down twice",
			(long long)id, c->title);
		return 0;
	}
	if (j->pooled) {
		if (j->pool_rc) {
			if (e)
				*e = j->pool_err;
			return j->pool_rc;
		}
		*res = j->pres; /* handed over: recorded and released by the caller */
		j->pooled = 0;
		/* the worker compiled it: its log is the record */
		ks_store_finish_compile(st->store, id, res->status != KS_STATUS_COMPILE_ERROR,
					res->compile_log, NULL, 0, NULL);
	} else {
		if (!j->compiled) { /* the compiler could not be run: an infrastructure fault */
			if ((rc = st->be->compile(&(struct ks_compile_req){
							  .task = st->task, .source = c->source,
							  .defines = c->defines,
							  .flags = st->o.eval.cflags},
						  &j->art, e)))
				return rc;
			j->compiled = 1;
		}
		ks_store_finish_compile(st->store, id, j->art.ok, ks_buf_str(&j->art.log),
					j->art.resources, j->compile_ms, NULL);
		if ((rc = evaluate_cached(st, j, res, e)))
			return rc;
	}
	rc = ks_run_record(st, id, "search", res, e);
	if (!rc)
		record_times(st, id, j, res, t_eval, ks_clock_s() - t_eval);
	oc->candidate = (long)id;
	oc->res = res;
	outcome_set(oc, res->status, res->speedup);
	if (oc->passed)
		ks_info("candidate %lld (%s): PASSED %.3fx", (long long)id, c->title, oc->score);
	else
		ks_info("candidate %lld (%s): %s %.200s", (long long)id, c->title,
			ks_status_name(res->status), failure_reason(res));
	return rc;
}

/* ---- workers: a batch evaluated concurrently, recorded in proposal order --------------- */

static void pool_evaluate(struct ks_run_state *st, struct job *js, int n)
{
	struct ks_pool_job pj[KS_POLICY_MAX_PROPOSALS];
	struct ks_eval_result res[KS_POLICY_MAX_PROPOSALS];
	int map[KS_POLICY_MAX_PROPOSALS], m = 0;
	for (int i = 0; i < n; i++) {
		if (js[i].stored_id && js[i].has_result)
			continue;
		pj[m] = (struct ks_pool_job){.task = st->o.task, .opts = &st->o.eval,
					     .source = js[i].c.source, .path = js[i].c.path,
					     .defines = js[i].c.defines,
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

/* ---- what this process has evaluated or replayed (repeats are told apart) ------------ */

static int seen_has(const struct ks_run_state *st, int64_t id)
{
	for (int i = 0; i < st->nseen; i++)
		if (st->seen[i] == id)
			return 1;
	return 0;
}

static void seen_add(struct ks_run_state *st, int64_t id)
{
	if (st->nseen == st->cseen) {
		int c = st->cseen ? 2 * st->cseen : 64;
		int64_t *v = realloc(st->seen, (size_t)c * sizeof(*v));
		if (!v)
			return; /* only costs a replay where a repeat would be reported */
		st->seen = v;
		st->cseen = c;
	}
	st->seen[st->nseen++] = id;
}

/* ---- the driver --------------------------------------------------------------------- */

static void set_stopped(struct ks_run_state *st, const char *why)
{
	snprintf(st->stopped, sizeof(st->stopped), "%s", why);
	ks_info("search phase ended after %d of %d candidates: %s", st->evaluated, st->o.budget,
		why);
}

/* What the loop checks before asking for more: 1 when the phase must end (stopped set). */
static int must_stop(struct ks_run_state *st)
{
	if (ks_run_stop_requested()) {
		set_stopped(st, "interrupted (Ctrl-C)");
		return 1;
	}
	if (st->o.time_limit_s > 0 && ks_clock_s() - st->t0 > st->o.time_limit_s) {
		char why[64];
		snprintf(why, sizeof(why), "--time-limit of %g s reached", st->o.time_limit_s);
		set_stopped(st, why);
		return 1;
	}
	return 0;
}

/* replay, report a repeat, or evaluate one job; then count it and tell the policy */
static int settle_job(struct ks_run_state *st, struct job *j, struct ks_error *e)
{
	struct ks_policy_outcome oc = {.candidate = -1};
	struct ks_eval_result res;
	int have_res = 0, counted = 1, rc = 0;
	memset(&res, 0, sizeof(res));
	if (j->stored_id && j->has_result) {
		outcome_from_store(st, j->stored_id, &oc);
		if (j->seen) {
			oc.duplicate_of = (long)j->stored_id;
			counted = 0;
			st->repeats++;
			ks_info("candidate %lld repeated (%s): not evaluated again",
				(long long)j->stored_id, j->c.title);
		} else {
			oc.replayed = 1;
			st->reused++;
		}
	} else {
		ks_run_progress_tick(st, "search", j->c.title, 0);
		rc = evaluate_job(st, j, &res, &oc, e);
		have_res = oc.res != NULL;
		if (rc)
			goto out;
	}
	if (counted) {
		st->repeats = 0;
		seen_add(st, oc.candidate);
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
	}
	rc = ks_policy_observe(&st->policy, &j->c, &oc, e);
	if (counted)
		ks_run_progress_tick(st, "search", j->c.title, 1);
out:
	if (have_res)
		ks_eval_result_release(&res);
	return rc;
}

static void snapshot(struct ks_run_state *st)
{
	struct ks_buf snap = KS_BUF_INIT;
	snap.cap = KS_STORE_MAX_SNAPSHOT;
	struct ks_error e = {0};
	if (ks_policy_snapshot(&st->policy, &snap, &e) == 0 && snap.len &&
	    (!st->last_snapshot || strcmp(st->last_snapshot, ks_buf_str(&snap)))) {
		int version;
		if (ks_store_add_snapshot(st->store, st->round, ks_buf_str(&snap), &version, &e) == 0) {
			free(st->last_snapshot);
			st->last_snapshot = ks_buf_detach(&snap, NULL);
		}
	}
	if (e.msg[0])
		ks_warn("world-model snapshot: %s", e.msg);
	ks_buf_release(&snap);
}

struct batch {
	struct ks_run_state *st;
	struct job *js;
	struct ks_error *e;
};

static void batch_compile(void *ctx, int i)
{
	compile_job(&((struct batch *)ctx)->js[i]);
}

/* settle in proposal order: the policy sees outcomes in the same sequence on every run with
 * this seed; a Ctrl-C leaves the rest of the batch unevaluated and unobserved (the run
 * ends; a resume proposes them again) */
static int batch_settle(void *ctx, int i)
{
	struct batch *b = ctx;
	struct job *j = &b->js[i];
	if (ks_run_stop_requested() && !j->pooled && !(j->stored_id && j->has_result))
		return 0;
	return settle_job(b->st, j, b->e);
}

/* one batch: look up, compile, evaluate (here or on the pool), settle in proposal order */
static int run_batch(struct ks_run_state *st, const struct ks_policy_cand *cands, int n,
		     struct ks_error *e)
{
	struct job *js = calloc((size_t)n, sizeof(*js));
	if (!js)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	int compile[KS_ROUND_MAX] = {0};
	st->batches++;
	for (int i = 0; i < n; i++) {
		struct job *j = &js[i];
		j->st = st;
		j->c = cands[i];
		if (!j->c.ident)
			j->c.ident = "";
		ks_artifact_init(&j->art);
		ks_store_find_candidate(st->store, j->c.source, j->c.ident, &j->stored_id,
					&j->has_result, NULL);
		j->seen = j->stored_id && j->has_result && seen_has(st, j->stored_id);
		/* workers compile for themselves; here only for local evaluation */
		compile[i] = !(j->stored_id && j->has_result) && !st->pool;
	}
	if (st->pool)
		pool_evaluate(st, js, n); /* the whole batch, before any is settled */
	struct batch b = {.st = st, .js = js, .e = e};
	struct ks_round_ops ops = {.compile = batch_compile, .settle = batch_settle, .ctx = &b};
	int rc = ks_round_run(n, compile, ks_backend_timing_tolerates_host_load(st->be), &ops);
	for (int i = 0; i < n; i++) {
		ks_artifact_release(&js[i].art);
		if (js[i].pooled)
			ks_eval_result_release(&js[i].pres);
	}
	free(js);
	return rc;
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
	if (jobs > KS_POLICY_MAX_PROPOSALS)
		jobs = KS_POLICY_MAX_PROPOSALS;
	for (;;) {
		int left = st->o.budget - st->evaluated;
		if (left <= 0) {
			snprintf(st->stopped, sizeof(st->stopped), "budget");
			break;
		}
		if (must_stop(st))
			break;
		struct ks_policy_cand cands[KS_POLICY_MAX_PROPOSALS];
		struct ks_policy_stop why;
		int n = 0;
		if ((rc = ks_policy_propose(&st->policy, cands, jobs < left ? jobs : left, &n, &why,
					    e)))
			return rc;
		snapshot(st); /* the policy's document as it proposed (after a model's init or edit) */
		if (n == 0) {
			/* a policy ends only for a reason it names; a Ctrl-C during its model call
			 * is the more useful one to report */
			if (!must_stop(st))
				set_stopped(st, why.reason);
			break;
		}
		if ((rc = run_batch(st, cands, n, e)))
			return rc;
		snapshot(st);
		if (st->repeats >= MAX_REPEATS) {
			set_stopped(st, "the policy proposed only candidates evaluated already, "
					"50 in a row");
			break;
		}
	}
	snapshot(st);
	return 0;
}
