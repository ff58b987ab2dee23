/* The results cache (contract in results.h): one table, key -> the evaluation in the wire
 * format workers use (ks_eval_result_to_wire), with the time it was measured. */
#include "eval/result_cache.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ksearch/eval.h"
#include "ksearch/worker.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/machine.h"

struct ks_results {
	sqlite3 *db;
};

int ks_results_path(char *out, size_t n)
{
	/* a folder of its own: SQLite's -wal and -shm files go with it (ksearch cache clear) */
	return ks_path_join(out, n, ks_cache_root(), "results/results.sqlite") ? KS_ELIMIT : 0;
}

int ks_results_open(struct ks_results **out, struct ks_error *e)
{
	char path[4096];
	*out = NULL;
	if (ks_results_path(path, sizeof(path)))
		return ks_error_set(e, KS_ELIMIT, "the cache root's path is too long");
	char dir[4096];
	if (ks_path_join(dir, sizeof(dir), ks_cache_root(), "results"))
		return ks_error_set(e, KS_ELIMIT, "the cache root's path is too long");
	int rc = ks_mkdir_p(dir, e);
	if (rc)
		return rc;
	struct ks_results *c = calloc(1, sizeof(*c));
	if (!c)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
	    sqlite3_busy_timeout(c->db, 5000) != SQLITE_OK ||
	    sqlite3_exec(c->db, "PRAGMA journal_mode=WAL;"
				"CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, "
				"created REAL NOT NULL, result TEXT NOT NULL)", NULL, NULL, NULL) != SQLITE_OK) {
		rc = ks_error_set(e, KS_EIO, "the results cache '%s': %s", path,
				  c->db ? sqlite3_errmsg(c->db) : "cannot open");
		ks_results_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

void ks_results_close(struct ks_results *c)
{
	if (!c)
		return;
	sqlite3_close(c->db);
	free(c);
}

void ks_results_key_hex(const struct ks_results_key *k, char out[65])
{
	struct ks_sha256 s;
	ks_sha256_init(&s);
	const char *parts[] = {"ksearch-results-1", k->source, k->defines, k->task_hash, k->backend,
			       k->compiler, k->options, ks_machine_fingerprint()};
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		ks_sha256_update_str(&s, parts[i] ? parts[i] : "");
	ks_sha256_hex(&s, out);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int ks_results_get(struct ks_results *c, const char *key, struct ks_eval_result *res,
		   double *age_s)
{
	sqlite3_stmt *st = NULL;
	int hit = 0;
	if (sqlite3_prepare_v2(c->db, "SELECT created, result FROM results WHERE key = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *txt = (const char *)sqlite3_column_text(st, 1);
		struct ks_error e = {0};
		memset(res, 0, sizeof(*res));
		hit = txt && !ks_eval_result_from_wire(txt, strlen(txt), res, &e);
		*age_s = now_s() - sqlite3_column_double(st, 0);
	}
	sqlite3_finalize(st);
	return hit;
}

int ks_results_put(struct ks_results *c, const char *key, const struct ks_eval_result *res,
		   struct ks_error *e)
{
	struct ks_buf txt = KS_BUF_INIT;
	int rc = ks_eval_result_to_wire(res, &txt);
	sqlite3_stmt *st = NULL;
	if (!rc && sqlite3_prepare_v2(c->db, "INSERT OR REPLACE INTO results (key, created, result) "
				      "VALUES (?, ?, ?)", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 2, now_s());
		sqlite3_bind_text(st, 3, ks_buf_str(&txt), -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = ks_error_set(e, KS_EIO, "the results cache: %s", sqlite3_errmsg(c->db));
	} else if (!rc) {
		rc = ks_error_set(e, KS_EIO, "the results cache: %s", sqlite3_errmsg(c->db));
	}
	sqlite3_finalize(st);
	ks_buf_release(&txt);
	return rc;
}
