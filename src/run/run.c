/* A search run: options, store, task, backend, spec and policy set up here; the search
 * phase is the driver's (loop.c), the final re-measurement final.c's; then the reports. */
#include "ksearch/run.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ksearch/backend.h"
#include "ksearch/knowledge.h"
#include "ksearch/log.h"
#include "ksearch/report.h"
#include "ksearch/store.h"
#include "ksearch/worker.h"
#include "run/run_internal.h"
#include "search/space.h"
#include "eval/result_cache.h"
#include "util/clock.h"
#include "util/fs.h"

static volatile sig_atomic_t stop_requested;

void ks_run_request_stop(void)
{
	stop_requested = 1;
}

int ks_run_stop_requested(void)
{
	return stop_requested;
}

/* src/run/final.c's name for ks_clock_s: it switches to ks_clock_s with the run-final
 * split (issue 41), and this goes */
double ks_run_now(void)
{
	return ks_clock_s();
}

/* ---- setup ------------------------------------------------------------------------ */

static int config_json(const struct ks_run_opts *o, struct ks_buf *out)
{
	json_t *c = json_object();
	json_object_set_new(c, "task", json_string(o->task));
	json_object_set_new(c, "backend", json_string(o->backend));
	json_object_set_new(c, "strategy", json_string(o->strategy));
	json_object_set_new(c, "policy", json_string(o->policy));
	json_object_set_new(c, "spec", json_string(o->spec ? o->spec : "auto"));
	json_object_set_new(c, "budget", json_integer(o->budget));
	json_object_set_new(c, "seed", json_integer((json_int_t)o->seed));
	json_object_set_new(c, "time_limit_s", json_real(o->time_limit_s));
	json_object_set_new(c, "jobs", json_integer(o->jobs));
	json_object_set_new(c, "final_top", json_integer(o->final_top));
	json_object_set_new(c, "timeout_s", json_real(o->eval.timeout_s));
	json_object_set_new(c, "memory_limit", json_integer((json_int_t)o->eval.memory_limit));
	json_object_set_new(c, "min_time_s", json_real(o->eval.min_time_s));
	json_object_set_new(c, "threads", json_integer(o->eval.threads));
	json_object_set_new(c, "cflags", o->eval.cflags ? json_string(o->eval.cflags) : json_null());
	json_object_set_new(c, "workloads",
			    o->eval.workloads ? json_string(o->eval.workloads) : json_null());
	{ /* the LLM options (null when unused), never the key */
#define LLM_STR(key, v) json_object_set_new(c, key, (v) ? json_string(v) : json_null())
		LLM_STR("llm_base_url", o->llm_base_url);
		LLM_STR("llm_model", o->llm_model);
		LLM_STR("llm_cmd", o->llm_cmd);
		LLM_STR("llm_replay", o->llm_replay);
		LLM_STR("llm_reasoning_effort", o->llm_reasoning_effort);
		LLM_STR("prompts_dir", o->prompts_dir);
		LLM_STR("context", o->context);
		LLM_STR("llm_prices", o->llm_prices);
#undef LLM_STR
		json_object_set_new(c, "llm_max_calls", json_integer(o->llm_max_calls));
		json_object_set_new(c, "llm_max_failures", json_integer(o->llm_max_failures));
		json_object_set_new(c, "llm_max_cost", json_real(o->llm_max_cost));
		json_object_set_new(c, "llm_temperature", json_real(o->llm_temperature));
		json_object_set_new(c, "llm_max_tokens", json_integer(o->llm_max_tokens));
		json_object_set_new(c, "llm_timeout_s", json_real(o->llm_timeout_s));
	}
	char *s = json_dumps(c, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(c);
	if (!s)
		return KS_ENOMEM;
	int rc = ks_buf_adds(out, s);
	free(s);
	return rc;
}

/* restore the options a run was started with (resume continues the same run) */
static int config_restore(struct ks_run_state *st, const char *json, struct ks_error *e)
{
	json_error_t je;
	json_t *c = json_loads(json, 0, &je);
	if (!c)
		return ks_error_set(e, KS_EPARSE, "run config is not JSON: %s", je.text);
	struct ks_run_opts *o = &st->o;
	const char *s;
#define RESTORE_STR(key, field)                                                          \
	if ((s = json_string_value(json_object_get(c, key))))                            \
		o->field = st->strs[st->nstrs++] = strdup(s);
	RESTORE_STR("task", task);
	RESTORE_STR("backend", backend);
	RESTORE_STR("strategy", strategy);
	RESTORE_STR("policy", policy);
	RESTORE_STR("spec", spec);
	RESTORE_STR("cflags", eval.cflags);
	RESTORE_STR("workloads", eval.workloads);
	RESTORE_STR("llm_base_url", llm_base_url);
	RESTORE_STR("llm_model", llm_model);
	RESTORE_STR("llm_cmd", llm_cmd);
	RESTORE_STR("llm_replay", llm_replay);
	RESTORE_STR("llm_reasoning_effort", llm_reasoning_effort);
	RESTORE_STR("prompts_dir", prompts_dir);
	RESTORE_STR("context", context);
	RESTORE_STR("llm_prices", llm_prices);
#undef RESTORE_STR
	json_t *v;
	if ((v = json_object_get(c, "budget")))
		o->budget = (int)json_integer_value(v);
	if ((v = json_object_get(c, "seed")))
		o->seed = (uint64_t)json_integer_value(v);
	if ((v = json_object_get(c, "final_top")))
		o->final_top = (int)json_integer_value(v);
	if ((v = json_object_get(c, "timeout_s")))
		o->eval.timeout_s = json_number_value(v);
	if ((v = json_object_get(c, "memory_limit")))
		o->eval.memory_limit = (size_t)json_integer_value(v);
	if ((v = json_object_get(c, "min_time_s")))
		o->eval.min_time_s = json_number_value(v);
	if ((v = json_object_get(c, "threads")))
		o->eval.threads = (int)json_integer_value(v);
	if ((v = json_object_get(c, "llm_max_calls")))
		o->llm_max_calls = (long)json_integer_value(v);
	if ((v = json_object_get(c, "llm_max_failures")))
		o->llm_max_failures = (int)json_integer_value(v);
	if ((v = json_object_get(c, "llm_max_cost")))
		o->llm_max_cost = json_number_value(v);
	if ((v = json_object_get(c, "llm_temperature")))
		o->llm_temperature = json_number_value(v);
	if ((v = json_object_get(c, "llm_max_tokens")))
		o->llm_max_tokens = (long)json_integer_value(v);
	if ((v = json_object_get(c, "llm_timeout_s")))
		o->llm_timeout_s = json_number_value(v);
	json_decref(c);
	return 0;
}

/* --resume with options that differ from the run's own: refused, naming the difference */
static int resume_conflict(const struct ks_run_opts *user, const struct ks_run_opts *run,
			   struct ks_error *e)
{
	if (user->given & KS_RUN_GIVEN_OUT)
		return ks_error_set(e, KS_EINVAL, "--out cannot be used with --resume (the run stays "
						  "in its folder)");
	static const struct {
		unsigned bit;
		const char *name;
		size_t off;
	} strs[] = {
		{KS_RUN_GIVEN_TASK, "task", offsetof(struct ks_run_opts, task)},
		{KS_RUN_GIVEN_BACKEND, "--backend", offsetof(struct ks_run_opts, backend)},
		{KS_RUN_GIVEN_STRATEGY, "--strategy", offsetof(struct ks_run_opts, strategy)},
		{KS_RUN_GIVEN_POLICY, "--policy", offsetof(struct ks_run_opts, policy)},
	};
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		const char *u = *(const char *const *)((const char *)user + strs[i].off);
		const char *r = *(const char *const *)((const char *)run + strs[i].off);
		if ((user->given & strs[i].bit) && u && r && strcmp(u, r))
			return ks_error_set(e, KS_EINVAL,
					    "%s '%s' differs from the run's '%s': a resumed run keeps its "
					    "options (resume without it, or start a new run)",
					    strs[i].name, u, r);
	}
	if ((user->given & KS_RUN_GIVEN_BUDGET) && user->budget != run->budget)
		return ks_error_set(e, KS_EINVAL,
				    "--budget %d differs from the run's budget %d: a resumed run keeps "
				    "its options (resume without it, or start a new run)",
				    user->budget, run->budget);
	return 0;
}

