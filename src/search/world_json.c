/* World model <-> the K-Search JSON document (export, import, snapshots). */
#include "search/world_impl.h"

#include <jansson.h>
#include <math.h>
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

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *node_json(const struct ks_world *w, const struct ks_node *n)
{
	json_t *o = json_object(), *imp = json_object(), *kids = json_array(), *act = json_object();
	if (!o || !imp || !kids || !act)
		goto fail;
	json_object_set_new(o, "node_id", json_integer(n->id));
	json_object_set_new(o, "parent_id", n->parent >= 0 ? json_integer(n->parent) : json_null());
	json_object_set_new(act, "title", str_or_null(n->title));
	json_object_set_new(act, "description", str_or_null(n->description));
	json_object_set_new(o, "action", act);
	act = NULL;
	json_object_set_new(o, "difficulty_1_to_5", json_integer(n->difficulty));
	for (int k = 0; k < KS_IMPACT_COUNT; k++) {
		json_t *io = json_object();
		if (!io)
			goto fail;
		json_object_set_new(io, "score", json_real(n->impacts[k].score));
		json_object_set_new(io, "risk", str_or_null(n->impacts[k].risk));
		json_object_set_new(io, "notes", str_or_null(n->impacts[k].notes));
		json_object_set_new(imp, ks_impact_name((enum ks_impact_kind)k), io);
	}
	json_object_set_new(o, "impacts", imp);
	imp = NULL;
	json_object_set_new(o, "overall_rating_0_to_10", json_real(n->rating));
	json_object_set_new(o, "confidence_0_to_1", json_real(n->confidence));
	json_object_set_new(o, "status", json_string(ks_node_status_name(n->status)));
	for (int i = 0; i < n->nchildren; i++)
		json_array_append_new(kids, json_integer(n->children[i]));
	json_object_set_new(o, "children", kids);
	kids = NULL;
	json_object_set_new(o, "move", str_or_null(n->move));
	if (n->payload) {
		json_t *p = json_loads(n->payload, 0, NULL);
		json_object_set_new(o, "policy", p ? p : json_null());
	} else {
		json_object_set_new(o, "policy", json_null());
	}
	json_object_set_new(o, "prior_rating", json_real(n->prior_rating));
	json_object_set_new(o, "prior_confidence", json_real(n->prior_confidence));
	json_object_set_new(o, "learned_shift", json_real(n->learned_shift));
	json_object_set_new(o, "attempts", json_integer(n->attempts));
	json_object_set_new(o, "failures", json_integer(n->failures));
	json_object_set_new(o, "visits", json_integer(n->visits));
	json_object_set_new(o, "consecutive_failures", json_integer(n->consecutive_failures));
	json_object_set_new(o, "since_improvement", json_integer(n->since_improvement));
	json_object_set_new(o, "regression", json_boolean(n->regression));
	json_object_set_new(o, "close_reason", str_or_null(n->close_reason));
	if (n->candidate >= 0) {
		json_t *r = json_object();
		if (!r)
			goto fail;
		json_object_set_new(r, "candidate_id", json_integer(n->candidate));
		json_object_set_new(r, "score", json_real(n->score));
		json_object_set_new(o, "result", r);
	} else {
		json_object_set_new(o, "result", json_null());
	}
	(void)w;
	return o;
fail:
	json_decref(o);
	json_decref(imp);
	json_decref(kids);
	json_decref(act);
	return NULL;
}

