/* The llm and cmd policies: K-Search with a model, as a state machine that hands the
 * driver one candidate at a time.
 *
 *   init    the model classifies the kernel and proposes the first actions: its document
 *           becomes the world model (measured fields stripped first)
 *   select  the most promising open action; the model implements it on the code of the
 *           node's best ancestor (action)
 *   session each outcome goes back to the model: failures as debug prompts (bounded by the
 *           world's debug budget), passes as improve prompts until the node stagnates; a
 *           passing kernel with an @ksearch knob block has its knobs tuned by a nested
 *           builtin policy (no model calls, at most a quarter of the budget left)
 *   edit    after each session the model edits the tree from the evidence
 *   direct  when the tree has no open action even after an edit round, the model is asked
 *           for a kernel faster than the best one so far (a "direct" node)
 *
 * Nothing the model says is trusted: unusable replies get bounded corrections, a kernel in
 * a reply whose JSON is unusable is still evaluated, repeated kernels are not evaluated
 * again (the model is told), and transport failures are logged and skipped.  The policy
 * stops only when the model's budget (--llm-max-calls, --llm-max-cost) is spent, a replay
 * has no recorded reply left, or --llm-max-failures replies in a row gave nothing new.
 * A model that cannot be reached at all (KS_EUNAVAILABLE, policy/llm.h) and a replay that
 * ends before its first candidate are errors: the run fails. */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/log.h"
#include "ksearch/policy.h"
#include "ksearch/strategy.h"
#include "ksearch/template.h"
#include "ksearch/world.h"
#include "policy/llm.h"
#include "policy/llm_text.h"
#include "util/fs.h"

#define LLM_PROMPT_BUDGET 60000L /* prompt tokens (context window minus the reply) */
#define LLM_MAX_FAILS 8          /* default --llm-max-failures */
#define LLM_NOCODE_MAX 2         /* sessions without code before a node is closed */
#define LLM_TUNE_SHARE 4         /* knob tuning spends at most 1/4 of the budget left */

enum phase {
	PH_INIT,   /* ask for the world model */
	PH_SELECT, /* choose an open action and ask for its code */
	PH_NEXT,   /* ask for a debug or improve version of the session's kernel */
	PH_TUNE,   /* the nested builtin policy proposes knob values */
	PH_EDIT,   /* ask for an edit of the tree */
	PH_DIRECT, /* ask for a kernel faster than the best */
};

struct fb_entry {
	long id;
	char *text;
};

struct lp {
	struct ks_policy_env env;
	struct ks_llm_policy pol;
	int cmd;
	struct ks_world w;
	int have_world;
	char *baseline;
	struct ks_buf task, hardware, translation;
	const char *lang;
	int fails, max_fails;  /* consecutive replies that gave nothing new */
	int evaluated;         /* candidates observed (repeats not counted) */
	int stop;
	char stop_reason[256];
	int *nocode;           /* per node: sessions that produced no code */
	int nnocode;
	struct fb_entry *fb;   /* feedback text per evaluated candidate */
	int nfb;
	char **tuned;          /* sources whose knobs were tuned already */
	int ntuned;
	enum phase phase;
	int no_open;           /* the current edit round was asked because no action is open */
	int idle;              /* selects in a row that found no open action */
	/* the refinement session */
	int node;
	long base_cand;
	const char *kind;      /* action, debug, improve, direct */
	struct ks_buf action, title, code, best_code, evidence, last_fb, cand_title;
	struct ks_buf edit_notes; /* why ops of the last edit script were skipped */
	long best_id, parent, last_id;
	double best_score;
	int last_passed;
	enum ks_refine verdict;
	/* a kernel found in an init or edit reply, evaluated next */
	struct ks_buf pending;
	char pending_from[16];
	/* knob tuning of the session's kernel */
	struct ks_policy tuner;
	int tuning, tune_cap, tune_spent;
	struct ks_template *tune_tpl;
	struct ks_config_set tune_cs;
	struct ks_template *tune_tpls[1];
	struct ks_space tune_space;
};

/* ---- bookkeeping --------------------------------------------------------------------- */

static int budget_left(const struct lp *L)
{
	return L->stop ? 0 : L->env.budget_left(L->env.ctx);
}

static void stop_with(struct lp *L, const char *why)
{
	if (!L->stop)
		snprintf(L->stop_reason, sizeof(L->stop_reason), "%s", why);
	L->stop = 1;
}