/* runs/<task>-<time>, with -2, -3, ... when a run started in the same second took the
 * name: mkdir is the one atomic claim, so two runs never share a folder */
static int fresh_dir(struct ks_run_state *st, struct ks_error *e)
{
	const struct ks_run_opts *o = &st->o;
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	char stamp[32];
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	const char *task = o->task ? o->task : "";
	size_t len = strlen(task);
	while (len > 1 && task[len - 1] == '/')
		len--; /* "./my-task/" is the task folder my-task */
	const char *base = task;
	for (size_t i = 0; i < len; i++)
		if (task[i] == '/' && i + 1 < len)
			base = task + i + 1;
	int blen = (int)(task + len - base);
	int rc = ks_mkdir_p("runs", e);
	for (int n = 1; !rc && n < 1000; n++) {
		char suffix[16] = "";
		if (n > 1)
			snprintf(suffix, sizeof(suffix), "-%d", n);
		snprintf(st->dir, sizeof(st->dir), "runs/%.*s-%s%s", blen ? blen : 4,
			 blen ? base : "task", stamp, suffix);
		if (mkdir(st->dir, 0777) == 0) {
			st->made_dir = 1;
			return 0;
		}
		if (errno != EEXIST)
			return ks_error_set(e, KS_ESYS, "create '%s': %s", st->dir, strerror(errno));
	}
	return rc ? rc : ks_error_set(e, KS_ESYS, "no free run folder name under runs/ for '%s'", st->dir);
}

