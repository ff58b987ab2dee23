/* evolve: the OpenEvolve / MAP-Elites style baseline.
 *
 * Islands evolve separately.  Each keeps a MAP-Elites archive whose cells are (template,
 * value of its two most influential knobs) and its best member.  A child comes from the
 * island's best (exploitation) or a random elite (exploration), optionally crossed with
 * another elite of the same template, then mutated on one or two knobs (a step or a random
 * value).  Every MIGRATE outcomes each island sends its best to the next island. */
#include "search/strategy_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NISLANDS 4
#define SEEDS_PER_ISLAND 2
#define MIGRATE 8
#define TRIES 32

struct island {
	int *elite; /* per cell: ledger slot, -1 empty */
	int best;   /* ledger slot, -1 none */
	int members; /* proposals made for it */
};

struct evo {
	const struct ks_space *space;
	struct ks_ledger ledger;
	struct ks_prng rng;
	int ncells;
	int *cell_offset;   /* first cell of each template */
	int (*feature)[2];  /* per template: the two descriptor knobs (-1 none) */
	signed char *owner; /* per slot: island that proposed it */
	struct island isl[NISLANDS];
	int next_island;
	int observed;
};

static const int *slot_cfg(const struct evo *v, int slot, int *t)
{
	const struct ks_config_set *fs;
	*t = ks_ledger_template(&v->ledger, slot);
	fs = &v->space->feasible[*t];
	return fs->cfg + (size_t)(slot - v->ledger.offset[*t]) * fs->nknobs;
}

static int cell_of(const struct evo *v, int slot)
{
	int t;
	const int *cfg = slot_cfg(v, slot, &t);
	const struct ks_template *tp = v->space->templates[t];
	int a = v->feature[t][0], b = v->feature[t][1];
	int cell = a >= 0 ? cfg[a] : 0;
	if (b >= 0)
		cell = cell * tp->knobs[b].nvalues + cfg[b];
	return v->cell_offset[t] + cell;
}

static double knob_weight(const struct ks_knob *kb)
{
	double w = 0;
	for (int k = 0; k < KS_IMPACT_COUNT; k++)
		w += kb->impacts[k];
	return w;
}

static int evo_init(void **state, const struct ks_space *space,
		    const struct ks_strategy_config *cfg, struct ks_error *e)
{
	struct evo *v = calloc(1, sizeof(*v));
	int rc;
	if (!v)
		return ks_error_set(e, KS_ENOMEM, "evolve strategy");
	v->space = space;
	ks_prng_seed(&v->rng, cfg->seed);
	rc = ks_ledger_init(&v->ledger, space, e);
	if (rc) {
		free(v);
		return rc;
	}
	v->cell_offset = calloc((size_t)space->ntemplates, sizeof(int));
	v->feature = calloc((size_t)space->ntemplates, sizeof(*v->feature));
	v->owner = calloc((size_t)v->ledger.total + 1, 1);
	if (!v->cell_offset || !v->feature || !v->owner)
		goto nomem;
	for (int t = 0; t < space->ntemplates; t++) {
		const struct ks_template *tp = space->templates[t];
		int a = -1, b = -1, cells = 1;
		/* the two knobs with the largest impact annotations (earlier on ties) */
		for (int k = 0; k < tp->nknobs; k++) {
			if (tp->knobs[k].nvalues < 2)
				continue;
			if (a < 0 || knob_weight(&tp->knobs[k]) > knob_weight(&tp->knobs[a])) {
				b = a;
				a = k;
			} else if (b < 0 || knob_weight(&tp->knobs[k]) > knob_weight(&tp->knobs[b])) {
				b = k;
			}
		}
		v->feature[t][0] = a;
		v->feature[t][1] = b;
		if (a >= 0)
			cells *= tp->knobs[a].nvalues;
		if (b >= 0)
			cells *= tp->knobs[b].nvalues;
		v->cell_offset[t] = v->ncells;
		v->ncells += cells;
	}
	for (int i = 0; i < NISLANDS; i++) {
		v->isl[i].elite = malloc((size_t)v->ncells * sizeof(int));
		if (!v->isl[i].elite)
			goto nomem;
		for (int c = 0; c < v->ncells; c++)
			v->isl[i].elite[c] = -1;
		v->isl[i].best = -1;
	}
	*state = v;
	return 0;
nomem:
	ks_ledger_release(&v->ledger);
	free(v->cell_offset);
	free(v->feature);
	free(v->owner);
	for (int i = 0; i < NISLANDS; i++)
		free(v->isl[i].elite);
	free(v);
	return ks_error_set(e, KS_ENOMEM, "evolve strategy");
}

/* a random filled elite cell of island i, or -1 */
static int random_elite(struct evo *v, const struct island *is)
{
	int filled = 0, k;
	for (int c = 0; c < v->ncells; c++)
		filled += is->elite[c] >= 0;
	if (!filled)
		return -1;
	k = ks_prng_below(&v->rng, filled);
	for (int c = 0; c < v->ncells; c++)
		if (is->elite[c] >= 0 && k-- == 0)
			return is->elite[c];
	return -1;
}

