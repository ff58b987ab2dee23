/* Transactional edit scripts (insert/update/split/delete) and learning across the tree. */
#include "search/world_impl.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MOVES 10000

/* keys that carry measurements: only the system writes them */
static const char *const system_keys[] = {
	"candidate", "candidate_id", "candidates", "solution", "solution_id", "solution_ref",
	"result", "results", "score", "best_score", "measured", "measured_score", "speedup",
	"attempts", "failures", "visits", "regression", "consecutive_failures",
	"since_improvement", "learned_shift", "prior_rating", "close_reason", NULL};

static const char *const node_keys[] = {"action", "difficulty_1_to_5", "impacts",
					"overall_rating_0_to_10", "confidence_0_to_1", "status",
					"policy", "parent_id", NULL};

static int in_list(const char *const *list, const char *k)
{
	for (; *list; list++)
		if (!strcmp(*list, k))
			return 1;
	return 0;
}

struct op_ctx {
	struct ks_world *w; /* the scratch copy being edited */
	int index;          /* op index in the script */
	const char *name;   /* op name */
	struct ks_error *e;
};

static int op_fail(struct op_ctx *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int op_fail(struct op_ctx *c, int code, const char *fmt, ...)
{
	char detail[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return ks_error_set(c->e, code, "op %d (%s): %s", c->index, c->name, detail);
}

static int check_system_keys(struct op_ctx *c, json_t *obj, const char *where)
{
	const char *k;
	json_t *v;
	json_object_foreach(obj, k, v)
	{
		if (in_list(system_keys, k))
			return op_fail(c, KS_EINVARIANT,
				       "%s field '%s' is reserved: only the system attaches candidates and "
				       "results",
				       where, k);
	}
	return 0;
}

static int get_id(struct op_ctx *c, json_t *op, const char *key, int *out)
{
	json_t *v = json_object_get(op, key);
	if (!v)
		return op_fail(c, KS_EPARSE, "missing '%s'", key);
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) >= KS_WORLD_MAX_NODES)
		return op_fail(c, KS_EPARSE, "'%s' must be a node id (integer in [0, %d))", key,
			       KS_WORLD_MAX_NODES);
	*out = (int)json_integer_value(v);
	return 0;
}

static int get_number(struct op_ctx *c, json_t *v, const char *key, double lo, double hi,
		      double *out)
{
	if (!json_is_number(v))
		return op_fail(c, KS_EPARSE, "'%s' must be a number", key);
	*out = json_number_value(v);
	if (!(*out >= lo && *out <= hi))
		return op_fail(c, KS_EINVARIANT, "'%s' = %g outside [%g, %g]", key, *out, lo, hi);
	return 0;
}

static int get_text(struct op_ctx *c, json_t *v, const char *key, char **dst)
{
	int rc;
	if (json_is_null(v))
		return ks_world_set_text(dst, NULL, c->e);
	if (!json_is_string(v))
		return op_fail(c, KS_EPARSE, "'%s' must be a string", key);
	rc = ks_world_set_text(dst, json_string_value(v), c->e);
	if (rc)
		return op_fail(c, KS_EINVARIANT, "'%s' is longer than %d bytes", key,
			       KS_WORLD_MAX_TEXT);
	return 0;
}