/* the files of a run's store in dir (and its lock, with_lock) */
static void remove_store_files(const char *dir, int with_lock)
{
	static const char *const files[] = {"run.db", "run.db-wal", "run.db-shm", "run.db-journal",
					    "run.lock"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) - !with_lock; i++) {
		char p[PATH_MAX + 32];
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		unlink(p);
	}
}

/* 1 when dir's store holds no run row and no candidate: a start killed between creating the
 * store and recording the run (task, spec and policy are set up in between), which neither
 * --resume nor a report can use */
static int start_interrupted(const char *dir)
{
	struct ks_store *s = NULL;
	struct ks_store_run *run = NULL;
	struct ks_error e = {0};
	int64_t n = 1;
	if (ks_store_open(dir, 0, &s, &e))
		return 0;
	int rc = ks_store_get_run(s, &run, &e);
	int empty = rc == KS_ENOTFOUND && !ks_store_count_evaluated(s, &n, &e) && n == 0;
	ks_store_free(run);
	ks_store_close(s);
	return empty;
}

/* A run that failed before its first candidate leaves nothing behind: the folder it
 * created goes, or only its own files when --out named an existing folder. */
static void forget_empty_run(struct ks_run_state *st)
{
	if (st->made_dir) {
		ks_rm_rf(st->dir);
		if (!st->o.out_dir)
			rmdir("runs"); /* only when no other run is in it */
		return;
	}
	remove_store_files(st->dir, 1);
}

/* 1 when the store holds no candidate (nothing a report or --resume could use) */
static int run_is_empty(struct ks_run_state *st)
{
	if (!st->store)
		return 1;
	struct ks_store_candidate *list = NULL;
	size_t n = 0;
	if (ks_store_list_candidates(st->store, KS_STORE_ORDER_ID, &list, &n, NULL))
		return 0;
	ks_store_free(list);
	return n == 0;
}

int ks_run_default_jobs(const struct ks_backend_i *be)
{
	/* Each round's proposals are chosen before their results are known, so large rounds
	 * make the world model guess; 2 keeps two compiles going.  Where kernels are timed on
	 * a device, compiles on the host's cores (nvcc: seconds each) do not disturb the
	 * timing and dominate a round: half the cores, at most 8, compile at once. */
	if (ks_backend_on_host(be))
		return 2;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	long n = cpus / 2 > 8 ? 8 : cpus / 2;
	return n < 2 ? 2 : (int)n;
}

