/* A cycle on one node: the action's kernel, then debug, improve or repeat kernels until the
 * node stagnates, its debug budget is spent or the cycle reaches its share of the budget;
 * each kernel credited to the node whose idea it implements (its IMPLEMENTS line). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ksearch/log.h"
#include "policy/llm_impl.h"
#include "policy/llm_text.h"

static void node_nocode(struct lp *L, int id)
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

/* the node's title and action text become the session's */
static void session_node(struct lp *L, int id)
{
	L->node = id;
	ks_buf_reset(&L->action);
	ks_buf_reset(&L->title);
	ks_llm_node_text(&L->w, id, &L->action);
	ks_buf_adds(&L->title, ks_world_node(&L->w, id)->title);
}

/* The node whose kernel an action on node id builds on: the nearest node on its path, id
 * first, with a measured kernel; the root (the starting kernel) when none has one.  The tree
 * says what refines what: a node placed under another refines that node's idea, so it starts
 * from that node's kernel, not from the fastest kernel higher up (ks_world_base), which
 * would drop the idea it was placed under and follow a reading that noise may have made. */
static int code_base(const struct ks_world *w, int id)
{
	for (int steps = 0; id >= 0 && steps <= w->nnodes; steps++) {
		const struct ks_node *n = ks_world_node(w, id);
		if (!n)
			break;
		if (n->candidate >= 0)
			return id;
		id = n->parent;
	}
	return w->root;
}

int llm_session_begin(struct lp *L, int id, const char *kind, struct ks_error *e)
{
	int rc = ks_world_begin(&L->w, id, e);
	if (rc)
		return rc;
	session_node(L, id);
	L->kind = kind;
	ks_buf_reset(&L->base_code);
	ks_buf_reset(&L->attempts);
	L->nattempts = 0;
	L->ncycle = 0;
	L->base_node = code_base(&L->w, id);
	L->base_cand = ks_world_node(&L->w, L->base_node)->candidate;
	L->parent = L->base_cand;
	L->best_id = L->repeat_of = L->last_id = -1;
	L->best_score = 0;
	if ((rc = llm_candidate_code(L, L->base_cand, &L->base_code, e)))
		return rc;
	ks_buf_reset(&L->parent_why);
	llm_parent_why(L, id, &L->parent_why);
	char ref[64];
	ks_world_node_ref(&L->w, id, ref, sizeof(ref));
	ks_buf_addf(&L->evidence, "Node %s \"%s\", built on ", ref, ks_buf_str(&L->title));
	llm_code_from(L, L->base_cand, 0, &L->evidence);
	ks_buf_adds(&L->evidence, ":\n");
	return 0;
}

void llm_session_end(struct lp *L, int reopen)
{
	struct ks_node *n = ks_world_node(&L->w, L->node);
	if (n && n->status == KS_NODE_ACTIVE)
		ks_world_set_status(&L->w, L->node,
				    reopen || n->candidate < 0 ? KS_NODE_OPEN : KS_NODE_CLOSED,
				    "refinement session ended", NULL);
	L->phase = PH_EDIT;
}

/* the cycle moves to node id, the one the kernel implements */
static void credit_move(struct lp *L, int id)
{
	struct ks_node *old = ks_world_node(&L->w, L->node);
	if (old && old->status == KS_NODE_ACTIVE)
		ks_world_set_status(&L->w, L->node, old->candidate >= 0 ? KS_NODE_CLOSED : KS_NODE_OPEN,
				    "its cycle moved on to another idea", NULL);
	if (ks_world_node(&L->w, id)->status == KS_NODE_OPEN)
		ks_world_begin(&L->w, id, NULL);
	session_node(L, id);
	char ref[64];
	ks_world_node_ref(&L->w, id, ref, sizeof(ref));
	ks_buf_addf(&L->evidence, "- the kernel implements node %s \"%s\" (its IMPLEMENTS line): "
				  "credited there\n",
		    ref, ks_buf_str(&L->title));
	ks_info("the model's kernel implements node %s \"%s\": credited there", ref,
		ks_buf_str(&L->title));
}

