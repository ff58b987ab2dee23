/* Checks before a run is continued: the database is sound (PRAGMA quick_check). */
#include "store/store_impl.h"

#include <stdio.h>
#include <string.h>

int ks_store_check(struct ks_store *s, struct ks_error *e)
{
	sqlite3_stmt *st = NULL;
	int rc = 0;
	char first[256] = "";
	pthread_mutex_lock(&s->mu);
	if (sqlite3_prepare_v2(s->db, "PRAGMA quick_check(5)", -1, &st, NULL) != SQLITE_OK) {
		rc = ks_store_dberr(s, e, "check the database");
		goto out;
	}
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		const char *row = (const char *)sqlite3_column_text(st, 0);
		if (row && strcmp(row, "ok") && !first[0]) {
			snprintf(first, sizeof(first), "%s", row);
			for (char *p = first; *p; p++)
				if (*p == '\n')
					*p = ' ';
		}
	}
	if (step != SQLITE_DONE)
		rc = ks_store_dberr(s, e, "check the database");
	else if (first[0])
		rc = ks_error_set(e, KS_EDB, "'%s' is damaged (PRAGMA quick_check: %s)", s->path,
				  first);
out:
	sqlite3_finalize(st);
	ks_store_unlock(s);
	return rc;
}
