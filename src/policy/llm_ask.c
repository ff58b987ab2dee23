/* Asking the model and sorting what came back; telling it what could not be used. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/log.h"
#include "ksearch/store.h"
#include "policy/llm_impl.h"
#include "policy/llm_text.h"

static void event_add(struct lp *L, const char *what, long candidate, const char *msg)
{
	json_t *d = json_pack("{s:s}", "what", what);
	if (candidate >= 0)
		json_object_set_new(d, "candidate", json_integer(candidate));
	char *data = json_dumps(d, JSON_COMPACT);
	json_decref(d);
	struct ks_error e = {0};
	if (L->env.store && ks_store_add_event(L->env.store, "warn", "llm_rejected", msg,
					       data ? data : "{}", &e))
		ks_debug("event not recorded: %s", e.msg);
	free(data);
}

/* the event, and (note) the line the model's next prompt shows */
static void vreport(struct lp *L, int note, const char *what, long candidate, const char *fmt,
		    va_list ap)
{
	char msg[1024];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (note)
		ks_buf_addf(&L->notes, "- %s\n", msg);
	event_add(L, what, candidate, msg);
}

void llm_event(struct lp *L, const char *what, long candidate, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(L, 0, what, candidate, fmt, ap);
	va_end(ap);
}

void llm_reject(struct lp *L, const char *what, long candidate, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(L, 1, what, candidate, fmt, ap);
	va_end(ap);
}

/* Sort the outcome of an ask into *res; an error return is an infrastructure fault that
 * ends the run (no model to ask, or a replay that ended before reproducing anything). */
static int ask_outcome(struct lp *L, const char *purpose, int rc, const struct ks_error *ae,
		       enum ask_result *res, struct ks_error *e)
{
	*res = ASK_STOP;
	if (rc == 0) {
		*res = ASK_OK;
		return 0;
	}
	if (rc == KS_EUNAVAILABLE)
		return ks_error_set(e, rc, "%s", ae->msg);
	char why[300];
	if (rc == KS_EBUDGET || rc == KS_EINTERRUPTED) {
		snprintf(why, sizeof(why), "%s: %s",
			 rc == KS_EBUDGET ? "the model's budget is spent" : "interrupted", ae->msg);
		llm_stop(L, why);
		return 0;
	}
	if (L->pol.npurposes > 0 && !L->pol.chain_live && (rc == KS_EPROTO || rc == KS_ENOTFOUND)) {
		const char *m = strstr(ae->msg, "replay exhausted");
		if (!m)
			m = strstr(ae->msg, "replay diverged");
		if (!L->evaluated)
			return ks_error_set(e, rc,
					    "the replay of '%s' ended before any candidate was "
					    "evaluated: %s",
					    L->env.o->llm_replay, m ? m : ae->msg);
		/* the recorded run is reproduced as far as it goes: a normal end */
		snprintf(why, sizeof(why), "%s (--llm-replay)", m ? m : ae->msg);
		llm_stop(L, why);
		return 0;
	}
	if (rc == KS_EPARSE) { /* each unusable reply is an event already (on_unusable) */
		ks_warn("the model's '%s' reply was unusable: %s", purpose, ae->msg);
		ks_buf_addf(&L->notes, "- your '%s' reply could not be used: %s\n", purpose, ae->msg);
	}
	/* transport failures were logged by the client after its retries */
	llm_unusable(L, purpose);
	*res = L->stop ? ASK_STOP : ASK_UNUSABLE;
	return 0;
}

/* every unusable reply, a corrected one too, is an event of the run */
static void on_unusable(void *ctx, const char *purpose, const char *why)
{
	llm_event(ctx, "unusable_reply", -1, "your '%s' reply could not be used: %s", purpose, why);
}

int llm_ask(struct lp *L, const char *tmpl, const char *purpose, const char *correction,
	    struct ks_llm_state *s, enum ks_llm_want want, int max_fixes, struct ks_buf *out,
	    struct ks_llm_reply *reply, enum ask_result *res, struct ks_error *e)
{
	struct ks_buf sys = KS_BUF_INIT, user = KS_BUF_INIT;
	s->notes = L->notes.len ? ks_buf_str(&L->notes) : NULL;
	int rc = ks_llm_prompt_make(L->env.o->prompts_dir, tmpl, L->env.be->name, &L->ctx, s, &sys,
				    &user, e);
	if (rc)
		goto out;
	if (s->notes_shown) /* every template but init's shows them */
		ks_buf_reset(&L->notes);
	if (correction)
		ks_buf_addf(&user, "\n\nPURPOSE: %s\n%s\n", purpose, correction);
	char what[64];
	snprintf(what, sizeof(what), "asking the model (%s)", purpose);
	L->env.progress(L->env.ctx, what);
	struct ks_llm_ask q = {.purpose = purpose, .system = ks_buf_str(&sys),
			       .user = ks_buf_str(&user), .want = want, .max_fixes = max_fixes,
			       .unusable = on_unusable, .unusable_ctx = L};
	if (want == KS_LLM_WANT_CODE)
		ks_llm_context_want_code(&L->ctx, &q);
	struct ks_error ae = {0};
	ks_buf_reset(out);
	int arc = ks_llm_ask(&L->pol.client, &q, out, reply, &ae);
	rc = ask_outcome(L, purpose, arc, &ae, res, e);
out:
	ks_buf_release(&sys);
	ks_buf_release(&user);
	return rc;
}

void llm_keep_reply_code(struct lp *L, const struct ks_llm_reply *r, const char *from)
{
	if (!r->content || L->pending.len)
		return;
	struct ks_buf code = KS_BUF_INIT;
	struct ks_error ce = {0};
	if (ks_reply_code(r->content, r->len, L->ctx.flavour, &code, NULL, &ce) == 0 && code.len) {
		if (code.len > KS_STORE_MAX_SOURCE)
			llm_reject(L, "unusable_reply", -1,
				   "the kernel in your %s reply is %zu bytes, over the %zu-byte limit "
				   "of a kernel source: not evaluated",
				   from, code.len, KS_STORE_MAX_SOURCE);
		else
			ks_buf_adds(&L->pending, ks_buf_str(&code));
		snprintf(L->pending_from, sizeof(L->pending_from), "%s", from);
	}
	ks_buf_release(&code);
}

void llm_state_base(struct lp *L, struct ks_llm_state *s, char *node_id, size_t n)
{
	memset(s, 0, sizeof(*s));
	if (L->have_world && L->node >= 0)
		ks_world_node_ref(&L->w, L->node, node_id, n);
	else
		snprintf(node_id, n, "%d", L->node);
	s->node_id = node_id;
	s->action = ks_buf_str(&L->action);
	s->attempts = L->attempts.len ? ks_buf_str(&L->attempts) : NULL;
}

static void versus_text(void *ctx, long a, long b, struct ks_buf *out)
{
	llm_versus(ctx, a, b, out);
}

void llm_state_tree(struct lp *L, struct ks_llm_state *s, struct ks_buf *full,
		    struct ks_buf *brief)
{
	/* the tree judges a node against the kernel above it by the rule the rest of the
	 * prompt uses (llm_versus), not by the speedup alone */
	struct ks_llm_versus vs = {.text = versus_text, .kernel = llm_kernel_text, .ctx = L};
	ks_llm_tree_text(&L->w, 1, &vs, full);
	ks_llm_tree_text(&L->w, 0, &vs, brief);
	llm_unscored_text(L, full);
	llm_unscored_text(L, brief);
	s->tree = ks_buf_str(full);
	s->tree_brief = ks_buf_str(brief);
}
