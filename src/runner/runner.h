/* ksearch-runner internals shared by its files. */
#ifndef KS_RUNNER_RUNNER_H
#define KS_RUNNER_RUNNER_H

#include <stddef.h>

/* scratch directory (writes allowed below it) and whether the kernel is running under
 * watch (set once the sandbox is entered) */
extern char ks_runner_scratch[4096];
extern int ks_runner_watch;

/* write one unsolicited line ("violation ...", "alloc_failed ...") to the reply pipe, its
 * text escaped by ks_runner_line; async-signal-safe enough for the SIGSYS handler (no
 * allocation) */
void ks_runner_report(const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* src as one protocol line in dst (newlines and backslashes escaped, '\n' at the end) */
size_t ks_runner_line(char *dst, size_t cap, const char *src);
/* an open the kernel makes, seen by the sandbox's supervisor before it happens (raw system
 * calls included): one that breaks the rules (a write outside scratch, another process's
 * /proc entry) is reported as a violation and ends the runner */
void ks_runner_open_check(const char *path, int flags);

/* ---- devices ----------------------------------------------------------------------
 * The protocol loop (runner_main.c) is the same for every backend; what differs is where
 * the kernel's buffers live and how one call is launched and timed.  Each runner
 * executable links exactly one device file: device_host.c (cpu) or device_cuda.c. */
#include <stddef.h>
#include <stdint.h>

struct ks_sandbox_needs;

struct ks_runner_device {
	const char *name;
	/* what the sandbox must allow for this device: the same object the backend's
	 * ks_backend_i.sandbox points to (NULL: the base rules, as for the cpu backend) */
	const struct ks_sandbox_needs *sandbox;
	/* after the kernel is loaded: pick the device, create the stream; 0 or -1 + why */
	int (*init)(char *why, size_t n);
	/* the buffer the kernel sees for host memory of bytes (host: the same pointer) */
	void *(*alloc)(void *host, size_t bytes);
	/* host -> kernel-visible after a fill or a poison (host: nothing to do) */
	int (*upload)(void *dev, const void *host, size_t bytes);
	/* kernel-visible -> host, for outputs and input checks (host: nothing to do) */
	int (*download)(void *host, const void *dev, size_t bytes);
	/* whether inputs can be made read-only in place (host memory) */
	int protect_inputs;
	/* Launch once and wait for all work the call started.  *ns is the time of the call as
	 * the device measures it (host: wall clock; cuda: events on ksearch's stream).
	 * Returns 0, or -1 with an explanation (a launch or execution error). */
	int (*call)(void (*launch)(int set, void *stream), int set, uint64_t *ns, char *err,
		    size_t n);
	/* between timed repetitions (cuda: flush L2); may be NULL */
	void (*between_reps)(void);
	/* the stream argument handed to the entry point (host: NULL) */
	void *(*stream)(void);

	/* Optional slots (NULL: the default in brackets), used by the mlx device. */
	/* read the artifact at path and hand back the entry point `call` launches, after the
	 * sandbox is entered [dlopen the shared library, look up ks__entry_v1] */
	int (*load)(const char *path, void (**entry)(void **, const double *, void *), char *why,
		    size_t n);
	/* the workload's params, before alloc (mlx evaluates shapes and the launch) [ignored] */
	int (*set_params)(const double *params, int n, char *why, size_t len);
	/* alloc that knows which tensor and set it is for [alloc] */
	void *(*alloc_tensor)(int tensor, int set, void *host, size_t bytes);
	/* calls one `call` makes (mlx chains several per eval and reports the time of one);
	 * `time` divides its wall-clock block by it [1] */
	int (*chain)(void);
	/* give back what alloc returned, so `reset` can set up the next workload in the same
	 * process (one device init per candidate) [no `reset`: the evaluator starts a new
	 * runner for each workload] */
	void (*release)(void *dev, size_t bytes);
	/* fill count elements of elem bytes (1, 2 or 4) at dev with pattern, on the device
	 * and finished when it returns: outputs are poisoned before each correctness call
	 * without a host pass and an upload of the whole tensor; 0, or -1 to fall back to
	 * the host [poison on the host, upload] */
	int (*poison)(void *dev, size_t count, unsigned elem, uint32_t pattern);
	/* `RUNNER --probe`: print what the device can do on one line to stdout, return the
	 * exit status [the runner says it has no probe, status 2] */
	int (*probe)(void);
};


const struct ks_runner_device *ks_runner_device_get(void);

#endif
