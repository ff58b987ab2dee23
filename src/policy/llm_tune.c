/* Tuning the knobs of an @ksearch kernel the model wrote: a nested builtin policy over
 * that one template's feasible configurations, no model calls, at most a share of the
 * budget left.  A block that does not parse is dropped, and the model is told why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/log.h"
#include "ksearch/strategy.h"
#include "policy/llm_impl.h"

struct tune_lookup {
	const struct lp *L;
	const struct ks_workload *wl[512];
	int n;
};

static int tune_lookup_fn(int w, const char *name, size_t len, double *out, void *ctx)
{
	const struct tune_lookup *c = ctx;
	return ks_template_task_name(c->L->env.task, w < 0 || w >= c->n ? NULL : c->wl[w],
				     c->L->env.spec, name, len, out);
}

static int tuned_before(struct lp *L, const char *code)
{
	for (int i = 0; i < L->ntuned; i++)
		if (!strcmp(L->tuned[i], code))
			return 1;
	char **v = realloc(L->tuned, (size_t)(L->ntuned + 1) * sizeof(char *));
	if (v) {
		L->tuned = v;
		L->tuned[L->ntuned++] = strdup(code);
	}
	return 0;
}

void llm_tune_release(struct lp *L)
{
	if (L->tuning)
		ks_policy_close(&L->tuner);
	L->tuning = 0;
	ks_config_set_release(&L->tune_cs);
	memset(&L->tune_cs, 0, sizeof(L->tune_cs));
	ks_template_free(L->tune_tpl);
	L->tune_tpl = NULL;
}

/* start tuning the knobs of the passed kernel c (candidate id, outcome o); 1 when started */
int llm_tune_start(struct lp *L, const char *code, const struct ks_policy_outcome *o,
		      struct ks_error *e)
{
	if (!strstr(code, "@ksearch") || tuned_before(L, code))
		return 0;
	int cap = llm_budget_left(L) / LLM_TUNE_SHARE;
	struct ks_error te = {0};
	char name[64];
	snprintf(name, sizeof(name), "candidate-%ld", o->candidate);
	if (ks_template_parse(code, strlen(code), name, &L->tune_tpl, &te)) {
		ks_warn("candidate %ld: @ksearch block ignored: %s", o->candidate, te.msg);
		llm_reject(L, "knob_block", o->candidate,
			   "the @ksearch block of candidate %ld was dropped (%s): the kernel was "
			   "evaluated as written and its knobs were not tuned",
			   o->candidate, te.msg);
		return 0;
	}
	struct tune_lookup lk = {.L = L};
	const struct ks_task *t = L->env.task;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < (pass ? t->nchecks : t->nworkloads) && lk.n < 512; i++) {
			const struct ks_workload *w = pass ? &t->checks[i] : &t->workloads[i];
			if (ks_workload_for_backend(w, L->env.be->name))
				lk.wl[lk.n++] = w;
		}
	if (L->tune_tpl->nknobs == 0 || cap < 1)
		goto none;
	if (ks_template_enumerate(L->tune_tpl, lk.n, tune_lookup_fn, &lk, &L->tune_cs, &te)) {
		ks_warn("candidate %ld: @ksearch knobs not tuned: %s", o->candidate, te.msg);
		llm_reject(L, "knob_block", o->candidate,
			   "the knobs of candidate %ld were not tuned: %s", o->candidate, te.msg);
		goto none;
	}
	if (L->tune_cs.n < 2)
		goto none;
	L->tune_tpls[0] = L->tune_tpl;
	L->tune_space = (struct ks_space){.ntemplates = 1, .templates = L->tune_tpls,
					  .feasible = &L->tune_cs};
	struct ks_policy_builtin_cfg cfg = {
		.strategy = L->env.o->strategy, .seed = L->env.o->seed,
		.root_title = ks_buf_str(&L->title), .kernel_summary = t->summary,
		.title_prefix = ks_buf_str(&L->title), .policy = L->env.o->policy,
		.parent = o->candidate, .node = L->node, .skip_defaults = 1,
		.parent_passed = o->passed, .parent_status = o->status, .parent_score = o->score};
	int rc = ks_policy_builtin_new(&L->tune_space, &cfg, &L->tuner, e);
	if (rc) {
		llm_tune_release(L);
		return rc;
	}
	L->tuning = 1;
	L->tune_cap = cap;
	L->tune_spent = 0;
	ks_info("candidate %ld carries %d knobs (%d feasible configurations): tuning up to %d "
		"without the model",
		o->candidate, L->tune_tpl->nknobs, L->tune_cs.n, cap);
	return 1;
none:
	llm_tune_release(L);
	return 0;
}

int llm_tune_next(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e)
{
	if (L->tune_spent < L->tune_cap && llm_budget_left(L) > 0) {
		struct ks_policy_stop why;
		int rc = ks_policy_propose(&L->tuner, out, 1, n, &why, e);
		if (rc || *n)
			return rc;
	}
	llm_tune_release(L);
	llm_decide(L);
	return 0;
}

