/* The world model of the model-driven policies: the model's initial document, its edit
 * rounds, and the node to work on next (the model's active_leaf_id when it keeps the
 * rules, which the prompts state; else the system's priority, and the model is told). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/log.h"
#include "policy/llm_impl.h"
#include "policy/llm_text.h"

/* drop what only the system may set from a model-written document */
static char *scrub_document(const char *doc)
{
	static const char *const system_keys[] = {
		"result", "attempts", "failures", "visits", "consecutive_failures",
		"since_improvement", "regression", "close_reason", "learned_shift", "candidate",
		"candidate_id", "score", "move", "reflection"};
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

/* the active_leaf_id a document (init) or an edit script names, as text; 0 when none */
static int leaf_ref(const char *doc, int init, char *ref, size_t n)
{
	json_t *j = json_loads(doc, 0, NULL), *v;
	v = json_object_get(init ? json_object_get(j, "decision_tree") : j, "active_leaf_id");
	int found = 1;
	if (json_is_integer(v))
		snprintf(ref, n, "%lld", (long long)json_integer_value(v));
	else if (json_is_string(v))
		snprintf(ref, n, "%s", json_string_value(v));
	else
		found = 0;
	json_decref(j);
	return found;
}

/* remember the node the model named next; it is checked against the rules when chosen */
static void leaf_wanted(struct lp *L, const char *doc, int init)
{
	L->want_leaf = -1;
	L->want_ref[0] = '\0';
	if (leaf_ref(doc, init, L->want_ref, sizeof(L->want_ref)))
		L->want_leaf = ks_world_find(&L->w, L->want_ref);
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

/* what a correction round says about a rejected document */
struct fix_text {
	const char *rejected, *again;
};

static const struct fix_text init_fix = {
	"Your previous world-model document could not be used",
	"Reply again with one ```json block holding the whole document in the shape shown above."};
static const struct fix_text edit_fix = {
	"Your previous edit script was rejected and changed nothing",
	"Reply again with one ```json object {\"active_leaf_id\": ID, \"ops\": [...]} that keeps "
	"the rules (\"ops\": [] to change nothing)."};

/* Ask template tmpl for a document: the prompt, or (fix given) the prompt with why the last
 * document was rejected appended, as "<tmpl>-fix".  A kernel in the reply is kept for
 * evaluation; reply gets the raw reply (release it). */
static int ask_document(struct lp *L, const char *tmpl, const struct fix_text *fix,
			const char *why, struct ks_llm_state *s, enum ks_llm_want want, int fixes,
			struct ks_buf *out, struct ks_llm_reply *reply, enum ask_result *res,
			struct ks_error *e)
{
	char purpose[32];
	struct ks_buf corr = KS_BUF_INIT;
	snprintf(purpose, sizeof(purpose), "%s%s", tmpl, fix ? "-fix" : "");
	if (fix)
		ks_buf_addf(&corr, "%s: %s.\n%s", fix->rejected, why, fix->again);
	memset(reply, 0, sizeof(*reply));
	int rc = llm_ask(L, tmpl, purpose, fix ? ks_buf_str(&corr) : NULL, s, want, fixes, out,
			 reply, res, e);
	ks_buf_release(&corr);
	if (!rc)
		llm_keep_reply_code(L, reply, tmpl);
	return rc;
}

int llm_world_init(struct lp *L, struct ks_error *e)
{
	struct ks_llm_state s;
	char node_id[16];
	llm_state_base(L, &s, node_id, sizeof(node_id));
	s.parent_code = ks_buf_str(&L->ctx.start);
	struct ks_buf doc = KS_BUF_INIT;
	struct ks_error ie = {0};
	enum ask_result res = ASK_OK;
	int rc = 0, imported = 0;
	L->env.progress(L->env.ctx, "asking the model for a world model");
	for (int round = 0; round < 2 && !imported && !rc; round++) {
		struct ks_llm_reply reply;
		rc = ask_document(L, "init", round ? &init_fix : NULL, ie.msg, &s,
				  KS_LLM_WANT_JSON_OBJECT, 2, &doc, &reply, &res, e);
		ks_llm_reply_release(&reply);
		if (rc || res != ASK_OK)
			break;
		if (import_doc(L, ks_buf_str(&doc), &ie) == 0) {
			imported = 1;
			leaf_wanted(L, ks_buf_str(&doc), 1);
		} else {
			ks_warn("init: the model's world model was rejected: %s", ie.msg);
		}
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

/* the edit reply's reflection notes, kept on the node the cycle worked on */
static void reflect(struct lp *L, const struct ks_llm_reply *r)
{
	static const char *const tags[] = {"CURRENT", "FOLLOW_THROUGH", "UPDATE_BELIEF", "PERF_GAP"};
	if (!r->content || L->node < 0 || !ks_world_node(&L->w, L->node))
		return;
	struct ks_buf all = KS_BUF_INIT;
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		struct ks_buf note = KS_BUF_INIT;
		if (ks_reply_note(r->content, r->len, tags[i], &note) == 0 && note.len)
			ks_buf_addf(&all, "%s%s: %.600s", all.len ? "\n" : "", tags[i],
				    ks_buf_str(&note));
		ks_buf_release(&note);
	}
	struct ks_error e = {0};
	if (all.len && ks_world_reflect(&L->w, L->node, ks_buf_str(&all), &e))
		ks_debug("reflection not kept: %s", e.msg);
	ks_buf_release(&all);
}

/* Apply the script; 1 when it was applied.  *ie says why not. */
static int edit_apply(struct lp *L, const char *script, struct ks_error *ie)
{
	struct ks_world_edit r;
	ks_buf_reset(&L->edit_notes);
	if (ks_world_apply_ex(&L->w, script, 0, &r, &L->edit_notes, ie))
		return 0;
	ks_info("edit: the model's script applied (%d ops, %d new nodes, %d skipped; %d nodes in "
		"the tree)",
		r.applied, r.nnew, r.skipped, ks_world_count(&L->w));
	if (r.skipped) {
		ks_warn("edit: skipped ops: %.400s", ks_buf_str(&L->edit_notes));
		llm_reject(L, "edit_ops", -1, "ops of your last edit script were skipped:\n%s",
			   ks_buf_str(&L->edit_notes));
	}
	leaf_wanted(L, script, 0);
	return 1;
}

void llm_unscored_add(struct lp *L, int id)
{
	int *v = realloc(L->unscored, (size_t)(L->nunscored + 1) * sizeof(int));
	if (v) {
		L->unscored = v;
		L->unscored[L->nunscored++] = id;
	}
}

/* still the placeholders ksearch gave it: no edit has scored node id */
static int placeholder_scores(const struct ks_node *n)
{
	for (int k = 0; k < KS_IMPACT_COUNT; k++)
		if (n->impacts[k].score != 0)
			return 0;
	return n->prior_rating == LLM_PLACEHOLDER_RATING &&
	       n->prior_confidence == LLM_PLACEHOLDER_CONFIDENCE &&
	       n->difficulty == LLM_PLACEHOLDER_DIFFICULTY;
}

/* after an edit: the nodes it scored (or deleted) leave the list */
static void unscored_refresh(struct lp *L)
{
	int k = 0;
	for (int i = 0; i < L->nunscored; i++) {
		const struct ks_node *n = ks_world_node(&L->w, L->unscored[i]);
		if (n && placeholder_scores(n))
			L->unscored[k++] = L->unscored[i];
	}
	L->nunscored = k;
}

void llm_unscored_text(struct lp *L, struct ks_buf *out)
{
	if (!L->nunscored)
		return;
	ks_buf_adds(out, "Placeholder scores: ksearch made node");
	ks_buf_adds(out, L->nunscored > 1 ? "s " : " ");
	for (int i = 0; i < L->nunscored; i++) {
		char ref[64];
		ks_world_node_ref(&L->w, L->unscored[i], ref, sizeof(ref));
		ks_buf_addf(out, "%s%s", i ? ", " : "", ref);
	}
	ks_buf_addf(out, " itself (for a kernel's \"IMPLEMENTS: new\" line, a kernel in an init "
			 "or edit reply, or a direct request), so %s rating %d, confidence %.2f, "
			 "difficulty %d and impacts 0 are placeholders, nobody's estimate: score %s "
			 "with update_node in the next edit.\n",
		    L->nunscored > 1 ? "their" : "its", LLM_PLACEHOLDER_RATING,
		    LLM_PLACEHOLDER_CONFIDENCE, LLM_PLACEHOLDER_DIFFICULTY,
		    L->nunscored > 1 ? "them" : "it");
}

/* The state an edit prompt shows: the tree, the last cycle, its kernel and that kernel's
 * feedback: the cycle's best, else its last, always one candidate, named. */
static int edit_state(struct lp *L, struct ks_llm_state *s, char *node_id, size_t n,
		      struct ks_buf *bufs, struct ks_error *e)
{
	struct ks_buf *full = &bufs[0], *brief = &bufs[1], *code = &bufs[2], *from = &bufs[3];
	llm_state_base(L, s, node_id, n);
	llm_state_tree(L, s, full, brief);
	llm_noise_text(L, &bufs[4]);
	s->noise = ks_buf_str(&bufs[4]);
	s->evidence = ks_buf_str(&L->evidence);
	int rc = 0;
	if (L->best_id >= 0) {
		rc = llm_cycle_best(L, code, from, e);
		s->feedback = llm_fb_get(L, L->best_id);
	} else if (L->last_id >= 0) {
		ks_buf_adds(from, "No kernel of the cycle passed: its last, ");
		llm_code_from(L, L->last_id, 1, from);
		ks_buf_adds(from, ".");
		ks_buf_adds(code, ks_buf_str(&L->code));
		s->feedback = llm_fb_get(L, L->last_id);
	} else {
		ks_buf_adds(from, "The cycle produced no kernel.");
		s->feedback = ks_buf_str(&L->last_fb);
	}
	s->code = ks_buf_str(code);
	s->code_from = ks_buf_str(from);
	return rc;
}

/* one edit round: the model updates the tree from the evidence of the last cycle */
int llm_world_edit(struct lp *L, struct ks_error *e)
{
	struct ks_buf bufs[5] = {KS_BUF_INIT, KS_BUF_INIT, KS_BUF_INIT, KS_BUF_INIT, KS_BUF_INIT};
	struct ks_buf script = KS_BUF_INIT;
	struct ks_llm_state s;
	char node_id[64];
	int rc = edit_state(L, &s, node_id, sizeof(node_id), bufs, e), applied = 0;
	struct ks_error ie = {0};
	enum ask_result res = ASK_OK;
	L->cycle_evals = L->cycle_tuned = 0; /* the tree is revisited now */
	for (int round = 0; round < 2 && !rc && !applied; round++) {
		struct ks_llm_reply reply;
		rc = ask_document(L, "edit", round ? &edit_fix : NULL, ie.msg, &s, KS_LLM_WANT_JSON, 1,
				  &script, &reply, &res, e);
		if (!rc && res == ASK_OK && round == 0)
			reflect(L, &reply);
		ks_llm_reply_release(&reply);
		if (rc || res != ASK_OK)
			break;
		if (!(applied = edit_apply(L, ks_buf_str(&script), &ie)))
			ks_warn("edit: the model's script was rejected (%s)%s", ie.msg,
				round ? "; skipped" : "; asking for a correction");
	}
	if (!rc && res == ASK_OK && !applied)
		llm_reject(L, "edit_ops", -1, "your edit script was rejected and changed nothing: %s",
			   ie.msg);
	if (applied)
		unscored_refresh(L);
	for (int i = 0; i < 5; i++)
		ks_buf_release(&bufs[i]);
	ks_buf_release(&script);
	if (rc)
		return rc;
	/* an edit round asked for actions that left none open gave nothing new */
	if (has_open(L) && applied)
		L->fails = 0;
	else if (L->no_open && res == ASK_OK)
		llm_unusable(L, "edit without an open action");
	return 0;
}

/* NULL when node id (named ref by the model) may be worked on next, else the rule it
 * breaks */
static const char *leaf_rule(const struct lp *L, int id, const char *ref, char *why, size_t n)
{
	const struct ks_node *x = ks_world_node(&L->w, id);
	if (!x)
		return "it names no node of the tree";
	if (id == L->w.root)
		return "it is the root (the starting kernel), not an action";
	if (x->status == KS_NODE_OPEN)
		return NULL;
	const char *cr = x->close_reason;
	snprintf(why, n, "node %s is %s%s%s%s, and only an open node can be worked on", ref,
		 ks_node_status_name(x->status), cr ? " (" : "", cr ? cr : "", cr ? ")" : "");
	return why;
}

int llm_world_next(struct lp *L, int *id)
{
	int want = L->want_leaf;
	char ref[sizeof(L->want_ref)], why[256];
	snprintf(ref, sizeof(ref), "%s", L->want_ref);
	L->want_leaf = -1;
	L->want_ref[0] = '\0';
	const char *rule = ref[0] ? leaf_rule(L, want, ref, why, sizeof(why)) : "";
	if (ref[0] && !rule) {
		*id = want;
		return 0;
	}
	if (ks_world_select(&L->w, id, NULL))
		return KS_ENOTFOUND;
	if (ref[0]) {
		char chosen[64];
		ks_world_node_ref(&L->w, *id, chosen, sizeof(chosen));
		llm_reject(L, "active_leaf", -1,
			   "your active_leaf_id %s was not followed: %s; ksearch chose node %s "
			   "\"%s\" (the highest priority) instead",
			   ref, rule, chosen, ks_world_node(&L->w, *id)->title);
	}
	return 0;
}
