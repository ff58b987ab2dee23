/* Diagnosis for the sandbox: the runner exports these libc entry points (it is linked
 * with -rdynamic), so a kernel's calls land here first.  Enforcement does not depend on
 * them (Landlock and seccomp hold for raw syscalls too); they turn the common cases into a
 * clear status instead of a silent EACCES:
 *   - an allocation that fails under the memory limit  -> "alloc_failed"  (MEMORY_LIMIT)
 *   - opening a file for writing outside scratch       -> "violation"     (SANDBOX_VIOLATION)
 *   - opening another process's /proc entry            -> "violation"
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "eval/runner_proto.h"
#include "runner/runner.h"
#include "util/env.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static void alloc_failed(size_t bytes)
{
	if (ks_runner_watch && bytes >= (1u << 20)) {
		ks_runner_report("alloc_failed", "%zu", bytes);
		_exit(KS_RUNNER_EXIT_MEMORY);
	}
}

void *malloc(size_t n)
{
	void *p = __libc_malloc(n);
	if (!p)
		alloc_failed(n);
	return p;
}

void *calloc(size_t a, size_t b)
{
	void *p = __libc_calloc(a, b);
	if (!p)
		alloc_failed(a * b);
	return p;
}

void *realloc(void *old, size_t n)
{
	void *p = __libc_realloc(old, n);
	if (!p && n)
		alloc_failed(n);
	return p;
}

void free(void *p)
{
	__libc_free(p);
}

void *aligned_alloc(size_t align, size_t n)
{
	void *p = __libc_memalign(align, n);
	if (!p)
		alloc_failed(n);
	return p;
}

void *memalign(size_t align, size_t n)
{
	return aligned_alloc(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = __libc_memalign(align, n);
	if (!p) {
		alloc_failed(n);
		return ENOMEM;
	}
	*out = p;
	return 0;
}

/* KSEARCH_SANDBOX_TRACE=1 (runner started by hand): print every open the sandbox refused,
 * to find what a driver needs */
static void trace_refusal(const char *what, const char *path, int err)
{
	static int on = -1;
	if (on < 0)
		on = ks_env_get()->sandbox_trace != NULL;
	if (on && (err == EACCES || err == EPERM))
		fprintf(stderr, "sandbox refused %s '%s': %s\n", what, path, strerror(err));
}

static int checked_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	ks_runner_open_check(path, flags);
	int fd = (int)syscall(SYS_openat, dirfd, path, flags, mode);
	if (fd < 0) {
		int err = errno;
		trace_refusal("open", path, err);
		errno = err;
	}
	return fd;
}

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	int rc = (int)syscall(SYS_bind, fd, addr, len);
	if (rc < 0 && addr && addr->sa_family == AF_UNIX) {
		int err = errno;
		const struct sockaddr_un *un = (const struct sockaddr_un *)addr;
		trace_refusal("bind", un->sun_path[0] ? un->sun_path : "(abstract)", err);
		errno = err;
	}
	return rc;
}

DIR *opendir(const char *path)
{
	static DIR *(*real)(const char *);
	if (!real)
		real = (DIR * (*)(const char *)) dlsym(RTLD_NEXT, "opendir");
	DIR *d = real ? real(path) : NULL;
	if (!d) {
		int err = errno;
		trace_refusal("opendir", path, err);
		errno = err;
	}
	return d;
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return checked_openat(AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return checked_openat(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat")));

int creat(const char *path, mode_t mode)
{
	return checked_openat(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

FILE *fopen(const char *path, const char *mode)
{
	static FILE *(*real)(const char *, const char *);
	ks_runner_open_check(path, strpbrk(mode, "wa+") ? O_WRONLY : O_RDONLY);
	if (!real)
		real = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
	FILE *f = real ? real(path, mode) : NULL;
	if (!f) {
		int err = errno;
		trace_refusal("fopen", path, err);
		errno = err;
	}
	return f;
}

FILE *fopen64(const char *path, const char *mode) __attribute__((alias("fopen")));
