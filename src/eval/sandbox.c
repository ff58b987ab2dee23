/* The sandbox's parts every system shares: the runner's environment, its rlimits, and the
 * one place that hands each ks_sandbox_* call to the platform (contract in sandbox.h). */
#include "eval/sandbox.h"
#include "eval/sandbox_impl.h"
#include "ksearch/secret.h"
#include "util/env.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

extern char **environ;

/* Thread placement: glibc pins another thread through its thread id, which the seccomp
 * filter cannot tell from another process's, so placement would make every OpenMP kernel
 * a violation; the runner's threads are left where the scheduler puts them. */
static int env_placement(const char *kv)
{
	static const char *const names[] = {"OMP_PROC_BIND=", "OMP_PLACES=",
					    "GOMP_CPU_AFFINITY=", "KMP_AFFINITY="};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(kv, names[i], strlen(names[i])))
			return 1;
	return 0;
}

static int env_whitelisted(const char *kv)
{
	if (env_placement(kv))
		return 0;
	static const char *const exact[] = {"PATH=", "LANG=", "TZ=", "TERM="};
	static const char *const prefix[] = {"LC_", "OMP_", "GOMP_", "KMP_", "CUDA_", "NVIDIA_",
					     "KSEARCH_DEVICE"};
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strncmp(kv, exact[i], strlen(exact[i])))
			return 1;
	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (!strncmp(kv, prefix[i], strlen(prefix[i])))
			return 1;
	return 0;
}

/* "KSEARCH_SECCOMP_AUDIT=/abs/FILE" when ksearch runs in seccomp audit mode (the runner
 * works in scratch, so a relative path is made absolute here); "" otherwise */
static void env_audit(char *kv, size_t n)
{
	const char *p = ks_env_get()->seccomp_audit;
	char cwd[4096] = "";
	kv[0] = '\0';
	if (!p || !*p)
		return;
	if (*p != '/' && !getcwd(cwd, sizeof(cwd)))
		return;
	snprintf(kv, n, "KSEARCH_SECCOMP_AUDIT=%s%s%s", cwd, *cwd ? "/" : "", p);
}

char **ks_env_scrubbed(const char *scratch, const char *const *extra)
{
	char audit_kv[8192];
	env_audit(audit_kv, sizeof(audit_kv));
	size_t count = 4, bytes = strlen(audit_kv) + 1;
	for (char **e = environ; *e; e++)
		if (env_whitelisted(*e) && !ks_secret_name(*e)) {
			count++;
			bytes += strlen(*e) + 1;
		}
	for (const char *const *x = extra; x && *x; x++) {
		count++;
		bytes += strlen(*x) + 1;
	}
	bytes += 2 * (strlen(scratch) + 16);
	char **env = malloc((count + 1) * sizeof(char *) + bytes);
	if (!env)
		return NULL;
	char *p = (char *)(env + count + 1);
	size_t i = 0;
	for (char **e = environ; *e; e++)
		if (env_whitelisted(*e) && !ks_secret_name(*e)) {
			env[i++] = strcpy(p, *e);
			p += strlen(p) + 1;
		}
	for (const char *const *x = extra; x && *x; x++)
		if (!ks_secret_name(*x)) {
			env[i++] = strcpy(p, *x);
			p += strlen(p) + 1;
		}
	if (audit_kv[0]) {
		env[i++] = strcpy(p, audit_kv);
		p += strlen(p) + 1;
	}
	env[i++] = p;
	p += sprintf(p, "HOME=%s", scratch) + 1;
	env[i++] = p;
	p += sprintf(p, "TMPDIR=%s", scratch) + 1;
	env[i] = NULL;
	return env;
}


static void set_limit(int res, rlim_t v)
{
	struct rlimit rl = {v, v};
	setrlimit(res, &rl);
}

void ks_sandbox_rlimits(const struct ks_sandbox_limits *lim)
{
	if (lim->address_space)
		set_limit(RLIMIT_AS, lim->address_space);
	/* soft first (SIGXCPU: reported as TIMEOUT), the hard limit kills what catches it;
	 * the runner's sandbox keeps the kernel from raising either */
	if (lim->cpu_seconds > 0) {
		struct rlimit rl = {(rlim_t)lim->cpu_seconds + 1, (rlim_t)lim->cpu_seconds + 3};
		setrlimit(RLIMIT_CPU, &rl);
	}
	set_limit(RLIMIT_FSIZE, lim->file_size ? lim->file_size : ((rlim_t)64 << 20));
	set_limit(RLIMIT_CORE, 0);
	set_limit(RLIMIT_NOFILE, 256);
	set_limit(RLIMIT_NPROC, 4096);
}

/* ---- the child, between fork and exec: async-signal-safe calls only --------------- */

int ks_sandbox_child_plain(const struct ks_sandbox_limits *lim)
{
	if (setsid() < 0)
		return -errno;
	if (lim->parent && getppid() != lim->parent)
		_exit(127);
	ks_sandbox_rlimits(lim);
	return 0;
}

int ks_sandbox_write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* ---- the platform ---------------------------------------------------------------- */

/* a test's choice (ks_sandbox_platform_set); NULL: the native one */
static const struct ks_sandbox_platform *chosen;

const struct ks_sandbox_platform *ks_sandbox_platform(void)
{
	return chosen ? chosen : &ks_sandbox_native;
}

void ks_sandbox_platform_set(const struct ks_sandbox_platform *p)
{
	chosen = p;
}

int ks_sandbox_check(int no_sandbox, struct ks_error *e)
{
	const struct ks_sandbox_platform *p = ks_sandbox_platform();
	char why[256] = "";
	if (no_sandbox || !p->available || p->available(why, sizeof(why)) == 0)
		return 0;
	return ks_error_set(e, KS_EUNAVAILABLE,
			    "no sandbox for candidate kernels here (%s): ksearch does not run "
			    "untrusted code unconfined; 'ksearch eval --no-sandbox' runs a kernel you "
			    "trust without one",
			    why[0] ? why : p->name);
}

int ks_sandbox_child_prepare(const struct ks_sandbox_limits *lim)
{
	return ks_sandbox_platform()->child_prepare(lim);
}

int ks_sandbox_enter(const char *scratch, const char *kernel_path, const char *read_dir,
		     const struct ks_sandbox_needs *needs,
		     void (*open_check)(const char *path, int flags), char *why, size_t n)
{
	return ks_sandbox_platform()->enter(scratch, kernel_path, read_dir, needs, open_check,
					    why, n);
}

int ks_sandbox_enter_compiler(const char *const *ro, const char *const *rw, int no_sockets,
			      char *why, size_t n)
{
	return ks_sandbox_platform()->enter_compiler(ro, rw, no_sockets, why, n);
}

const char *ks_sandbox_describe(void)
{
	return ks_sandbox_platform()->describe();
}
