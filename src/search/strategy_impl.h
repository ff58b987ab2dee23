/* Private helpers shared by the strategies. */
#ifndef KS_SEARCH_STRATEGY_IMPL_H
#define KS_SEARCH_STRATEGY_IMPL_H

#include <stdint.h>

#include "ksearch/strategy.h"

/* SplitMix64: small, seedable, identical everywhere */
struct ks_prng {
	uint64_t s;
};

void ks_prng_seed(struct ks_prng *r, uint64_t seed);
uint64_t ks_prng_next(struct ks_prng *r);
/* uniform in [0, n), n > 0 */
int ks_prng_below(struct ks_prng *r, int n);
/* uniform in [0, 1) */
double ks_prng_unit(struct ks_prng *r);

/* per-configuration bookkeeping over the whole space */
enum ks_seen { KS_SEEN_NO, KS_SEEN_PENDING, KS_SEEN_DONE };

struct ks_ledger {
	const struct ks_space *space;
	int total;          /* configurations in the space */
	int *offset;        /* first slot of each template */
	unsigned char *seen; /* enum ks_seen per slot */
	double *score;      /* measured score per slot, 0 when failed or not measured */
	long *candidate;    /* candidate id per slot, -1 */
	int done;           /* slots evaluated */
	int pending;        /* slots in flight */
};

int ks_ledger_init(struct ks_ledger *l, const struct ks_space *space, struct ks_error *e);
void ks_ledger_release(struct ks_ledger *l);
/* the free slot of a strategy whose state is plain fields after its ledger, its first
 * member: the ledger released, the state freed */
void ks_ledger_state_free(void *state);
static inline int ks_ledger_slot(const struct ks_ledger *l, int t, int c)
{
	return l->offset[t] + c;
}
/* the template a slot belongs to */
int ks_ledger_template(const struct ks_ledger *l, int slot);
/* a slot neither proposed nor measured, uniformly at random; -1 when none is left */
int ks_ledger_random_unseen(const struct ks_ledger *l, struct ks_prng *r);
/* mark a proposal handed out / its outcome (checks the slot was pending) */
int ks_ledger_propose(struct ks_ledger *l, int t, int c, struct ks_error *e);
int ks_ledger_observe(struct ks_ledger *l, int t, int c, const struct ks_outcome *o,
		      struct ks_error *e);
/* fill the configuration fields of a proposal */
void ks_proposal_fill(const struct ks_space *space, int t, int c, struct ks_proposal *p);

#endif