int ks_world_export(const struct ks_world *w, struct ks_buf *out, struct ks_error *e)
{
	json_t *doc = json_object(), *qs = json_array(), *tree = json_object(), *nodes = json_array();
	json_t *mv = json_array();
	char *text = NULL;
	int rc = 0;
	if (!doc || !qs || !tree || !nodes || !mv)
		goto nomem;
	json_object_set_new(doc, "kernel_summary", str_or_null(w->kernel_summary));
	for (int i = 0; i < w->nquestions; i++)
		json_array_append_new(qs, json_string(w->open_questions[i]));
	json_object_set_new(doc, "open_questions", qs);
	qs = NULL;
	json_object_set_new(tree, "root_id", json_integer(w->root));
	json_object_set_new(tree, "active_leaf_id",
			    w->active_leaf >= 0 ? json_integer(w->active_leaf) : json_null());
	for (int i = 0; i < w->nnodes; i++) {
		json_t *nj;
		if (w->nodes[i].deleted)
			continue;
		nj = node_json(w, &w->nodes[i]);
		if (!nj || json_array_append_new(nodes, nj))
			goto nomem;
	}
	json_object_set_new(tree, "nodes", nodes);
	nodes = NULL;
	json_object_set_new(tree, "records", json_integer(w->records));
	json_object_set_new(doc, "decision_tree", tree);
	tree = NULL;
	for (int i = 0; i < w->nmoves; i++) {
		json_t *m = json_object();
		if (!m)
			goto nomem;
		json_object_set_new(m, "move", json_string(w->moves[i].move));
		json_object_set_new(m, "n", json_integer(w->moves[i].n));
		json_object_set_new(m, "sum_log_ratio", json_real(w->moves[i].sum_log_ratio));
		json_array_append_new(mv, m);
	}
	json_object_set_new(doc, "move_evidence", mv);
	mv = NULL;
	text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	if (!text)
		goto nomem;
	rc = ks_buf_adds(out, text);
	if (rc)
		rc = ks_error_set(e, rc, "export world model: document too large");
	free(text);
	json_decref(doc);
	return rc;
nomem:
	json_decref(doc);
	json_decref(qs);
	json_decref(tree);
	json_decref(nodes);
	json_decref(mv);
	return ks_error_set(e, KS_ENOMEM, "export world model");
}

/* ---- import ---- */

static int num_field(json_t *o, const char *key, double lo, double hi, double def, double *out,
		     int id, struct ks_error *e)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v)) {
		*out = def;
		return 0;
	}
	if (!json_is_number(v))
		return ks_error_set(e, KS_EPARSE, "node %d: '%s' must be a number", id, key);
	*out = json_number_value(v);
	if (!(*out >= lo && *out <= hi))
		return ks_error_set(e, KS_EINVARIANT, "node %d: '%s' = %g outside [%g, %g]", id, key,
				    *out, lo, hi);
	return 0;
}

static int int_field(json_t *o, const char *key, int def, int *out, int id, struct ks_error *e)
{
	double d = 0;
	int rc = num_field(o, key, 0, 1e9, def, &d, id, e);
	if (!rc && d != floor(d))
		rc = ks_error_set(e, KS_EPARSE, "node %d: '%s' must be an integer", id, key);
	*out = (int)d;
	return rc;
}

static int str_field(json_t *o, const char *key, char **dst, int id, struct ks_error *e)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return ks_error_set(e, KS_EPARSE, "node %d: '%s' must be a string", id, key);
	return ks_world_set_text(dst, json_string_value(v), e);
}