/* what the reply says of its new idea: its CHANGED and EXPECTED lines, else only where it
 * came from */
static void new_node_text(struct lp *L, struct ks_buf *out)
{
	char from[64];
	ks_world_node_ref(&L->w, L->node, from, sizeof(from));
	if (!L->changed.len && !L->expected.len) {
		ks_buf_addf(out, "an idea the model's kernel implemented while working on node %s",
			    from);
		return;
	}
	if (L->changed.len)
		ks_buf_addf(out, "%.300s", ks_buf_str(&L->changed));
	if (L->expected.len)
		ks_buf_addf(out, "%sexpected: %.200s", L->changed.len ? "; " : "",
			    ks_buf_str(&L->expected));
	ks_buf_addf(out, " (as the reply that made it said, while working on node %s)", from);
}

/* a node for an idea the tree does not have ("new: TITLE"), under the cycle's node */
static int credit_new(struct lp *L, const char *title)
{
	char t[128];
	snprintf(t, sizeof(t), "%.*s", (int)strcspn(title, "\r\n"), title);
	struct ks_buf desc = KS_BUF_INIT;
	new_node_text(L, &desc);
	struct ks_node_spec spec = {.title = t, .description = ks_buf_str(&desc),
				    .difficulty = LLM_PLACEHOLDER_DIFFICULTY,
				    .rating = LLM_PLACEHOLDER_RATING,
				    .confidence = LLM_PLACEHOLDER_CONFIDENCE};
	int id = -1;
	struct ks_error e = {0};
	if (!t[0] || ks_world_add(&L->w, L->node, &spec, &id, &e))
		id = -1;
	ks_buf_release(&desc);
	if (id >= 0)
		llm_unscored_add(L, id);
	return id;
}

/* Credit the kernel in L->code to the node its IMPLEMENTS line names (the cycle's node
 * when it names none, or names no node that can hold a kernel: the model is told). */
static void credit(struct lp *L)
{
	const char *imp = ks_buf_str(&L->implements);
	imp += strspn(imp, " \t*`[\"'");
	if (!*imp)
		return;
	int id;
	char ref[64], here[64];
	if (!strncasecmp(imp, "new", 3) && strchr(":- ", imp[3])) {
		const char *t = imp + 3 + strspn(imp + 3, ":- \t");
		id = credit_new(L, t);
		snprintf(ref, sizeof(ref), "new: %.50s", t);
	} else {
		if (!strncasecmp(imp, "node ", 5))
			imp += 5;
		snprintf(ref, sizeof(ref), "%.*s", (int)strcspn(imp, " \t,;)]\"'`*"), imp);
		id = ks_world_find(&L->w, ref);
	}
	if (id == L->node)
		return;
	const struct ks_node *x = ks_world_node(&L->w, id);
	if (x && id != L->w.root && x->status != KS_NODE_PRUNED) {
		credit_move(L, id);
		return;
	}
	ks_world_node_ref(&L->w, L->node, here, sizeof(here));
	llm_reject(L, "implements", -1,
		   "IMPLEMENTS: %s names no node that can hold a kernel (the root, a pruned node or "
		   "none): the kernel was credited to node %s, the one being worked on",
		   ref, here);
}

/* hand the cycle's current code to the driver */
static void emit(struct lp *L, struct ks_policy_cand *out, int *n)
{
	credit(L);
	ks_buf_reset(&L->cand_title);
	int plain = !strcmp(L->kind, "action");
	ks_buf_addf(&L->cand_title, "%s%s%s", ks_buf_str(&L->title), plain ? "" : " / ",
		    plain ? "" : L->kind);
	out[0] = (struct ks_policy_cand){.source = ks_buf_str(&L->code), .ident = "",
					 .family = "", .knobs = "{}", .parent = L->parent,
					 .node = L->node, .title = ks_buf_str(&L->cand_title),
					 .purpose = L->kind, .policy = L->env.o->policy};
	*n = 1;
}

/* ask template tmpl for a kernel: L->code and the reply's IMPLEMENTS, CHANGED and
 * EXPECTED lines on a usable reply */
