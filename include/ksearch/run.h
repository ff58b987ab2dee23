/* A search run (`ksearch run`): the K-Search loop over a task's
 * knob templates, with every candidate and evaluation committed to DIR/run.db as it
 * completes, a final re-measurement of the top candidates interleaved with the baseline,
 * DIR/best.<ext> and the reports. */
#ifndef KSEARCH_RUN_H
#define KSEARCH_RUN_H

#include <stdint.h>

#include "ksearch/error.h"
#include "ksearch/eval.h"

#define KS_RUN_MAX_TOP 16 /* candidates the final re-measures at most */

struct ks_run_opts {
	const char *task;        /* name or folder */
	const char *backend;     /* "cpu" */
	const char *strategy;    /* wm (default), evolve, random */
	const char *policy;      /* builtin (default), llm, cmd */
	const char *spec;        /* spec name, or NULL/"auto": detect the host */
	int budget;              /* evaluated candidates in total (default 40) */
	double time_limit_s;     /* stop proposing after this long (0: none) */
	uint64_t seed;           /* same seed, same proposals (default 1) */
	const char *out_dir;     /* NULL: runs/<task>-<YYYYmmdd-HHMMSS> */
	const char *resume_dir;  /* continue this run to its budget */
	int fresh;               /* 1: evaluate everything, use no result of an earlier run (the
				    results cache, $KSEARCH_CACHE/results.sqlite) */
	int jobs;                /* proposals compiled in parallel per round (0: the default,
				    ks_run_default_jobs of the backend) */
	int final_top;           /* candidates re-measured at the end (default 3, at most
				    KS_RUN_MAX_TOP; 0: none, the search phase's figures stand) */
	struct ks_eval_opts eval; /* timing and limits for the search phase */
	/* policy llm / cmd (docs/llm.md) */
	const char *llm_base_url;   /* llm: OpenAI-compatible endpoint */
	const char *llm_model;      /* llm: model name */
	const char *llm_api_key;    /* llm: bearer key (never recorded); NULL: none */
	const char *llm_cmd;        /* cmd: shell command, prompt on stdin, reply on stdout */
	const char *llm_replay;     /* replay the exchanges recorded in this run folder */
	long llm_max_calls;         /* <= 0: unlimited */
	double llm_max_cost;        /* USD, <= 0: unlimited (needs llm_prices) */
	double llm_temperature;     /* < 0: not sent */
	long llm_max_tokens;        /* reply length limit, <= 0: not sent */
	const char *llm_reasoning_effort; /* low, medium, high; NULL: not sent */
	double llm_timeout_s;       /* per request (0: the transport's default, 600 s) */
	const char *prompts_dir;    /* NULL: <data root>/prompts */
	const char *context;        /* none, spec, full (default) */
	const char *llm_prices;     /* price table JSON file, or NULL */
	int llm_max_failures;       /* model replies in a row that give nothing new before the
				       policy stops (0: the default, 8) */
	/* options the user gave (KS_RUN_GIVEN_*): on --resume each must equal the run's own,
	 * or the resume is refused naming the difference (a resumed run keeps its options) */
	unsigned given;
	/* workers (docs/workers.md) */
	const char *devices;     /* "0,1": evaluate on one `ksearch worker` per device */
	const char *worker_cmd;  /* start workers with this shell command ({device}) */
};

#define KS_RUN_GIVEN_TASK 0x01u
#define KS_RUN_GIVEN_BUDGET 0x02u
#define KS_RUN_GIVEN_BACKEND 0x04u
#define KS_RUN_GIVEN_STRATEGY 0x08u
#define KS_RUN_GIVEN_POLICY 0x10u
#define KS_RUN_GIVEN_OUT 0x20u

void ks_run_opts_init(struct ks_run_opts *o);
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
	int cached;               /* evaluations taken from the results cache (earlier runs) */
	double cached_age_min_s, cached_age_max_s; /* how old they were */
	long llm_calls;           /* policy llm / cmd: exchanges made (failed ones too) */
	long llm_prompt_tokens;
	long llm_completion_tokens;
	double llm_cost;          /* USD from the price table, 0 when unknown */
	int uses_model;           /* the policy asks a model (llm, cmd) */
	/* where the search phase's candidates spent their wall time, on average: "per
	 * candidate (12 evaluated here): 3.9 s = compile 0.4, reference 0.1, start 0.2, ..."
	 * ("" when nothing was evaluated here) */
	char time_summary[640];
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
