/* Tuning the knobs of an @ksearch kernel the model wrote: a nested builtin policy over
 * that one template's feasible configurations, no model calls, at most a share of the
 * budget left.  A block that does not parse is dropped, and the model is told why; what
 * was tuned (how many configurations of how many, which won) or why nothing was goes into
 * the cycle's attempts, so the model sees what its knobs did. */
#include <stdarg.h>
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

/* the candidate whose source was code when its knobs were tuned, -1 when none was (then
 * this one, id, is remembered) */
static long tuned_before(struct lp *L, const char *code, long id)
{
	for (int i = 0; i < L->ntuned; i++)
		if (!strcmp(L->tuned[i], code))
			return L->tuned_id[i];
	char **v = realloc(L->tuned, (size_t)(L->ntuned + 1) * sizeof(char *));
	long *ids = realloc(L->tuned_id, (size_t)(L->ntuned + 1) * sizeof(long));
	if (v)
		L->tuned = v;
	if (ids)
		L->tuned_id = ids;
	if (v && ids) {
		L->tuned[L->ntuned] = strdup(code);
		L->tuned_id[L->ntuned++] = id;
	}
	return -1;
}

/* a line under the tuned kernel's attempt (the edit prompt shows the attempts too) */
static void knobs_note(struct lp *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void knobs_note(struct lp *L, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ks_buf_addf(&L->attempts, "   knobs: %s\n", msg);
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
	if (!strstr(code, "@ksearch"))
		return 0;
	long before = tuned_before(L, code, o->candidate);
	if (before >= 0) {
		knobs_note(L, "not tuned again: the same source was tuned as candidate %ld", before);
		return 0;
	}
	int left = llm_budget_left(L), cap = left / LLM_TUNE_SHARE;
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
	if (L->tune_tpl->nknobs == 0) {
		knobs_note(L, "the @ksearch block declares no knobs: nothing to tune");
		goto none;
	}
	if (ks_template_enumerate(L->tune_tpl, lk.n, tune_lookup_fn, &lk, &L->tune_cs, &te)) {
		ks_warn("candidate %ld: @ksearch knobs not tuned: %s", o->candidate, te.msg);
		llm_reject(L, "knob_block", o->candidate,
			   "the knobs of candidate %ld were not tuned: %s", o->candidate, te.msg);
		goto none;
	}
	if (L->tune_cs.n < 2) {
		knobs_note(L, "not tuned: the block has %d feasible configuration (the kernel as "
			      "written)",
			   L->tune_cs.n);
		goto none;
	}
	if (cap < 1) {
		knobs_note(L, "not tuned: %d candidate%s left in the budget, and tuning spends at "
			      "most 1/%d of them (the %d other feasible configuration%s not "
			      "measured; the kernel ran as written)",
			   left, left == 1 ? " is" : "s are", LLM_TUNE_SHARE, L->tune_cs.n - 1,
			   L->tune_cs.n == 2 ? " was" : "s were");
		goto none;
	}
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
	L->tune_cap = cap < L->tune_cs.n - 1 ? cap : L->tune_cs.n - 1;
	L->tune_spent = 0;
	L->tune_of = L->tune_best = o->candidate;
	L->tune_best_score = o->score;
	L->tune_feasible = L->tune_cs.n;
	ks_info("candidate %ld carries %d knobs (%d feasible configurations): tuning up to %d "
		"without the model",
		o->candidate, L->tune_tpl->nknobs, L->tune_cs.n, cap);
	knobs_note(L, "ksearch tunes them without you: up to %d of the %d other feasible "
		      "configurations (tuning spends at most 1/%d of the %d candidates left), "
		      "listed below as knob tuning",
		   L->tune_cap, L->tune_cs.n - 1, LLM_TUNE_SHARE, left);
	return 1;
none:
	llm_tune_release(L);
	return 0;
}

/* what the tuning came to, under the tuned kernel's attempts */
static void tune_summary(struct lp *L)
{
	struct ks_buf v = KS_BUF_INIT;
	if (L->tune_best == L->tune_of) {
		knobs_note(L, "tuning of candidate %ld done: %d of %d configurations measured; the "
			      "kernel as written stayed the fastest",
			   L->tune_of, L->tune_spent + 1, L->tune_feasible);
	} else {
		llm_versus(L, L->tune_best, L->tune_of, &v);
		knobs_note(L, "tuning of candidate %ld done: %d of %d configurations measured; the "
			      "fastest is candidate %ld, %.3fx (against the kernel as written: %s)",
			   L->tune_of, L->tune_spent + 1, L->tune_feasible, L->tune_best,
			   L->tune_best_score, v.len ? ks_buf_str(&v) : "no timings to compare");
	}
	ks_buf_release(&v);
}

int llm_tune_next(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e)
{
	if (L->tune_spent < L->tune_cap && llm_budget_left(L) > 0) {
		struct ks_policy_stop why;
		int rc = ks_policy_propose(&L->tuner, out, 1, n, &why, e);
		if (rc || *n)
			return rc;
	}
	tune_summary(L);
	llm_tune_release(L);
	llm_decide(L);
	return 0;
}

