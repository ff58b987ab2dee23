/* The text the model-driven policies show the model about the run: the tree, one action,
 * one result, one attempt of a cycle. */
#ifndef KS_POLICY_LLM_TEXT_H
#define KS_POLICY_LLM_TEXT_H

#include "ksearch/buf.h"
#include "ksearch/eval.h"
#include "ksearch/world.h"

#define KS_LLM_FEEDBACK_LOG 600 /* bytes of a workload's log shown to the model */

/* every node (full: with descriptions, rationales and reflection notes) or the root, open
 * nodes and measured ones (brief) */
void ks_llm_tree_text(const struct ks_world *w, int full, struct ks_buf *out);
/* title, description, scores, expected speedup, rationale and notes of node id */
void ks_llm_node_text(const struct ks_world *w, int id, struct ks_buf *out);
/* status, speedup, compiler output and per-workload times, errors and logs */
void ks_llm_feedback_text(const struct ks_eval_result *r, struct ks_buf *out);
/* one attempt of a cycle in two lines: status and speedup, then the speedup with its spread
 * per timed workload (or the first failing workload's error); r may be NULL (measured
 * before a resume) */
void ks_llm_attempt_text(long candidate, int status, int passed, double score,
			 const struct ks_eval_result *r, struct ks_buf *out);

#endif