/* apply the NODE fields of obj to node id; insert=1 requires a title */
static int node_fields(struct op_ctx *c, int id, json_t *obj, int insert)
{
	struct ks_node *n = &c->w->nodes[id];
	const char *k;
	json_t *v;
	int rc;
	double x = 0;

	if (!json_is_object(obj))
		return op_fail(c, KS_EPARSE, "'node' must be an object");
	rc = check_system_keys(c, obj, "node");
	if (rc)
		return rc;
	json_object_foreach(obj, k, v)
	{
		if (!in_list(node_keys, k) || (insert && !strcmp(k, "parent_id")))
			return op_fail(c, KS_EPARSE, "unknown node field '%s'", k);
	}
	if ((v = json_object_get(obj, "action"))) {
		json_t *t, *d;
		if (!json_is_object(v))
			return op_fail(c, KS_EPARSE, "'action' must be an object");
		if ((rc = check_system_keys(c, v, "action")))
			return rc;
		t = json_object_get(v, "title");
		d = json_object_get(v, "description");
		if (t) {
			if (!json_is_string(t) || !json_string_length(t))
				return op_fail(c, KS_EINVARIANT, "'action.title' must be a non-empty string");
			if ((rc = get_text(c, t, "action.title", &n->title)))
				return rc;
		}
		if (d && (rc = get_text(c, d, "action.description", &n->description)))
			return rc;
	}
	if (insert && (!n->title || !*n->title))
		return op_fail(c, KS_EINVARIANT, "a new node needs 'action.title'");
	if ((v = json_object_get(obj, "difficulty_1_to_5"))) {
		if ((rc = get_number(c, v, "difficulty_1_to_5", 1, 5, &x)))
			return rc;
		if (x != floor(x))
			return op_fail(c, KS_EINVARIANT, "'difficulty_1_to_5' = %g is not an integer", x);
		n->difficulty = (int)x;
	}
	if ((v = json_object_get(obj, "impacts"))) {
		const char *ik;
		json_t *iv;
		if (!json_is_object(v))
			return op_fail(c, KS_EPARSE, "'impacts' must be an object");
		json_object_foreach(v, ik, iv)
		{
			int kind = -1;
			char key[96];
			for (int j = 0; j < KS_IMPACT_COUNT; j++)
				if (!strcmp(ik, ks_impact_name((enum ks_impact_kind)j)))
					kind = j;
			if (kind < 0)
				return op_fail(c, KS_EPARSE, "unknown impact '%s'", ik);
			snprintf(key, sizeof(key), "impacts.%s.score", ik);
			if (json_is_number(iv)) {
				if ((rc = get_number(c, iv, key, 0, 10, &x)))
					return rc;
				n->impacts[kind].score = x;
				continue;
			}
			if (!json_is_object(iv))
				return op_fail(c, KS_EPARSE, "'impacts.%s' must be an object", ik);
			{
				const char *fk;
				json_t *fv;
				json_object_foreach(iv, fk, fv)
				{
					if (strcmp(fk, "score") && strcmp(fk, "risk") && strcmp(fk, "notes"))
						return op_fail(c, KS_EPARSE, "unknown field '%s' in 'impacts.%s'",
							       fk, ik);
				}
			}
			if (json_object_get(iv, "score")) {
				if ((rc = get_number(c, json_object_get(iv, "score"), key, 0, 10, &x)))
					return rc;
				n->impacts[kind].score = x;
			}
			if (json_object_get(iv, "risk") &&
			    (rc = get_text(c, json_object_get(iv, "risk"), "risk", &n->impacts[kind].risk)))
				return rc;
			if (json_object_get(iv, "notes") &&
			    (rc = get_text(c, json_object_get(iv, "notes"), "notes",
					   &n->impacts[kind].notes)))
				return rc;
		}
	}
	if ((v = json_object_get(obj, "overall_rating_0_to_10"))) {
		if ((rc = get_number(c, v, "overall_rating_0_to_10", 0, 10, &x)))
			return rc;
		/* the rating an edit states is the rating the node shows */
		n->prior_rating = x - n->learned_shift;
		n->rating = x;
	}
	if ((v = json_object_get(obj, "confidence_0_to_1"))) {
		if ((rc = get_number(c, v, "confidence_0_to_1", 0, 1, &x)))
			return rc;
		n->confidence = n->prior_confidence = x;
	}
	if ((v = json_object_get(obj, "status"))) {
		const char *s = json_is_string(v) ? json_string_value(v) : "";
		if (!strcmp(s, "open")) {
			if (n->status == KS_NODE_ACTIVE)
				return op_fail(c, KS_EINVARIANT,
					       "node %d is active: its session must end first", id);
			n->status = KS_NODE_OPEN;
			n->close_reason = NULL;
		} else if (!strcmp(s, "pruned")) {
			n->status = KS_NODE_PRUNED;
			n->close_reason = "pruned by edit";
		} else {
			return op_fail(c, KS_EINVARIANT,
				       "'status' may only be set to \"open\" or \"pruned\"");
		}
	}
	if ((v = json_object_get(obj, "policy"))) {
		char *text;
		if (!json_is_object(v))
			return op_fail(c, KS_EPARSE, "'policy' must be an object");
		text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
		if (!text)
			return ks_error_set(c->e, KS_ENOMEM, "serialise policy payload");
		rc = ks_world_set_payload(n, text, c->e);
		free(text);
		if (rc)
			return op_fail(c, rc, "bad 'policy': %s", c->e->msg);
	}
	return 0;
}

