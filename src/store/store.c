/* Run store: opening, schema migrations, statement cache, binding and row fetching. */
#include "store/store_impl.h"
#include "ksearch/secret.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/log.h"
#include "util/fs.h"

#define BUSY_TIMEOUT_MS 10000
#define FETCH_CAP ((size_t)1 << 30)

int ks_store_dberr(struct ks_store *s, struct ks_error *e, const char *what)
{
	int x = sqlite3_extended_errcode(s->db);
	int code = x == SQLITE_CONSTRAINT_CHECK ? KS_EINVAL : KS_EDB;
	return ks_error_set(e, code, "%s: %s", what, sqlite3_errmsg(s->db));
}

int ks_store_stmt(struct ks_store *s, enum ks_stmt id, sqlite3_stmt **out, struct ks_error *e)
{
	sqlite3_stmt *st = s->stmts[id];
	if (!st) {
		if (sqlite3_prepare_v3(s->db, ks_store_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &st,
				       NULL) != SQLITE_OK)
			return ks_store_dberr(s, e, "prepare statement");
		s->stmts[id] = st;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	*out = st;
	return 0;
}

int ks_store_bind_double(sqlite3_stmt *st, int idx, double v)
{
	return isnan(v) ? sqlite3_bind_null(st, idx) : sqlite3_bind_double(st, idx, v);
}

/* cut b to cap bytes on a UTF-8 character boundary and say so at the end */
static size_t cut_text(struct ks_buf *b, size_t cap)
{
	size_t keep = cap < b->len ? cap : b->len;
	while (keep > 0 && ((unsigned char)b->data[keep] & 0xC0) == 0x80)
		keep--;
	size_t dropped = b->len - keep;
	b->len = keep;
	b->data[keep] = '\0';
	ks_buf_addf(b, "\n[... truncated %zu bytes]", dropped);
	return dropped;
}

int ks_store_bind_text(struct ks_store *s, sqlite3_stmt *st, int idx, const char *text,
		       const char *dflt, enum ks_text_mode mode, size_t cap, long *dropped,
		       const char *field, struct ks_error *e)
{
	if (!text)
		text = dflt;
	if (!text)
		return sqlite3_bind_null(st, idx) == SQLITE_OK ? 0 : ks_store_dberr(s, e, "bind");
	size_t len = strlen(text);
	if (mode != KS_TEXT_REDACT && len > cap)
		return ks_error_set(e, KS_ELIMIT, "store %s: %zu bytes, the limit is %zu", field,
				    len, cap);
	if (mode == KS_TEXT_PLAIN) {
		if (sqlite3_bind_text64(st, idx, text, len, SQLITE_TRANSIENT, SQLITE_UTF8))
			return ks_store_dberr(s, e, "bind");
		return 0;
	}
	size_t pre = 0;
	if (len > 4 * cap) {
		pre = len - 4 * cap;
		len = 4 * cap;
	}
	struct ks_buf b;
	ks_buf_init(&b, 2 * len + 256);
	int rc = mode == KS_TEXT_SOURCE ? ks_secret_redact(text, len, &b)
					: ks_redact_text(text, len, &b);
	if (!rc && !b.data)
		rc = ks_buf_adds(&b, "");
	if (rc) {
		ks_buf_release(&b);
		return ks_error_set(e, rc, "redact %s: %s", field, ks_strerror(rc));
	}
	if (mode == KS_TEXT_REDACT && (b.len > cap || pre)) {
		size_t cut = cut_text(&b, cap) + pre;
		if (dropped)
			*dropped += (long)cut;
		s->truncations++;
		snprintf(s->warning, sizeof(s->warning), "run store: %s cut to %zu bytes (%zu dropped)",
			 field, cap, cut);
	}
	rc = sqlite3_bind_text64(st, idx, b.data, b.len, SQLITE_TRANSIENT, SQLITE_UTF8);
	ks_buf_release(&b);
	return rc == SQLITE_OK ? 0 : ks_store_dberr(s, e, "bind");
}

int ks_store_fetch(struct ks_store *s, sqlite3_stmt *st, const struct ks_col *map,
		   size_t ncols, size_t item_size, void **out, size_t *n, struct ks_error *e)
{
	struct ks_buf items, strs;
	size_t count = 0;
	int rc, step;
	ks_buf_init(&items, FETCH_CAP);
	ks_buf_init(&strs, FETCH_CAP);
	*out = NULL;
	*n = 0;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if ((rc = ks_buf_grow(&items, item_size)))
			goto fail;
		char *item = items.data + items.len;
		memset(item, 0, item_size);
		items.len += item_size;
		for (size_t i = 0; i < ncols; i++) {
			void *f = item + map[i].off;
			int col = (int)i;
			int null = sqlite3_column_type(st, col) == SQLITE_NULL;
			switch (map[i].type) {
			case KS_COL_I64:
				*(int64_t *)f = sqlite3_column_int64(st, col);
				break;
			case KS_COL_INT:
				*(int *)f = (int)sqlite3_column_int64(st, col);
				break;
			case KS_COL_U64:
				*(uint64_t *)f = (uint64_t)sqlite3_column_int64(st, col);
				break;
			case KS_COL_DBL:
				*(double *)f = null ? NAN : sqlite3_column_double(st, col);
				break;
			case KS_COL_STR: {
				if (null)
					break;
				const unsigned char *t = sqlite3_column_text(st, col);
				size_t tl = (size_t)sqlite3_column_bytes(st, col);
				uintptr_t at = strs.len + 1;
				if ((rc = ks_buf_add(&strs, t ? (const char *)t : "", tl)) ||
				    (rc = ks_buf_add(&strs, "", 1)))
					goto fail;
				*(uintptr_t *)f = at;
				break;
			}
			}
		}
		count++;
	}
	if (step != SQLITE_DONE) {
		rc = ks_store_dberr(s, e, "read rows");
		goto out;
	}
	if (count) {
		char *block = malloc(items.len + strs.len + 1);
		if (!block) {
			rc = KS_ENOMEM;
			goto fail;
		}
		memcpy(block, items.data, items.len);
		if (strs.len)
			memcpy(block + items.len, strs.data, strs.len);
		for (size_t k = 0; k < count; k++)
			for (size_t i = 0; i < ncols; i++) {
				if (map[i].type != KS_COL_STR)
					continue;
				char *f = block + k * item_size + map[i].off;
				uintptr_t at = *(uintptr_t *)f;
				*(const char **)f = at ? block + items.len + (at - 1) : NULL;
			}
		*out = block;
		*n = count;
	}
	rc = 0;
	goto out;
fail:
	ks_error_set(e, rc, "read rows: %s", ks_strerror(rc));
out:
	sqlite3_reset(st);
	ks_buf_release(&items);
	ks_buf_release(&strs);
	return rc;
}

