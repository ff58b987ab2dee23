/* cmd transport: prompt on stdin, reply on stdout, timeout kills the process group,
 * exit status, caps, environment pass-through. */
#include "ksearch/llm.h"
#include "llm/cmd.h"
#include "tap.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* a killed process whose parent died stays a zombie until init reaps it, which a
 * container's init may do late: dead all the same */
static int is_zombie(long pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *close_paren = strrchr(buf, ')'); /* "pid (comm) S ..." */
	return close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z';
}

static int call(const char *command, double timeout, size_t cap, size_t errcap,
		const struct ks_llm_msg *m, int n, struct ks_llm_reply *r, struct ks_error *e)
{
	struct ks_llm_cmd_config cfg;
	struct ks_llm_transport t;
	ks_llm_cmd_config_defaults(&cfg);
	cfg.command = command;
	cfg.timeout_s = timeout;
	if (cap)
		cfg.max_reply_bytes = cap;
	if (errcap)
		cfg.max_stderr_bytes = errcap;
	memset(r, 0, sizeof(*r));
	int rc = ks_llm_cmd_open(&cfg, &t, e);
	if (rc)
		return rc;
	rc = t.complete(t.ctx, "action", m, n, r, e);
	ks_llm_transport_close(&t);
	return rc;
}

static const struct ks_llm_msg hello[] = {{"system", "sys"}, {"user", "hello"}};

static void test_echo(void)
{
	struct ks_llm_reply r;
	struct ks_error e = {0};
	int rc = call("cat", 5, 0, 0, hello, 2, &r, &e);
	is_int(rc, 0, "cat answers");
	is_str(r.content, "### system\nsys\n\n### user\nhello", "prompt arrives on stdin");
	is_int(r.status, 0, "exit status 0");
	ok(r.log == NULL, "no stderr");
	ks_llm_reply_release(&r);

	rc = call("printf '```c\\nint k;\\n```\\n'; echo 'thinking' >&2", 5, 0, 0, hello, 2, &r,
		  &e);
	is_int(rc, 0, "reply with stderr");
	is_str(r.content, "```c\nint k;\n```\n", "stdout is the reply");
	is_str(r.log, "thinking\n", "stderr kept for the log");
	ks_llm_reply_release(&r);

	/* a command that never reads a 2 MB prompt must not kill us with SIGPIPE */
	size_t big = 2 << 20;
	char *p = malloc(big + 1);
	memset(p, 'p', big);
	p[big] = '\0';
	struct ks_llm_msg m[] = {{"user", p}};
	rc = call("echo ignored", 5, 0, 0, m, 1, &r, &e);
	is_int(rc, 0, "command ignoring stdin");
	is_str(r.content, "ignored\n", "its reply");
	ks_llm_reply_release(&r);
	rc = call("wc -c", 5, 0, 0, m, 1, &r, &e);
	is_int(rc, 0, "large prompt delivered");
	ok(r.content && atol(r.content) == (long)big + 9, "all prompt bytes read (%s)",
	   r.content ? r.content : "");
	ks_llm_reply_release(&r);
	free(p);

	setenv("KS_TEST_PASSTHRU", "through", 1);
	rc = call("printf %s \"$KS_TEST_PASSTHRU\"", 5, 0, 0, hello, 2, &r, &e);
	is_int(rc, 0, "env command");
	is_str(r.content, "through", "environment passed through");
	ks_llm_reply_release(&r);
}

