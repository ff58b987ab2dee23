/* ksearch export's loader on a run folder without a best file: the message says whether the
 * run is still going or finished with no candidate that passed (the store knows which). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* mkdtemp on macOS */

#include "ksearch/export.h"
#include "ksearch/store.h"
#include "tap.h"

static const char *SRC = "void softmax(const float *x, float *y, int rows, int cols) { }\n";

/* a run of softmax with two candidates that failed, in a new folder; status as given */
static int make_run(char *dir, size_t n, const char *status)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, n, "%s/ks-export-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	struct ks_store *s = NULL;
	struct ks_error e = {0};
	struct ks_store_run run = {.task = "softmax", .task_hash = "x", .backend = "cpu",
				   .strategy = "wm", .policy = "builtin", .budget = 2,
				   .config = "{}"};
	struct ks_store_candidate c = {.source = SRC, .language = "c", .action = "a",
				       .policy = "builtin", .knobs = "{}", .defines = "-DA=1"};
	int64_t id1 = 0, id2 = 0;
	int rc = ks_store_open(dir, 1, &s, &e);
	if (!rc)
		rc = ks_store_write_run(s, &run, &e);
	if (!rc)
		rc = ks_store_add_candidate(s, &c, &id1, &e);
	c.defines = "-DA=2";
	if (!rc)
		rc = ks_store_add_candidate(s, &c, &id2, &e);
	if (!rc)
		rc = ks_store_add_result(s, id1, "search", "COMPILE_ERROR", 0, &e);
	if (!rc)
		rc = ks_store_add_result(s, id2, "search", "INCORRECT_NUMERICAL", 0, &e);
	if (!rc && status)
		rc = ks_store_set_run_status(s, status, &e);
	if (rc)
		fprintf(stderr, "# make_run: %s\n", e.msg);
	ks_store_close(s);
	return rc;
}

static void check(const char *status, const char *want, const char *not_want)
{
	char dir[256];
	const char *label = status ? status : "running";
	if (!ok(make_run(dir, sizeof(dir), status) == 0, "run store (%s)", label))
		return;
	static struct ks_export_loaded l;
	struct ks_error e = {0};
	int rc = ks_export_load(dir, NULL, 0, &l, &e);
	is_int(rc, KS_ENOTFOUND, "no best file: KS_ENOTFOUND");
	ok(strstr(e.msg, want) != NULL, "%s run: says '%s' (%s)", label, want, e.msg);
	ok(!strstr(e.msg, not_want), "%s run: does not say '%s'", label, not_want);
	ks_export_loaded_release(&l);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "# could not remove %s\n", dir);
}

int main(void)
{
	check("finished", "finished and none of its 2 evaluated candidates passed",
	      "has not finished");
	check("interrupted", "has not finished (interrupted, 2 candidates evaluated, 0 passed)",
	      "none of");
	check(NULL, "has not finished (running", "none of");
	return tap_done();
}
