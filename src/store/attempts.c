/* Evaluations that take the evaluating process down (issue 13, item 1): each start is an
 * event of kind "eval_started" with the process id; a candidate that earlier processes
 * started KS_STORE_MAX_EVAL_STARTS times without recording a result is failed, not tried
 * again, so a kernel that kills ksearch cannot make a run impossible to resume. */
#include "store/store_impl.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

/* starts of candidate id by processes other than this one (sqlite's JSON functions read
 * the event data back) */
static int count_starts(struct ks_store *s, int64_t id, int *n, struct ks_error *e)
{
	static const char sql[] =
		"SELECT count(*) FROM events WHERE kind = 'eval_started'"
		" AND json_extract(data, '$.candidate_id') = ?1"
		" AND json_extract(data, '$.pid') != ?2";
	sqlite3_stmt *st = NULL;
	int rc = 0;
	pthread_mutex_lock(&s->mu);
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = ks_store_dberr(s, e, "count evaluation starts");
		goto out;
	}
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)getpid());
	if (sqlite3_step(st) == SQLITE_ROW)
		*n = sqlite3_column_int(st, 0);
	else
		rc = ks_store_dberr(s, e, "count evaluation starts");
out:
	sqlite3_finalize(st);
	ks_store_unlock(s);
	return rc;
}

int ks_store_begin_eval(struct ks_store *s, int64_t candidate_id, int *abandoned,
			struct ks_error *e)
{
	int starts = 0, rc;
	char data[128], msg[256];
	*abandoned = 0;
	if ((rc = count_starts(s, candidate_id, &starts, e)))
		return rc;
	if (starts >= KS_STORE_MAX_EVAL_STARTS) {
		snprintf(msg, sizeof(msg),
			 "candidate %lld: the evaluator died while evaluating it (%d times); "
			 "recorded as RUNTIME_ERROR",
			 (long long)candidate_id, starts);
		snprintf(data, sizeof(data), "{\"candidate_id\": %lld, \"starts\": %d}",
			 (long long)candidate_id, starts);
		if ((rc = ks_store_add_result(s, candidate_id, "search", "RUNTIME_ERROR", NAN, e)) ||
		    (rc = ks_store_add_event(s, "warn", "eval_abandoned", msg, data, e)))
			return rc;
		*abandoned = 1;
		return 0;
	}
	snprintf(data, sizeof(data), "{\"candidate_id\": %lld, \"pid\": %lld}",
		 (long long)candidate_id, (long long)getpid());
	snprintf(msg, sizeof(msg), "evaluating candidate %lld", (long long)candidate_id);
	return ks_store_add_event(s, "debug", "eval_started", msg, data, e);
}
