#include "eval/runner_client.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eval/runner_proto.h"
#include "util/fs.h"
#include "util/clock.h"
#include "util/os.h"
#include "util/proc.h"

#define LOG_CAP (64 << 10)
#define REPLY_CAP (4 << 20)

/* in the child, just before exec: the sandbox's limits and its own session */
static int runner_prepare(void *ctx)
{
	return ks_sandbox_child_prepare(ctx);
}

/* r's scratch folder, <cache>/scratch/run-PID-XXXXXX (the pid lets a later process remove
 * it once this one is gone), and the child's quota on it when it has one */
static int runner_scratch(struct ks_runner *r, struct ks_error *e)
{
	char tmpl[PATH_MAX];
	snprintf(tmpl, sizeof(tmpl), "%s/scratch", ks_cache_root());
	int rc = ks_mkdir_p(tmpl, e);
	if (rc)
		return rc;
	snprintf(r->scratch, sizeof(r->scratch), "%s/scratch/run-%d-XXXXXX", ks_cache_root(),
		 (int)getpid());
	if (!mkdtemp(r->scratch)) {
		r->scratch[0] = '\0';
		return ks_error_set(e, KS_EIO, "create scratch directory: %s", strerror(errno));
	}
	r->limits.scratch = r->limits.scratch_bytes ? r->scratch : NULL;
	return 0;
}

/* a pids cgroup of r's own for its child to join, where there is one (src/eval/cgroup_linux.c) */
static void runner_cgroup(struct ks_runner *r, long max_threads)
{
	r->limits.cgroup = NULL;
	if (max_threads <= 0 || ks_cgroup_create(max_threads, r->cgroup, sizeof(r->cgroup))) {
		r->cgroup[0] = '\0';
		return;
	}
	snprintf(r->cgroup_procs, sizeof(r->cgroup_procs), "%s/cgroup.procs", r->cgroup);
	r->limits.cgroup = r->cgroup_procs;
}

/* The shared output file of bytes, sealed at its size before the runner exists (a kernel
 * that truncates it, descriptor KS_RUNNER_FD_OUT of its runner, gets EPERM, where this
 * process would die of SIGBUS reading its outputs), mapped read-only into r->out */
static int output_file(struct ks_runner *r, size_t bytes, int *fd, struct ks_error *e)
{
	*fd = ks_os_fixed_shm("ksearch-outputs", bytes);
	if (*fd < 0)
		return ks_error_set(e, KS_ESYS, "output file: %s", strerror(errno));
	r->out = mmap(NULL, bytes, PROT_READ, MAP_SHARED, *fd, 0);
	if (r->out == MAP_FAILED) {
		r->out = NULL;
		return ks_error_set(e, KS_ESYS, "map output file: %s", strerror(errno));
	}
	r->out_bytes = bytes;
	return 0;
}

/* the runner's scrubbed environment with sp's extra variables (NULL: out of memory) */
static char **runner_env(const struct ks_runner_spawn *sp, const char *scratch)
{
	const char *base[] = {"MALLOC_ARENA_MAX=4", NULL};
	const char *extra[32];
	int nx = 0;
	for (int i = 0; base[i]; i++)
		extra[nx++] = base[i];
	for (int i = 0; sp->extra_env && sp->extra_env[i] && nx < 31; i++)
		extra[nx++] = sp->extra_env[i];
	extra[nx] = NULL;
	return ks_env_scrubbed(scratch, extra);
}

