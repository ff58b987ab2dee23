/* Command policy transport: any program that reads a prompt on stdin and writes a reply on
 * stdout (`--policy cmd --llm-cmd 'CMD'`), run under a timeout with capped output. */
#include "llm/cmd.h"
#include "ksearch/llm.h"
#include "util/clock.h"
#include "util/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD_DEFAULT_REPLY_CAP ((size_t)4 << 20)
#define CMD_DEFAULT_STDERR_CAP ((size_t)64 << 10)
/* how long output is still read after the shell exits: a background process it left
 * behind may hold stdout open for ever, and the reply is complete once the shell is gone */
#define CMD_EXIT_GRACE_S 0.2

int ks_cmd_run(const char *command, const char *input, size_t input_len, double timeout_s,
	       struct ks_buf *out, struct ks_buf *err, struct ks_cmd_result *res,
	       struct ks_error *e)
{
	char *argv[] = {(char *)"/bin/sh", (char *)"-c", (char *)command, NULL};
	struct ks_proc_io io = {
		.input = input ? input : "",
		.input_len = input ? input_len : 0,
		.out = out,
		.err = err,
		.out_cap_kills = 1,
		.timeout_s = timeout_s > 0 ? timeout_s : 600,
		.exit_grace_s = CMD_EXIT_GRACE_S,
	};
	struct ks_proc_result pr;
	memset(res, 0, sizeof(*res));
	int rc = ks_proc_exec(argv, &io, &pr, e);
	res->exited = pr.exited;
	res->status = pr.code;
	res->timed_out = pr.timed_out;
	res->out_over_cap = pr.out_over_cap;
	res->err_dropped = pr.err_dropped;
	if (rc) {
		ks_error_wrap(e, "run command");
		return rc;
	}
	if (pr.timed_out)
		return ks_error_set(e, KS_ETIMEOUT, "command timed out after %.1fs", io.timeout_s);
	if (pr.out_over_cap)
		return ks_error_set(e, KS_ELIMIT, "command output larger than %zu bytes", out->cap);
	return 0;
}

/* ---------------------------------------------------------------- transport */

struct cmd {
	char *command;
	char *label;
	double timeout_s;
	size_t max_reply_bytes;
	size_t max_stderr_bytes;
};

void ks_llm_cmd_config_defaults(struct ks_llm_cmd_config *c)
{
	memset(c, 0, sizeof(*c));
	c->label = "cmd";
	c->timeout_s = 600;
	c->max_reply_bytes = CMD_DEFAULT_REPLY_CAP;
	c->max_stderr_bytes = CMD_DEFAULT_STDERR_CAP;
}

static void cmd_close(void *ctx)
{
	struct cmd *c = ctx;
	free(c->command);
	free(c->label);
	free(c);
}

static const char *cmd_model(void *ctx)
{
	return ((struct cmd *)ctx)->label;
}

static int cmd_params_json(void *ctx, struct ks_buf *out)
{
	struct cmd *c = ctx;
	/* the command line may hold anything; it is recorded (ks_llm redacts known keys) */
	/* a failed add leaves the buffer failed: one check at the end */
	ks_buf_adds(out, "{\"command\":\"");
	for (const char *p = c->command; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch == '"' || ch == '\\')
			ks_buf_addf(out, "\\%c", ch);
		else if (ch < 0x20)
			ks_buf_addf(out, "\\u%04x", ch);
		else
			ks_buf_add(out, p, 1);
	}
	ks_buf_addf(out, "\",\"timeout_s\":%g}", c->timeout_s);
	return ks_buf_failed(out);
}

