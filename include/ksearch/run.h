/* A search run (`ksearch run`): the K-Search loop over a task's
 * knob templates, with every candidate and evaluation committed to DIR/run.db as it
 * completes, a final re-measurement of the top candidates interleaved with the baseline,
 * DIR/best.<ext> and the reports. */
#ifndef KSEARCH_RUN_H
#define KSEARCH_RUN_H

#include <stdint.h>

#include "ksearch/error.h"
#include "ksearch/eval.h"
#include "ksearch/run_opts.h"

struct ks_backend_i;
/* --jobs when not given: 2 where kernels run on the host (compiles compete with them for
 * the cores); where they are timed on a device (ks_backend_on_host 0), half the online
 * cores, 2 to 8, since compiling on the CPU does not disturb the device's timing */
int ks_run_default_jobs(const struct ks_backend_i *be);

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

/* Where the search phase's candidates spent their wall time: the mean per candidate
 * evaluated in this process (docs/evaluation.md, "Where the time goes") */
struct ks_run_times {
	int n;             /* candidates evaluated here (0: none) */
	int by_workers;    /* 1: evaluated by workers, whose phases stay in them (only n) */
	double total_s;    /* their compile and evaluation wall time */
	double compile_s;  /* the compiler's wall time */
	double phase_s[KS_PHASE_COUNT]; /* the evaluation's phases (enum ks_eval_phase) */
	double other_s;    /* the evaluation's wall time outside its phases */
	double part_s[KS_PART_COUNT];   /* the runner's steps (enum ks_eval_part) */
	double cached_bytes; /* input bytes the runner read from the input cache */
};

struct ks_run_result {
	char run_dir[4096];
	char task[128], backend[32], strategy[32], policy[32];
	int budget, evaluated, passed;
	long best_candidate;      /* -1 when nothing passed */
	double best_speedup;      /* the final re-measurement's, or the search phase's when
				     best_remeasured is 0 */
	int best_remeasured;      /* 1: best_speedup comes from the final re-measurement; 0: the
				     final was skipped (interrupted), it is the search phase's */
	/* the same against the task's library kernel, where one was timed (0: none) */
	double best_library_speedup;
	char library[64];         /* its name ("OpenBLAS"), "" when none was timed */
	char best_source[4096];   /* DIR/best.<ext>, "" when nothing passed */
	char best_action[256];
	/* the final re-measurement: how sure the choice is, and whether to trust it */
	char final_verdict[320];  /* "#30 beats #35 by 8.0% \u00b1 3.0%" ("" without a final) */
	int final_noisy;          /* 1: a loaded machine or search and final > 2x apart */
	char final_noise[1024];   /* why, "; "-separated ("" when not noisy) */
	int resumed;              /* 1 when this continued an earlier run */
	int was_finished;         /* 1: --resume of a run that had finished: nothing evaluated,
				     its reports written again, the figures are the report's */
	int reused;               /* candidates taken from the store instead of evaluated */
	double search_s, final_s; /* the search phase's and the final re-measurement's wall time */
	int final_rounds;         /* rounds the final measured (0: skipped, --top 0 or Ctrl-C) */
	char final_stop[32];      /* why its rounds ended: "decided", "noise_below_threshold",
				     "one_candidate", "round_cap", "time_cap", "skipped", ...
				     (src/run/final_pick.h; "" without a final) */
	char final_stop_reason[256]; /* the same as a phrase for people */
	/* the per-shape pick (include/ksearch/report.h): timed workloads another candidate wins
	 * beyond the noise, of those the best was timed on */
	int shape_wins, shape_timed;
	int cached;               /* evaluations taken from the results cache (earlier runs) */
	double cached_age_min_s, cached_age_max_s; /* how old they were */
	long llm_calls;           /* policy llm / cmd: exchanges made (failed ones too) */
	long llm_prompt_tokens;
	long llm_completion_tokens;
	long llm_tokens_unknown;  /* calls that reported no token counts (cmd, files): the sums
				     above leave them out; all of them: the tokens are unknown */
	double llm_cost;          /* USD from the price table, 0 when unknown */
	int uses_model;           /* the policy asks a model (llm, cmd) */
	struct ks_run_times times; /* where the search phase's candidates spent their time */
	char stopped[256];        /* why the search phase ended: "budget", "interrupted (Ctrl-C)",
				     "--time-limit of 60 s reached", "8 unusable replies in a row", ... */
};

/* Run (or resume) a search.  Returns 0 when the run completed (whatever was found), or an
 * infrastructure error. */
int ks_run(const struct ks_run_opts *o, ks_run_progress_fn progress, void *ctx,
	   struct ks_run_result *r, struct ks_error *e);

/* Ask a running search to stop after the candidate in flight (safe from a signal
 * handler); the run is then finalised and marked "interrupted". */
void ks_run_request_stop(void);

#endif
