/* Node ids and NODE fields as both document shapes write them (ours and the original
 * K-Search's), read in one place for import and for edit scripts. */
#include "search/world_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EXPECTED_FACTOR 1e6

/* keys that carry measurements: only the system writes them */
static const char *const reserved_keys[] = {
	"candidate", "candidate_id", "candidates", "solution", "solution_id", "solution_ref",
	"result", "results", "score", "best_score", "measured", "measured_score", "speedup",
	"attempts", "failures", "visits", "regression", "consecutive_failures",
	"since_improvement", "learned_shift", "prior_rating", "close_reason", NULL};

/* fields of a NODE that are understood or deliberately ignored (K-Search's bookkeeping) */
static const char *const node_known[] = {
	"action", "decision", "choice", "difficulty_1_to_5", "impacts", "overall_rating_0_to_10",
	"confidence_0_to_1", "status", "policy", "parent_id", "node_id", "ext_id", "notes",
	"node_type", "last_updated_round", "solution_ref", "reflection", NULL};
static const char *const action_known[] = {
	"title", "description", "rationale", "difficulty_1_to_5", "difficulty_0_to_3",
	"score_0_to_1", "expected_vs_baseline_factor", NULL};
static const char *const impact_known[] = {"score", "rating_0_to_10", "risk", "notes",
					   "hw_notes", NULL};

static int in_list(const char *const *list, const char *k)
{
	for (; *list; list++)
		if (!strcmp(*list, k))
			return 1;
	return 0;
}

/* "3" -> 3; anything but a plain decimal number below the node cap -> -1 */
static int decimal_id(const char *s)
{
	long v = 0;
	if (!s[0] || (s[0] == '0' && s[1]))
		return -1;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
		if (v >= KS_WORLD_MAX_NODES)
			return -1;
	}
	return (int)v;
}

int ks_world_id_parse(json_t *v, int *num, const char **ext, struct ks_error *e)
{
	*num = -1;
	*ext = NULL;
	if (json_is_integer(v)) {
		json_int_t x = json_integer_value(v);
		if (x < 0 || x >= KS_WORLD_MAX_NODES)
			return ks_error_set(e, KS_EPARSE, "node id %lld outside [0, %d)", (long long)x,
					    KS_WORLD_MAX_NODES);
		*num = (int)x;
		return 0;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t n = json_string_length(v);
		if (!n || n > KS_WORLD_MAX_EXT_ID || strlen(s) != n)
			return ks_error_set(e, KS_EPARSE, "a string node id must have 1 to %d bytes",
					    KS_WORLD_MAX_EXT_ID);
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
				return ks_error_set(e, KS_EPARSE, "node id '%s' has control characters",
						    s);
		*num = decimal_id(s);
		if (*num < 0)
			*ext = s;
		return 0;
	}
	return ks_error_set(e, KS_EPARSE, "a node id must be an integer or a string");
}

int ks_world_find(const struct ks_world *w, const char *ref)
{
	int d;
	if (!ref || !*ref)
		return -1;
	d = decimal_id(ref);
	if (d >= 0)
		return ks_world_node(w, d) ? d : -1;
	for (int i = 0; i < w->nnodes; i++)
		if (!w->nodes[i].deleted && w->nodes[i].ext_id && !strcmp(w->nodes[i].ext_id, ref))
			return i;
	return -1;
}

int ks_world_ref(const struct ks_world *w, json_t *v)
{
	int num;
	const char *ext;
	if (ks_world_id_parse(v, &num, &ext, NULL))
		return -1;
	if (ext)
		return ks_world_find(w, ext);
	return ks_world_node(w, num) ? num : -1;
}

void ks_world_ref_text(json_t *v, char *buf, size_t n)
{
	if (json_is_integer(v))
		snprintf(buf, n, "%lld", (long long)json_integer_value(v));
	else if (json_is_string(v))
		snprintf(buf, n, "'%.*s'", KS_WORLD_MAX_EXT_ID, json_string_value(v));
	else
		snprintf(buf, n, "(not an id)");
}

