/* Run a helper program (compiler, nvcc) with a deadline and capped output capture. */
#ifndef KS_UTIL_PROC_H
#define KS_UTIL_PROC_H

#include "ksearch/buf.h"
#include "ksearch/error.h"

struct ks_proc_result {
	int exited;    /* 1 when it exited normally */
	int code;      /* exit code, or the signal number when it did not exit */
	int timed_out; /* killed at the deadline */
};

/* Run argv (argv[0] looked up in PATH) in cwd (NULL: inherit) with stdin from /dev/null,
 * stdout+stderr captured into out (its cap applies; excess is dropped and noted).
 * Returns 0 when the program ran (whatever its exit code), else an error. */
int ks_proc_run(char *const argv[], const char *cwd, double timeout_s, struct ks_buf *out,
		struct ks_proc_result *res, struct ks_error *e);

/* Seam for tests (STYLE.md 8): replace how programs are spawned; NULL restores. */
typedef int (*ks_proc_run_fn)(char *const argv[], const char *cwd, double timeout_s,
			      struct ks_buf *out, struct ks_proc_result *res, struct ks_error *e);
void ks_proc_set_runner(ks_proc_run_fn fn);

#endif
