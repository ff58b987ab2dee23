/* Strategy registry, the one wrapper that checks calls and fills optional slots, and the
 * helpers every strategy shares (PRNG, ledger of proposed/evaluated configurations). */
#include "search/strategy_impl.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/suggest.h"

static const struct ks_strategy_ops *const registry[] = {
	&ks_strategy_wm,         &ks_strategy_evolve, &ks_strategy_random,
	&ks_strategy_exhaustive, &ks_strategy_anneal, NULL};

const struct ks_strategy_ops *const *ks_strategy_list(void)
{
	return registry;
}

int ks_strategy_unknown(const char *name, struct ks_error *e)
{
	const char *names[8];
	char list[128] = "", near_txt[64] = "";
	int n = 0;
	for (int i = 0; registry[i] && n < 8; i++) {
		names[n] = registry[i]->name;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", n ? ", " : "",
			 names[n]);
		n++;
	}
	const char *near = name ? ks_suggest(name, names, n) : NULL;
	if (near)
		snprintf(near_txt, sizeof(near_txt), "; did you mean '%s'?", near);
	return ks_error_set(e, KS_ENOTFOUND, "unknown strategy '%s' (%s)%s", name ? name : "",
			    list, near_txt);
}

void ks_prng_seed(struct ks_prng *r, uint64_t seed)
{
	r->s = seed ^ 0x6a09e667f3bcc909ULL;
}