static int child_of(struct evo *v, const struct island *is)
{
	int parent = ks_prng_unit(&v->rng) < 0.6 ? is->best : random_elite(v, is);
	int t, t2, cfg[KS_TEMPLATE_MAX_KNOBS];
	const int *pc;
	const struct ks_template *tp;
	if (parent < 0)
		parent = is->best;
	if (parent < 0)
		return -1;
	pc = slot_cfg(v, parent, &t);
	tp = v->space->templates[t];
	for (int attempt = 0; attempt < TRIES; attempt++) {
		int nmut = ks_prng_unit(&v->rng) < 0.7 ? 1 : 2, c;
		memcpy(cfg, pc, (size_t)tp->nknobs * sizeof(int));
		if (ks_prng_unit(&v->rng) < 0.3) {
			int mate = random_elite(v, is);
			if (mate >= 0) {
				const int *mc = slot_cfg(v, mate, &t2);
				if (t2 == t)
					for (int k = 0; k < tp->nknobs; k++)
						if (ks_prng_unit(&v->rng) < 0.5)
							cfg[k] = mc[k];
			}
		}
		for (int i = 0; i < nmut; i++) {
			int k = ks_prng_below(&v->rng, tp->nknobs), nv = tp->knobs[k].nvalues;
			if (nv < 2)
				continue;
			if (ks_prng_unit(&v->rng) < 0.75) {
				int d = ks_prng_unit(&v->rng) < 0.5 ? -1 : 1;
				if (cfg[k] + d < 0 || cfg[k] + d >= nv)
					d = -d;
				cfg[k] += d;
			} else {
				cfg[k] = ks_prng_below(&v->rng, nv);
			}
		}
		c = ks_config_set_find(&v->space->feasible[t], tp, cfg);
		if (c >= 0 && v->ledger.seen[ks_ledger_slot(&v->ledger, t, c)] == KS_SEEN_NO)
			return ks_ledger_slot(&v->ledger, t, c);
	}
	return -1;
}

static int evo_propose(void *state, struct ks_proposal *out, int max, int *n, struct ks_error *e)
{
	struct evo *v = state;
	while (*n < max && v->ledger.done + v->ledger.pending < v->ledger.total) {
		int i = v->next_island, slot = -1, t, rc;
		struct island *is = &v->isl[i];
		const char *how = "random";
		v->next_island = (v->next_island + 1) % NISLANDS;
		if (is->members >= SEEDS_PER_ISLAND && is->best >= 0 && ks_prng_unit(&v->rng) >= 0.1) {
			slot = child_of(v, is);
			how = "mutate";
		}
		if (slot < 0) {
			slot = ks_ledger_random_unseen(&v->ledger, &v->rng);
			how = "random";
		}
		if (slot < 0)
			break;
		t = ks_ledger_template(&v->ledger, slot);
		if ((rc = ks_ledger_propose(&v->ledger, t, slot - v->ledger.offset[t], e)))
			return rc;
		v->owner[slot] = (signed char)i;
		is->members++;
		ks_proposal_fill(v->space, t, slot - v->ledger.offset[t], &out[*n]);
		if (is->best >= 0 && !strcmp(how, "mutate"))
			out[*n].parent_candidate = v->ledger.candidate[is->best];
		snprintf(out[*n].title, sizeof(out[*n].title), "island %d %s: %s", i, how,
			 v->space->templates[t]->family);
		(*n)++;
	}
	return 0;
}

static void archive(struct evo *v, struct island *is, int slot)
{
	int c = cell_of(v, slot);
	double s = v->ledger.score[slot];
	if (s <= 0)
		return;
	if (is->elite[c] < 0 || s > v->ledger.score[is->elite[c]])
		is->elite[c] = slot;
	if (is->best < 0 || s > v->ledger.score[is->best])
		is->best = slot;
}

static int evo_observe(void *state, const struct ks_proposal *p, const struct ks_outcome *o,
		       struct ks_error *e)
{
	struct evo *v = state;
	int rc = ks_ledger_observe(&v->ledger, p->template_index, p->config, o, e), slot;
	if (rc)
		return rc;
	slot = ks_ledger_slot(&v->ledger, p->template_index, p->config);
	archive(v, &v->isl[v->owner[slot]], slot);
	if (++v->observed % MIGRATE == 0) {
		int sent[NISLANDS];
		for (int i = 0; i < NISLANDS; i++)
			sent[i] = v->isl[i].best;
		for (int i = 0; i < NISLANDS; i++)
			if (sent[i] >= 0)
				archive(v, &v->isl[(i + 1) % NISLANDS], sent[i]);
	}
	return 0;
}

static int evo_snapshot(const void *state, struct ks_buf *out, struct ks_error *e)
{
	const struct evo *v = state;
	int rc = ks_buf_addf(out, "{\"strategy\": \"evolve\", \"evaluated\": %d, \"islands\": [",
			     v->ledger.done);
	for (int i = 0; !rc && i < NISLANDS; i++) {
		int filled = 0;
		for (int c = 0; c < v->ncells; c++)
			filled += v->isl[i].elite[c] >= 0;
		rc = ks_buf_addf(out, "%s{\"elites\": %d, \"best_score\": %.17g}", i ? ", " : "",
				 filled, v->isl[i].best >= 0 ? v->ledger.score[v->isl[i].best] : 0.0);
	}
	if (!rc)
		rc = ks_buf_adds(out, "]}");
	return rc ? ks_error_set(e, rc, "evolve snapshot") : 0;
}

static void evo_free(void *state)
{
	struct evo *v = state;
	ks_ledger_release(&v->ledger);
	free(v->cell_offset);
	free(v->feature);
	free(v->owner);
	for (int i = 0; i < NISLANDS; i++)
		free(v->isl[i].elite);
	free(v);
}

const struct ks_strategy_ops ks_strategy_evolve = {
	.version = KS_STRATEGY_VERSION,
	.name = "evolve",
	.init = evo_init,
	.propose = evo_propose,
	.observe = evo_observe,
	.snapshot = evo_snapshot,
	.free = evo_free,
};
