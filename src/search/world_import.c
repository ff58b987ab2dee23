/* World model <- a JSON document: ours (ks_world_export) or the original K-Search's (string
 * ids, nodes in any order, a dummy root, parents missing from the document). */
#include "search/world_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* close reasons are static text; import maps a document's text back onto this table */
static const char *const close_reasons[] = {"stagnated", "debug budget spent", "split",
					    "pruned by edit", "explored", "duplicate",
					    "infeasible", "exhausted", NULL};

static const char *close_reason_intern(const char *s)
{
	if (!s)
		return NULL;
	for (int i = 0; close_reasons[i]; i++)
		if (!strcmp(close_reasons[i], s))
			return close_reasons[i];
	return "imported";
}

/* one node of the document before it gets its arena id */
struct entry {
	json_t *o;
	int num;         /* id written as a number, -1 none */
	const char *ext; /* id written as a string, NULL none */
	int parent;      /* entry index of the parent, -1 for the root */
	int depth;       /* -1 not known yet, -2 being walked */
	int id;          /* arena id */
	int linked;
};

struct ext_key {
	const char *ext;
	int idx;
};

struct doc {
	struct entry *v;
	int n;
	int root;            /* entry index */
	int *by_num;         /* KS_WORLD_MAX_NODES slots: entry of a numeric id, -1 none */
	struct ext_key *ext; /* string ids, sorted */
	int next;
	struct ks_buf *notes;
};

static int ext_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ext_key *)a)->ext, ((const struct ext_key *)b)->ext);
}

static void entry_name(const struct doc *d, int i, char *buf, size_t n)
{
	const struct entry *x = &d->v[i];
	if (x->ext)
		snprintf(buf, n, "'%s'", x->ext);
	else if (x->num >= 0)
		snprintf(buf, n, "%d", x->num);
	else
		snprintf(buf, n, "nodes[%d]", i);
}

/* entry index a JSON id names, -1 none */
static int doc_find(const struct doc *d, json_t *ref)
{
	int num;
	const char *ext;
	struct ext_key key, *hit;
	if (ks_world_id_parse(ref, &num, &ext, NULL))
		return -1;
	if (!ext)
		return d->by_num[num];
	key.ext = ext;
	hit = bsearch(&key, d->ext, (size_t)d->next, sizeof(key), ext_cmp);
	return hit ? hit->idx : -1;
}

static int doc_index(struct doc *d, json_t *nodes, struct ks_error *e)
{
	size_t i;
	json_t *o;
	d->n = (int)json_array_size(nodes);
	d->v = calloc((size_t)d->n, sizeof(*d->v));
	d->by_num = malloc(KS_WORLD_MAX_NODES * sizeof(int));
	d->ext = calloc((size_t)d->n, sizeof(*d->ext));
	if (!d->v || !d->by_num || !d->ext)
		return ks_error_set(e, KS_ENOMEM, "index %d nodes", d->n);
	for (int k = 0; k < KS_WORLD_MAX_NODES; k++)
		d->by_num[k] = -1;
	json_array_foreach(nodes, i, o)
	{
		struct entry *x = &d->v[i];
		json_t *idv = json_object_get(o, "node_id"), *xv = json_object_get(o, "ext_id");
		x->o = o;
		x->num = -1;
		x->depth = -1;
		if (!json_is_object(o))
			return ks_error_set(e, KS_EPARSE, "nodes[%zu] must be an object", i);
		if (idv && !json_is_null(idv) && ks_world_id_parse(idv, &x->num, &x->ext, e))
			return ks_error_wrap(e, "nodes[%zu]: 'node_id'", i);
		/* our export keeps the model's id beside the integer one */
		if (x->num >= 0 && json_is_string(xv)) {
			int xn;
			const char *xe;
			if (ks_world_id_parse(xv, &xn, &xe, e))
				return ks_error_wrap(e, "nodes[%zu]: 'ext_id'", i);
			x->ext = xe;
		}
		if (x->num >= 0) {
			if (d->by_num[x->num] >= 0)
				return ks_error_set(e, KS_EINVARIANT, "node id %d appears twice", x->num);
			d->by_num[x->num] = (int)i;
		}
		if (x->ext)
			d->ext[d->next++] = (struct ext_key){.ext = x->ext, .idx = (int)i};
	}
	qsort(d->ext, (size_t)d->next, sizeof(*d->ext), ext_cmp);
	for (int k = 1; k < d->next; k++)
		if (!strcmp(d->ext[k - 1].ext, d->ext[k].ext))
			return ks_error_set(e, KS_EINVARIANT, "node id '%s' appears twice",
					    d->ext[k].ext);
	return 0;
}

