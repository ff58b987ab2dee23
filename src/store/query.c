/* Run store reads: the run row, candidates, evaluations, snapshots, exchanges, events. */
#include "store/store_impl.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

#define N_(a) (sizeof(a) / sizeof((a)[0]))
#define COL(type, st, field) {KS_COL_##type, offsetof(struct st, field)}

/* run a list query under the lock */
static int list(struct ks_store *s, enum ks_stmt id, const struct ks_col *map, size_t ncols,
		size_t item_size, void **out, size_t *n, struct ks_error *e)
{
	sqlite3_stmt *st;
	pthread_mutex_lock(&s->mu);
	int rc = ks_store_stmt(s, id, &st, e);
	if (!rc)
		rc = ks_store_fetch(s, st, map, ncols, item_size, out, n, e);
	ks_store_unlock(s);
	return rc;
}

static const struct ks_col run_cols[] = {
	COL(STR, ks_store_run, id),        COL(STR, ks_store_run, created),
	COL(STR, ks_store_run, version),   COL(STR, ks_store_run, task),
	COL(STR, ks_store_run, task_hash), COL(STR, ks_store_run, backend),
	COL(STR, ks_store_run, strategy),  COL(STR, ks_store_run, policy),
	COL(U64, ks_store_run, seed),      COL(I64, ks_store_run, budget),
	COL(STR, ks_store_run, config),    COL(STR, ks_store_run, status),
};

int ks_store_get_run(struct ks_store *s, struct ks_store_run **out, struct ks_error *e)
{
	size_t n;
	int rc = list(s, KS_STMT_RUN_GET, run_cols, N_(run_cols), sizeof(**out), (void **)out, &n, e);
	if (!rc && !n)
		rc = ks_error_set(e, KS_ENOTFOUND, "get run: no run recorded");
	return rc;
}

static const struct ks_col workload_cols[] = {
	COL(INT, ks_store_workload, index),
	COL(STR, ks_store_workload, label),
	COL(STR, ks_store_workload, params),
	COL(INT, ks_store_workload, is_check),
};

int ks_store_list_workloads(struct ks_store *s, struct ks_store_workload **out, size_t *n,
			    struct ks_error *e)
{
	return list(s, KS_STMT_WORKLOAD_LIST, workload_cols, N_(workload_cols), sizeof(**out),
		    (void **)out, n, e);
}

static const struct ks_col cand_cols[] = {
	COL(I64, ks_store_candidate, id),
	COL(STR, ks_store_candidate, created),
	COL(STR, ks_store_candidate, source),
	COL(STR, ks_store_candidate, source_hash),
	COL(STR, ks_store_candidate, language),
	COL(I64, ks_store_candidate, parent_id),
	COL(I64, ks_store_candidate, node_id),
	COL(STR, ks_store_candidate, action),
	COL(STR, ks_store_candidate, policy),
	COL(STR, ks_store_candidate, family),
	COL(STR, ks_store_candidate, knobs),
	COL(STR, ks_store_candidate, defines),
	COL(INT, ks_store_candidate, round),
	COL(STR, ks_store_candidate, compile_status),
	COL(STR, ks_store_candidate, compile_log),
	COL(STR, ks_store_candidate, resources),
	COL(DBL, ks_store_candidate, compile_ms),
	COL(INT, ks_store_candidate, has_result),
	COL(STR, ks_store_candidate, status),
	COL(DBL, ks_store_candidate, speedup),
	COL(INT, ks_store_candidate, has_final),
	COL(STR, ks_store_candidate, final_status),
	COL(DBL, ks_store_candidate, final_speedup),
};

int ks_store_get_candidate(struct ks_store *s, int64_t id, struct ks_store_candidate **out,
			   struct ks_error *e)
{
	sqlite3_stmt *st;
	size_t n = 0;
	pthread_mutex_lock(&s->mu);
	int rc = ks_store_stmt(s, KS_STMT_CAND_GET, &st, e);
	if (!rc) {
		sqlite3_bind_int64(st, 1, id);
		rc = ks_store_fetch(s, st, cand_cols, N_(cand_cols), sizeof(**out), (void **)out,
				    &n, e);
	}
	ks_store_unlock(s);
	if (!rc && !n)
		rc = ks_error_set(e, KS_ENOTFOUND, "get candidate: no candidate %lld", (long long)id);
	return rc;
}

