/* One prompt from its template: the run-independent context (llm_context.h) and the run
 * state, each a piece filling the {{placeholder}} of its name.  Only the pieces a template
 * names are fitted to the token budget, so a template decides what its prompt holds. */
#ifndef KS_POLICY_LLM_PROMPT_H
#define KS_POLICY_LLM_PROMPT_H

#include "ksearch/llm.h"
#include "policy/llm_context.h"

#define KS_LLM_PROMPT_BUDGET 60000L /* prompt tokens (context window minus the reply) */
#define KS_CONTEXT_PRIO_NOTES 88     /* what ksearch could not use: small, never dropped */
#define KS_CONTEXT_PRIO_REFERENCE 80 /* the reference source */
#define KS_CONTEXT_PRIO_ATTEMPTS 65  /* this cycle's attempts */

/* The run state a prompt may show; NULL where the run has none yet ("(none)" is shown). */
struct ks_llm_state {
	const char *node_id;        /* the node being worked on, as the model knows it */
	const char *action;         /* its title, description, scores, notes */
	const char *parent_code;    /* code the action builds on */
	const char *candidate_code; /* the failing kernel (debug) */
	const char *base_code;      /* the cycle's known-good base (debug) */
	const char *best_code;      /* the cycle's (or the run's) best kernel */
	const char *code;           /* the cycle's kernel (edit) */
	/* which candidate each code above is (and, for the parent, why it was chosen): the
	 * feedback shown with a code is always that candidate's */
	const char *parent_from, *candidate_from, *base_from, *best_from, *code_from;
	const char *feedback;       /* per-workload results of the kernel shown */
	const char *noise;          /* how far the measurements can be trusted */
	const char *attempts;       /* this cycle's attempts */
	const char *evidence;       /* the last cycle in short (edit) */
	const char *notes;          /* what ksearch could not use, and why */
	const char *repeat;         /* which candidate the last kernel repeated */
	const char *tree, *tree_brief; /* the world model, full and short */
	int notes_shown;            /* out: the template showed the notes */
};

/* Render <tmpl>.txt and system.txt (from prompts_dir, NULL: the data root's) for the
 * backend named backend into sys and user. */
int ks_llm_prompt_make(const char *prompts_dir, const char *tmpl, const char *backend,
		       const struct ks_llm_context *c, struct ks_llm_state *s,
		       struct ks_buf *sys, struct ks_buf *user, struct ks_error *e);

#endif
