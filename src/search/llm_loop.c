/* The search phase of the llm and cmd policies: K-Search with a model (DESIGN.md §1, §7).
 *
 *   init    the model classifies the kernel and proposes the first actions: its JSON
 *           document becomes the world model (measured fields stripped first)
 *   round   select an open action; the model implements it on the code of the node's
 *           best ancestor; every candidate is compiled, checked and timed like any
 *           other; failures go back to the model as debug prompts (bounded by the
 *           world's debug budget), passes as improve prompts until the node stagnates;
 *           a kernel carrying an @ksearch knob block has its knobs tuned locally
 *           (no LLM calls); then the model edits the tree from the evidence and the
 *           world is snapshotted
 *
 * Nothing the model says is trusted: unusable replies get bounded corrections and then
 * count as failed attempts, rejected edit scripts change nothing, and transport failures
 * are logged and skipped; only an exhausted LLM budget or replay ends the phase early. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/run_internal.h"
#include "search/space.h"
#include "ksearch/log.h"
#include "ksearch/template.h"
#include "ksearch/world.h"
#include "policy/llm.h"
#include "util/fs.h"

#define LLM_PROMPT_BUDGET 60000L /* prompt tokens (context window minus the reply) */
#define LLM_MAX_FAILS 4          /* consecutive unusable calls that end the search phase */
#define LLM_NOCODE_MAX 2         /* sessions without code before a node is closed */
#define LLM_TUNE_SHARE 4         /* knob tuning spends at most 1/4 of the budget left */
#define LLM_FEEDBACK_LOG 600     /* bytes of a workload's log shown to the model */

struct fb_entry {
	long id;
	char *text;
};

struct loop {
	struct ks_run_state *st;
	struct ks_llm_policy *pol;
	struct ks_world w;
	int have_world;
	char *baseline;
	struct ks_buf task, hardware, translation;
	const char *lang;
	int fails;     /* consecutive unusable LLM calls */
	int stop;      /* end the search phase */
	int *nocode;   /* per node: sessions that produced no code */
	int nnocode;
	struct fb_entry *fb; /* feedback text per evaluated candidate */
	int nfb;
	char **tuned;  /* sources whose knobs were tuned already */
	int ntuned;
	struct ks_store_candidate *prev; /* a resumed run's candidates, matched by position */
	size_t nprev, next_prev;
};

/* one evaluated candidate */
struct attempt {
	long id;
	int passed;
	int status;
	double score;
	enum ks_refine verdict;
};

/* ---- context pieces ---------------------------------------------------------------- */

static void task_text(const struct ks_run_state *st, struct ks_buf *out)
{
	const struct ks_task *t = st->task;
	struct ks_buf proto = KS_BUF_INIT;
	ks_task_prototype(t, st->be->lang, &proto);
	ks_buf_addf(out, "%s (class %s): %s\n\nEntry point (keep exactly this prototype):\n```%s\n%s\n```\n",
		    t->name, t->cls ? t->cls : "?", t->summary ? t->summary : "", st->be->lang,
		    ks_buf_str(&proto));
	ks_buf_release(&proto);
	ks_buf_adds(out, "Tensors:");
	for (int i = 0; i < t->ntensors; i++) {
		const struct ks_tensor_decl *d = &t->tensors[i];
		ks_buf_addf(out, "%s %s %s [", i ? ";" : "", d->is_output ? "output" : "input",
			    d->name);
		for (int k = 0; k < d->ndim; k++)
			ks_buf_addf(out, "%s%s", k ? ", " : "", d->shape[k]);
		ks_buf_addf(out, "] %s", ks_dtype_name(d->dtype));
	}
	ks_buf_addf(out, "\nTolerance: atol %g, rtol %g\n", t->atol, t->rtol);
	ks_buf_adds(out, "Timed workloads (the score is the geometric-mean speedup over these):");
	for (int pass = 0, k = 0; pass < 2; pass++) {
		if (pass)
			ks_buf_adds(out, "\nCorrectness checks (must pass, not timed):");
		int n = pass ? t->nchecks : t->nworkloads;
		for (int i = 0; i < n; i++) {
			const struct ks_workload *w = pass ? &t->checks[i] : &t->workloads[i];
			if (!ks_workload_for_backend(w, st->be->name))
				continue;
			if (!pass && !ks_eval_workload_selected(st->o.eval.workloads, k++))
				continue;
			struct ks_buf l = KS_BUF_INIT;
			ks_workload_label(t, w, &l);
			ks_buf_addf(out, "\n- %s", ks_buf_str(&l));
			ks_buf_release(&l);
		}
	}
	if (t->readme)
		ks_buf_addf(out, "\n\nThe math (the task's README):\n%s", t->readme);
	ks_buf_adds(out, "\n");
}

static void tree_text(const struct ks_world *w, int full, struct ks_buf *out)
{
	if (full && w->kernel_summary)
		ks_buf_addf(out, "Kernel summary: %s\n", w->kernel_summary);
	for (int i = 0; i < w->nnodes; i++) {
		const struct ks_node *n = ks_world_node(w, i);
		if (!n)
			continue;
		if (!full && i != w->root && n->status != KS_NODE_OPEN && n->candidate < 0)
			continue;
		ks_buf_addf(out, "[%d] parent %d, %s: %s | rating %.1f, confidence %.2f, difficulty %d, "
				 "impacts mem %.0f / regs %.0f / hw %.0f | attempts %d, failures %d",
			    n->id, n->parent, ks_node_status_name(n->status), n->title ? n->title : "",
			    n->rating, n->confidence, n->difficulty,
			    n->impacts[KS_IMPACT_MEMORY_BANDWIDTH].score,
			    n->impacts[KS_IMPACT_REGISTER_PRESSURE].score,
			    n->impacts[KS_IMPACT_COMPUTE_HW_FIT].score, n->attempts, n->failures);
		if (n->candidate >= 0)
			ks_buf_addf(out, " | measured: candidate %ld, %.3fx the baseline%s", n->candidate,
				    n->score, n->regression ? " (regressed vs its base)" : "");
		if (n->close_reason)
			ks_buf_addf(out, " | closed: %s", n->close_reason);
		if (full && n->description && n->description[0])
			ks_buf_addf(out, "\n    %s", n->description);
		ks_buf_adds(out, "\n");
	}
}

