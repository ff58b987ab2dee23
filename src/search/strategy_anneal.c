/* anneal: simulated annealing over the knob space, the classical autotuner's strategy
 * (Kernel Tuner's simulated_annealing, and its basis in Kirkpatrick et al. 1983), kept as a
 * yardstick for wm and as an option.
 *
 * One current position.  A step picks a random neighbour: most often one knob moved one value
 * up or down, one time in five a knob set to any other value or, where the space has several
 * templates, a random configuration of another template.  A better neighbour is always taken;
 * a worse one with probability exp(ln(new / current) / T), T falling geometrically from 1 to
 * 0.001 over the run's budget (the whole space when the budget is unknown).  Configurations
 * already measured are stepped over at no cost, as a tuner with a cache does; a failed one is
 * never moved to.  100 steps without an unmeasured neighbour restart from a random
 * unmeasured configuration.  Proposals in one batch are neighbours of the same position. */
#include "search/strategy_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_START 1.0
#define T_MIN 0.001
#define HAMMING_ODDS 0.2 /* a step that may jump far */
#define STUCK_STEPS 100  /* steps over measured configurations before a restart */

struct anneal {
	struct ks_ledger ledger; /* first: ks_ledger_state_free frees the state */
	const struct ks_space *space;
	struct ks_prng rng;
	int pos;          /* current slot, -1 before the first outcome */
	double pos_score; /* its score, 0 when it failed */
	int horizon;      /* evaluations over which T falls to T_MIN */
	int evaluated;
};

static double temperature(const struct anneal *a)
{
	double k = a->horizon > 0 ? (double)a->evaluated / a->horizon : 1.0;
	return T_START * pow(T_MIN / T_START, k > 1 ? 1 : k);
}

/* accept a move from the current position to a configuration scoring `score` (0: failed)? */
static int accept(struct anneal *a, double score)
{
	if (a->pos < 0 || a->pos_score <= 0)
		return 1; /* nothing valid yet: any outcome is a start */
	if (score <= 0)
		return 0;
	if (score >= a->pos_score)
		return 1;
	return ks_prng_unit(&a->rng) < exp(log(score / a->pos_score) / temperature(a));
}

/* a random feasible neighbour of the current position, -1 when the draw was infeasible */
static int neighbour(struct anneal *a)
{
	const struct ks_space *sp = a->space;
	int t = ks_ledger_template(&a->ledger, a->pos), c = a->pos - a->ledger.offset[t];
	const struct ks_template *tp = sp->templates[t];
	const struct ks_config_set *fs = &sp->feasible[t];
	int cfg[KS_TEMPLATE_MAX_KNOBS], far = ks_prng_unit(&a->rng) < HAMMING_ODDS;
	int k = ks_prng_below(&a->rng, tp->nknobs + (far && sp->ntemplates > 1));
	if (k == tp->nknobs) { /* another template, anywhere in it */
		int u = ks_prng_below(&a->rng, sp->ntemplates - 1);
		u += u >= t;
		return sp->feasible[u].n ? a->ledger.offset[u] +
						   ks_prng_below(&a->rng, sp->feasible[u].n)
					 : -1;
	}
	if (tp->nknobs == 0)
		return -1;
	memcpy(cfg, fs->cfg + (size_t)c * fs->nknobs, (size_t)tp->nknobs * sizeof(int));
	if (far) {
		int v = ks_prng_below(&a->rng, tp->knobs[k].nvalues - 1);
		cfg[k] = v + (v >= cfg[k]);
	} else {
		cfg[k] += ks_prng_below(&a->rng, 2) ? 1 : -1;
	}
	if (cfg[k] < 0 || cfg[k] >= tp->knobs[k].nvalues)
		return -1;
	c = ks_config_set_find(fs, tp, cfg);
	return c < 0 ? -1 : a->ledger.offset[t] + c;
}

/* walk from the current position over measured configurations until an unmeasured neighbour
 * turns up (or restart): the slot to propose, -1 when the space is spent */
static int next_slot(struct anneal *a)
{
	if (a->pos < 0)
		return ks_ledger_random_unseen(&a->ledger, &a->rng);
	for (int step = 0; step < STUCK_STEPS; step++) {
		int s = neighbour(a);
		if (s < 0)
			continue;
		if (a->ledger.seen[s] == KS_SEEN_NO)
			return s;
		if (a->ledger.seen[s] == KS_SEEN_DONE && s != a->pos && accept(a, a->ledger.score[s])) {
			a->pos = s;
			a->pos_score = a->ledger.score[s];
		}
	}
	return ks_ledger_random_unseen(&a->ledger, &a->rng);
}

