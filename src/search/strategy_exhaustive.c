/* exhaustive: every feasible configuration once, in the order the templates give them
 * (template by template, each one's configurations in its own enumeration order: the first
 * knob's values slowest).  For small spaces, where a model of the space buys nothing; it
 * warns at the start when the budget cannot cover the space, since the configurations past
 * the budget are then never tried whatever they are worth. */
#include "search/strategy_impl.h"

#include <stdio.h>
#include <stdlib.h>

#include "ksearch/log.h"

struct exh {
	struct ks_ledger ledger; /* first: ks_ledger_state_free frees the state */
	const struct ks_space *space;
	int next; /* next ledger slot, in order */
};

static int exh_init(void **state, const struct ks_space *space,
		    const struct ks_strategy_config *cfg, struct ks_error *e)
{
	struct exh *x = calloc(1, sizeof(*x));
	if (!x)
		return ks_error_set(e, KS_ENOMEM, "exhaustive strategy");
	x->space = space;
	int rc = ks_ledger_init(&x->ledger, space, e);
	if (rc) {
		free(x);
		return rc;
	}
	if (cfg->budget > 0 && cfg->budget < x->ledger.total)
		ks_warn("exhaustive: the space has %d feasible configurations but the budget is %d: "
			"only the first %d in template order are tried (raise --budget to %d, or use "
			"--strategy wm for a space this large)",
			x->ledger.total, cfg->budget, cfg->budget, x->ledger.total);
	*state = x;
	return 0;
}

static int exh_propose(void *state, struct ks_proposal *out, int max, int *n, struct ks_error *e)
{
	struct exh *x = state;
	while (*n < max && x->next < x->ledger.total) {
		int slot = x->next++, t = 0;
		while (t + 1 < x->space->ntemplates && slot >= x->ledger.offset[t + 1])
			t++;
		int c = slot - x->ledger.offset[t], rc = ks_ledger_propose(&x->ledger, t, c, e);
		if (rc)
			return rc;
		struct ks_proposal *p = &out[*n];
		ks_proposal_fill(x->space, t, c, p);
		snprintf(p->title, sizeof(p->title), "exhaustive %d/%d: %s", slot + 1,
			 x->ledger.total, x->space->templates[t]->family);
		(*n)++;
	}
	return 0;
}

static int exh_observe(void *state, const struct ks_proposal *p, const struct ks_outcome *o,
		       struct ks_error *e)
{
	struct exh *x = state;
	return ks_ledger_observe(&x->ledger, p->template_index, p->config, o, e);
}

const struct ks_strategy_ops ks_strategy_exhaustive = {
	.version = KS_STRATEGY_VERSION,
	.name = "exhaustive",
	.init = exh_init,
	.propose = exh_propose,
	.observe = exh_observe,
	.free = ks_ledger_state_free,
};
