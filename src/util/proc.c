#include "util/proc.h"
#include "util/clock.h"
#include "util/os.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define TRUNCATED_NOTE "\n[output truncated]\n"
#define PROC_DEFAULT_TIMEOUT_S 600.0
/* with exit_grace_s, how often a run whose output is still open checks for the exit (an
 * exit wakes no poll while a leftover holds the pipe) */
#define PROC_EXIT_CHECK_S 0.05
/* the child's working copies of the descriptors it is given sit at or above this, clear of
 * the slots they are copied into */
#define SPAWN_HIGH_FD 64

/* ---------------------------------------------------------------- spawning */

/* where a child that failed before or at exec says so (one write, read by the parent) */
enum spawn_stage { SPAWN_OK, SPAWN_FDS, SPAWN_CWD, SPAWN_PREPARE, SPAWN_EXEC };
struct spawn_report {
	int stage;
	int err;
};

static const char *stage_what(int stage)
{
	switch (stage) {
	case SPAWN_FDS:
		return "set up descriptors for";
	case SPAWN_CWD:
		return "enter the directory of";
	case SPAWN_PREPARE:
		return "prepare the child for";
	default:
		return "run";
	}
}

/* close every descriptor from lo up except keep (the report pipe) */
static void close_from(int lo, int keep)
{
	if (!ks_os_close_range((unsigned)lo, (unsigned)keep - 1) &&
	    !ks_os_close_range((unsigned)keep + 1, ~0u))
		return;
	for (int fd = lo; fd < 1024; fd++)
		if (fd != keep)
			close(fd);
}

static _Noreturn void child_fail(int report, int stage, int err)
{
	struct spawn_report r = {stage, err};
	ssize_t w = write(report, &r, sizeof(r));
	(void)w;
	_exit(stage == SPAWN_EXEC ? 127 : 126);
}

/* Only async-signal-safe calls from here to exec: the parent may have threads. */
static _Noreturn void child_run(const struct ks_spawn *sp, int report)
{
	if (!sp->prepare_sets_group)
		setpgid(0, 0);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	const int reset[] = {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP};
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
		sigaction(reset[i], &dfl, NULL);

	report = fcntl(report, F_DUPFD_CLOEXEC, SPAWN_HIGH_FD);
	if (report < 0)
		_exit(126);
	int nfd = sp->nfd < 0 ? 0 : sp->nfd > KS_SPAWN_MAX_FDS ? KS_SPAWN_MAX_FDS : sp->nfd;
	int high[KS_SPAWN_MAX_FDS];
	int devnull = fcntl(open("/dev/null", O_RDWR | O_CLOEXEC), F_DUPFD_CLOEXEC, SPAWN_HIGH_FD);
	if (devnull < 0)
		child_fail(report, SPAWN_FDS, errno);
	/* copy every source above the slots first so no dup2 clobbers a later source */
	for (int i = 0; i < nfd; i++) {
		high[i] = sp->fd[i];
		if (high[i] >= 0 && (high[i] = fcntl(high[i], F_DUPFD_CLOEXEC, SPAWN_HIGH_FD)) < 0)
			child_fail(report, SPAWN_FDS, errno);
	}
	for (int i = 0; i < nfd; i++) {
		int src = high[i];
		if (src == KS_SPAWN_INHERIT && i < 3)
			continue;
		if (src < 0)
			src = i < 3 ? devnull : -1;
		if (src < 0)
			close(i);
		else if (dup2(src, i) < 0)
			child_fail(report, SPAWN_FDS, errno);
	}
	close_from(nfd > 3 ? nfd : 3, report);
	if (sp->cwd && chdir(sp->cwd))
		child_fail(report, SPAWN_CWD, errno);
	int prc;
	if (sp->prepare && (prc = sp->prepare(sp->ctx)))
		child_fail(report, SPAWN_PREPARE, prc < 0 ? -prc : EPERM);
	char *const *env = sp->env ? sp->env : environ;
	const char *prog = sp->path ? sp->path : sp->argv[0];
	if (strchr(prog, '/'))
		execve(prog, sp->argv, env);
	else
		ks_os_execvpe(prog, sp->argv, env);
	child_fail(report, SPAWN_EXEC, errno);
}

/* fork and exec; 0, or a negative error with *r saying what the child could not do
 * (r->stage SPAWN_OK: the fork itself failed) */
