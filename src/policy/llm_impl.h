/* Internal to the model-driven policies (llm, cmd, files): their state and the steps of the
 * K-Search loop, one file each:
 *
 *   llm_policy.c   the interface: propose and observe, the phases below
 *   llm_ask.c      building a prompt, asking, what a reply came to; what ksearch tells the
 *                  model it could not use (notes, events)
 *   llm_world.c    the world model: init and edit rounds, choosing the next node (the
 *                  model's active_leaf_id when it keeps the rules)
 *   llm_session.c  a cycle on one node: action, debug, improve, repeat, direct kernels;
 *                  credit to the node a kernel implements; the cycle's attempts
 *   llm_tune.c     tuning the knobs of an @ksearch kernel the model wrote, and of the
 *                  run's fastest kernel in the budget's last candidates
 *   llm_kernels.c  what each kernel of the run is (its node, what it started from, its
 *                  reply's CHANGED line): the tree's note on a node whose fastest kernel
 *                  is not the one that first implemented its title
 *   llm_code.c     a candidate's code as the model reads it (knob values baked in), named
 *   llm_noise.c    how far the measurements can be trusted: load, spreads, verdicts
 */
#ifndef KS_POLICY_LLM_IMPL_H
#define KS_POLICY_LLM_IMPL_H

#include "ksearch/policy.h"
#include "ksearch/strategy.h"
#include "ksearch/template.h"
#include "ksearch/world.h"
#include "policy/llm.h"
#include "policy/llm_context.h"
#include "policy/llm_prompt.h"
#include "policy/llm_text.h"

#define LLM_MAX_FAILS 8          /* default --llm-max-failures */
#define LLM_NOCODE_MAX 2         /* sessions without code before a node is closed */
#define LLM_TUNE_SHARE 4         /* knob tuning spends at most 1/4 of the budget left */
#define LLM_TUNE_RESERVE 8       /* ... but the budget's last 1/8 (at least 1 candidate) is
				    kept for the knobs of the run's fastest kernel (llm_tune.c) */
#define LLM_CYCLE_SHARE 4        /* an edit round once a cycle has 1/4 of the budget */
/* which candidates that count holds, as the log and the edit prompt say it */
#define LLM_CYCLE_COUNTS                                                                     \
	"knob tuning's included; a kernel's knob tuning is finished first, so a cycle can pass " \
	"that count"

enum phase {
	PH_INIT,   /* ask for the world model */
	PH_SELECT, /* choose an open action and ask for its code */
	PH_NEXT,   /* ask for a debug, improve or repeat version of the cycle's kernel */
	PH_TUNE,   /* the nested builtin policy proposes knob values */
	PH_EDIT,   /* ask for an edit of the tree */
	PH_DIRECT, /* ask for a kernel faster than the best */
};

/* what an ask came to */
enum ask_result { ASK_OK, ASK_UNUSABLE, ASK_STOP };

struct fb_entry {
	long id;
	char *text;
};

/* a kernel of the run as the tree needs it (llm_kernels.c) */
struct kernel_note {
	long id, parent;  /* the candidate and the one it started from */
	long of;          /* a knob tuning's: the kernel tuned; -1 for the model's kernels */
	int node;         /* the node it was credited to */
	char *changed;    /* its reply's CHANGED line (NULL: none, or a knob tuning's) */
};

/* a node ksearch made with placeholder scores (an IMPLEMENTS: new line, a kernel found in
 * an init or edit reply, a direct kernel), until an edit scores it */
#define LLM_PLACEHOLDER_RATING 5
#define LLM_PLACEHOLDER_CONFIDENCE 0.3
#define LLM_PLACEHOLDER_DIFFICULTY 2

