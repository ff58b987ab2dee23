/* World model -> the K-Search JSON document (export for snapshots, reports and resume;
 * import is world_import.c). */
#include "search/world_impl.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	json_object_set_new(o, "ext_id", str_or_null(n->ext_id));
	json_object_set_new(o, "parent_id", n->parent >= 0 ? json_integer(n->parent) : json_null());
	json_object_set_new(act, "title", str_or_null(n->title));
	json_object_set_new(act, "description", str_or_null(n->description));
	json_object_set_new(act, "rationale", str_or_null(n->rationale));
	json_object_set_new(act, "expected_vs_baseline_factor",
			    n->expected_factor > 0 ? json_real(n->expected_factor) : json_null());
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
	json_object_set_new(o, "reflection", str_or_null(n->reflection));
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