int ks_store_list_candidates(struct ks_store *s, enum ks_store_order order,
			     struct ks_store_candidate **out, size_t *n, struct ks_error *e)
{
	enum ks_stmt id = order == KS_STORE_ORDER_BEST ? KS_STMT_CAND_LIST_BEST : KS_STMT_CAND_LIST_ID;
	return list(s, id, cand_cols, N_(cand_cols), sizeof(**out), (void **)out, n, e);
}

int ks_store_get_source(struct ks_store *s, int64_t id, struct ks_buf *out, struct ks_error *e)
{
	sqlite3_stmt *st;
	pthread_mutex_lock(&s->mu);
	int rc = ks_store_stmt(s, KS_STMT_CAND_SOURCE, &st, e);
	if (rc)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		const void *t = sqlite3_column_text(st, 0);
		rc = ks_buf_add(out, t ? t : "", (size_t)sqlite3_column_bytes(st, 0));
		if (rc)
			ks_error_set(e, rc, "get source of candidate %lld: %s", (long long)id,
				     ks_strerror(rc));
	} else if (step == SQLITE_DONE) {
		rc = ks_error_set(e, KS_ENOTFOUND, "get source: no candidate %lld", (long long)id);
	} else {
		rc = ks_store_dberr(s, e, "get source");
	}
	sqlite3_reset(st);
out:
	ks_store_unlock(s);
	return rc;
}

int ks_store_find_candidate(struct ks_store *s, const char *source, const char *defines,
			    int64_t *id, int *has_result, struct ks_error *e)
{
	sqlite3_stmt *st;
	char hash[65];
	if (!source)
		return ks_error_set(e, KS_EINVAL, "find candidate: no source");
	ks_sha256_str_hex(source, hash);
	*id = 0;
	if (has_result)
		*has_result = 0;
	pthread_mutex_lock(&s->mu);
	int rc = ks_store_stmt(s, KS_STMT_CAND_FIND, &st, e);
	if (rc)
		goto out;
	sqlite3_bind_text(st, 1, hash, 64, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, defines ? defines : "", -1, SQLITE_TRANSIENT);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		if (has_result)
			*has_result = sqlite3_column_int(st, 1);
	} else if (step != SQLITE_DONE) {
		rc = ks_store_dberr(s, e, "find candidate");
	}
	sqlite3_reset(st);
out:
	ks_store_unlock(s);
	return rc;
}

static const struct ks_col eval_cols[] = {
	COL(I64, ks_store_eval, candidate_id), COL(INT, ks_store_eval, workload),
	COL(U64, ks_store_eval, seed),         COL(STR, ks_store_eval, phase),
	COL(STR, ks_store_eval, status),       COL(DBL, ks_store_eval, max_abs_err),
	COL(DBL, ks_store_eval, max_rel_err),  COL(DBL, ks_store_eval, median_us),
	COL(DBL, ks_store_eval, spread_pct),   COL(DBL, ks_store_eval, gflops),
	COL(DBL, ks_store_eval, gbps),         COL(DBL, ks_store_eval, roofline_pct),
	COL(DBL, ks_store_eval, baseline_us),  COL(DBL, ks_store_eval, speedup),
	COL(STR, ks_store_eval, samples),      COL(STR, ks_store_eval, log),
	COL(STR, ks_store_eval, created),      COL(DBL, ks_store_eval, library_us),
	COL(DBL, ks_store_eval, tol_elem),     COL(DBL, ks_store_eval, tol_l2),
};

int ks_store_list_evals(struct ks_store *s, int64_t candidate_id, const char *phase,
			struct ks_store_eval **out, size_t *n, struct ks_error *e)
{
	sqlite3_stmt *st;
	pthread_mutex_lock(&s->mu);
	int rc = ks_store_stmt(s, KS_STMT_EVAL_LIST, &st, e);
	if (!rc) {
		sqlite3_bind_int64(st, 1, candidate_id);
		if (phase)
			sqlite3_bind_text(st, 2, phase, -1, SQLITE_TRANSIENT);
		rc = ks_store_fetch(s, st, eval_cols, N_(eval_cols), sizeof(**out), (void **)out,
				    n, e);
	}
	ks_store_unlock(s);
	return rc;
}