static void node_text(const struct ks_world *w, int id, struct ks_buf *out)
{
	const struct ks_node *n = ks_world_node(w, id);
	if (!n)
		return;
	ks_buf_addf(out, "%s\n%s\n(difficulty %d, rating %.1f, confidence %.2f)\n",
		    n->title ? n->title : "", n->description ? n->description : "", n->difficulty,
		    n->rating, n->confidence);
}

static void feedback_text(const struct ks_eval_result *r, struct ks_buf *out)
{
	ks_buf_addf(out, "status %s", ks_status_name(r->status));
	if (r->status == KS_STATUS_PASSED)
		ks_buf_addf(out, ", %.3fx the baseline (geometric mean)", r->speedup);
	ks_buf_adds(out, "\n");
	if (r->status == KS_STATUS_COMPILE_ERROR && r->compile_log)
		ks_buf_addf(out, "compiler output:\n%.4000s\n", r->compile_log);
	for (int l = 0; l < 2; l++) {
		const struct ks_wl_result *list = l ? r->checks : r->workloads;
		int n = l ? r->nchecks : r->nworkloads;
		for (int i = 0; i < n; i++) {
			const struct ks_wl_result *x = &list[i];
			ks_buf_addf(out, "- %s%s: %s", l ? "check " : "", x->label ? x->label : "?",
				    ks_status_name(x->status));
			if (x->median_us > 0)
				ks_buf_addf(out, ", %.2f us (baseline %.2f us, %.2fx), %.1f GB/s, %.1f GFLOP/s",
					    x->median_us, x->baseline_us, x->speedup, x->gbps, x->gflops);
			if (x->roofline_pct > 0)
				ks_buf_addf(out, ", %.0f%% of the roofline", x->roofline_pct);
			if (x->status != KS_STATUS_PASSED || x->max_abs_err > 0)
				ks_buf_addf(out, ", max abs err %.3g, max rel err %.3g", x->max_abs_err,
					    x->max_rel_err);
			if (x->status != KS_STATUS_PASSED && x->log && x->log[0])
				ks_buf_addf(out, "\n  log: %.*s", LLM_FEEDBACK_LOG, x->log);
			ks_buf_adds(out, "\n");
		}
	}
}

static const char *fb_get(const struct loop *L, long id)
{
	for (int i = L->nfb - 1; i >= 0; i--)
		if (L->fb[i].id == id)
			return L->fb[i].text ? L->fb[i].text : "";
	return id < 0 ? "(the starting kernel: no measurement shown)" : "(no feedback recorded)";
}

static void fb_put(struct loop *L, long id, const char *text)
{
	struct fb_entry *v = realloc(L->fb, (size_t)(L->nfb + 1) * sizeof(*v));
	if (!v)
		return;
	L->fb = v;
	L->fb[L->nfb].id = id;
	L->fb[L->nfb].text = strdup(text);
	L->nfb++;
}

/* the source of candidate id with its knob values baked in (#ifndef guards, so -D wins) */
static int candidate_code(struct loop *L, long id, struct ks_buf *out, struct ks_error *e)
{
	if (id < 0)
		return ks_buf_adds(out, L->baseline);
	struct ks_store_candidate *c = NULL;
	int rc = ks_store_get_candidate(L->st->store, id, &c, e);
	if (rc)
		return rc;
	char copy[4096];
	snprintf(copy, sizeof(copy), "%s", c->defines ? c->defines : "");
	char *save = NULL;
	for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		if (strncmp(tok, "-D", 2) || !eq)
			continue;
		*eq = '\0';
		ks_buf_addf(out, "#ifndef %s\n#define %s %s\n#endif\n", tok + 2, tok + 2, eq + 1);
	}
	rc = ks_buf_adds(out, c->source ? c->source : "");
	ks_store_free(c);
	return rc;
}

/* ---- asking ------------------------------------------------------------------------ */

/* what an ask came to */
enum ask_result { ASK_OK, ASK_UNUSABLE, ASK_STOP };

static enum ask_result ask_outcome(struct loop *L, const char *purpose, int rc,
				   const struct ks_error *ae)
{
	if (rc == 0) {
		L->fails = 0;
		return ASK_OK;
	}
	if (rc == KS_EBUDGET) {
		ks_info("%s; ending the search phase", ae->msg);
		L->stop = 1;
		return ASK_STOP;
	}
	if (L->pol->npurposes > 0 && !L->pol->chain_live && (rc == KS_EPROTO || rc == KS_ENOTFOUND)) {
		ks_warn("%s; ending the search phase", ae->msg);
		L->stop = 1;
		return ASK_STOP;
	}
	if (rc == KS_EPARSE)
		ks_warn("the model's '%s' reply was unusable after corrections: %s", purpose, ae->msg);
	/* transport failures were logged by the client after its retries */
	if (++L->fails >= LLM_MAX_FAILS) {
		ks_warn("%d LLM calls in a row failed; ending the search phase", L->fails);
		L->stop = 1;
		return ASK_STOP;
	}
	return ASK_UNUSABLE;
}