static int open_store(struct ks_run_state *st, struct ks_error *e)
{
	struct ks_run_opts *o = &st->o;
	int rc;
	if (o->resume_dir) {
		snprintf(st->dir, sizeof(st->dir), "%s", o->resume_dir);
		/* before the lock, which would create DIR/run.lock: a folder without a run stays
		 * as it was (the message is ksearch report's) */
		char db[PATH_MAX + 16];
		snprintf(db, sizeof(db), "%s/run.db", st->dir);
		if (!ks_path_exists(db))
			return ks_error_set(e, KS_ENOTFOUND, "no run database in '%s' (expected %s)",
					    st->dir, db);
		if ((rc = ks_run_lock(st->dir, &st->lock_fd, e)) ||
		    (rc = ks_store_open(st->dir, 0, &st->store, e)) ||
		    (rc = ks_store_check(st->store, e)))
			return ks_error_wrap(e, "resume '%s'", st->dir);
		struct ks_store_run *run;
		if ((rc = ks_store_get_run(st->store, &run, e)))
			return rc == KS_ENOTFOUND && start_interrupted(st->dir)
				       ? ks_error_set(e, KS_ENOTFOUND,
						      "'%s' holds no run: its start was stopped before "
						      "the run was recorded; start it again with 'ksearch "
						      "run TASK --out %s'",
						      st->dir, st->dir)
				       : rc;
		struct ks_run_opts user = *o;
		rc = config_restore(st, run->config, e);
		st->finished = run->status && !strcmp(run->status, "finished");
		ks_store_free(run);
		st->resumed = 1;
		if (!rc && (rc = resume_conflict(&user, o, e)))
			ks_error_wrap(e, "resume '%s'", st->dir);
		return rc;
	}
	if (o->out_dir) {
		snprintf(st->dir, sizeof(st->dir), "%s", o->out_dir);
		st->made_dir = !ks_is_dir(st->dir);
	} else if ((rc = fresh_dir(st, e))) {
		return rc;
	}
	char db[PATH_MAX + 16];
	snprintf(db, sizeof(db), "%s/run.db", st->dir);
	int held = ks_path_exists(db);
	if ((!held || !ks_run_lock(st->dir, &st->lock_fd, NULL)) && held &&
	    start_interrupted(st->dir)) {
		ks_info("'%s' holds only a start that was stopped before its run was recorded; "
			"starting again there", st->dir);
		remove_store_files(st->dir, 0);
		held = 0;
	}
	if (!held && st->lock_fd < 0 &&
	    ((rc = ks_mkdir_p(st->dir, e)) || (rc = ks_run_lock(st->dir, &st->lock_fd, e))))
		return rc;
	if (held)
		return ks_error_set(e, KS_EINVAL,
				    "'%s' already holds a run: continue it with --resume %s, or "
				    "choose another --out",
				    st->dir, st->dir);
	if ((rc = ks_mkdir_p(st->dir, e)) || (rc = ks_store_open(st->dir, 1, &st->store, e)))
		return rc;
	st->fresh_store = 1;
	return 0;
}

static int write_run_row(struct ks_run_state *st, struct ks_error *e)
{
	struct ks_buf cfg = KS_BUF_INIT;
	config_json(&st->o, &cfg);
	char hash[65];
	int rc = ks_task_hash(st->task, hash, e);
	if (rc == 0) {
		struct ks_store_run run = {
			.task = st->task->name, .task_hash = hash, .backend = st->o.backend,
			.strategy = st->o.strategy, .policy = st->o.policy, .seed = st->o.seed,
			.budget = st->o.budget, .config = ks_buf_str(&cfg)};
		rc = ks_store_write_run(st->store, &run, e);
	}
	ks_buf_release(&cfg);
	if (rc)
		return rc;
	const struct ks_task *t = st->task;
	for (int pass = 0, k = 0; pass < 2 && !rc; pass++) {
		int n = pass ? t->nchecks : t->nworkloads;
		for (int i = 0; i < n && !rc; i++) {
			const struct ks_workload *w = pass ? &t->checks[i] : &t->workloads[i];
			if (!ks_workload_for_backend(w, st->be->name))
				continue;
			/* --workloads: the timed ones the search tunes for */
			if (!pass && !ks_eval_workload_selected(st->o.eval.workloads, k++))
				continue;
			struct ks_buf label = KS_BUF_INIT, params = KS_BUF_INIT;
			ks_workload_label(t, w, &label);
			ks_buf_adds(&params, "{");
			for (int p = 0; p < t->nparams; p++)
				ks_buf_addf(&params, "%s\"%s\": %.17g", p ? ", " : "",
					    t->params[p].name, w->values[p]);
			ks_buf_adds(&params, "}");
			struct ks_store_workload sw = {.index = pass ? t->nworkloads + i : i,
						       .label = ks_buf_str(&label),
						       .params = ks_buf_str(&params),
						       .is_check = pass};
			rc = ks_store_add_workload(st->store, &sw, e);
			ks_buf_release(&label);
			ks_buf_release(&params);
		}
	}
	return rc;
}

