/* A candidate whose evaluation took the evaluating process down is failed after
 * KS_STORE_MAX_EVAL_STARTS starts by processes that are gone, never evaluated forever;
 * the run lock admits one process; quick_check finds a damaged database. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksearch/store.h"
#include "tap.h"
#include "util/fs.h"

static char dir[256];

/* a process that starts evaluating candidate id and dies without a result */
static void start_and_die(int64_t id)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct ks_store *s;
		struct ks_error e = {0};
		int abandoned = -1;
		if (ks_store_open(dir, 0, &s, &e) || ks_store_begin_eval(s, id, &abandoned, &e))
			_exit(2);
		_exit(abandoned ? 3 : 0); /* no close: the process just dies */
	}
	int st = 0;
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a process started candidate %lld and died",
	   (long long)id);
}

static int lock_in_child(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		int fd;
		struct ks_error e = {0};
		_exit(ks_run_lock(dir, &fd, &e) ? 1 : 0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ks-test-abandon-%d", (int)getpid());
	struct ks_store *s;
	struct ks_error e = {0};
	ok(ks_store_open(dir, 1, &s, &e) == 0, "open: %s", e.msg);
	struct ks_store_candidate c = {.source = "void f(void) {}\n", .language = "c",
				       .policy = "builtin"};
	int64_t id = 0, evaluated = -1;
	ok(ks_store_add_candidate(s, &c, &id, &e) == 0, "add candidate");
	ks_store_close(s);

	/* the first run and one resume die while evaluating it */
	start_and_die(id);
	start_and_die(id);
	ok(ks_store_open(dir, 0, &s, &e) == 0, "reopen");
	int abandoned = -1;
	ok(ks_store_begin_eval(s, id, &abandoned, &e) == 0, "begin_eval on the second resume");
	is_int(abandoned, 1, "the candidate is abandoned, not evaluated a third time");
	struct ks_store_candidate *got = NULL;
	ok(ks_store_get_candidate(s, id, &got, &e) == 0 && got->has_result, "it has a result");
	const char *status = got && got->status ? got->status : "(none)";
	is_str(status, "RUNTIME_ERROR", "recorded as RUNTIME_ERROR");
	ks_store_free(got);
	ks_store_count_evaluated(s, &evaluated, &e);
	is_int(evaluated, 1, "it counts against the budget");

	/* a candidate started once by a process that died is evaluated again */
	c.source = "void g(void) {}\n";
	int64_t id2 = 0;
	ks_store_add_candidate(s, &c, &id2, &e);
	ks_store_close(s);
	start_and_die(id2);
	ks_store_open(dir, 0, &s, &e);
	ok(ks_store_begin_eval(s, id2, &abandoned, &e) == 0 && abandoned == 0,
	   "one crash: evaluated again");
	/* this process's own starts never count */
	ok(ks_store_begin_eval(s, id2, &abandoned, &e) == 0 && abandoned == 0,
	   "starts by this process do not count");

	/* the run lock: one holder at a time */
	int fd = -1;
	ok(ks_run_lock(dir, &fd, &e) == 0, "lock the run");
	is_int(lock_in_child(), 1, "a second process cannot lock it");
	ks_run_unlock(fd);
	is_int(lock_in_child(), 0, "free again once released");

	/* quick_check: sound, then damaged */
	ok(ks_store_check(s, &e) == 0, "a sound database passes quick_check: %s", e.msg);
	ks_store_close(s);
	char db[300];
	snprintf(db, sizeof(db), "%s/run.db", dir);
	int dfd = open(db, O_RDWR);
	char junk[4096];
	memset(junk, 0x5a, sizeof(junk));
	/* page 2 onwards: tables and indexes, not the header (which sqlite would refuse) */
	for (int i = 1; i < 8; i++)
		ok(pwrite(dfd, junk, sizeof(junk), (off_t)i * 4096) == (ssize_t)sizeof(junk),
		   "damage page %d", i + 1);
	close(dfd);
	int rc = ks_store_open(dir, 0, &s, &e);
	if (rc == 0) {
		rc = ks_store_check(s, &e);
		ks_store_close(s);
	}
	ok(rc != 0, "a damaged database is refused (%s)", e.msg);
	ks_rm_rf(dir);
	return tap_done();
}
