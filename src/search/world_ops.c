/* Edit scripts (insert/update/split/delete, in our shape and K-Search's) applied as one
 * transaction, and learning across the tree. */
#include "search/world_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MOVES 10000
#define MAX_CREATED (KS_WORLD_MAX_OPS * 3) /* split_node adds at most 3 */

static const char *const op_keys[] = {"op",	  "node_id",	  "parent_id", "node",
				      "patch",	  "parent_patch", "children",  "reason",
				      "parent_solution_id", NULL};

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
	unsigned flags;
	int *created;       /* new nodes so far in the script */
	int *ids;           /* their ids */
	struct ks_buf *notes;
	struct ks_error *e;
	char where[96]; /* "op 2 (update_node)" */
};

static int op_fail(struct op_ctx *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int op_fail(struct op_ctx *c, int code, const char *fmt, ...)
{
	char detail[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return ks_error_set(c->e, code, "%s: %s", c->where, detail);
}

/* the live node op[key] names (an integer or a string id) */
static int get_ref(struct op_ctx *c, json_t *op, const char *key, const char *what, int *out)
{
	json_t *v = json_object_get(op, key);
	char ref[96];
	int num;
	const char *ext;
	if (!v || json_is_null(v))
		return op_fail(c, KS_EPARSE, "missing '%s'", key);
	if (ks_world_id_parse(v, &num, &ext, NULL))
		return op_fail(c, KS_EPARSE, "'%s' must be a node id (an integer or a string id)",
			       key);
	*out = ks_world_ref(c->w, v);
	if (*out < 0) {
		ks_world_ref_text(v, ref, sizeof(ref));
		return op_fail(c, KS_EINVARIANT, "%s %s does not exist", what, ref);
	}
	return 0;
}

static int not_root(struct op_ctx *c, int id)
{
	if (id == c->w->root)
		return op_fail(c, KS_EINVARIANT, "the root node %d is immutable", id);
	return 0;
}

/* apply the NODE fields of obj (named label in messages) to node id; insert=1 requires a
 * title */
static int node_fields(struct op_ctx *c, int id, json_t *obj, const char *label, int insert)
{
	struct ks_node *n = &c->w->nodes[id];
	struct ks_node_in in;
	struct ks_error le = {0};
	json_t *v;
	int rc;

	if (!json_is_object(obj))
		return op_fail(c, KS_EPARSE, "'%s' must be an object", label);
	if ((rc = ks_node_in_read(&in, obj, KS_NODE_IN_EDIT, c->where, c->notes, &le)))
		return op_fail(c, rc, "%s", le.msg);
	if (insert && !in.title)
		return op_fail(c, KS_EINVARIANT, "a new node needs 'action.title'");
	if (!insert && in.title_composed)
		in.title = NULL; /* a patched decision/choice does not rename an action */
	if ((rc = ks_node_in_apply(n, &in, &le)))
		return op_fail(c, rc, "%s", le.msg);
	if ((v = json_object_get(obj, "status")) && !json_is_null(v)) {
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
	if ((v = json_object_get(obj, "policy")) && !json_is_null(v)) {
		char *text;
		if (!json_is_object(v))
			return op_fail(c, KS_EPARSE, "'policy' must be an object");
		text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
		if (!text)
			return op_fail(c, KS_ENOMEM, "serialise policy payload");
		rc = ks_world_set_payload(n, text, &le);
		free(text);
		if (rc)
			return op_fail(c, rc, "bad 'policy': %s", le.msg);
	}
	return 0;
}

/* a new node under parent; idv (may be NULL) is the id the model gave it */
static int new_node(struct op_ctx *c, int parent, json_t *idv, json_t *spec, const char *label)
{
	struct ks_world *w = c->w;
	struct ks_error le = {0};
	int id = -1, num, rc;
	const char *ext = NULL;
	if ((c->flags & KS_WORLD_APPLY_STRICT) && *c->created >= KS_WORLD_MAX_NEW_PER_EDIT)
		return op_fail(c, KS_EINVARIANT, "more than %d new nodes in one edit",
			       KS_WORLD_MAX_NEW_PER_EDIT);
	if (*c->created >= MAX_CREATED)
		return op_fail(c, KS_ELIMIT, "more than %d new nodes in one script", MAX_CREATED);
	if (idv && !json_is_null(idv)) {
		if (ks_world_id_parse(idv, &num, &ext, &le))
			return op_fail(c, KS_EPARSE, "'node_id': %s", le.msg);
		if (ext && ks_world_find(w, ext) >= 0)
			return op_fail(c, KS_EINVARIANT, "node id '%s' is taken", ext);
		if (!ext && num < w->nnodes)
			return op_fail(c, KS_EINVARIANT, "node id %d is taken (ids are never reused)",
				       num);
		id = ext ? -1 : num;
	}
	if (id < 0)
		id = w->nnodes;
	if ((rc = ks_world_node_alloc(w, id, &le)) || (rc = ks_world_link(w, parent, id, &le)))
		return op_fail(c, rc, "%s", le.msg);
	if (ext && !(w->nodes[id].ext_id = strdup(ext)))
		return op_fail(c, KS_ENOMEM, "copy node id");
	if ((rc = node_fields(c, id, spec, label, 1)))
		return rc; /* the scratch copy is thrown away */
	c->ids[(*c->created)++] = id;
	return 0;
}

static int op_insert(struct op_ctx *c, json_t *op)
{
	int parent, rc;
	json_t *node = json_object_get(op, "node"), *idv = json_object_get(op, "node_id");
	if ((rc = get_ref(c, op, "parent_id", "parent node", &parent)))
		return rc;
	if (!node)
		return op_fail(c, KS_EPARSE, "missing 'node'");
	if ((!idv || json_is_null(idv)) && json_is_object(node))
		idv = json_object_get(node, "node_id"); /* where K-Search names a new node */
	return new_node(c, parent, idv, node, "node");
}

static int op_update(struct op_ctx *c, json_t *op)
{
	int id = -1, rc; /* GCC 12 -O3 cannot see get_ref sets it */
	const char *label = "node";
	json_t *node = json_object_get(op, "node"), *pv;
	if ((rc = get_ref(c, op, "node_id", "node", &id)) || (rc = not_root(c, id)))
		return rc;
	if (!node) {
		node = json_object_get(op, "patch");
		label = "patch";
	}
	if (!node)
		return op_fail(c, KS_EPARSE, "missing 'node' (or K-Search's 'patch')");
	if (json_is_object(node) && (pv = json_object_get(node, "parent_id")) &&
	    !json_is_null(pv)) {
		int np;
		if ((rc = get_ref(c, node, "parent_id", "parent node", &np)))
			return rc;
		if (ks_world_is_ancestor(c->w, id, np))
			return op_fail(c, KS_EINVARIANT,
				       "moving node %d under %d would create a cycle", id, np);
		if (np != c->w->nodes[id].parent) {
			struct ks_error le = {0};
			ks_world_unlink(c->w, id);
			if ((rc = ks_world_link(c->w, np, id, &le)))
				return op_fail(c, rc, "%s", le.msg);
		}
	}
	return node_fields(c, id, node, label, 0);
}

static int op_split(struct op_ctx *c, json_t *op)
{
	int id, rc;
	size_t i;
	json_t *kids = json_object_get(op, "children"), *k, *pp = json_object_get(op, "parent_patch");
	char label[32];
	if ((rc = get_ref(c, op, "node_id", "node", &id)) || (rc = not_root(c, id)))
		return rc;
	if (!json_is_array(kids) || json_array_size(kids) < 2 || json_array_size(kids) > 3)
		return op_fail(c, KS_EINVARIANT, "'children' must list 2 or 3 refined nodes");
	if (c->w->nodes[id].status == KS_NODE_PRUNED)
		return op_fail(c, KS_EINVARIANT, "node %d is pruned", id);
	if (pp && !json_is_null(pp) && (rc = node_fields(c, id, pp, "parent_patch", 0)))
		return rc;
	json_array_foreach(kids, i, k)
	{
		snprintf(label, sizeof(label), "children[%zu]", i);
		if ((rc = new_node(c, id, json_is_object(k) ? json_object_get(k, "node_id") : NULL, k,
				   label)))
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
	if ((rc = get_ref(c, op, "node_id", "node", &id)) || (rc = not_root(c, id)))
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
	ks_world_node_release(n);
	if (c->w->active_leaf == id)
		c->w->active_leaf = -1;
	return 0;
}

static int apply_op(struct op_ctx *c, json_t *op)
{
	json_t *name = json_is_object(op) ? json_object_get(op, "op") : NULL, *v;
	const char *k;
	snprintf(c->where, sizeof(c->where), "op %d (?)", c->index);
	if (!json_is_string(name))
		return op_fail(c, KS_EPARSE, "an op is an object with a string 'op'");
	c->name = json_string_value(name);
	snprintf(c->where, sizeof(c->where), "op %d (%.40s)", c->index, c->name);
	if ((k = ks_world_forged_key(op)))
		return op_fail(c, KS_EINVARIANT,
			       "op field '%s' is reserved: only the system attaches candidates and "
			       "results",
			       k);
	json_object_foreach(op, k, v)
	{
		if (!in_list(op_keys, k))
			ks_world_note(c->notes, "%s: ignored unknown field '%s'", c->where, k);
	}
	if (!strcmp(c->name, "insert_node"))
		return op_insert(c, op);
	if (!strcmp(c->name, "update_node"))
		return op_update(c, op);
	if (!strcmp(c->name, "split_node"))
		return op_split(c, op);
	if (!strcmp(c->name, "delete_node"))
		return op_delete(c, op);
	return op_fail(c, KS_EPARSE,
		       "unknown op (expected insert_node, update_node, split_node or delete_node)");
}

/* whole-script invariants of the edited tree */
static int script_check(const struct ks_world *w, int created, struct ks_error *e)
{
	signed char *ok;
	int *path, rc = 0;
	if (created > KS_WORLD_MAX_NEW_PER_EDIT)
		return ks_error_set(e, KS_EINVARIANT,
				    "the ops add %d new nodes, at most %d per edit: keep the best %d",
				    created, KS_WORLD_MAX_NEW_PER_EDIT, KS_WORLD_MAX_NEW_PER_EDIT);
	if (!ks_world_node(w, w->root) || w->nodes[w->root].parent != -1)
		return ks_error_set(e, KS_EINVARIANT, "the root is gone");
	ok = calloc((size_t)w->nnodes, 1);
	path = malloc((size_t)w->nnodes * sizeof(int));
	if (!ok || !path) {
		rc = ks_error_set(e, KS_ENOMEM, "check %d nodes", w->nnodes);
		goto out;
	}
	ok[w->root] = 1;
	/* every live node reaches the root through live parents: no cycle, nothing detached */
	for (int i = 0; i < w->nnodes && !rc; i++) {
		int len = 0, j = i;
		if (w->nodes[i].deleted)
			continue;
		while (!ok[j]) {
			int p = w->nodes[j].parent;
			ok[j] = 2;
			path[len++] = j;
			if (!ks_world_node(w, p) || ok[p] == 2) {
				rc = ks_error_set(e, KS_EINVARIANT, "node %d is on a cycle or detached",
						  i);
				break;
			}
			j = p;
		}
		while (len--)
			ok[path[len]] = rc ? 0 : 1;
	}
out:
	free(ok);
	free(path);
	return rc;
}

static void append_reason(struct ks_buf *why, const char *msg)
{
	if (why->len)
		ks_buf_adds(why, "; ");
	ks_buf_adds(why, msg);
}

/* run the ops on the scratch copy tmp: strict stops at the first invalid op, otherwise each
 * op runs on its own copy and an invalid one is dropped */
static int run_ops(struct ks_world *tmp, json_t *ops, size_t nops, unsigned flags,
		   struct op_ctx *proto, struct ks_world_edit *r, struct ks_buf *why, int *first_rc,
		   struct ks_error *e)
{
	for (size_t i = 0; i < nops; i++) {
		struct ks_error le = {0};
		struct op_ctx c = *proto;
		struct ks_world t2;
		int saved = *c.created, rc;
		c.index = (int)i;
		c.e = &le;
		if (flags & KS_WORLD_APPLY_STRICT) {
			c.w = tmp;
			if ((rc = apply_op(&c, json_array_get(ops, i)))) {
				ks_error_set(e, rc, "%s", le.msg);
				return rc;
			}
			r->applied++;
			continue;
		}
		if ((rc = ks_world_clone(&t2, tmp, e)))
			return rc;
		c.w = &t2;
		if ((rc = apply_op(&c, json_array_get(ops, i)))) {
			ks_world_release(&t2);
			*c.created = saved;
			if (rc == KS_ENOMEM)
				return ks_error_set(e, rc, "%s", le.msg);
			r->skipped++;
			if (!*first_rc)
				*first_rc = rc;
			ks_world_note(c.notes, "%s (skipped)", le.msg);
			append_reason(why, le.msg);
			continue;
		}
		ks_world_release(tmp);
		*tmp = t2;
		r->applied++;
	}
	return 0;
}

int ks_world_apply_ex(struct ks_world *w, const char *script, unsigned flags,
		      struct ks_world_edit *res, struct ks_buf *notes, struct ks_error *e)
{
	json_error_t je;
	json_t *doc, *ops, *active = NULL;
	struct ks_world tmp;
	struct ks_world_edit r;
	struct ks_buf why = KS_BUF_INIT;
	int rc = 0, created = 0, first_rc = 0, ids[MAX_CREATED];
	size_t nops;
	struct op_ctx proto = {.flags = flags, .created = &created, .ids = ids, .notes = notes};

	memset(&r, 0, sizeof(r));
	if (res)
		*res = r;
	if (strlen(script) > KS_WORLD_MAX_JSON)
		return ks_error_set(e, KS_ELIMIT, "edit script exceeds %zu bytes", KS_WORLD_MAX_JSON);
	doc = json_loads(script, JSON_REJECT_DUPLICATES, &je);
	if (!doc)
		return ks_error_set(e, KS_EPARSE, "edit script: line %d column %d: %s", je.line,
				    je.column, je.text);
	ops = doc;
	if (json_is_object(doc)) {
		ops = json_object_get(doc, "ops");
		if (!ops)
			ops = json_object_get(doc, "edits");
		active = json_object_get(doc, "active_leaf_id");
	}
	if (!json_is_array(ops)) {
		json_decref(doc);
		return ks_error_set(e, KS_EPARSE,
				    "edit script must be an array of ops, {\"ops\": [...]} or "
				    "{\"edits\": [...]}");
	}
	nops = json_array_size(ops);
	if (nops > KS_WORLD_MAX_OPS) {
		if (flags & KS_WORLD_APPLY_STRICT) {
			json_decref(doc);
			return ks_error_set(e, KS_ELIMIT, "edit script has %zu ops, at most %d",
					    nops, KS_WORLD_MAX_OPS);
		}
		ks_world_note(notes, "edit script has %zu ops: those after the first %d skipped",
			      nops, KS_WORLD_MAX_OPS);
		nops = KS_WORLD_MAX_OPS;
	}
	if ((rc = ks_world_clone(&tmp, w, e))) {
		json_decref(doc);
		return rc;
	}
	ks_buf_init(&why, 4096); /* reasons beyond it are still in the notes */
	rc = run_ops(&tmp, ops, nops, flags, &proto, &r, &why, &first_rc, e);
	if (!rc && active && !json_is_null(active)) {
		int a = ks_world_ref(&tmp, active);
		char ref[96];
		if (a >= 0) {
			tmp.active_leaf = a;
		} else {
			ks_world_ref_text(active, ref, sizeof(ref));
			ks_world_note(notes, "active_leaf_id %s is not a node; ignored", ref);
		}
	}
	if (!rc && r.skipped && !r.applied)
		rc = r.skipped == 1 ? ks_error_set(e, first_rc, "%s", ks_buf_str(&why))
				    : ks_error_set(e, first_rc, "none of the %d ops could be applied: %s",
						   r.skipped, ks_buf_str(&why));
	if (!rc) {
		struct ks_error le = {0};
		if ((rc = script_check(&tmp, created, &le)))
			ks_error_set(e, rc, "the edit script changed nothing: %s", le.msg);
	}
	json_decref(doc);
	ks_buf_release(&why);
	if (rc) {
		ks_world_release(&tmp);
		return rc;
	}
	ks_world_release(w);
	*w = tmp;
	r.nnew = created;
	memcpy(r.new_ids, ids, (size_t)created * sizeof(int));
	if (res)
		*res = r;
	return 0;
}

int ks_world_apply(struct ks_world *w, const char *script, int *new_ids, int *nnew,
		   struct ks_error *e)
{
	struct ks_world_edit r;
	int rc = ks_world_apply_ex(w, script, 0, &r, NULL, e);
	if (nnew)
		*nnew = rc ? 0 : r.nnew;
	if (!rc && new_ids)
		memcpy(new_ids, r.new_ids, (size_t)r.nnew * sizeof(int));
	return rc;
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
