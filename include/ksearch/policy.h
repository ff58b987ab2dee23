/* Policies: who writes the candidates of a search run.  One interface struct per policy,
 * registered in one table (src/policy/registry.c), driven by one search driver
 * (src/run/loop.c):
 *
 *   builtin  a strategy (wm, evolve, random) over the task's knob templates
 *   llm      the K-Search loop with a model behind an OpenAI-compatible endpoint
 *   cmd      the same loop with a model behind a shell command
 *   files    the same loop with whoever answers prompt files in the run folder
 *
 * The driver asks for candidates (propose), compiles and evaluates them (locally or on the
 * worker pool), records every outcome in the run store and hands it back (observe).  The
 * budget, the time limit, Ctrl-C, resume and the counters are the driver's; what to try
 * next and when there is nothing left to try are the policy's.
 *
 * Resume: the policy is opened again with the same options and driven again; every
 * candidate it proposes that the store already holds with a result is answered from the
 * store (observe with replayed = 1, no evaluation, no budget spent twice), so the policy
 * rebuilds its state from the recorded outcomes.  Same seed, same store, same path. */
#ifndef KSEARCH_POLICY_H
#define KSEARCH_POLICY_H

#include <stddef.h>

#include "ksearch/backend.h"
#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "ksearch/eval.h"
#include "ksearch/knowledge.h"
#include "ksearch/run_opts.h"
#include "ksearch/store.h"
#include "ksearch/task.h"

#define KS_POLICY_VERSION 1
#define KS_POLICY_MAX_PROPOSALS 16 /* one propose call hands out at most this many */

/* What a policy may use during a run; owned by the driver, valid until the policy is freed. */
struct ks_policy_env {
	const struct ks_run_opts *o;     /* the run's options (resumed runs: as recorded) */
	const struct ks_task *task;
	const struct ks_backend_i *be;
	const struct ks_spec *spec;      /* NULL when the run has none */
	struct ks_store *store;          /* the run store (read; exchanges are recorded) */
	int resumed;                     /* the store holds an earlier part of this run */
	int *round;                      /* the run's round counter (policies advance it) */
	/* candidates the budget still allows (the driver's count, time limit included) */
	int (*budget_left)(void *ctx);
	/* tell the user what is happening now ("asking the model (edit)") */
	void (*progress)(void *ctx, const char *what);
	void *ctx;
	const char *run_dir;             /* the run folder (the files policy writes prompts there) */
	/* 1 once the run was asked to stop (Ctrl-C): a policy waiting for a reply gives up */
	int (*stopping)(void *ctx);
};

/* One candidate to evaluate.  Every string is the policy's and stays valid until the
 * policy observes the candidate's outcome. */
struct ks_policy_cand {
	const char *source;              /* the kernel source */
	const char *path;                /* the file it came from (templates), or NULL */
	const char *const *defines;      /* NULL-terminated "NAME=VALUE" list, or NULL */
	const char *ident;               /* the defines as stored: "-DBM=64 -DBN=32", "" none */
	const char *family;              /* template family, "" none */
	const char *knobs;               /* knob values as JSON, "{}" none */
	long parent;                     /* candidate it builds on, -1 none */
	int node;                        /* world-model node, -1 none */
	const char *title;               /* the action: "family: tiled", "online softmax / debug" */
	const char *purpose;             /* why it was written: knobs, action, debug, improve,
					    direct, tune */
	const char *policy;              /* recorded as the candidate's policy: "builtin", "llm" */
	void *token;                     /* the policy's own bookkeeping */
};

/* What came of a candidate. */
struct ks_policy_outcome {
	long candidate;                  /* its id in the store */
	int status;                      /* enum ks_status */
	int passed;                      /* PASSED with a finite positive speedup */
	double score;                    /* geometric-mean speedup over the baseline (passed) */
	const struct ks_eval_result *res; /* the whole result; NULL when replayed from the store */
	int replayed;                    /* 1: recorded before a resume, not evaluated again */
	long duplicate_of;               /* > 0: the same source and defines were evaluated in
					    this run as that candidate (not evaluated again, no
					    budget spent) */
};

/* Why a policy has nothing more to propose (propose returned 0 candidates). */
struct ks_policy_stop {
	char reason[256];                /* "the search space is exhausted", "8 unusable replies" */
};

