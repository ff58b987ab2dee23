/* The llm, cmd and files policies: K-Search with a model, as a state machine that hands
 * the driver one candidate at a time (the steps live in the files llm_impl.h lists).
 *
 *   init    the model classifies the kernel and proposes the first actions: its document
 *           becomes the world model (measured fields stripped first)
 *   select  the node the model named next (active_leaf_id) when it keeps the rules, else
 *           the most promising open action; the model implements it on the code of the
 *           node's best ancestor (action)
 *   cycle   each outcome goes back to the model: failures as debug prompts (bounded by the
 *           world's debug budget), repeats as repeat prompts, passes as improve prompts with
 *           the cycle's attempts, until the node stagnates or the cycle has had its share of
 *           the budget (a quarter); each kernel is credited to the node it implements; a
 *           passing kernel with an @ksearch knob block has its knobs tuned by a nested
 *           builtin policy (no model calls); the budget's last eighth is kept for the knobs
 *           of the run's fastest kernel (llm_tune.c)
 *   edit    after each cycle the model edits the tree from the evidence, reflects on the
 *           cycle's node and names the next node
 *   direct  when the tree has no open action even after an edit round, the model is asked
 *           for a kernel faster than the best one so far (a "direct" node)
 *
 * Nothing the model says is trusted: unusable replies get bounded corrections, a kernel in
 * a reply whose JSON is unusable is still evaluated, repeated kernels are not evaluated
 * again, and whatever ksearch could not use goes back to the model in its next prompt and
 * into the run's events.  The policy stops only when the model's budget (--llm-max-calls,
 * --llm-max-cost) is spent, a replay has no recorded reply left, the run is interrupted
 * while waiting for a reply, or --llm-max-failures replies in a row gave nothing new.  A
 * model that cannot be reached at all (KS_EUNAVAILABLE, policy/llm.h) and a replay that
 * ends before its first candidate are errors: the run fails. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/log.h"
#include "ksearch/strategy.h"
#include "policy/llm_impl.h"
#include "policy/llm_text.h"

/* ---- bookkeeping --------------------------------------------------------------------- */

int llm_budget_left(const struct lp *L)
{
	return L->stop ? 0 : L->env.budget_left(L->env.ctx);
}

int llm_replay_decides(const struct lp *L)
{
	return ks_llm_policy_peek(&L->pol) != NULL;
}

void llm_stop(struct lp *L, const char *why)
{
	if (!L->stop)
		snprintf(L->stop_reason, sizeof(L->stop_reason), "%s", why);
	L->stop = 1;
}

/* a reply (or a round of replies) that gave nothing new */
void llm_unusable(struct lp *L, const char *what)
{
	if (++L->fails >= L->max_fails) {
		char why[256];
		snprintf(why, sizeof(why), "%d model replies in a row gave nothing new (last: %s; "
			 "--llm-max-failures)", L->fails, what);
		llm_stop(L, why);
	}
}

const char *llm_fb_get(const struct lp *L, long id)
{
	for (int i = L->nfb - 1; i >= 0; i--)
		if (L->fb[i].id == id)
			return L->fb[i].text ? L->fb[i].text : "";
	return id < 0 ? "(the starting kernel: no measurement shown)" : "(no feedback recorded)";
}

static void fb_put(struct lp *L, long id, const char *text)
{
	struct fb_entry *v = realloc(L->fb, (size_t)(L->nfb + 1) * sizeof(*v));
	if (!v)
		return;
	L->fb = v;
	L->fb[L->nfb].id = id;
	L->fb[L->nfb].text = strdup(text);
	L->nfb++;
}

/* ---- propose ---------------------------------------------------------------------- */