static int node_from_json(struct ks_world *w, json_t *o, int id, struct ks_error *e)
{
	struct ks_node *n = &w->nodes[id];
	json_t *act = json_object_get(o, "action"), *imp = json_object_get(o, "impacts"), *v;
	double d = 0;
	int rc = 0;
	if (json_is_object(act)) {
		if ((rc = str_field(act, "title", &n->title, id, e)) ||
		    (rc = str_field(act, "description", &n->description, id, e)))
			return rc;
	} else if (json_is_string(act)) {
		if ((rc = ks_world_set_text(&n->title, json_string_value(act), e)))
			return rc;
	}
	if (!n->title && (rc = ks_world_set_text(&n->title, "(untitled)", e)))
		return rc;
	if ((rc = num_field(o, "difficulty_1_to_5", 1, 5, 3, &d, id, e)))
		return rc;
	n->difficulty = (int)d;
	if (json_is_object(imp)) {
		for (int k = 0; k < KS_IMPACT_COUNT; k++) {
			json_t *io = json_object_get(imp, ks_impact_name((enum ks_impact_kind)k));
			if (json_is_number(io)) {
				n->impacts[k].score = json_number_value(io);
				continue;
			}
			if (!json_is_object(io))
				continue;
			if ((rc = num_field(io, "score", 0, 10, 0, &n->impacts[k].score, id, e)) ||
			    (rc = str_field(io, "risk", &n->impacts[k].risk, id, e)) ||
			    (rc = str_field(io, "notes", &n->impacts[k].notes, id, e)))
				return rc;
		}
		for (int k = 0; k < KS_IMPACT_COUNT; k++)
			if (!(n->impacts[k].score >= 0 && n->impacts[k].score <= 10))
				return ks_error_set(e, KS_EINVARIANT, "node %d: impact outside [0, 10]",
						    id);
	}
	if ((rc = num_field(o, "overall_rating_0_to_10", 0, 10, 5, &n->rating, id, e)) ||
	    (rc = num_field(o, "confidence_0_to_1", 0, 1, 0.5, &n->confidence, id, e)) ||
	    (rc = num_field(o, "learned_shift", -100, 100, 0, &n->learned_shift, id, e)) ||
	    (rc = num_field(o, "prior_rating", -100, 100, n->rating - n->learned_shift,
			    &n->prior_rating, id, e)) ||
	    (rc = num_field(o, "prior_confidence", 0, 1, n->confidence, &n->prior_confidence, id,
			    e)) ||
	    (rc = int_field(o, "attempts", 0, &n->attempts, id, e)) ||
	    (rc = int_field(o, "failures", 0, &n->failures, id, e)) ||
	    (rc = int_field(o, "visits", 0, &n->visits, id, e)) ||
	    (rc = int_field(o, "consecutive_failures", 0, &n->consecutive_failures, id, e)) ||
	    (rc = int_field(o, "since_improvement", 0, &n->since_improvement, id, e)))
		return rc;
	v = json_object_get(o, "status");
	if (v && !json_is_null(v)) {
		const char *s = json_is_string(v) ? json_string_value(v) : "";
		int found = -1;
		for (int st = KS_NODE_OPEN; st <= KS_NODE_PRUNED; st++)
			if (!strcmp(s, ks_node_status_name((enum ks_node_status)st)))
				found = st;
		if (found < 0)
			return ks_error_set(e, KS_EPARSE, "node %d: unknown status '%s'", id, s);
		n->status = (enum ks_node_status)found;
	}
	v = json_object_get(o, "regression");
	n->regression = json_is_true(v);
	v = json_object_get(o, "close_reason");
	n->close_reason = json_is_string(v) ? close_reason_intern(json_string_value(v)) : NULL;
	v = json_object_get(o, "result");
	if (json_is_object(v)) {
		json_t *c = json_object_get(v, "candidate_id"), *s = json_object_get(v, "score");
		if (!json_is_integer(c) || json_integer_value(c) < 0 || !json_is_number(s))
			return ks_error_set(e, KS_EPARSE,
					    "node %d: 'result' needs candidate_id and score", id);
		n->candidate = (long)json_integer_value(c);
		n->score = json_number_value(s);
	}
	v = json_object_get(o, "policy");
	if (json_is_object(v)) {
		char *text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (!text)
			return ks_error_set(e, KS_ENOMEM, "node %d: serialise policy", id);
		rc = ks_world_set_payload(n, text, e);
		free(text);
		if (rc)
			return rc;
	}
	v = json_object_get(o, "move");
	if (json_is_string(v) && !n->move) {
		n->move = strdup(json_string_value(v));
		if (!n->move)
			return ks_error_set(e, KS_ENOMEM, "node %d: copy move", id);
	}
	return 0;
}

static int parent_of(json_t *o, int *parent)
{
	json_t *p = json_object_get(o, "parent_id");
	if (!p || json_is_null(p)) {
		*parent = -1;
		return 0;
	}
	if (!json_is_integer(p) || json_integer_value(p) < 0 ||
	    json_integer_value(p) >= KS_WORLD_MAX_NODES)
		return -1;
	*parent = (int)json_integer_value(p);
	return 0;
}

