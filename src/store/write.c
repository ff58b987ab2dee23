/* Run store writes.  Each call is one statement in autocommit mode, that is one
 * transaction, committed (and, with synchronous=FULL, synced) before the call returns. */
#include "store/store_impl.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/hash.h"

#define NAME_MAX_ 4096 /* names and short tags written by ksearch itself */

#define BIND_TEXT(i, text, dflt, mode, cap, field)                                       \
	do {                                                                             \
		if ((rc = ks_store_bind_text(s, st, i, text, dflt, mode, cap, &dropped, field, \
					     e)))                                        \
			goto out;                                                        \
	} while (0)

/* step a write statement to completion; the autocommit transaction ends at the reset */
static int step_done(struct ks_store *s, sqlite3_stmt *st, const char *what, struct ks_error *e)
{
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		;
	int rc = step == SQLITE_DONE ? 0 : ks_store_dberr(s, e, what);
	if (rc && (sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_FOREIGNKEY))
		rc = ks_error_set(e, KS_EINVAL, "%s: refers to a missing candidate or workload",
				  what);
	sqlite3_reset(st);
	return rc;
}

int ks_store_write_run(struct ks_store *s, const struct ks_store_run *run, struct ks_error *e)
{
	sqlite3_stmt *st;
	long dropped = 0;
	char gen[128];
	int rc;
	if (!run)
		return ks_error_set(e, KS_EINVAL, "write run: no run");
	const char *id = run->id;
	if (!id) {
		time_t now = time(NULL);
		struct tm tm;
		gmtime_r(&now, &tm);
		size_t n = strftime(gen, sizeof(gen), "%Y%m%d-%H%M%S", &tm);
		snprintf(gen + n, sizeof(gen) - n, "-%.64s", run->task ? run->task : "run");
		id = gen;
	}
	pthread_mutex_lock(&s->mu);
	if ((rc = ks_store_stmt(s, KS_STMT_RUN_INSERT, &st, e)))
		goto out;
	BIND_TEXT(1, id, NULL, KS_TEXT_PLAIN, NAME_MAX_, "run id");
	BIND_TEXT(2, run->version, KS_VERSION, KS_TEXT_PLAIN, NAME_MAX_, "version");
	BIND_TEXT(3, run->task, "", KS_TEXT_PLAIN, NAME_MAX_, "task");
	BIND_TEXT(4, run->task_hash, "", KS_TEXT_PLAIN, NAME_MAX_, "task hash");
	BIND_TEXT(5, run->backend, "", KS_TEXT_PLAIN, NAME_MAX_, "backend");
	BIND_TEXT(6, run->strategy, "", KS_TEXT_PLAIN, NAME_MAX_, "strategy");
	BIND_TEXT(7, run->policy, "", KS_TEXT_PLAIN, NAME_MAX_, "policy");
	sqlite3_bind_int64(st, 8, (int64_t)run->seed);
	sqlite3_bind_int64(st, 9, run->budget);
	BIND_TEXT(10, run->config, "{}", KS_TEXT_JSON, KS_STORE_MAX_JSON, "config");
	BIND_TEXT(11, run->status, "running", KS_TEXT_PLAIN, NAME_MAX_, "status");
	sqlite3_bind_int64(st, 12, dropped);
	if ((rc = step_done(s, st, "write run", e)) &&
	    sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_PRIMARYKEY)
		rc = ks_error_set(e, KS_EINVAL, "write run: the run is already recorded");
out:
	ks_store_unlock(s);
	return rc;
}

int ks_store_set_run_status(struct ks_store *s, const char *status, struct ks_error *e)
{
	sqlite3_stmt *st;
	long dropped = 0;
	int rc;
	pthread_mutex_lock(&s->mu);
	if ((rc = ks_store_stmt(s, KS_STMT_RUN_STATUS, &st, e)))
		goto out;
	BIND_TEXT(1, status, NULL, KS_TEXT_PLAIN, NAME_MAX_, "status");
	if ((rc = step_done(s, st, "set run status", e)))
		goto out;
	if (sqlite3_changes(s->db) == 0)
		rc = ks_error_set(e, KS_ENOTFOUND, "set run status: no run recorded");
out:
	ks_store_unlock(s);
	return rc;
}