/* Build the prompt from template tmpl and ask with purpose (tmpl, or "<tmpl>-fix" with a
 * correction appended).  Returns 0 with *res set, or an infrastructure error (a template
 * that does not render). */
static int ask(struct loop *L, const char *tmpl, const char *purpose, const char *correction,
	       const struct ks_context_piece *pieces, int np, const struct ks_prompt_var *vars,
	       int nv, enum ks_llm_want want, int max_fixes, struct ks_buf *out,
	       struct ks_llm_reply *reply, enum ask_result *res, struct ks_error *e)
{
	struct ks_buf sys = KS_BUF_INIT, user = KS_BUF_INIT;
	struct ks_llm_prompt p = {.dir = L->st->o.prompts_dir, .purpose = tmpl, .pieces = pieces,
				  .npieces = np, .vars = vars, .nvars = nv,
				  .budget_tokens = LLM_PROMPT_BUDGET};
	int rc = ks_llm_prompt_build(&p, &sys, &user, NULL, e);
	if (rc) {
		rc = ks_error_wrap(e, "prompt '%s'", tmpl);
		goto out;
	}
	if (correction)
		ks_buf_addf(&user, "\n\nPURPOSE: %s\n%s\n", purpose, correction);
	char what[64];
	snprintf(what, sizeof(what), "asking the model (%s)", purpose);
	ks_run_progress_tick(L->st, "search", what, 0);
	struct ks_llm_ask q = {.purpose = purpose, .system = ks_buf_str(&sys),
			       .user = ks_buf_str(&user), .want = want,
			       .lang = want == KS_LLM_WANT_CODE ? L->lang : NULL,
			       .max_fixes = max_fixes};
	struct ks_error ae = {0};
	ks_buf_reset(out);
	int arc = ks_llm_ask(&L->pol->client, &q, out, reply, &ae);
	*res = ask_outcome(L, purpose, arc, &ae);
out:
	ks_buf_release(&sys);
	ks_buf_release(&user);
	return rc;
}

#define PIECE(n, t, prio) {.name = (n), .text = (t), .priority = (prio)}

/* ---- evaluation -------------------------------------------------------------------- */

struct cand_desc {
	int node;
	const char *code;
	const char *title;     /* action title for the store */
	long parent;           /* candidate it builds on, -1 none */
	const char *family;
	const char *knobs;     /* JSON or NULL */
	const char *ident;     /* "-DK=V ..." or "" */
	const char *const *defines;
};

static int matches_prev(struct loop *L, const struct ks_store_candidate *c,
			const struct cand_desc *d)
{
	struct ks_buf src = KS_BUF_INIT;
	int same = ks_store_get_source(L->st->store, c->id, &src, NULL) == 0 &&
		   !strcmp(ks_buf_str(&src), d->code) &&
		   !strcmp(c->defines ? c->defines : "", d->ident);
	ks_buf_release(&src);
	return same;
}

static int evaluate(struct loop *L, const struct cand_desc *d, struct attempt *a,
		    struct ks_error *e)
{
	struct ks_run_state *st = L->st;
	int64_t id = 0;
	int rc = 0;
	memset(a, 0, sizeof(*a));
	a->verdict = KS_REFINE_CONTINUE;
	/* a resumed run retraces its path: the k-th candidate is the stored k-th one */
	if (L->next_prev < L->nprev) {
		const struct ks_store_candidate *c = &L->prev[L->next_prev++];
		if (matches_prev(L, c, d)) {
			id = c->id;
			if (c->has_result) {
				int s = c->status ? ks_status_parse(c->status) : -1;
				a->id = (long)id;
				a->status = s < 0 ? KS_STATUS_RUNTIME_ERROR : s;
				a->passed = a->status == KS_STATUS_PASSED && c->speedup > 0;
				a->score = a->passed ? c->speedup : 0;
				struct ks_buf fb = KS_BUF_INIT;
				ks_buf_addf(&fb, "status %s%s (measured before the resume)\n", c->status,
					    a->passed ? "" : "");
				if (a->passed)
					ks_buf_addf(&fb, "%.3fx the baseline\n", a->score);
				fb_put(L, a->id, ks_buf_str(&fb));
				ks_buf_release(&fb);
				st->reused++;
				goto counted;
			}
		} else {
			ks_warn("resume: candidate %lld differs from what the run produces now; "
				"continuing with new candidates",
				(long long)c->id);
			L->next_prev = L->nprev;
		}
	}
	if (!id) {
		struct ks_store_candidate c = {
			.source = d->code, .language = st->be->lang,
			.parent_id = d->parent > 0 ? d->parent : 0, .node_id = d->node,
			.action = d->title, .policy = st->o.policy, .family = d->family,
			.knobs = d->knobs ? d->knobs : "{}", .defines = d->ident, .round = st->round};
		if ((rc = ks_store_add_candidate(st->store, &c, &id, e)))
			return rc;
	}
	ks_run_progress_tick(st, "search", d->title, 0);
	struct ks_eval_result res;
	if ((rc = ks_evaluator_run(st->ev, d->code, NULL, d->defines, &res, e))) {
		ks_eval_result_release(&res);
		return rc;
	}
	ks_store_finish_compile(st->store, id, res.status != KS_STATUS_COMPILE_ERROR,
				res.compile_log, NULL, 0, NULL);
	rc = ks_run_record(st, id, "search", &res, e);
	a->id = (long)id;
	a->status = res.status;
	a->passed = res.status == KS_STATUS_PASSED && res.speedup > 0 && isfinite(res.speedup);
	a->score = a->passed ? res.speedup : 0;
	struct ks_buf fb = KS_BUF_INIT;
	feedback_text(&res, &fb);
	fb_put(L, a->id, ks_buf_str(&fb));
	ks_buf_release(&fb);
	if (a->passed)
		ks_info("candidate %lld (node %d, %s): PASSED %.3fx", (long long)id, d->node, d->title,
			a->score);
	else
		ks_info("candidate %lld (node %d, %s): %s", (long long)id, d->node, d->title,
			ks_status_name(res.status));
	ks_eval_result_release(&res);
	if (rc)
		return rc;
counted:
	st->evaluated++;
	if (a->passed) {
		st->passed++;
		if (a->score > st->best)
			st->best = a->score;
	} else {
		st->failed++;
	}
	st->last_status = ks_status_name(a->status);
	st->last_speedup = a->score;
	st->last_candidate = a->id;
	ks_run_progress_tick(st, "search", d->title, 1);
	return ks_world_record(&L->w, d->node, a->id, a->passed, a->score, &a->verdict, e);
}