/* a reply (or a round of replies) that gave nothing new */
static void unusable(struct lp *L, const char *what)
{
	if (++L->fails >= L->max_fails) {
		char why[256];
		snprintf(why, sizeof(why), "%d model replies in a row gave nothing new (last: %s; "
			 "--llm-max-failures)", L->fails, what);
		stop_with(L, why);
	}
}

static const char *fb_get(const struct lp *L, long id)
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

/* the source of candidate id with its knob values baked in (#ifndef guards, so -D wins) */
static int candidate_code(struct lp *L, long id, struct ks_buf *out, struct ks_error *e)
{
	if (id < 0)
		return ks_buf_adds(out, L->baseline);
	struct ks_store_candidate *c = NULL;
	int rc = ks_store_get_candidate(L->env.store, id, &c, e);
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

/* the context pieces a prompt may use, chosen by name (a template uses what it names) */
struct pieces {
	const char *parent_code, *candidate_code, *best_code, *feedback, *evidence;
	const char *tree, *tree_brief;
};

static int piece_add(const struct lp *L, const struct pieces *pv, const char *name,
		     struct ks_context_piece *out)
{
#define P(n, t, prio) *out = (struct ks_context_piece){.name = (n), .text = (t), .priority = (prio)}
	if (!strcmp(name, "task"))
		*out = (struct ks_context_piece){.name = "task", .text = ks_buf_str(&L->task),
						 .priority = KS_CONTEXT_PRIO_TASK, .required = 1};
	else if (!strcmp(name, "action"))
		*out = (struct ks_context_piece){.name = "action", .text = ks_buf_str(&L->action),
						 .priority = KS_CONTEXT_PRIO_ACTION, .required = 1};
	else if (!strcmp(name, "evidence"))
		*out = (struct ks_context_piece){.name = "evidence", .text = pv->evidence,
						 .priority = KS_CONTEXT_PRIO_ACTION, .required = 1};
	else if (!strcmp(name, "tree"))
		*out = (struct ks_context_piece){.name = "tree", .text = pv->tree,
						 .short_text = pv->tree_brief,
						 .priority = KS_CONTEXT_PRIO_TREE};
	else if (!strcmp(name, "parent_code"))
		P("parent_code", pv->parent_code, KS_CONTEXT_PRIO_CODE);
	else if (!strcmp(name, "candidate_code"))
		P("candidate_code", pv->candidate_code, KS_CONTEXT_PRIO_CODE);
	else if (!strcmp(name, "best_code"))
		P("best_code", pv->best_code, KS_CONTEXT_PRIO_CODE);
	else if (!strcmp(name, "feedback"))
		P("feedback", pv->feedback, KS_CONTEXT_PRIO_FEEDBACK);
	else if (!strcmp(name, "hardware"))
		P("hardware", ks_buf_str(&L->hardware), KS_CONTEXT_PRIO_HARDWARE);
	else if (!strcmp(name, "translation"))
		P("translation", ks_buf_str(&L->translation), KS_CONTEXT_PRIO_TRANSLATION);
	else
		return KS_ENOTFOUND;
#undef P
	return out->text ? 0 : KS_ENOTFOUND;
}

/* what an ask came to */
enum ask_result { ASK_OK, ASK_UNUSABLE, ASK_STOP };

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
	if (rc == KS_EBUDGET) {
		char why[300];
		snprintf(why, sizeof(why), "the model's budget is spent: %s", ae->msg);
		stop_with(L, why);
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
		char why[300];
		snprintf(why, sizeof(why), "%s (--llm-replay)", m ? m : ae->msg);
		stop_with(L, why);
		return 0;
	}
	if (rc == KS_EPARSE)
		ks_warn("the model's '%s' reply was unusable: %s", purpose, ae->msg);
	/* transport failures were logged by the client after its retries */
	unusable(L, purpose);
	*res = L->stop ? ASK_STOP : ASK_UNUSABLE;
	return 0;
}

/* Build the prompt from template tmpl with the named pieces and ask with purpose (tmpl, or
 * "<tmpl>-fix" with a correction appended).  Returns 0 with *res set, or an infrastructure
 * error (a template that does not render, a model that cannot be reached). */
