/* World model arena: nodes, links, system inserts and status changes. */
#include "search/world_impl.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/log.h"

static const char *const status_names[] = {"open", "active", "closed", "pruned"};
#define IMPACT_NAME_(id, name) name,
static const char *const impact_names[] = {KS_IMPACT_LIST(IMPACT_NAME_)};
#undef IMPACT_NAME_

const char *ks_node_status_name(enum ks_node_status st)
{
	return (unsigned)st < 4 ? status_names[st] : "unknown";
}

const char *ks_impact_name(enum ks_impact_kind k)
{
	return (unsigned)k < KS_IMPACT_COUNT ? impact_names[k] : "unknown";
}

double ks_clamp(double x, double lo, double hi)
{
	if (!(x >= lo))
		return lo;
	return x > hi ? hi : x;
}

void ks_world_params_default(struct ks_world_params *p)
{
	p->explore = 0.3;
	p->fail_penalty = 0.4;
	p->difficulty_base = 2;
	p->difficulty_step = 8;
	p->stagnation_window = 5;
	p->debug_budget = 3;
	p->learn_scale = 10.0;
	p->learn_strength = 2.0;
}

int ks_world_set_text(char **dst, const char *src, struct ks_error *e)
{
	char *copy = NULL;
	if (src) {
		size_t n = strlen(src);
		if (n > KS_WORLD_MAX_TEXT)
			return ks_error_set(e, KS_ELIMIT, "text of %zu bytes exceeds the %d byte cap",
					    n, KS_WORLD_MAX_TEXT);
		copy = strdup(src);
		if (!copy)
			return ks_error_set(e, KS_ENOMEM, "copy text");
	}
	free(*dst);
	*dst = copy;
	return 0;
}

int ks_world_set_payload(struct ks_node *n, const char *json, struct ks_error *e)
{
	char *text = NULL, *move = NULL;
	if (json) {
		json_error_t je;
		json_t *root;
		json_t *mv;
		int has_move;
		if (strlen(json) > KS_WORLD_MAX_PAYLOAD)
			return ks_error_set(e, KS_ELIMIT, "policy payload exceeds %d bytes",
					    KS_WORLD_MAX_PAYLOAD);
		root = json_loads(json, JSON_REJECT_DUPLICATES, &je);
		if (!root || !json_is_object(root)) {
			json_decref(root);
			return ks_error_set(e, KS_EPARSE, "policy payload is not a json object%s%s",
					    root ? "" : ": ", root ? "" : je.text);
		}
		mv = json_object_get(root, "move");
		has_move = mv && json_is_string(mv) && json_string_length(mv) > 0;
		if (has_move)
			move = strdup(json_string_value(mv));
		text = strdup(json);
		json_decref(root);
		if (!text || (has_move && !move)) {
			free(text);
			free(move);
			return ks_error_set(e, KS_ENOMEM, "copy policy payload");
		}
	}
	free(n->payload);
	free(n->move);
	n->payload = text;
	n->move = move;
	return 0;
}

void ks_world_node_rerate(struct ks_node *n)
{
	n->rating = ks_clamp(n->prior_rating + n->learned_shift, 0.0, 10.0);
}

int ks_world_node_alloc(struct ks_world *w, int id, struct ks_error *e)
{
	if (id < 0 || id >= KS_WORLD_MAX_NODES)
		return ks_error_set(e, KS_ELIMIT, "node id %d outside [0, %d)", id,
				    KS_WORLD_MAX_NODES);
	if (id < w->nnodes && !w->nodes[id].deleted)
		return ks_error_set(e, KS_EINVARIANT, "node id %d is already in use", id);
	if (id >= w->alloc) {
		int na = w->alloc ? w->alloc : 16;
		struct ks_node *nn;
		while (na <= id)
			na *= 2;
		if (na > KS_WORLD_MAX_NODES)
			na = KS_WORLD_MAX_NODES;
		nn = realloc(w->nodes, (size_t)na * sizeof(*nn));
		if (!nn)
			return ks_error_set(e, KS_ENOMEM, "grow world arena to %d nodes", na);
		w->nodes = nn;
		w->alloc = na;
	}
	while (w->nnodes <= id) {
		struct ks_node *t = &w->nodes[w->nnodes];
		memset(t, 0, sizeof(*t));
		t->id = w->nnodes;
		t->parent = -1;
		t->deleted = 1;
		t->candidate = -1;
		w->nnodes++;
	}
	{
		struct ks_node *n = &w->nodes[id];
		free(n->children);
		memset(n, 0, sizeof(*n));
		n->id = id;
		n->parent = -1;
		n->difficulty = 1;
		n->rating = n->prior_rating = 5.0;
		n->confidence = n->prior_confidence = 0.5;
		n->candidate = -1;
		n->status = KS_NODE_OPEN;
	}
	return 0;
}