int ks_runner_start(const struct ks_runner_spawn *sp, struct ks_runner **out,
		    struct ks_error *e)
{
	struct ks_runner *r = calloc(1, sizeof(*r));
	if (!r)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	r->pid = -1;
	r->cmd_fd = r->reply_fd = r->log_fd = -1;
	r->address_space = sp->limits.address_space;
	r->cpu_limit_s = sp->limits.cpu_seconds;
	r->limits = sp->limits;
	ks_buf_init(&r->replies, REPLY_CAP);
	ks_buf_init(&r->log, LOG_CAP);
	int cmd[2] = {-1, -1}, rep[2] = {-1, -1}, lg[2] = {-1, -1}, out_fd = -1, rc = 0;
	char **env = NULL;
	if ((rc = runner_scratch(r, e)))
		goto fail;
	runner_cgroup(r, sp->max_threads);
	if (ks_os_pipe(cmd) || ks_os_pipe(rep) || ks_os_pipe(lg)) {
		rc = ks_error_set(e, KS_ESYS, "pipe: %s", strerror(errno));
		goto fail;
	}
	if (sp->out_bytes && (rc = output_file(r, sp->out_bytes, &out_fd, e)))
		goto fail;
	if (!(env = runner_env(sp, r->scratch))) {
		rc = ks_error_set(e, KS_ENOMEM, "out of memory");
		goto fail;
	}
	char *argv[] = {(char *)"ksearch-runner", NULL};
	struct ks_spawn cs = {
		.argv = argv,
		.path = sp->runner_path,
		.env = env,
		.nfd = KS_RUNNER_FD_OUT + 1,
		.fd = {[0] = KS_SPAWN_NULL,
		       [1] = lg[1],
		       [2] = lg[1],
		       [KS_RUNNER_FD_CMD] = cmd[0],
		       [KS_RUNNER_FD_REPLY] = rep[1],
		       [KS_RUNNER_FD_OUT] = out_fd >= 0 ? out_fd : KS_SPAWN_NULL},
		.prepare = runner_prepare,
		.ctx = &r->limits,
		.prepare_sets_group = 1,
	};
	uint64_t spawned = ks_clock_ns();
	if ((rc = ks_spawn(&cs, &r->pid, e))) {
		r->pid = -1;
		goto fail;
	}
	free(env);
	env = NULL;
	close(cmd[0]);
	close(rep[1]);
	close(lg[1]);
	if (out_fd >= 0)
		close(out_fd);
	r->cmd_fd = cmd[1];
	r->reply_fd = rep[0];
	r->log_fd = lg[0];
	fcntl(r->reply_fd, F_SETFL, O_NONBLOCK);
	fcntl(r->log_fd, F_SETFL, O_NONBLOCK);
	signal(SIGPIPE, SIG_IGN);
	const char *reply;
	if ((rc = ks_runner_cmd(r, 30, &reply, e, "hello")))
		goto fail_started;
	unsigned long long main_ns = 0;
	if (sscanf(reply, "ok ksearch-runner %*d %llu", &main_ns) == 1 && main_ns > spawned)
		r->exec_s = (double)(main_ns - spawned) * 1e-9;
	/* before the sandbox: its file rules give the runner this directory read-only */
	if (sp->inputs_dir && (rc = ks_runner_cmd(r, 30, &reply, e, "inputs %s", sp->inputs_dir)))
		goto fail_started;
	if (sp->sandbox && (rc = ks_runner_cmd(r, 30, &reply, e, "sandbox %s", r->scratch)))
		goto fail_started;
	*out = r;
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (cmd[i] >= 0)
			close(cmd[i]);
		if (rep[i] >= 0)
			close(rep[i]);
		if (lg[i] >= 0)
			close(lg[i]);
	}
	if (out_fd >= 0)
		close(out_fd);
	free(env);
fail_started:
	ks_runner_free(r);
	return rc;
}

static void drain_log(struct ks_runner *r)
{
	char chunk[4096];
	ssize_t n;
	while (r->log_fd >= 0 && (n = read(r->log_fd, chunk, sizeof(chunk))) > 0)
		if (r->log.len < LOG_CAP - 1)
			ks_buf_add(&r->log, chunk,
				   (size_t)n < LOG_CAP - 1 - r->log.len ? (size_t)n
									 : LOG_CAP - 1 - r->log.len);
}

/* waitpid, keeping what the kernel tells of a runner that ended: its peak memory and CPU
 * time say what a SIGKILL meant (ks_runner_fate) */
