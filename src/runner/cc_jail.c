/* ksearch-cc-jail: runs a compiler inside the compiler's sandbox.
 *
 *   ksearch-cc-jail [--ro PATH]... [--rw PATH]... [--as BYTES] [--fsize BYTES]
 *                   [--cpu SECONDS] -- COMPILER ARGS...
 *
 * A kernel's source is untrusted input to the compiler: `#include` and `.incbin` read any
 * file the compiler can, and a macro bomb or `#include "/dev/zero"` grows it without
 * bound.  So the compiler (and the assembler and linker it starts) gets memory, file-size
 * and CPU limits, no network, no privilege, and Landlock reads limited to the toolchain,
 * the system headers, the task's files and its own output folder (docs/evaluation.md). */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "eval/sandbox.h"

#define MAX_PATHS 64

static int limit(int res, const char *value)
{
	char *end;
	unsigned long long v = strtoull(value, &end, 10);
	if (end == value || *end)
		return -1;
	/* the hard limit a little above: SIGXCPU / EFBIG first, a kill for what ignores them */
	struct rlimit rl = {(rlim_t)v, res == RLIMIT_CPU ? (rlim_t)v + 2 : (rlim_t)v};
	return setrlimit(res, &rl);
}

int main(int argc, char **argv)
{
	const char *ro[MAX_PATHS + 1], *rw[MAX_PATHS + 1];
	int nro = 0, nrw = 0, i = 1;
	for (; i < argc && strcmp(argv[i], "--"); i += 2) {
		if (i + 1 >= argc)
			goto usage;
		const char *opt = argv[i], *val = argv[i + 1];
		if (!strcmp(opt, "--ro") && nro < MAX_PATHS)
			ro[nro++] = val;
		else if (!strcmp(opt, "--rw") && nrw < MAX_PATHS)
			rw[nrw++] = val;
		else if (!strcmp(opt, "--as") ? limit(RLIMIT_AS, val)
			 : !strcmp(opt, "--fsize") ? limit(RLIMIT_FSIZE, val)
			 : !strcmp(opt, "--cpu") ? limit(RLIMIT_CPU, val)
						 : -1) {
			fprintf(stderr, "ksearch-cc-jail: bad option '%s %s'\n", opt, val);
			return 126;
		}
	}
	if (i + 1 >= argc)
		goto usage;
	ro[nro] = NULL;
	rw[nrw] = NULL;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct rlimit core = {0, 0};
	setrlimit(RLIMIT_CORE, &core);
	/* as root: a private network namespace with nothing in it (seccomp refuses network
	 * sockets anyway) */
	(void)unshare(CLONE_NEWNET);
	/* the compiler's temporary files go to its output folder, the one place it may write */
	if (nrw)
		setenv("TMPDIR", rw[0], 1);
	char why[256];
	if (ks_sandbox_enter_compiler(ro, rw, why, sizeof(why))) {
		fprintf(stderr, "ksearch-cc-jail: %s\n", why);
		return 126;
	}
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "cannot run '%s': %s\n", argv[i + 1], strerror(errno));
	return 127;
usage:
	fprintf(stderr, "usage: ksearch-cc-jail [--ro PATH]... [--rw PATH]... [--as BYTES] "
			"[--fsize BYTES] [--cpu SECONDS] -- COMPILER ARGS...\n");
	return 126;
}
