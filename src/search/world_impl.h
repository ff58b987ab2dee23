/* Private helpers shared by world.c, world_ops.c, world_json.c and select.c. */
#ifndef KS_SEARCH_WORLD_IMPL_H
#define KS_SEARCH_WORLD_IMPL_H

#include <jansson.h>

#include "ksearch/world.h"

/* new zeroed live node with the given id (id == w->nnodes appends; a larger id leaves
 * tombstones), not yet linked to a parent */
int ks_world_node_alloc(struct ks_world *w, int id, struct ks_error *e);
/* append child to parent's list */
int ks_world_link(struct ks_world *w, int parent, int child, struct ks_error *e);
/* remove child from its parent's list (parent unchanged on the child) */
void ks_world_unlink(struct ks_world *w, int child);
/* 1 when anc is id or one of its ancestors */
int ks_world_is_ancestor(const struct ks_world *w, int anc, int id);
/* replace *dst by a copy of src (NULL clears); KS_ELIMIT beyond KS_WORLD_MAX_TEXT */
int ks_world_set_text(char **dst, const char *src, struct ks_error *e);
/* validate the payload as a JSON object, store it and its "move" key */
int ks_world_set_payload(struct ks_node *n, const char *json, struct ks_error *e);
/* rating = clamp(prior + shift, 0, 10) */
void ks_world_node_rerate(struct ks_node *n);
/* shift and confidence gain a move's evidence implies */
void ks_world_move_effect(const struct ks_world *w, const struct ks_move_stat *m, double *shift,
			  double *gain);
/* find or create the evidence entry of a move key (no re-rating) */
int ks_world_move_entry(struct ks_world *w, const char *move, struct ks_move_stat **out,
			struct ks_error *e);
double ks_clamp(double x, double lo, double hi);
/* free a node's contents and leave a tombstone with the same id */
void ks_world_node_release(struct ks_node *n);
/* a line for the caller: appended to notes, or logged as a warning when notes is NULL */
void ks_world_note(struct ks_buf *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- ids in JSON (world_fields.c) ---- */

/* a node id as written: an integer or a decimal string sets *num (ext NULL), any other
 * string sets *ext (num -1); KS_EPARSE for other types, empty or over-long strings */
int ks_world_id_parse(json_t *v, int *num, const char **ext, struct ks_error *e);
/* the live node a JSON reference names, or -1 */
int ks_world_ref(const struct ks_world *w, json_t *v);
/* a JSON reference as text for messages: 42 or 'a1' */
void ks_world_ref_text(json_t *v, char *buf, size_t n);

/* the first key of obj that carries a measurement only the system may write, or NULL */
const char *ks_world_forged_key(json_t *obj);

/* ---- node fields shared by import and edit scripts (world_fields.c) ---- */

#define KS_NODE_IN_EDIT 1u /* an edit script: fractional difficulty is an error, unknown
			    * fields are noted, forged measurements are rejected */

struct ks_node_in_impact {
	int set_score, set_risk, set_notes;
	double score;
	const char *risk, *notes; /* NULL clears */
};

/* the NODE fields of one JSON object, validated; strings point into the JSON */
struct ks_node_in {
	const char *title; /* action.title, else decision/choice (in composed); NULL: not given */
	int title_composed; /* title is "decision: choice" (updates keep the title they have) */
	int set_description, set_rationale;
	const char *description, *rationale; /* NULL clears */
	int difficulty;    /* 0: not given */
	double rating;     /* < 0: not given */
	double confidence; /* < 0: not given */
	double expected;   /* < 0: not given, 0: cleared */
	struct ks_node_in_impact impacts[KS_IMPACT_COUNT];
	char composed[KS_WORLD_MAX_TEXT + 1]; /* "decision: choice" */
};

/* read obj into in; errors name the field ("'confidence_0_to_1' = 2 outside [0, 1]") and
 * where prefixes the notes ("op 2 (update_node)") */
int ks_node_in_read(struct ks_node_in *in, json_t *obj, unsigned flags, const char *where,
		    struct ks_buf *notes, struct ks_error *e);
/* set the given fields on n (a rating also sets the prior: rating - learned_shift) */
int ks_node_in_apply(struct ks_node *n, const struct ks_node_in *in, struct ks_error *e);

#endif
