/* The world model: a persistent, scored decision tree of optimization actions.
 *
 * Nodes live in an arena and are named by integer ids (their index; ids are never reused,
 * a deleted node leaves a tombstone).  A root->leaf path is a full optimization plan,
 * siblings are competing alternatives, refining an idea adds a child.  The tree is read
 * directly through struct ks_world / struct ks_node (treat them as read-only) and changed
 * only through the functions below:
 *
 *   - edits proposed by a policy (an LLM, a script) go through ks_world_apply(), a JSON
 *     edit script applied as one transaction checked against the invariants;
 *   - the system (the search loop, the strategies) adds nodes with ks_world_add(), records
 *     measurements with ks_world_record() and re-scores with ks_world_rescore().
 *
 * Node pointers (ks_world_node(), &w->nodes[i]) are invalidated by any call that adds nodes
 * or applies a script; keep ids, not pointers.
 *
 * Node ids.  Every node has our integer id (its arena index).  A node the model named with a
 * string ("root", "a1") keeps that name as its ext_id; the model's ids are shown back to it
 * (ks_world_node_ref()) and any script may refer to a node by either id.  A string that is a
 * plain decimal number ("3") means the integer id, so the two kinds never collide.
 *
 * Edit script: a JSON array of ops, or an object {"ops": [...], "active_leaf_id": ID} (the
 * original K-Search shape) or {"edits": [...]} holding one.  ID is an integer or a string id.
 *
 *   {"op": "insert_node", "parent_id": ID, "node_id": ID?, "node": NODE}
 *   {"op": "update_node", "node_id": ID, "node": NODE-FIELDS}    (only the fields given change;
 *                                                                 "parent_id" moves the node)
 *   {"op": "split_node",  "node_id": ID, "parent_patch": NODE-FIELDS?,
 *                         "children": [NODE, NODE(, NODE)]}
 *   {"op": "delete_node", "node_id": ID}
 *
 * K-Search's names are accepted too: "patch" for update_node's "node", the new node's id as
 * "node"."node_id", and "parent_solution_id" (ignored: the system links candidates).
 *
 *   NODE = {"action": {"title": "...", "description": "...", "rationale": "...",
 *                      "difficulty_1_to_5": 2, "score_0_to_1": 0.6,
 *                      "expected_vs_baseline_factor": 1.4},
 *           "decision": "...", "choice": "...",       (the title of a new node without
 *                                                      action.title; updates ignore them)
 *           "difficulty_1_to_5": 2,                   (wins over action.difficulty_1_to_5)
 *           "impacts": {"memory_bandwidth":  {"score": 7, "risk": "...", "notes": "..."},
 *                       "register_pressure": 4,                      (a bare score)
 *                       "compute_hw_fit": {"rating_0_to_10": 6}},    (K-Search's key; its
 *                                          "compute_intensity_and_hw_fit" is the same axis)
 *           "overall_rating_0_to_10": 7.5, "confidence_0_to_1": 0.4,
 *           "status": "open" | "pruned",          (update_node only)
 *           "policy": {...}}                       (opaque policy payload, any JSON object)
 *
 * Mapping of K-Search's action fields: score_0_to_1 gives the rating (10 x score) when
 * overall_rating_0_to_10 is missing; rationale and expected_vs_baseline_factor are kept on
 * the node (shown back, not used for selection); K-Search's notes, node_type and
 * last_updated_round are ignored, and so is a solution_ref without a solution_id (one with a
 * solution_id is a forged measurement: the op is rejected).  Unknown fields are ignored
 * (an edit script's with a note).
 *
 * insert_node may name the new node's id (an unused integer, or a string id not in use) so
 * later ops of the same script can refer to it; otherwise ids are assigned in order.
 * split_node replaces a node's idea by 2-3 refined children: they are added under it and the
 * node itself is closed.
 *
 * Applying (ks_world_apply_ex): each op is checked against the tree as the ops before it left
 * it; an invalid op is skipped with its reason (KS_WORLD_APPLY_STRICT: it rejects the whole
 * script instead).  The ops kept are then applied as one transaction: when the result breaks
 * a whole-script invariant (more than KS_WORLD_MAX_NEW_PER_EDIT new nodes, a detached node)
 * nothing changes.  Per-op invariants: one immutable root (never updated, split, moved or
 * deleted); only the system attaches candidates (an op mentioning candidate/result/score/
 * attempt fields is rejected); no cycles; delete only open childless leaves without attempts;
 * ratings in [0,10], confidence and score in [0,1], impact scores in [0,10], difficulty an
 * integer in [1,5]; titles non-empty and bounded.
 *
 * JSON document (export/import, snapshots, prompts):
 *   {"kernel_summary": "...", "open_questions": ["..."],
 *    "decision_tree": {"root_id": 0, "active_leaf_id": 4, "nodes": [NODE-FULL, ...]},
 *    "move_evidence": [{"move": "BLOCK_M:+1", "n": 2, "sum_log_ratio": 0.31}]}
 * NODE-FULL is NODE plus "node_id", "ext_id" (the model's string id or null), "parent_id"
 * (null for the root), "children", "status", "move", "prior_rating", "learned_shift",
 * "attempts", "failures", "visits", "consecutive_failures", "since_improvement",
 * "regression", "close_reason", "reflection" and "result": {"candidate_id": 17, "score": 3.2} (null when
 * nothing passed yet).  Export writes integer ids; import also takes K-Search's document:
 * string ids (kept as ext_id; nodes get integer ids root first, then by depth), nodes in any
 * order, a root with null decision/choice, a missing root_id (the node without a parent);
 * a node whose parent is not in the document is attached to the root with a note. */
