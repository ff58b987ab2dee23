/* The sandbox around candidate code.
 *
 * Two halves: ks_sandbox_child_prepare() runs in the forked child before exec (process
 * group, rlimits, a private network namespace when permitted, scrubbed environment), and
 * ks_sandbox_enter() runs inside ksearch-runner before the kernel is loaded (Landlock file
 * rules, seccomp filter).  Both hold when run as root (nothing relies on being
 * unprivileged) and as any other user (tests/cli/t0215-unprivileged.sh).
 *
 * This file is linked into ksearch-runner, so it depends on libc and libseccomp only. */
#ifndef KS_EVAL_SANDBOX_H
#define KS_EVAL_SANDBOX_H

#include <stddef.h>

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

/* The runner's thread bound as root (src/eval/cgroup.c): 1 when runners get a pids cgroup
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
 * NULL-terminated; /dev/null is always usable), and no network sockets.  0, or -1 with
 * why set.  Without Landlock in the kernel only the file rules are missing. */
int ks_sandbox_enter_compiler(const char *const *ro, const char *const *rw, char *why,
			      size_t n);

/* "landlock abi N" / "landlock unavailable": reported in eval logs so users know */
const char *ks_sandbox_describe(void);

#endif