static int new_node(struct op_ctx *c, int parent, int id, json_t *spec, int *nnew, int *new_ids)
{
	struct ks_world *w = c->w;
	int rc;
	if (*nnew >= KS_WORLD_MAX_NEW_PER_EDIT)
		return op_fail(c, KS_EINVARIANT, "more than %d new nodes in one edit",
			       KS_WORLD_MAX_NEW_PER_EDIT);
	if (id < 0)
		id = w->nnodes;
	else if (id < w->nnodes)
		return op_fail(c, KS_EINVARIANT, "node id %d is taken (ids are never reused)", id);
	rc = ks_world_node_alloc(w, id, c->e);
	if (rc)
		return op_fail(c, rc, "%s", c->e->msg);
	rc = ks_world_link(w, parent, id, c->e);
	if (!rc)
		rc = node_fields(c, id, spec, 1);
	if (rc)
		return rc; /* the scratch copy is thrown away */
	if (new_ids)
		new_ids[*nnew] = id;
	(*nnew)++;
	return 0;
}

static int live(struct op_ctx *c, int id, const char *what)
{
	if (!ks_world_node(c->w, id))
		return op_fail(c, KS_EINVARIANT, "%s %d does not exist", what, id);
	return 0;
}

static int not_root(struct op_ctx *c, int id)
{
	if (id == c->w->root)
		return op_fail(c, KS_EINVARIANT, "the root node %d is immutable", id);
	return 0;
}

static int op_insert(struct op_ctx *c, json_t *op, int *nnew, int *new_ids)
{
	int parent, id = -1, rc;
	json_t *node = json_object_get(op, "node");
	if ((rc = get_id(c, op, "parent_id", &parent)) || (rc = live(c, parent, "parent node")))
		return rc;
	if (json_object_get(op, "node_id") && (rc = get_id(c, op, "node_id", &id)))
		return rc;
	if (!node)
		return op_fail(c, KS_EPARSE, "missing 'node'");
	return new_node(c, parent, id, node, nnew, new_ids);
}

static int op_update(struct op_ctx *c, json_t *op)
{
	int id, rc;
	json_t *node = json_object_get(op, "node");
	json_t *pv;
	if ((rc = get_id(c, op, "node_id", &id)) || (rc = live(c, id, "node")) ||
	    (rc = not_root(c, id)))
		return rc;
	if (!node)
		return op_fail(c, KS_EPARSE, "missing 'node'");
	if (json_is_object(node) && (pv = json_object_get(node, "parent_id"))) {
		int np;
		if (!json_is_integer(pv))
			return op_fail(c, KS_EPARSE, "'parent_id' must be a node id");
		np = (int)json_integer_value(pv);
		if ((rc = live(c, np, "parent node")))
			return rc;
		if (ks_world_is_ancestor(c->w, id, np))
			return op_fail(c, KS_EINVARIANT,
				       "moving node %d under %d would create a cycle", id, np);
		if (np != c->w->nodes[id].parent) {
			ks_world_unlink(c->w, id);
			if ((rc = ks_world_link(c->w, np, id, c->e)))
				return rc;
		}
	}
	return node_fields(c, id, node, 0);
}