/* "anneal: VEC 8->16" (the knobs that differ from the current position) with its move key
 * ("VEC:+1"), "anneal: start, online-softmax" or "anneal: jump to multipass-simd" */
static void title_of(const struct anneal *a, int slot, struct ks_proposal *p)
{
	char *out = p->title;
	size_t n = sizeof(p->title), mlen = 0;
	int t = ks_ledger_template(&a->ledger, slot);
	const struct ks_template *tp = a->space->templates[t];
	int from_t = a->pos >= 0 ? ks_ledger_template(&a->ledger, a->pos) : -1;
	if (from_t != t) {
		snprintf(out, n, "anneal: %s %s", a->pos < 0 ? "start," : "jump to", tp->family);
		return;
	}
	const struct ks_config_set *fs = &a->space->feasible[t];
	const int *to = fs->cfg + (size_t)(slot - a->ledger.offset[t]) * fs->nknobs;
	const int *from = fs->cfg + (size_t)(a->pos - a->ledger.offset[t]) * fs->nknobs;
	size_t len = (size_t)snprintf(out, n, "anneal:");
	for (int k = 0; k < tp->nknobs && len < n; k++) {
		if (to[k] == from[k])
			continue;
		len += (size_t)snprintf(out + len, n - len, " %s %s->%s", tp->knobs[k].name,
					tp->knobs[k].values[from[k]], tp->knobs[k].values[to[k]]);
		if (mlen < sizeof(p->move))
			mlen += (size_t)snprintf(p->move + mlen, sizeof(p->move) - mlen, "%s%s:%+d",
						 mlen ? "," : "", tp->knobs[k].name, to[k] - from[k]);
	}
}

static int anneal_init(void **state, const struct ks_space *space,
		       const struct ks_strategy_config *cfg, struct ks_error *e)
{
	struct anneal *a = calloc(1, sizeof(*a));
	int rc;
	if (!a)
		return ks_error_set(e, KS_ENOMEM, "anneal strategy");
	a->space = space;
	a->pos = -1;
	ks_prng_seed(&a->rng, cfg->seed);
	if ((rc = ks_ledger_init(&a->ledger, space, e))) {
		free(a);
		return rc;
	}
	a->horizon = cfg->budget > 0 && cfg->budget < a->ledger.total ? cfg->budget
								      : a->ledger.total;
	*state = a;
	return 0;
}

static int anneal_propose(void *state, struct ks_proposal *out, int max, int *n,
			  struct ks_error *e)
{
	struct anneal *a = state;
	while (*n < max) {
		int slot = next_slot(a), t, c, rc;
		struct ks_proposal *p = &out[*n];
		if (slot < 0)
			break;
		t = ks_ledger_template(&a->ledger, slot);
		c = slot - a->ledger.offset[t];
		if ((rc = ks_ledger_propose(&a->ledger, t, c, e)))
			return rc;
		ks_proposal_fill(a->space, t, c, p);
		title_of(a, slot, p);
		/* a step names its knobs' changes from the current position: its base */
		if (a->pos >= 0 && ks_ledger_template(&a->ledger, a->pos) == t)
			p->parent_candidate = a->ledger.candidate[a->pos];
		(*n)++;
	}
	return 0;
}

static int anneal_observe(void *state, const struct ks_proposal *p, const struct ks_outcome *o,
			  struct ks_error *e)
{
	struct anneal *a = state;
	double score = o->passed ? o->score : 0;
	int rc = ks_ledger_observe(&a->ledger, p->template_index, p->config, o, e);
	if (rc)
		return rc;
	if (accept(a, score)) {
		a->pos = ks_ledger_slot(&a->ledger, p->template_index, p->config);
		a->pos_score = score;
	}
	a->evaluated++;
	return 0;
}

const struct ks_strategy_ops ks_strategy_anneal = {
	.version = KS_STRATEGY_VERSION,
	.name = "anneal",
	.init = anneal_init,
	.propose = anneal_propose,
	.observe = anneal_observe,
	.free = ks_ledger_state_free,
};