static int spawn_child(const struct ks_spawn *sp, pid_t *pid, struct spawn_report *r)
{
	*pid = -1;
	r->stage = SPAWN_OK;
	r->err = 0;
	if (!sp->argv || !sp->argv[0]) {
		r->err = EINVAL;
		return KS_EINVAL;
	}
	int rp[2];
	if (ks_os_pipe(rp)) {
		r->err = errno;
		return KS_ESYS;
	}
	pid_t p = fork();
	if (p < 0) {
		r->err = errno;
		close(rp[0]);
		close(rp[1]);
		return KS_ESYS;
	}
	if (p == 0) {
		close(rp[0]);
		child_run(sp, rp[1]);
	}
	close(rp[1]);
	/* both sides set the group, so the parent may signal it as soon as this returns */
	if (!sp->prepare_sets_group)
		setpgid(p, p);
	ssize_t got;
	while ((got = read(rp[0], r, sizeof(*r))) < 0 && errno == EINTR)
		;
	close(rp[0]);
	if (got == (ssize_t)sizeof(*r)) {
		while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
			;
		return r->stage == SPAWN_EXEC && (r->err == ENOENT || r->err == ENOTDIR)
			       ? KS_ENOTFOUND
			       : KS_ESYS;
	}
	r->stage = SPAWN_OK;
	*pid = p;
	return 0;
}

int ks_spawn(const struct ks_spawn *sp, pid_t *pid, struct ks_error *e)
{
	struct spawn_report r;
	int rc = spawn_child(sp, pid, &r);
	if (!rc)
		return 0;
	const char *name = sp->path ? sp->path : sp->argv && sp->argv[0] ? sp->argv[0] : "(none)";
	if (r.stage == SPAWN_OK)
		return ks_error_set(e, rc, "start '%s': %s", name, strerror(r.err));
	if (r.stage == SPAWN_CWD)
		return ks_error_set(e, rc, "cannot enter '%s' to run '%s': %s", sp->cwd, name,
				    strerror(r.err));
	return ks_error_set(e, rc, "cannot %s '%s': %s", stage_what(r.stage), name,
			    strerror(r.err));
}

void ks_spawn_kill(pid_t pid, int *wstatus)
{
	int st = 0;
	if (pid > 0) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	if (wstatus)
		*wstatus = st;
}

/* ---------------------------------------------------------------- captured runs */

static void fd_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* whether the child has exited, without reaping it (its id stays reserved, so killing its
 * group afterwards cannot hit a stranger) */
static int child_exited(pid_t pid)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

struct capture {
	const struct ks_proc_io *io;
	struct ks_proc_result *res;
	int truncated;
};

/* stdout: 1 when the child must be killed (over the cap with out_cap_kills) */
static int take_out(struct capture *c, const char *p, size_t n)
{
	struct ks_buf *out = c->io->out;
	if (c->io->out_cap_kills) {
		if (ks_buf_add(out, p, n)) {
			c->res->out_over_cap = 1;
			return 1;
		}
		return 0;
	}
	/* keep what fits, leaving room to say that the rest was dropped */
	size_t room = ks_buf_room(out), note = sizeof(TRUNCATED_NOTE) - 1;
	size_t take = room > note ? room - note : 0;
	if (n > take)
		c->truncated = 1;
	else
		take = n;
	if (take)
		ks_buf_add(out, p, take);
	return 0;
}

static void take_err(struct capture *c, const char *p, size_t n)
{
	struct ks_buf *err = c->io->err;
	size_t room = ks_buf_room(err), take = n < room ? n : room;
	if (take && ks_buf_add(err, p, take))
		take = 0;
	c->res->err_dropped += n - take;
}

static void wait_status(struct ks_proc_result *res, int wstatus)
{
	if (WIFEXITED(wstatus)) {
		res->exited = 1;
		res->code = WEXITSTATUS(wstatus);
	} else if (WIFSIGNALED(wstatus)) {
		res->code = WTERMSIG(wstatus);
	}
}

/* one captured run: the parent's ends of the child's stdin socket (sv[0]) and of its stdout
 * (po[0]) and stderr (pe[0]) pipes, -1 once closed; the child's ends until it starts */
struct exec_run {
	char *const *argv;
	struct capture c;
	int sv[2], po[2], pe[2];
	pid_t pid;          /* -1 until the program runs */
	size_t sent;        /* bytes of io->input written */
	double deadline;
	double grace_end;   /* set once the program exited with its output still open */
	long nap_us;        /* the wait for an exit after the output closed, doubling */
};