int ks_world_link(struct ks_world *w, int parent, int child, struct ks_error *e)
{
	struct ks_node *p = &w->nodes[parent];
	if (p->nchildren == p->children_alloc) {
		int na = p->children_alloc ? 2 * p->children_alloc : 4;
		int *nc = realloc(p->children, (size_t)na * sizeof(*nc));
		if (!nc)
			return ks_error_set(e, KS_ENOMEM, "grow child list of node %d", parent);
		p->children = nc;
		p->children_alloc = na;
	}
	p->children[p->nchildren++] = child;
	w->nodes[child].parent = parent;
	return 0;
}

void ks_world_unlink(struct ks_world *w, int child)
{
	int parent = w->nodes[child].parent;
	struct ks_node *p;
	if (parent < 0)
		return;
	p = &w->nodes[parent];
	for (int i = 0; i < p->nchildren; i++) {
		if (p->children[i] == child) {
			memmove(&p->children[i], &p->children[i + 1],
				(size_t)(p->nchildren - i - 1) * sizeof(int));
			p->nchildren--;
			return;
		}
	}
}

int ks_world_is_ancestor(const struct ks_world *w, int anc, int id)
{
	/* bounded walk: a corrupted parent chain cannot loop forever */
	for (int steps = 0; id >= 0 && steps <= w->nnodes; steps++) {
		if (id == anc)
			return 1;
		id = w->nodes[id].parent;
	}
	return 0;
}

void ks_world_node_release(struct ks_node *n)
{
	int id = n->id;
	free(n->children);
	free(n->title);
	free(n->description);
	for (int k = 0; k < KS_IMPACT_COUNT; k++) {
		free(n->impacts[k].risk);
		free(n->impacts[k].notes);
	}
	free(n->payload);
	free(n->move);
	free(n->ext_id);
	free(n->rationale);
	free(n->reflection);
	memset(n, 0, sizeof(*n));
	n->id = id;
	n->parent = -1;
	n->deleted = 1;
	n->candidate = -1;
}

void ks_world_note(struct ks_buf *notes, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!notes) {
		ks_warn("%s", line);
		return;
	}
	/* a full notes buffer loses lines, never the edit */
	if (ks_buf_adds(notes, line) == 0)
		ks_buf_adds(notes, "\n");
}

int ks_world_init(struct ks_world *w, const char *root_title, const char *kernel_summary,
		  struct ks_error *e)
{
	int rc;
	memset(w, 0, sizeof(*w));
	ks_world_params_default(&w->params);
	w->active_leaf = -1;
	rc = ks_world_node_alloc(w, 0, e);
	if (rc)
		return rc;
	w->root = 0;
	rc = ks_world_set_text(&w->nodes[0].title, root_title ? root_title : "baseline", e);
	if (!rc)
		rc = ks_world_set_text(&w->kernel_summary, kernel_summary, e);
	if (rc)
		ks_world_release(w);
	return rc;
}

void ks_world_release(struct ks_world *w)
{
	for (int i = 0; i < w->nnodes; i++)
		ks_world_node_release(&w->nodes[i]);
	free(w->nodes);
	free(w->kernel_summary);
	for (int i = 0; i < w->nquestions; i++)
		free(w->open_questions[i]);
	free(w->open_questions);
	for (int i = 0; i < w->nmoves; i++)
		free(w->moves[i].move);
	free(w->moves);
	memset(w, 0, sizeof(*w));
	w->root = -1;
	w->active_leaf = -1;
}

static char *dup_or_null(const char *s, int *fail)
{
	char *d;
	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*fail = 1;
	return d;
}