void ks_world_node_ref(const struct ks_world *w, int id, char *buf, size_t n)
{
	const struct ks_node *node = ks_world_node(w, id);
	if (node && node->ext_id)
		snprintf(buf, n, "%s", node->ext_id);
	else
		snprintf(buf, n, "%d", id);
}

/* ---- NODE fields ---- */

/* a K-Search solution_ref without a solution_id is empty bookkeeping, not a measurement */
const char *ks_world_forged_key(json_t *obj)
{
	const char *k;
	json_t *v;
	json_object_foreach(obj, k, v)
	{
		if (!in_list(reserved_keys, k))
			continue;
		if (!strcmp(k, "solution_ref")) {
			json_t *sid = json_object_get(v, "solution_id");
			if (json_is_null(v) ||
			    (json_is_object(v) && (!sid || json_is_null(sid) ||
						   (json_is_string(sid) && !json_string_length(sid)))))
				continue;
		}
		return k;
	}
	return NULL;
}

static int number(json_t *v, const char *key, double lo, double hi, double *out,
		  struct ks_error *e)
{
	if (!json_is_number(v))
		return ks_error_set(e, KS_EPARSE, "'%s' must be a number", key);
	*out = json_number_value(v);
	if (!(*out >= lo && *out <= hi))
		return ks_error_set(e, KS_EINVARIANT, "'%s' = %g outside [%g, %g]", key, *out, lo,
				    hi);
	return 0;
}

static int text(json_t *v, const char *key, const char **out, struct ks_error *e)
{
	if (!v || json_is_null(v)) {
		*out = NULL;
		return 0;
	}
	if (!json_is_string(v))
		return ks_error_set(e, KS_EPARSE, "'%s' must be a string", key);
	if (json_string_length(v) > KS_WORLD_MAX_TEXT)
		return ks_error_set(e, KS_EINVARIANT, "'%s' is longer than %d bytes", key,
				    KS_WORLD_MAX_TEXT);
	*out = json_string_value(v);
	return 0;
}

static void note_unknown(json_t *obj, const char *const *known, const char *what,
			 const char *where, struct ks_buf *notes)
{
	const char *k;
	json_t *v;
	json_object_foreach(obj, k, v)
	{
		if (!in_list(known, k))
			ks_world_note(notes, "%s: ignored unknown field '%s%s'", where, what, k);
	}
}

static int read_difficulty(struct ks_node_in *in, json_t *o, json_t *act, unsigned flags,
			   struct ks_error *e)
{
	const char *key = "difficulty_1_to_5";
	json_t *v = json_object_get(o, key);
	double x = 0, shift = 0;
	int rc;
	if (json_is_null(v))
		v = NULL;
	if (!v && json_is_object(act)) {
		v = json_object_get(act, key);
		if (json_is_null(v))
			v = NULL;
		if (!v && (v = json_object_get(act, "difficulty_0_to_3")) && !json_is_null(v)) {
			key = "difficulty_0_to_3"; /* K-Search's older scale, one lower */
			shift = 1;
		}
		if (json_is_null(v))
			v = NULL;
	}
	if (!v)
		return 0;
	if ((rc = number(v, key, 1 - shift, 5 - shift, &x, e)))
		return rc;
	if (x != floor(x) && (flags & KS_NODE_IN_EDIT))
		return ks_error_set(e, KS_EINVARIANT, "'%s' = %g is not an integer", key, x);
	in->difficulty = (int)(x + shift);
	return 0;
}