struct lp {
	struct ks_policy_env env;
	struct ks_llm_policy pol;
	struct ks_llm_context ctx; /* task, reference, hardware, knowledge, starting kernel */
	struct ks_world w;
	int have_world;
	int fails, max_fails;  /* consecutive replies that gave nothing new */
	int evaluated;         /* candidates observed (repeats not counted) */
	int stop;
	char stop_reason[256];
	int *nocode;           /* per node: sessions that produced no code */
	int nnocode;
	struct fb_entry *fb;   /* feedback text per evaluated candidate */
	int nfb;
	char **tuned;          /* sources whose knobs were tuned already */
	long *tuned_id;        /* ... the candidate each was tuned as */
	int ntuned;
	int *unscored;         /* nodes with placeholder scores (LLM_PLACEHOLDER_*) */
	int nunscored;
	struct ks_llm_machine machine; /* the load while kernels were timed */
	double *spreads;       /* every timed workload's spread so far, % */
	int nspreads;
	enum phase phase;
	int no_open;           /* the current edit round was asked because no action is open */
	int idle;              /* selects in a row that found no open action */
	int want_leaf;         /* the node the model named next (active_leaf_id), -1 none */
	char want_ref[64];     /* ... as it named it */
	struct ks_buf notes;   /* what ksearch could not use since the last prompt, and why */
	/* the cycle: one node's refinement session, then an edit round */
	int node;
	int base_node;         /* the node whose kernel the cycle built on (its nearest
				  measured node: the tree says what refines what) */
	long base_cand;
	long *cycle;           /* the cycle's passing candidates, knob tuning included */
	int ncycle;
	int cycle_evals;       /* candidates evaluated since the last edit round, knob
				  tuning's included */
	int cycle_tuned;       /* ... of them knob tuning's */
	int cycle_cap;         /* an edit round once a cycle has this many candidates (after
				  the knob tuning under way) */
	const char *kind;      /* action, debug, improve, repeat, direct */
	struct ks_buf action, title, code, base_code, evidence, last_fb, cand_title;
	struct ks_buf parent_why; /* why the cycle builds on base_cand, and on what else not */
	struct ks_buf attempts; /* this cycle's attempts, oldest first */
	int nattempts;
	struct ks_buf changed, expected, implements; /* the notes of the last code reply */
	struct ks_buf edit_notes; /* why ops of the last edit script were skipped */
	long best_id, parent, last_id, repeat_of;
	double best_score;
	int last_passed;
	enum ks_refine verdict;
	/* a kernel found in an init or edit reply, evaluated next */
	struct ks_buf pending;
	char pending_from[16];
	struct kernel_note *kernels; /* every kernel evaluated, in order */
	int nkernels;
	/* the run's fastest kernel so far, and its source when the model wrote it (empty when
	   it is a knob tuning's: its kernel's knobs were tuned) */
	long run_best_id;
	double run_best_score;
	int run_best_node;
	struct ks_buf run_best_code;
	/* knob tuning of the cycle's kernel, or of the run's fastest (reserved) */
	struct ks_policy tuner;
	int tuning, tune_cap, tune_spent;
	int tune_reserve;      /* the budget's last candidates kept for the fastest kernel */
	int tune_node;         /* the node the tuned kernel was credited to */
	int reserved;          /* this tuning is the reserve's, started between model kernels */
	enum phase resume;     /* ... the phase it interrupted */
	int node_was_open;     /* ... its node was open: it is again after the tuning */
	long tune_of, tune_best;  /* the kernel being tuned; the fastest of it and its tunings */
	double tune_best_score;
	int tune_feasible;
	struct ks_template *tune_tpl;
	struct ks_config_set tune_cs;
	struct ks_template *tune_tpls[1];
	struct ks_space tune_space;
};

/* llm_policy.c */
int llm_budget_left(const struct lp *L);
/* a replay whose recorded exchanges go on: the recorded run decided what came next */
int llm_replay_decides(const struct lp *L);
void llm_stop(struct lp *L, const char *why);
void llm_unusable(struct lp *L, const char *what);
const char *llm_fb_get(const struct lp *L, long id);

/* llm_code.c */
/* the source of candidate id with its knob values baked in (ks_llm_bake_knobs); the
 * starting kernel for id -1 */
int llm_candidate_code(struct lp *L, long id, struct ks_buf *out, struct ks_error *e);
/* "candidate 8 of node 5 \"...\", 8.278x the baseline; the knob tuning of candidate 7
 * with NT=1 ..." (the starting kernel for id -1); shown: its code follows (the values are
 * said to be written into it) */
void llm_code_from(struct lp *L, long id, int shown, struct ks_buf *out);
/* the kernel an action on node id builds on (L->base_node, L->base_cand), why that one, and
 * the other kernels measured on the node's path against it */
void llm_parent_why(struct lp *L, int id, struct ks_buf *out);
/* the cycle's best kernel (L->best_id) named, and the cycle's kernels the measurements do
 * not tell apart from it */
void llm_best_from(struct lp *L, struct ks_buf *out);
/* which kernel an improve or repeat reply starts from and why: the cycle's best, and when
 * it was credited to another node than the one the cycle is on now, that it was and
 * which node the reply's IMPLEMENTS line names */
