/* kill -9 durability: a child writes candidates, evaluations and results in a loop and
 * reports each committed candidate on a pipe; the parent SIGKILLs it at a random moment,
 * re-opens the database and checks that every reported candidate is complete and that the
 * database passes PRAGMA integrity_check. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ksearch/store.h"
#include "tap.h"
#include "util/fs.h"

#define MAX_IDS 100000
#define WORKLOADS 2

static char dir[256];
static int64_t ids[MAX_IDS];

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* the child: never returns */
static void child_main(int fd)
{
	struct ks_store *s;
	struct ks_error e = {0};
	if (ks_store_open(dir, 0, &s, &e))
		_exit(2);
	for (int i = 0; i < MAX_IDS; i++) {
		char src[64];
		snprintf(src, sizeof(src), "void k%d(void) {}\n", i);
		struct ks_store_candidate c = {.source = src, .language = "c", .policy = "builtin",
					       .knobs = "{\"i\": 1}", .defines = "-DX=1"};
		int64_t id;
		if (ks_store_add_candidate(s, &c, &id, &e))
			_exit(3);
		for (int w = 0; w < WORKLOADS; w++) {
			struct ks_store_eval ev = {.candidate_id = id, .workload = w, .seed = 1,
						   .status = "PASSED", .median_us = 1 + i,
						   .baseline_us = 10, .speedup = 10.0 / (1 + i),
						   .samples = "[1, 2, 3]", .log = "ok"};
			if (ks_store_add_eval(s, &ev, &e))
				_exit(4);
		}
		if (ks_store_add_result(s, id, "search", "PASSED", 10.0 / (1 + i), &e))
			_exit(5);
		if (write(fd, &id, sizeof(id)) != (ssize_t)sizeof(id))
			_exit(6);
	}
	ks_store_close(s);
	_exit(0);
}

/* read reported ids until deadline_ms (or EOF); returns 0 on EOF */
static int drain(int fd, size_t *n, double deadline_ms)
{
	for (;;) {
		double left = deadline_ms - now_ms();
		if (deadline_ms >= 0 && left <= 0)
			return 1;
		struct pollfd p = {fd, POLLIN, 0};
		int r = poll(&p, 1, deadline_ms >= 0 ? (int)left + 1 : -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		int64_t id;
		ssize_t got = read(fd, &id, sizeof(id));
		if (got == 0)
			return 0;
		if (got == (ssize_t)sizeof(id) && *n < MAX_IDS)
			ids[(*n)++] = id;
	}
}

static int count_rows(sqlite3 *db, const char *sql, int64_t id)
{
	sqlite3_stmt *st;
	int n = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return n;
}

static void one_kill(int round, int delay_ms)
{
	int pfd[2];
	size_t n = 0;
	struct ks_error e = {0};
	int64_t before = 0;
	struct ks_store *s;
	if (ks_store_open(dir, 0, &s, &e) == 0) {
		ks_store_count_evaluated(s, &before, &e);
		ks_store_close(s);
	}
	if (pipe(pfd))
		return (void)ok(0, "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		child_main(pfd[1]);
	}
	close(pfd[1]);
	/* start the clock at the first committed candidate, so every kill lands mid-run */
	double t0 = now_ms();
	while (n == 0 && now_ms() - t0 < 20000)
		if (!drain(pfd[0], &n, now_ms() + 50) && n == 0)
			break;
	drain(pfd[0], &n, now_ms() + delay_ms);
	kill(pid, SIGKILL);
	int status = 0;
	waitpid(pid, &status, 0);
	drain(pfd[0], &n, -1);
	close(pfd[0]);
	ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	   "round %d: child killed after %d ms (status %d)", round, delay_ms, status);
	ok(n > 0, "round %d: child reported %zu committed candidates", round, n);

	char path[512];
	snprintf(path, sizeof(path), "%s/run.db", dir);
	sqlite3 *db;
	if (!ok(sqlite3_open(path, &db) == SQLITE_OK, "round %d: open after kill", round))
		return;
	sqlite3_stmt *st;
	const char *integrity = "?";
	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		integrity = (const char *)sqlite3_column_text(st, 0);
	is_str(integrity, "ok", "integrity_check after kill -9");
	sqlite3_finalize(st);
	size_t missing = 0;
	for (size_t i = 0; i < n; i++) {
		int ev = count_rows(db, "SELECT count(*) FROM evaluations WHERE candidate_id = ?1",
				    ids[i]);
		int res = count_rows(db,
				     "SELECT count(*) FROM candidate_results WHERE candidate_id = ?1"
				     " AND phase = 'search'",
				     ids[i]);
		if (ev != WORKLOADS || res != 1)
			missing++;
	}
	is_int(missing, 0, "every reported candidate is complete in the database");
	sqlite3_close(db);

	/* the store itself opens the killed database and counts what the child committed */
	int64_t after = -1;
	int r = ks_store_open(dir, 0, &s, &e);
	ok(r == 0, "round %d: store re-opens (%s)", round, e.msg);
	if (r == 0) {
		ks_store_count_evaluated(s, &after, &e);
		ok(after - before >= (int64_t)n && after - before <= (int64_t)n + 1,
		   "round %d: evaluated count %lld grew by the %zu reported (+1 in flight)", round,
		   (long long)after, n);
		ks_store_close(s);
	}
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/ks-store-kill-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	struct ks_store *s;
	struct ks_error e = {0};
	if (!ok(ks_store_open(dir, 1, &s, &e) == 0, "create (%s)", e.msg))
		return tap_done();
	struct ks_store_run run = {.task = "kill", .budget = 1000};
	ks_store_write_run(s, &run, &e);
	for (int w = 0; w < WORKLOADS; w++) {
		struct ks_store_workload wl = {w, "w", "{}", 0};
		ks_store_add_workload(s, &wl, &e);
	}
	ks_store_close(s);

	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	printf("# kill delays seeded with %u\n", seed);
	srand(seed);
	static const int base[] = {5, 40, 120, 300};
	for (int round = 0; round < 4; round++)
		one_kill(round, base[round] + rand() % 50);
	ks_rm_rf(dir);
	return tap_done();
}
