/* The sandbox around candidate code, one interface for every system ksearch builds on.
 *
 * Two halves: ks_sandbox_child_prepare() runs in the forked child before exec (process
 * group, rlimits, a private network namespace when permitted, scrubbed environment), and
 * ks_sandbox_enter() runs inside ksearch-runner before the kernel is loaded.  What they do
 * is the platform's (struct ks_sandbox_platform): on Linux (sandbox_linux.c) Landlock file
 * rules, a seccomp filter, namespaces and a pids cgroup; on macOS (sandbox_macos.c) a
 * Seatbelt profile written from the same needs (sandbox_sbpl.c) and rlimits; a system with
 * neither gets sandbox_none.c, limits only, and ksearch refuses untrusted kernels there
 * unless --no-sandbox is given (ks_sandbox_check).  Both hold when run as root (nothing
 * relies on being unprivileged) and as any other user (tests/cli/t0215-unprivileged.sh).
 *
 * This file is linked into ksearch-runner, so it depends on libc (and libseccomp on Linux)
 * only. */
#ifndef KS_EVAL_SANDBOX_H
#define KS_EVAL_SANDBOX_H

#include <signal.h>
#include <stddef.h>

#include "ksearch/error.h"

struct ks_sandbox_needs; /* include/ksearch/backend.h */

struct ks_sandbox_limits {
	size_t address_space; /* RLIMIT_AS in bytes, 0 = unlimited (CUDA needs that) */
	double cpu_seconds;   /* RLIMIT_CPU backstop (SIGXCPU, SIGKILL 2 s later), 0 = none */
	size_t file_size;     /* RLIMIT_FSIZE */
	int isolate_network;  /* try unshare(CLONE_NEWNET) */
	int parent;           /* pid of the process that forked the child: a child orphaned
				 before its parent-death signal was set exits at once; 0 = no check */
	const char *cgroup;   /* a cgroup's cgroup.procs the child joins through (ks_cgroup_create);
				 NULL: none */
	const char *scratch;  /* the runner's scratch folder: a tmpfs of scratch_bytes is mounted */
	size_t scratch_bytes; /* on it in the child's own mount namespace where one can be made
				 (root, or a user namespace); NULL: none */
};

/* One system's way of confining a process.  Every ks_sandbox_* call below goes to the
 * platform ks_sandbox_platform() returns: this build's native one, or the one a test set. */
#define KS_SANDBOX_PLATFORM_VERSION 1
struct ks_sandbox_platform {
	int version;      /* KS_SANDBOX_PLATFORM_VERSION */
	const char *name; /* "linux", "macos", "none" */
	/* 0 when untrusted kernels can be confined here; -1 with the reason in why.  NULL:
	 * always */
	int (*available)(char *why, size_t n);
	int (*child_prepare)(const struct ks_sandbox_limits *lim);
	int (*enter)(const char *scratch, const char *kernel_path, const char *read_dir,
		     const struct ks_sandbox_needs *needs,
		     void (*open_check)(const char *path, int flags), char *why, size_t n);
	int (*enter_compiler)(const char *const *ro, const char *const *rw, int no_sockets,
			      char *why, size_t n);
	const char *(*describe)(void);
};

/* the one this build was made for (sandbox_linux.c, sandbox_macos.c) and the fallback of a
 * system without a sandbox (sandbox_none.c, compiled everywhere) */
extern const struct ks_sandbox_platform ks_sandbox_native;
extern const struct ks_sandbox_platform ks_sandbox_none;
const struct ks_sandbox_platform *ks_sandbox_platform(void);
/* tests: make p the platform of this process (NULL: the native one again) */
void ks_sandbox_platform_set(const struct ks_sandbox_platform *p);

/* 0 when candidate kernels may run: the platform confines them, or the user said
 * --no-sandbox (no_sandbox 1) for kernels they trust; else KS_EUNAVAILABLE saying why
 * and what to do */