/* --spec auto on a GPU backend: the spec of the device the candidates run on, read here
 * when it is on this machine (the first of --devices, else $KSEARCH_DEVICE).  Its theoretical
 * peaks give the roofline floors and SUSPICIOUS.  Not fatal: without a device the backend
 * says so itself, and workers started by --worker-cmd may be on another machine. */
static void device_spec(struct ks_run_state *st)
{
	if (st->o.worker_cmd) {
		ks_info("no roofline floors: the devices are behind --worker-cmd (pass --spec NAME "
			"for them)");
		return;
	}
	struct ks_error de = {0};
	if (ks_backend_device_spec(st->o.backend, st->o.devices, &st->spec, &de)) {
		ks_debug("no device spec: %s", de.msg);
		ks_spec_release(&st->spec);
		ks_spec_init(&st->spec);
		return;
	}
	st->have_spec = 1;
	ks_roofline_fill(&st->spec, &st->o.eval);
}

static int load_spec(struct ks_run_state *st, struct ks_error *e)
{
	ks_spec_init(&st->spec);
	const char *name = st->o.spec;
	int rc;
	if (!name || !name[0] || !strcmp(name, "auto")) {
		if (!ks_backend_on_host(st->be)) {
			device_spec(st);
			return 0;
		}
		rc = ks_spec_detect_host(&st->spec, e);
	} else {
		rc = ks_spec_load(name, &st->spec, e);
		if (!rc)
			rc = ks_backend_spec_fits(st->be, &st->spec, e);
	}
	if (rc)
		return ks_error_wrap(e, "hardware spec");
	st->have_spec = 1;
	ks_roofline_fill(&st->spec, &st->o.eval);
	return 0;
}

/* ---- workers ------------------------------------------------------------------------ */

/* --devices / --worker-cmd: one worker per device evaluates the search's batches */
static int start_pool(struct ks_run_state *st, struct ks_error *e)
{
	int devs[64], ndev = 0;
	if (st->o.devices && ks_pool_parse_devices(st->o.devices, devs, 64, &ndev, e))
		return KS_EINVAL;
	struct ks_pool_opts po;
	ks_pool_opts_init(&po);
	po.backend = st->be->name;
	po.devices = ndev ? devs : NULL;
	po.ndevices = ndev;
	po.worker_cmd = st->o.worker_cmd;
	ks_run_progress_tick(st, "setup", "starting the workers", 0);
	int rc = ks_pool_new(&po, &st->pool, e);
	if (rc == 0)
		ks_info("%d worker(s) evaluate the candidates", ks_pool_size(st->pool));
	return rc;
}

/* ---- the loop ----------------------------------------------------------------------- */

static int policy_budget_left(void *ctx)
{
	struct ks_run_state *st = ctx;
	if (ks_run_stop_requested() ||
	    (st->o.time_limit_s > 0 && ks_clock_s() - st->t0 > st->o.time_limit_s))
		return 0;
	return st->o.budget - st->evaluated;
}

/* 1 once Ctrl-C or --time-limit asks the run to stop: a policy waiting for a reply gives up */
static int policy_stopping(void *ctx)
{
	const struct ks_run_state *st = ctx;
	return ks_run_stop_requested() ||
	       (st->o.time_limit_s > 0 && ks_clock_s() - st->t0 > st->o.time_limit_s);
}

static void policy_progress(void *ctx, const char *what)
{
	ks_run_progress_tick(ctx, "search", what, 0);
}

/* the mean per candidate of what the search phase evaluated here */
static void run_times(const struct ks_run_state *st, struct ks_run_times *out)
{
	memset(out, 0, sizeof(*out));
	out->n = st->ntimed;
	out->by_workers = st->pool != NULL; /* the phases are timed inside the workers */
	if (st->ntimed < 1 || st->pool)
		return;
	double k = 1.0 / st->ntimed;
	out->total_s = st->wall_sum * k;
	out->compile_s = st->compile_sum * k;
	out->other_s = st->other_sum * k;
	for (int p = 0; p < KS_PHASE_COUNT; p++)
		out->phase_s[p] = st->phase_sum[p] * k;
	for (int p = 0; p < KS_PART_COUNT; p++)
		out->part_s[p] = st->part_sum[p] * k;
	out->cached_bytes = st->cached_sum * k;
}

