/* The text the model-driven policies show the model about the run: the tree, one action,
 * one result, one attempt of a cycle, a candidate's code with its knob values, how far the
 * measurements can be trusted. */
#ifndef KS_POLICY_LLM_TEXT_H
#define KS_POLICY_LLM_TEXT_H

#include "ksearch/buf.h"
#include "ksearch/eval.h"
#include "ksearch/world.h"

#define KS_LLM_FEEDBACK_LOG 600   /* bytes of a workload's log shown to the model */
#define KS_LLM_COMPILE_LOG 4000   /* bytes of a compiler's output shown to the model */

/* text: what the measurements say of candidate a against candidate b, both named
 * (ks_llm_compare_text), appended to out; nothing when they cannot say.  kernel (may be
 * NULL): what node's measured kernel, candidate, does that the node's title may not say
 * (a later kernel than the one that implemented it); nothing when it is that one */
struct ks_llm_versus {
	void (*text)(void *ctx, long a, long b, struct ks_buf *out);
	void (*kernel)(void *ctx, int node, long candidate, struct ks_buf *out);
	void *ctx;
};
/* every node (full: with descriptions, rationales and reflection notes) or the root, open
 * nodes and measured ones (brief); a node whose speedup is lower than the best kernel above
 * it on its path names that kernel and what vs (may be NULL) says of the two, and a node
 * whose measured kernel is not the one its title was written for says so (vs->kernel) */
void ks_llm_tree_text(const struct ks_world *w, int full, const struct ks_llm_versus *vs,
		      struct ks_buf *out);
/* title, description, scores, expected speedup, rationale and notes of node id */
void ks_llm_node_text(const struct ks_world *w, int id, struct ks_buf *out);
/* status, speedup, compiler output and per-workload times, errors and logs */
void ks_llm_feedback_text(const struct ks_eval_result *r, struct ks_buf *out);
/* one attempt of a cycle in two lines: status and speedup, then the speedup with its spread
 * per timed workload (or the first failing workload's error); r may be NULL (measured
 * before a resume) */
void ks_llm_attempt_text(long candidate, int status, int passed, double score,
			 const struct ks_eval_result *r, struct ks_buf *out);

/* src with the knob values of defines ("-DNAME=VALUE ...") made its own, so the code reads as
 * it ran: each knob's "default:" in the @ksearch block and each "#define NAME ..." line take
 * the value; a knob the source never #defines gets a guarded #define on top (llm_code.c) */
void ks_llm_bake_knobs(const char *src, const char *defines, struct ks_buf *out);

/* ---- how far the measurements can be trusted (llm_noise.c) ---- */

#define KS_LLM_TIMES_MAX 32

/* one candidate's median time and spread on each timed workload */
struct ks_llm_time {
	int wl;          /* the workload's index in the task */
	char label[96];  /* "rows=2048 cols=2048" */
	double us;       /* median */
	double spread;   /* interquartile range, % of the median */
};
struct ks_llm_times {
	int n;
	struct ks_llm_time t[KS_LLM_TIMES_MAX];
};

/* per workload of a: 1 faster than b beyond the spreads (ks_run_faster_beyond_noise), -1
 * slower, 0 inside the spreads, 2 not timed in b; returns the workloads both have */
int ks_llm_compare(const struct ks_llm_times *a, const struct ks_llm_times *b, int *verdict);
/* a against b, both named, so the reader never guesses which is slower: "candidate 4 is
 * slower than candidate 9 beyond the spreads on every timed workload", "no measured
 * difference between candidate 4 and candidate 9: inside the spreads on every timed
 * workload", "candidate 4 is faster than candidate 9 beyond the spreads on A; no measured
 * difference (inside the spreads) on B", ... */
void ks_llm_compare_text(const struct ks_llm_times *a, const char *aname,
			 const struct ks_llm_times *b, const char *bname, struct ks_buf *out);

/* what the model is told about the machine while kernels were timed */
struct ks_llm_machine {
	double load;            /* load average (1 min) at the last timing, or now */
	double load_min, load_max; /* over the kernels timed */
	int ncpu;               /* online CPUs: the machine is loaded when load > ncpu */
	int ntimed;             /* kernels timed in this run */
	double spread_max, spread_median; /* over their timed workloads, % */
};
void ks_llm_noise_text(const struct ks_llm_machine *m, struct ks_buf *out);

#endif