int ks_store_add_workload(struct ks_store *s, const struct ks_store_workload *w,
			  struct ks_error *e)
{
	sqlite3_stmt *st;
	long dropped = 0;
	int rc;
	pthread_mutex_lock(&s->mu);
	if ((rc = ks_store_stmt(s, KS_STMT_WORKLOAD_INSERT, &st, e)))
		goto out;
	sqlite3_bind_int(st, 1, w->index);
	BIND_TEXT(2, w->label, "", KS_TEXT_PLAIN, NAME_MAX_, "workload label");
	BIND_TEXT(3, w->params, "{}", KS_TEXT_JSON, KS_STORE_MAX_JSON, "workload params");
	sqlite3_bind_int(st, 4, w->is_check ? 1 : 0);
	rc = step_done(s, st, "add workload", e);
out:
	ks_store_unlock(s);
	return rc;
}

int ks_store_add_candidate(struct ks_store *s, const struct ks_store_candidate *c, int64_t *id,
			   struct ks_error *e)
{
	sqlite3_stmt *st;
	long dropped = 0;
	char hash[65];
	int rc;
	if (!c || !c->source || !c->language || !c->policy)
		return ks_error_set(e, KS_EINVAL, "add candidate: source, language and policy are required");
	ks_sha256_str_hex(c->source, hash);
	pthread_mutex_lock(&s->mu);
	if ((rc = ks_store_stmt(s, KS_STMT_CAND_INSERT, &st, e)))
		goto out;
	BIND_TEXT(1, c->source, NULL, KS_TEXT_SOURCE, KS_STORE_MAX_SOURCE, "candidate source");
	BIND_TEXT(2, hash, NULL, KS_TEXT_PLAIN, 64, "source hash");
	BIND_TEXT(3, c->language, NULL, KS_TEXT_PLAIN, NAME_MAX_, "language");
	if (c->parent_id > 0)
		sqlite3_bind_int64(st, 4, c->parent_id);
	if (c->node_id >= 0)
		sqlite3_bind_int64(st, 5, c->node_id);
	BIND_TEXT(6, c->action, "", KS_TEXT_REDACT, KS_STORE_MAX_LOG, "action");
	BIND_TEXT(7, c->policy, NULL, KS_TEXT_PLAIN, NAME_MAX_, "policy");
	BIND_TEXT(8, c->family, "", KS_TEXT_REDACT, NAME_MAX_, "family");
	BIND_TEXT(9, c->knobs, "{}", KS_TEXT_JSON, KS_STORE_MAX_JSON, "knobs");
	BIND_TEXT(10, c->defines, "", KS_TEXT_PLAIN, KS_STORE_MAX_LOG, "defines");
	sqlite3_bind_int(st, 11, c->round);
	sqlite3_bind_int64(st, 12, dropped);
	if ((rc = step_done(s, st, "add candidate", e)))
		goto out;
	if (id)
		*id = sqlite3_last_insert_rowid(s->db);
out:
	ks_store_unlock(s);
	return rc;
}