static int select_next(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e)
{
	int id, rc = 0;
	ks_buf_reset(&L->evidence);
	ks_buf_reset(&L->last_fb);
	if (llm_world_next(L, &id) == 0) {
		L->idle = 0;
		L->no_open = 0;
		if (!(rc = llm_session_begin(L, id, "action", e)))
			rc = llm_ask_action(L, out, n, e);
	} else if (L->idle++ == 0) {
		ks_buf_adds(&L->evidence, "The tree has no open action left. Propose new actions "
					  "(insert_node) from what was measured.\n");
		ks_buf_adds(&L->last_fb, "(see the measured results in the tree)");
		L->no_open = 1;
		L->phase = PH_EDIT;
	} else {
		L->idle = 0;
		L->phase = PH_DIRECT;
	}
	return rc;
}

static int step(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e)
{
	int rc = 0;
	switch (L->phase) {
	case PH_INIT:
		if (!(rc = llm_world_init(L, e))) {
			(*L->env.round)++;
			L->phase = PH_SELECT;
		}
		break;
	case PH_SELECT:
		rc = select_next(L, out, n, e);
		break;
	case PH_NEXT:
		rc = llm_ask_next(L, out, n, e);
		break;
	case PH_TUNE:
		rc = llm_tune_next(L, out, n, e);
		break;
	case PH_EDIT:
		if (!(rc = llm_world_edit(L, e))) {
			(*L->env.round)++;
			L->phase = PH_SELECT;
		}
		break;
	case PH_DIRECT:
		rc = llm_ask_direct(L, out, n, e);
		break;
	}
	return rc;
}

static int lp_propose(void *state, struct ks_policy_cand *out, int max, int *n,
		      struct ks_policy_stop *why, struct ks_error *e)
{
	struct lp *L = state;
	int rc = 0;
	(void)max; /* one at a time: the next prompt depends on this outcome */
	while (!rc && !*n) {
		if (L->stop || llm_budget_left(L) <= 0)
			break;
		if (L->phase != PH_INIT && L->phase != PH_TUNE && (rc = llm_tune_reserved(L, e)) != 0) {
			rc = rc < 0 ? rc : 0;
			continue;
		}
		if (L->pending.len && L->phase != PH_TUNE && L->phase != PH_NEXT)
			rc = llm_emit_pending(L, out, n, e);
		else
			rc = step(L, out, n, e);
	}
	if (!*n)
		snprintf(why->reason, sizeof(why->reason), "%s",
			 L->stop ? L->stop_reason : "budget");
	return rc;
}

/* ---- observe ---------------------------------------------------------------------- */

/* what candidate o measured, named, as the model reads it next to its code */
static void outcome_text(const struct ks_policy_outcome *o, struct ks_buf *fb)
{
	ks_buf_addf(fb, "candidate %ld: ", o->candidate);
	if (o->res) {
		ks_llm_feedback_text(o->res, fb);
	} else if (o->duplicate_of > 0) {
		ks_buf_addf(fb, "This kernel is identical to candidate %ld, evaluated already "
				"(status %s%s): it was not evaluated again.\n",
			    o->duplicate_of, ks_status_name(o->status),
			    o->passed ? ", passed" : "");
	} else {
		ks_buf_addf(fb, "status %s (measured before the resume)\n", ks_status_name(o->status));
		if (o->passed)
			ks_buf_addf(fb, "%.3fx the baseline\n", o->score);
	}
}

/* a passing kernel of the cycle, the model's or a knob tuning's: the cycle's best when it
 * measured faster (a tuned variant is one of the cycle's kernels like any other) */
static void cycle_passed(struct lp *L, const struct ks_policy_outcome *o)
{
	long *v = realloc(L->cycle, (size_t)(L->ncycle + 1) * sizeof(long));
	if (v) {
		L->cycle = v;
		L->cycle[L->ncycle++] = o->candidate;
	}
	if (L->best_id < 0 || o->score > L->best_score) {
		L->best_id = o->candidate;
		L->best_score = o->score;
	}
}

/* candidate o passed: the run's fastest so far when it measured faster than every other;
 * model (1) when the model wrote it as it ran (its knobs at their defaults) */