#ifndef KSEARCH_WORLD_H
#define KSEARCH_WORLD_H

#include <stddef.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "ksearch/impact.h"

#define KS_WORLD_MAX_NEW_PER_EDIT 3
#define KS_WORLD_MAX_NODES 100000 /* arena cap (ids at or above it are rejected) */
#define KS_WORLD_MAX_TEXT 4096    /* cap on titles, descriptions, notes (bytes) */
#define KS_WORLD_MAX_PAYLOAD 65536 /* cap on a node's policy payload (bytes of JSON) */
#define KS_WORLD_MAX_JSON ((size_t)64 << 20) /* cap on an imported document or edit script */
#define KS_WORLD_MAX_EXT_ID 64    /* cap on a model's string node id (bytes) */
#define KS_WORLD_MAX_OPS 100      /* ops read from one edit script (the rest are skipped) */
#define KS_WORLD_APPLY_STRICT 1u  /* ks_world_apply_ex: the first invalid op rejects the script */

enum ks_node_status {
	KS_NODE_OPEN,   /* may be selected */
	KS_NODE_ACTIVE, /* selected, its refinement session is running */
	KS_NODE_CLOSED, /* done: explored, stagnated, out of debug budget or split */
	KS_NODE_PRUNED, /* dead end, never selected again */
};

/* outcome of ks_world_record() for the node's refinement session */
enum ks_refine {
	KS_REFINE_CONTINUE,   /* keep refining this node */
	KS_REFINE_STAGNATED,  /* W attempts without improving the node's best: node closed */
	KS_REFINE_DEBUG_OUT,  /* debug budget of consecutive failures spent: node closed */
};

struct ks_impact {
	double score; /* 0-10, expected benefit along this axis */
	char *risk;   /* free text or NULL */
	char *notes;  /* free text or NULL */
};

struct ks_node {
	int id;          /* index in the arena */
	int parent;      /* parent id, -1 for the root */
	int deleted;     /* tombstone: everything else is meaningless */
	int *children;   /* child ids in insertion order */
	int nchildren;
	int children_alloc;
	char *title;       /* action.title */
	char *description; /* action.description (may be NULL) */
	int difficulty;    /* difficulty_1_to_5 */
	struct ks_impact impacts[KS_IMPACT_COUNT];
	double rating;        /* overall_rating_0_to_10 = clamp(prior_rating + learned_shift) */
	double prior_rating;  /* rating before cross-tree learning (set by inserts, edits, rescore) */
	double learned_shift; /* contribution of move evidence (see ks_world_learn) */
	double confidence;    /* confidence_0_to_1 */
	double prior_confidence; /* confidence before cross-tree learning */
	enum ks_node_status status;
	int attempts;             /* candidates recorded on this node */
	int failures;             /* of which failed (compile error, wrong, timeout, ...) */
	int visits;               /* times selected (ks_world_begin) */
	int consecutive_failures; /* failures since the last pass (debug budget) */
	int since_improvement;    /* attempts since the best last improved (stagnation window) */
	int regression;           /* 1: its best is worse than its base's best */
	const char *close_reason; /* static text once closed by the system, else NULL */
	long candidate;           /* best attached candidate id, -1 none (system only) */
	double score;             /* its measured score (speedup), valid when candidate >= 0 */
	char *payload;            /* opaque policy payload (JSON text) or NULL */
	char *move;               /* move key from the payload's "move" string, or NULL */
	char *ext_id;             /* the model's string id ("a1") or NULL: see "Node ids" */
	char *rationale;          /* action.rationale (may be NULL) */
	double expected_factor;   /* action.expected_vs_baseline_factor, 0 when not given */
	char *reflection;         /* the model's reflection notes on this node's cycles (system
				     only: ks_world_reflect), newest last, or NULL */
};