static int budget_left(const struct loop *L)
{
	const struct ks_run_state *st = L->st;
	if (L->stop || ks_run_stop_requested())
		return 0;
	if (st->o.time_limit_s > 0 && ks_run_now() - st->t0 > st->o.time_limit_s)
		return 0;
	return st->o.budget - st->evaluated;
}

/* ---- knob tuning of an LLM-written @ksearch kernel ---------------------------------- */

struct tune_lookup {
	const struct ks_run_state *st;
	const struct ks_workload *wl[512];
	int n;
};

static int tune_lookup_fn(int w, const char *name, size_t len, double *out, void *ctx)
{
	const struct tune_lookup *c = ctx;
	char key[128];
	if (len >= sizeof(key))
		return KS_ENOTFOUND;
	memcpy(key, name, len);
	key[len] = '\0';
	if (!strncmp(key, "spec.", 5))
		return c->st->have_spec && ks_spec_field(&c->st->spec, key, out) == 0 ? 0
										      : KS_ENOTFOUND;
	if (w < 0 || w >= c->n)
		return KS_ENOTFOUND;
	const struct ks_task *t = c->st->task;
	for (int i = 0; i < t->nparams; i++)
		if (!strcmp(t->params[i].name, key)) {
			*out = c->wl[w]->values[i];
			return 0;
		}
	return KS_ENOTFOUND;
}

static int tuned_before(struct loop *L, const char *code)
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

/* Tune the knobs of a passed kernel that carries an @ksearch block with the run's
 * strategy over that template's feasible configurations: no LLM calls, at most
 * 1/LLM_TUNE_SHARE of the candidates left.  The kernel as written is its defaults. */
static int tune(struct loop *L, int node, const char *code, const struct attempt *first,
		const char *title, struct ks_error *e)
{
	struct ks_run_state *st = L->st;
	if (!strstr(code, "@ksearch") || tuned_before(L, code))
		return 0;
	int cap = budget_left(L) / LLM_TUNE_SHARE;
	struct ks_template *tpl = NULL;
	struct ks_error te = {0};
	char name[64];
	snprintf(name, sizeof(name), "candidate-%ld", first->id);
	if (ks_template_parse(code, strlen(code), name, &tpl, &te)) {
		ks_warn("candidate %ld: @ksearch block ignored: %s", first->id, te.msg);
		return 0;
	}
	int rc = 0;
	struct ks_config_set cs = {0};
	struct ks_strategy *s = NULL;
	struct tune_lookup lk = {.st = st};
	const struct ks_task *t = st->task;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < (pass ? t->nchecks : t->nworkloads) && lk.n < 512; i++) {
			const struct ks_workload *w = pass ? &t->checks[i] : &t->workloads[i];
			if (ks_workload_for_backend(w, st->be->name))
				lk.wl[lk.n++] = w;
		}
	if (tpl->nknobs == 0 || cap < 1)
		goto out;
	if (ks_template_enumerate(tpl, lk.n, tune_lookup_fn, &lk, &cs, &te)) {
		ks_warn("candidate %ld: @ksearch knobs not tuned: %s", first->id, te.msg);
		goto out;
	}
	if (cs.n < 2)
		goto out;
	struct ks_template *tpls[1] = {tpl};
	struct ks_space space = {.ntemplates = 1, .templates = tpls, .feasible = &cs};
	struct ks_strategy_config scfg = {.seed = st->o.seed, .root_title = title,
					  .kernel_summary = t->summary};
	if ((rc = ks_strategy_new(st->o.strategy, &space, &scfg, &s, e)))
		goto out;
	int def[KS_TEMPLATE_MAX_KNOBS];
	ks_template_config_default(tpl, def);
	ks_info("candidate %ld carries %d knobs (%d feasible configurations): tuning up to %d "
		"without the model",
		first->id, tpl->nknobs, cs.n, cap);
	int spent = 0;
	while (spent < cap && budget_left(L) > 0 && !rc) {
		struct ks_proposal p;
		int n = 0;
		if ((rc = ks_strategy_propose(s, &p, 1, &n, e)) || n == 0)
			break;
		struct ks_outcome oc = {.candidate = first->id, .passed = first->passed,
					.score = first->score, .status = first->status};
		if (memcmp(p.knobs, def, (size_t)tpl->nknobs * sizeof(int))) {
			char defs[KS_TEMPLATE_MAX_KNOBS + 1][128];
			const char *list[KS_TEMPLATE_MAX_KNOBS + 1];
			struct ks_buf ident = KS_BUF_INIT, knobs = KS_BUF_INIT, ttl = KS_BUF_INIT;
			ks_search_space_defines(tpl, p.knobs, &ident, defs, list,
						KS_TEMPLATE_MAX_KNOBS + 1);
			ks_search_space_knobs_json(tpl, p.knobs, &knobs);
			ks_buf_addf(&ttl, "%s [%s]", title, ks_buf_str(&ident));
			struct cand_desc d = {.node = node, .code = code, .title = ks_buf_str(&ttl),
					      .parent = first->id,
					      .family = tpl->family ? tpl->family : "",
					      .knobs = ks_buf_str(&knobs), .ident = ks_buf_str(&ident),
					      .defines = list};
			struct attempt a;
			rc = evaluate(L, &d, &a, e);
			ks_buf_release(&ident);
			ks_buf_release(&knobs);
			ks_buf_release(&ttl);
			spent++;
			oc = (struct ks_outcome){.candidate = a.id, .passed = a.passed,
						 .score = a.score, .status = a.status};
		}
		if (!rc)
			rc = ks_strategy_observe(s, &p, &oc, e);
	}