void llm_best_start(struct lp *L, struct ks_buf *out);
/* the code of the cycle's best kernel (the one it started from when none passed) and the
 * text that names it */
int llm_cycle_best(struct lp *L, struct ks_buf *code, struct ks_buf *from, struct ks_error *e);

/* llm_noise.c */
/* candidate id's median and spread per timed workload (search phase); the number found */
int llm_times(struct lp *L, long id, struct ks_llm_times *t);
/* note the machine's load and the spreads of candidate id, just timed */
void llm_noise_observe(struct lp *L, long id);
/* the "how far to trust the measurements" section */
void llm_noise_text(struct lp *L, struct ks_buf *out);
/* id against other: ks_llm_compare_text; nothing when either has no timings */
void llm_versus(struct lp *L, long id, long other, struct ks_buf *out);

/* llm_ask.c */
/* Render template tmpl with state s and ask with purpose (tmpl, or "<tmpl>-fix" with a
 * correction appended); the notes are shown (and then cleared) when s shows them. */
int llm_ask(struct lp *L, const char *tmpl, const char *purpose, const char *correction,
	    struct ks_llm_state *s, enum ks_llm_want want, int max_fixes, struct ks_buf *out,
	    struct ks_llm_reply *reply, enum ask_result *res, struct ks_error *e);
/* tell the model, in its next prompt, what ksearch could not use and why; recorded as an
 * event of kind "llm_rejected" (what: unusable_reply, knob_block, active_leaf, repeat,
 * edit_ops, implements) */
void llm_reject(struct lp *L, const char *what, long candidate, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* the same as an event only (the model learns it otherwise: a repeat has its own prompt) */
void llm_event(struct lp *L, const char *what, long candidate, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* a kernel in a reply that was asked for JSON: evaluated next */
void llm_keep_reply_code(struct lp *L, const struct ks_llm_reply *r, const char *from);
/* the state every prompt of the cycle shares: node, action, notes, attempts */
void llm_state_base(struct lp *L, struct ks_llm_state *s, char *node_id, size_t n);
/* the tree in both forms into s (full and brief hold the text; release them) */
void llm_state_tree(struct lp *L, struct ks_llm_state *s, struct ks_buf *full,
		    struct ks_buf *brief);

/* llm_world.c */
/* node id has placeholder scores (LLM_PLACEHOLDER_*): the tree says so until an edit
 * scores it */
void llm_unscored_add(struct lp *L, int id);
/* the paragraph the tree carries while nodes have placeholder scores ("" when none) */
void llm_unscored_text(struct lp *L, struct ks_buf *out);
int llm_world_init(struct lp *L, struct ks_error *e);
int llm_world_edit(struct lp *L, struct ks_error *e);
/* the node to work on next: the model's choice when it keeps the rules, else by priority;
 * KS_ENOTFOUND when no action is open */
int llm_world_next(struct lp *L, int *id);

/* llm_session.c */
int llm_session_begin(struct lp *L, int id, const char *kind, struct ks_error *e);
void llm_session_end(struct lp *L, int reopen);
int llm_ask_action(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e);
int llm_ask_next(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e);
int llm_ask_direct(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e);
int llm_emit_pending(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e);
/* one line of the cycle's attempts for the outcome o of the kernel just evaluated, credited
 * to node */
void llm_attempt_add(struct lp *L, int node, const struct ks_policy_cand *c,
		     const struct ks_policy_outcome *o, const char *what);
/* after the cycle's kernel (and its tuning): go on with debug / improve / repeat, or end */
void llm_decide(struct lp *L);

/* llm_tune.c */
/* tune the knobs of the passed kernel code (outcome o) credited to node: 1 when started */
int llm_tune_start(struct lp *L, const char *code, const struct ks_policy_outcome *o, int node,
		   struct ks_error *e);
int llm_tune_next(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e);
void llm_tune_release(struct lp *L);
/* the budget's last candidates, before the model is asked for more: tune the knobs of the
 * run's fastest kernel when they never were (1 when its tuning started) */
int llm_tune_reserved(struct lp *L, struct ks_error *e);

/* llm_kernels.c */
/* candidate c's outcome o, credited to node: a knob tuning's when of >= 0 */
void llm_kernel_add(struct lp *L, const struct ks_policy_cand *c,
		    const struct ks_policy_outcome *o, int node, long of);
void llm_kernels_free(struct lp *L);
/* what node's measured kernel does that its title may not say (the tree's hook) */
void llm_kernel_text(void *ctx, int node, long candidate, struct ks_buf *out);

#endif