/* per-move evidence: effects (child score / base score) measured for one move key */
struct ks_move_stat {
	char *move;           /* "BLOCK_M:+1", "BLOCK_M:64->128", ... */
	int n;                /* measurements */
	double sum_log_ratio; /* sum of ln(ratio) */
};

/* selection, refinement and learning knobs; ks_world_params_default() fills them */
struct ks_world_params {
	double explore;          /* weight of the exploration term sqrt(ln(1+T)/(1+visits)) */
	double fail_penalty;     /* subtracted per unit of failures/(attempts+1) */
	int difficulty_base;     /* difficulty eligible from the start (2) */
	int difficulty_step;     /* records after which the gate rises by one (8) */
	int stagnation_window;   /* W: attempts without improvement that close a node (5) */
	int debug_budget;        /* consecutive failures that close a node (3) */
	double learn_scale;      /* rating points per unit of mean ln(ratio) (10) */
	double learn_strength;   /* pseudo-count of the prior in the shrinkage (2) */
};

struct ks_world {
	struct ks_node *nodes; /* arena, index = id */
	int nnodes;            /* ids in use, tombstones included */
	int alloc;
	int root;        /* root id (0 after ks_world_init) */
	int active_leaf; /* last node selected or recorded, -1 none */
	char *kernel_summary;
	char **open_questions;
	int nquestions;
	struct ks_move_stat *moves;
	int nmoves;
	int moves_alloc;
	int records; /* ks_world_record calls so far (run maturity, drives the difficulty gate) */
	struct ks_world_params params;
};

/* describes a node for ks_world_add(); NULL strings mean empty */
struct ks_node_spec {
	const char *title;
	const char *description;
	int difficulty;      /* 1-5 */
	double impacts[KS_IMPACT_COUNT]; /* scores 0-10 */
	double rating;       /* 0-10 */
	double confidence;   /* 0-1 */
	const char *payload; /* JSON object text or NULL; its "move" string becomes the move key */
};

void ks_world_params_default(struct ks_world_params *p);

/* an empty world whose root (id 0) carries title and summary */
int ks_world_init(struct ks_world *w, const char *root_title, const char *kernel_summary,
		  struct ks_error *e);
void ks_world_release(struct ks_world *w);
/* deep copy into an uninitialised dst */
int ks_world_clone(struct ks_world *dst, const struct ks_world *src, struct ks_error *e);

/* the live node with that id or NULL (out of range, deleted) */
struct ks_node *ks_world_node(const struct ks_world *w, int id);
/* live nodes */
int ks_world_count(const struct ks_world *w);

/* system insert under parent (no edit limits); *id gets the new id */
int ks_world_add(struct ks_world *w, int parent, const struct ks_node_spec *spec, int *id,
		 struct ks_error *e);
/* system status change (e.g. closing a node whose action is exhausted); reason is static text */
int ks_world_set_status(struct ks_world *w, int id, enum ks_node_status st, const char *reason,
			struct ks_error *e);
/* system re-score: set the prior rating (in [-100, 100]: it may lie outside the shown range
 * [0, 10], the rating is clamped) and the confidence when >= 0; the learned shift is kept */
int ks_world_rescore(struct ks_world *w, int id, double prior_rating, double confidence,
		     struct ks_error *e);
int ks_world_add_question(struct ks_world *w, const char *q, struct ks_error *e);
/* append a reflection note on node id (an edit round's CURRENT / FOLLOW_THROUGH / ...
 * notes on the node its cycle worked on); the oldest text goes first when the notes would
 * exceed KS_WORLD_MAX_TEXT */
int ks_world_reflect(struct ks_world *w, int id, const char *note, struct ks_error *e);

/* what ks_world_apply_ex() did */
struct ks_world_edit {
	int new_ids[KS_WORLD_MAX_NEW_PER_EDIT]; /* ids the script created, in order */
	int nnew;
	int applied; /* ops applied */
	int skipped; /* ops skipped, each with its reason in the notes */
};

/* Apply a JSON edit script (see the top of this file).  Invalid ops are skipped and their
 * reasons appended to notes, one line each ("op 2 (delete_node): node 'a3' has children:
 * only open childless leaves may be deleted"); notes may be NULL, then they are logged as
 * warnings.  Fails, leaving the tree unchanged, with KS_EPARSE (malformed script) or
 * KS_EINVARIANT / KS_EPARSE (no op was usable: e->msg gives the reasons; a whole-script
 * invariant broken) or, with KS_WORLD_APPLY_STRICT, at the first invalid op.  An empty op
 * list succeeds and changes nothing.  res may be NULL. */