out:
	if (s)
		ks_strategy_free(s);
	ks_config_set_release(&cs);
	ks_template_free(tpl);
	return rc;
}

/* ---- the world model: init and edits ----------------------------------------------- */

/* drop what only the system may set from a model-written document */
static char *scrub_document(const char *doc)
{
	static const char *const system_keys[] = {
		"result", "attempts", "failures", "visits", "consecutive_failures",
		"since_improvement", "regression", "close_reason", "learned_shift", "candidate",
		"candidate_id", "score", "move"};
	json_t *j = json_loads(doc, 0, NULL);
	if (!j)
		return NULL;
	json_object_del(j, "move_evidence");
	json_t *nodes = json_object_get(json_object_get(j, "decision_tree"), "nodes");
	size_t i;
	json_t *n;
	json_array_foreach(nodes, i, n) {
		for (size_t k = 0; k < sizeof(system_keys) / sizeof(system_keys[0]); k++)
			json_object_del(n, system_keys[k]);
		const char *s = json_string_value(json_object_get(n, "status"));
		if (s && strcmp(s, "pruned"))
			json_object_set_new(n, "status", json_string("open"));
	}
	char *out = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return out;
}

static int import_doc(struct loop *L, const char *doc, struct ks_error *ie)
{
	char *clean = scrub_document(doc);
	if (!clean)
		return ks_error_set(ie, KS_EPARSE, "the document is not a JSON object");
	int rc = ks_world_import(&L->w, clean, ie);
	free(clean);
	if (rc == 0 && ks_world_count(&L->w) < 1) {
		ks_world_release(&L->w);
		rc = ks_error_set(ie, KS_EINVARIANT, "the tree has no nodes");
	}
	return rc;
}

static int world_init(struct loop *L, struct ks_error *e)
{
	struct ks_run_state *st = L->st;
	struct ks_context_piece pieces[] = {
		{.name = "task", .text = ks_buf_str(&L->task), .priority = KS_CONTEXT_PRIO_TASK,
		 .required = 1},
		PIECE("parent_code", L->baseline, KS_CONTEXT_PRIO_CODE),
		PIECE("hardware", ks_buf_str(&L->hardware), KS_CONTEXT_PRIO_HARDWARE),
		PIECE("translation", ks_buf_str(&L->translation), KS_CONTEXT_PRIO_TRANSLATION),
	};
	struct ks_prompt_var vars[] = {{"backend", st->be->name}, {"language", L->lang}};
	struct ks_buf doc = KS_BUF_INIT;
	struct ks_error ie = {0};
	enum ask_result res;
	int rc = 0, imported = 0;
	for (int round = 0; round < 2 && !imported && !rc; round++) {
		struct ks_buf corr = KS_BUF_INIT;
		if (round)
			ks_buf_addf(&corr,
				    "Your previous world-model document could not be used: %s.\n"
				    "Reply again with one ```json block holding the whole document "
				    "in the shape shown above.",
				    ie.msg);
		rc = ask(L, "init", round ? "init-fix" : "init", round ? ks_buf_str(&corr) : NULL,
			 pieces, 4, vars, 2, KS_LLM_WANT_JSON_OBJECT, 2, &doc, NULL, &res, e);
		ks_buf_release(&corr);
		if (rc || res != ASK_OK)
			break;
		if (import_doc(L, ks_buf_str(&doc), &ie) == 0)
			imported = 1;
		else
			ks_warn("init: the model's world model was rejected: %s", ie.msg);
	}
	ks_buf_release(&doc);
	if (rc)
		return rc;
	if (imported) {
		L->have_world = 1;
		ks_info("init: the model's world model has %d nodes", ks_world_count(&L->w));
		return 0;
	}
	ks_warn("init: no usable world model from the model; starting from the root alone "
		"(edit rounds propose the actions)");
	if ((rc = ks_world_init(&L->w, "naive baseline", st->task->summary, e)))
		return rc;
	L->have_world = 1;
	return 0;
}

/* one edit round: the model updates the tree from evidence; *changed = nodes added or
 * ops applied */
