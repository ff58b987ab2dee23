/* ksearch-runner internals shared by its files. */
#ifndef KS_RUNNER_RUNNER_H
#define KS_RUNNER_RUNNER_H

/* scratch directory (writes allowed below it) and whether the kernel is running under
 * watch (set once the sandbox is entered) */
extern char ks_runner_scratch[4096];
extern int ks_runner_watch;

/* write one unsolicited line ("violation ...", "alloc_failed ...") to the reply pipe;
 * async-signal-safe enough for the SIGSYS handler (no allocation) */
void ks_runner_report(const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