static int read_title(struct ks_node_in *in, json_t *o, json_t *act, struct ks_error *e)
{
	const char *dec = NULL, *ch = NULL;
	json_t *t = json_is_object(act) ? json_object_get(act, "title") : act;
	int rc;
	if (t && !json_is_null(t)) {
		if ((rc = text(t, json_is_object(act) ? "action.title" : "action", &in->title, e)))
			return rc;
		if (in->title && !*in->title)
			in->title = NULL; /* K-Search's placeholder for "no action" */
	}
	if (in->title)
		return 0;
	/* a K-Search decision node: "decision -> choice" names it */
	if ((rc = text(json_object_get(o, "decision"), "decision", &dec, e)) ||
	    (rc = text(json_object_get(o, "choice"), "choice", &ch, e)))
		return rc;
	if (dec && !*dec)
		dec = NULL;
	if (ch && !*ch)
		ch = NULL;
	if (dec || ch) {
		snprintf(in->composed, sizeof(in->composed), "%s%s%s", dec ? dec : "",
			 dec && ch ? ": " : "", ch ? ch : "");
		in->title = in->composed;
		in->title_composed = 1;
	}
	return 0;
}

static int read_action(struct ks_node_in *in, json_t *o, json_t *act, struct ks_error *e)
{
	json_t *v;
	double x = 0; /* GCC 12 -O3 cannot see it is set before use */
	int rc;
	if (!json_is_object(act))
		return 0;
	if ((v = json_object_get(act, "description"))) {
		if ((rc = text(v, "action.description", &in->description, e)))
			return rc;
		in->set_description = 1;
	}
	if ((v = json_object_get(act, "rationale"))) {
		if ((rc = text(v, "action.rationale", &in->rationale, e)))
			return rc;
		in->set_rationale = 1;
	}
	if ((v = json_object_get(act, "expected_vs_baseline_factor"))) {
		x = 0;
		if (!json_is_null(v) && (rc = number(v, "action.expected_vs_baseline_factor", 0,
						     MAX_EXPECTED_FACTOR, &x, e)))
			return rc;
		in->expected = x;
	}
	v = json_object_get(act, "score_0_to_1");
	if (v && !json_is_null(v) && !json_object_get(o, "overall_rating_0_to_10")) {
		if ((rc = number(v, "action.score_0_to_1", 0, 1, &x, e)))
			return rc;
		in->rating = 10.0 * x;
	}
	return 0;
}

static int impact_kind(const char *name)
{
	if (!strcmp(name, "compute_intensity_and_hw_fit")) /* K-Search's name of the axis */
		return KS_IMPACT_COMPUTE_HW_FIT;
	for (int k = 0; k < KS_IMPACT_COUNT; k++)
		if (!strcmp(name, ks_impact_name((enum ks_impact_kind)k)))
			return k;
	return -1;
}

static int read_impacts(struct ks_node_in *in, json_t *imp, unsigned flags, const char *where,
			struct ks_buf *notes, struct ks_error *e)
{
	const char *ik;
	json_t *iv;
	char key[96];
	int rc;
	if (!imp || json_is_null(imp))
		return 0;
	if (!json_is_object(imp))
		return ks_error_set(e, KS_EPARSE, "'impacts' must be an object");
	json_object_foreach(imp, ik, iv)
	{
		int kind = impact_kind(ik);
		struct ks_node_in_impact *out;
		json_t *s;
		if (kind < 0) {
			if (flags & KS_NODE_IN_EDIT)
				ks_world_note(notes, "%s: ignored unknown impact '%s'", where, ik);
			continue;
		}
		out = &in->impacts[kind];
		snprintf(key, sizeof(key), "impacts.%s.score", ik);
		if (json_is_null(iv))
			continue;
		if (json_is_number(iv)) {
			if ((rc = number(iv, key, 0, 10, &out->score, e)))
				return rc;
			out->set_score = 1;
			continue;
		}
		if (!json_is_object(iv))
			return ks_error_set(e, KS_EPARSE, "'impacts.%s' must be an object or a number",
					    ik);
		if (flags & KS_NODE_IN_EDIT) {
			char what[96];
			snprintf(what, sizeof(what), "impacts.%s.", ik);
			note_unknown(iv, impact_known, what, where, notes);
		}
		s = json_object_get(iv, "score");
		if (!s || json_is_null(s))
			s = json_object_get(iv, "rating_0_to_10");
		if (s && !json_is_null(s)) {
			if ((rc = number(s, key, 0, 10, &out->score, e)))
				return rc;
			out->set_score = 1;
		}
		if (json_object_get(iv, "risk")) {
			snprintf(key, sizeof(key), "impacts.%s.risk", ik);
			if ((rc = text(json_object_get(iv, "risk"), key, &out->risk, e)))
				return rc;
			out->set_risk = 1;
		}
		if (json_object_get(iv, "notes")) {
			snprintf(key, sizeof(key), "impacts.%s.notes", ik);
			if ((rc = text(json_object_get(iv, "notes"), key, &out->notes, e)))
				return rc;
			out->set_notes = 1;
		}
	}
	return 0;
}