static int op_split(struct op_ctx *c, json_t *op, int *nnew, int *new_ids)
{
	int id, rc;
	size_t i;
	json_t *kids = json_object_get(op, "children"), *k;
	if ((rc = get_id(c, op, "node_id", &id)) || (rc = live(c, id, "node")) ||
	    (rc = not_root(c, id)))
		return rc;
	if (!json_is_array(kids) || json_array_size(kids) < 2 || json_array_size(kids) > 3)
		return op_fail(c, KS_EINVARIANT, "'children' must list 2 or 3 refined nodes");
	if (c->w->nodes[id].status == KS_NODE_PRUNED)
		return op_fail(c, KS_EINVARIANT, "node %d is pruned", id);
	json_array_foreach(kids, i, k)
	{
		if ((rc = new_node(c, id, -1, k, nnew, new_ids)))
			return rc;
	}
	/* the idea lives on in its refinements */
	if (c->w->nodes[id].status == KS_NODE_OPEN) {
		c->w->nodes[id].status = KS_NODE_CLOSED;
		c->w->nodes[id].close_reason = "split";
	}
	return 0;
}

static int op_delete(struct op_ctx *c, json_t *op)
{
	int id, rc;
	struct ks_node *n;
	if ((rc = get_id(c, op, "node_id", &id)) || (rc = live(c, id, "node")) ||
	    (rc = not_root(c, id)))
		return rc;
	n = &c->w->nodes[id];
	if (n->nchildren)
		return op_fail(c, KS_EINVARIANT,
			       "node %d has children: only open childless leaves may be deleted", id);
	if (n->status != KS_NODE_OPEN || n->attempts)
		return op_fail(c, KS_EINVARIANT,
			       "node %d is %s%s: only open childless leaves may be deleted", id,
			       ks_node_status_name(n->status), n->attempts ? " with attempts" : "");
	ks_world_unlink(c->w, id);
	free(n->children);
	free(n->title);
	free(n->description);
	for (int k = 0; k < KS_IMPACT_COUNT; k++) {
		free(n->impacts[k].risk);
		free(n->impacts[k].notes);
	}
	free(n->payload);
	free(n->move);
	memset(n, 0, sizeof(*n));
	n->id = id;
	n->parent = -1;
	n->deleted = 1;
	n->candidate = -1;
	if (c->w->active_leaf == id)
		c->w->active_leaf = -1;
	return 0;
}

static const char *const op_keys[] = {"op", "node_id", "parent_id", "node", "children",
				      "reason", NULL};

int ks_world_apply(struct ks_world *w, const char *script, int *new_ids, int *nnew,
		   struct ks_error *e)
{
	json_error_t je;
	json_t *doc, *ops;
	struct ks_world tmp;
	int rc = 0, created = 0, ids[KS_WORLD_MAX_NEW_PER_EDIT];
	size_t i;
	json_t *op;

	if (nnew)
		*nnew = 0;
	if (strlen(script) > KS_WORLD_MAX_JSON)
		return ks_error_set(e, KS_ELIMIT, "edit script exceeds %zu bytes", KS_WORLD_MAX_JSON);
	doc = json_loads(script, JSON_REJECT_DUPLICATES, &je);
	if (!doc)
		return ks_error_set(e, KS_EPARSE, "edit script: line %d column %d: %s", je.line,
				    je.column, je.text);
	ops = json_is_object(doc) ? json_object_get(doc, "edits") : doc;
	if (!json_is_array(ops)) {
		json_decref(doc);
		return ks_error_set(e, KS_EPARSE,
				    "edit script must be an array of ops or {\"edits\": [...]}");
	}
	rc = ks_world_clone(&tmp, w, e);
	if (rc) {
		json_decref(doc);
		return rc;
	}
	json_array_foreach(ops, i, op)
	{
		struct op_ctx c = {.w = &tmp, .index = (int)i, .name = "?", .e = e};
		json_t *name = json_is_object(op) ? json_object_get(op, "op") : NULL;
		const char *k;
		json_t *v;
		if (!json_is_string(name)) {
			rc = op_fail(&c, KS_EPARSE, "an op is an object with a string 'op'");
			break;
		}
		c.name = json_string_value(name);
		if ((rc = check_system_keys(&c, op, "op")))
			break;
		json_object_foreach(op, k, v)
		{
			if (!in_list(op_keys, k)) {
				rc = op_fail(&c, KS_EPARSE, "unknown field '%s'", k);
				break;
			}
		}
		if (rc)
			break;
		if (!strcmp(c.name, "insert_node"))
			rc = op_insert(&c, op, &created, ids);
		else if (!strcmp(c.name, "update_node"))
			rc = op_update(&c, op);
		else if (!strcmp(c.name, "split_node"))
			rc = op_split(&c, op, &created, ids);
		else if (!strcmp(c.name, "delete_node"))
			rc = op_delete(&c, op);
		else
			rc = op_fail(&c, KS_EPARSE,
				     "unknown op (expected insert_node, update_node, split_node or "
				     "delete_node)");
		if (rc)
			break;
	}
	json_decref(doc);
	if (rc) {
		ks_world_release(&tmp);
		return rc;
	}
	ks_world_release(w);
	*w = tmp;
	if (new_ids)
		memcpy(new_ids, ids, (size_t)created * sizeof(int));
	if (nnew)
		*nnew = created;
	return 0;
}