static int import_tree(struct ks_world *w, json_t *doc, struct ks_error *e)
{
	json_t *tree = json_object_get(doc, "decision_tree"), *nodes, *v;
	size_t i;
	json_t *o;
	int rc;

	if (!json_is_object(tree))
		return ks_error_set(e, KS_EPARSE, "missing 'decision_tree' object");
	nodes = json_object_get(tree, "nodes");
	if (!json_is_array(nodes) || !json_array_size(nodes))
		return ks_error_set(e, KS_EPARSE, "'decision_tree.nodes' must be a non-empty array");
	v = json_object_get(tree, "root_id");
	if (!json_is_integer(v))
		return ks_error_set(e, KS_EPARSE, "'decision_tree.root_id' must be an integer");
	w->root = (int)json_integer_value(v);
	/* first pass: create every node */
	json_array_foreach(nodes, i, o)
	{
		json_t *idv = json_is_object(o) ? json_object_get(o, "node_id") : NULL;
		int id;
		if (!json_is_integer(idv))
			return ks_error_set(e, KS_EPARSE, "nodes[%zu]: 'node_id' must be an integer", i);
		id = json_integer_value(idv) < 0 || json_integer_value(idv) >= KS_WORLD_MAX_NODES
			     ? -1
			     : (int)json_integer_value(idv);
		if ((rc = ks_world_node_alloc(w, id, e)))
			return ks_error_wrap(e, "nodes[%zu]", i);
		if ((rc = node_from_json(w, o, id, e)))
			return rc;
	}
	if (!ks_world_node(w, w->root))
		return ks_error_set(e, KS_EINVARIANT, "root_id %d is not a node", w->root);
	/* second pass: links, children in the document's order first */
	json_array_foreach(nodes, i, o)
	{
		int id = (int)json_integer_value(json_object_get(o, "node_id")), parent = -1;
		json_t *kids = json_object_get(o, "children"), *k;
		size_t j;
		if (parent_of(o, &parent) || (parent >= 0 && !ks_world_node(w, parent)))
			return ks_error_set(e, KS_EINVARIANT, "node %d: parent is not a node", id);
		if ((parent < 0) != (id == w->root))
			return ks_error_set(e, KS_EINVARIANT,
					    "node %d: exactly the root (%d) has no parent", id,
					    w->root);
		if (!json_is_array(kids))
			continue;
		json_array_foreach(kids, j, k)
		{
			int c = json_is_integer(k) ? (int)json_integer_value(k) : -1, cp = -2;
			json_t *co = NULL, *x;
			size_t m;
			json_array_foreach(nodes, m, x)
			{
				if (json_integer_value(json_object_get(x, "node_id")) == c)
					co = x;
			}
			if (!co || parent_of(co, &cp) || cp != id)
				return ks_error_set(e, KS_EINVARIANT,
						    "node %d lists child %d whose parent differs", id, c);
			if ((rc = ks_world_link(w, id, c, e)))
				return rc;
		}
	}
	json_array_foreach(nodes, i, o)
	{
		int id = (int)json_integer_value(json_object_get(o, "node_id")), parent = -1, listed = 0;
		struct ks_node *p;
		parent_of(o, &parent);
		if (parent < 0)
			continue;
		p = &w->nodes[parent];
		for (int j = 0; j < p->nchildren; j++)
			listed |= p->children[j] == id;
		if (!listed && (rc = ks_world_link(w, parent, id, e)))
			return rc;
		w->nodes[id].parent = parent;
	}
	for (int id = 0; id < w->nnodes; id++) {
		if (w->nodes[id].deleted)
			continue;
		if (!ks_world_is_ancestor(w, w->root, id))
			return ks_error_set(e, KS_EINVARIANT, "node %d is on a cycle or detached", id);
	}
	v = json_object_get(tree, "active_leaf_id");
	w->active_leaf = json_is_integer(v) && ks_world_node(w, (int)json_integer_value(v))
				 ? (int)json_integer_value(v)
				 : -1;
	v = json_object_get(tree, "records");
	w->records = json_is_integer(v) && json_integer_value(v) >= 0 ? (int)json_integer_value(v)
								      : 0;
	return 0;
}

int ks_world_import(struct ks_world *w, const char *json, struct ks_error *e)
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
	if ((rc = import_tree(w, doc, e)))
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
