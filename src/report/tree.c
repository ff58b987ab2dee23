/* The world model of the latest snapshot, in the K-Search document shape that
 * src/search/world_json.c writes:
 * {"kernel_summary", "open_questions", "decision_tree": {"root_id", "active_leaf_id",
 *  "nodes": [{"node_id", "parent_id", "action": {"title", ...}, "status", "visits",
 *  "result": {"candidate_id", "score"}, ...}]}}.
 * Every field may be missing; ids may be strings or integers; the older flat spellings
 * ("id", a top-level "candidate_id" and "score") are read too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report/report_impl.h"

#define RP_MAX_NODES 5000
#define RP_MAX_QUESTIONS 50

/* an id of any JSON scalar type as text ("" for null or missing) */
static void id_text(json_t *v, char *dst, size_t n)
{
	dst[0] = 0;
	if (json_is_string(v))
		snprintf(dst, n, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(dst, n, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(dst, n, "%g", json_real_value(v));
}

static double num(json_t *v)
{
	if (json_is_number(v))
		return json_number_value(v);
	if (json_is_string(v)) {
		char *end;
		double d = strtod(json_string_value(v), &end);
		if (end != json_string_value(v))
			return d;
	}
	return NAN;
}

static const char *str(json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* "memory_bandwidth=5, compute_hw_fit=8"; an impact is a value or {"score", "risk"};
 * a score of 0 without a risk says nothing and is left out */
static void impacts_text(json_t *imp, char *dst, size_t n)
{
	const char *key;
	json_t *v;
	size_t len = 0;
	dst[0] = 0;
	if (!json_is_object(imp))
		return;
	json_object_foreach(imp, key, v)
	{
		char val[64];
		if (json_is_object(v)) {
			json_t *sc = json_object_get(v, "score");
			const char *risk = str(json_object_get(v, "risk"));
			if (!json_is_number(sc) && !risk)
				continue;
			if (json_is_number(sc) && json_number_value(sc) == 0 && !risk)
				continue;
			if (json_is_number(sc))
				snprintf(val, sizeof(val), "%g%s%s", json_number_value(sc),
					 risk ? " risk " : "", risk ? risk : "");
			else
				snprintf(val, sizeof(val), "risk %s", risk);
		} else if (json_is_string(v))
			snprintf(val, sizeof(val), "%s", json_string_value(v));
		else if (json_is_number(v))
			snprintf(val, sizeof(val), "%g", json_number_value(v));
		else
			continue;
		int w = snprintf(dst + len, n - len, "%s%s=%s", len ? ", " : "", key, val);
		if (w < 0 || (size_t)w >= n - len) {
			dst[len] = 0;
			return;
		}
		len += (size_t)w;
	}
}

static int find_node(const struct rp_tree *t, const char *id)
{
	if (!id[0])
		return -1;
	for (int i = 0; i < t->nnodes; i++)
		if (!strcmp(t->nodes[i].id, id))
			return i;
	return -1;
}

static void mark_up(struct rp_tree *t, int i, int *nshown)
{
	for (int hops = 0; i >= 0 && hops <= t->nnodes; i = t->nodes[i].parent_index, hops++)
		if (!t->nodes[i].shown) {
			t->nodes[i].shown = 1;
			++*nshown;
		}
}

/* unshown nodes from i up to its first shown ancestor */
static int cost_up(const struct rp_tree *t, int i)
{
	int n = 0;
	for (int hops = 0; i >= 0 && hops <= t->nnodes && !t->nodes[i].shown;
	     i = t->nodes[i].parent_index, hops++)
		n++;
	return n;
}

static const struct rp_tree *sort_tree; /* qsort has no context argument in C11 */

static int cmp_visits(const void *a, const void *b)
{
	const struct rp_node *x = &sort_tree->nodes[*(const int *)a];
	const struct rp_node *y = &sort_tree->nodes[*(const int *)b];
	if (x->visits != y->visits)
		return x->visits > y->visits ? -1 : 1;
	if (x->attempts != y->attempts)
		return x->attempts > y->attempts ? -1 : 1;
	double rx = isfinite(x->rating) ? x->rating : -1, ry = isfinite(y->rating) ? y->rating : -1;
	if (rx != ry)
		return rx > ry ? -1 : 1;
	return *(const int *)a - *(const int *)b;
}

/* Choose what a large tree shows: the root, the path to the best, the active leaf, then the
 * most visited nodes (with their ancestors, so every shown node hangs where it belongs)
 * until max nodes; the rest are counted under their parents. */
static void tree_fold(struct rp_tree *t, int max)
{
	int nshown = 0;
	for (int i = 0; i < t->nnodes; i++) {
		t->nodes[i].shown = t->nnodes <= max;
		t->nodes[i].subtree = 0;
	}
	for (int i = 0; i < t->nnodes; i++)
		for (int a = i, hops = 0; a >= 0 && hops <= t->nnodes;
		     a = t->nodes[a].parent_index, hops++)
			t->nodes[a].subtree++;
	if (t->nnodes <= max)
		return;
	int *order = malloc(sizeof(int) * (size_t)t->nnodes);
	if (!order) {
		for (int i = 0; i < t->nnodes; i++)
			t->nodes[i].shown = 1;
		return;
	}
	if (t->root >= 0)
		mark_up(t, t->root, &nshown);
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].on_best_path || t->nodes[i].is_active)
			mark_up(t, i, &nshown);
	for (int i = 0; i < t->nnodes; i++)
		order[i] = i;
	sort_tree = t;
	qsort(order, (size_t)t->nnodes, sizeof(int), cmp_visits);
	sort_tree = NULL;
	for (int k = 0; k < t->nnodes && nshown < max; k++) {
		int i = order[k];
		if (!t->nodes[i].shown && nshown + cost_up(t, i) <= max)
			mark_up(t, i, &nshown);
	}
	free(order);
	t->nshown = nshown;
}

/* the document's summary, its open questions (the first RP_MAX_QUESTIONS strings) and the
 * strategy that wrote it */
static void tree_read_header(struct rp_tree *t, json_t *doc)
{
	t->kernel_summary = str(json_object_get(doc, "kernel_summary"));
	json_t *qs = json_object_get(doc, "open_questions");
	if (json_is_array(qs) && json_array_size(qs)) {
		size_t nq = json_array_size(qs);
		if (nq > RP_MAX_QUESTIONS)
			nq = RP_MAX_QUESTIONS;
		t->open_questions = calloc(nq, sizeof(*t->open_questions));
		for (size_t i = 0; t->open_questions && i < nq; i++) {
			const char *q = str(json_array_get(qs, i));
			if (q)
				t->open_questions[t->nquestions++] = q;
		}
	}
	t->strategy = str(json_object_get(doc, "strategy"));
}

/* one node's fields, in either spelling; links are made later */
static void node_read(struct rp_node *n, json_t *jn)
{
	id_text(json_object_get(jn, "parent_id"), n->parent, sizeof(n->parent));
	json_t *act = json_object_get(jn, "action");
	n->title = str(json_object_get(act, "title"));
	if (!n->title)
		n->title = str(act); /* an action given as plain text */
	n->description = str(json_object_get(act, "description"));
	n->status = str(json_object_get(jn, "status"));
	n->rating = num(json_object_get(jn, "overall_rating_0_to_10"));
	n->confidence = num(json_object_get(jn, "confidence_0_to_1"));
	n->difficulty = num(json_object_get(jn, "difficulty_1_to_5"));
	double a = num(json_object_get(jn, "attempts")), f = num(json_object_get(jn, "failures"));
	n->attempts = isfinite(a) ? (long)a : -1;
	n->failures = isfinite(f) ? (long)f : -1;
	double v = num(json_object_get(jn, "visits"));
	n->visits = isfinite(v) ? (long)v : -1;
	json_t *res = json_object_get(jn, "result");
	json_t *src = json_is_object(res) ? res : jn;
	double cid = num(json_object_get(src, "candidate_id"));
	n->candidate_id = isfinite(cid) && cid > 0 ? (int64_t)cid : 0;
	n->score = num(json_object_get(src, "score"));
	impacts_text(json_object_get(jn, "impacts"), n->impacts, sizeof(n->impacts));
	n->first_child = n->next_sibling = n->parent_index = -1;
}

/* the first RP_MAX_NODES entries of nodes that are objects with a new id; 0, or -1 with
 * t->error set when there is no room for them */
static int tree_read_nodes(struct rp_tree *t, json_t *nodes)
{
	size_t nn = json_array_size(nodes);
	if (nn > RP_MAX_NODES) {
		snprintf(t->error, sizeof(t->error), "tree cut to its first %d of %zu nodes",
			 RP_MAX_NODES, nn);
		nn = RP_MAX_NODES;
	}
	t->nodes = calloc(nn ? nn : 1, sizeof(*t->nodes));
	if (!t->nodes) {
		snprintf(t->error, sizeof(t->error), "out of memory for %zu nodes", nn);
		return -1;
	}
	for (size_t i = 0; i < nn; i++) {
		json_t *jn = json_array_get(nodes, i);
		if (!json_is_object(jn))
			continue;
		struct rp_node *n = &t->nodes[t->nnodes];
		json_t *jid = json_object_get(jn, "node_id");
		id_text(jid ? jid : json_object_get(jn, "id"), n->id, sizeof(n->id));
		if (!n->id[0] || find_node(t, n->id) >= 0)
			continue; /* no id or a duplicate: cannot be placed */
		node_read(n, jn);
		t->nnodes++;
	}
	return 0;
}

/* Link children in document order; a parent that is missing or would make a cycle leaves
 * the node a root.  0, or -1 with t->error set. */
static int tree_link(struct rp_tree *t)
{
	int *last_child = malloc(sizeof(int) * (size_t)(t->nnodes ? t->nnodes : 1));
	if (!last_child) {
		snprintf(t->error, sizeof(t->error), "out of memory");
		return -1;
	}
	for (int i = 0; i < t->nnodes; i++)
		last_child[i] = -1;
	for (int i = 0; i < t->nnodes; i++) {
		int p = find_node(t, t->nodes[i].parent);
		for (int a = p, hops = 0; a >= 0 && hops <= t->nnodes; a = t->nodes[a].parent_index, hops++)
			if (a == i) {
				p = -1;
				break;
			}
		t->nodes[i].parent_index = p;
	}
	for (int i = 0; i < t->nnodes; i++) {
		int p = t->nodes[i].parent_index;
		if (p < 0)
			continue;
		if (last_child[p] < 0)
			t->nodes[p].first_child = i;
		else
			t->nodes[last_child[p]].next_sibling = i;
		last_child[p] = i;
	}
	free(last_child);
	return 0;
}

/* the root the document names (else the first parentless node) and its active leaf */
static void tree_mark_root(struct rp_tree *t, json_t *dt)
{
	char id[64];
	id_text(json_object_get(dt, "root_id"), id, sizeof(id));
	t->root = find_node(t, id);
	if (t->root >= 0 && t->nodes[t->root].parent_index >= 0)
		t->root = -1; /* a "root" with a parent: take the first parentless node */
	if (t->root < 0)
		for (int i = 0; i < t->nnodes && t->root < 0; i++)
			if (t->nodes[i].parent_index < 0)
				t->root = i;
	id_text(json_object_get(dt, "active_leaf_id"), id, sizeof(id));
	int act = find_node(t, id);
	if (act >= 0)
		t->nodes[act].is_active = 1;
}

/* the best path: from the node holding the run's best candidate (else the node the
 * candidate names) up to its root */
static void tree_mark_best(struct rp_tree *t, const struct rp_run *r)
{
	int64_t best_id = r->best >= 0 ? r->cands[r->best].c->id : 0;
	int bn = -1;
	for (int i = 0; best_id && i < t->nnodes && bn < 0; i++)
		if (t->nodes[i].candidate_id == best_id)
			bn = i;
	if (bn < 0 && r->best >= 0 && r->cands[r->best].c->node_id >= 0) {
		char id[64];
		snprintf(id, sizeof(id), "%lld", (long long)r->cands[r->best].c->node_id);
		bn = find_node(t, id);
	}
	for (int a = bn, hops = 0; a >= 0 && hops <= t->nnodes; a = t->nodes[a].parent_index, hops++)
		t->nodes[a].on_best_path = 1;
}

void rp_tree_parse(struct rp_tree *t, const char *text, const struct rp_run *r)
{
	json_error_t jerr;
	json_t *doc = json_loads(text ? text : "", 0, &jerr);
	if (!json_is_object(doc)) {
		snprintf(t->error, sizeof(t->error), "snapshot is not a JSON object (%s)",
			 doc ? "other value" : jerr.text);
		json_decref(doc);
		return;
	}
	t->doc = doc;
	tree_read_header(t, doc);
	json_t *dt = json_object_get(doc, "decision_tree");
	json_t *nodes = json_object_get(dt, "nodes");
	if (!dt) { /* a strategy's own state (anneal's temperature), not a world model */
		t->no_tree = 1;
		return;
	}
	if (!json_is_array(nodes)) {
		snprintf(t->error, sizeof(t->error), "snapshot has no decision_tree.nodes list");
		return;
	}
	if (tree_read_nodes(t, nodes) || tree_link(t))
		return;
	tree_mark_root(t, dt);
	tree_mark_best(t, r);
	t->nshown = t->nnodes;
	tree_fold(t, r->opts.tree_nodes > 0 ? r->opts.tree_nodes : KS_REPORT_TREE_NODES);
}

void rp_tree_release(struct rp_tree *t)
{
	json_decref((json_t *)t->doc);
	free(t->nodes);
	free(t->open_questions);
	t->doc = NULL;
	t->nodes = NULL;
	t->open_questions = NULL;
	t->nnodes = t->nquestions = 0;
}
