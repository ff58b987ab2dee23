/* Tuning the knobs of an @ksearch kernel the model wrote: a nested builtin policy over
 * that one template's feasible configurations, no model calls, at most a share of the
 * budget left.  A block that does not parse is dropped, and the model is told why; what
 * was tuned (how many configurations of how many, which won) or why nothing was goes into
 * the cycle's attempts, so the model sees what its knobs did.
 *
 * The share alone leaves the knobs of a kernel written late unmeasured (a real model's
 * matmul run: its fastest kernel, written with 2 candidates left, ran with the thread
 * count as written), while what a user keeps is the run's fastest kernel.  So the budget's
 * last 1/LLM_TUNE_RESERVE (at least one candidate) is the reserve of that kernel's knobs:
 * once the candidates left are within it, a kernel that is the run's fastest is tuned on
 * all of them, and before the model is asked for another kernel, the run's fastest
 * kernel's knobs are tuned when they never were.  Before the reserve the model's budget is
 * untouched (the share applies as before), and a run whose fastest kernel was tuned, or
 * has no knobs, gives the reserve to the model.  A replay follows its recorded exchanges
 * while they go on: the recorded run chose what it spent them on. */
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

/* the candidate whose source was code when its knobs were settled (tuned, or found to have
 * nothing to tune), -1 when none was */
static long tuned_before(const struct lp *L, const char *code)
{
	for (int i = 0; i < L->ntuned; i++)
		if (!strcmp(L->tuned[i], code))
			return L->tuned_id[i];
	return -1;
}

/* code's knobs are settled as candidate id's: not tuned again, not reserved for */
static void tuned_remember(struct lp *L, const char *code, long id)
{
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

/* the workloads and checks that run on this backend: the knobs' constraints read them */
static void lookup_fill(struct lp *L, struct tune_lookup *lk)
{
	const struct ks_task *t = L->env.task;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < (pass ? t->nchecks : t->nworkloads) && lk->n < 512; i++) {
			const struct ks_workload *w = pass ? &t->checks[i] : &t->workloads[i];
			if (ks_workload_for_backend(w, L->env.be->name))
				lk->wl[lk->n++] = w;
		}
}

/* code's @ksearch block parsed into L->tune_tpl and its feasible configurations into
 * L->tune_cs: 1 when there are at least two to choose from, else 0 (the model is told why) */
static int tune_space(struct lp *L, const char *code, long cand)
{
	struct ks_error te = {0};
	char name[64];
	snprintf(name, sizeof(name), "candidate-%ld", cand);
	if (ks_template_parse(code, strlen(code), name, &L->tune_tpl, &te)) {
		ks_warn("candidate %ld: @ksearch block ignored: %s", cand, te.msg);
		llm_reject(L, "knob_block", cand,
			   "the @ksearch block of candidate %ld was dropped (%s): the kernel was "
			   "evaluated as written and its knobs were not tuned",
			   cand, te.msg);
		return 0;
	}
	struct tune_lookup lk = {.L = L};
	lookup_fill(L, &lk);
	if (L->tune_tpl->nknobs == 0) {
		knobs_note(L, "the @ksearch block declares no knobs: nothing to tune");
		return 0;
	}
	if (ks_template_enumerate(L->tune_tpl, lk.n, tune_lookup_fn, &lk, &L->tune_cs, &te)) {
		ks_warn("candidate %ld: @ksearch knobs not tuned: %s", cand, te.msg);
		llm_reject(L, "knob_block", cand, "the knobs of candidate %ld were not tuned: %s",
			   cand, te.msg);
		return 0;
	}
	if (L->tune_cs.n < 2) {
		knobs_note(L, "not tuned: the block has %d feasible configuration (the kernel as "
			      "written)",
			   L->tune_cs.n);
		return 0;
	}
	return 1;
}

/* what tuning candidate cand may spend with left candidates left: its share, or all of
 * them (*reserved) once they are within the reserve and cand is the run's fastest kernel */
static int tune_cap(const struct lp *L, long cand, int left, int *reserved)
{
	*reserved = left > 0 && left <= L->tune_reserve && cand == L->run_best_id &&
		    !llm_replay_decides(L);
	return *reserved ? left : left / LLM_TUNE_SHARE;
}

/* the nested builtin policy over the knobs of candidate o, on node */
static int tuner_open(struct lp *L, const struct ks_policy_outcome *o, int node,
		      struct ks_error *e)
{
	const struct ks_node *n = ks_world_node(&L->w, node);
	const char *title = n && n->title ? n->title : ks_buf_str(&L->title);
	L->tune_tpls[0] = L->tune_tpl;
	L->tune_space = (struct ks_space){.ntemplates = 1, .templates = L->tune_tpls,
					  .feasible = &L->tune_cs};
	struct ks_policy_builtin_cfg cfg = {
		.strategy = L->env.o->strategy, .seed = L->env.o->seed,
		.root_title = title, .kernel_summary = L->env.task->summary, .title_prefix = title,
		.policy = L->env.o->policy,
		.parent = o->candidate, .node = node, .skip_defaults = 1,
		.parent_passed = o->passed, .parent_status = o->status, .parent_score = o->score};
	return ks_policy_builtin_new(&L->tune_space, &cfg, &L->tuner, e);
}

/* why a kernel's knobs wait (or are not tuned at all): its share of the candidates left is
 * none; the reserve, when the budget keeps one, may tune them later */
