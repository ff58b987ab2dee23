/* A candidate's code as the model reads it: its knob values made the source's own, and the
 * line that names it (llm_text.h, llm_impl.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/llm_impl.h"
#include "policy/llm_text.h"
#include "util/defines.h"

#define BAKE_MAX KS_DEFINES_MAX

struct knob_val {
	const char *name, *value;
	int defined; /* a #define line of the source took the value */
};

/* the pairs of defines ("-DNAME=VALUE -DNAME2=VALUE2") that give a value, into v (pointing
 * into d); the number read */
static int defines_read(struct ks_defines *d, const char *defines, struct knob_val *v)
{
	int n = 0;
	ks_defines_init(d);
	ks_defines_parse(d, defines, NULL); /* what parses; a store's defines always do */
	for (int i = 0; i < d->n; i++)
		if (d->value[i])
			v[n++] = (struct knob_val){.name = d->name[i], .value = d->value[i]};
	return n;
}

/* the knob whose value a "#define NAME ..." line (l, n bytes) sets, or NULL */
static struct knob_val *define_of(const char *l, size_t n, struct knob_val *v, int nv)
{
	const char *p = l + strspn(l, " \t");
	if (*p != '#' || n < 2 || l[n - 1] == '\\') /* a continued macro is left alone */
		return NULL;
	p += 1 + strspn(p + 1, " \t");
	if (strncmp(p, "define", 6) || !strchr(" \t", p[6]))
		return NULL;
	p += 6 + strspn(p + 6, " \t");
	for (int i = 0; i < nv; i++) {
		size_t k = strlen(v[i].name);
		if (!strncmp(p, v[i].name, k) && (p + k == l + n || strchr(" \t", p[k])))
			return &v[i];
	}
	return NULL;
}

