/* Command policy transport: any program that reads a prompt on stdin and writes a reply on
 * stdout (`--policy cmd --llm-cmd 'CMD'`), run under a timeout with capped output. */
#include "policy/cmd.h"
#include "ksearch/llm.h"
#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define CMD_DEFAULT_REPLY_CAP ((size_t)4 << 20)
#define CMD_DEFAULT_STDERR_CAP ((size_t)64 << 10)

static void fd_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int spawn_sh(const char *command, int in, int out, int err, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	int rc;
	if ((rc = posix_spawn_file_actions_init(&fa)))
		return rc;
	if ((rc = posix_spawnattr_init(&at))) {
		posix_spawn_file_actions_destroy(&fa);
		return rc;
	}
	posix_spawn_file_actions_adddup2(&fa, in, 0);
	posix_spawn_file_actions_adddup2(&fa, out, 1);
	posix_spawn_file_actions_adddup2(&fa, err, 2);
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGTERM);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
					      POSIX_SPAWN_SETSIGDEF);
	char *argv[] = {"sh", "-c", (char *)command, NULL};
	rc = posix_spawn(pid, "/bin/sh", &fa, &at, argv, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

int ks_cmd_run(const char *command, const char *input, size_t input_len, double timeout_s,
	       struct ks_buf *out, struct ks_buf *err, struct ks_cmd_result *res,
	       struct ks_error *e)
{
	int sv[2] = {-1, -1}, po[2] = {-1, -1}, pe[2] = {-1, -1};
	pid_t pid = -1;
	int rc = 0, wstatus = 0, reaped = 0;
	size_t sent = 0;
	memset(res, 0, sizeof(*res));
	/* stdin is a socket so writing to a command that exited is EPIPE, not SIGPIPE */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) || pipe2(po, O_CLOEXEC) ||
	    pipe2(pe, O_CLOEXEC)) {
		rc = ks_error_set(e, KS_ESYS, "run command: pipe: %s", strerror(errno));
		goto out;
	}
	int src = spawn_sh(command, sv[1], po[1], pe[1], &pid);
	fd_close(&sv[1]);
	fd_close(&po[1]);
	fd_close(&pe[1]);
	if (src) {
		pid = -1;
		rc = ks_error_set(e, KS_ESYS, "run command: spawn /bin/sh: %s", strerror(src));
		goto out;
	}
	shutdown(sv[0], SHUT_RD);
	fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
	fcntl(po[0], F_SETFL, fcntl(po[0], F_GETFL) | O_NONBLOCK);
	fcntl(pe[0], F_SETFL, fcntl(pe[0], F_GETFL) | O_NONBLOCK);
	if (!input_len)
		fd_close(&sv[0]);
	double deadline = ks_clock_s() + (timeout_s > 0 ? timeout_s : 600);
	char chunk[65536];
	while (po[0] >= 0 || pe[0] >= 0 || !reaped) {
		double left = deadline - ks_clock_s();
		if (left <= 0) {
			res->timed_out = 1;
			break;
		}
		if (po[0] < 0 && pe[0] < 0) {
			/* output closed: wait for the exit (a daemonising child keeps us here) */
			pid_t w = waitpid(pid, &wstatus, WNOHANG);
			if (w == pid) {
				reaped = 1;
				break;
			}
			struct timespec ts = {0, 10 * 1000 * 1000};
			nanosleep(&ts, NULL);
			continue;
		}
		struct pollfd pf[3];
		int np = 0, io = -1, ie = -1, ii = -1;
		if (po[0] >= 0) {
			io = np;
			pf[np++] = (struct pollfd){.fd = po[0], .events = POLLIN};
		}
		if (pe[0] >= 0) {
			ie = np;
			pf[np++] = (struct pollfd){.fd = pe[0], .events = POLLIN};
		}
		if (sv[0] >= 0) {
			ii = np;
			pf[np++] = (struct pollfd){.fd = sv[0], .events = POLLOUT};
		}
		int ms = left > 1 ? 1000 : (int)(left * 1000) + 1;
		int n = poll(pf, (nfds_t)np, ms);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = ks_error_set(e, KS_ESYS, "run command: poll: %s", strerror(errno));
			goto kill;
		}
		if (ii >= 0 && pf[ii].revents) {
			ssize_t k = send(sv[0], input + sent, input_len - sent,
					 MSG_NOSIGNAL | MSG_DONTWAIT);
			if (k > 0)
				sent += (size_t)k;
			if ((k < 0 && errno != EAGAIN && errno != EINTR) || sent == input_len)
				fd_close(&sv[0]); /* done, or the command stopped reading */
		}
		if (io >= 0 && pf[io].revents) {
			ssize_t k = read(po[0], chunk, sizeof(chunk));
			if (k > 0 && ks_buf_add(out, chunk, (size_t)k)) {
				res->out_over_cap = 1;
				rc = ks_error_set(e, KS_ELIMIT,
						  "command output larger than %zu bytes", out->cap);
				goto kill;
			}
			if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
				fd_close(&po[0]);
		}
		if (ie >= 0 && pf[ie].revents) {
			ssize_t k = read(pe[0], chunk, sizeof(chunk));
			if (k > 0) {
				size_t room = err->cap > err->len ? err->cap - err->len : 0;
				size_t take = (size_t)k < room ? (size_t)k : room;
				if (take && ks_buf_add(err, chunk, take))
					take = 0;
				res->err_dropped += (size_t)k - take;
			}
			if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
				fd_close(&pe[0]);
		}
	}
	if (res->timed_out) {
		rc = ks_error_set(e, KS_ETIMEOUT, "command timed out after %.1fs", timeout_s);
		goto kill;
	}
	if (!reaped) {
		while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
			;
		reaped = 1;
	}
kill:
	/* the whole group: the shell and anything it started */
	kill(-pid, SIGKILL);
	if (!reaped)
		while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
			;
	if (WIFEXITED(wstatus)) {
		res->exited = 1;
		res->status = WEXITSTATUS(wstatus);
	} else if (WIFSIGNALED(wstatus)) {
		res->status = WTERMSIG(wstatus);
	}
out:
	fd_close(&sv[0]);
	fd_close(&sv[1]);
	fd_close(&po[0]);
	fd_close(&po[1]);
	fd_close(&pe[0]);
	fd_close(&pe[1]);
	if (!out->data)
		ks_buf_add(out, "", 0);
	if (!err->data)
		ks_buf_add(err, "", 0);
	return rc;
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
	int rc = ks_buf_adds(out, "{\"command\":\"");
	for (const char *p = c->command; *p && !rc; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch == '"' || ch == '\\')
			rc = ks_buf_addf(out, "\\%c", ch);
		else if (ch < 0x20)
			rc = ks_buf_addf(out, "\\u%04x", ch);
		else
			rc = ks_buf_add(out, p, 1);
	}
	if (!rc)
		rc = ks_buf_addf(out, "\",\"timeout_s\":%g}", c->timeout_s);
	return rc;
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
		rc = ks_error_set(e, KS_EPROTO, "command '%.80s' wrote no reply on stdout",
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
