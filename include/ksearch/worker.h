/* Workers: evaluation in separate `ksearch worker` processes that speak a
 * small versioned protocol over stdin/stdout, so a worker can sit on another GPU, another
 * host (ssh) or another Slurm allocation (srun).  docs/workers.md describes every message.
 *
 * Framing: a 4-byte big-endian length, then that many bytes of UTF-8 JSON (one object).
 * Messages larger than KS_WORKER_MSG_CAP are refused on both sides. */
#ifndef KSEARCH_WORKER_H
#define KSEARCH_WORKER_H

#include <stddef.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "ksearch/eval.h"

#define KS_WORKER_PROTOCOL 1
#define KS_WORKER_MSG_CAP ((size_t)64 << 20)

/* ---- framing ------------------------------------------------------------------------ */

/* Write one frame (length prefix + len bytes).  KS_ELIMIT above the cap, KS_EIO when the
 * peer is gone. */
int ks_worker_write_frame(int fd, const char *data, size_t len, struct ks_error *e);
/* Read one frame into out (replacing its contents, NUL-terminated), waiting at most
 * timeout_s seconds for all of it (< 0: no deadline).  Partial reads are resumed.
 * Errors: KS_EIO end of stream (e says after how many bytes), KS_ETIMEOUT, KS_ELIMIT a
 * length above cap (the body is not read; the stream is then unusable). */
int ks_worker_read_frame(int fd, double timeout_s, size_t cap, struct ks_buf *out,
			 struct ks_error *e);

/* ---- results on the wire ------------------------------------------------------------- */

/* Every field of r as one JSON object (non-finite numbers kept as "nan"/"inf"/"-inf"),
 * enough to rebuild the struct exactly. */
int ks_eval_result_to_wire(const struct ks_eval_result *r, struct ks_buf *out);
/* Rebuild r from the text ks_eval_result_to_wire wrote.  The text is untrusted: counts
 * and strings are checked; KS_EPROTO (with the reason) when it does not fit.  On error r
 * holds nothing that needs releasing. */
int ks_eval_result_from_wire(const char *json, size_t len, struct ks_eval_result *r,
			     struct ks_error *e);

/* ---- the worker (server) ------------------------------------------------------------- */

struct ks_worker_config {
	const char *backend; /* "cpu", "cuda", ... */
	int device;          /* the device it serves (-1: unspecified) */
	int max_evaluators;  /* evaluators kept per (task, options) (default 4) */
};

/* Serve the protocol on in_fd/out_fd until `shutdown` or end of input.  Writes nothing but
 * frames to out_fd; logs go through ks_log.  Returns 0 after an orderly end, else the
 * error that broke the stream (a malformed frame, a write to a closed pipe). */
int ks_worker_serve(int in_fd, int out_fd, const struct ks_worker_config *cfg,
		    struct ks_error *e);

/* ---- the pool (client) -------------------------------------------------------------- */

struct ks_pool_opts {
	const char *backend;     /* backend every worker must serve (default "cpu") */
	const int *devices;      /* one worker per device; NULL: one worker for device 0 */
	int ndevices;
	const char *worker_cmd;  /* run with /bin/sh -c, "{device}" replaced by the device
				    number; NULL: `ksearch worker --backend B --device N` with
				    the ksearch beside the running executable */
	double start_timeout_s;  /* deadline for a worker's hello (default 120 s) */
	double job_timeout_s;    /* deadline of one job; 0: derived from its eval options */
	int max_starts;          /* failed starts in a row before a worker is given up (3) */
};

void ks_pool_opts_init(struct ks_pool_opts *o);
/* "0,1,3" -> out[]; KS_EINVAL with a message for anything else */
int ks_pool_parse_devices(const char *s, int *out, int max, int *n, struct ks_error *e);

struct ks_pool;

/* Start every worker and check its hello (protocol, backend).  Fails (KS_EPROTO,
 * KS_EIO, KS_ETIMEOUT, ...) with a message naming the command when one cannot start. */
int ks_pool_new(const struct ks_pool_opts *o, struct ks_pool **out, struct ks_error *e);
/* number of workers */
int ks_pool_size(const struct ks_pool *p);
/* Ask every worker to shut down, reap them (killing those that linger) and free. */
void ks_pool_free(struct ks_pool *p);

struct ks_pool_job {
	const char *task;            /* task name or folder, as the worker will load it */
	const struct ks_eval_opts *opts;
	const char *source;          /* kernel source text */
	const char *path;            /* the kernel's name in messages */
	const char *const *defines;  /* NULL: opts->defines */
	int units;                   /* workloads + checks, for the deadline (0: assume 16) */
	/* filled by ks_pool_evaluate_batch */
	int rc;                      /* 0, or this job's infrastructure error */
	struct ks_error err;
	int attempts;                /* times it was sent to a worker */
};

/* Evaluate n jobs concurrently, at most one in flight per worker (the per-device lock).
 * A worker that dies (end of stream, crash, deadline) is restarted and its job re-queued;
 * a job during which workers died twice fails with KS_EIO.  results[i] is filled when
 * jobs[i].rc == 0 and zeroed otherwise; release every one with ks_eval_result_release.
 * Returns 0 when every job succeeded, else the error of the first failed job (in job
 * order) with its message in e. */
int ks_pool_evaluate_batch(struct ks_pool *p, struct ks_pool_job *jobs, int n,
			   struct ks_eval_result *results, struct ks_error *e);

#endif