static int has_parent(json_t *o)
{
	json_t *p = json_object_get(o, "parent_id");
	return p && !json_is_null(p);
}

static int doc_root(struct doc *d, json_t *tree, struct ks_error *e)
{
	json_t *rv = json_object_get(tree, "root_id");
	char ref[96];
	d->root = -1;
	if (rv && !json_is_null(rv)) {
		int num;
		const char *ext;
		if (ks_world_id_parse(rv, &num, &ext, e))
			return ks_error_wrap(e, "'decision_tree.root_id'");
		d->root = doc_find(d, rv);
		ks_world_ref_text(rv, ref, sizeof(ref));
		if (d->root < 0)
			return ks_error_set(e, KS_EINVARIANT, "root_id %s is not a node", ref);
		return 0;
	}
	for (int i = 0; i < d->n && d->root < 0; i++)
		if (!has_parent(d->v[i].o))
			d->root = i;
	if (d->root < 0)
		return ks_error_set(e, KS_EINVARIANT,
				    "no root: 'decision_tree.root_id' is missing and every node has "
				    "a parent");
	return 0;
}

static int doc_parents(struct doc *d, struct ks_error *e)
{
	char name[96], ref[96], root[96];
	entry_name(d, d->root, root, sizeof(root));
	for (int i = 0; i < d->n; i++) {
		struct entry *x = &d->v[i];
		json_t *pv = json_object_get(x->o, "parent_id");
		int num;
		const char *ext;
		entry_name(d, i, name, sizeof(name));
		x->parent = -1;
		if (i == d->root) {
			if (has_parent(x->o))
				return ks_error_set(e, KS_EINVARIANT, "the root %s has a parent", name);
			continue;
		}
		if (!has_parent(x->o))
			return ks_error_set(e, KS_EINVARIANT,
					    "node %s has no parent: exactly the root (%s) has none",
					    name, root);
		if (ks_world_id_parse(pv, &num, &ext, e))
			return ks_error_wrap(e, "node %s: 'parent_id'", name);
		x->parent = doc_find(d, pv);
		if (x->parent < 0) {
			ks_world_ref_text(pv, ref, sizeof(ref));
			ks_world_note(d->notes,
				      "node %s: parent %s is not in the document; attached to the "
				      "root %s",
				      name, ref, root);
			x->parent = d->root;
		}
	}
	return 0;
}

/* depth of every node; a parent chain that never reaches the root is a cycle */
static int doc_depths(struct doc *d, struct ks_error *e)
{
	int *stack = malloc((size_t)d->n * sizeof(int));
	char name[96];
	if (!stack)
		return ks_error_set(e, KS_ENOMEM, "walk %d nodes", d->n);
	d->v[d->root].depth = 0;
	for (int i = 0; i < d->n; i++) {
		int len = 0, j = i;
		while (d->v[j].depth == -1) {
			d->v[j].depth = -2;
			stack[len++] = j;
			j = d->v[j].parent;
		}
		if (d->v[j].depth == -2) {
			free(stack);
			entry_name(d, i, name, sizeof(name));
			return ks_error_set(e, KS_EINVARIANT, "node %s is on a cycle or detached",
					    name);
		}
		while (len--) {
			d->v[stack[len]].depth = d->v[j].depth + 1;
			j = stack[len];
		}
	}
	free(stack);
	return 0;
}

