/* Private helpers shared by world.c, world_ops.c, world_json.c and select.c. */
#ifndef KS_SEARCH_WORLD_IMPL_H
#define KS_SEARCH_WORLD_IMPL_H

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

#endif