static int ask(struct lp *L, const char *tmpl, const char *purpose, const char *correction,
	       const struct pieces *pv, const char *const *names, enum ks_llm_want want,
	       int max_fixes, struct ks_buf *out, struct ks_llm_reply *reply,
	       enum ask_result *res, struct ks_error *e)
{
	struct ks_context_piece pieces[16];
	int np = 0;
	for (int i = 0; names[i] && np < 16; i++)
		if (piece_add(L, pv, names[i], &pieces[np]) == 0)
			np++;
	char node_id[64], maxnew[16];
	if (L->have_world && L->node >= 0)
		ks_world_node_ref(&L->w, L->node, node_id, sizeof(node_id));
	else
		snprintf(node_id, sizeof(node_id), "%d", L->node);
	snprintf(maxnew, sizeof(maxnew), "%d", KS_WORLD_MAX_NEW_PER_EDIT);
	struct ks_prompt_var vars[] = {{"backend", L->env.be->name}, {"language", L->lang},
				       {"node_id", node_id}, {"max_new_nodes", maxnew}};
	struct ks_buf sys = KS_BUF_INIT, user = KS_BUF_INIT;
	struct ks_llm_prompt p = {.dir = L->env.o->prompts_dir, .purpose = tmpl, .pieces = pieces,
				  .npieces = np, .vars = vars, .nvars = 4,
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
	L->env.progress(L->env.ctx, what);
	struct ks_llm_ask q = {.purpose = purpose, .system = ks_buf_str(&sys),
			       .user = ks_buf_str(&user), .want = want,
			       .lang = want == KS_LLM_WANT_CODE ? L->lang : NULL,
			       .max_fixes = max_fixes};
	struct ks_error ae = {0};
	ks_buf_reset(out);
	int arc = ks_llm_ask(&L->pol.client, &q, out, reply, &ae);
	rc = ask_outcome(L, purpose, arc, &ae, res, e);
out:
	ks_buf_release(&sys);
	ks_buf_release(&user);
	return rc;
}

/* a kernel in a reply that was asked for JSON: evaluated next (a model that answers with
 * code has still answered) */
static void keep_reply_code(struct lp *L, const struct ks_llm_reply *r, const char *from)
{
	if (!r->content || L->pending.len)
		return;
	struct ks_buf code = KS_BUF_INIT;
	if (ks_reply_code(r->content, r->len, L->lang, &code, NULL, NULL) == 0 && code.len) {
		ks_buf_adds(&L->pending, ks_buf_str(&code));
		snprintf(L->pending_from, sizeof(L->pending_from), "%s", from);
	}
	ks_buf_release(&code);
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

static int import_doc(struct lp *L, const char *doc, struct ks_error *ie)
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

static int world_init(struct lp *L, struct ks_error *e)
{
	static const char *const names[] = {"task", "parent_code", "hardware", "translation",
					    NULL};
	struct pieces pv = {.parent_code = L->baseline};
	struct ks_buf doc = KS_BUF_INIT;
	struct ks_error ie = {0};
	enum ask_result res = ASK_OK;
	int rc = 0, imported = 0;
	L->env.progress(L->env.ctx, "asking the model for a world model");
	for (int round = 0; round < 2 && !imported && !rc; round++) {
		struct ks_buf corr = KS_BUF_INIT;
		struct ks_llm_reply reply;
		memset(&reply, 0, sizeof(reply));
		if (round)
			ks_buf_addf(&corr,
				    "Your previous world-model document could not be used: %s.\n"
				    "Reply again with one ```json block holding the whole document "
				    "in the shape shown above.",
				    ie.msg);
		rc = ask(L, "init", round ? "init-fix" : "init", round ? ks_buf_str(&corr) : NULL,
			 &pv, names, KS_LLM_WANT_JSON_OBJECT, 2, &doc, &reply, &res, e);
		ks_buf_release(&corr);
		if (!rc)
			keep_reply_code(L, &reply, "init");
		ks_llm_reply_release(&reply);
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
		L->fails = 0;
		ks_info("init: the model's world model has %d nodes", ks_world_count(&L->w));
		return 0;
	}
	ks_warn("init: no usable world model from the model; starting from the root alone "
		"(edit rounds propose the actions)");
	if ((rc = ks_world_init(&L->w, "naive baseline", L->env.task->summary, e)))
		return rc;
	L->have_world = 1;
	return 0;
}

static int has_open(const struct lp *L)
{
	int id;
	return ks_world_select(&L->w, &id, NULL) == 0;
}

/* one edit round: the model updates the tree from the evidence of the last session */
static int world_edit(struct lp *L, struct ks_error *e)
{
	static const char *const names[] = {"task", "evidence", "tree", "feedback", "hardware",
					    NULL};
	struct ks_buf full = KS_BUF_INIT, brief = KS_BUF_INIT, script = KS_BUF_INIT;
	if (L->edit_notes.len) /* what the model's last script did not do, and why */
		ks_buf_addf(&L->evidence, "Ops of your last edit script that were skipped:\n%s\n",
			    ks_buf_str(&L->edit_notes));
	ks_llm_tree_text(&L->w, 1, &full);
	ks_llm_tree_text(&L->w, 0, &brief);
	struct pieces pv = {.evidence = ks_buf_str(&L->evidence), .tree = ks_buf_str(&full),
			    .tree_brief = ks_buf_str(&brief), .feedback = ks_buf_str(&L->last_fb)};
	struct ks_error ie = {0};
	enum ask_result res = ASK_OK;
	int rc = 0, applied = 0;
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
			 &pv, names, KS_LLM_WANT_JSON, 1, &script, &reply, &res, e);
		ks_buf_release(&corr);
		if (!rc)
			keep_reply_code(L, &reply, "edit");
		struct ks_buf note = KS_BUF_INIT;
		if (!rc && res == ASK_OK && reply.content &&
		    ks_reply_note(reply.content, reply.len, "UPDATE_BELIEF", &note) == 0)
			ks_debug("edit: UPDATE_BELIEF: %.300s", ks_buf_str(&note));
		ks_buf_release(&note);
		ks_llm_reply_release(&reply);
		if (rc || res != ASK_OK)
			break;
		struct ks_world_edit r;
		ks_buf_reset(&L->edit_notes);
		if (ks_world_apply_ex(&L->w, ks_buf_str(&script), 0, &r, &L->edit_notes, &ie) == 0) {
			ks_info("edit: the model's script applied (%d ops, %d new nodes, %d skipped; "
				"%d nodes in the tree)",
				r.applied, r.nnew, r.skipped, ks_world_count(&L->w));
			if (r.skipped)
				ks_warn("edit: skipped ops: %.400s", ks_buf_str(&L->edit_notes));
			applied = 1;
			break;
		}
		ks_warn("edit: the model's script was rejected (%s)%s", ie.msg,
			round ? "; skipped" : "; asking for a correction");
	}
	ks_buf_release(&full);
	ks_buf_release(&brief);
	ks_buf_release(&script);
	if (rc)
		return rc;
	/* an edit round asked for actions that left none open gave nothing new */
	if (has_open(L) && applied)
		L->fails = 0;
	else if (L->no_open && res == ASK_OK)
		unusable(L, "edit without an open action");
	return 0;
}

