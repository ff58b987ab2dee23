/* random: a seeded permutation of every feasible configuration, handed out in order. */
#include "search/strategy_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rnd {
	const struct ks_space *space;
	struct ks_ledger ledger;
	int *order; /* permutation of ledger slots */
	int next;
};

static int rnd_init(void **state, const struct ks_space *space,
		    const struct ks_strategy_config *cfg, struct ks_error *e)
{
	struct rnd *r = calloc(1, sizeof(*r));
	struct ks_prng g;
	int rc;
	if (!r)
		return ks_error_set(e, KS_ENOMEM, "random strategy");
	r->space = space;
	rc = ks_ledger_init(&r->ledger, space, e);
	if (rc) {
		free(r);
		return rc;
	}
	r->order = malloc(((size_t)r->ledger.total + 1) * sizeof(int));
	if (!r->order) {
		ks_ledger_release(&r->ledger);
		free(r);
		return ks_error_set(e, KS_ENOMEM, "random strategy");
	}
	for (int i = 0; i < r->ledger.total; i++)
		r->order[i] = i;
	ks_prng_seed(&g, cfg->seed);
	for (int i = r->ledger.total - 1; i > 0; i--) {
		int j = ks_prng_below(&g, i + 1), tmp = r->order[i];
		r->order[i] = r->order[j];
		r->order[j] = tmp;
	}
	*state = r;
	return 0;
}

static int rnd_propose(void *state, struct ks_proposal *out, int max, int *n, struct ks_error *e)
{
	struct rnd *r = state;
	while (*n < max && r->next < r->ledger.total) {
		int slot = r->order[r->next++], t = ks_ledger_template(&r->ledger, slot);
		int c = slot - r->ledger.offset[t], rc = ks_ledger_propose(&r->ledger, t, c, e);
		struct ks_proposal *p = &out[*n];
		if (rc)
			return rc;
		ks_proposal_fill(r->space, t, c, p);
		snprintf(p->title, sizeof(p->title), "random: %s", r->space->templates[t]->family);
		(*n)++;
	}
	return 0;
}

static int rnd_observe(void *state, const struct ks_proposal *p, const struct ks_outcome *o,
		       struct ks_error *e)
{
	struct rnd *r = state;
	return ks_ledger_observe(&r->ledger, p->template_index, p->config, o, e);
}

static void rnd_free(void *state)
{
	struct rnd *r = state;
	ks_ledger_release(&r->ledger);
	free(r->order);
	free(r);
}

const struct ks_strategy_ops ks_strategy_random = {
	.version = KS_STRATEGY_VERSION,
	.name = "random",
	.init = rnd_init,
	.propose = rnd_propose,
	.observe = rnd_observe,
	.free = rnd_free,
};