static void run_best(struct lp *L, const struct ks_policy_outcome *o, int node, int model)
{
	if (L->run_best_id >= 0 && o->score <= L->run_best_score)
		return;
	L->run_best_id = o->candidate;
	L->run_best_score = o->score;
	L->run_best_node = node;
	ks_buf_reset(&L->run_best_code);
	if (model)
		ks_buf_adds(&L->run_best_code, ks_buf_str(&L->code));
}

/* a kernel of the knob tuning: recorded on the tuned kernel's node (the cycle's, or the
 * run's fastest kernel's for the reserve), one line in the cycle's attempts */
static int observe_tuned(struct lp *L, const struct ks_policy_cand *c,
			 const struct ks_policy_outcome *o, struct ks_error *e)
{
	L->tune_spent++;
	int rc = ks_policy_observe(&L->tuner, c, o, e);
	if (rc || o->duplicate_of)
		return rc;
	char what[160];
	snprintf(what, sizeof(what), "knob tuning (%s)", c->ident && c->ident[0] ? c->ident : "");
	ks_buf_reset(&L->changed);
	ks_buf_reset(&L->expected);
	llm_attempt_add(L, L->tune_node, c, o, what);
	llm_kernel_add(L, c, o, L->tune_node, L->tune_of);
	if (o->passed) {
		run_best(L, o, L->tune_node, 0);
		cycle_passed(L, o);
		if (o->score > L->tune_best_score) {
			L->tune_best = o->candidate;
			L->tune_best_score = o->score;
		}
	}
	return ks_world_record(&L->w, L->tune_node, o->candidate, o->passed, o->score, NULL, e);
}

/* the cycle's kernel: what it measured goes to the tree, the evidence and the attempts */
static void observe_kernel(struct lp *L, const struct ks_policy_cand *c,
			   const struct ks_policy_outcome *o, const char *fb)
{
	ks_buf_reset(&L->last_fb);
	ks_buf_adds(&L->last_fb, fb);
	ks_buf_addf(&L->evidence, "- %s: candidate %ld %s", L->kind, o->candidate,
		    o->duplicate_of ? "REPEATED (identical to an earlier kernel)"
				    : ks_status_name(o->status));
	if (o->passed)
		ks_buf_addf(&L->evidence, ", %.3fx the baseline", o->score);
	ks_buf_adds(&L->evidence, "\n");
	llm_attempt_add(L, L->node, c, o, L->kind);
	if (!o->duplicate_of)
		llm_kernel_add(L, c, o, L->node, -1);
	L->last_id = o->candidate;
	L->repeat_of = o->duplicate_of > 0 ? o->duplicate_of : -1;
	if (o->duplicate_of) {
		llm_unusable(L, "a repeated kernel");
		llm_event(L, "repeat", o->duplicate_of,
			  "the model's %s kernel repeated candidate %ld: not evaluated again",
			  L->kind, o->duplicate_of);
	} else {
		L->fails = 0;
	}
}

static int lp_observe(void *state, const struct ks_policy_cand *c,
		      const struct ks_policy_outcome *o, struct ks_error *e)
{
	struct lp *L = state;
	int rc;
	struct ks_buf fb = KS_BUF_INIT;
	outcome_text(o, &fb);
	if (!o->duplicate_of) {
		fb_put(L, o->candidate, ks_buf_str(&fb));
		llm_noise_observe(L, o->candidate);
		L->evaluated++;
		L->cycle_evals++;
		L->cycle_tuned += L->phase == PH_TUNE && L->tuning;
	}
	if (L->phase == PH_TUNE && L->tuning) {
		ks_buf_release(&fb);
		return observe_tuned(L, c, o, e);
	}
	observe_kernel(L, c, o, ks_buf_str(&fb));
	ks_buf_release(&fb);
	/* a repeat is a failed attempt of the node: it gave nothing new */
	int passed = o->passed && !o->duplicate_of;
	L->last_passed = passed;
	if ((rc = ks_world_record(&L->w, L->node, o->candidate, passed, o->score, &L->verdict, e)))
		return rc;
	if (passed) {
		run_best(L, o, L->node, 1);
		cycle_passed(L, o);
		int started = llm_tune_start(L, ks_buf_str(&L->code), o, L->node, e);
		if (started < 0)
			return started;
		if (started) {
			L->phase = PH_TUNE;
			return 0;
		}
	}
	llm_decide(L);
	return 0;
}