/* ---- sessions ----------------------------------------------------------------------- */

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

static int session_begin(struct lp *L, int id, const char *kind, struct ks_error *e)
{
	int rc = ks_world_begin(&L->w, id, e);
	if (rc)
		return rc;
	L->node = id;
	L->kind = kind;
	ks_buf_reset(&L->action);
	ks_buf_reset(&L->title);
	ks_buf_reset(&L->best_code);
	ks_llm_node_text(&L->w, id, &L->action);
	ks_buf_adds(&L->title, ks_world_node(&L->w, id)->title);
	int base = ks_world_base(&L->w, id);
	L->base_cand = ks_world_node(&L->w, base)->candidate;
	L->parent = L->base_cand;
	L->best_id = -1;
	L->best_score = 0;
	ks_buf_addf(&L->evidence, "Node %d \"%s\" (built on %s):\n", id, ks_buf_str(&L->title),
		    L->base_cand >= 0 ? "the best candidate of its path" : "the starting kernel");
	return 0;
}

/* a session the world did not close (budget, replay, no code) ends here */
static void session_end(struct lp *L)
{
	struct ks_node *n = ks_world_node(&L->w, L->node);
	if (n && n->status == KS_NODE_ACTIVE)
		ks_world_set_status(&L->w, L->node, n->candidate >= 0 ? KS_NODE_CLOSED : KS_NODE_OPEN,
				    "refinement session ended", NULL);
	L->phase = PH_EDIT;
}

