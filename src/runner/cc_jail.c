/* ksearch-cc-jail: runs a compiler, or a task's Python reference, inside a sandbox.
 *
 *   ksearch-cc-jail [--ro PATH]... [--rw PATH]... [--as BYTES] [--fsize BYTES]
 *                   [--cpu SECONDS] [--env NAME=VALUE]... [--no-sockets] -- PROGRAM ARGS...
 *
 * A kernel's source is untrusted input to the compiler: `#include` and `.incbin` read any
 * file the compiler can, `__has_include` tells whether one exists, and a macro bomb or
 * `#include "/dev/zero"` grows it without bound.  A task's reference.py is untrusted code.
 * So the program (and everything it starts) gets memory, file-size and CPU limits, no
 * privilege, no network, an environment of its own (none of ksearch's variables beyond a
 * short list, never one that looks like a secret), a file system that holds only the
 * read-only and writable paths given (jail.h), Landlock rules on top of it, and with
 * --no-sockets no socket at all (docs/evaluation.md).  That is Linux's jail (jail_linux.c);
 * macOS's is a Seatbelt profile of the same paths (jail_macos.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ksearch/secret.h"
#include "eval/sandbox.h"
#include "runner/jail.h"
#include "util/os.h"

#define MAX_PATHS 64
#define MAX_ENV 16

struct jail_opts {
	const char *ro[MAX_PATHS + 1], *rw[MAX_PATHS + 1], *env[MAX_ENV + 1];
	int nro, nrw, nenv, no_sockets;
};

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

/* one option and its value; 0, or -1 for a bad one */
static int take(struct jail_opts *o, const char *opt, const char *val)
{
	if (!strcmp(opt, "--ro") && o->nro < MAX_PATHS)
		o->ro[o->nro++] = val;
	else if (!strcmp(opt, "--rw") && o->nrw < MAX_PATHS)
		o->rw[o->nrw++] = val;
	else if (!strcmp(opt, "--env") && o->nenv < MAX_ENV && strchr(val, '=') &&
		 !ks_secret_name(val))
		o->env[o->nenv++] = val;
	else if (!strcmp(opt, "--as"))
		return limit(RLIMIT_AS, val);
	else if (!strcmp(opt, "--fsize"))
		return limit(RLIMIT_FSIZE, val);
	else if (!strcmp(opt, "--cpu"))
		return limit(RLIMIT_CPU, val);
	else
		return -1;
	return 0;
}

/* The program's environment: what a toolchain reads to find itself and speak the user's
 * language, nothing that looks like a secret, TMPDIR and HOME in the writable folder (the
 * one place it may write), and the --env pairs given. */
static void scrub_env(const struct jail_opts *o)
{
	static const char *const keep[] = {"PATH", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH",
					   NULL};
	static const char *const keep_prefix[] = {"LC_", "CUDA_", "NVCC_", NULL};
	extern char **environ;
	char **old = environ, *kept[256];
	int n = 0;
	for (char **e = old; *e && n < 255; e++) {
		size_t name = strcspn(*e, "=");
		int ok = 0;
		for (int i = 0; keep[i]; i++)
			ok |= strlen(keep[i]) == name && !strncmp(*e, keep[i], name);
		for (int i = 0; keep_prefix[i]; i++)
			ok |= !strncmp(*e, keep_prefix[i], strlen(keep_prefix[i]));
		if (ok && !ks_secret_name(*e))
			kept[n++] = *e;
	}
	ks_os_clearenv();
	for (int i = 0; i < n; i++)
		putenv(kept[i]);
	for (int i = 0; i < o->nenv; i++)
		putenv((char *)o->env[i]);
	if (o->nrw) {
		setenv("TMPDIR", o->rw[0], 1);
		setenv("HOME", o->rw[0], 1);
	}
}

int main(int argc, char **argv)
{
	struct jail_opts o = {.nro = 0};
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--"); i += 2) {
		if (!strcmp(argv[i], "--no-sockets")) {
			o.no_sockets = 1;
			i--;
			continue;
		}
		if (i + 1 >= argc)
			goto usage;
		if (take(&o, argv[i], argv[i + 1])) {
			fprintf(stderr, "ksearch-cc-jail: bad option '%s %s'\n", argv[i], argv[i + 1]);
			return 126;
		}
	}
	if (i + 1 >= argc)
		goto usage;
	ks_jail_prepare();
	struct rlimit core = {0, 0};
	setrlimit(RLIMIT_CORE, &core);
	scrub_env(&o);
	char why[256];
	if (ks_jail_root(o.ro, o.rw, why, sizeof(why)) < 0 ||
	    ks_sandbox_enter_compiler(o.ro, o.rw, o.no_sockets, why, sizeof(why))) {
		fprintf(stderr, "ksearch-cc-jail: %s\n", why);
		return 126;
	}
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "cannot run '%s': %s\n", argv[i + 1], strerror(errno));
	return 127;
usage:
	fprintf(stderr, "usage: ksearch-cc-jail [--ro PATH]... [--rw PATH]... [--as BYTES] "
			"[--fsize BYTES] [--cpu SECONDS] [--env NAME=VALUE]... [--no-sockets] -- "
			"PROGRAM ARGS...\n");
	return 126;
}
