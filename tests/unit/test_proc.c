/* The one process spawner (util/proc.c): capture and its cap, stdin, stderr apart, the
 * deadline killing the whole group, nothing leaking into the child, exec failures. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksearch/error.h"
#include "tap.h"
#include "util/clock.h"
#include "util/proc.h"

static int sh(const char *script, struct ks_buf *out, struct ks_proc_result *res, double t)
{
	char *argv[] = {(char *)"/bin/sh", (char *)"-c", (char *)script, NULL};
	struct ks_error e = {0};
	int rc = ks_proc_run(argv, NULL, t, out, res, &e);
	if (rc)
		printf("# %s\n", e.msg);
	return rc;
}

static void test_capture(void)
{
	struct ks_buf out;
	struct ks_proc_result res;
	ks_buf_init(&out, 0);
	is_int(sh("echo hello; echo err >&2; exit 3", &out, &res, 10), 0, "ran");
	ok(res.exited && res.code == 3, "exit code 3 (exited %d code %d)", res.exited, res.code);
	is_str(ks_buf_str(&out), "hello\nerr\n", "stdout and stderr merged in order");
	ks_buf_release(&out);

	ks_buf_init(&out, 1000);
	is_int(sh("yes | head -c 100000", &out, &res, 10), 0, "ran with a small cap");
	ok(out.len <= 1000, "capture stays within the cap (%zu)", out.len);
	ok(strstr(ks_buf_str(&out), "[output truncated]") != NULL, "the cut is noted");
	ok(!strncmp(ks_buf_str(&out), "y\ny\ny\n", 6), "the start of the output is kept");
	is_int(ks_buf_failed(&out), 0, "a truncated capture is not a failed buffer");
	ks_buf_release(&out);
}

/* pid is dead (a zombie reparented to init counts as gone soon) */
static int pid_gone(int pid)
{
	for (int i = 0; i < 50; i++) {
		char path[64], st = 0;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		FILE *s = fopen(path, "r");
		int alive = s && fscanf(s, "%*d %*s %c", &st) == 1 && st != 'Z';
		if (s)
			fclose(s);
		if (!alive)
			return 1;
		usleep(20000);
	}
	return 0;
}

static void test_timeout_kills_group(void)
{
	char pidfile[] = "/tmp/ks-test-proc-XXXXXX";
	int fd = mkstemp(pidfile);
	close(fd);
	char script[256];
	snprintf(script, sizeof(script), "sleep 30 & echo $! > %s; sleep 30", pidfile);
	struct ks_buf out;
	struct ks_proc_result res;
	ks_buf_init(&out, 0);
	double t0 = ks_clock_s();
	is_int(sh(script, &out, &res, 0.5), 0, "ran");
	double took = ks_clock_s() - t0;
	ok(res.timed_out, "timed out");
	ok(took < 5, "returned soon after the deadline (%.2f s)", took);
	FILE *f = fopen(pidfile, "r");
	int bg = 0;
	if (f) {
		if (fscanf(f, "%d", &bg) != 1)
			bg = 0;
		fclose(f);
	}
	unlink(pidfile);
	ok(bg > 0, "the background child wrote its pid (%d)", bg);
	/* it was in the group: killed */
	ok(bg > 0 && pid_gone(bg), "the program's background child was killed with its group");
	ks_buf_release(&out);
}

/* A program that exits at once but leaves a child holding its stdout: with exit_grace_s
 * the run ends just after the exit with the output kept, without it the run waits for
 * the pipe to close. */