static int world_edit(struct loop *L, const char *evidence, const char *feedback, int *changed,
		      struct ks_error *e)
{
	struct ks_run_state *st = L->st;
	struct ks_buf full = KS_BUF_INIT, brief = KS_BUF_INIT, script = KS_BUF_INIT;
	tree_text(&L->w, 1, &full);
	tree_text(&L->w, 0, &brief);
	struct ks_context_piece pieces[] = {
		{.name = "task", .text = ks_buf_str(&L->task), .priority = KS_CONTEXT_PRIO_TASK,
		 .required = 1},
		{.name = "evidence", .text = evidence, .priority = KS_CONTEXT_PRIO_ACTION,
		 .required = 1},
		{.name = "tree", .text = ks_buf_str(&full), .short_text = ks_buf_str(&brief),
		 .priority = KS_CONTEXT_PRIO_TREE},
		PIECE("feedback", feedback, KS_CONTEXT_PRIO_FEEDBACK),
		PIECE("hardware", ks_buf_str(&L->hardware), KS_CONTEXT_PRIO_HARDWARE),
	};
	char maxnew[16];
	snprintf(maxnew, sizeof(maxnew), "%d", KS_WORLD_MAX_NEW_PER_EDIT);
	struct ks_prompt_var vars[] = {{"backend", st->be->name}, {"language", L->lang},
				       {"max_new_nodes", maxnew}};
	struct ks_error ie = {0};
	enum ask_result res;
	int rc = 0;
	*changed = 0;
	for (int round = 0; round < 2 && !rc; round++) {
		struct ks_buf corr = KS_BUF_INIT;
		struct ks_llm_reply reply;
		memset(&reply, 0, sizeof(reply));
		if (round)
			ks_buf_addf(&corr,
				    "Your previous edit script was rejected and changed nothing: %s.\n"
				    "Reply again with one ```json array of ops that keeps the rules "
				    "(or [] to change nothing).",
				    ie.msg);
		rc = ask(L, "edit", round ? "edit-fix" : "edit", round ? ks_buf_str(&corr) : NULL,
			 pieces, 5, vars, 3, KS_LLM_WANT_JSON_ARRAY, 1, &script, &reply, &res, e);
		ks_buf_release(&corr);
		if (rc || res != ASK_OK)
			break;
		struct ks_buf note = KS_BUF_INIT;
		if (reply.content && ks_reply_note(reply.content, reply.len, "UPDATE_BELIEF", &note) == 0)
			ks_debug("edit: UPDATE_BELIEF: %.300s", ks_buf_str(&note));
		ks_buf_release(&note);
		ks_llm_reply_release(&reply);
		int ids[KS_WORLD_MAX_NEW_PER_EDIT], nnew = 0, before = ks_world_count(&L->w);
		if (ks_world_apply(&L->w, ks_buf_str(&script), ids, &nnew, &ie) == 0) {
			ks_info("edit: the model's script applied (%d new nodes, %d nodes in the tree)",
				nnew, ks_world_count(&L->w));
			*changed = nnew > 0 || strcmp(ks_buf_str(&script), "[]") ||
				   ks_world_count(&L->w) != before;
			break;
		}
		ks_warn("edit: the model's script was rejected (%s)%s", ie.msg,
			round ? "; skipped" : "; asking for a correction");
	}
	ks_buf_release(&full);
	ks_buf_release(&brief);
	ks_buf_release(&script);
	return rc;
}

static void snapshot(struct loop *L)
{
	struct ks_buf snap = KS_BUF_INIT;
	snap.cap = KS_STORE_MAX_SNAPSHOT;
	struct ks_error e = {0};
	if (ks_world_export(&L->w, &snap, &e) == 0)
		ks_store_add_snapshot(L->st->store, L->st->round, ks_buf_str(&snap), NULL, &e);
	if (e.msg[0])
		ks_warn("world-model snapshot: %s", e.msg);
	ks_buf_release(&snap);
}

/* ---- one node's refinement session --------------------------------------------------- */

static void node_nocode(struct loop *L, int id)
{
	if (id >= L->nnocode) {
		int *v = realloc(L->nocode, (size_t)(id + 1) * sizeof(int));
		if (!v)
			return;
		memset(v + L->nnocode, 0, (size_t)(id + 1 - L->nnocode) * sizeof(int));
		L->nocode = v;
		L->nnocode = id + 1;
	}
	if (++L->nocode[id] >= LLM_NOCODE_MAX) {
		ks_world_set_status(&L->w, id, KS_NODE_CLOSED, "no usable code from the model", NULL);
		ks_warn("node %d closed: the model gave no usable code %d times", id, L->nocode[id]);
	} else {
		ks_world_set_status(&L->w, id, KS_NODE_OPEN, NULL, NULL);
	}
}

/* should the session go on with `want` ("improve" after a pass, "debug" after a failure)?
 * A replay follows the recorded path; otherwise the world's verdict decides. */
static int session_goes_on(struct loop *L, int id, const char *want, enum ks_refine verdict)
{
	const char *next = ks_llm_policy_peek(L->pol);
	if (next)
		return !strcmp(next, want);
	const struct ks_node *n = ks_world_node(&L->w, id);
	/* knob tuning records on the node too and may have closed it */
	return verdict == KS_REFINE_CONTINUE && n && n->status == KS_NODE_ACTIVE;
}

