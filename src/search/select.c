/* Action selection (UCB-like priority, difficulty gate) and refinement bookkeeping. */
#include "search/world_impl.h"

#include <math.h>

static int total_visits(const struct ks_world *w)
{
	int t = 0;
	for (int i = 0; i < w->nnodes; i++)
		if (!w->nodes[i].deleted)
			t += w->nodes[i].visits;
	return t;
}

static double priority_t(const struct ks_world *w, const struct ks_node *n, int t)
{
	const struct ks_world_params *p = &w->params;
	double explore = p->explore * (1.0 - 0.5 * n->confidence) *
			 sqrt(log(1.0 + t) / (1.0 + n->visits));
	double fail = p->fail_penalty * n->failures / (n->attempts + 1.0);
	return n->rating / 10.0 + explore - fail;
}

double ks_world_priority(const struct ks_world *w, int id)
{
	const struct ks_node *n = ks_world_node(w, id);
	return n ? priority_t(w, n, total_visits(w)) : -INFINITY;
}

int ks_world_eligible(const struct ks_world *w, int id)
{
	const struct ks_node *n = ks_world_node(w, id);
	const struct ks_node *p;
	int step = w->params.difficulty_step > 0 ? w->params.difficulty_step : 1;
	if (!n)
		return 0;
	if (n->difficulty <= w->params.difficulty_base + w->records / step)
		return 1;
	p = ks_world_node(w, n->parent);
	if (!p)
		return 1;
	for (int i = 0; i < p->nchildren; i++) {
		const struct ks_node *s = ks_world_node(w, p->children[i]);
		if (s && s != n && s->difficulty < n->difficulty && s->status == KS_NODE_OPEN &&
		    s->visits == 0)
			return 0;
	}
	return 1;
}

int ks_world_select(const struct ks_world *w, int *id, struct ks_error *e)
{
	int t = total_visits(w);
	/* pass 0: eligible nodes only; pass 1: the gate would leave nothing, ignore it */
	for (int pass = 0; pass < 2; pass++) {
		int best = -1;
		double bp = -INFINITY;
		for (int i = 0; i < w->nnodes; i++) {
			const struct ks_node *n = &w->nodes[i];
			double pr;
			if (n->deleted || n->status != KS_NODE_OPEN || i == w->root)
				continue;
			if (pass == 0 && !ks_world_eligible(w, i))
				continue;
			pr = priority_t(w, n, t);
			if (best < 0 || pr > bp) {
				best = i;
				bp = pr;
			}
		}
		if (best >= 0) {
			*id = best;
			return 0;
		}
	}
	return ks_error_set(e, KS_ENOTFOUND, "no open action in the world model");
}

int ks_world_begin(struct ks_world *w, int id, struct ks_error *e)
{
	struct ks_node *n = ks_world_node(w, id);
	if (!n)
		return ks_error_set(e, KS_ENOTFOUND, "begin: no node %d", id);
	if (n->status == KS_NODE_CLOSED || n->status == KS_NODE_PRUNED)
		return ks_error_set(e, KS_EINVARIANT, "begin: node %d is %s", id,
				    ks_node_status_name(n->status));
	n->status = KS_NODE_ACTIVE;
	n->visits++;
	w->active_leaf = id;
	return 0;
}

int ks_world_base(const struct ks_world *w, int id)
{
	int best = w->root;
	double bs = -INFINITY;
	/* walking upwards with a strict comparison keeps the deepest node on ties */
	for (int steps = 0; id >= 0 && steps <= w->nnodes; steps++) {
		const struct ks_node *n = ks_world_node(w, id);
		if (!n)
			break;
		if (n->candidate >= 0 && n->score > bs) {
			best = id;
			bs = n->score;
		}
		id = n->parent;
	}
	return best;
}

int ks_world_record(struct ks_world *w, int id, long candidate, int passed, double score,
		    enum ks_refine *verdict, struct ks_error *e)
{
	struct ks_node *n = ks_world_node(w, id);
	enum ks_refine v = KS_REFINE_CONTINUE;
	if (!n)
		return ks_error_set(e, KS_ENOTFOUND, "record: no node %d", id);
	if (passed && (!(score > 0) || !isfinite(score)))
		return ks_error_set(e, KS_EINVAL, "record on node %d: score %g is not positive", id,
				    score);
	if (candidate < 0)
		return ks_error_set(e, KS_EINVAL, "record on node %d: candidate id %ld", id,
				    candidate);
	w->records++;
	w->active_leaf = id;
	/* a record without ks_world_begin() starts the session implicitly */
	if (n->status == KS_NODE_OPEN) {
		n->status = KS_NODE_ACTIVE;
		n->visits++;
	}
	n->attempts++;
	if (!passed) {
		n->failures++;
		n->consecutive_failures++;
		if (n->consecutive_failures >= w->params.debug_budget)
			v = KS_REFINE_DEBUG_OUT;
	} else {
		int first = n->candidate < 0;
		int base = n->parent >= 0 ? ks_world_base(w, n->parent) : -1;
		const struct ks_node *b = base >= 0 ? ks_world_node(w, base) : NULL;
		n->consecutive_failures = 0;
		if (first || score > n->score) {
			n->candidate = candidate;
			n->score = score;
			n->since_improvement = 0;
		} else {
			n->since_improvement++;
		}
		n->regression = b && b->candidate >= 0 && n->score < b->score;
		if (first && n->move && b && b->candidate >= 0) {
			int rc = ks_world_learn(w, n->move, score / b->score, id, e);
			if (rc)
				return rc;
			/* refetch: learning never reallocates nodes, but stay safe */
			n = ks_world_node(w, id);
		}
		if (n->since_improvement >= w->params.stagnation_window)
			v = KS_REFINE_STAGNATED;
	}
	if (v != KS_REFINE_CONTINUE) {
		n->status = KS_NODE_CLOSED;
		n->close_reason = v == KS_REFINE_STAGNATED ? "stagnated" : "debug budget spent";
	}
	if (verdict)
		*verdict = v;
	return 0;
}
