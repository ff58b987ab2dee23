/* The text the llm policy shows the model: the task, the tree, one action, one result. */
#ifndef KS_POLICY_LLM_TEXT_H
#define KS_POLICY_LLM_TEXT_H

#include "ksearch/buf.h"
#include "ksearch/eval.h"
#include "ksearch/policy.h"
#include "ksearch/world.h"

#define KS_LLM_FEEDBACK_LOG 600 /* bytes of a workload's log shown to the model */

/* name, prototype, tensors, tolerance, the workloads searched for and the checks, README */
void ks_llm_task_text(const struct ks_policy_env *env, struct ks_buf *out);
/* every node (full) or the root, open nodes and measured ones (brief) */
void ks_llm_tree_text(const struct ks_world *w, int full, struct ks_buf *out);
/* title, description, difficulty, rating and confidence of node id */
void ks_llm_node_text(const struct ks_world *w, int id, struct ks_buf *out);
/* status, speedup, compiler output and per-workload times, errors and logs */
void ks_llm_feedback_text(const struct ks_eval_result *r, struct ks_buf *out);

#endif