int ks_node_in_read(struct ks_node_in *in, json_t *o, unsigned flags, const char *where,
		    struct ks_buf *notes, struct ks_error *e)
{
	json_t *act, *v;
	int rc;
	memset(in, 0, sizeof(*in));
	in->rating = in->confidence = in->expected = -1;
	if (!json_is_object(o))
		return ks_error_set(e, KS_EPARSE, "a node must be an object");
	act = json_object_get(o, "action");
	if (flags & KS_NODE_IN_EDIT) {
		const char *k = ks_world_forged_key(o);
		if (!k && json_is_object(act))
			k = ks_world_forged_key(act);
		if (k)
			return ks_error_set(e, KS_EINVARIANT,
					    "node field '%s' is reserved: only the system attaches "
					    "candidates and results",
					    k);
		note_unknown(o, node_known, "", where, notes);
		if (json_is_object(act))
			note_unknown(act, action_known, "action.", where, notes);
	}
	if (act && !json_is_null(act) && !json_is_object(act) &&
	    !(json_is_string(act) && !(flags & KS_NODE_IN_EDIT)))
		return ks_error_set(e, KS_EPARSE, "'action' must be an object");
	if ((rc = read_title(in, o, act, e)) || (rc = read_action(in, o, act, e)) ||
	    (rc = read_difficulty(in, o, act, flags, e)) ||
	    (rc = read_impacts(in, json_object_get(o, "impacts"), flags, where, notes, e)))
		return rc;
	v = json_object_get(o, "overall_rating_0_to_10");
	if (v && !json_is_null(v) && (rc = number(v, "overall_rating_0_to_10", 0, 10, &in->rating, e)))
		return rc;
	v = json_object_get(o, "confidence_0_to_1");
	if (v && !json_is_null(v) && (rc = number(v, "confidence_0_to_1", 0, 1, &in->confidence, e)))
		return rc;
	return 0;
}

int ks_node_in_apply(struct ks_node *n, const struct ks_node_in *in, struct ks_error *e)
{
	int rc = 0;
	if (in->title)
		rc = ks_world_set_text(&n->title, in->title, e);
	if (!rc && in->set_description)
		rc = ks_world_set_text(&n->description, in->description, e);
	if (!rc && in->set_rationale)
		rc = ks_world_set_text(&n->rationale, in->rationale, e);
	for (int k = 0; !rc && k < KS_IMPACT_COUNT; k++) {
		const struct ks_node_in_impact *im = &in->impacts[k];
		if (im->set_risk)
			rc = ks_world_set_text(&n->impacts[k].risk, im->risk, e);
		if (!rc && im->set_notes)
			rc = ks_world_set_text(&n->impacts[k].notes, im->notes, e);
		if (im->set_score)
			n->impacts[k].score = im->score;
	}
	if (rc)
		return rc;
	if (in->difficulty)
		n->difficulty = in->difficulty;
	if (in->rating >= 0) {
		/* the rating a document states is the rating the node shows */
		n->rating = in->rating;
		n->prior_rating = in->rating - n->learned_shift;
	}
	if (in->confidence >= 0)
		n->confidence = n->prior_confidence = in->confidence;
	if (in->expected >= 0)
		n->expected_factor = in->expected;
	return 0;
}