static int exec_pipes(struct exec_run *x, struct ks_error *e)
{
	const struct ks_proc_io *io = x->c.io;
	if ((io->input && ks_os_socketpair(x->sv)) || ks_os_pipe(x->po) ||
	    (io->err && ks_os_pipe(x->pe)))
		return ks_error_set(e, KS_ESYS, "run '%s': pipe: %s", x->argv[0], strerror(errno));
	return 0;
}

/* Start the program on the socket and the pipes.  An error when it could not be started;
 * 0 with x->pid -1 when it could not be exec'd (said on its output the way a shell does);
 * else 0, with the parent's ends ready for polling. */
static int exec_start(struct exec_run *x, struct ks_error *e)
{
	const struct ks_proc_io *io = x->c.io;
	struct ks_spawn sp = {
		.argv = x->argv,
		.env = io->env,
		.cwd = io->cwd,
		.nfd = 3,
		.fd = {io->input ? x->sv[1] : KS_SPAWN_NULL, x->po[1], io->err ? x->pe[1] : x->po[1]},
	};
	struct spawn_report r;
	int src = spawn_child(&sp, &x->pid, &r);
	fd_close(&x->sv[1]);
	fd_close(&x->po[1]);
	fd_close(&x->pe[1]);
	if (src && r.stage == SPAWN_OK)
		return ks_error_set(e, src, "run '%s': %s", x->argv[0], strerror(r.err));
	if (src) {
		/* reported the way a shell does: the child "ran" and said why on its output */
		x->c.res->exited = 1;
		x->c.res->code = r.stage == SPAWN_EXEC ? 127 : 126;
		ks_buf_addf(io->err ? io->err : io->out, "cannot %s '%s': %s\n",
			    stage_what(r.stage), x->argv[0], strerror(r.err));
		return 0;
	}
	if (x->sv[0] >= 0) {
		shutdown(x->sv[0], SHUT_RD);
		set_nonblock(x->sv[0]);
		if (!io->input_len)
			fd_close(&x->sv[0]);
	}
	set_nonblock(x->po[0]);
	if (x->pe[0] >= 0)
		set_nonblock(x->pe[0]);
	return 0;
}

/* output closed: wait for the exit (a daemonising child keeps us here); 1 once exited */
static int exec_wait_exit(struct exec_run *x)
{
	if (child_exited(x->pid))
		return 1;
	struct timespec ts = {0, x->nap_us * 1000};
	nanosleep(&ts, NULL);
	x->nap_us = x->nap_us < 32000 ? x->nap_us * 2 : 50000;
	return 0;
}

/* how long the next poll may wait: at most 1 s and the time left; with exit_grace_s, short
 * enough to notice the exit, and no longer than the grace once it started */
static double exec_poll_s(struct exec_run *x, double now, double left)
{
	const struct ks_proc_io *io = x->c.io;
	double poll_s = left > 1 ? 1 : left;
	if (io->exit_grace_s > 0 && x->grace_end == 0 && child_exited(x->pid))
		x->grace_end = now + (io->exit_grace_s < left ? io->exit_grace_s : left);
	if (x->grace_end > 0)
		poll_s = x->grace_end - now;
	else if (io->exit_grace_s > 0 && poll_s > PROC_EXIT_CHECK_S)
		poll_s = PROC_EXIT_CHECK_S;
	return poll_s;
}

