/* The evaluator's side of ksearch-runner: start one sandboxed runner, talk to it with
 * deadlines, and turn its death into a status. */
#ifndef KS_EVAL_RUNNER_CLIENT_H
#define KS_EVAL_RUNNER_CLIENT_H

#include <stddef.h>
#include <sys/types.h>

#include "eval/sandbox.h"
#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "ksearch/eval.h"

struct ks_runner_spawn {
	const char *runner_path;        /* ksearch-runner */
	int sandbox;                    /* enter the sandbox before loading the kernel */
	struct ks_sandbox_limits limits; /* scratch (its folder) and cgroup are filled in here:
					    give scratch_bytes, and max_threads for a pids
					    cgroup where there is one */
	long max_threads;               /* its pids cgroup's pids.max; 0: no cgroup */
	const char *const *extra_env;   /* "OMP_NUM_THREADS=2", ... */
	size_t out_bytes;               /* size of the shared output file */
	const char *inputs_dir;         /* the input cache, read-only to the runner; NULL: none */
};

struct ks_runner {
	pid_t pid;
	int cmd_fd, reply_fd, log_fd;
	unsigned char *out;   /* shared output file, read-only here: every set's outputs */
	size_t out_bytes;
	int direct;           /* the kernel writes the shared file itself (host device): what is
				 there is what it wrote, even with the runner stopped */
	struct ks_buf replies; /* unparsed reply bytes */
	struct ks_buf log;     /* the kernel's stdout/stderr, capped */
	char scratch[4096];
	char cgroup[4096];     /* its pids cgroup's folder (src/eval/cgroup_linux.c), "" when none */
	struct ks_sandbox_limits limits; /* what its child was given (points into this struct) */
	char cgroup_procs[4120];
	char violation[512];   /* last "violation" line */
	size_t alloc_failed;   /* bytes of a failed allocation, 0 if none */
	char launch_error[3072]; /* last "launch_failed" line (device errors), unescaped */
	int timed_out;
	int killed;            /* we killed it (after an error reply or a timeout) */
	int paused;            /* stopped by ks_runner_pause */
	int reaped, wstatus;
	size_t peak_rss;       /* bytes at its peak (wait4's ru_maxrss), once reaped */
	double cpu_used_s;     /* user + system CPU time, once reaped */
	size_t address_space;  /* its RLIMIT_AS (0: none) and RLIMIT_CPU backstop (0: none), */
	double cpu_limit_s;    /* to tell what a SIGKILL nobody here sent meant */
	int killed_outside;    /* set by ks_runner_fate: a SIGKILL that was neither ksearch's,
				  the CPU backstop's nor an out-of-memory death's */
	double exec_s;         /* from the spawn to the runner's main (its hello says when), 0
				  when it does not say */
};

int ks_runner_start(const struct ks_runner_spawn *sp, struct ks_runner **out,
		    struct ks_error *e);
/* Send one command and wait up to timeout_s for its reply line (unsolicited lines are
 * recorded on the way).  Returns 0 with the reply in *reply (valid until the next call),
 * KS_ETIMEOUT when the deadline passed (the runner is then killed), KS_EPROTO when the
 * runner died or answered "error ..." (the text is in e). */
int ks_runner_cmd(struct ks_runner *r, double timeout_s, const char **reply, struct ks_error *e,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The two halves of ks_runner_cmd, to send several commands before reading their replies
 * (one wait per command, in order): the runner answers them one after the other, so a
 * batch costs one round trip instead of one per command.  After an error the runner's
 * later replies are meaningless: kill it (ks_runner_fate, ks_runner_free). */
int ks_runner_send(struct ks_runner *r, struct ks_error *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int ks_runner_wait(struct ks_runner *r, double timeout_s, const char **reply, struct ks_error *e);
/* After a failed command: kill if needed, reap, and classify what happened to the kernel
 * (TIMEOUT, MEMORY_LIMIT, SANDBOX_VIOLATION, RUNTIME_ERROR) with an explanation in log.
 * A SIGKILL ksearch did not send is judged by the runner's peak memory and CPU time: the
 * CPU backstop's (TIMEOUT), an out-of-memory kill's (MEMORY_LIMIT: it held at least half
 * of what it may use), else someone else's, perhaps outside ksearch: RUNTIME_ERROR with
 * r->killed_outside set, for the caller to try again in a fresh runner. */
enum ks_status ks_runner_fate(struct ks_runner *r, struct ks_buf *log);
/* Stop the runner's whole process group and wait until it has stopped (SIGSTOP cannot be
 * caught or ignored), so nothing in it runs while another kernel is timed; resume with
 * ks_runner_resume.  A runner that died meanwhile is reaped (r->reaped).  0 or -1. */
int ks_runner_pause(struct ks_runner *r);
void ks_runner_resume(struct ks_runner *r);
/* quit, kill, reap, remove scratch, free */
void ks_runner_free(struct ks_runner *r);

#endif