static int session(struct loop *L, int id, struct ks_buf *evidence, struct ks_buf *last_fb,
		   struct ks_error *e)
{
	struct ks_run_state *st = L->st;
	int rc = ks_world_begin(&L->w, id, e);
	if (rc)
		return rc;
	struct ks_buf action = KS_BUF_INIT, title = KS_BUF_INIT, parent_code = KS_BUF_INIT,
		      code = KS_BUF_INIT, best_code = KS_BUF_INIT, full = KS_BUF_INIT,
		      brief = KS_BUF_INIT;
	node_text(&L->w, id, &action);
	ks_buf_adds(&title, ks_world_node(&L->w, id)->title);
	int base = ks_world_base(&L->w, id);
	long base_cand = ks_world_node(&L->w, base)->candidate;
	if ((rc = candidate_code(L, base_cand, &parent_code, e)))
		goto out;
	tree_text(&L->w, 1, &full);
	tree_text(&L->w, 0, &brief);
	char node_id[16];
	snprintf(node_id, sizeof(node_id), "%d", id);
	struct ks_prompt_var vars[] = {{"backend", st->be->name}, {"language", L->lang},
				       {"node_id", node_id}};
	ks_buf_addf(evidence, "Node %d \"%s\" (built on %s):\n", id, ks_buf_str(&title),
		    base_cand >= 0 ? "the best candidate of its path" : "the starting kernel");
	ks_info("node %d \"%s\": asking the model for code", id, ks_buf_str(&title));
	{
		struct ks_context_piece pieces[] = {
			{.name = "task", .text = ks_buf_str(&L->task),
			 .priority = KS_CONTEXT_PRIO_TASK, .required = 1},
			{.name = "action", .text = ks_buf_str(&action),
			 .priority = KS_CONTEXT_PRIO_ACTION, .required = 1},
			PIECE("parent_code", ks_buf_str(&parent_code), KS_CONTEXT_PRIO_CODE),
			PIECE("feedback", fb_get(L, base_cand), KS_CONTEXT_PRIO_FEEDBACK),
			PIECE("hardware", ks_buf_str(&L->hardware), KS_CONTEXT_PRIO_HARDWARE),
			{.name = "tree", .text = ks_buf_str(&full), .short_text = ks_buf_str(&brief),
			 .priority = KS_CONTEXT_PRIO_TREE},
			PIECE("translation", ks_buf_str(&L->translation),
			      KS_CONTEXT_PRIO_TRANSLATION),
		};
		enum ask_result res;
		if ((rc = ask(L, "action", "action", NULL, pieces, 7, vars, 3, KS_LLM_WANT_CODE, 1,
			      &code, NULL, &res, e)))
			goto out;
		if (res != ASK_OK) {
			ks_buf_adds(evidence, "- the model gave no usable code for this action\n");
			ks_info("node %d: no usable code from the model this time", id);
			node_nocode(L, id);
			goto out;
		}
	}
	const char *kind = "action";
	long best_id = -1, parent = base_cand;
	double best_score = 0;
	for (;;) {
		struct ks_buf ttl = KS_BUF_INIT;
		ks_buf_addf(&ttl, "%s%s%s", ks_buf_str(&title), strcmp(kind, "action") ? " / " : "",
			    strcmp(kind, "action") ? kind : "");
		struct cand_desc d = {.node = id, .code = ks_buf_str(&code), .title = ks_buf_str(&ttl),
				      .parent = parent, .family = "",
				      .ident = "", .defines = NULL};
		struct attempt a;
		rc = evaluate(L, &d, &a, e);
		ks_buf_release(&ttl);
		if (rc)
			goto out;
		ks_buf_addf(evidence, "- %s: candidate %ld %s", kind, a.id, ks_status_name(a.status));
		if (a.passed)
			ks_buf_addf(evidence, ", %.3fx the baseline", a.score);
		ks_buf_adds(evidence, "\n");
		ks_buf_reset(last_fb);
		ks_buf_adds(last_fb, fb_get(L, a.id));
		if (a.passed) {
			if (best_id < 0 || a.score > best_score) {
				best_id = a.id;
				best_score = a.score;
				ks_buf_reset(&best_code);
				ks_buf_adds(&best_code, ks_buf_str(&code));
			}
			if ((rc = tune(L, id, ks_buf_str(&code), &a, ks_buf_str(&title), e)))
				goto out;
		}
		if (budget_left(L) <= 0)
			break;
		const struct ks_node *n = ks_world_node(&L->w, id);
		int go = a.passed ? session_goes_on(L, id, "improve", a.verdict)
				  : session_goes_on(L, id, "debug", a.verdict);
		if (!go) {
			ks_buf_addf(evidence, "- session ended: %s\n",
				    n->close_reason ? n->close_reason : "the recorded run moved on");
			break;
		}
		kind = a.passed ? "improve" : "debug";
		parent = a.passed ? best_id : a.id;
		struct ks_context_piece pieces[] = {
			{.name = "task", .text = ks_buf_str(&L->task),
			 .priority = KS_CONTEXT_PRIO_TASK, .required = 1},
			{.name = "action", .text = ks_buf_str(&action),
			 .priority = KS_CONTEXT_PRIO_ACTION, .required = 1},
			PIECE(a.passed ? "best_code" : "candidate_code",
			      a.passed ? ks_buf_str(&best_code) : ks_buf_str(&code),
			      KS_CONTEXT_PRIO_CODE),
			PIECE("feedback", fb_get(L, a.passed ? best_id : a.id),
			      KS_CONTEXT_PRIO_FEEDBACK),
			PIECE("hardware", ks_buf_str(&L->hardware), KS_CONTEXT_PRIO_HARDWARE),
			PIECE("translation", ks_buf_str(&L->translation),
			      KS_CONTEXT_PRIO_TRANSLATION),
		};
		enum ask_result res;
		struct ks_buf next = KS_BUF_INIT;
		rc = ask(L, kind, kind, NULL, pieces, a.passed ? 6 : 5, vars, 2, KS_LLM_WANT_CODE,
			 1, &next, NULL, &res, e);
		if (!rc && res == ASK_OK) {
			ks_buf_reset(&code);
			ks_buf_adds(&code, ks_buf_str(&next));
		}
		ks_buf_release(&next);
		if (rc)
			goto out;
		if (res != ASK_OK) {
			ks_buf_addf(evidence, "- the model gave no usable code for %s\n", kind);
			break;
		}
	}
	/* a session the world did not close (budget, replay, no code) ends here */
	struct ks_node *n = ks_world_node(&L->w, id);
	if (n && n->status == KS_NODE_ACTIVE)
		ks_world_set_status(&L->w, id, n->candidate >= 0 ? KS_NODE_CLOSED : KS_NODE_OPEN,
				    "refinement session ended", NULL);
out:
	ks_buf_release(&action);
	ks_buf_release(&title);
	ks_buf_release(&parent_code);
	ks_buf_release(&code);
	ks_buf_release(&best_code);
	ks_buf_release(&full);
	ks_buf_release(&brief);
	return rc;
}

