/* The files transport: a model without an API.  Each request is written as a numbered
 * file (DIR/0007-improve.prompt.md) and the exchange waits for the matching reply file
 * (DIR/0007.reply.md), so any agent or person who can read and write files is the model.
 * A reply is taken once its file has held still for a moment (an editor or agent may
 * write it in pieces); the wait ends on a timeout or when the run is stopped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ksearch/llm.h"
#include "ksearch/log.h"
#include "util/fs.h"

#define FILES_REPLY_CAP ((size_t)4 << 20)

struct files {
	char *dir;
	int next;
	double timeout_s, poll_s, settle_s;
	size_t max_reply_bytes;
	int (*cancelled)(void *ctx);
	void *cancel_ctx;
};

static const char readme[] =
	"# The model's desk\n\n"
	"ksearch writes each request to the model here as NNNN-PURPOSE.prompt.md and waits for\n"
	"the reply in NNNN.reply.md (the same number, no purpose). Read the prompt, write the\n"
	"whole reply in the format its last section asks for (fenced code block, JSON block,\n"
	"tagged notes), and save it. ksearch takes the reply once the file has stopped growing\n"
	"for a moment, and writes the next prompt when it has evaluated the kernel.\n\n"
	"Ctrl-C stops the run; `ksearch run --resume RUN_DIR` goes on from the prompt it was\n"
	"waiting for (a reply written meanwhile is taken at once). Every exchange is recorded in\n"
	"run.db, so `ksearch run TASK --llm-replay RUN_DIR` reproduces the run without anyone\n"
	"answering.\n";

void ks_llm_files_config_defaults(struct ks_llm_files_config *c)
{
	memset(c, 0, sizeof(*c));
	c->first = 1;
	c->poll_s = 0.2;
	c->settle_s = 0.5;
	c->max_reply_bytes = FILES_REPLY_CAP;
}

static void files_close(void *ctx)
{
	struct files *f = ctx;
	free(f->dir);
	free(f);
}

static const char *files_model(void *ctx)
{
	(void)ctx;
	return "files";
}

static int files_params(void *ctx, struct ks_buf *out)
{
	struct files *f = ctx;
	return ks_buf_addf(out, "{\"timeout_s\":%g}", f->timeout_s);
}

/* Wait for path to exist, be non-empty and hold its size for settle_s; 0 when it does */
static int reply_wait(struct files *f, const char *path, const char *prompt, struct ks_error *e)
{
	double t0 = ks_llm_sys.now(), since = 0;
	long long last = -1;
	for (;;) {
		if (f->cancelled && f->cancelled(f->cancel_ctx))
			return ks_error_set(e, KS_EINTERRUPTED, "stopped while waiting for %s", path);
		struct stat st;
		double now = ks_llm_sys.now();
		if (stat(path, &st) == 0 && st.st_size > 0) {
			if ((long long)st.st_size != last) {
				last = (long long)st.st_size;
				since = now;
			} else if (now - since >= f->settle_s) {
				return 0;
			}
		}
		if (f->timeout_s > 0 && now - t0 >= f->timeout_s)
			return ks_error_set(e, KS_ETIMEOUT, "no reply in %s after %g s (the prompt "
							  "is %s; --llm-timeout)",
					    path, f->timeout_s, prompt);
		ks_llm_sys.sleep(f->poll_s);
	}
}

static int files_complete(void *ctx, const char *purpose, const struct ks_llm_msg *msgs,
			  int nmsg, struct ks_llm_reply *reply, struct ks_error *e)
{
	struct files *f = ctx;
	char prompt[4200], answer[4200];
	int n = f->next++;
	snprintf(prompt, sizeof(prompt), "%s/%04d-%s.prompt.md", f->dir, n,
		 purpose && purpose[0] ? purpose : "request");
	snprintf(answer, sizeof(answer), "%s/%04d.reply.md", f->dir, n);
	struct ks_buf text = KS_BUF_INIT, out;
	ks_buf_init(&out, f->max_reply_bytes);
	double t0 = ks_llm_sys.now();
	int rc = ks_llm_msgs_text(msgs, nmsg, &text);
	if (!rc)
		rc = ks_file_write_buf(prompt, &text, e);
	if (rc)
		goto out;
	ks_info("waiting for the model: the prompt is %s, write the reply to %s", prompt, answer);
	if ((rc = reply_wait(f, answer, prompt, e)))
		goto out;
	if ((rc = ks_file_read(answer, f->max_reply_bytes, &out, e))) {
		if (rc == KS_ELIMIT)
			ks_error_set(e, rc, "reply %s is larger than %zu bytes", answer,
				     f->max_reply_bytes);
		goto out;
	}
	reply->content = ks_buf_detach(&out, &reply->len);
	reply->prompt_tokens = reply->completion_tokens = -1; /* nobody counted them */
	reply->attempts = 1;
out:
	reply->latency_s = ks_llm_sys.now() - t0;
	ks_buf_release(&text);
	ks_buf_release(&out);
	return rc;
}

int ks_llm_files_open(const struct ks_llm_files_config *cfg, struct ks_llm_transport *t,
		      struct ks_error *e)
{
	memset(t, 0, sizeof(*t));
	if (!cfg->dir || !cfg->dir[0])
		return ks_error_set(e, KS_EINVAL, "files transport without a folder");
	int rc = ks_mkdir_p(cfg->dir, e);
	if (rc)
		return ks_error_wrap(e, "the model's folder '%s'", cfg->dir);
	char path[4200];
	snprintf(path, sizeof(path), "%s/README.md", cfg->dir);
	if (!ks_path_exists(path) && (rc = ks_file_write_atomic(path, readme, strlen(readme), e)))
		return rc;
	struct files *f = calloc(1, sizeof(*f));
	if (!f || !(f->dir = strdup(cfg->dir))) {
		free(f);
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	}
	f->next = cfg->first > 0 ? cfg->first : 1;
	f->timeout_s = cfg->timeout_s;
	f->poll_s = cfg->poll_s > 0 ? cfg->poll_s : 0.2;
	f->settle_s = cfg->settle_s >= 0 ? cfg->settle_s : 0.5;
	f->max_reply_bytes = cfg->max_reply_bytes ? cfg->max_reply_bytes : FILES_REPLY_CAP;
	f->cancelled = cfg->cancelled;
	f->cancel_ctx = cfg->cancel_ctx;
	*t = (struct ks_llm_transport){.version = KS_LLM_TRANSPORT_VERSION, .name = "files",
				       .complete = files_complete, .model = files_model,
				       .params_json = files_params, .close = files_close,
				       .ctx = f};
	return 0;
}
