/* What a model-driven run would send, without a run (ksearch/prompt.h): the run's context
 * and templates, placeholders for its state; and what it would take from a reply. */
#include "ksearch/prompt.h"

#include <stdio.h>
#include <string.h>

#include "ksearch/backend.h"
#include "ksearch/knowledge.h"
#include "ksearch/task.h"
#include "policy/llm_context.h"
#include "policy/llm_prompt.h"

const char *const ks_prompt_purposes[] = {"init",   "action", "improve", "debug",
					  "repeat", "edit",   "direct",  NULL};

/* where a run puts its state, what the placeholder says it holds */
static void placeholders(const struct ks_llm_context *c, const char *purpose,
			 struct ks_llm_state *s, char *from, size_t nfrom)
{
	memset(s, 0, sizeof(*s));
	int first = !strcmp(purpose, "init") || !strcmp(purpose, "action");
	s->node_id = "N";
	s->action = "<run state: node N's title and description, difficulty, rating and confidence, "
		    "the speedup the model expected and why, notes from earlier cycles on it>";
	/* init and a first action build on the starting kernel: shown as it is */
	s->parent_code = first ? ks_buf_str(&c->start)
			       : "<run state: the best measured kernel on node N's path>";
	s->candidate_code = "<run state: the kernel that failed>";
	s->base_code = "<run state: the kernel this cycle started from (it passed, or it is the "
		       "starting kernel)>";
	s->best_code = "<run state: the best kernel of this cycle (the run's best for direct)>";
	s->code = "<run state: the cycle's best kernel, its last when none passed>";
	snprintf(from, nfrom, "This is the starting kernel (%s).\nWhy this kernel: no node on "
		 "node N's path has a passing kernel yet.", c->start_what);
	s->parent_from = first ? from
			       : "<run state: which candidate of which node the parent is, its speedup "
				 "and knob values, why it was chosen (the nearest node on node N's "
				 "path with a measured kernel), and the other kernels measured on the "
				 "path against it>";
	s->candidate_from = "<run state: the failing candidate, its node and status>";
	s->base_from = "<run state: the candidate this cycle started from, its node and speedup>";
	s->best_from = "<run state: which candidate is the cycle's best (knob tunings included), "
		       "its speedup and knob values, and the cycle's kernels the measurements do "
		       "not tell apart from it>";
	s->code_from = "<run state: which candidate this is (the cycle's best, else its last) and "
		       "its speedup and knob values>";
	s->noise = "<run state: whether the machine was loaded while kernels were timed (load "
		   "average on N CPUs), how wide the timing spreads are, and the rule a difference "
		   "must pass to count (beyond both spreads)>";
	s->feedback = "<run state: per workload and check: status, median time and the baseline's, "
		      "speedup, GB/s, GFLOP/s, % of the roofline; errors, compiler output and the "
		      "first mismatches of failures>";
	s->attempts = "<run state: this cycle's attempts, one each: what was asked (action, debug, "
		      "improve, repeat, knob tuning), the node, the status and speedup, per timed "
		      "workload the speedup and the time with its spread, whether it beat what it "
		      "started from beyond the spreads, the CHANGED and EXPECTED lines of its "
		      "reply; what knob tuning measured (how many configurations of how many, "
		      "which won) or why it did not run>";
	s->evidence = "<run state: the cycle's node, each candidate's status and speedup, why the "
		      "cycle ended, edit ops of the last script that were skipped>";
	s->notes = "<run state: what ksearch could not use from the model's earlier replies and "
		   "why: unparsable replies, oversized code, a dropped @ksearch block, skipped edit "
		   "ops, an active_leaf_id not followed, an IMPLEMENTS line naming no node; (none) "
		   "when everything was used>";
	s->repeat = "<run state: the candidate the last kernel repeated, and what it measured>";
	s->tree = "<run state: the world model, one line per node: id, parent, status, title, "
		  "rating, confidence, difficulty, impacts, attempts, failures, the measured "
		  "result; with descriptions, the expected speedup and rationale, reflection notes>";
}