/* hand the session's current code to the driver */
static void emit(struct lp *L, struct ks_policy_cand *out, int *n)
{
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

static int ask_action(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e)
{
	static const char *const names[] = {"task", "action", "parent_code", "feedback",
					    "hardware", "tree", "translation", NULL};
	struct ks_buf parent_code = KS_BUF_INIT, full = KS_BUF_INIT, brief = KS_BUF_INIT;
	int rc = candidate_code(L, L->base_cand, &parent_code, e);
	if (rc)
		goto out;
	ks_llm_tree_text(&L->w, 1, &full);
	ks_llm_tree_text(&L->w, 0, &brief);
	struct pieces pv = {.parent_code = ks_buf_str(&parent_code),
			    .feedback = fb_get(L, L->base_cand), .tree = ks_buf_str(&full),
			    .tree_brief = ks_buf_str(&brief)};
	ks_info("node %d \"%s\": asking the model for code", L->node, ks_buf_str(&L->title));
	enum ask_result res;
	if ((rc = ask(L, "action", "action", NULL, &pv, names, KS_LLM_WANT_CODE, 1, &L->code,
		      NULL, &res, e)))
		goto out;
	if (res == ASK_OK) {
		emit(L, out, n);
	} else {
		ks_buf_adds(&L->evidence, "- the model gave no usable code for this action\n");
		ks_info("node %d: no usable code from the model this time", L->node);
		node_nocode(L, L->node);
		L->phase = PH_EDIT;
	}
out:
	ks_buf_release(&parent_code);
	ks_buf_release(&full);
	ks_buf_release(&brief);
	return rc;
}

/* the next kernel of the session: a fix of the last failure or an improvement of the best */
static int ask_next(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e)
{
	static const char *const debug_names[] = {"task", "action", "candidate_code", "feedback",
						  "hardware", NULL};
	static const char *const improve_names[] = {"task", "action", "best_code", "feedback",
						    "hardware", "translation", NULL};
	int improve = !strcmp(L->kind, "improve");
	struct ks_buf last = KS_BUF_INIT;
	ks_buf_adds(&last, ks_buf_str(&L->code));
	struct pieces pv = {.candidate_code = ks_buf_str(&last), .best_code = ks_buf_str(&L->best_code),
			    .feedback = fb_get(L, improve ? L->best_id : L->last_id)};
	enum ask_result res;
	int rc = ask(L, L->kind, L->kind, NULL, &pv, improve ? improve_names : debug_names,
		     KS_LLM_WANT_CODE, 1, &L->code, NULL, &res, e);
	ks_buf_release(&last);
	if (rc)
		return rc;
	if (res == ASK_OK) {
		emit(L, out, n);
	} else {
		ks_buf_addf(&L->evidence, "- the model gave no usable code for %s\n", L->kind);
		session_end(L);
	}
	return 0;
}

/* no open action even after an edit round: ask for a kernel faster than the best so far */
static int ask_direct(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e)
{
	static const char *const names[] = {"task", "best_code", "feedback", "tree", "hardware",
					    "translation", NULL};
	struct ks_node_spec spec = {.title = "direct: a kernel faster than the best so far",
				    .description = "asked directly because no action was open",
				    .difficulty = 3, .rating = 5, .confidence = 0.3};
	int id, rc;
	if ((rc = ks_world_add(&L->w, L->w.root, &spec, &id, e)) ||
	    (rc = session_begin(L, id, "direct", e)))
		return rc;
	long best = -1;
	double score = 0;
	for (int i = 0; i < L->w.nnodes; i++) {
		const struct ks_node *x = ks_world_node(&L->w, i);
		if (x && x->candidate >= 0 && x->score > score) {
			best = x->candidate;
			score = x->score;
		}
	}
	L->parent = best;
	struct ks_buf best_code = KS_BUF_INIT, full = KS_BUF_INIT, brief = KS_BUF_INIT;
	if ((rc = candidate_code(L, best, &best_code, e)))
		goto out;
	ks_llm_tree_text(&L->w, 1, &full);
	ks_llm_tree_text(&L->w, 0, &brief);
	struct pieces pv = {.best_code = ks_buf_str(&best_code), .feedback = fb_get(L, best),
			    .tree = ks_buf_str(&full), .tree_brief = ks_buf_str(&brief)};
	ks_info("no open action: asking the model directly for a kernel faster than %s",
		best >= 0 ? "the best so far" : "the starting kernel");
	enum ask_result res;
	if ((rc = ask(L, "direct", "direct", NULL, &pv, names, KS_LLM_WANT_CODE, 1, &L->code, NULL,
		      &res, e)))
		goto out;
	if (res == ASK_OK) {
		emit(L, out, n);
	} else {
		ks_world_set_status(&L->w, id, KS_NODE_CLOSED, "no usable code from the model", NULL);
		L->phase = PH_EDIT;
	}
out:
	ks_buf_release(&best_code);
	ks_buf_release(&full);
	ks_buf_release(&brief);
	return rc;
}

/* a kernel found in an init or edit reply: on the model's active leaf when it named an
 * open one, else on a node of its own */
static int emit_pending(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e)
{
	int id = L->w.active_leaf, rc;
	const struct ks_node *leaf = ks_world_node(&L->w, id);
	if (!leaf || id == L->w.root || leaf->status != KS_NODE_OPEN) {
		char title[96];
		snprintf(title, sizeof(title), "the kernel in the model's %s reply", L->pending_from);
		struct ks_node_spec spec = {.title = title, .difficulty = 2, .rating = 5,
					    .confidence = 0.3};
		if ((rc = ks_world_add(&L->w, L->w.root, &spec, &id, e)))
			return rc;
	}
	if ((rc = session_begin(L, id, "action", e)))
		return rc;
	ks_buf_reset(&L->code);
	ks_buf_adds(&L->code, ks_buf_str(&L->pending));
	ks_buf_reset(&L->pending);
	ks_info("node %d \"%s\": evaluating the kernel of the model's %s reply", id,
		ks_buf_str(&L->title), L->pending_from);
	emit(L, out, n);
	return 0;
}

/* ---- knob tuning of an @ksearch kernel the model wrote ------------------------------- */

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

static void tune_release(struct lp *L)
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
static int tune_start(struct lp *L, const char *code, const struct ks_policy_outcome *o,
		      struct ks_error *e)
{
	if (!strstr(code, "@ksearch") || tuned_before(L, code))
		return 0;
	int cap = budget_left(L) / LLM_TUNE_SHARE;
	struct ks_error te = {0};
	char name[64];
	snprintf(name, sizeof(name), "candidate-%ld", o->candidate);
	if (ks_template_parse(code, strlen(code), name, &L->tune_tpl, &te)) {
		ks_warn("candidate %ld: @ksearch block ignored: %s", o->candidate, te.msg);
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
		tune_release(L);
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
	tune_release(L);
	return 0;
}

/* after the session's kernel and its tuning: go on (debug / improve) or end the session */
static void decide(struct lp *L)
{
	const char *want = L->last_passed ? "improve" : "debug";
	const char *next = ks_llm_policy_peek(&L->pol);
	const struct ks_node *node = ks_world_node(&L->w, L->node);
	int go;
	if (next) /* a replay follows the recorded path */
		go = !strcmp(next, want);
	else /* knob tuning records on the node too and may have closed it */
		go = L->verdict == KS_REFINE_CONTINUE && node && node->status == KS_NODE_ACTIVE;
	if (budget_left(L) <= 0 || !go) {
		if (!go)
			ks_buf_addf(&L->evidence, "- session ended: %s\n",
				    node && node->close_reason ? node->close_reason
							       : "the recorded run moved on");
		session_end(L);
		return;
	}
	L->kind = want;
	L->parent = L->last_passed ? L->best_id : L->last_id;
	L->phase = PH_NEXT;
}

static int tune_next(struct lp *L, struct ks_policy_cand *out, int *n, struct ks_error *e)
{
	if (L->tune_spent < L->tune_cap && budget_left(L) > 0) {
		struct ks_policy_stop why;
		int rc = ks_policy_propose(&L->tuner, out, 1, n, &why, e);
		if (rc || *n)
			return rc;
	}
	tune_release(L);
	decide(L);
	return 0;
}

/* ---- the interface ------------------------------------------------------------------ */

static int lp_open(void **state, const struct ks_policy_env *env, int cmd, struct ks_error *e)
{
	struct lp *L = calloc(1, sizeof(*L));
	if (!L)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	*state = L;
	L->env = *env;
	L->cmd = cmd;
	L->lang = env->be->lang;
	L->max_fails = env->o->llm_max_failures > 0 ? env->o->llm_max_failures : LLM_MAX_FAILS;
	L->last_id = L->best_id = L->base_cand = -1;
	L->node = -1;
	int rc;
	static const char *const templates[] = {"system.txt", "init.txt",    "action.txt",
						"debug.txt",  "improve.txt", "edit.txt",
						"direct.txt"};
	for (size_t i = 0; i < sizeof(templates) / sizeof(templates[0]); i++) {
		struct ks_buf b = KS_BUF_INIT;
		rc = ks_prompt_load(env->o->prompts_dir, templates[i], &b, e);
		ks_buf_release(&b);
		if (rc)
			return rc;
	}
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/baseline.%s", env->task->dir, env->be->ext);
	struct ks_buf b = KS_BUF_INIT;
	if ((rc = ks_kernel_source_read(path, KS_STORE_MAX_SOURCE, &b, e))) {
		ks_buf_release(&b);
		return ks_error_wrap(e, "the starting kernel");
	}
	ks_buf_adds(&b, "");
	L->baseline = ks_buf_detach(&b, NULL);
	ks_llm_task_text(env, &L->task);
	enum ks_context_level level = KS_CONTEXT_FULL;
	if (env->o->context && (rc = ks_context_level_parse(env->o->context, &level)))
		return ks_error_set(e, KS_EINVAL, "--context '%s': expected none, spec or full",
				    env->o->context);
	if (level >= KS_CONTEXT_SPEC && env->spec)
		rc = ks_context_pack(KS_CONTEXT_SPEC, env->task->cls, env->be->name, env->spec, NULL,
				     &L->hardware, e);
	if (!rc && level == KS_CONTEXT_FULL)
		rc = ks_context_pack(KS_CONTEXT_FULL, env->task->cls, env->be->name, NULL, NULL,
				     &L->translation, e);
	if (rc)
		return ks_error_wrap(e, "context");
	if (!L->hardware.len)
		ks_buf_adds(&L->hardware, "(not provided)");
	if (!L->translation.len)
		ks_buf_adds(&L->translation, "(not provided)");
	if ((rc = ks_llm_policy_open(&L->pol, env->o, cmd, env->store, env->resumed, env->round,
				     e)))
		return rc;
	ks_info("policy %s: the model writes the kernels (budget %d candidates%s)", env->o->policy,
		env->o->budget, env->o->llm_replay ? ", replayed" : "");
	return 0;
}

static void lp_free(void *state);

static int llm_open(void **state, const struct ks_policy_env *env, struct ks_error *e)
{
	int rc = lp_open(state, env, 0, e);
	if (rc)
		lp_free(*state);
	return rc;
}

static int cmd_open(void **state, const struct ks_policy_env *env, struct ks_error *e)
{
	int rc = lp_open(state, env, 1, e);
	if (rc)
		lp_free(*state);
	return rc;
}

static int lp_propose(void *state, struct ks_policy_cand *out, int max, int *n,
		      struct ks_policy_stop *why, struct ks_error *e)
{
	struct lp *L = state;
	int rc = 0;
	(void)max; /* one at a time: the next prompt depends on this outcome */
	while (!rc && !*n) {
		if (L->stop || budget_left(L) <= 0)
			break;
		if (L->pending.len && L->phase != PH_TUNE && L->phase != PH_NEXT) {
			rc = emit_pending(L, out, n, e);
			continue;
		}
		switch (L->phase) {
		case PH_INIT:
			if (!(rc = world_init(L, e))) {
				(*L->env.round)++;
				L->phase = PH_SELECT;
			}
			break;
		case PH_SELECT: {
			int id;
			ks_buf_reset(&L->evidence);
			ks_buf_reset(&L->last_fb);
			if (ks_world_select(&L->w, &id, NULL) == 0) {
				L->idle = 0;
				L->no_open = 0;
				if (!(rc = session_begin(L, id, "action", e)))
					rc = ask_action(L, out, n, e);
			} else if (L->idle++ == 0) {
				ks_buf_adds(&L->evidence, "The tree has no open action left. Propose new "
							  "actions (insert_node) from what was "
							  "measured.\n");
				ks_buf_adds(&L->last_fb, "(see the measured results in the tree)");
				L->no_open = 1;
				L->phase = PH_EDIT;
			} else {
				L->idle = 0;
				L->phase = PH_DIRECT;
			}
			break;
		}
		case PH_NEXT:
			rc = ask_next(L, out, n, e);
			break;
		case PH_TUNE:
			rc = tune_next(L, out, n, e);
			break;
		case PH_EDIT:
			if (!(rc = world_edit(L, e))) {
				(*L->env.round)++;
				L->phase = PH_SELECT;
			}
			break;
		case PH_DIRECT:
			rc = ask_direct(L, out, n, e);
			break;
		}
	}
	if (!*n)
		snprintf(why->reason, sizeof(why->reason), "%s",
			 L->stop ? L->stop_reason : "budget");
	return rc;
}

static void outcome_text(const struct ks_policy_outcome *o, struct ks_buf *fb)
{
	if (o->res) {
		ks_llm_feedback_text(o->res, fb);
	} else if (o->duplicate_of > 0) {
		ks_buf_addf(fb, "This kernel is identical to candidate %ld, evaluated already "
				"(status %s%s): it was not evaluated again. Change something.\n",
			    o->duplicate_of, ks_status_name(o->status),
			    o->passed ? ", passed" : "");
	} else {
		ks_buf_addf(fb, "status %s (measured before the resume)\n", ks_status_name(o->status));
		if (o->passed)
			ks_buf_addf(fb, "%.3fx the baseline\n", o->score);
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
		L->evaluated++;
	}
	if (L->phase == PH_TUNE && L->tuning) {
		L->tune_spent++;
		ks_buf_release(&fb);
		if ((rc = ks_policy_observe(&L->tuner, c, o, e)))
			return rc;
		return o->duplicate_of ? 0
				       : ks_world_record(&L->w, L->node, o->candidate, o->passed,
							 o->score, NULL, e);
	}
	ks_buf_reset(&L->last_fb);
	ks_buf_adds(&L->last_fb, ks_buf_str(&fb));
	ks_buf_release(&fb);
	ks_buf_addf(&L->evidence, "- %s: candidate %ld %s", L->kind, o->candidate,
		    o->duplicate_of ? "REPEATED (identical to an earlier kernel)"
				    : ks_status_name(o->status));
	if (o->passed)
		ks_buf_addf(&L->evidence, ", %.3fx the baseline", o->score);
	ks_buf_adds(&L->evidence, "\n");
	L->last_passed = o->passed;
	L->last_id = o->candidate;
	if (o->duplicate_of)
		unusable(L, "a repeated kernel");
	else
		L->fails = 0;
	/* a repeat is a failed attempt of the node: it gave nothing new */
	int passed = o->passed && !o->duplicate_of;
	L->last_passed = passed;
	if ((rc = ks_world_record(&L->w, L->node, o->candidate, passed, o->score, &L->verdict, e)))
		return rc;
	if (passed && (L->best_id < 0 || o->score > L->best_score)) {
		L->best_id = o->candidate;
		L->best_score = o->score;
		ks_buf_reset(&L->best_code);
		ks_buf_adds(&L->best_code, ks_buf_str(&L->code));
	}
	if (passed) {
		int started = tune_start(L, ks_buf_str(&L->code), o, e);
		if (started < 0)
			return started;
		if (started) {
			L->phase = PH_TUNE;
			return 0;
		}
	}
	decide(L);
	return 0;
}

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
				      .cost_usd = x->cost_usd};
}