int ks_store_finish_compile(struct ks_store *s, int64_t id, int ok, const char *log,
			    const char *resources, double compile_ms, struct ks_error *e)
{
	sqlite3_stmt *st;
	long dropped = 0;
	int rc;
	pthread_mutex_lock(&s->mu);
	if ((rc = ks_store_stmt(s, KS_STMT_CAND_COMPILE, &st, e)))
		goto out;
	sqlite3_bind_int64(st, 1, id);
	BIND_TEXT(2, ok ? "ok" : "failed", NULL, KS_TEXT_PLAIN, 16, "compile status");
	BIND_TEXT(3, log, NULL, KS_TEXT_REDACT, KS_STORE_MAX_LOG, "compile log");
	BIND_TEXT(4, resources, NULL, KS_TEXT_REDACT, KS_STORE_MAX_LOG, "resources");
	ks_store_bind_double(st, 5, compile_ms);
	sqlite3_bind_int64(st, 6, dropped);
	if ((rc = step_done(s, st, "finish compile", e)))
		goto out;
	if (sqlite3_changes(s->db) == 0)
		rc = ks_error_set(e, KS_ENOTFOUND, "finish compile: no candidate %lld",
				  (long long)id);
out:
	ks_store_unlock(s);
	return rc;
}

static const char *phase_or_default(const char *phase)
{
	return phase ? phase : "search";
}

int ks_store_add_eval(struct ks_store *s, const struct ks_store_eval *ev, struct ks_error *e)
{
	sqlite3_stmt *st;
	long dropped = 0;
	int rc;
	if (!ev || !ks_store_status_valid(ev->status))
		return ks_error_set(e, KS_EINVAL, "add evaluation: unknown status '%s'",
				    ev && ev->status ? ev->status : "(null)");
	pthread_mutex_lock(&s->mu);
	if ((rc = ks_store_stmt(s, KS_STMT_EVAL_INSERT, &st, e)))
		goto out;
	sqlite3_bind_int64(st, 1, ev->candidate_id);
	sqlite3_bind_int(st, 2, ev->workload);
	sqlite3_bind_int64(st, 3, (int64_t)ev->seed);
	BIND_TEXT(4, phase_or_default(ev->phase), NULL, KS_TEXT_PLAIN, 16, "phase");
	BIND_TEXT(5, ev->status, NULL, KS_TEXT_PLAIN, 32, "status");
	const double v[] = {ev->max_abs_err, ev->max_rel_err, ev->median_us, ev->spread_pct,
			    ev->gflops,      ev->gbps,        ev->roofline_pct, ev->baseline_us,
			    ev->speedup};
	for (int i = 0; i < 9; i++)
		ks_store_bind_double(st, 6 + i, v[i]);
	BIND_TEXT(15, ev->samples, "[]", KS_TEXT_JSON, KS_STORE_MAX_JSON, "samples");
	BIND_TEXT(16, ev->log, NULL, KS_TEXT_REDACT, KS_STORE_MAX_LOG, "evaluation log");
	sqlite3_bind_int64(st, 17, dropped);
	ks_store_bind_double(st, 18, ev->library_us);
	ks_store_bind_double(st, 19, ev->tol_elem);
	ks_store_bind_double(st, 20, ev->tol_l2);
	rc = step_done(s, st, "add evaluation", e);
out:
	ks_store_unlock(s);
	return rc;
}

int ks_store_add_result(struct ks_store *s, int64_t candidate_id, const char *phase,
			const char *status, double speedup, struct ks_error *e)
{
	sqlite3_stmt *st;
	long dropped = 0;
	int rc;
	if (!ks_store_status_valid(status))
		return ks_error_set(e, KS_EINVAL, "add result: unknown status '%s'",
				    status ? status : "(null)");
	pthread_mutex_lock(&s->mu);
	if ((rc = ks_store_stmt(s, KS_STMT_RESULT_INSERT, &st, e)))
		goto out;
	sqlite3_bind_int64(st, 1, candidate_id);
	BIND_TEXT(2, phase_or_default(phase), NULL, KS_TEXT_PLAIN, 16, "phase");
	BIND_TEXT(3, status, NULL, KS_TEXT_PLAIN, 32, "status");
	ks_store_bind_double(st, 4, speedup);
	rc = step_done(s, st, "add result", e);
out:
	ks_store_unlock(s);
	return rc;
}