void ks_store_unlock(struct ks_store *s)
{
	char w[sizeof(s->warning)];
	memcpy(w, s->warning, sizeof(w));
	s->warning[0] = '\0';
	pthread_mutex_unlock(&s->mu);
	if (w[0])
		ks_warn("%s", w);
}

void ks_store_log_sink(enum ks_log_level level, const char *line, void *store)
{
	static const char *const names[] = {"debug", "info", "warn", "error"};
	if (store && (unsigned)level < 4)
		ks_store_add_event(store, names[level], "log", line, NULL, NULL);
}

void ks_store_free(void *p)
{
	free(p);
}

/* run one SQL text with no parameters (pragmas, migrations) */
static int exec(struct ks_store *s, const char *sql, const char *what, struct ks_error *e)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return ks_store_dberr(s, e, what);
	return 0;
}

static int query_int(struct ks_store *s, const char *sql, int64_t *v, struct ks_error *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return ks_store_dberr(s, e, sql);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : ks_store_dberr(s, e, sql);
}

static int migrate(struct ks_store *s, struct ks_error *e)
{
	int64_t have = 0;
	int rc = exec(s, "BEGIN IMMEDIATE", "begin migration", e);
	if (rc)
		return rc;
	if ((rc = query_int(s, "PRAGMA user_version", &have, e)))
		goto fail;
	if (have > KS_STORE_SCHEMA_VERSION) {
		rc = ks_error_set(e, KS_EDB, "run database schema version %lld is newer than %d",
				  (long long)have, KS_STORE_SCHEMA_VERSION);
		goto fail;
	}
	if ((rc = exec(s,
		       "CREATE TABLE IF NOT EXISTS schema_version ("
		       " version INTEGER PRIMARY KEY, description TEXT NOT NULL,"
		       " applied TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))",
		       "create schema_version", e)))
		goto fail;
	for (size_t i = 0; i < ks_store_nmigrations; i++) {
		const struct ks_store_migration *m = &ks_store_migrations[i];
		if (m->version <= have)
			continue;
		char what[128], pragma[64];
		snprintf(what, sizeof(what), "apply schema migration %d", m->version);
		if ((rc = exec(s, m->sql, what, e)))
			goto fail;
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(s->db,
				       "INSERT INTO schema_version (version, description) VALUES (?1, ?2)",
				       -1, &st, NULL) != SQLITE_OK) {
			rc = ks_store_dberr(s, e, what);
			goto fail;
		}
		sqlite3_bind_int(st, 1, m->version);
		sqlite3_bind_text(st, 2, m->description, -1, SQLITE_STATIC);
		int step = sqlite3_step(st);
		sqlite3_finalize(st);
		if (step != SQLITE_DONE) {
			rc = ks_store_dberr(s, e, what);
			goto fail;
		}
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", m->version);
		if ((rc = exec(s, pragma, what, e)))
			goto fail;
	}
	return exec(s, "COMMIT", "commit migration", e);