int ks_store_count_evaluated(struct ks_store *s, int64_t *n, struct ks_error *e)
{
	sqlite3_stmt *st;
	pthread_mutex_lock(&s->mu);
	int rc = ks_store_stmt(s, KS_STMT_RESULT_COUNT, &st, e);
	if (!rc) {
		if (sqlite3_step(st) == SQLITE_ROW)
			*n = sqlite3_column_int64(st, 0);
		else
			rc = ks_store_dberr(s, e, "count evaluated candidates");
		sqlite3_reset(st);
	}
	ks_store_unlock(s);
	return rc;
}

static const struct ks_col point_cols[] = {
	COL(I64, ks_store_point, candidate_id),
	COL(DBL, ks_store_point, speedup),
};

int ks_store_convergence(struct ks_store *s, struct ks_store_point **out, size_t *n,
			 struct ks_error *e)
{
	int rc = list(s, KS_STMT_CONVERGENCE, point_cols, N_(point_cols), sizeof(**out),
		      (void **)out, n, e);
	double best = NAN;
	for (size_t i = 0; !rc && i < *n; i++) {
		double v = (*out)[i].speedup;
		if (!isnan(v) && (isnan(best) || v > best))
			best = v;
		(*out)[i].best = best;
	}
	return rc;
}

static const struct ks_col snap_cols[] = {
	COL(INT, ks_store_snapshot, round),
	COL(INT, ks_store_snapshot, version),
	COL(STR, ks_store_snapshot, json),
	COL(STR, ks_store_snapshot, created),
};

int ks_store_latest_snapshot(struct ks_store *s, struct ks_store_snapshot **out,
			     struct ks_error *e)
{
	size_t n;
	int rc = list(s, KS_STMT_SNAP_LATEST, snap_cols, N_(snap_cols), sizeof(**out),
		      (void **)out, &n, e);
	if (!rc && !n)
		rc = ks_error_set(e, KS_ENOTFOUND, "latest snapshot: no snapshot recorded");
	return rc;
}

int ks_store_list_snapshots(struct ks_store *s, struct ks_store_snapshot **out, size_t *n,
			    struct ks_error *e)
{
	return list(s, KS_STMT_SNAP_LIST, snap_cols, N_(snap_cols), sizeof(**out), (void **)out,
		    n, e);
}

static const struct ks_col llm_cols[] = {
	COL(I64, ks_store_llm, id),
	COL(INT, ks_store_llm, round),
	COL(STR, ks_store_llm, purpose),
	COL(STR, ks_store_llm, model),
	COL(STR, ks_store_llm, params),
	COL(STR, ks_store_llm, prompt),
	COL(STR, ks_store_llm, reply),
	COL(I64, ks_store_llm, prompt_tokens),
	COL(I64, ks_store_llm, completion_tokens),
	COL(DBL, ks_store_llm, latency_ms),
	COL(DBL, ks_store_llm, cost),
	COL(STR, ks_store_llm, status),
	COL(STR, ks_store_llm, error),
	COL(STR, ks_store_llm, created),
};

int ks_store_list_llm(struct ks_store *s, struct ks_store_llm **out, size_t *n,
		      struct ks_error *e)
{
	return list(s, KS_STMT_LLM_LIST, llm_cols, N_(llm_cols), sizeof(**out), (void **)out, n,
		    e);
}

static const struct ks_col event_cols[] = {
	COL(I64, ks_store_event, id),      COL(STR, ks_store_event, ts),
	COL(STR, ks_store_event, level),   COL(STR, ks_store_event, kind),
	COL(STR, ks_store_event, message), COL(STR, ks_store_event, data),
};

int ks_store_list_events(struct ks_store *s, struct ks_store_event **out, size_t *n,
			 struct ks_error *e)
{
	return list(s, KS_STMT_EVENT_LIST, event_cols, N_(event_cols), sizeof(**out),
		    (void **)out, n, e);
}
