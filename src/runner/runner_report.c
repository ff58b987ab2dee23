/* The runner's reports to the evaluator and its rule for opens (runner.h), on every
 * system; interpose_linux.c puts the C library's allocation and open entry points in front
 * of a kernel's calls on Linux. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/runner_proto.h"
#include "runner/runner.h"

char ks_runner_scratch[4096];
int ks_runner_watch;

/* One protocol line from free text: a newline inside a message (an NVRTC log, a path a
 * kernel chose) would otherwise start a line the evaluator reads as the next reply.  '\n'
 * becomes "\n", '\\' "\\", any other control character '?'; the evaluator undoes the
 * first two (runner_client.c).  dst gets at most cap - 2 bytes and a '\n'; returns the
 * length with it. */
size_t ks_runner_line(char *dst, size_t cap, const char *src)
{
	size_t n = 0;
	for (; *src && n + 4 < cap; src++) {
		unsigned char c = (unsigned char)*src;
		if (c == '\n' || c == '\\') {
			dst[n++] = '\\';
			dst[n++] = c == '\n' ? 'n' : '\\';
		} else {
			dst[n++] = (c < 0x20 && c != '\t') || c == 0x7f ? '?' : (char)c;
		}
	}
	dst[n++] = '\n';
	return n;
}

void ks_runner_report(const char *kind, const char *fmt, ...)
{
	char text[3072], line[6144]; /* a few KB of stack: the SIGSYS handler calls this too */
	int n = snprintf(text, sizeof(text), "%s ", kind);
	va_list ap;
	va_start(ap, fmt);
	if (n > 0 && n < (int)sizeof(text))
		vsnprintf(text + n, sizeof(text) - (size_t)n, fmt, ap);
	va_end(ap);
	ssize_t w = write(KS_RUNNER_FD_REPLY, line, ks_runner_line(line, sizeof(line), text));
	(void)w;
}

/* 1 when opening path with flags breaks the rules */
static int path_forbidden(const char *path, int flags, const char **why)
{
	if (!ks_runner_watch || !path)
		return 0;
	if (!strncmp(path, "/proc/", 6) && path[6] >= '0' && path[6] <= '9') {
		if (atol(path + 6) != (long)getpid()) {
			*why = "open of another process's /proc entry";
			return 1;
		}
	}
	int writes = (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND)) != 0;
	/* device nodes (a GPU driver opens /dev/nvidia* read-write) and this process's own
	 * /proc entries (thread names) are not file creation; Landlock decides about them */
	if (!writes || !strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/self/", 11) ||
	    !strncmp(path, "/proc/thread-self/", 18))
		return 0;
	if (path[0] != '/') {
		if (!strstr(path, ".."))
			return 0;
	} else {
		size_t n = strlen(ks_runner_scratch);
		if (n && !strncmp(path, ks_runner_scratch, n) && path[n] == '/' &&
		    !strstr(path, ".."))
			return 0;
	}
	*why = "file write outside the scratch directory";
	return 1;
}

void ks_runner_open_check(const char *path, int flags)
{
	const char *why;
	if (path_forbidden(path, flags, &why)) {
		ks_runner_report("violation", "%s: '%.300s'", why, path);
		_exit(KS_RUNNER_EXIT_VIOLATION);
	}
}

