/* Internals shared by the run store's files (src/store/). */
#ifndef KS_STORE_IMPL_H
#define KS_STORE_IMPL_H

#include <pthread.h>
#include <sqlite3.h>
#include <stddef.h>

#include "ksearch/store.h"

struct ks_store_migration {
	int version;
	const char *description;
	const char *sql;
};

extern const struct ks_store_migration ks_store_migrations[];
extern const size_t ks_store_nmigrations;

/* every statement the store runs, prepared once per connection */
enum ks_stmt {
	KS_STMT_RUN_INSERT,
	KS_STMT_RUN_GET,
	KS_STMT_RUN_STATUS,
	KS_STMT_WORKLOAD_INSERT,
	KS_STMT_WORKLOAD_LIST,
	KS_STMT_CAND_INSERT,
	KS_STMT_CAND_COMPILE,
	KS_STMT_CAND_GET,
	KS_STMT_CAND_SOURCE,
	KS_STMT_CAND_FIND,
	KS_STMT_CAND_LIST_ID,
	KS_STMT_CAND_LIST_BEST,
	KS_STMT_EVAL_INSERT,
	KS_STMT_EVAL_LIST,
	KS_STMT_RESULT_INSERT,
	KS_STMT_RESULT_COUNT,
	KS_STMT_CONVERGENCE,
	KS_STMT_SNAP_INSERT,
	KS_STMT_SNAP_LATEST,
	KS_STMT_SNAP_LIST,
	KS_STMT_LLM_INSERT,
	KS_STMT_LLM_LIST,
	KS_STMT_EVENT_INSERT,
	KS_STMT_EVENT_LIST,
	KS_STMT_COUNT_
};

struct ks_store {
	sqlite3 *db;
	pthread_mutex_t mu;
	char *path;
	sqlite3_stmt *stmts[KS_STMT_COUNT_];
	unsigned long truncations;
	char warning[256]; /* logged by ks_store_unlock, never while the mutex is held */
};

/* release s->mu, then log any pending warning (a log sink may write to this store) */
void ks_store_unlock(struct ks_store *s);

/* How a text parameter is prepared before it is bound. */
enum ks_text_mode {
	KS_TEXT_PLAIN,   /* bound as given (ids, names written by ksearch itself) */
	KS_TEXT_SOURCE,  /* registered secrets removed; over the cap: KS_ELIMIT */
	KS_TEXT_REDACT,  /* fully redacted; cut to the cap */
	KS_TEXT_JSON,    /* fully redacted; over the cap: KS_ELIMIT; must be valid JSON */
};


extern const char *const ks_store_sql[KS_STMT_COUNT_];

/* KS_EDB with "<what>: <sqlite message>" (KS_EINVAL for a failed CHECK constraint) */
int ks_store_dberr(struct ks_store *s, struct ks_error *e, const char *what);
/* the cached statement, reset and with bindings cleared (caller holds s->mu) */
int ks_store_stmt(struct ks_store *s, enum ks_stmt id, sqlite3_stmt **out, struct ks_error *e);
/* bind text (NULL binds NULL unless dflt is given); *dropped += bytes cut */
int ks_store_bind_text(struct ks_store *s, sqlite3_stmt *st, int idx, const char *text,
		       const char *dflt, enum ks_text_mode mode, size_t cap, long *dropped,
		       const char *field, struct ks_error *e);
/* NAN binds NULL */
int ks_store_bind_double(sqlite3_stmt *st, int idx, double v);

/* redaction over len bytes: registered secrets (ks_secret_redact), then the patterns */
int ks_redact_text(const char *text, size_t len, struct ks_buf *out);

/* Rows to structs.  Column i of the statement fills map[i] of each item; strings are
 * copied into the same allocation as the items. */
enum ks_col_type { KS_COL_I64, KS_COL_INT, KS_COL_U64, KS_COL_DBL, KS_COL_STR };
struct ks_col {
	enum ks_col_type type;
	size_t off;
};
/* steps st to the end; *out is one allocation (NULL with *n == 0 when no rows) */
int ks_store_fetch(struct ks_store *s, sqlite3_stmt *st, const struct ks_col *map,
		   size_t ncols, size_t item_size, void **out, size_t *n, struct ks_error *e);

#endif