static void share_none_note(struct lp *L, int left)
{
	char reserve[160] = "";
	if (L->tune_reserve > 0)
		snprintf(reserve, sizeof(reserve), "; the budget's last %d are kept for the knobs "
						   "of the run's fastest kernel, tuned then if it is "
						   "this one",
			 L->tune_reserve);
	knobs_note(L, "not tuned: %d candidate%s left in the budget, and tuning spends at most "
		      "1/%d of them (the %d other feasible configuration%s not measured; the "
		      "kernel ran as written)%s",
		   left, left == 1 ? " is" : "s are", LLM_TUNE_SHARE, L->tune_cs.n - 1,
		   L->tune_cs.n == 2 ? " was" : "s were", reserve);
}

/* what the tuning about to start may spend, and why, under the cycle's attempts */
static void started_note(struct lp *L, long cand, int node, int left, int reserved)
{
	char ref[64];
	ks_world_node_ref(&L->w, node, ref, sizeof(ref));
	if (reserved)
		knobs_note(L, "ksearch tunes the knobs of candidate %ld (node %s), the run's fastest "
			      "kernel, without you: up to %d of the %d other feasible "
			      "configurations (%d candidate%s left, within the budget's last %d, "
			      "kept for the knobs of the run's fastest kernel), listed below as "
			      "knob tuning",
			   cand, ref, L->tune_cap, L->tune_cs.n - 1, left, left == 1 ? " is" : "s are",
			   L->tune_reserve);
	else
		knobs_note(L, "ksearch tunes them without you: up to %d of the %d other feasible "
			      "configurations (tuning spends at most 1/%d of the %d candidates left), "
			      "listed below as knob tuning",
			   L->tune_cap, L->tune_cs.n - 1, LLM_TUNE_SHARE, left);
}

/* start tuning the knobs of the passed kernel code (outcome o), credited to node; 1 when
 * started */
int llm_tune_start(struct lp *L, const char *code, const struct ks_policy_outcome *o, int node,
		   struct ks_error *e)
{
	if (!strstr(code, "@ksearch"))
		return 0;
	long before = tuned_before(L, code);
	if (before >= 0) {
		knobs_note(L, "not tuned again: the same source's knobs were settled as candidate "
			      "%ld",
			   before);
		return 0;
	}
	if (!tune_space(L, code, o->candidate)) {
		tuned_remember(L, code, o->candidate); /* nothing to tune, ever */
		llm_tune_release(L);
		return 0;
	}
	int reserved, left = llm_budget_left(L), cap = tune_cap(L, o->candidate, left, &reserved);
	if (cap < 1) {
		share_none_note(L, left);
		llm_tune_release(L);
		return 0;
	}
	int rc = tuner_open(L, o, node, e);
	if (rc) {
		llm_tune_release(L);
		return rc;
	}
	tuned_remember(L, code, o->candidate);
	L->tuning = 1;
	L->tune_cap = cap < L->tune_cs.n - 1 ? cap : L->tune_cs.n - 1;
	L->tune_spent = 0;
	L->tune_node = node;
	L->tune_of = L->tune_best = o->candidate;
	L->tune_best_score = o->score;
	L->tune_feasible = L->tune_cs.n;
	ks_info("candidate %ld carries %d knobs (%d feasible configurations): tuning up to %d "
		"without the model%s",
		o->candidate, L->tune_tpl->nknobs, L->tune_cs.n, L->tune_cap,
		reserved ? " (the run's fastest kernel, in the budget's reserve)" : "");
	started_note(L, o->candidate, node, left, reserved);
	return 1;
}

/* The reserve: with the candidates left within the budget's last L->tune_reserve, before
 * the model is asked for another kernel, the run's fastest kernel has its knobs tuned when
 * it carries knobs that never were (its share was none when it was written). */
int llm_tune_reserved(struct lp *L, struct ks_error *e)
{
	int left = llm_budget_left(L);
	const char *code = ks_buf_str(&L->run_best_code);
	if (L->tuning || left < 1 || left > L->tune_reserve || !strstr(code, "@ksearch") ||
	    llm_replay_decides(L) || tuned_before(L, code) >= 0)
		return 0;
	const struct ks_node *n = ks_world_node(&L->w, L->run_best_node);
	int was_open = n && n->status == KS_NODE_OPEN;
	struct ks_policy_outcome o = {.candidate = L->run_best_id, .status = KS_STATUS_PASSED,
				      .passed = 1, .score = L->run_best_score};
	int started = llm_tune_start(L, code, &o, L->run_best_node, e);
	if (started <= 0)
		return started;
	L->reserved = 1;
	L->resume = L->phase;
	L->node_was_open = was_open;
	L->phase = PH_TUNE;
	return 1;
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
	if (!L->reserved) {
		llm_decide(L);
		return 0;
	}
	/* the reserve's tuning interrupted the loop: its node is as it was, the loop goes on
	 * where it stood (a cycle's next step decided again: its count has grown) */
	L->reserved = 0;
	const struct ks_node *tn = ks_world_node(&L->w, L->tune_node);
	if (L->node_was_open && tn && tn->status == KS_NODE_ACTIVE)
		ks_world_set_status(&L->w, L->tune_node, KS_NODE_OPEN, NULL, NULL);
	if (L->resume == PH_NEXT)
		llm_decide(L);
	else
		L->phase = L->resume;
	return 0;
}

