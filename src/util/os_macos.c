/* The macOS side of util/os.h: what Linux does in one call (pipe2, memfd seals, getrandom,
 * renameat2, /proc) done with what Darwin has.  Compiled for aarch64-macos from Linux in CI
 * (.ci/cross-macos); not run on a Mac yet (docs/macos.md). */
#include "util/os.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mach-o/dyld.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/sysctl.h>
#include <unistd.h>

extern char **environ;

const char ks_os_name[] = "macos";

/* Darwin has no pipe2: close-on-exec is set right after, so a fork of another thread in
 * between would inherit the ends (ksearch's spawns come from one thread at a time) */
static int cloexec_pair(int rc, int fd[2])
{
	if (rc)
		return rc;
	if (fcntl(fd[0], F_SETFD, FD_CLOEXEC) || fcntl(fd[1], F_SETFD, FD_CLOEXEC)) {
		int err = errno;
		close(fd[0]);
		close(fd[1]);
		errno = err;
		return -1;
	}
	return 0;
}

int ks_os_pipe(int fd[2])
{
	return cloexec_pair(pipe(fd), fd);
}

int ks_os_socketpair(int fd[2])
{
	return cloexec_pair(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), fd);
}

/* getentropy gives at most 256 bytes a call */
int ks_os_random(void *buf, size_t n)
{
	for (size_t off = 0; off < n; off += 256)
		if (getentropy((char *)buf + off, n - off < 256 ? n - off : 256))
			return -1;
	return 0;
}

int ks_os_rename_noreplace(int fromdir, const char *from, int todir, const char *to)
{
	return renameatx_np(fromdir, from, todir, to, RENAME_EXCL);
}

int ks_os_cpus(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus < 1 ? 1 : (int)cpus;
}

int ks_os_close_range(unsigned lo, unsigned hi)
{
	errno = ENOSYS;
	return -1;
}

int ks_os_exe_path(char *out, size_t n)
{
	char raw[PATH_MAX];
	uint32_t size = sizeof(raw);
	char real[PATH_MAX];
	if (_NSGetExecutablePath(raw, &size) || !realpath(raw, real))
		return -1;
	return snprintf(out, n, "%s", real) < (int)n ? 0 : -1;
}

/* A POSIX shared-memory object, its name removed at once: XNU sizes such an object once
 * (a second ftruncate fails with EINVAL), which stands in for Linux's seals. */
int ks_os_fixed_shm(const char *name, size_t bytes)
{
	static unsigned seq;
	char path[32]; /* PSHMNAMLEN: 31 characters */
	snprintf(path, sizeof(path), "/ks-%.8s-%d-%u", name, (int)getpid(), seq++);
	int fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return -1;
	shm_unlink(path);
	if (ftruncate(fd, (off_t)bytes) || fcntl(fd, F_SETFD, FD_CLOEXEC)) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

void ks_os_hugepages(void *p, size_t n)
{
	(void)p;
	(void)n;
}

struct qsort_thunk {
	int (*cmp)(const void *a, const void *b, void *ctx);
	void *ctx;
};

/* Darwin's qsort_r hands the context first */
static int qsort_thunk_cmp(void *t, const void *a, const void *b)
{
	const struct qsort_thunk *q = t;
	return q->cmp(a, b, q->ctx);
}

void ks_os_qsort_r(void *base, size_t n, size_t size,
		   int (*cmp)(const void *a, const void *b, void *ctx), void *ctx)
{
	struct qsort_thunk t = {cmp, ctx};
	qsort_r(base, n, size, &t, qsort_thunk_cmp);
}

/* Darwin has no execvpe: env becomes the environment of this child (its own after fork),
 * so execvp searches env's PATH where glibc's execvpe searches the caller's; ksearch passes
 * its own PATH on (sandbox.c, ks_env_scrubbed) */
int ks_os_execvpe(const char *file, char *const argv[], char *const env[])
{
	environ = (char **)env;
	return execvp(file, argv);
}

/* Darwin has no clearenv: every variable unset by name */
void ks_os_clearenv(void)
{
	while (environ && environ[0]) {
		char *first = environ[0], *name = strndup(first, strcspn(first, "="));
		if (name)
			unsetenv(name);
		free(name);
		if (environ[0] == first) /* refused ("" as a name) or no memory: the entry goes */
			for (char **e = environ; *e; e++)
				e[0] = e[1];
	}
}

void ks_os_cpu_model(char *out, size_t n)
{
	size_t len = n;
	if (n == 0)
		return;
	if (sysctlbyname("machdep.cpu.brand_string", out, &len, NULL, 0) || len == 0)
		snprintf(out, n, "?");
	out[n - 1] = '\0';
}

long ks_os_mem_kb(void)
{
	uint64_t bytes = 0;
	size_t len = sizeof(bytes);
	return sysctlbyname("hw.memsize", &bytes, &len, NULL, 0) ? 0 : (long)(bytes >> 10);
}

/* XNU's scheduler does not keep getrusage's ru_nivcsw (as its sources read; not checked on
 * a Mac), and task_info's TASK_EVENTS_INFO counts every context switch, a thread's sleep at
 * a barrier among them: no count of preemptions alone */
long long ks_os_preemptions(void)
{
	return -1;
}
