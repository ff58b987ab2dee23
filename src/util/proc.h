/* The one way ksearch starts a child process (compilers, nvcc, the sandboxed runner, pool
 * workers, `--policy cmd` commands), and a capped-capture run with a deadline on top of it.
 *
 * Every child gets its own process group, so a timeout or a kill takes everything it started;
 * default dispositions for the signals a shell resets (SIGPIPE, SIGINT, SIGTERM, SIGQUIT,
 * SIGHUP) and an empty signal mask whatever the parent (its threads) had; and exactly the
 * descriptors it is given: nothing the parent had open leaks into it. */
#ifndef KS_UTIL_PROC_H
#define KS_UTIL_PROC_H

#include <stddef.h>
#include <sys/types.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"

#define KS_SPAWN_MAX_FDS 8
#define KS_SPAWN_NULL (-1)    /* fd slot: /dev/null for 0-2, closed above */
#define KS_SPAWN_INHERIT (-2) /* fd slot 0-2: keep the caller's */

struct ks_spawn {
	char *const *argv; /* argv[0]: a path, or a name looked up in PATH */
	const char *path;  /* the program when it differs from argv[0] (NULL: argv[0]) */
	char *const *env;  /* NULL: the caller's environment */
	const char *cwd;   /* NULL: the caller's directory */
	/* fd[i] (a descriptor of the caller, KS_SPAWN_NULL or KS_SPAWN_INHERIT) becomes the
	 * child's descriptor i for i < nfd; slots 0-2 past nfd are inherited; every other
	 * descriptor is closed in the child */
	int nfd;
	int fd[KS_SPAWN_MAX_FDS];
	/* run in the child after its descriptors are set, just before exec; async-signal-safe
	 * work only (the caller may have threads); nonzero fails the spawn (may be NULL) */
	int (*prepare)(void *ctx);
	void *ctx;
	/* prepare starts its own session (the sandbox does): leave the process group to it */
	int prepare_sets_group;
};

/* Start sp.  *pid is the child, and the id of its process group.  Fails (KS_ENOTFOUND when
 * the program does not exist, KS_ESYS otherwise) when the child could not exec, with the
 * reason; the child is reaped then. */
int ks_spawn(const struct ks_spawn *sp, pid_t *pid, struct ks_error *e);
/* SIGKILL the child's process group, then reap the child; *wstatus (may be NULL) gets its
 * wait status.  Safe to call for a child already reaped (pid <= 0 does nothing). */
void ks_spawn_kill(pid_t pid, int *wstatus);

struct ks_proc_result {
	int exited;          /* 1 when it exited normally */
	int code;            /* exit code, or the signal number when it did not exit */
	int timed_out;       /* killed at the deadline */
	int out_over_cap;    /* stdout passed out's cap (see ks_proc_io.out_cap_kills) */
	size_t err_dropped;  /* stderr bytes dropped beyond err's cap */
};

/* What a captured run reads and where its output goes. */
struct ks_proc_io {
	const char *cwd;         /* NULL: inherit */
	char *const *env;        /* NULL: inherit */
	const char *input;       /* written to stdin (a socket: a child that stops reading gets
				    EPIPE, the parent no SIGPIPE); NULL: stdin is /dev/null */
	size_t input_len;
	struct ks_buf *out;      /* stdout, and stderr too when err is NULL (its cap applies) */
	struct ks_buf *err;      /* stderr apart, or NULL; err->cap bytes kept, the rest counted */
	/* 1: stdout passing its cap kills the group (out_over_cap set); 0: keep what fits
	 * and end out with a "[output truncated]" note */
	int out_cap_kills;
	double timeout_s;        /* <= 0: 600 s */
	/* > 0: the run ends this long after the program exits, even while something it left
	 * running still holds stdout or stderr open (what arrives until then is kept, the
	 * leftovers are killed); 0: read until every holder has closed them */
	double exit_grace_s;
};

/* Run argv with io, kill its whole group at the deadline or when it ends (nothing it
 * started outlives it).  Returns 0 when the program ran, whatever its exit status, timeout
 * or overflow (see res); an error only when it could not be started.  A program that
 * cannot be exec'd "ran" like a shell reports it: exit code 127, the reason in the output. */
int ks_proc_exec(char *const argv[], const struct ks_proc_io *io, struct ks_proc_result *res,
		 struct ks_error *e);

/* Run argv in cwd (NULL: inherit) with stdin from /dev/null and stdout+stderr captured into
 * out (its cap applies; excess is dropped and noted).  The convenient form of ks_proc_exec,
 * with a seam for tests. */
int ks_proc_run(char *const argv[], const char *cwd, double timeout_s, struct ks_buf *out,
		struct ks_proc_result *res, struct ks_error *e);

/* Seconds the thread pid (0: the calling thread) has waited on a run queue for a CPU, as
 * the kernel counts it (/proc/.../schedstat's run_delay); NAN where the kernel does not
 * say.  On a loaded machine this is how long a process was ready but not running. */
double ks_sched_wait_s(pid_t pid);

/* Seam for tests: replace how programs are run by ks_proc_run; NULL restores. */
typedef int (*ks_proc_run_fn)(char *const argv[], const char *cwd, double timeout_s,
			      struct ks_buf *out, struct ks_proc_result *res, struct ks_error *e);
void ks_proc_set_runner(ks_proc_run_fn fn);

#endif