int ks_world_clone(struct ks_world *dst, const struct ks_world *src, struct ks_error *e)
{
	int fail = 0;
	memset(dst, 0, sizeof(*dst));
	dst->root = src->root;
	dst->active_leaf = src->active_leaf;
	dst->records = src->records;
	dst->params = src->params;
	dst->nodes = calloc(src->alloc ? (size_t)src->alloc : 1, sizeof(*dst->nodes));
	dst->alloc = src->alloc;
	if (!dst->nodes)
		goto nomem;
	for (int i = 0; i < src->nnodes; i++) {
		const struct ks_node *s = &src->nodes[i];
		struct ks_node *d = &dst->nodes[i];
		*d = *s;
		d->children = NULL;
		d->children_alloc = 0;
		d->title = dup_or_null(s->title, &fail);
		d->description = dup_or_null(s->description, &fail);
		for (int k = 0; k < KS_IMPACT_COUNT; k++) {
			d->impacts[k].risk = dup_or_null(s->impacts[k].risk, &fail);
			d->impacts[k].notes = dup_or_null(s->impacts[k].notes, &fail);
		}
		d->payload = dup_or_null(s->payload, &fail);
		d->move = dup_or_null(s->move, &fail);
		d->ext_id = dup_or_null(s->ext_id, &fail);
		d->rationale = dup_or_null(s->rationale, &fail);
		d->reflection = dup_or_null(s->reflection, &fail);
		dst->nnodes = i + 1;
		if (s->nchildren) {
			d->children = malloc((size_t)s->nchildren * sizeof(int));
			if (!d->children)
				goto nomem;
			memcpy(d->children, s->children, (size_t)s->nchildren * sizeof(int));
			d->children_alloc = s->nchildren;
		}
		if (fail)
			goto nomem;
	}
	dst->kernel_summary = dup_or_null(src->kernel_summary, &fail);
	if (src->nquestions) {
		dst->open_questions = calloc((size_t)src->nquestions, sizeof(char *));
		if (!dst->open_questions)
			goto nomem;
		for (int i = 0; i < src->nquestions; i++)
			dst->open_questions[i] = dup_or_null(src->open_questions[i], &fail);
		dst->nquestions = src->nquestions;
	}
	if (src->nmoves) {
		dst->moves = calloc((size_t)src->nmoves, sizeof(*dst->moves));
		if (!dst->moves)
			goto nomem;
		for (int i = 0; i < src->nmoves; i++) {
			dst->moves[i] = src->moves[i];
			dst->moves[i].move = dup_or_null(src->moves[i].move, &fail);
		}
		dst->nmoves = dst->moves_alloc = src->nmoves;
	}
	if (fail)
		goto nomem;
	return 0;
nomem:
	ks_world_release(dst);
	return ks_error_set(e, KS_ENOMEM, "clone world model");
}

struct ks_node *ks_world_node(const struct ks_world *w, int id)
{
	if (id < 0 || id >= w->nnodes || w->nodes[id].deleted)
		return NULL;
	return &w->nodes[id];
}

int ks_world_count(const struct ks_world *w)
{
	int n = 0;
	for (int i = 0; i < w->nnodes; i++)
		n += !w->nodes[i].deleted;
	return n;
}

static int spec_check(const struct ks_node_spec *s, struct ks_error *e)
{
	if (!s->title || !*s->title)
		return ks_error_set(e, KS_EINVAL, "node needs a non-empty title");
	if (s->difficulty < 1 || s->difficulty > 5)
		return ks_error_set(e, KS_EINVAL, "difficulty %d outside [1, 5]", s->difficulty);
	if (!(s->rating >= 0 && s->rating <= 10))
		return ks_error_set(e, KS_EINVAL, "rating %g outside [0, 10]", s->rating);
	if (!(s->confidence >= 0 && s->confidence <= 1))
		return ks_error_set(e, KS_EINVAL, "confidence %g outside [0, 1]", s->confidence);
	return 0;
}