static void policy_usage(struct ks_run_state *st)
{
	ks_policy_usage(&st->policy, &st->usage);
	if (st->usage.calls && st->usage.tokens_unknown >= st->usage.calls)
		ks_info("llm: %ld calls (%ld failed), tokens unknown (not reported), $%.4f",
			st->usage.calls, st->usage.failures, st->usage.cost_usd);
	else if (st->usage.calls)
		ks_info("llm: %ld calls (%ld failed), %ld prompt + %ld completion tokens%s, $%.4f",
			st->usage.calls, st->usage.failures, st->usage.prompt_tokens,
			st->usage.completion_tokens,
			st->usage.tokens_unknown ? " (some calls did not report theirs)" : "",
			st->usage.cost_usd);
}

void ks_run_progress_tick(struct ks_run_state *st, const char *phase, const char *action,
			  int finished)
{
	if (!st->progress)
		return;
	struct ks_run_progress p = {
		.phase = phase, .evaluated = st->evaluated, .budget = st->o.budget,
		.passed = st->passed, .failed = st->failed, .best_speedup = st->best,
		.action = action, .finished = finished, .last_status = st->last_status, .last_speedup = st->last_speedup,
		.last_candidate = st->last_candidate, .elapsed_s = ks_clock_s() - st->t0,
		.eta_s = -1};
	int fresh = st->evaluated - st->reused;
	if (fresh > 0 && st->evaluated < st->o.budget)
		p.eta_s = (ks_clock_s() - st->t_search) / fresh * (st->o.budget - st->evaluated);
	st->progress(&p, st->progress_ctx);
}

static int open_backend(struct ks_run_state *st, struct ks_error *e)
{
	/* with workers all evaluation happens on them: this machine need not have the
	 * backend's device (e.g. a laptop driving GPU workers over ssh) */
	if (st->o.devices || st->o.worker_cmd) {
		if ((st->be = ks_backend_find(st->o.backend)))
			return 0;
		return ks_backend_get(st->o.backend, &st->be, e); /* the unknown-name message */
	}
	int rc = ks_backend_get(st->o.backend, &st->be, e);
	/* a search needs more than the backend's probe: candidate kernels that can run (mlx's
	 * CPU build runs its native baselines only), else every compile would fail alike */
	char why[1024] = "";
	if (!rc && (rc = ks_backend_probe_kernels(st->be, why, sizeof(why))))
		return ks_error_set(e, rc, "backend '%s' cannot run candidate kernels here: %s",
				    st->be->name, why);
	return rc;
}

/* the summary of a finished run, read from its report (one source for both: the best is
 * the one the final crowned, on its re-measured figure) */
static int summary_from_report(struct ks_run_state *st, struct ks_run_result *r,
			       struct ks_error *e)
{
	struct ks_buf out;
	ks_buf_init(&out, (size_t)256 << 20);
	int rc = ks_report_write(st->dir, KS_REPORT_JSON, &out, e);
	json_t *d = rc ? NULL : json_loads(ks_buf_str(&out), 0, NULL);
	ks_buf_release(&out);
	if (rc)
		return rc;
	if (!d)
		return ks_error_set(e, KS_EPARSE, "the report of '%s' is not JSON", st->dir);
	const char *v = json_string_value(json_object_get(d, "task"));
	snprintf(r->task, sizeof(r->task), "%s", v ? v : "");
	st->evaluated = (int)json_integer_value(json_object_get(d, "evaluated"));
	st->passed = (int)json_integer_value(json_object_get(d, "passed"));
	json_t *b = json_object_get(d, "best");
	if (json_is_object(b)) {
		const char *s;
		r->best_candidate = (long)json_integer_value(json_object_get(b, "candidate"));
		r->best_speedup = json_number_value(json_object_get(b, "speedup_vs_baseline"));
		r->best_remeasured = (s = json_string_value(json_object_get(b, "phase"))) &&
				     !strcmp(s, "final");
		if ((s = json_string_value(json_object_get(b, "library")))) {
			snprintf(r->library, sizeof(r->library), "%s", s);
			r->best_library_speedup =
				json_number_value(json_object_get(b, "speedup_vs_library"));
		}
		s = json_string_value(json_object_get(b, "action"));
		snprintf(r->best_action, sizeof(r->best_action), "%s", s ? s : "");
		s = json_string_value(json_object_get(b, "source_file"));
		snprintf(r->best_source, sizeof(r->best_source), "%s", s ? s : "");
	}
	v = json_string_value(json_object_get(d, "final_verdict"));
	snprintf(r->final_verdict, sizeof(r->final_verdict), "%s", v ? v : "");
	r->final_noisy = json_is_true(json_object_get(d, "noisy"));
	v = json_string_value(json_object_get(d, "noise_reason"));
	snprintf(r->final_noise, sizeof(r->final_noise), "%s", v ? v : "");
	json_decref(d);
	return 0;
}

