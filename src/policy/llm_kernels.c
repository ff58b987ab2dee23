/* What each kernel of the run is, as the tree needs it: the node it was credited to, the
 * kernel it started from, its reply's CHANGED line.
 *
 * A node's title is the idea it was made for, and its first kernel implements it; later
 * kernels credited to it (debug, improve) change that kernel, and one may drop a part of
 * the title.  In a real model's matmul run, node 8 "... prefetch of next A sliver and C
 * tile" measured candidate 9, whose reply said "the next-sliver prefetch [is] dropped";
 * the edit round after it kept the title, and every later tree showed the title beside
 * candidate 9 as if it prefetched.  The model does not reliably retitle a node, so the tree
 * says it: a node whose measured kernel is not its first names the first and what the
 * replies of the kernels since said they changed (llm_kernel_text). */
#include <stdlib.h>
#include <string.h>

#include "policy/llm_impl.h"

#define KERNEL_CHAIN_MAX 4 /* CHANGED lines shown per node: the latest ones */

void llm_kernel_add(struct lp *L, const struct ks_policy_cand *c,
		    const struct ks_policy_outcome *o, int node, long of)
{
	struct kernel_note *v = realloc(L->kernels, (size_t)(L->nkernels + 1) * sizeof(*v));
	if (!v)
		return;
	L->kernels = v;
	v[L->nkernels++] = (struct kernel_note){
		.id = o->candidate, .parent = c->parent, .of = of, .node = node,
		.changed = of < 0 && L->changed.len ? strdup(ks_buf_str(&L->changed)) : NULL};
}

void llm_kernels_free(struct lp *L)
{
	for (int i = 0; i < L->nkernels; i++)
		free(L->kernels[i].changed);
	free(L->kernels);
	L->kernels = NULL;
	L->nkernels = 0;
}

static const struct kernel_note *kernel_find(const struct lp *L, long id)
{
	for (int i = L->nkernels - 1; i >= 0; i--)
		if (L->kernels[i].id == id)
			return &L->kernels[i];
	return NULL;
}

/* the model's kernel behind k: k, or the kernel a knob tuning tuned */
static const struct kernel_note *kernel_written(const struct lp *L, const struct kernel_note *k)
{
	return k && k->of >= 0 ? kernel_find(L, k->of) : k;
}

/* the first kernel the model wrote for node: the one that implemented its title */
static const struct kernel_note *node_first(const struct lp *L, int node)
{
	for (int i = 0; i < L->nkernels; i++)
		if (L->kernels[i].node == node && L->kernels[i].of < 0)
			return &L->kernels[i];
	return NULL;
}

void llm_kernel_text(void *ctx, int node, long candidate, struct ks_buf *out)
{
	const struct lp *L = ctx;
	const struct kernel_note *k = kernel_written(L, kernel_find(L, candidate));
	const struct kernel_note *first = node_first(L, node);
	if (!k || !first || k == first || k->node != node)
		return; /* measured before a resume, or the node's first kernel */
	const struct kernel_note *chain[KERNEL_CHAIN_MAX];
	int n = 0, more = 0;
	for (const struct kernel_note *x = k; x && x != first && x->node == node;
	     x = kernel_written(L, kernel_find(L, x->parent))) {
		if (n < KERNEL_CHAIN_MAX)
			chain[n++] = x;
		else
			more++;
	}
	ks_buf_addf(out, "candidate %ld is not the kernel that first implemented this node's "
			 "title (candidate %ld), so the title may name what it no longer does; ",
		    candidate, first->id);
	if (k->id != candidate)
		ks_buf_addf(out, "it is the knob tuning of candidate %ld; ", k->id);
	ks_buf_adds(out, "what the replies since said they changed:");
	for (int i = n - 1; i >= 0; i--)
		ks_buf_addf(out, " candidate %ld: %.300s%s", chain[i]->id,
			    chain[i]->changed ? chain[i]->changed : "(no CHANGED line)",
			    i ? ";" : "");
	if (more)
		ks_buf_addf(out, " (and %d earlier kernels of the node)", more);
}
