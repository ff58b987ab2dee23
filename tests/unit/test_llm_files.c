/* files transport: each request a numbered prompt file, the reply read from its reply file
 * once it holds still; a timeout and a cancellation end the wait. */
#include "ksearch/llm.h"
#include "tap.h"
#include "util/fs.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];

static const struct ks_llm_msg hello[] = {{"system", "sys"}, {"user", "PURPOSE: action\nhello"}};

struct answer {
	const char *prompt, *reply_path, *text;
	int seen; /* the prompt file existed when the agent looked */
};

/* an agent: waits for the prompt file, then writes the reply in two pieces */
static void *agent(void *arg)
{
	struct answer *a = arg;
	for (int i = 0; i < 500 && !ks_path_exists(a->prompt); i++)
		usleep(10000);
	a->seen = ks_path_exists(a->prompt);
	FILE *f = fopen(a->reply_path, "w");
	if (!f)
		return NULL;
	size_t half = strlen(a->text) / 2;
	fwrite(a->text, 1, half, f);
	fflush(f);
	usleep(20000); /* a reply written in pieces is read whole */
	fputs(a->text + half, f);
	fclose(f);
	return NULL;
}

static int open_files(int first, double timeout, int (*cancelled)(void *),
		      struct ks_llm_transport *t, struct ks_error *e)
{
	struct ks_llm_files_config c;
	ks_llm_files_config_defaults(&c);
	c.dir = dir;
	c.first = first;
	c.timeout_s = timeout;
	c.poll_s = 0.01;
	c.settle_s = 0.1;
	c.cancelled = cancelled;
	return ks_llm_files_open(&c, t, e);
}

static void test_exchange(void)
{
	struct ks_llm_transport t;
	struct ks_error e = {0};
	int rc = open_files(7, 30, NULL, &t, &e);
	is_int(rc, 0, "open");
	char readme[300], prompt[300], reply[300];
	snprintf(readme, sizeof(readme), "%s/README.md", dir);
	snprintf(prompt, sizeof(prompt), "%s/0007-action.prompt.md", dir);
	snprintf(reply, sizeof(reply), "%s/0007.reply.md", dir);
	ok(ks_path_exists(readme), "the folder gets a README.md");
	struct answer a = {prompt, reply, "CHANGED: x\n```c\nvoid f(void) {}\n```\n", 0};
	pthread_t th;
	pthread_create(&th, NULL, agent, &a);
	struct ks_llm_reply r;
	memset(&r, 0, sizeof(r));
	rc = t.complete(t.ctx, "action", hello, 2, &r, &e);
	pthread_join(th, NULL);
	is_int(rc, 0, "the reply file is the reply");
	ok(a.seen, "the prompt was written as 0007-action.prompt.md (the first number given)");
	is_str(r.content, a.text, "the whole reply, though written in two pieces");
	ok(r.prompt_tokens == -1 && r.completion_tokens == -1, "token counts unknown");
	struct ks_buf b = KS_BUF_INIT;
	ks_file_read(prompt, 1 << 20, &b, NULL);
	is_str(ks_buf_str(&b), "### system\nsys\n\n### user\nPURPOSE: action\nhello",
	       "the prompt file holds the messages as the cmd transport sends them");
	ks_buf_release(&b);
	ks_llm_reply_release(&r);
	ks_llm_transport_close(&t);
}

static void test_timeout(void)
{
	struct ks_llm_transport t;
	struct ks_error e = {0};
	open_files(1, 0.3, NULL, &t, &e);
	struct ks_llm_reply r;
	memset(&r, 0, sizeof(r));
	int rc = t.complete(t.ctx, "edit", hello, 2, &r, &e);
	is_int(rc, KS_ETIMEOUT, "no reply within the timeout");
	ok(strstr(e.msg, "no reply in ") && strstr(e.msg, "/0001.reply.md after 0.3 s"),
	   "... names the reply file (%s)", e.msg);
	ks_llm_transport_close(&t);
}

static int always(void *ctx)
{
	(void)ctx;
	return 1;
}

static void test_cancel(void)
{
	struct ks_llm_transport t;
	struct ks_error e = {0};
	open_files(2, 0, always, &t, &e);
	struct ks_llm_reply r;
	memset(&r, 0, sizeof(r));
	int rc = t.complete(t.ctx, "init", hello, 2, &r, &e);
	is_int(rc, KS_EINTERRUPTED, "a stopped run stops waiting");
	ks_llm_transport_close(&t);
	char empty[300];
	snprintf(empty, sizeof(empty), "%s/0003.reply.md", dir);
	ks_file_write_atomic(empty, "", 0, NULL);
	open_files(3, 0.3, NULL, &t, &e);
	rc = t.complete(t.ctx, "init", hello, 2, &r, &e);
	is_int(rc, KS_ETIMEOUT, "an empty reply file is not a reply yet");
	ks_llm_transport_close(&t);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ks-llm-files-XXXXXX");
	if (!mkdtemp(dir))
		return tap_skip_all("no temporary folder");
	strcat(dir, "/llm");
	test_exchange();
	test_timeout();
	test_cancel();
	dir[strlen(dir) - 4] = '\0';
	ks_rm_rf(dir);
	return tap_done();
}