/* the last non-empty line of stderr, for error messages */
static void err_tail(const struct ks_buf *b, char *out, size_t n)
{
	const char *s = ks_buf_str(b);
	size_t end = b->len;
	while (end && (s[end - 1] == '\n' || s[end - 1] == '\r' || s[end - 1] == ' '))
		end--;
	size_t start = end;
	while (start && s[start - 1] != '\n')
		start--;
	size_t len = end - start;
	if (len >= n)
		len = n - 1;
	memcpy(out, s + start, len);
	out[len] = '\0';
	for (char *p = out; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
}

static int cmd_complete(void *ctx, const char *purpose, const struct ks_llm_msg *msgs,
			int nmsg, struct ks_llm_reply *reply, struct ks_error *e)
{
	struct cmd *c = ctx;
	struct ks_buf prompt, out, err;
	struct ks_cmd_result res;
	char tail[256];
	double t0 = ks_clock_s();
	ks_buf_init(&prompt, 0);
	ks_buf_init(&out, c->max_reply_bytes);
	ks_buf_init(&err, c->max_stderr_bytes);
	int rc = ks_llm_msgs_text(msgs, nmsg, &prompt);
	if (rc) {
		rc = ks_error_set(e, rc, "build prompt: %s", ks_strerror(rc));
		goto out;
	}
	rc = ks_cmd_run(c->command, ks_buf_str(&prompt), prompt.len, c->timeout_s, &out, &err,
			&res, e);
	reply->latency_s = ks_clock_s() - t0;
	reply->attempts = 1;
	reply->status = res.status;
	if (err.len) {
		err.cap += 128; /* room for the note */
		if (res.err_dropped)
			ks_buf_addf(&err, "\n[%zu more bytes of stderr dropped]", res.err_dropped);
		reply->log = ks_buf_detach(&err, NULL);
	}
	if (rc == KS_ETIMEOUT || rc == KS_ELIMIT) {
		ks_error_wrap(e, "command '%.80s'", c->command);
		goto out;
	}
	if (rc)
		goto out;
	struct ks_buf tb = {.data = reply->log, .len = reply->log ? strlen(reply->log) : 0};
	err_tail(&tb, tail, sizeof(tail));
	if (!res.exited) {
		rc = ks_error_set(e, KS_EIO, "command '%.80s' killed by signal %d%s%s", c->command,
				  res.status, tail[0] ? ": " : "", tail);
		goto out;
	}
	if (res.status != 0) {
		rc = ks_error_set(e, KS_EIO, "command '%.80s' exited with status %d%s%s",
				  c->command, res.status, tail[0] ? ": " : "", tail);
		goto out;
	}
	if (out.len == 0) {
		/* an unusable reply like an HTTP reply without content, recorded and replayed
		 * as such (KS_EPROTO is the replay's word for a divergence) */
		rc = ks_error_set(e, KS_EPARSE, "command '%.80s' wrote no reply on stdout",
				  c->command);
		goto out;
	}
	reply->content = ks_buf_detach(&out, &reply->len);
	reply->prompt_tokens = -1;
	reply->completion_tokens = -1;
out:
	ks_buf_release(&prompt);
	ks_buf_release(&out);
	ks_buf_release(&err);
	return rc;
}

int ks_llm_cmd_open(const struct ks_llm_cmd_config *cfg, struct ks_llm_transport *t,
		    struct ks_error *e)
{
	memset(t, 0, sizeof(*t));
	if (!cfg->command || !cfg->command[0])
		return ks_error_set(e, KS_EINVAL, "llm command not set (--llm-cmd)");
	struct cmd *c = calloc(1, sizeof(*c));
	if (!c)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	c->command = strdup(cfg->command);
	c->label = strdup(cfg->label && cfg->label[0] ? cfg->label : "cmd");
	c->timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : 600;
	c->max_reply_bytes = cfg->max_reply_bytes ? cfg->max_reply_bytes : CMD_DEFAULT_REPLY_CAP;
	c->max_stderr_bytes = cfg->max_stderr_bytes ? cfg->max_stderr_bytes
						    : CMD_DEFAULT_STDERR_CAP;
	if (!c->command || !c->label) {
		cmd_close(c);
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	}
	*t = (struct ks_llm_transport){
		.version = KS_LLM_TRANSPORT_VERSION,
		.name = "cmd",
		.complete = cmd_complete,
		.model = cmd_model,
		.params_json = cmd_params_json,
		.close = cmd_close,
		.ctx = c,
	};
	return 0;
}
