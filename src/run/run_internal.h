/* State shared by the files of one search run (run.c, loop.c: the driver, final.c). */
#ifndef KS_SEARCH_RUN_INTERNAL_H
#define KS_SEARCH_RUN_INTERNAL_H

#include <limits.h>
#include <signal.h>

#include "ksearch/backend.h"
#include "ksearch/eval.h"
#include "ksearch/knowledge.h"
#include "ksearch/run.h"
#include "ksearch/store.h"
#include "ksearch/policy.h"

struct ks_results;

struct ks_run_state {
	struct ks_run_opts o;
	char dir[PATH_MAX];
	struct ks_store *store;
	struct ks_task *task;
	const struct ks_backend_i *be;
	struct ks_spec spec;
	int have_spec;
	struct ks_results *results; /* the results cache (NULL: --fresh or not available) */
	int results_tried;          /* 1: opening it was tried */
	char task_hash[65];         /* for its keys */
	int cached;                 /* evaluations it answered */
	double cached_age_min_s, cached_age_max_s;
	struct ks_evaluator *ev;
	struct ks_policy policy;
	ks_run_progress_fn progress;
	void *progress_ctx;
	int resumed;
	int finished;       /* resumed a run that had ended: only its reports are written */
	int round;
	int batches;        /* rounds this process has run (run_batch), numbering eval_times */
	int evaluated, evaluated_at_start, passed, failed, reused;
	double best;
	const char *last_status;
	double last_speedup;
	long last_candidate;
	double t0, t_search;
	struct ks_policy_usage usage; /* the model's, when the policy uses one */
	/* where candidates' wall time went (issue 12): sums over the evaluated candidates */
	double phase_sum[KS_PHASE_COUNT], compile_sum, other_sum, wall_sum;
	double part_sum[KS_PART_COUNT]; /* the runner's steps inside inputs and check */
	double cached_sum;              /* input bytes runners read from the input cache */
	int ntimed;
	char stopped[256];  /* why the search phase ended: "budget", "interrupted (Ctrl-C)", ... */
	int64_t *seen;      /* candidates evaluated or replayed by this process */
	int nseen, cseen;
	int repeats;        /* consecutive proposals of candidates evaluated already */
	char *last_snapshot; /* the policy document stored last (stored again only if changed) */
	char *strs[24]; /* option strings restored from a resumed run's config */
	int nstrs;
	struct ks_pool *pool; /* workers (--devices, --worker-cmd), NULL: evaluate here */
	int lock_fd;          /* DIR/run.lock, held for the whole run (ks_run_lock) */
	int made_dir;         /* 1: this run created DIR (0: --out named an existing folder) */
	int fresh_store;      /* 1: this run created DIR/run.db */
};

/* ks_clock_s under final.c's old name, until the run-final split switches it (run.c) */
double ks_run_now(void);
/* call the progress callback with the current counters */
void ks_run_progress_tick(struct ks_run_state *st, const char *phase, const char *action,
			  int finished);
int ks_run_stop_requested(void);
/* the search phase: until the budget is evaluated, time runs out or a stop is requested */
int ks_run_search(struct ks_run_state *st, struct ks_error *e);
/* re-measure the top candidates, choose the best, write DIR/best.<ext> */
int ks_run_final(struct ks_run_state *st, struct ks_run_result *r, struct ks_error *e);
/* record an evaluation result of candidate id in phase ("search"/"final") */
int ks_run_record(struct ks_run_state *st, int64_t id, const char *phase,
		  const struct ks_eval_result *res, struct ks_error *e);

#endif