struct order {
	int depth, idx;
};

static int order_cmp(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* numeric ids are kept; the others get the lowest free ids, the root first, then by depth,
 * so parents come before their children */
static int doc_ids(struct doc *d, struct ks_error *e)
{
	struct order *ord = malloc((size_t)d->n * sizeof(*ord));
	int k = 0, next = 0;
	if (!ord)
		return ks_error_set(e, KS_ENOMEM, "number %d nodes", d->n);
	for (int i = 0; i < d->n; i++) {
		d->v[i].id = d->v[i].num;
		if (d->v[i].num < 0)
			ord[k++] = (struct order){.depth = d->v[i].depth, .idx = i};
	}
	qsort(ord, (size_t)k, sizeof(*ord), order_cmp);
	for (int j = 0; j < k; j++) {
		while (next < KS_WORLD_MAX_NODES && d->by_num[next] >= 0)
			next++;
		if (next >= KS_WORLD_MAX_NODES) {
			free(ord);
			return ks_error_set(e, KS_ELIMIT, "more than %d nodes", KS_WORLD_MAX_NODES);
		}
		d->v[ord[j].idx].id = next++;
	}
	free(ord);
	return 0;
}

static int num_field(json_t *o, const char *key, double lo, double hi, double def, double *out,
		     const char *name, struct ks_error *e)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v)) {
		*out = def;
		return 0;
	}
	if (!json_is_number(v))
		return ks_error_set(e, KS_EPARSE, "node %s: '%s' must be a number", name, key);
	*out = json_number_value(v);
	if (!(*out >= lo && *out <= hi))
		return ks_error_set(e, KS_EINVARIANT, "node %s: '%s' = %g outside [%g, %g]", name,
				    key, *out, lo, hi);
	return 0;
}

static int int_field(json_t *o, const char *key, int *out, const char *name, struct ks_error *e)
{
	double d = 0;
	int rc = num_field(o, key, 0, 1e9, 0, &d, name, e);
	if (!rc && d != floor(d))
		rc = ks_error_set(e, KS_EPARSE, "node %s: '%s' must be an integer", name, key);
	*out = (int)d;
	return rc;
}

/* what only our own export carries: the system's counters, status and result */
static int system_fields(struct ks_node *n, json_t *o, const char *name, struct ks_error *e)
{
	json_t *v;
	int rc;
	if ((rc = num_field(o, "learned_shift", -100, 100, 0, &n->learned_shift, name, e)) ||
	    (rc = num_field(o, "prior_rating", -100, 100, n->rating - n->learned_shift,
			    &n->prior_rating, name, e)) ||
	    (rc = num_field(o, "prior_confidence", 0, 1, n->confidence, &n->prior_confidence,
			    name, e)) ||
	    (rc = int_field(o, "attempts", &n->attempts, name, e)) ||
	    (rc = int_field(o, "failures", &n->failures, name, e)) ||
	    (rc = int_field(o, "visits", &n->visits, name, e)) ||
	    (rc = int_field(o, "consecutive_failures", &n->consecutive_failures, name, e)) ||
	    (rc = int_field(o, "since_improvement", &n->since_improvement, name, e)))
		return rc;
	v = json_object_get(o, "status");
	if (v && !json_is_null(v)) {
		const char *s = json_is_string(v) ? json_string_value(v) : "";
		int found = -1;
		for (int st = KS_NODE_OPEN; st <= KS_NODE_PRUNED; st++)
			if (!strcmp(s, ks_node_status_name((enum ks_node_status)st)))
				found = st;
		if (found < 0)
			return ks_error_set(e, KS_EPARSE, "node %s: unknown status '%s'", name, s);
		n->status = (enum ks_node_status)found;
	}
	n->regression = json_is_true(json_object_get(o, "regression"));
	v = json_object_get(o, "close_reason");
	n->close_reason = json_is_string(v) ? close_reason_intern(json_string_value(v)) : NULL;
	v = json_object_get(o, "reflection");
	if (json_is_string(v) && (rc = ks_world_set_text(&n->reflection, json_string_value(v), e)))
		return rc;
	v = json_object_get(o, "result");
	if (json_is_object(v)) {
		json_t *c = json_object_get(v, "candidate_id"), *s = json_object_get(v, "score");
		if (!json_is_integer(c) || json_integer_value(c) < 0 || !json_is_number(s))
			return ks_error_set(e, KS_EPARSE,
					    "node %s: 'result' needs candidate_id and score", name);
		n->candidate = (long)json_integer_value(c);
		n->score = json_number_value(s);
	}
	return 0;
}