fail:
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static int configure(struct ks_store *s, struct ks_error *e)
{
	sqlite3_stmt *st;
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
	if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL) != SQLITE_OK)
		return ks_store_dberr(s, e, "set journal mode");
	int step = sqlite3_step(st);
	int wal = step == SQLITE_ROW &&
		  !strcmp((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	if (!wal)
		return ks_error_set(e, KS_EDB, "set journal mode: WAL not available");
	/* FULL: the WAL is synced at every commit, so a committed row survives power loss
	 * as well as the death of the process */
	return exec(s, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON", "set pragmas", e);
}

int ks_store_open(const char *dir, int create, struct ks_store **out, struct ks_error *e)
{
	char path[4096];
	int rc;
	*out = NULL;
	if (!dir || !*dir)
		return ks_error_set(e, KS_EINVAL, "open run store: no directory");
	if ((rc = ks_path_join(path, sizeof(path), dir, "run.db")))
		return ks_error_set(e, rc, "open run store in '%s': path too long", dir);
	if (!create && !ks_path_exists(path))
		return ks_error_set(e, KS_ENOTFOUND, "open run store '%s': no such file", path);
	if (create && (rc = ks_mkdir_p(dir, e)))
		return rc;
	if (!ks_is_dir(dir))
		return ks_error_set(e, KS_EIO, "open run store in '%s': not a directory", dir);
	struct ks_store *s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(path))) {
		free(s);
		return ks_error_set(e, KS_ENOMEM, "open run store '%s': out of memory", path);
	}
	pthread_mutex_init(&s->mu, NULL);
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
	if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
		rc = s->db ? ks_store_dberr(s, e, "open run store")
			   : ks_error_set(e, KS_ENOMEM, "open run store: out of memory");
		goto fail;
	}
	if ((rc = configure(s, e)) || (rc = migrate(s, e)))
		goto fail;
	*out = s;
	return 0;
fail:
	ks_error_wrap(e, "run store '%s'", path);
	ks_store_close(s);
	return rc;
}

void ks_store_close(struct ks_store *s)
{
	if (!s)
		return;
	for (int i = 0; i < KS_STMT_COUNT_; i++)
		sqlite3_finalize(s->stmts[i]);
	if (s->db)
		sqlite3_close(s->db);
	pthread_mutex_destroy(&s->mu);
	free(s->path);
	free(s);
}

unsigned long ks_store_truncations(struct ks_store *s)
{
	pthread_mutex_lock(&s->mu);
	unsigned long n = s->truncations;
	pthread_mutex_unlock(&s->mu);
	return n;
}

int ks_store_status_valid(const char *name)
{
	static const char *const names[] = {
#define KS_STATUS_NAME_(x) #x,
		KS_STORE_STATUSES(KS_STATUS_NAME_)
#undef KS_STATUS_NAME_
	};
	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}