/* ---- learning ---- */

const struct ks_move_stat *ks_world_move_stat(const struct ks_world *w, const char *move)
{
	for (int i = 0; i < w->nmoves; i++)
		if (!strcmp(w->moves[i].move, move))
			return &w->moves[i];
	return NULL;
}

void ks_world_move_effect(const struct ks_world *w, const struct ks_move_stat *m, double *shift,
			  double *gain)
{
	double k = w->params.learn_strength > 0 ? w->params.learn_strength : 1.0;
	double g = m->n > 0 ? m->n / (m->n + k) : 0.0;
	double mean = m->n > 0 ? m->sum_log_ratio / m->n : 0.0;
	*shift = w->params.learn_scale * mean * g;
	*gain = g;
}

double ks_world_move_shift(const struct ks_world *w, const char *move)
{
	const struct ks_move_stat *m = ks_world_move_stat(w, move);
	double shift = 0, gain;
	if (m)
		ks_world_move_effect(w, m, &shift, &gain);
	return shift;
}

int ks_world_learn(struct ks_world *w, const char *move, double ratio, int except,
		   struct ks_error *e)
{
	struct ks_move_stat *m;
	double shift, gain;
	int rc;
	if (!move || !*move)
		return ks_error_set(e, KS_EINVAL, "learn: empty move key");
	if (!(ratio > 0) || !isfinite(ratio))
		return ks_error_set(e, KS_EINVAL, "learn '%s': ratio %g is not positive", move,
				    ratio);
	if ((rc = ks_world_move_entry(w, move, &m, e)))
		return rc;
	m->n++;
	m->sum_log_ratio += log(ratio);
	ks_world_move_effect(w, m, &shift, &gain);
	for (int i = 0; i < w->nnodes; i++) {
		struct ks_node *n = &w->nodes[i];
		if (n->deleted || i == except || n->status != KS_NODE_OPEN || !n->move ||
		    strcmp(n->move, move))
			continue;
		n->learned_shift = shift;
		n->confidence = n->prior_confidence + (1.0 - n->prior_confidence) * gain;
		ks_world_node_rerate(n);
	}
	return 0;
}

int ks_world_move_entry(struct ks_world *w, const char *move, struct ks_move_stat **out,
			struct ks_error *e)
{
	struct ks_move_stat *m = (struct ks_move_stat *)ks_world_move_stat(w, move);
	if (!m) {
		char *key;
		if (w->nmoves >= MAX_MOVES)
			return ks_error_set(e, KS_ELIMIT, "move '%s': more than %d move keys", move,
					    MAX_MOVES);
		if (w->nmoves == w->moves_alloc) {
			int na = w->moves_alloc ? 2 * w->moves_alloc : 16;
			struct ks_move_stat *nm = realloc(w->moves, (size_t)na * sizeof(*nm));
			if (!nm)
				return ks_error_set(e, KS_ENOMEM, "grow move evidence");
			w->moves = nm;
			w->moves_alloc = na;
		}
		key = strdup(move);
		if (!key)
			return ks_error_set(e, KS_ENOMEM, "copy move key");
		m = &w->moves[w->nmoves++];
		m->move = key;
		m->n = 0;
		m->sum_log_ratio = 0;
	}
	*out = m;
	return 0;
}