/* ---- the interface ------------------------------------------------------------------ */

static int lp_snapshot(void *state, struct ks_buf *out, struct ks_error *e)
{
	struct lp *L = state;
	return L->have_world ? ks_world_export(&L->w, out, e) : 0;
}

static void lp_usage(void *state, struct ks_policy_usage *u)
{
	struct lp *L = state;
	if (!L->pol.client.transport)
		return;
	const struct ks_llm_usage *x = &L->pol.client.usage;
	*u = (struct ks_policy_usage){.calls = x->calls, .failures = x->failures,
				      .prompt_tokens = x->prompt_tokens,
				      .completion_tokens = x->completion_tokens,
				      .tokens_unknown = x->tokens_unknown,
				      .cost_usd = x->cost_usd};
}

static void lp_free(void *state)
{
	struct lp *L = state;
	if (!L)
		return;
	llm_tune_release(L);
	if (L->pol.client.transport)
		ks_llm_policy_close(&L->pol);
	if (L->have_world)
		ks_world_release(&L->w);
	ks_llm_context_release(&L->ctx);
	struct ks_buf *bufs[] = {&L->action, &L->title, &L->code, &L->parent_why, &L->base_code,
				 &L->evidence, &L->last_fb, &L->cand_title, &L->pending,
				 &L->edit_notes, &L->notes, &L->attempts, &L->changed,
				 &L->expected, &L->implements, &L->run_best_code};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		ks_buf_release(bufs[i]);
	free(L->nocode);
	for (int i = 0; i < L->nfb; i++)
		free(L->fb[i].text);
	free(L->fb);
	for (int i = 0; i < L->ntuned; i++)
		free(L->tuned[i]);
	free(L->tuned);
	free(L->tuned_id);
	free(L->unscored);
	free(L->spreads);
	free(L->cycle);
	llm_kernels_free(L);
	free(L);
}

/* the run-independent context of every prompt, at the run's --context level */
static int context_open(struct lp *L, struct ks_error *e)
{
	const struct ks_policy_env *env = &L->env;
	enum ks_context_level level = KS_CONTEXT_FULL;
	if (env->o->context && ks_context_level_parse(env->o->context, &level))
		return ks_error_set(e, KS_EINVAL, "--context '%s': expected none, spec or full",
				    env->o->context);
	struct ks_llm_context_opts co = {.task = env->task, .be = env->be, .spec = env->spec,
					 .level = level, .workloads = env->o->eval.workloads,
					 .threads = env->o->eval.threads};
	return ks_llm_context_open(&L->ctx, &co, e);
}