/* LLM usage, for the summary and --json. */
struct ks_policy_usage {
	long calls, failures, prompt_tokens, completion_tokens;
	long tokens_unknown;             /* calls whose transport reported no token counts (a
					    command, a person): the token sums leave them out */
	double cost_usd;
};

struct ks_policy_i {
	int version;                     /* KS_POLICY_VERSION */
	const char *name;                /* "builtin" */
	const char *summary;             /* one line for --help */
	int uses_model;                  /* asks a model: LLM usage is reported */
	/* optional: check the option combination before anything is written (KS_EINVAL with
	 * a message naming the option); NULL: nothing to check */
	int (*check)(const struct ks_run_opts *o, struct ks_error *e);
	/* set up for a run */
	int (*open)(void **state, const struct ks_policy_env *env, struct ks_error *e);
	/* up to max candidates in out; *n = 0 means nothing more to try, with why set */
	int (*propose)(void *state, struct ks_policy_cand *out, int max, int *n,
		       struct ks_policy_stop *why, struct ks_error *e);
	/* the outcome of one proposed candidate, in proposal order */
	int (*observe)(void *state, const struct ks_policy_cand *c,
		       const struct ks_policy_outcome *o, struct ks_error *e);
	/* optional: the world-model (or strategy) document stored once per round */
	int (*snapshot)(void *state, struct ks_buf *out, struct ks_error *e);
	/* optional: LLM usage so far */
	void (*usage)(void *state, struct ks_policy_usage *u);
	void (*free)(void *state);
};

/* An open policy; the wrappers below fill in the defaults of optional slots. */
struct ks_policy {
	const struct ks_policy_i *ops;
	void *state;
};

/* the registered policy by name, or NULL */
const struct ks_policy_i *ks_policy_find(const char *name);
/* 1 when the named policy asks a model (its usage is reported) */
int ks_policy_uses_model(const char *name);
/* "builtin, llm, cmd" */
const char *ks_policy_names(void);
/* find + check: KS_EINVAL for an unknown name (the known ones listed) or a bad option mix */
int ks_policy_check(const struct ks_run_opts *o, struct ks_error *e);
int ks_policy_open(const char *name, const struct ks_policy_env *env, struct ks_policy *p,
		   struct ks_error *e);
int ks_policy_propose(struct ks_policy *p, struct ks_policy_cand *out, int max, int *n,
		      struct ks_policy_stop *why, struct ks_error *e);
int ks_policy_observe(struct ks_policy *p, const struct ks_policy_cand *c,
		      const struct ks_policy_outcome *o, struct ks_error *e);
/* appends nothing when the policy keeps no document; fails with out's error when out
 * could not take the whole document (its cap), which is then not to be stored */
int ks_policy_snapshot(struct ks_policy *p, struct ks_buf *out, struct ks_error *e);
/* zeros when the policy uses no model */
void ks_policy_usage(struct ks_policy *p, struct ks_policy_usage *u);
void ks_policy_close(struct ks_policy *p);

/* The builtin policy over an explicit space (the llm policy tunes the knobs of a kernel
 * the model wrote this way): strategy by name, the templates' sources as candidates. */
struct ks_space;
struct ks_policy_builtin_cfg {
	const char *strategy;            /* wm, evolve, random, exhaustive */
	uint64_t seed;
	const char *root_title;          /* wm's root action */
	const char *kernel_summary;
	const char *title_prefix;        /* prepended to every title ("online softmax "), or NULL */
	const char *policy;              /* recorded policy name ("builtin", "llm") */
	long parent;                     /* parent of candidates without one, -1 none */
	int node;                        /* node recorded for every candidate (-1: the strategy's) */
	int skip_defaults;               /* never propose the templates' default configuration:
					    it is the kernel itself, measured as candidate parent
					    with the outcome below */
	int parent_passed, parent_status;
	double parent_score;
	int budget;                      /* the run's budget (0: unknown), for the strategy */
};
int ks_policy_builtin_new(const struct ks_space *space, const struct ks_policy_builtin_cfg *cfg,
			  struct ks_policy *p, struct ks_error *e);

extern const struct ks_policy_i ks_policy_builtin;
extern const struct ks_policy_i ks_policy_llm;
extern const struct ks_policy_i ks_policy_cmd;
extern const struct ks_policy_i ks_policy_files;

#endif