static void test_failures(void)
{
	struct ks_llm_reply r;
	struct ks_error e = {0};
	int rc = call("echo partial; echo 'model crashed' >&2; exit 1", 5, 0, 0, hello, 2, &r, &e);
	is_int(rc, KS_EIO, "exit 1 is an error");
	ok(strstr(e.msg, "exited with status 1") && strstr(e.msg, "model crashed"),
	   "message has status and stderr: %s", e.msg);
	is_int(r.status, 1, "status kept");
	ok(r.content == NULL, "no reply on failure");
	ks_llm_reply_release(&r);

	rc = call("kill -9 $$", 5, 0, 0, hello, 2, &r, &e);
	is_int(rc, KS_EIO, "killed by a signal");
	ok(strstr(e.msg, "signal 9") != NULL, "signal message: %s", e.msg);
	ks_llm_reply_release(&r);

	rc = call("true", 5, 0, 0, hello, 2, &r, &e);
	is_int(rc, KS_EPARSE, "empty reply is an unusable reply, not a replay divergence");
	ok(strstr(e.msg, "no reply") != NULL, "empty message: %s", e.msg);
	ks_llm_reply_release(&r);

	char pidfile[] = "/tmp/ks-cmd-pid-XXXXXX";
	int fd = mkstemp(pidfile);
	close(fd);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "sleep 30 & echo $! > %s; wait", pidfile);
	/* 2 s: long enough for the shell to start sleep and write its pid on a loaded machine.
	 * With 0.5 s, "killed with the group" failed once in a clean-clone CI run (ctest -j2);
	 * which of the two causes handled here it was (no pid written in time, or the killed
	 * child a zombie init had not reaped yet) the log did not say */
	double t0 = now();
	rc = call(cmd, 2, 0, 0, hello, 2, &r, &e);
	double dt = now() - t0;
	is_int(rc, KS_ETIMEOUT, "hanging command times out");
	ok(dt < 4.5, "timeout is prompt (%.2fs)", dt);
	ok(strstr(e.msg, "timed out") != NULL, "timeout message: %s", e.msg);
	ks_llm_reply_release(&r);
	FILE *f = fopen(pidfile, "r");
	long child = 0;
	if (f) {
		if (fscanf(f, "%ld", &child) != 1)
			child = 0;
		fclose(f);
	}
	int gone = 0;
	for (int i = 0; i < 100 && child > 0 && !gone; i++) {
		if ((kill((pid_t)child, 0) < 0 && errno == ESRCH) || is_zombie(child))
			gone = 1;
		else
			usleep(20000);
	}
	ok(child > 0 && gone, "the background child (pid %ld) was killed with the group", child);
	remove(pidfile);

	/* the shell exits at once but leaves a child holding stdout: the reply is complete */
	t0 = now();
	rc = call("cat >/dev/null; (sleep 1000 &); echo 'prose only'", 5, 0, 0, hello, 2, &r, &e);
	dt = now() - t0;
	is_int(rc, 0, "a command leaving a background child on stdout answers");
	is_str(r.content, "prose only\n", "... with its reply");
	ok(dt < 2.5, "... soon after the shell exited (%.2fs), not at the timeout", dt);
	ks_llm_reply_release(&r);

	rc = call("head -c 3000000 /dev/zero | tr '\\0' x", 10, 1 << 20, 0, hello, 2, &r, &e);
	is_int(rc, KS_ELIMIT, "huge output capped");
	ok(strstr(e.msg, "larger than 1048576 bytes") != NULL, "cap message: %s", e.msg);
	ks_llm_reply_release(&r);

	rc = call("head -c 300000 /dev/zero | tr '\\0' e >&2; echo fine", 10, 0, 1000, hello, 2,
		  &r, &e);
	is_int(rc, 0, "huge stderr does not fail the call");
	is_str(r.content, "fine\n", "reply intact");
	ok(r.log && strlen(r.log) < 1100 && strstr(r.log, "299000 more bytes of stderr dropped"),
	   "stderr capped (%zu bytes)", r.log ? strlen(r.log) : 0);
	ks_llm_reply_release(&r);

	struct ks_llm_cmd_config cfg;
	struct ks_llm_transport t;
	ks_llm_cmd_config_defaults(&cfg);
	rc = ks_llm_cmd_open(&cfg, &t, &e);
	is_int(rc, KS_EINVAL, "missing command");
}

struct rec {
	int n;
	char transport[16], purpose[16], model[16], reply[64], status[32], error[128];
};

static void on_record(const struct ks_llm_exchange *x, void *ctx)
{
	struct rec *r = ctx;
	r->n++;
	snprintf(r->status, sizeof(r->status), "%s", ks_llm_status_text(x->status));
	snprintf(r->error, sizeof(r->error), "%s", x->error ? x->error : "");
	snprintf(r->transport, sizeof(r->transport), "%s", x->transport);
	snprintf(r->purpose, sizeof(r->purpose), "%s", x->purpose);
	snprintf(r->model, sizeof(r->model), "%s", x->model);
	snprintf(r->reply, sizeof(r->reply), "%s", x->reply);
}

static void test_client(void)
{
	struct ks_llm_cmd_config cfg;
	struct ks_llm_transport t;
	struct ks_llm c;
	struct ks_llm_reply r;
	struct ks_error e = {0};
	struct rec rec = {0};
	ks_llm_cmd_config_defaults(&cfg);
	cfg.command = "echo answer";
	cfg.label = "my-cli-model";
	int rc = ks_llm_cmd_open(&cfg, &t, &e);
	is_int(rc, 0, "open");
	ks_llm_init(&c, &t);
	c.record = on_record;
	c.record_ctx = &rec;
	c.limits.max_calls = 1;
	rc = ks_llm_complete(&c, "debug", hello, 2, &r, &e);
	is_int(rc, 0, "client call through cmd");
	ks_llm_reply_release(&r);
	is_int(rec.n, 1, "recorded");
	is_str(rec.transport, "cmd", "transport name");
	is_str(rec.purpose, "debug", "purpose");
	is_str(rec.model, "my-cli-model", "label as model");
	is_str(rec.reply, "answer\n", "reply");
	rc = ks_llm_complete(&c, "debug", hello, 2, &r, &e);
	is_int(rc, KS_EBUDGET, "call budget");
	ks_llm_release(&c);
	ks_llm_transport_close(&t);

	/* an empty reply is recorded as an unusable reply: a replay must not read it as the
	 * replay's own divergence ("replay_mismatch") */
	cfg.command = "cat >/dev/null";
	rc = ks_llm_cmd_open(&cfg, &t, &e);
	is_int(rc, 0, "open a command that answers nothing");
	ks_llm_init(&c, &t);
	c.record = on_record;
	c.record_ctx = &rec;
	rc = ks_llm_complete(&c, "debug", hello, 2, &r, &e);
	is_int(rc, KS_EPARSE, "empty reply through the client");
	is_str(rec.status, "parse_error", "recorded as an unusable reply");
	ok(strstr(rec.error, "wrote no reply on stdout") != NULL, "with why: %s", rec.error);
	ks_llm_release(&c);
	ks_llm_transport_close(&t);
}