/* ---- the phase ---------------------------------------------------------------------- */

int ks_run_llm_check(const struct ks_run_opts *o, struct ks_error *e)
{
	return ks_llm_policy_check(o, e);
}

static int setup(struct loop *L, struct ks_error *e)
{
	struct ks_run_state *st = L->st;
	int rc;
	static const char *const templates[] = {"system.txt", "init.txt", "action.txt",
						"debug.txt", "improve.txt", "edit.txt"};
	for (size_t i = 0; i < sizeof(templates) / sizeof(templates[0]); i++) {
		struct ks_buf b = KS_BUF_INIT;
		rc = ks_prompt_load(st->o.prompts_dir, templates[i], &b, e);
		ks_buf_release(&b);
		if (rc)
			return rc;
	}
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/baseline.%s", st->task->dir, st->be->ext);
	struct ks_buf b = KS_BUF_INIT;
	if ((rc = ks_file_read(path, KS_STORE_MAX_SOURCE, &b, e))) {
		ks_buf_release(&b);
		return ks_error_wrap(e, "the starting kernel");
	}
	ks_buf_adds(&b, "");
	L->baseline = ks_buf_detach(&b, NULL);
	L->lang = st->be->lang;
	task_text(st, &L->task);
	enum ks_context_level level = KS_CONTEXT_FULL;
	if (st->o.context && (rc = ks_context_level_parse(st->o.context, &level)))
		return ks_error_set(e, KS_EINVAL, "--context '%s': expected none, spec or full",
				    st->o.context);
	if (level >= KS_CONTEXT_SPEC && st->have_spec)
		rc = ks_context_pack(KS_CONTEXT_SPEC, st->task->cls, st->be->name, &st->spec, NULL,
				     &L->hardware, e);
	if (!rc && level == KS_CONTEXT_FULL)
		rc = ks_context_pack(KS_CONTEXT_FULL, st->task->cls, st->be->name, NULL, NULL,
				     &L->translation, e);
	if (rc)
		return ks_error_wrap(e, "context");
	if (!L->hardware.len)
		ks_buf_adds(&L->hardware, "(not provided)");
	if (!L->translation.len)
		ks_buf_adds(&L->translation, "(not provided)");
	if (st->resumed) {
		if ((rc = ks_store_list_candidates(st->store, KS_STORE_ORDER_ID, &L->prev, &L->nprev,
						   e)))
			return rc;
	}
	return 0;
}

int ks_run_llm_search(struct ks_run_state *st, struct ks_error *e)
{
	struct loop L = {.st = st};
	struct ks_llm_policy *pol = calloc(1, sizeof(*pol));
	if (!pol)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	L.pol = pol;
	int rc = setup(&L, e);
	if (rc)
		goto done;
	if ((rc = ks_llm_policy_open(pol, &st->o, st->store, st->resumed, &st->round, e)))
		goto done;
	ks_info("policy %s: the model writes the kernels (budget %d candidates%s)", st->o.policy,
		st->o.budget, st->o.llm_replay ? ", replayed" : "");
	ks_run_progress_tick(st, "search", "asking the model for a world model", 0);
	if ((rc = world_init(&L, e)))
		goto done;
	snapshot(&L);
	st->round++;
	int idle_edits = 0;
	struct ks_buf evidence = KS_BUF_INIT, fb = KS_BUF_INIT;
	while (budget_left(&L) > 0) {
		int id;
		struct ks_error se = {0};
		ks_buf_reset(&evidence);
		ks_buf_reset(&fb);
		if (ks_world_select(&L.w, &id, &se)) {
			if (idle_edits++ >= 1) {
				ks_info("no open action left in the world model after %d candidates",
					st->evaluated);
				break;
			}
			ks_buf_adds(&evidence, "The tree has no open action left. Propose new actions "
					       "(insert_node) from what was measured.\n");
			ks_buf_adds(&fb, "(see the measured results in the tree)");
		} else {
			idle_edits = 0;
			if ((rc = session(&L, id, &evidence, &fb, e)))
				break;
			if (budget_left(&L) <= 0) {
				snapshot(&L);
				break;
			}
		}
		int changed = 0;
		if ((rc = world_edit(&L, ks_buf_str(&evidence), ks_buf_str(&fb), &changed, e)))
			break;
		snapshot(&L);
		st->round++;
	}
	ks_buf_release(&evidence);
	ks_buf_release(&fb);
	if (L.stop && !rc)
		ks_info("search phase ended early after %d of %d candidates", st->evaluated,
			st->o.budget);
done:
	if (pol->client.transport) {
		const struct ks_llm_usage *u = &pol->client.usage;
		st->llm_calls = u->calls;
		st->llm_prompt_tokens = u->prompt_tokens;
		st->llm_completion_tokens = u->completion_tokens;
		st->llm_cost = u->cost_usd;
		ks_info("llm: %ld calls (%ld failed), %ld prompt + %ld completion tokens, $%.4f",
			u->calls, u->failures, u->prompt_tokens, u->completion_tokens, u->cost_usd);
		ks_llm_policy_close(pol);
	}
	free(pol);
	if (L.have_world)
		ks_world_release(&L.w);
	free(L.baseline);
	ks_buf_release(&L.task);
	ks_buf_release(&L.hardware);
	ks_buf_release(&L.translation);
	free(L.nocode);
	for (int i = 0; i < L.nfb; i++)
		free(L.fb[i].text);
	free(L.fb);
	for (int i = 0; i < L.ntuned; i++)
		free(L.tuned[i]);
	free(L.tuned);
	ks_store_free(L.prev);
	return rc;
}