int ks_world_add(struct ks_world *w, int parent, const struct ks_node_spec *spec, int *id,
		 struct ks_error *e)
{
	int nid = w->nnodes, rc;
	struct ks_node *n;
	if (!ks_world_node(w, parent))
		return ks_error_set(e, KS_ENOTFOUND, "add node: no parent node %d", parent);
	rc = spec_check(spec, e);
	for (int k = 0; !rc && k < KS_IMPACT_COUNT; k++)
		if (!(spec->impacts[k] >= 0 && spec->impacts[k] <= 10))
			rc = ks_error_set(e, KS_EINVAL, "impact %s %g outside [0, 10]",
					  ks_impact_name((enum ks_impact_kind)k), spec->impacts[k]);
	if (rc)
		return ks_error_wrap(e, "add node '%s'", spec->title ? spec->title : "");
	rc = ks_world_node_alloc(w, nid, e);
	if (rc)
		return rc;
	n = &w->nodes[nid];
	rc = ks_world_set_text(&n->title, spec->title, e);
	if (!rc)
		rc = ks_world_set_text(&n->description, spec->description, e);
	if (!rc)
		rc = ks_world_set_payload(n, spec->payload, e);
	if (!rc)
		rc = ks_world_link(w, parent, nid, e);
	if (rc) {
		ks_world_node_release(n);
		w->nnodes--;
		return rc;
	}
	n->difficulty = spec->difficulty;
	for (int k = 0; k < KS_IMPACT_COUNT; k++)
		n->impacts[k].score = spec->impacts[k];
	n->prior_rating = spec->rating;
	n->prior_confidence = n->confidence = spec->confidence;
	/* evidence already gathered for this move applies to the newcomer too */
	if (n->move) {
		const struct ks_move_stat *m = ks_world_move_stat(w, n->move);
		if (m) {
			double gain;
			ks_world_move_effect(w, m, &n->learned_shift, &gain);
			n->confidence = n->prior_confidence + (1.0 - n->prior_confidence) * gain;
		}
	}
	ks_world_node_rerate(n);
	if (id)
		*id = nid;
	return 0;
}

int ks_world_set_status(struct ks_world *w, int id, enum ks_node_status st, const char *reason,
			struct ks_error *e)
{
	struct ks_node *n = ks_world_node(w, id);
	if (!n)
		return ks_error_set(e, KS_ENOTFOUND, "set status: no node %d", id);
	if ((unsigned)st > KS_NODE_PRUNED)
		return ks_error_set(e, KS_EINVAL, "set status of node %d: bad status %d", id, st);
	n->status = st;
	n->close_reason = (st == KS_NODE_CLOSED || st == KS_NODE_PRUNED) ? reason : NULL;
	return 0;
}

int ks_world_rescore(struct ks_world *w, int id, double prior_rating, double confidence,
		     struct ks_error *e)
{
	struct ks_node *n = ks_world_node(w, id);
	if (!n)
		return ks_error_set(e, KS_ENOTFOUND, "rescore: no node %d", id);
	if (!(prior_rating >= -100 && prior_rating <= 100))
		return ks_error_set(e, KS_EINVAL, "rescore node %d: rating %g out of range", id,
				    prior_rating);
	n->prior_rating = prior_rating;
	if (confidence >= 0) {
		double gain = n->confidence > n->prior_confidence && n->prior_confidence < 1
				      ? (n->confidence - n->prior_confidence) /
						(1.0 - n->prior_confidence)
				      : 0.0;
		n->prior_confidence = ks_clamp(confidence, 0, 1);
		n->confidence = n->prior_confidence + (1.0 - n->prior_confidence) * gain;
	}
	ks_world_node_rerate(n);
	return 0;
}

int ks_world_add_question(struct ks_world *w, const char *q, struct ks_error *e)
{
	char **nq;
	char *copy = NULL;
	int rc = ks_world_set_text(&copy, q, e);
	if (rc)
		return rc;
	if (w->nquestions >= 1000) {
		free(copy);
		return ks_error_set(e, KS_ELIMIT, "too many open questions");
	}
	nq = realloc(w->open_questions, (size_t)(w->nquestions + 1) * sizeof(char *));
	if (!nq) {
		free(copy);
		return ks_error_set(e, KS_ENOMEM, "add open question");
	}
	w->open_questions = nq;
	w->open_questions[w->nquestions++] = copy;
	return 0;
}

int ks_world_reflect(struct ks_world *w, int id, const char *note, struct ks_error *e)
{
	struct ks_node *n = ks_world_node(w, id);
	if (!n)
		return ks_error_set(e, KS_ENOTFOUND, "reflect: no node %d", id);
	if (!note || !*note)
		return 0;
	struct ks_buf b = KS_BUF_INIT;
	if (n->reflection)
		ks_buf_addf(&b, "%s\n", n->reflection);
	ks_buf_adds(&b, note);
	if (ks_buf_failed(&b)) {
		ks_buf_release(&b);
		return ks_error_set(e, KS_ENOMEM, "reflect on node %d", id);
	}
	/* keep the newest notes: drop whole lines from the front */
	const char *p = ks_buf_str(&b);
	while (strlen(p) > KS_WORLD_MAX_TEXT) {
		const char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : p + strlen(p) - KS_WORLD_MAX_TEXT;
	}
	int rc = ks_world_set_text(&n->reflection, p, e);
	ks_buf_release(&b);
	return rc;
}