/* write the next piece of the input; done, or the program stopped reading: close stdin */
static void exec_feed(struct exec_run *x)
{
	const struct ks_proc_io *io = x->c.io;
	ssize_t k = send(x->sv[0], io->input + x->sent, io->input_len - x->sent,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
	if (k > 0)
		x->sent += (size_t)k;
	if ((k < 0 && errno != EAGAIN && errno != EINTR) || x->sent == io->input_len)
		fd_close(&x->sv[0]);
}

/* read what *fd has into chunk; closes it at its end or on an error */
static ssize_t exec_read(int *fd, char *chunk, size_t n)
{
	ssize_t k = read(*fd, chunk, n);
	if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
		fd_close(fd);
	return k;
}

/* One poll over the open ends, then input written and output taken where they are ready:
 * 1 when the run must end (stdout over its cap), 0 to go on, or an error. */
static int exec_poll(struct exec_run *x, double poll_s, struct ks_error *e)
{
	struct pollfd pf[3];
	int np = 0, io_ = -1, ie = -1, ii = -1;
	if (x->po[0] >= 0) {
		io_ = np;
		pf[np++] = (struct pollfd){.fd = x->po[0], .events = POLLIN};
	}
	if (x->pe[0] >= 0) {
		ie = np;
		pf[np++] = (struct pollfd){.fd = x->pe[0], .events = POLLIN};
	}
	if (x->sv[0] >= 0) {
		ii = np;
		pf[np++] = (struct pollfd){.fd = x->sv[0], .events = POLLOUT};
	}
	int n = poll(pf, (nfds_t)np, (int)(poll_s * 1000) + 1);
	if (n < 0 && errno == EINTR)
		return 0;
	if (n < 0)
		return ks_error_set(e, KS_ESYS, "run '%s': poll: %s", x->argv[0], strerror(errno));
	char chunk[65536];
	if (ii >= 0 && pf[ii].revents)
		exec_feed(x);
	if (io_ >= 0 && pf[io_].revents) {
		ssize_t k = exec_read(&x->po[0], chunk, sizeof(chunk));
		if (k > 0 && take_out(&x->c, chunk, (size_t)k))
			return 1;
	}
	if (ie >= 0 && pf[ie].revents) {
		ssize_t k = exec_read(&x->pe[0], chunk, sizeof(chunk));
		if (k > 0)
			take_err(&x->c, chunk, (size_t)k);
	}
	return 0;
}

/* Feed the input and collect the output until the program is done with both, the
 * deadline, the grace after its exit, or stdout over a killing cap.  0, or a poll error. */
static int exec_pump(struct exec_run *x, struct ks_error *e)
{
	const struct ks_proc_io *io = x->c.io;
	x->deadline = ks_clock_s() + (io->timeout_s > 0 ? io->timeout_s : PROC_DEFAULT_TIMEOUT_S);
	x->nap_us = 500;
	for (;;) {
		double now = ks_clock_s(), left = x->deadline - now;
		if (x->grace_end > 0 && now >= x->grace_end)
			return 0; /* exited: its leftovers are not waited for */
		if (left <= 0) {
			x->c.res->timed_out = 1;
			return 0;
		}
		int rc = x->po[0] < 0 && x->pe[0] < 0 ? exec_wait_exit(x)
						      : exec_poll(x, exec_poll_s(x, now, left), e);
		if (rc)
			return rc < 0 ? rc : 0;
	}
}

int ks_proc_exec(char *const argv[], const struct ks_proc_io *io, struct ks_proc_result *res,
		 struct ks_error *e)
{
	struct exec_run x = {
		.argv = argv,
		.c = {io, res, 0},
		.sv = {-1, -1},
		.po = {-1, -1},
		.pe = {-1, -1},
		.pid = -1,
	};
	memset(res, 0, sizeof(*res));
	int rc = exec_pipes(&x, e);
	rc = rc ? rc : exec_start(&x, e);
	if (!rc && x.pid > 0) {
		int wstatus = 0;
		rc = exec_pump(&x, e);
		/* the whole group: the program and anything it started */
		ks_spawn_kill(x.pid, &wstatus);
		wait_status(res, wstatus);
		if (x.c.truncated)
			ks_buf_adds(io->out, TRUNCATED_NOTE);
	}
	fd_close(&x.sv[0]);
	fd_close(&x.sv[1]);
	fd_close(&x.po[0]);
	fd_close(&x.po[1]);
	fd_close(&x.pe[0]);
	fd_close(&x.pe[1]);
	if (!io->out->data)
		ks_buf_add(io->out, "", 0);
	if (io->err && !io->err->data)
		ks_buf_add(io->err, "", 0);
	return rc;
}

/* ---------------------------------------------------------------- the common form */

static ks_proc_run_fn proc_override;

void ks_proc_set_runner(ks_proc_run_fn fn)
{
	proc_override = fn;
}

int ks_proc_run(char *const argv[], const char *cwd, double timeout_s, struct ks_buf *out,
		struct ks_proc_result *res, struct ks_error *e)
{
	if (proc_override)
		return proc_override(argv, cwd, timeout_s, out, res, e);
	struct ks_proc_io io = {.cwd = cwd, .out = out, .timeout_s = timeout_s};
	return ks_proc_exec(argv, &io, res, e);
}

double ks_sched_wait_s(pid_t pid)
{
	char path[64];
	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%ld/schedstat", (long)pid);
	else
		snprintf(path, sizeof(path), "/proc/thread-self/schedstat");
	FILE *f = fopen(path, "re");
	unsigned long long on_cpu, waited;
	int got = f ? fscanf(f, "%llu %llu", &on_cpu, &waited) : 0;
	if (f)
		fclose(f);
	return got == 2 ? waited * 1e-9 : NAN;
}