static int ask_code(struct lp *L, const char *tmpl, struct ks_llm_state *s, enum ask_result *res,
		    struct ks_error *e)
{
	struct ks_llm_reply reply;
	memset(&reply, 0, sizeof(reply));
	int rc = llm_ask(L, tmpl, tmpl, NULL, s, KS_LLM_WANT_CODE, 1, &L->code, &reply, res, e);
	struct ks_buf *notes[] = {&L->implements, &L->changed, &L->expected};
	static const char *const tags[] = {"IMPLEMENTS", "CHANGED", "EXPECTED"};
	for (int i = 0; i < 3; i++) {
		ks_buf_reset(notes[i]);
		if (!rc && *res == ASK_OK && reply.content)
			ks_reply_note(reply.content, reply.len, tags[i], notes[i]);
	}
	ks_llm_reply_release(&reply);
	return rc;
}

int llm_ask_action(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e)
{
	struct ks_buf full = KS_BUF_INIT, brief = KS_BUF_INIT;
	struct ks_llm_state s;
	char node_id[64];
	llm_state_base(L, &s, node_id, sizeof(node_id));
	llm_state_tree(L, &s, &full, &brief);
	struct ks_buf noise = KS_BUF_INIT;
	llm_noise_text(L, &noise);
	s.noise = ks_buf_str(&noise);
	s.parent_code = ks_buf_str(&L->base_code);
	s.parent_from = ks_buf_str(&L->parent_why);
	s.feedback = llm_fb_get(L, L->base_cand);
	ks_info("node %s \"%s\": asking the model for code", node_id, ks_buf_str(&L->title));
	enum ask_result res;
	int rc = ask_code(L, "action", &s, &res, e);
	ks_buf_release(&noise);
	if (!rc && res == ASK_OK) {
		emit(L, out, n);
	} else if (!rc) {
		ks_buf_adds(&L->evidence, "- the model gave no usable code for this action\n");
		ks_info("node %s: no usable code from the model this time", node_id);
		node_nocode(L, L->node);
		L->phase = PH_EDIT;
	}
	ks_buf_release(&full);
	ks_buf_release(&brief);
	return rc;
}

/* the next kernel of the cycle: a fix of the last failure, an improvement of the best, or
 * a different kernel after a repeat */
int llm_ask_next(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e)
{
	struct ks_buf last = KS_BUF_INIT, repeat = KS_BUF_INIT, best = KS_BUF_INIT;
	struct ks_buf best_from = KS_BUF_INIT, last_from = KS_BUF_INIT, base_from = KS_BUF_INIT;
	struct ks_buf noise = KS_BUF_INIT;
	struct ks_llm_state s;
	char node_id[64];
	llm_state_base(L, &s, node_id, sizeof(node_id));
	int debug = !strcmp(L->kind, "debug"), rc;
	/* the kernel just evaluated is L->code, candidate last_id: both named, never mixed */
	ks_buf_adds(&last, ks_buf_str(&L->code));
	llm_code_from(L, L->last_id, 1, &last_from);
	ks_buf_adds(&base_from, "The kernel this cycle started from: ");
	llm_code_from(L, L->base_cand, 1, &base_from);
	if ((rc = llm_cycle_best(L, &best, &best_from, e)))
		goto out;
	if (!debug)
		llm_best_start(L, &best_from);
	llm_noise_text(L, &noise);
	s.candidate_code = ks_buf_str(&last);
	s.candidate_from = ks_buf_str(&last_from);
	s.base_code = ks_buf_str(&L->base_code);
	s.base_from = ks_buf_str(&base_from);
	s.best_code = ks_buf_str(&best);
	s.best_from = ks_buf_str(&best_from);
	s.noise = ks_buf_str(&noise);
	s.feedback = llm_fb_get(L, debug ? L->last_id : L->best_id);
	if (!strcmp(L->kind, "repeat")) {
		ks_buf_addf(&repeat, "Your last kernel is identical to candidate %ld (same source and "
				     "knob values), measured already:\n%s",
			    L->repeat_of, llm_fb_get(L, L->repeat_of));
		s.repeat = ks_buf_str(&repeat);
	}
	enum ask_result res;
	rc = ask_code(L, L->kind, &s, &res, e);
	if (!rc && res == ASK_OK) {
		emit(L, out, n);
	} else if (!rc) {
		ks_buf_addf(&L->evidence, "- the model gave no usable code for %s\n", L->kind);
		llm_session_end(L, 0);
	}
out:;
	struct ks_buf *bufs[] = {&last, &repeat, &best, &best_from, &last_from, &base_from, &noise};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		ks_buf_release(bufs[i]);
	return rc;
}

