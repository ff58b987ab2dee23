/* Search strategies over the builtin-policy space.
 *
 * The space is a list of knob templates, each with its feasible configurations.  A strategy
 * proposes configurations to evaluate and learns from the outcomes; budget accounting is
 * the caller's (it simply stops asking).  All strategies share one interface:
 *
 *   wm      the world model: families are depth-1 actions (priors from the template
 *           annotations), knob moves are refinement children of measured nodes (priors from
 *           the knob impacts), selection + refinement + learning of move effects (world.h)
 *   evolve  OpenEvolve / MAP-Elites style baseline: islands, elites per feature cell,
 *           one- or two-knob mutations, crossover, migration
 *   random  uniform over feasible configurations without repeats
 *   exhaustive  every feasible configuration once, in template order (small spaces)
 *
 * Driving it (the search loop):
 *
 *   ks_strategy_new("wm", &space, &cfg, &s, &e);
 *   while (budget left) {
 *       ks_strategy_propose(s, props, slots_free, &n, &e);  // n < slots_free: exhausted
 *       for each props[i]: write/compile/evaluate knobs via ks_template_defines(), then
 *           struct ks_outcome o = {.candidate = id, .passed = ok, .score = speedup};
 *           ks_strategy_observe(s, &props[i], &o, &e);        // any order, any time later
 *       ks_strategy_snapshot(s, &json, &e);                   // store once per round
 *   }
 *   ks_strategy_free(s);
 *
 * Proposals never repeat (in flight or evaluated) within one strategy object.  Same seed,
 * same space and the same sequence of propose/observe calls with the same outcomes give the
 * same proposals.  Resume: create the strategy with the run's seed and drive it again,
 * answering every proposal whose configuration is already in the run store from the store
 * (observe without evaluating, no budget spent); the first proposal not in the store is
 * where the run continues.  Failed candidates are reported with passed = 0 (status is data):
 * wm counts them against the node (failure penalty, debug budget) and never expands them. */
#ifndef KSEARCH_STRATEGY_H
#define KSEARCH_STRATEGY_H

#include <stdint.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "ksearch/template.h"
#include "ksearch/world.h"

#define KS_STRATEGY_VERSION 1

/* the builtin-policy search space; the caller owns everything and keeps it alive */
struct ks_space {
	int ntemplates;
	struct ks_template *const *templates;   /* loaded templates */
	const struct ks_config_set *feasible;   /* feasible configurations, one set per template */
};

struct ks_proposal {
	int template_index;                /* into space->templates */
	int config;                        /* into space->feasible[template_index] */
	int knobs[KS_TEMPLATE_MAX_KNOBS];  /* value index per knob (the configuration) */
	long parent_candidate;             /* candidate it builds on, -1 none */
	int node;                          /* world node id (wm), -1 for other strategies */
	char title[160];                   /* action title: "family: tiled", "BLOCK_M:+1", ... */
	char move[64];                     /* move key of a knob move, "" otherwise */
};

/* what the caller measured for a proposal */
struct ks_outcome {
	long candidate; /* id the caller gave the evaluated candidate (>= 0) */
	int passed;     /* 1: correct and timed */
	double score;   /* geometric-mean speedup over the baseline (> 0) when passed */
	int status;     /* the caller's evaluation status code, kept for the record */
};

struct ks_strategy_config {
	uint64_t seed;                         /* same seed, same proposals */
	const char *root_title;                /* wm: root action ("naive baseline") */
	const char *kernel_summary;            /* wm: the world's kernel_summary */
	const struct ks_world_params *params;  /* wm: NULL for the strategy's defaults */
	int budget;                            /* candidates the run may evaluate, 0: unknown
						  (exhaustive warns when the space is larger) */
	double family_share;                   /* wm: evaluations a trailing template family
						  is owed per evaluation of the leading one,
						  0 for the default (1/3), negative for none */
};

/* One implementation per strategy; optional slots may be NULL. */
struct ks_strategy_ops {
	int version; /* KS_STRATEGY_VERSION */
	const char *name;
	int (*init)(void **state, const struct ks_space *space, const struct ks_strategy_config *cfg,
		    struct ks_error *e);
	/* fill up to max proposals, *n = how many; fewer than max only when every feasible
	 * configuration has been proposed (0: nothing left to try) */
	int (*propose)(void *state, struct ks_proposal *out, int max, int *n, struct ks_error *e);
	int (*observe)(void *state, const struct ks_proposal *p, const struct ks_outcome *o,
		       struct ks_error *e);
	/* optional: the world model, if the strategy keeps one */
	const struct ks_world *(*world)(const void *state);
	/* optional: a JSON snapshot of the strategy's state appended to out */
	int (*snapshot)(const void *state, struct ks_buf *out, struct ks_error *e);
	void (*free)(void *state);
};

struct ks_strategy {
	const struct ks_strategy_ops *ops;
	void *state;
	const struct ks_space *space;
	long proposed; /* proposals handed out */
	long observed; /* outcomes reported */
};

extern const struct ks_strategy_ops ks_strategy_wm;
extern const struct ks_strategy_ops ks_strategy_evolve;
extern const struct ks_strategy_ops ks_strategy_random;
extern const struct ks_strategy_ops ks_strategy_exhaustive;
extern const struct ks_strategy_ops ks_strategy_anneal;

/* by name ("wm", "evolve", "random", "exhaustive", "anneal"), NULL if unknown */
const struct ks_strategy_ops *ks_strategy_find(const char *name);
/* NULL-terminated list of every strategy */
const struct ks_strategy_ops *const *ks_strategy_list(void);
/* "unknown strategy 'X' (wm, evolve, random, exhaustive); did you mean 'Y'?" into e */
int ks_strategy_unknown(const char *name, struct ks_error *e);
int ks_strategy_new(const char *name, const struct ks_space *space,
		    const struct ks_strategy_config *cfg, struct ks_strategy **out,
		    struct ks_error *e);
int ks_strategy_propose(struct ks_strategy *s, struct ks_proposal *out, int max, int *n,
			struct ks_error *e);
int ks_strategy_observe(struct ks_strategy *s, const struct ks_proposal *p,
			const struct ks_outcome *o, struct ks_error *e);
/* the world model (wm) or NULL */
const struct ks_world *ks_strategy_world(const struct ks_strategy *s);
/* JSON snapshot: the world document for wm, a summary object otherwise */
int ks_strategy_snapshot(const struct ks_strategy *s, struct ks_buf *out, struct ks_error *e);
void ks_strategy_free(struct ks_strategy *s);

#endif
