/* What a search run is asked to do (`ksearch run`'s options): read by the driver (ksearch/run.h)
 * and by the policies it opens (ksearch/policy.h), which take their model settings from it. */
#ifndef KSEARCH_RUN_OPTS_H
#define KSEARCH_RUN_OPTS_H

#include <stdint.h>

#include "ksearch/eval.h"

#define KS_RUN_MAX_TOP 16 /* candidates the final re-measures at most */

struct ks_run_opts {
	const char *task;        /* name or folder */
	const char *backend;     /* "cpu" */
	const char *strategy;    /* wm (default), evolve, random */
	const char *policy;      /* builtin (default), llm, cmd, files */
	const char *spec;        /* spec name, or NULL/"auto": detect the host */
	int budget;              /* evaluated candidates in total (default 40) */
	double time_limit_s;     /* stop proposing after this long (0: none) */
	uint64_t seed;           /* same seed, same proposals (default 1) */
	const char *out_dir;     /* NULL: runs/<task>-<YYYYmmdd-HHMMSS> */
	const char *resume_dir;  /* continue this run to its budget */
	int fresh;               /* 1: evaluate everything, use no result of an earlier run (the
				    results cache, $KSEARCH_CACHE/results/results.sqlite) */
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

#endif