static int lp_open(void **state, const struct ks_policy_env *env, enum ks_llm_kind kind,
		   struct ks_error *e)
{
	struct lp *L = calloc(1, sizeof(*L));
	if (!L)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	*state = L;
	L->env = *env;
	L->max_fails = env->o->llm_max_failures > 0 ? env->o->llm_max_failures : LLM_MAX_FAILS;
	L->last_id = L->best_id = L->base_cand = L->repeat_of = -1;
	L->node = L->want_leaf = -1;
	L->run_best_id = -1;
	/* the budget's last 1/LLM_TUNE_RESERVE for the knobs of the run's fastest kernel */
	L->tune_reserve = (env->o->budget + LLM_TUNE_RESERVE - 1) / LLM_TUNE_RESERVE;
	L->cycle_cap = env->o->budget / LLM_CYCLE_SHARE > 1 ? env->o->budget / LLM_CYCLE_SHARE : 1;
	int rc;
	static const char *const templates[] = {"system.txt", "init.txt",    "action.txt",
						"debug.txt",  "improve.txt", "repeat.txt",
						"edit.txt",   "direct.txt"};
	for (size_t i = 0; i < sizeof(templates) / sizeof(templates[0]); i++) {
		struct ks_buf b = KS_BUF_INIT;
		rc = ks_prompt_load(env->o->prompts_dir, templates[i], &b, e);
		ks_buf_release(&b);
		if (rc)
			return rc;
	}
	if ((rc = context_open(L, e)))
		return rc;
	struct ks_llm_policy_cfg pc = {.o = env->o, .kind = kind, .store = env->store,
				       .resumed = env->resumed, .round = env->round,
				       .run_dir = env->run_dir, .cancelled = env->stopping,
				       .cancel_ctx = env->ctx};
	if ((rc = ks_llm_policy_open(&L->pol, &pc, e)))
		return rc;
	ks_info("policy %s: the model writes the kernels (budget %d candidates%s; the tree is "
		"revised once a cycle has %d candidates, %s)",
		env->o->policy, env->o->budget, env->o->llm_replay ? ", replayed" : "",
		L->cycle_cap, LLM_CYCLE_COUNTS);
	return 0;
}

#define LP_OPEN(name, kind)                                                                  \
	static int name(void **state, const struct ks_policy_env *env, struct ks_error *e)   \
	{                                                                                    \
		int rc = lp_open(state, env, kind, e);                                       \
		if (rc)                                                                      \
			lp_free(*state);                                                     \
		return rc;                                                                   \
	}
LP_OPEN(llm_open, KS_LLM_HTTP)
LP_OPEN(cmd_open, KS_LLM_CMD)
LP_OPEN(files_open, KS_LLM_FILES)

static int check_common(const struct ks_run_opts *o, enum ks_llm_kind kind, struct ks_error *e)
{
	if (!ks_strategy_find(o->strategy)) /* the strategy that tunes @ksearch knobs */
		return ks_strategy_unknown(o->strategy, e);
	if (o->llm_max_failures < 0)
		return ks_error_set(e, KS_EINVAL, "--llm-max-failures must be at least 1");
	if (kind != KS_LLM_CMD && o->llm_cmd && o->llm_cmd[0])
		return ks_error_set(e, KS_EINVAL,
				    "--llm-cmd is used by --policy cmd only (the policy is '%s')",
				    o->policy);
	return ks_llm_policy_check(o, kind, e);
}

static int llm_check(const struct ks_run_opts *o, struct ks_error *e)
{
	return check_common(o, KS_LLM_HTTP, e);
}

static int cmd_check(const struct ks_run_opts *o, struct ks_error *e)
{
	return check_common(o, KS_LLM_CMD, e);
}

static int files_check(const struct ks_run_opts *o, struct ks_error *e)
{
	return check_common(o, KS_LLM_FILES, e);
}

#define LP_POLICY(var, pname, psummary, pcheck, popen)                                      \
	const struct ks_policy_i var = {                                                     \
		.version = KS_POLICY_VERSION, .name = pname, .summary = psummary,            \
		.uses_model = 1, .check = pcheck, .open = popen, .propose = lp_propose,      \
		.observe = lp_observe, .snapshot = lp_snapshot, .usage = lp_usage,           \
		.free = lp_free,                                                             \
	};
LP_POLICY(ks_policy_llm, "llm",
	  "a model behind an OpenAI-compatible endpoint writes the kernels (K-Search)", llm_check,
	  llm_open)
LP_POLICY(ks_policy_cmd, "cmd", "a model behind a shell command (prompt on stdin) writes the "
				"kernels",
	  cmd_check, cmd_open)
LP_POLICY(ks_policy_files, "files",
	  "whoever answers the prompt files in RUN_DIR/llm/ writes the kernels (an agent, a "
	  "person)",
	  files_check, files_open)