static int purpose_check(const char *purpose, struct ks_error *e)
{
	for (int i = 0; ks_prompt_purposes[i]; i++)
		if (purpose && !strcmp(purpose, ks_prompt_purposes[i]))
			return 0;
	return ks_error_set(e, KS_EINVAL,
			    "unknown purpose '%s' (init, action, improve, debug, repeat, edit, "
			    "direct)",
			    purpose ? purpose : "");
}

/* the target's spec as a run finds it: --spec, else detected (none: NULL, said in the
 * prompt) */
static int spec_find(const struct ks_prompt_preview *p, const struct ks_backend_i *be,
		     struct ks_spec *spec, int *have, struct ks_error *e)
{
	ks_spec_init(spec);
	*have = 0;
	int rc;
	if (p->spec && p->spec[0])
		rc = ks_spec_load(p->spec, spec, e);
	else if (ks_backend_on_host(be))
		rc = ks_spec_detect_host(spec, e);
	else if (ks_backend_device_spec(be->name, NULL, spec, NULL)) /* no device here */
		return 0;
	else
		rc = 0;
	*have = !rc;
	return rc ? ks_error_wrap(e, "hardware spec") : 0;
}

/* everything a run knows before its first prompt */
struct preview {
	const struct ks_backend_i *be;
	struct ks_task *t;
	struct ks_spec spec;
	struct ks_llm_context c;
};

/* v's task, the target's spec and the context of p (v is initialised either way; release
 * it with preview_close) */
static int preview_open(const struct ks_prompt_preview *p, struct preview *v,
			struct ks_error *e)
{
	enum ks_context_level level = KS_CONTEXT_FULL;
	int have = 0, rc;
	memset(v, 0, sizeof(*v));
	ks_spec_init(&v->spec);
	if ((rc = purpose_check(p->purpose, e)))
		return rc;
	if (!(v->be = ks_backend_find(p->backend)))
		return ks_backend_get(p->backend, &v->be, e); /* the unknown-name message */
	if (p->context && ks_context_level_parse(p->context, &level))
		return ks_error_set(e, KS_EINVAL, "unknown context '%s' (none, spec, full)",
				    p->context);
	if ((rc = ks_task_load(p->task, &v->t, e)) || (rc = ks_assertions_apply(v->t, e)) ||
	    (rc = spec_find(p, v->be, &v->spec, &have, e)))
		return rc;
	struct ks_llm_context_opts co = {.task = v->t, .be = v->be, .spec = have ? &v->spec : NULL,
					 .flavour = p->flavour, .level = level,
					 .workloads = p->workloads, .threads = p->threads};
	return ks_llm_context_open(&v->c, &co, e);
}

static void preview_close(struct preview *v)
{
	ks_llm_context_release(&v->c);
	ks_spec_release(&v->spec);
	ks_task_free(v->t);
}

int ks_prompt_preview(const struct ks_prompt_preview *p, struct ks_buf *system,
		      struct ks_buf *user, struct ks_error *e)
{
	struct preview v;
	int rc = preview_open(p, &v, e);
	if (!rc) {
		struct ks_llm_state s;
		char from[768];
		placeholders(&v.c, p->purpose, &s, from, sizeof(from));
		rc = ks_llm_prompt_make(p->prompts_dir, p->purpose, v.be->name, &v.c, &s, system,
					user, e);
	}
	preview_close(&v);
	return rc;
}

int ks_prompt_reply_kernel(const struct ks_prompt_preview *p, const char *reply, size_t len,
			   struct ks_buf *code, struct ks_error *e)
{
	if (p->purpose && (!strcmp(p->purpose, "init") || !strcmp(p->purpose, "edit")))
		return ks_error_set(e, KS_EINVAL, "a reply to the %s prompt holds JSON, not a "
						  "kernel: --reply takes a reply to action, improve, "
						  "debug, repeat or direct",
				    p->purpose);
	struct preview v;
	int rc = preview_open(p, &v, e);
	if (!rc) {
		/* the run's kernel prompts ask the same way (llm_ask) */
		struct ks_llm_ask q = {.purpose = p->purpose};
		ks_llm_context_want_code(&v.c, &q);
		struct ks_llm_reply r = {.content = (char *)reply, .len = len};
		rc = ks_llm_ask_extract(&q, &r, code, e);
	}
	preview_close(&v);
	return rc;
}