static void test_exit_grace(void)
{
	char pidfile[] = "/tmp/ks-test-proc-XXXXXX";
	int fd = mkstemp(pidfile);
	close(fd);
	char script[256];
	snprintf(script, sizeof(script), "(sleep 30 & echo $! > %s); echo reply", pidfile);
	char *argv[] = {(char *)"/bin/sh", (char *)"-c", script, NULL};
	struct ks_buf out;
	ks_buf_init(&out, 0);
	struct ks_proc_io io = {.input = "x", .input_len = 1, .out = &out, .out_cap_kills = 1,
				.timeout_s = 10, .exit_grace_s = 0.2};
	struct ks_proc_result res;
	struct ks_error e = {0};
	double t0 = ks_clock_s();
	is_int(ks_proc_exec(argv, &io, &res, &e), 0, "a program leaving a child on stdout ran");
	double took = ks_clock_s() - t0;
	ok(took < 3, "the run ended soon after the program exited (%.2f s)", took);
	ok(!res.timed_out && res.exited && res.code == 0, "not a timeout: exit code 0 (%d %d %d)",
	   res.timed_out, res.exited, res.code);
	is_str(ks_buf_str(&out), "reply\n", "what it wrote before exiting is kept");
	FILE *f = fopen(pidfile, "r");
	int bg = 0;
	if (f) {
		if (fscanf(f, "%d", &bg) != 1)
			bg = 0;
		fclose(f);
	}
	unlink(pidfile);
	ok(bg > 0 && pid_gone(bg), "the child it left (%d) was killed with its group", bg);

	/* output that the leftovers write within the grace is kept */
	char late[] = "(sleep 0.1; echo late) & echo early";
	argv[2] = late;
	ks_buf_reset(&out);
	io.exit_grace_s = 5;
	is_int(ks_proc_exec(argv, &io, &res, &e), 0, "a child writing after the exit");
	is_str(ks_buf_str(&out), "early\nlate\n", "its output within the grace is kept");

	/* without the option a run reads until every holder closes the output */
	ks_buf_reset(&out);
	is_int(sh("(sleep 0.5; echo late) & echo early", &out, &res, 10), 0, "ran without grace");
	is_str(ks_buf_str(&out), "early\nlate\n", "the child's output is waited for");
	ks_buf_release(&out);
}

static void test_isolation(void)
{
	/* a descriptor the parent left inheritable, a blocked signal, an ignored SIGPIPE */
	int leak = open("/dev/null", O_RDONLY);
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	void (*oldpipe)(int) = signal(SIGPIPE, SIG_IGN);
	char script[512];
	snprintf(script, sizeof(script),
		 "test -e /proc/$$/fd/%d && echo leaked || echo closed; echo $$;"
		 "cut -d' ' -f5 /proc/$$/stat",
		 leak);
	struct ks_buf out;
	struct ks_proc_result res;
	ks_buf_init(&out, 0);
	is_int(sh(script, &out, &res, 10), 0, "ran");
	const char *s = ks_buf_str(&out);
	ok(!strncmp(s, "closed\n", 7), "no parent descriptor leaks into the child");
	int pid = 0, pgid = 0;
	int got = sscanf(s + 7, "%d %d", &pid, &pgid);
	ok(got == 2 && pid == pgid && pid > 0, "the child leads its own process group");
	printf("# pid %d pgid %d\n", pid, pgid);
	/* the program itself, no shell between: its mask and ignored set */
	char *grep[] = {(char *)"grep", (char *)"-E", (char *)"SigBlk|SigIgn", (char *)"/proc/self/status", NULL};
	struct ks_error e = {0};
	ks_buf_reset(&out);
	is_int(ks_proc_run(grep, NULL, 10, &out, &res, &e), 0, "ran grep");
	s = ks_buf_str(&out);
	ok(strstr(s, "SigBlk:\t0000000000000000") != NULL, "the child's signal mask is empty");
	/* SIGPIPE is bit 13 (0x1000) */
	const char *ig = strstr(s, "SigIgn:\t");
	ok(ig && !(strtoull(ig + 8, NULL, 16) & 0x1000), "SIGPIPE is back to its default");
	printf("# %s", s);
	signal(SIGPIPE, oldpipe);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(leak);
	ks_buf_release(&out);
}