uint64_t ks_prng_next(struct ks_prng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int ks_prng_below(struct ks_prng *r, int n)
{
	return n > 0 ? (int)(ks_prng_next(r) % (uint64_t)n) : 0;
}

double ks_prng_unit(struct ks_prng *r)
{
	return (double)(ks_prng_next(r) >> 11) / 9007199254740992.0;
}

int ks_ledger_init(struct ks_ledger *l, const struct ks_space *space, struct ks_error *e)
{
	memset(l, 0, sizeof(*l));
	l->space = space;
	if (space->ntemplates < 1)
		return ks_error_set(e, KS_EINVAL, "search space has no templates");
	l->offset = calloc((size_t)space->ntemplates + 1, sizeof(int));
	if (!l->offset)
		return ks_error_set(e, KS_ENOMEM, "ledger");
	for (int t = 0; t < space->ntemplates; t++) {
		if (space->feasible[t].nknobs != space->templates[t]->nknobs) {
			ks_ledger_release(l);
			return ks_error_set(e, KS_EINVAL, "template %d: configuration set does not match",
					    t);
		}
		l->offset[t] = l->total;
		if (l->total > 100000000 - space->feasible[t].n) {
			ks_ledger_release(l);
			return ks_error_set(e, KS_ELIMIT, "search space too large");
		}
		l->total += space->feasible[t].n;
	}
	l->offset[space->ntemplates] = l->total;
	l->seen = calloc((size_t)l->total + 1, 1);
	l->score = calloc((size_t)l->total + 1, sizeof(double));
	l->candidate = malloc(((size_t)l->total + 1) * sizeof(long));
	if (!l->seen || !l->score || !l->candidate) {
		ks_ledger_release(l);
		return ks_error_set(e, KS_ENOMEM, "ledger");
	}
	for (int i = 0; i < l->total; i++)
		l->candidate[i] = -1;
	return 0;
}

void ks_ledger_release(struct ks_ledger *l)
{
	free(l->offset);
	free(l->seen);
	free(l->score);
	free(l->candidate);
	memset(l, 0, sizeof(*l));
}

void ks_ledger_state_free(void *state)
{
	ks_ledger_release(state);
	free(state);
}

static int slot_check(const struct ks_ledger *l, int t, int c, struct ks_error *e)
{
	if (t < 0 || t >= l->space->ntemplates || c < 0 || c >= l->space->feasible[t].n)
		return ks_error_set(e, KS_EINVAL, "configuration (%d, %d) is not in the space", t, c);
	return 0;
}

int ks_ledger_template(const struct ks_ledger *l, int slot)
{
	int t = 0;
	while (t + 1 < l->space->ntemplates && slot >= l->offset[t + 1])
		t++;
	return t;
}

int ks_ledger_random_unseen(const struct ks_ledger *l, struct ks_prng *r)
{
	int left = l->total - l->done - l->pending, k;
	if (left <= 0)
		return -1;
	k = ks_prng_below(r, left);
	for (int slot = 0; slot < l->total; slot++)
		if (l->seen[slot] == KS_SEEN_NO && k-- == 0)
			return slot;
	return -1;
}

int ks_ledger_propose(struct ks_ledger *l, int t, int c, struct ks_error *e)
{
	int rc = slot_check(l, t, c, e), s;
	if (rc)
		return rc;
	s = ks_ledger_slot(l, t, c);
	if (l->seen[s] != KS_SEEN_NO)
		return ks_error_set(e, KS_EINVARIANT, "configuration (%d, %d) proposed twice", t, c);
	l->seen[s] = KS_SEEN_PENDING;
	l->pending++;
	return 0;
}

int ks_ledger_observe(struct ks_ledger *l, int t, int c, const struct ks_outcome *o,
		      struct ks_error *e)
{
	int rc = slot_check(l, t, c, e), s;
	if (rc)
		return rc;
	s = ks_ledger_slot(l, t, c);
	if (l->seen[s] != KS_SEEN_PENDING)
		return ks_error_set(e, KS_EINVARIANT,
				    "outcome for configuration (%d, %d) that is not in flight", t, c);
	l->seen[s] = KS_SEEN_DONE;
	l->pending--;
	l->done++;
	l->score[s] = o->passed ? o->score : 0.0;
	l->candidate[s] = o->candidate;
	return 0;
}

void ks_proposal_fill(const struct ks_space *space, int t, int c, struct ks_proposal *p)
{
	const struct ks_config_set *fs = &space->feasible[t];
	memset(p, 0, sizeof(*p));
	p->template_index = t;
	p->config = c;
	memcpy(p->knobs, fs->cfg + (size_t)c * fs->nknobs, (size_t)fs->nknobs * sizeof(int));
	p->parent_candidate = -1;
	p->node = -1;
}

const struct ks_strategy_ops *ks_strategy_find(const char *name)
{
	for (int i = 0; registry[i]; i++)
		if (!strcmp(registry[i]->name, name))
			return registry[i];
	return NULL;
}

int ks_strategy_new(const char *name, const struct ks_space *space,
		    const struct ks_strategy_config *cfg, struct ks_strategy **out,
		    struct ks_error *e)
{
	const struct ks_strategy_ops *ops = ks_strategy_find(name);
	struct ks_strategy *s;
	struct ks_strategy_config def = {0};
	int rc;
	*out = NULL;
	if (!ops)
		return ks_strategy_unknown(name, e);
	if (ops->version != KS_STRATEGY_VERSION)
		return ks_error_set(e, KS_EINVAL, "strategy '%s' has interface version %d", name,
				    ops->version);
	if (!space || space->ntemplates < 1)
		return ks_error_set(e, KS_EINVAL, "strategy '%s': empty search space", name);
	s = calloc(1, sizeof(*s));
	if (!s)
		return ks_error_set(e, KS_ENOMEM, "strategy");
	s->ops = ops;
	s->space = space;
	rc = ops->init(&s->state, space, cfg ? cfg : &def, e);
	if (rc) {
		free(s);
		return ks_error_wrap(e, "strategy '%s'", name);
	}
	*out = s;
	return 0;
}

int ks_strategy_propose(struct ks_strategy *s, struct ks_proposal *out, int max, int *n,
			struct ks_error *e)
{
	int rc;
	*n = 0;
	if (max <= 0)
		return 0;
	rc = s->ops->propose(s->state, out, max, n, e);
	if (!rc)
		s->proposed += *n;
	return rc;
}

int ks_strategy_observe(struct ks_strategy *s, const struct ks_proposal *p,
			const struct ks_outcome *o, struct ks_error *e)
{
	int rc;
	if (o->candidate < 0)
		return ks_error_set(e, KS_EINVAL, "observe: candidate id %ld", o->candidate);
	if (o->passed && (!(o->score > 0) || !isfinite(o->score)))
		return ks_error_set(e, KS_EINVAL, "observe: score %g of a passed candidate",
				    o->score);
	rc = s->ops->observe(s->state, p, o, e);
	if (!rc)
		s->observed++;
	return rc;
}

const struct ks_world *ks_strategy_world(const struct ks_strategy *s)
{
	return s->ops->world ? s->ops->world(s->state) : NULL;
}

int ks_strategy_snapshot(const struct ks_strategy *s, struct ks_buf *out, struct ks_error *e)
{
	int rc;
	if (s->ops->snapshot)
		return s->ops->snapshot(s->state, out, e);
	rc = ks_buf_addf(out, "{\"strategy\": \"%s\", \"proposed\": %ld, \"observed\": %ld}",
			 s->ops->name, s->proposed, s->observed);
	return rc ? ks_error_set(e, rc, "snapshot of strategy '%s'", s->ops->name) : 0;
}

void ks_strategy_free(struct ks_strategy *s)
{
	if (!s)
		return;
	if (s->ops && s->state)
		s->ops->free(s->state);
	free(s);
}