/* the best candidate in the tree, -1 when nothing passed */
static long tree_best(const struct lp *L)
{
	long best = -1;
	double score = 0;
	for (int i = 0; i < L->w.nnodes; i++) {
		const struct ks_node *x = ks_world_node(&L->w, i);
		if (x && x->candidate >= 0 && x->score > score) {
			best = x->candidate;
			score = x->score;
		}
	}
	return best;
}

/* no open action even after an edit round: ask for a kernel faster than the best so far */
int llm_ask_direct(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e)
{
	struct ks_node_spec spec = {.title = "direct: a kernel faster than the best so far",
				    .description = "asked directly because no action was open",
				    .difficulty = LLM_PLACEHOLDER_DIFFICULTY,
				    .rating = LLM_PLACEHOLDER_RATING,
				    .confidence = LLM_PLACEHOLDER_CONFIDENCE};
	int id, rc;
	if ((rc = ks_world_add(&L->w, L->w.root, &spec, &id, e)) ||
	    (rc = llm_session_begin(L, id, "direct", e)))
		return rc;
	llm_unscored_add(L, id);
	long best = tree_best(L);
	L->parent = best;
	struct ks_buf best_code = KS_BUF_INIT, full = KS_BUF_INIT, brief = KS_BUF_INIT;
	struct ks_buf best_from = KS_BUF_INIT, noise = KS_BUF_INIT;
	struct ks_llm_state s;
	char node_id[64];
	llm_state_base(L, &s, node_id, sizeof(node_id));
	if ((rc = llm_candidate_code(L, best, &best_code, e)))
		goto out;
	llm_state_tree(L, &s, &full, &brief);
	ks_buf_adds(&best_from, best >= 0 ? "The run's best so far: " : "Nothing passed yet: ");
	llm_code_from(L, best, 1, &best_from);
	llm_noise_text(L, &noise);
	s.best_code = ks_buf_str(&best_code);
	s.best_from = ks_buf_str(&best_from);
	s.noise = ks_buf_str(&noise);
	s.feedback = llm_fb_get(L, best);
	ks_info("no open action: asking the model directly for a kernel faster than %s",
		best >= 0 ? "the best so far" : "the starting kernel");
	enum ask_result res;
	if ((rc = ask_code(L, "direct", &s, &res, e)))
		goto out;
	if (res == ASK_OK) {
		emit(L, out, n);
	} else {
		ks_world_set_status(&L->w, id, KS_NODE_CLOSED, "no usable code from the model", NULL);
		L->phase = PH_EDIT;
	}
out:
	ks_buf_release(&best_code);
	ks_buf_release(&best_from);
	ks_buf_release(&noise);
	ks_buf_release(&full);
	ks_buf_release(&brief);
	return rc;
}

/* a kernel found in an init or edit reply: on the model's active leaf when it named an
 * open one, else on a node of its own */