/* --resume of a run that ran to its end: nothing is evaluated or re-measured again (that
 * would change its result); its reports are written anew from the store */
static int finished_run(struct ks_run_state *st, struct ks_run_result *r, struct ks_error *e)
{
	ks_info("run %s is finished: writing its reports again, evaluating nothing", st->dir);
	r->was_finished = 1;
	snprintf(st->stopped, sizeof(st->stopped), "the run was already finished; nothing evaluated");
	struct ks_error re = {0};
	if (ks_report_write_files(st->dir, &re))
		ks_warn("reports: %s", re.msg);
	return summary_from_report(st, r, e);
}

/* what a run needs before its search: the task, the backend, the spec, the policy, the run's
 * row in its store, and the evaluator here or the workers */
static int run_prepare(struct ks_run_state *st, struct ks_error *e)
{
	int rc;
	if (!st->o.task)
		return ks_error_set(e, KS_EINVAL, "no task given");
	if ((rc = ks_task_load(st->o.task, &st->task, e)) ||
	    (rc = ks_assertions_apply(st->task, e)) || (rc = ks_policy_check(&st->o, e)) ||
	    (!st->be && (rc = open_backend(st, e))))
		return rc;
	if (st->o.jobs <= 0)
		st->o.jobs = ks_run_default_jobs(st->be);
	if ((rc = ks_eval_validate_workloads(st->o.eval.workloads,
					     ks_task_timed_count(st->task, st->be->name), e)))
		return rc;
	ks_run_progress_tick(st, "setup", "detecting the hardware", 0);
	if ((rc = load_spec(st, e)))
		return rc;
	struct ks_policy_env env = {.o = &st->o, .task = st->task, .be = st->be,
				    .spec = st->have_spec ? &st->spec : NULL, .store = st->store,
				    .resumed = st->resumed, .round = &st->round,
				    .budget_left = policy_budget_left, .progress = policy_progress,
				    .ctx = st, .run_dir = st->dir, .stopping = policy_stopping};
	if ((rc = ks_policy_open(st->o.policy, &env, &st->policy, e)) ||
	    (!st->resumed && (rc = write_run_row(st, e))))
		return rc;
	ks_store_set_run_status(st->store, "running", NULL);
	ks_info("run %s: task %s, backend %s, policy %s, budget %d", st->dir, st->task->name,
		st->be->name, st->o.policy, st->o.budget);
	if (st->o.eval.workloads && strcmp(st->o.eval.workloads, "all"))
		ks_info("tuning for timed workloads %s only (--workloads)", st->o.eval.workloads);
	ks_run_progress_tick(st, "setup", "compiling the reference and the baseline", 0);
	st->o.eval.backend = st->be->name;
	st->o.eval.seed = st->o.seed;
	if (st->o.devices || st->o.worker_cmd)
		return start_pool(st, e);
	return ks_evaluator_new(st->task, &st->o.eval, &st->ev, e);
}

/* the search phase, the final re-measurement, the reports */
static int run_phases(struct ks_run_state *st, struct ks_run_result *r, struct ks_error *e)
{
	st->t_search = ks_clock_s();
	int rc = ks_run_search(st, e);
	policy_usage(st);
	if (rc)
		return rc;
	/* why the search phase ended, for the report ("budget" when it ran to the end) */
	ks_store_add_event(st->store, "info", "stopped", st->stopped, NULL, NULL);
	double t_final = ks_clock_s();
	r->search_s = t_final - st->t_search;
	rc = ks_run_final(st, r, e);
	r->final_s = ks_clock_s() - t_final;
	if (rc)
		return rc;
	ks_store_set_run_status(st->store, stop_requested ? "interrupted" : "finished", NULL);
	ks_run_progress_tick(st, "done", "writing the reports", 0);
	struct ks_error re = {0};
	if (ks_report_write_files(st->dir, &re))
		ks_warn("reports: %s", re.msg);
	return 0;
}