static void test_exec_failure(void)
{
	char *argv[] = {(char *)"ks-no-such-program-xyz", NULL};
	struct ks_buf out;
	struct ks_proc_result res;
	struct ks_error e = {0};
	ks_buf_init(&out, 0);
	is_int(ks_proc_run(argv, NULL, 10, &out, &res, &e), 0, "a missing program still 'ran'");
	ok(res.exited && res.code == 127, "with exit code 127, as a shell says it (%d)", res.code);
	ok(strstr(ks_buf_str(&out), "cannot run 'ks-no-such-program-xyz'") != NULL,
	   "and the reason in its output: %s", ks_buf_str(&out));
	ks_buf_release(&out);

	pid_t pid = 123;
	struct ks_spawn sp = {.argv = argv};
	is_int(ks_spawn(&sp, &pid, &e), KS_ENOTFOUND, "ks_spawn of a missing program: KS_ENOTFOUND");
	ok(strstr(e.msg, "ks-no-such-program-xyz") != NULL, "the message names it: %s", e.msg);
	is_int(pid, -1, "no child left");

	char *cwd_argv[] = {(char *)"pwd", NULL};
	struct ks_spawn sc = {.argv = cwd_argv, .cwd = "/nonexistent-ks-dir"};
	is_int(ks_spawn(&sc, &pid, &e), KS_ESYS, "a missing working directory fails the spawn");
	ok(strstr(e.msg, "/nonexistent-ks-dir") != NULL, "the message names it: %s", e.msg);
}

static int prepare_fails(void *ctx)
{
	return -EACCES;
}

static void test_prepare_and_fds(void)
{
	char *argv[] = {(char *)"true", NULL};
	struct ks_error e = {0};
	pid_t pid;
	struct ks_spawn sp = {.argv = argv, .prepare = prepare_fails};
	is_int(ks_spawn(&sp, &pid, &e), KS_ESYS, "a failing prepare hook fails the spawn");
	ok(strstr(e.msg, "prepare") != NULL, "and says so: %s", e.msg);

	/* descriptors placed at chosen numbers, even when the sources sit on the targets */
	int p[2];
	if (pipe(p))
		return;
	char *cat[] = {(char *)"/bin/sh", (char *)"-c", (char *)"echo to-four >&4", NULL};
	struct ks_spawn s4 = {.argv = cat, .nfd = 5, .fd = {KS_SPAWN_NULL, KS_SPAWN_INHERIT,
							 KS_SPAWN_INHERIT, KS_SPAWN_NULL, p[1]}};
	is_int(ks_spawn(&s4, &pid, &e), 0, "spawn with fd 4 given");
	close(p[1]);
	char buf[64] = {0};
	ssize_t n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	ok(n > 0 && !strcmp(buf, "to-four\n"), "the child wrote to its fd 4 ('%s')", buf);
}

static void test_exec_io(void)
{
	char *argv[] = {(char *)"/bin/sh", (char *)"-c",
			(char *)"cat; echo oops >&2; head -c 5000 /dev/zero >&2", NULL};
	struct ks_buf out, err;
	ks_buf_init(&out, 0);
	ks_buf_init(&err, 100);
	struct ks_proc_io io = {.input = "the prompt", .input_len = 10, .out = &out, .err = &err,
				.out_cap_kills = 1, .timeout_s = 10};
	struct ks_proc_result res;
	struct ks_error e = {0};
	is_int(ks_proc_exec(argv, &io, &res, &e), 0, "exec with stdin and stderr apart");
	is_str(ks_buf_str(&out), "the prompt", "stdin reached the program, stdout came back");
	ok(!strncmp(ks_buf_str(&err), "oops\n", 5), "stderr apart");
	is_int(err.len, 100, "stderr kept up to its cap");
	is_int(res.err_dropped, 5005 - 100, "the rest of stderr counted as dropped");

	char *yes[] = {(char *)"yes", NULL};
	struct ks_buf small;
	ks_buf_init(&small, 1000);
	struct ks_proc_io io2 = {.out = &small, .out_cap_kills = 1, .timeout_s = 10};
	double t0 = ks_clock_s();
	is_int(ks_proc_exec(yes, &io2, &res, &e), 0, "endless output ran");
	ok(res.out_over_cap && !res.timed_out, "over the cap: killed, not timed out");
	ok(ks_clock_s() - t0 < 5, "and at once");
	ks_buf_release(&small);
	ks_buf_release(&out);
	ks_buf_release(&err);
}

int main(void)
{
	test_capture();
	test_timeout_kills_group();
	test_exit_grace();
	test_isolation();
	test_exec_failure();
	test_prepare_and_fds();
	test_exec_io();
	return tap_done();
}