int llm_emit_pending(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e)
{
	int id = L->want_leaf, rc;
	const struct ks_node *leaf = ks_world_node(&L->w, id);
	if (!leaf || id == L->w.root || leaf->status != KS_NODE_OPEN) {
		char title[96];
		snprintf(title, sizeof(title), "the kernel in the model's %s reply", L->pending_from);
		struct ks_node_spec spec = {.title = title,
					    .difficulty = LLM_PLACEHOLDER_DIFFICULTY,
					    .rating = LLM_PLACEHOLDER_RATING,
					    .confidence = LLM_PLACEHOLDER_CONFIDENCE};
		if ((rc = ks_world_add(&L->w, L->w.root, &spec, &id, e)))
			return rc;
		llm_unscored_add(L, id);
	} else {
		L->want_leaf = -1;
		L->want_ref[0] = '\0';
	}
	if ((rc = llm_session_begin(L, id, "action", e)))
		return rc;
	ks_buf_reset(&L->code);
	ks_buf_adds(&L->code, ks_buf_str(&L->pending));
	ks_buf_reset(&L->pending);
	ks_buf_reset(&L->implements);
	ks_buf_reset(&L->changed);
	ks_buf_reset(&L->expected);
	ks_info("node %d \"%s\": evaluating the kernel of the model's %s reply", id,
		ks_buf_str(&L->title), L->pending_from);
	emit(L, out, n);
	return 0;
}

void llm_attempt_add(struct lp *L, int node, const struct ks_policy_cand *c,
		     const struct ks_policy_outcome *o, const char *what)
{
	char ref[64];
	ks_world_node_ref(&L->w, node, ref, sizeof(ref));
	ks_buf_addf(&L->attempts, "%d. %s, node %s: ", ++L->nattempts, what, ref);
	if (o->duplicate_of > 0)
		ks_buf_addf(&L->attempts, "REPEATED candidate %ld (not evaluated again)\n",
			    o->duplicate_of);
	else
		ks_llm_attempt_text(o->candidate, o->status, o->passed, o->score, o->res,
				    &L->attempts);
	/* did the change help: against the kernel it started from, by the final's rule */
	struct ks_buf v = KS_BUF_INIT;
	if (o->passed && !o->duplicate_of)
		llm_versus(L, o->candidate, c->parent, &v);
	if (v.len)
		ks_buf_addf(&L->attempts, "   against what it started from: %s\n", ks_buf_str(&v));
	ks_buf_release(&v);
	if (L->changed.len)
		ks_buf_addf(&L->attempts, "   changed: %.300s\n", ks_buf_str(&L->changed));
	if (L->expected.len)
		ks_buf_addf(&L->attempts, "   expected: %.200s\n", ks_buf_str(&L->expected));
}

/* after the cycle's kernel and its tuning: go on (debug / improve / repeat) or end the
 * cycle: the node stagnated or ran out of its debug budget, or the cycle has had its share
 * of the budget (1/LLM_CYCLE_SHARE of it, knob tuning's candidates counted: the same count
 * the log and the edit prompt state) */
void llm_decide(struct lp *L)
{
	const char *want = L->repeat_of > 0 ? "repeat" : L->last_passed ? "improve" : "debug";
	const char *next = ks_llm_policy_peek(&L->pol);
	const struct ks_node *node = ks_world_node(&L->w, L->node);
	int active = node && node->status == KS_NODE_ACTIVE;
	int cap = L->cycle_evals >= L->cycle_cap;
	int go;
	if (next) /* a replay follows the recorded path */
		go = !strcmp(next, want);
	else /* knob tuning records on the node too and may have closed it */
		go = !cap && L->verdict == KS_REFINE_CONTINUE && active;
	if (llm_budget_left(L) <= 0 || !go) {
		if (!go && cap && active)
			ks_buf_addf(&L->evidence, "- cycle ended: %d candidates since the tree was "
						  "last revised, %d of them knob tuning's (the tree "
						  "is revised once a cycle has %d candidates, %s)\n",
				    L->cycle_evals, L->cycle_tuned, L->cycle_cap,
				    LLM_CYCLE_COUNTS);
		else if (!go)
			ks_buf_addf(&L->evidence, "- cycle ended: %s\n",
				    node && node->close_reason ? node->close_reason
							       : "the recorded run moved on");
		llm_session_end(L, cap);
		return;
	}
	L->kind = want;
	L->parent = L->repeat_of > 0 ? (L->best_id >= 0 ? L->best_id : L->base_cand)
		    : L->last_passed ? L->best_id
				     : L->last_id;
	L->phase = PH_NEXT;
}