static void lp_free(void *state)
{
	struct lp *L = state;
	if (!L)
		return;
	tune_release(L);
	if (L->pol.client.transport)
		ks_llm_policy_close(&L->pol);
	if (L->have_world)
		ks_world_release(&L->w);
	free(L->baseline);
	struct ks_buf *bufs[] = {&L->task, &L->hardware, &L->translation, &L->action, &L->title,
				 &L->code, &L->best_code, &L->evidence, &L->last_fb,
				 &L->cand_title, &L->pending, &L->edit_notes};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		ks_buf_release(bufs[i]);
	free(L->nocode);
	for (int i = 0; i < L->nfb; i++)
		free(L->fb[i].text);
	free(L->fb);
	for (int i = 0; i < L->ntuned; i++)
		free(L->tuned[i]);
	free(L->tuned);
	free(L);
}

static int check_common(const struct ks_run_opts *o, int cmd, struct ks_error *e)
{
	if (!ks_strategy_find(o->strategy)) /* the strategy that tunes @ksearch knobs */
		return ks_strategy_unknown(o->strategy, e);
	if (o->llm_max_failures < 0)
		return ks_error_set(e, KS_EINVAL, "--llm-max-failures must be at least 1");
	if (!cmd && o->llm_cmd && o->llm_cmd[0])
		return ks_error_set(e, KS_EINVAL,
				    "--llm-cmd is used by --policy cmd only (the policy is '%s')",
				    o->policy);
	return ks_llm_policy_check(o, cmd, e);
}

static int llm_check(const struct ks_run_opts *o, struct ks_error *e)
{
	return check_common(o, 0, e);
}

static int cmd_check(const struct ks_run_opts *o, struct ks_error *e)
{
	return check_common(o, 1, e);
}

const struct ks_policy_i ks_policy_llm = {
	.version = KS_POLICY_VERSION,
	.name = "llm",
	.summary = "a model behind an OpenAI-compatible endpoint writes the kernels (K-Search)",
	.uses_model = 1,
	.check = llm_check,
	.open = llm_open,
	.propose = lp_propose,
	.observe = lp_observe,
	.snapshot = lp_snapshot,
	.usage = lp_usage,
	.free = lp_free,
};

const struct ks_policy_i ks_policy_cmd = {
	.version = KS_POLICY_VERSION,
	.name = "cmd",
	.summary = "a model behind a shell command (prompt on stdin) writes the kernels",
	.uses_model = 1,
	.check = cmd_check,
	.open = cmd_open,
	.propose = lp_propose,
	.observe = lp_observe,
	.snapshot = lp_snapshot,
	.usage = lp_usage,
	.free = lp_free,
};