int ks_sandbox_check(int no_sandbox, struct ks_error *e);

/* The system call a SIGSYS reports (si_syscall), -1 where the system does not say; and
 * its name ("kill") into out, 0 or -1 when unknown.  The native platform's, never a
 * test's. */
int ks_sandbox_trapped_syscall(const siginfo_t *si);
int ks_sandbox_syscall_name(int nr, char *out, size_t n);

/* The runner's thread bound as root (src/eval/cgroup_linux.c): 1 when runners get a pids cgroup
 * of their own here; ks_cgroup_create makes one (<hierarchy>/ksearch/run-PID-N, pids.max set)
 * into dir, 0 or -1; ks_cgroup_remove removes it once its runner is gone; ks_cgroup_sweep
 * removes those of processes that are gone (their count). */
int ks_cgroup_available(void);
int ks_cgroup_create(long max_pids, char *dir, size_t n);
void ks_cgroup_remove(const char *dir);
int ks_cgroup_sweep(void);

/* Build the runner's environment from environ: a whitelist (PATH, LANG, LC_*, TZ, OMP_*,
 * GOMP_*, KMP_*, CUDA_*, NVIDIA_*) minus anything secret-looking, plus HOME and TMPDIR set
 * to scratch, KSEARCH_SECCOMP_AUDIT made absolute where ksearch has it, and the extra
 * "NAME=VALUE" strings given.  Returns a NULL-terminated array in
 * one malloc'd block (free with free()). */
char **ks_env_scrubbed(const char *scratch, const char *const *extra);

/* text written to the file at path in one write (a /proc or cgroup file); 0 or -1.
 * Async-signal-safe: the child between fork and exec uses it. */
int ks_sandbox_write_text(const char *path, const char *text);

/* In the child between fork and exec; async-signal-safe apart from the rlimit calls.
 * Returns 0 or -errno of the first failure that matters. */
int ks_sandbox_child_prepare(const struct ks_sandbox_limits *lim);

/* Inside the runner: allow reads of system files, the loaded kernel, /proc/self, scratch
 * and read_dir (the input cache; NULL: none), writes only under scratch; allow only the
 * system calls on the seccomp allow-list, and never network, exec, new processes, ptrace,
 * signals to other processes or a few other dangerous calls; refuse memory that is
 * writable and executable (unless needs->wx_memory).  Forbidden syscalls raise SIGSYS,
 * which the runner reports as a violation.  needs (the backend's, as its runner device
 * holds them; NULL: nothing more) additionally opens what its runtime requires, a GPU
 * driver's device nodes, driver files and system calls say.  open_check (NULL: none) sees
 * the path and flags of every open from then on, raw system calls included, before the
 * open happens: it reports one that breaks the rules and ends the process.  With
 * KSEARCH_SECCOMP_AUDIT=FILE in the environment (ks_env_scrubbed passes ksearch's own),
 * calls off the allow-list are appended to FILE and allowed instead.  why gets the reason
 * on failure. */
int ks_sandbox_enter(const char *scratch, const char *kernel_path, const char *read_dir,
		     const struct ks_sandbox_needs *needs,
		     void (*open_check)(const char *path, int flags), char *why, size_t n);

/* The compiler's sandbox, entered by ksearch-cc-jail right before it executes the
 * compiler (inherited by everything the compiler runs): no_new_privs, no capabilities,
 * Landlock reads (and execution) only under ro[], reads and writes only under rw[] (both
 * NULL-terminated; /dev/null is always usable), no network sockets, and with no_sockets
 * no socket at all.  0, or -1 with why set.  Without Landlock in the kernel only the file
 * rules are missing. */
int ks_sandbox_enter_compiler(const char *const *ro, const char *const *rw, int no_sockets,
			      char *why, size_t n);

/* "landlock abi N" / "landlock unavailable" (Linux), "seatbelt" (macOS): reported in eval
 * logs so users know */
const char *ks_sandbox_describe(void);

#endif
