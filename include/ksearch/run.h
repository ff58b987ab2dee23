/* A search run (`ksearch run`): the K-Search loop of DESIGN.md §1 and §7 over a task's
 * knob templates, with every candidate and evaluation committed to DIR/run.db as it
 * completes, a final re-measurement of the top candidates interleaved with the baseline,
 * DIR/best.<ext> and the reports. */
#ifndef KSEARCH_RUN_H
#define KSEARCH_RUN_H

#include <stdint.h>

#include "ksearch/error.h"
#include "ksearch/eval.h"

struct ks_run_opts {
	const char *task;        /* name or folder */
	const char *backend;     /* "cpu" */
	const char *strategy;    /* wm (default), evolve, random */
	const char *policy;      /* builtin (default) */
	const char *spec;        /* spec name, or NULL/"auto": detect the host */
	int budget;              /* evaluated candidates in total (default 40) */
	double time_limit_s;     /* stop proposing after this long (0: none) */
	uint64_t seed;           /* same seed, same proposals (default 1) */
	const char *out_dir;     /* NULL: runs/<task>-<YYYYmmdd-HHMMSS> */
	const char *resume_dir;  /* continue this run to its budget */
	int jobs;                /* parallel compiles (default: cores) */
	int final_top;           /* candidates re-measured at the end (default 3) */
	struct ks_eval_opts eval; /* timing and limits for the search phase */
	const char *devices;     /* "0,1": evaluate on one `ksearch worker` per device */
	const char *worker_cmd;  /* start workers with this shell command ({device}) */
};

void ks_run_opts_init(struct ks_run_opts *o);

/* Progress, called from the search thread after every candidate and phase change. */
struct ks_run_progress {
	const char *phase;       /* "setup", "search", "final", "done" */
	int evaluated, budget, passed, failed;
	double best_speedup;     /* best search-phase speedup so far (0: none) */
	const char *action;      /* what is being evaluated now */
	int finished;            /* 1: this call reports a finished candidate */
	const char *last_status; /* status of the candidate just finished, or NULL */
	double last_speedup;
	long last_candidate;
	double elapsed_s, eta_s; /* eta < 0: unknown */
};
typedef void (*ks_run_progress_fn)(const struct ks_run_progress *p, void *ctx);

struct ks_run_result {
	char run_dir[4096];
	char task[128], backend[32], strategy[32], policy[32];
	int budget, evaluated, passed;
	long best_candidate;      /* -1 when nothing passed */
	double best_speedup;      /* from the final re-measurement */
	char best_source[4096];   /* DIR/best.<ext>, "" when nothing passed */
	char best_action[256];
	int resumed;              /* 1 when this continued an earlier run */
	int reused;               /* candidates taken from the store instead of evaluated */
};

/* Run (or resume) a search.  Returns 0 when the run completed (whatever was found), or an
 * infrastructure error. */
int ks_run(const struct ks_run_opts *o, ks_run_progress_fn progress, void *ctx,
	   struct ks_run_result *r, struct ks_error *e);

/* Ask a running search to stop after the candidate in flight (safe from a signal
 * handler); the run is then finalised and marked "interrupted". */
void ks_run_request_stop(void);

#endif