/* r from the run's state (what finished_run read, or what this process did) */
static void run_result(const struct ks_run_state *st, struct ks_run_result *r)
{
	snprintf(r->run_dir, sizeof(r->run_dir), "%s", st->dir);
	if (st->task) /* else what summary_from_report read, or "" */
		snprintf(r->task, sizeof(r->task), "%s", st->task->name);
	snprintf(r->backend, sizeof(r->backend), "%s", st->o.backend ? st->o.backend : "");
	snprintf(r->strategy, sizeof(r->strategy), "%s", st->o.strategy ? st->o.strategy : "");
	snprintf(r->policy, sizeof(r->policy), "%s", st->o.policy ? st->o.policy : "");
	r->budget = st->o.budget;
	r->evaluated = st->evaluated;
	r->passed = st->passed;
	r->resumed = st->resumed;
	r->reused = st->reused;
	r->cached = st->cached;
	r->cached_age_min_s = st->cached_age_min_s;
	r->cached_age_max_s = st->cached_age_max_s;
	r->llm_calls = st->usage.calls;
	r->llm_prompt_tokens = st->usage.prompt_tokens;
	r->llm_completion_tokens = st->usage.completion_tokens;
	r->llm_tokens_unknown = st->usage.tokens_unknown;
	r->llm_cost = st->usage.cost_usd;
	r->uses_model = st->usage.calls > 0 || ks_policy_uses_model(st->o.policy);
	snprintf(r->stopped, sizeof(r->stopped), "%s", st->stopped);
	run_times(st, &r->times);
}

/* everything the run holds let go; a run that failed before it recorded anything leaves
 * nothing behind (only what this run created: never a folder or database that was there) */
static void run_close(struct ks_run_state *st, int rc, const struct ks_error *e,
		      struct ks_run_result *r)
{
	int forget = rc && !st->resumed && st->dir[0] &&
		     (st->fresh_store ? run_is_empty(st) : st->made_dir);
	if (rc && st->store && !forget)
		ks_store_add_event(st->store, "error", "run", e ? e->msg : "failed", NULL, NULL);
	if (forget || (rc && !st->store))
		r->run_dir[0] = '\0'; /* no run.db of this run to point at */
	ks_policy_close(&st->policy);
	free(st->seen);
	free(st->last_snapshot);
	if (st->ev)
		ks_evaluator_free(st->ev);
	ks_pool_free(st->pool);
	ks_results_close(st->results);
	if (st->have_spec)
		ks_spec_release(&st->spec);
	if (st->task)
		ks_task_free(st->task);
	if (st->store)
		ks_store_close(st->store);
	ks_run_unlock(st->lock_fd);
	if (forget)
		forget_empty_run(st);
	for (int i = 0; i < st->nstrs; i++)
		free(st->strs[i]);
	free(st);
}

int ks_run(const struct ks_run_opts *opts, ks_run_progress_fn progress, void *ctx,
	   struct ks_run_result *r, struct ks_error *e)
{
	struct ks_run_state *st = calloc(1, sizeof(*st));
	if (!st)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	memset(r, 0, sizeof(*r));
	r->best_candidate = -1;
	st->o = *opts;
	st->lock_fd = -1;
	st->progress = progress;
	st->progress_ctx = ctx;
	st->t0 = ks_clock_s();
	stop_requested = 0;
	/* a backend that cannot run here is said before the run folder exists (a resumed
	 * run's backend is known from its database only) */
	int rc = st->o.resume_dir ? 0 : open_backend(st, e);
	if (!rc)
		rc = open_store(st, e);
	if (!rc && st->finished)
		rc = finished_run(st, r, e);
	else if (!rc && !(rc = run_prepare(st, e)))
		rc = run_phases(st, r, e);
	run_result(st, r);
	run_close(st, rc, e, r);
	return rc;
}