static int node_from_json(struct ks_world *w, struct doc *d, int i, struct ks_error *e)
{
	struct entry *x = &d->v[i];
	struct ks_node *n = &w->nodes[x->id];
	struct ks_node_in in;
	char name[96], where[112];
	json_t *v;
	int rc;
	entry_name(d, i, name, sizeof(name));
	snprintf(where, sizeof(where), "node %s", name);
	n->difficulty = 3;
	if ((rc = ks_node_in_read(&in, x->o, 0, where, d->notes, e)))
		return ks_error_wrap(e, "node %s", name);
	if (!in.title)
		in.title = i == d->root ? "root" : "(untitled)";
	if ((rc = ks_node_in_apply(n, &in, e)) || (rc = system_fields(n, x->o, name, e)))
		return rc;
	if (x->ext && !(n->ext_id = strdup(x->ext)))
		return ks_error_set(e, KS_ENOMEM, "node %s: copy id", name);
	v = json_object_get(x->o, "policy");
	if (json_is_object(v)) {
		char *text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (!text)
			return ks_error_set(e, KS_ENOMEM, "node %s: serialise policy", name);
		rc = ks_world_set_payload(n, text, e);
		free(text);
		if (rc)
			return rc;
	}
	v = json_object_get(x->o, "move");
	if (json_is_string(v) && !n->move) {
		n->move = strdup(json_string_value(v));
		if (!n->move)
			return ks_error_set(e, KS_ENOMEM, "node %s: copy move", name);
	}
	return 0;
}

/* children in the order the document's "children" lists give, then in document order;
 * parent_id decides where a node hangs */
static int doc_link(struct ks_world *w, struct doc *d, struct ks_error *e)
{
	char name[96], ref[96];
	int rc;
	for (int i = 0; i < d->n; i++) {
		json_t *kids = json_object_get(d->v[i].o, "children"), *k;
		size_t j;
		json_array_foreach(kids, j, k)
		{
			int c = doc_find(d, k);
			if (c < 0 || d->v[c].parent != i) {
				entry_name(d, i, name, sizeof(name));
				ks_world_ref_text(k, ref, sizeof(ref));
				ks_world_note(d->notes,
					      "node %s lists child %s whose parent_id says otherwise; "
					      "parent_id wins",
					      name, ref);
				continue;
			}
			if (d->v[c].linked)
				continue;
			if ((rc = ks_world_link(w, d->v[i].id, d->v[c].id, e)))
				return rc;
			d->v[c].linked = 1;
		}
	}
	for (int i = 0; i < d->n; i++) {
		if (i == d->root || d->v[i].linked)
			continue;
		if ((rc = ks_world_link(w, d->v[d->v[i].parent].id, d->v[i].id, e)))
			return rc;
		d->v[i].linked = 1;
	}
	return 0;
}

static int import_tree(struct ks_world *w, json_t *doc, struct ks_buf *notes,
		       struct ks_error *e)
{
	json_t *tree = json_object_get(doc, "decision_tree"), *nodes, *v;
	struct doc d = {.notes = notes};
	int rc;