static pid_t runner_wait4(struct ks_runner *r, int *st, int flags)
{
	struct rusage ru;
	pid_t w = wait4(r->pid, st, flags, &ru);
	if (w == r->pid && !WIFSTOPPED(*st)) {
		r->peak_rss = (size_t)ru.ru_maxrss << 10; /* KiB on Linux */
		r->cpu_used_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
				(double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
	}
	return w;
}

static void kill_runner(struct ks_runner *r)
{
	/* one that died already (a command found its pipe closed) keeps its own fate */
	if (r->pid > 0 && !r->reaped && runner_wait4(r, &r->wstatus, WNOHANG) == r->pid)
		r->reaped = 1;
	if (r->pid > 0 && !r->reaped) {
		r->killed = 1;
		r->paused = 0; /* SIGKILL ends a stopped process too */
		kill(-r->pid, SIGKILL);
		kill(r->pid, SIGKILL);
		if (runner_wait4(r, &r->wstatus, 0) == r->pid)
			r->reaped = 1;
	}
}

/* take one complete line out of r->replies into line; 1 when found */
static int next_line(struct ks_runner *r, struct ks_buf *line)
{
	char *nl = r->replies.data ? memchr(r->replies.data, '\n', r->replies.len) : NULL;
	if (!nl)
		return 0;
	size_t n = (size_t)(nl - r->replies.data);
	ks_buf_reset(line);
	ks_buf_add(line, r->replies.data, n);
	memmove(r->replies.data, nl + 1, r->replies.len - n - 1);
	r->replies.len -= n + 1;
	r->replies.data[r->replies.len] = '\0';
	return 1;
}

static int runner_vsend(struct ks_runner *r, struct ks_error *e, const char *fmt, va_list ap)
{
	char cmd[8192];
	int n = vsnprintf(cmd, sizeof(cmd) - 1, fmt, ap);
	if (n < 0 || n >= (int)sizeof(cmd) - 1)
		return ks_error_set(e, KS_ELIMIT, "runner command too long");
	cmd[n++] = '\n';
	if (r->reaped)
		return ks_error_set(e, KS_EPROTO, "runner is not running");
	for (int off = 0; off < n;) {
		ssize_t w = write(r->cmd_fd, cmd + off, (size_t)(n - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return ks_error_set(e, KS_EPROTO, "runner died");
		off += (int)w;
	}
	return 0;
}

int ks_runner_send(struct ks_runner *r, struct ks_error *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = runner_vsend(r, e, fmt, ap);
	va_end(ap);
	return rc;
}

int ks_runner_cmd(struct ks_runner *r, double timeout_s, const char **reply, struct ks_error *e,
		  const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = runner_vsend(r, e, fmt, ap);
	va_end(ap);
	return rc ? rc : ks_runner_wait(r, timeout_s, reply, e);
}

/* the text of a runner's line: its "\\n" and "\\\\" back to a newline and a backslash
 * (ks_runner_line in src/runner/interpose_linux.c) */
static void unescape(char *dst, size_t cap, const char *src)
{
	size_t n = 0;
	for (; *src && n + 1 < cap; src++) {
		if (src[0] == '\\' && (src[1] == 'n' || src[1] == '\\')) {
			dst[n++] = src[1] == 'n' ? '\n' : '\\';
			src++;
		} else {
			dst[n++] = *src;
		}
	}
	dst[n] = '\0';
}

int ks_runner_wait(struct ks_runner *r, double timeout_s, const char **reply, struct ks_error *e)
{
	static __thread struct ks_buf line = {.cap = REPLY_CAP};
	double deadline = ks_clock_s() + timeout_s;
	for (;;) {
		while (next_line(r, &line)) {
			const char *l = ks_buf_str(&line);
			if (!strncmp(l, "violation ", 10)) {
				unescape(r->violation, sizeof(r->violation), l + 10);
				continue;
			}
			if (!strncmp(l, "alloc_failed ", 13)) {
				r->alloc_failed = strtoull(l + 13, NULL, 10);
				continue;
			}
			if (!strncmp(l, "launch_failed ", 14)) {
				unescape(r->launch_error, sizeof(r->launch_error), l + 14);
				continue;
			}
			if (!strncmp(l, "error ", 6)) {
				char why[1024];
				unescape(why, sizeof(why), l + 6);
				return ks_error_set(e, KS_EPROTO, "%s", why);
			}
			*reply = l;
			return 0;
		}
		double left = deadline - ks_clock_s();
		if (left <= 0) {
			r->timed_out = 1;
			kill_runner(r);
			drain_log(r);
			return ks_error_set(e, KS_ETIMEOUT, "no answer within %.0f s", timeout_s);
		}
		struct pollfd pfd[2] = {{r->reply_fd, POLLIN, 0}, {r->log_fd, POLLIN, 0}};
		int pr = poll(pfd, 2, left > 1 ? 1000 : (int)(left * 1000) + 1);
		if (pr < 0 && errno != EINTR)
			return ks_error_set(e, KS_ESYS, "poll: %s", strerror(errno));
		if (pfd[1].revents)
			drain_log(r);
		if (pfd[0].revents & POLLIN) {
			char chunk[65536];
			ssize_t got;
			while ((got = read(r->reply_fd, chunk, sizeof(chunk))) > 0)
				if (ks_buf_add(&r->replies, chunk, (size_t)got)) {
					kill_runner(r);
					return ks_error_set(e, KS_ELIMIT, "runner reply too large");
				}
			if (got == 0)
				goto dead;
		} else if (pfd[0].revents & (POLLHUP | POLLERR)) {
			goto dead;
		}
	}
dead:
	/* parse what is left: a last violation line may be buffered */
	while (next_line(r, &line)) {
		const char *l = ks_buf_str(&line);
		if (!strncmp(l, "violation ", 10))
			unescape(r->violation, sizeof(r->violation), l + 10);
		else if (!strncmp(l, "alloc_failed ", 13))
			r->alloc_failed = strtoull(l + 13, NULL, 10);
		else if (!strncmp(l, "launch_failed ", 14))
			unescape(r->launch_error, sizeof(r->launch_error), l + 14);
	}
	drain_log(r);
	if (!r->reaped && runner_wait4(r, &r->wstatus, 0) == r->pid)
		r->reaped = 1;
	return ks_error_set(e, KS_EPROTO, "runner died");
}

/* "blocked system call 62" -> " (kill)": the runner's SIGSYS handler only knows the
 * number (naming it there would allocate) */
static void syscall_name(const char *violation, struct ks_buf *log)
{
	int nr;
	if (sscanf(violation, "blocked system call %d", &nr) != 1)
		return;
	char name[64];
	if (ks_sandbox_syscall_name(nr, name, sizeof(name)) == 0)
		ks_buf_addf(log, " (%s)", name);
}

static double gib(double bytes)
{
	return bytes / (double)(1 << 30);
}

/* A SIGKILL ksearch did not send.  The memory limit is RLIMIT_AS: past it an allocation
 * fails (the runner reports alloc_failed, or the kernel crashes on NULL), it is not
 * killed.  A SIGKILL comes from RLIMIT_CPU's hard limit, from the kernel's OOM killer
 * (which picks the process holding the most memory, so the victim is big), or from
 * someone else: an operator's kill -9, a watchdog, the kernel itself. */
static enum ks_status sigkill_fate(struct ks_runner *r, struct ks_buf *log)
{
	if (r->cpu_limit_s > 0 && r->cpu_used_s >= r->cpu_limit_s) {
		ks_buf_addf(log, "CPU time limit exceeded (killed after %.0f s of CPU time)",
			    r->cpu_used_s);
		return KS_STATUS_TIMEOUT;
	}
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
	double room = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
	if (r->address_space && (!room || (double)r->address_space < room))
		room = (double)r->address_space;
	if (!room || (double)r->peak_rss >= room / 2) {
		ks_buf_addf(log, "killed by SIGKILL at a peak of %.2f GiB of the %.2f GiB it may use: "
				 "out of memory",
			    gib((double)r->peak_rss), gib(room));
		return KS_STATUS_MEMORY_LIMIT;
	}
	r->killed_outside = 1;
	ks_buf_addf(log, "killed by a SIGKILL that ksearch did not send, at a peak of %.0f MiB, far "
			 "below the %.2f GiB it may use: not out of memory",
		    (double)r->peak_rss / (1 << 20), gib(room));
	return KS_STATUS_RUNTIME_ERROR;
}

enum ks_status ks_runner_fate(struct ks_runner *r, struct ks_buf *log)
{
	if (!r->reaped) {
		/* it answered "error" or we gave up: make sure it is gone */
		kill_runner(r);
	}
	drain_log(r);
	enum ks_status st = KS_STATUS_RUNTIME_ERROR;
	if (r->violation[0]) {
		ks_buf_addf(log, "sandbox violation: %s", r->violation);
		syscall_name(r->violation, log);
		st = KS_STATUS_SANDBOX_VIOLATION;
	} else if (r->alloc_failed) {
		ks_buf_addf(log, "allocation of %zu bytes failed under the memory limit",
			    r->alloc_failed);
		st = KS_STATUS_MEMORY_LIMIT;
	} else if (r->launch_error[0]) {
		/* a device that compiles at the first call (mlx) says "compile error: LOG" */
		int compile = !strncmp(r->launch_error, "compile error: ", 15);
		ks_buf_addf(log, "%s%s", compile ? "" : "device error: ", r->launch_error);
		st = compile ? KS_STATUS_COMPILE_ERROR : KS_STATUS_RUNTIME_ERROR;
	} else if (r->timed_out) {
		ks_buf_addf(log, "killed after the time limit");
		st = KS_STATUS_TIMEOUT;
	} else if (WIFSIGNALED(r->wstatus)) {
		int sig = WTERMSIG(r->wstatus);
		if (sig == SIGSYS) {
			ks_buf_addf(log, "sandbox violation: killed by SIGSYS (forbidden system call)");
			st = KS_STATUS_SANDBOX_VIOLATION;
		} else if (sig == SIGXCPU) {
			ks_buf_addf(log, "CPU time limit exceeded");
			st = KS_STATUS_TIMEOUT;
		} else if (sig == SIGKILL && r->killed) {
			ks_buf_addf(log, "stopped after it reported an error");
		} else if (sig == SIGKILL) {
			st = sigkill_fate(r, log);
		} else {
			ks_buf_addf(log, "crashed with signal %d (%s)", sig, strsignal(sig));
		}
	} else if (WIFEXITED(r->wstatus)) {
		int code = WEXITSTATUS(r->wstatus);
		if (code == KS_RUNNER_EXIT_VIOLATION) {
			ks_buf_addf(log, "sandbox violation");
			st = KS_STATUS_SANDBOX_VIOLATION;
		} else if (code == KS_RUNNER_EXIT_MEMORY) {
			ks_buf_addf(log, "allocation failed under the memory limit");
			st = KS_STATUS_MEMORY_LIMIT;
		} else {
			ks_buf_addf(log, "the process exited with status %d during the call", code);
		}
	}
	if (r->log.len)
		ks_buf_addf(log, "\n--- kernel output ---\n%.4000s", ks_buf_str(&r->log));
	return st;
}

int ks_runner_pause(struct ks_runner *r)
{
	if (r->pid <= 0 || r->reaped)
		return -1;
	if (kill(-r->pid, SIGSTOP) && kill(r->pid, SIGSTOP))
		return -1;
	/* bounded: a thread stuck in the kernel (a device driver call) delays the stop */
	double deadline = ks_clock_s() + 10;
	int st;
	for (;;) {
		pid_t w = runner_wait4(r, &st, WUNTRACED | WNOHANG);
		if (w < 0 && errno == EINTR)
			continue;
		if (w == 0) {
			if (ks_clock_s() > deadline) {
				r->paused = 1; /* so kill_runner knows to end it */
				return -1;
			}
			usleep(1000);
			continue;
		}
		if (w != r->pid)
			return -1;
		if (WIFSTOPPED(st)) {
			r->paused = 1;
			return 0;
		}
		r->reaped = 1;
		r->wstatus = st;
		return -1;
	}
}

void ks_runner_resume(struct ks_runner *r)
{
	if (r->paused && !r->reaped) {
		kill(-r->pid, SIGCONT);
		kill(r->pid, SIGCONT);
	}
	r->paused = 0;
}

void ks_runner_free(struct ks_runner *r)
{
	if (!r)
		return;
	ks_runner_resume(r);
	if (r->pid > 0 && !r->reaped) {
		ssize_t w = write(r->cmd_fd, "quit\n", 5);
		(void)w;
		/* give it a moment to exit on its own, then make sure */
		for (int i = 0; i < 50 && !r->reaped; i++) {
			if (runner_wait4(r, &r->wstatus, WNOHANG) == r->pid)
				r->reaped = 1;
			else
				usleep(2000);
		}
		kill_runner(r);
	}
	if (r->cmd_fd >= 0)
		close(r->cmd_fd);
	if (r->reply_fd >= 0)
		close(r->reply_fd);
	if (r->log_fd >= 0)
		close(r->log_fd);
	if (r->out)
		munmap(r->out, r->out_bytes);
	if (r->scratch[0])
		ks_rm_rf(r->scratch);
	if (r->cgroup[0])
		ks_cgroup_remove(r->cgroup);
	ks_buf_release(&r->replies);
	ks_buf_release(&r->log);
	free(r);
}