struct worker {
	struct ks_llm *c;
	int rc;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct ks_llm_reply r;
	struct ks_error e = {0};
	w->rc = ks_llm_complete(w->c, "action", hello, 2, &r, &e);
	ks_llm_reply_release(&r);
	return NULL;
}

static void count_record(const struct ks_llm_exchange *x, void *ctx)
{
	(*(int *)ctx)++;
}

/* calls in flight count against max_calls: 4 threads, 3 allowed */
static void test_threads(void)
{
	struct ks_llm_cmd_config cfg;
	struct ks_llm_transport t;
	struct ks_llm c;
	struct ks_error e = {0};
	int nrec = 0;
	ks_llm_cmd_config_defaults(&cfg);
	cfg.command = "sleep 0.3; echo ok";
	int rc = ks_llm_cmd_open(&cfg, &t, &e);
	is_int(rc, 0, "open");
	ks_llm_init(&c, &t);
	c.limits.max_calls = 3;
	c.record = count_record;
	c.record_ctx = &nrec;
	pthread_t th[4];
	struct worker w[4];
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){.c = &c};
		pthread_create(&th[i], NULL, worker_run, &w[i]);
	}
	int okc = 0, budget = 0;
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		okc += w[i].rc == 0;
		budget += w[i].rc == KS_EBUDGET;
	}
	is_int(okc, 3, "three concurrent calls ran");
	is_int(budget, 1, "the fourth was refused while the others were in flight");
	is_int(nrec, 3, "three records");
	is_int(c.usage.calls, 3, "calls counted once each");
	ks_llm_release(&c);
	ks_llm_transport_close(&t);
}

/* the scripted command model, driven through ks_llm_ask like a cmd-policy run */
static void test_fake_cmd(void)
{
	char dir[] = "/tmp/ks-fake-cmd-XXXXXX";
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	char script[128], command[512];
	snprintf(script, sizeof(script), "%s/s.json", dir);
	FILE *f = fopen(script, "w");
	fputs("{\"purposes\": {\"action\": [{\"content\": \"no code\", \"stderr\": \"warn\"},"
	      " {\"content\": \"oops\", \"exit\": 2}],"
	      " \"action-fix\": [{\"content\": \"```c\\nint ok;\\n```\"}]}}",
	      f);
	fclose(f);
	snprintf(command, sizeof(command),
		 "python3 tests/fake_llm/fake_llm_cmd.py --script %s --state %s/state.json", script,
		 dir);
	struct ks_llm_cmd_config cfg;
	struct ks_llm_transport t;
	struct ks_llm c;
	struct ks_error e = {0};
	struct ks_buf out;
	ks_buf_init(&out, 1 << 20);
	ks_llm_cmd_config_defaults(&cfg);
	cfg.command = command;
	cfg.timeout_s = 20;
	int rc = ks_llm_cmd_open(&cfg, &t, &e);
	is_int(rc, 0, "open");
	ks_llm_init(&c, &t);
	struct ks_llm_ask q = {.purpose = "action", .user = "PURPOSE: action\nwrite it",
			       .want = KS_LLM_WANT_CODE, .lang = "c", .max_fixes = 1};
	rc = ks_llm_ask(&c, &q, &out, NULL, &e);
	is_int(rc, 0, "scripted command answers after a correction");
	is_str(ks_buf_str(&out), "int ok;\n", "its code");
	rc = ks_llm_ask(&c, &q, &out, NULL, &e);
	is_int(rc, KS_EIO, "scripted exit status");
	ok(strstr(e.msg, "exited with status 2") != NULL, "message: %s", e.msg);
	ks_llm_release(&c);
	ks_llm_transport_close(&t);
	ks_buf_release(&out);
	snprintf(command, sizeof(command), "rm -rf '%s'", dir);
	if (system(command)) {
		/* best effort */
	}
}

int main(void)
{
	test_echo();
	test_failures();
	test_client();
	test_threads();
	test_fake_cmd();
	return tap_done();
}