	if (!json_is_object(tree))
		return ks_error_set(e, KS_EPARSE, "missing 'decision_tree' object");
	nodes = json_object_get(tree, "nodes");
	if (!json_is_array(nodes) || !json_array_size(nodes))
		return ks_error_set(e, KS_EPARSE, "'decision_tree.nodes' must be a non-empty array");
	if (json_array_size(nodes) > KS_WORLD_MAX_NODES)
		return ks_error_set(e, KS_ELIMIT, "more than %d nodes", KS_WORLD_MAX_NODES);
	if ((rc = doc_index(&d, nodes, e)) || (rc = doc_root(&d, tree, e)) ||
	    (rc = doc_parents(&d, e)) || (rc = doc_depths(&d, e)) || (rc = doc_ids(&d, e)))
		goto out;
	for (int i = 0; i < d.n; i++) {
		if ((rc = ks_world_node_alloc(w, d.v[i].id, e)) || (rc = node_from_json(w, &d, i, e)))
			goto out;
	}
	if ((rc = doc_link(w, &d, e)))
		goto out;
	w->root = d.v[d.root].id;
	v = json_object_get(tree, "active_leaf_id");
	if (v && !json_is_null(v)) {
		int a = doc_find(&d, v);
		char ref[96];
		if (a >= 0) {
			w->active_leaf = d.v[a].id;
		} else {
			ks_world_ref_text(v, ref, sizeof(ref));
			ks_world_note(notes, "active_leaf_id %s is not a node; ignored", ref);
		}
	}
	v = json_object_get(tree, "records");
	w->records = json_is_integer(v) && json_integer_value(v) >= 0 ? (int)json_integer_value(v)
								      : 0;
out:
	free(d.v);
	free(d.by_num);
	free(d.ext);
	return rc;
}

int ks_world_import_ex(struct ks_world *w, const char *json, struct ks_buf *notes,
		       struct ks_error *e)
{
	json_error_t je;
	json_t *doc, *v, *q;
	size_t i;
	int rc;

	memset(w, 0, sizeof(*w));
	ks_world_params_default(&w->params);
	w->active_leaf = -1;
	w->root = -1;
	if (strlen(json) > KS_WORLD_MAX_JSON)
		return ks_error_set(e, KS_ELIMIT, "world document exceeds %zu bytes",
				    KS_WORLD_MAX_JSON);
	doc = json_loads(json, 0, &je);
	if (!doc)
		return ks_error_set(e, KS_EPARSE, "world document: line %d column %d: %s", je.line,
				    je.column, je.text);
	if (!json_is_object(doc)) {
		rc = ks_error_set(e, KS_EPARSE, "world document must be an object");
		goto out;
	}
	v = json_object_get(doc, "kernel_summary");
	if (json_is_string(v) && (rc = ks_world_set_text(&w->kernel_summary, json_string_value(v), e)))
		goto out;
	v = json_object_get(doc, "open_questions");
	json_array_foreach(v, i, q)
	{
		if (json_is_string(q) && (rc = ks_world_add_question(w, json_string_value(q), e)))
			goto out;
	}
	if ((rc = import_tree(w, doc, notes, e)))
		goto out;
	v = json_object_get(doc, "move_evidence");
	json_array_foreach(v, i, q)
	{
		json_t *m = json_object_get(q, "move"), *n = json_object_get(q, "n"),
		       *s = json_object_get(q, "sum_log_ratio");
		struct ks_move_stat *ms;
		if (!json_is_string(m) || !json_is_integer(n) || json_integer_value(n) < 0 ||
		    !json_is_number(s)) {
			rc = ks_error_set(e, KS_EPARSE, "move_evidence[%zu] is malformed", i);
			goto out;
		}
		if ((rc = ks_world_move_entry(w, json_string_value(m), &ms, e)))
			goto out;
		ms->n = (int)json_integer_value(n);
		ms->sum_log_ratio = json_number_value(s);
	}
	rc = 0;
out:
	json_decref(doc);
	if (rc) {
		ks_world_release(w);
		return ks_error_wrap(e, "import world model");
	}
	return 0;
}

int ks_world_import(struct ks_world *w, const char *json, struct ks_error *e)
{
	return ks_world_import_ex(w, json, NULL, e);
}