/* line no (1-based) of text, its length in *n; NULL past the end */
static const char *line_at(const char *text, int no, size_t *n)
{
	const char *l = text;
	for (int i = 1; i < no && l; i++) {
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	if (l)
		*n = strcspn(l, "\n");
	return l;
}

/* Where the "default:" value of each knob of v sits in src's @ksearch block: for knob k,
 * the value's offset and length in pos[k][0..1] (-1 when the knob has none written). */
static void block_defaults(const char *src, struct knob_val *v, int nv, long pos[][2])
{
	for (int i = 0; i < nv; i++)
		pos[i][0] = -1;
	struct ks_template *t = NULL;
	struct ks_error e = {0};
	if (!strstr(src, "@ksearch") || ks_template_parse(src, strlen(src), "shown", &t, &e))
		return;
	for (int k = 0; k < t->nknobs; k++) {
		int i = 0;
		while (i < nv && strcmp(v[i].name, t->knobs[k].name))
			i++;
		if (i == nv)
			continue;
		/* the knob's lines: from its key to the next knob's (or the block's end) */
		int end = k + 1 < t->nknobs ? t->knobs[k + 1].line : t->knobs[k].line + 8;
		for (int no = t->knobs[k].line; no < end && pos[i][0] < 0; no++) {
			size_t n;
			const char *l = line_at(src, no, &n), *d;
			if (!l || memmem(l, n, "@end", 4))
				break;
			if (!(d = memmem(l, n, "default:", 8)))
				continue;
			d += 8 + strspn(d + 8, " \t");
			pos[i][0] = d - src;
			pos[i][1] = (long)strcspn(d, ",}\n");
			while (pos[i][1] > 0 && isspace((unsigned char)d[pos[i][1] - 1]))
				pos[i][1]--;
		}
	}
	ks_template_free(t);
}

void ks_llm_bake_knobs(const char *src, const char *defines, struct ks_buf *out)
{
	struct knob_val v[BAKE_MAX];
	struct ks_defines d;
	int nv = defines_read(&d, defines, v);
	if (!nv) {
		ks_defines_release(&d);
		ks_buf_adds(out, src);
		return;
	}
	long pos[BAKE_MAX][2];
	block_defaults(src, v, nv, pos);
	struct ks_buf body = KS_BUF_INIT;
	for (const char *l = src; *l;) {
		size_t n = strcspn(l, "\n");
		struct knob_val *k = define_of(l, n, v, nv);
		int at = -1;
		for (int i = 0; i < nv; i++)
			if (pos[i][0] >= l - src && pos[i][0] < l - src + (long)n)
				at = i;
		if (k) { /* "#define NAME <old>" keeps its spelling up to the name */
			const char *name = strstr(l, k->name);
			ks_buf_addf(&body, "%.*s %s", (int)(name + strlen(k->name) - l), l, k->value);
			k->defined = 1;
		} else if (at >= 0) {
			long off = pos[at][0] - (l - src);
			ks_buf_addf(&body, "%.*s%s%.*s", (int)off, l, v[at].value,
				    (int)(n - (size_t)off - (size_t)pos[at][1]), l + off + pos[at][1]);
		} else {
			ks_buf_add(&body, l, n);
		}
		l += n;
		if (*l == '\n')
			ks_buf_adds(&body, "\n"), l++;
	}
	/* a value the source never defines (it came only from -D): a guarded line on top */
	for (int i = 0; i < nv; i++)
		if (!v[i].defined)
			ks_buf_addf(out, "#ifndef %s\n#define %s %s\n#endif\n", v[i].name, v[i].name,
				    v[i].value);
	ks_buf_adds(out, ks_buf_str(&body));
	ks_buf_release(&body);
	ks_defines_release(&d);
}

int llm_candidate_code(struct lp *L, long id, struct ks_buf *out, struct ks_error *e)
{
	if (id < 0)
		return ks_buf_adds(out, ks_buf_str(&L->ctx.start));
	struct ks_store_candidate *c = NULL;
	int rc = ks_store_get_candidate(L->env.store, id, &c, e);
	if (rc)
		return rc;
	ks_llm_bake_knobs(c->source ? c->source : "", c->defines, out);
	ks_store_free(c);
	return ks_buf_adds(out, "");
}

/* "NAME=V NAME2=V2" from "-DNAME=V -DNAME2=V2" */
static void knob_list(const char *defines, struct ks_buf *out)
{
	struct knob_val v[BAKE_MAX];
	struct ks_defines d;
	int nv = defines_read(&d, defines, v);
	for (int i = 0; i < nv; i++)
		ks_buf_addf(out, "%s%s=%s", i ? " " : "", v[i].name, v[i].value);
	ks_defines_release(&d);
}

void llm_code_from(struct lp *L, long id, int shown, struct ks_buf *out)
{
	if (id < 0) {
		ks_buf_addf(out, "the starting kernel (%s)", L->ctx.start_what);
		return;
	}
	struct ks_store_candidate *c = NULL;
	struct ks_error e = {0};
	if (ks_store_get_candidate(L->env.store, id, &c, &e)) {
		ks_buf_addf(out, "candidate %ld", id);
		return;
	}
	char ref[64];
	ks_buf_addf(out, "candidate %ld", id);
	if (L->have_world && ks_world_node(&L->w, (int)c->node_id)) {
		ks_world_node_ref(&L->w, (int)c->node_id, ref, sizeof(ref));
		ks_buf_addf(out, " of node %s \"%s\"", ref, ks_world_node(&L->w, (int)c->node_id)->title);
	}
	if (c->has_result && c->status && !strcmp(c->status, "PASSED"))
		ks_buf_addf(out, ", %.3fx the baseline", c->speedup);
	else if (c->has_result && c->status)
		ks_buf_addf(out, ", %s", c->status);
	if (c->defines && c->defines[0]) {
		ks_buf_adds(out, "; the knob tuning of candidate ");
		ks_buf_addf(out, "%lld with ", (long long)c->parent_id);
		knob_list(c->defines, out);
		if (shown)
			ks_buf_adds(out, ", written into the code below (its #defines and @ksearch "
					 "defaults are the values it ran with)");
	}
	ks_store_free(c);
}

/* the search-phase speedup of candidate id (0 when it did not pass) */
static double cand_speedup(struct lp *L, long id)
{
	struct ks_store_candidate *c = NULL;
	double v = 0;
	if (ks_store_get_candidate(L->env.store, id, &c, NULL) == 0) {
		if (c->has_result && c->status && !strcmp(c->status, "PASSED"))
			v = c->speedup;
		ks_store_free(c);
	}
	return v;
}

/* "node 1's candidate 2, 74.777x (candidate 2 is faster than candidate 5 ...)": what other
 * measured against base, both named */
static void kernel_against(struct lp *L, int node, long other, long base, struct ks_buf *out)
{
	char ref[64];
	ks_world_node_ref(&L->w, node, ref, sizeof(ref));
	ks_buf_addf(out, "node %s's candidate %ld, %.3fx", ref, other, cand_speedup(L, other));
	struct ks_buf v = KS_BUF_INIT;
	llm_versus(L, other, base, &v);
	if (v.len)
		ks_buf_addf(out, " (%s)", ks_buf_str(&v));
	ks_buf_release(&v);
}

void llm_parent_why(struct lp *L, int id, struct ks_buf *out)
{
	const struct ks_world *w = &L->w;
	const struct ks_node *n = ks_world_node(w, id);
	int base = L->base_node;
	char ref[64], bref[64], pref[64];
	ks_world_node_ref(w, id, ref, sizeof(ref));
	ks_world_node_ref(w, base, bref, sizeof(bref));
	ks_world_node_ref(w, n->parent >= 0 ? n->parent : base, pref, sizeof(pref));
	ks_buf_adds(out, "This is ");
	llm_code_from(L, L->base_cand, 1, out);
	if (base == id)
		ks_buf_addf(out, ".\nWhy this kernel: node %s was worked on before; it goes on from "
				 "its own best kernel.",
			    ref);
	else if (L->base_cand < 0)
		ks_buf_addf(out, ".\nWhy this kernel: no node on node %s's path has a passing kernel "
				 "yet.",
			    ref);
	else if (base == n->parent)
		ks_buf_addf(out, ".\nWhy this kernel: node %s refines node %s, its parent in the "
				 "tree, so it builds on node %s's best kernel.",
			    ref, bref, bref);
	else
		ks_buf_addf(out, ".\nWhy this kernel: node %s's parent, node %s, has no passing "
				 "kernel yet; node %s is the nearest node above it with one.",
			    ref, pref, bref);
	int others = 0;
	for (int x = n->parent, steps = 0; x >= 0 && steps <= w->nnodes; steps++) {
		const struct ks_node *y = ks_world_node(w, x);
		if (!y)
			break;
		if (x != base && y->candidate >= 0) {
			ks_buf_adds(out, others++ ? "; " : " Also measured on its path: ");
			kernel_against(L, x, y->candidate, L->base_cand, out);
		}
		x = y->parent;
	}
	if (others)
		ks_buf_adds(out, ".");
	if (L->base_cand >= 0)
		ks_buf_adds(out, " To build on another node's kernel, place the action under that "
				 "node (update_node with \"parent_id\").");
	ks_buf_adds(out, "\n");
}

void llm_best_from(struct lp *L, struct ks_buf *out)
{
	llm_code_from(L, L->best_id, 1, out);
	struct ks_llm_times best, other;
	int v[KS_LLM_TIMES_MAX], close = 0;
	if (!llm_times(L, L->best_id, &best))
		return;
	for (int i = 0; i < L->ncycle; i++) {
		long c = L->cycle[i];
		if (c == L->best_id || !llm_times(L, c, &other))
			continue;
		int common = ks_llm_compare(&best, &other, v), faster = 0, slower = 0;
		for (int k = 0; k < best.n; k++) {
			faster += v[k] == 1;
			slower += v[k] == -1;
		}
		if (common && faster && !slower)
			continue; /* told apart: the best is faster beyond the spreads */
		ks_buf_adds(out, close++ ? "; " : ". Not told apart from it by the measurements: ");
		ks_buf_addf(out, "candidate %ld, %.3fx (", c, cand_speedup(L, c));
		llm_versus(L, c, L->best_id, out);
		ks_buf_adds(out, ")");
	}
}

/* the node candidate id is credited to, -1 when not known */
static int cand_node(struct lp *L, long id)
{
	struct ks_store_candidate *c = NULL;
	int node = -1;
	if (ks_store_get_candidate(L->env.store, id, &c, NULL) == 0) {
		node = (int)c->node_id;
		ks_store_free(c);
	}
	return ks_world_node(&L->w, node) ? node : -1;
}

/* the cycle moved to node `here` after its best kernel was credited to node bn: say so, and
 * what node here's own best measured against the cycle's */
static void best_elsewhere(struct lp *L, int bn, const char *here, struct ks_buf *out)
{
	char there[64];
	ks_world_node_ref(&L->w, bn, there, sizeof(there));
	ks_buf_addf(out, ". It was credited to node %s \"%s\", not to node %s, the action above: "
			 "the cycle moved to node %s when a later kernel's IMPLEMENTS line named it",
		    there, ks_world_node(&L->w, bn)->title, here, here);
	const struct ks_node *n = ks_world_node(&L->w, L->node);
	if (n && n->candidate >= 0 && n->candidate != L->best_id) {
		ks_buf_addf(out, "; node %s's own best is candidate %ld, %.3fx (", here, n->candidate,
			    n->score);
		llm_versus(L, n->candidate, L->best_id, out);
		ks_buf_adds(out, ")");
	}
	ks_buf_addf(out, ". Build node %s's idea on this kernel and say IMPLEMENTS: %s; a change "
			 "that only refines node %s's idea says IMPLEMENTS: %s.",
		    here, here, there, there);
}

/* why the cycle's best is the kernel to start from: the only one or the fastest of how many,
 * and, when the kernel the cycle started from scored higher, how the two compare (a real
 * model read "the fastest this cycle has measured" of one kernel slower than its parent) */
static void best_why(struct lp *L, struct ks_buf *out)
{
	if (L->ncycle <= 1)
		ks_buf_adds(out, "it is the only kernel this cycle has measured");
	else
		ks_buf_addf(out, "it is the fastest of the %d kernels this cycle has measured",
			    L->ncycle);
	double base = cand_speedup(L, L->base_cand);
	if (L->base_cand < 0 || L->base_cand == L->best_id || !(base > L->best_score))
		return;
	ks_buf_addf(out, ", though the kernel the cycle started from, candidate %ld, scored %.3fx "
			 "(",
		    L->base_cand, base);
	llm_versus(L, L->best_id, L->base_cand, out);
	ks_buf_adds(out, ")");
}

void llm_best_start(struct lp *L, struct ks_buf *out)
{
	if (L->best_id < 0)
		return;
	char here[64];
	int bn = cand_node(L, L->best_id);
	ks_world_node_ref(&L->w, L->node, here, sizeof(here));
	ks_buf_adds(out, "\nStart from this kernel: ");
	best_why(L, out);
	if (bn >= 0 && bn != L->node) {
		best_elsewhere(L, bn, here, out);
		return;
	}
	ks_buf_addf(out, ". It is node %s's own: a reply that stays within node %s's action "
			 "says IMPLEMENTS: %s.",
		    here, here, here);
}

int llm_cycle_best(struct lp *L, struct ks_buf *code, struct ks_buf *from, struct ks_error *e)
{
	if (L->best_id < 0) {
		ks_buf_adds(from, "No kernel of this cycle passed yet: the kernel it started from, ");
		llm_code_from(L, L->base_cand, 1, from);
		return ks_buf_adds(code, ks_buf_str(&L->base_code));
	}
	ks_buf_adds(from, "The cycle's best: ");
	llm_best_from(L, from);
	ks_buf_adds(from, ".");
	return llm_candidate_code(L, L->best_id, code, e);
}
