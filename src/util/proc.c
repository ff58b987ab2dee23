#include "util/proc.h"
#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TRUNCATED_NOTE "\n[output truncated]\n"

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
	memset(res, 0, sizeof(*res));
	int p[2];
	if (pipe2(p, O_CLOEXEC))
		return ks_error_set(e, KS_ESYS, "pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return ks_error_set(e, KS_ESYS, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		setpgid(0, 0);
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		if (cwd && chdir(cwd))
			_exit(126);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	double deadline = ks_clock_s() + timeout_s;
	int truncated = 0;
	for (;;) {
		double left = deadline - ks_clock_s();
		if (left <= 0) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			res->timed_out = 1;
			break;
		}
		struct pollfd pfd = {p[0], POLLIN, 0};
		int pr = poll(&pfd, 1, left > 1 ? 1000 : (int)(left * 1000) + 1);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr <= 0)
			continue;
		char chunk[8192];
		ssize_t n = read(p[0], chunk, sizeof(chunk));
		if (n <= 0)
			break;
		/* keep what fits, leaving room to say that the rest was dropped */
		size_t room = ks_buf_room(out), note = sizeof(TRUNCATED_NOTE) - 1;
		size_t take = room > note ? room - note : 0;
		if ((size_t)n > take)
			truncated = 1;
		else
			take = (size_t)n;
		if (take)
			ks_buf_add(out, chunk, take);
	}
	close(p[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (truncated)
		ks_buf_adds(out, TRUNCATED_NOTE);
	if (WIFEXITED(st)) {
		res->exited = 1;
		res->code = WEXITSTATUS(st);
	} else if (WIFSIGNALED(st)) {
		res->code = WTERMSIG(st);
	}
	return 0;
}