int ks_world_apply_ex(struct ks_world *w, const char *script, unsigned flags,
		      struct ks_world_edit *res, struct ks_buf *notes, struct ks_error *e);
/* ks_world_apply_ex() without flags, skipped ops logged as warnings; new_ids (may be NULL)
 * receives up to KS_WORLD_MAX_NEW_PER_EDIT created ids */
int ks_world_apply(struct ks_world *w, const char *script, int *new_ids, int *nnew,
		   struct ks_error *e);

/* the node a reference names: its ext_id, or an integer id in decimal; -1 when none */
int ks_world_find(const struct ks_world *w, const char *ref);
/* the id to show the model for node id: its ext_id, else the integer id in decimal */
void ks_world_node_ref(const struct ks_world *w, int id, char *buf, size_t n);

/* ---- selection (select.c) ---- */

/* selection priority of a node: rating/10 + explore*(1-confidence/2)*sqrt(ln(1+T)/(1+visits))
 * - fail_penalty*failures/(attempts+1), T = total visits in the tree */
double ks_world_priority(const struct ks_world *w, int id);
/* 1 when the difficulty gate lets the node be chosen: difficulty <= difficulty_base +
 * records/difficulty_step, or every easier sibling has been tried (visited or not open) */
int ks_world_eligible(const struct ks_world *w, int id);
/* best open, eligible node by priority, lower id on ties; KS_ENOTFOUND when none is open.
 * Falls back to ineligible open nodes when the gate would leave nothing. Does not modify. */
int ks_world_select(const struct ks_world *w, int *id, struct ks_error *e);
/* start (or continue) a refinement session: status active, visits+1, active leaf */
int ks_world_begin(struct ks_world *w, int id, struct ks_error *e);

/* Record one evaluated candidate of node id (system only).  Updates attempts, failures, the
 * node's best (candidate id and score), the session counters and the regression flag (an open
 * node's session starts implicitly, as with ks_world_begin: active, visits + 1), and
 * on the node's first pass learns its move's effect (score / base score, see ks_world_learn).
 * *verdict (may be NULL) says whether the session continues; a closed session sets the node
 * closed.  score is the speedup (higher is better) and is ignored when !passed. */
int ks_world_record(struct ks_world *w, int id, long candidate, int passed, double score,
		    enum ks_refine *verdict, struct ks_error *e);
/* The node whose code children of id should build on: the node on the path root..id
 * (id included) with the best measured score, the deepest on ties; the root when nothing on
 * the path has a result.  A regressed node therefore hands its children to its best ancestor. */
int ks_world_base(const struct ks_world *w, int id);

/* ---- learning across the tree (world_ops.c) ---- */

/* Record a measured effect ratio (> 0) of move and re-rate every open node with that move key
 * except `except` (-1 for none): learned_shift = learn_scale * mean ln(ratio) * n/(n+k),
 * confidence moves toward 1 as n/(n+k), k = learn_strength.  A ratio > 1 raises, < 1 lowers. */
int ks_world_learn(struct ks_world *w, const char *move, double ratio, int except,
		   struct ks_error *e);
/* the evidence for a move key or NULL */
const struct ks_move_stat *ks_world_move_stat(const struct ks_world *w, const char *move);
/* current learned shift of a move key (0 without evidence) */
double ks_world_move_shift(const struct ks_world *w, const char *move);

/* ---- JSON (world_json.c) ---- */

/* the K-Search document (see the top of this file), appended to out */
int ks_world_export(const struct ks_world *w, struct ks_buf *out, struct ks_error *e);
/* rebuild a world (uninitialised w) from a document written by ks_world_export() or by the
 * original K-Search; checks ids, parents, ranges and cycles.  What it repaired (a dangling
 * parent attached to the root, a children list that disagrees with parent_id, an unknown
 * active_leaf_id) is appended to notes one line each, or logged as warnings when notes is
 * NULL. */
int ks_world_import_ex(struct ks_world *w, const char *json, struct ks_buf *notes,
		       struct ks_error *e);
/* ks_world_import_ex() with notes logged as warnings */
int ks_world_import(struct ks_world *w, const char *json, struct ks_error *e);

const char *ks_node_status_name(enum ks_node_status st);
/* seeds' impact key: "memory_bandwidth", "register_pressure", "compute_hw_fit" */
const char *ks_impact_name(enum ks_impact_kind k);

#endif