int ks_store_add_snapshot(struct ks_store *s, int round, const char *json, int *version,
			  struct ks_error *e)
{
	sqlite3_stmt *st;
	long dropped = 0;
	int rc, step, v = 0;
	if (!json)
		return ks_error_set(e, KS_EINVAL, "add snapshot: no document");
	pthread_mutex_lock(&s->mu);
	if ((rc = ks_store_stmt(s, KS_STMT_SNAP_INSERT, &st, e)))
		goto out;
	sqlite3_bind_int(st, 1, round);
	BIND_TEXT(2, json, NULL, KS_TEXT_JSON, KS_STORE_MAX_SNAPSHOT, "snapshot");
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	if (step != SQLITE_DONE)
		rc = ks_store_dberr(s, e, "add snapshot");
	sqlite3_reset(st);
	if (!rc && version)
		*version = v;
out:
	ks_store_unlock(s);
	return rc;
}

int ks_store_add_llm(struct ks_store *s, const struct ks_store_llm *x, int64_t *id,
		     struct ks_error *e)
{
	sqlite3_stmt *st;
	long dropped = 0;
	int rc;
	if (!x || !x->purpose || !x->status)
		return ks_error_set(e, KS_EINVAL, "add llm exchange: purpose and status are required");
	pthread_mutex_lock(&s->mu);
	if ((rc = ks_store_stmt(s, KS_STMT_LLM_INSERT, &st, e)))
		goto out;
	sqlite3_bind_int(st, 1, x->round);
	BIND_TEXT(2, x->purpose, NULL, KS_TEXT_PLAIN, 32, "purpose");
	BIND_TEXT(3, x->model, "", KS_TEXT_REDACT, NAME_MAX_, "model");
	BIND_TEXT(4, x->params, "{}", KS_TEXT_JSON, KS_STORE_MAX_JSON, "llm params");
	BIND_TEXT(5, x->prompt, "", KS_TEXT_REDACT, KS_STORE_MAX_LLM, "prompt");
	BIND_TEXT(6, x->reply, "", KS_TEXT_REDACT, KS_STORE_MAX_LLM, "reply");
	sqlite3_bind_int64(st, 7, x->prompt_tokens);
	sqlite3_bind_int64(st, 8, x->completion_tokens);
	ks_store_bind_double(st, 9, x->latency_ms);
	ks_store_bind_double(st, 10, x->cost);
	BIND_TEXT(11, x->status, NULL, KS_TEXT_REDACT, NAME_MAX_, "llm status");
	BIND_TEXT(12, x->error, NULL, KS_TEXT_REDACT, KS_STORE_MAX_LOG, "llm error");
	sqlite3_bind_int64(st, 13, dropped);
	if ((rc = step_done(s, st, "add llm exchange", e)))
		goto out;
	if (id)
		*id = sqlite3_last_insert_rowid(s->db);
out:
	ks_store_unlock(s);
	return rc;
}

int ks_store_add_event(struct ks_store *s, const char *level, const char *kind,
		       const char *message, const char *data_json, struct ks_error *e)
{
	sqlite3_stmt *st;
	long dropped = 0;
	int rc;
	pthread_mutex_lock(&s->mu);
	if ((rc = ks_store_stmt(s, KS_STMT_EVENT_INSERT, &st, e)))
		goto out;
	BIND_TEXT(1, level, "info", KS_TEXT_PLAIN, 16, "event level");
	BIND_TEXT(2, kind, "", KS_TEXT_REDACT, NAME_MAX_, "event kind");
	BIND_TEXT(3, message, "", KS_TEXT_REDACT, KS_STORE_MAX_LOG, "event message");
	BIND_TEXT(4, data_json, "{}", KS_TEXT_JSON, KS_STORE_MAX_JSON, "event data");
	sqlite3_bind_int64(st, 5, dropped);
	rc = step_done(s, st, "add event", e);
out:
	ks_store_unlock(s);
	return rc;
}
