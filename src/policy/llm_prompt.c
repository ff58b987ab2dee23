/* A prompt from its template, the context and the run state (llm_prompt.h). */
#include "policy/llm_prompt.h"

#include <stdio.h>
#include <string.h>

#include "ksearch/world.h"

/* what a placeholder holds, and how it gives way when the prompt is over its budget */
struct slot {
	const char *name;
	int priority;
	int required;
	int optional; /* empty: its section is left out, not shown empty */
};

static const struct slot slots[] = {
	{"task", KS_CONTEXT_PRIO_TASK, 1, 0},
	{"action", KS_CONTEXT_PRIO_ACTION, 1, 0},
	{"evidence", KS_CONTEXT_PRIO_ACTION, 1, 0},
	{"repeat", KS_CONTEXT_PRIO_ACTION, 1, 0},
	{"notes", KS_CONTEXT_PRIO_NOTES, 1, 0},
	{"noise", KS_CONTEXT_PRIO_NOTES, 1, 0},
	{"parent_from", KS_CONTEXT_PRIO_ACTION, 1, 0},
	{"candidate_from", KS_CONTEXT_PRIO_ACTION, 1, 0},
	{"base_from", KS_CONTEXT_PRIO_ACTION, 1, 0},
	{"best_from", KS_CONTEXT_PRIO_ACTION, 1, 0},
	{"code_from", KS_CONTEXT_PRIO_ACTION, 1, 0},
	{"parent_code", KS_CONTEXT_PRIO_CODE, 0, 0},
	{"candidate_code", KS_CONTEXT_PRIO_CODE, 0, 0},
	{"base_code", KS_CONTEXT_PRIO_CODE - 5, 0, 0},
	{"best_code", KS_CONTEXT_PRIO_CODE, 0, 0},
	{"code", KS_CONTEXT_PRIO_CODE, 0, 0},
	{"reference", KS_CONTEXT_PRIO_REFERENCE, 0, 0},
	{"hardware", KS_CONTEXT_PRIO_HARDWARE, 0, 0},
	{"attempts", KS_CONTEXT_PRIO_ATTEMPTS, 0, 0},
	{"feedback", KS_CONTEXT_PRIO_FEEDBACK, 0, 0},
	{"tree", KS_CONTEXT_PRIO_TREE, 0, 0},
	{"translation", KS_CONTEXT_PRIO_TRANSLATION, 0, 1},
};

static const char *slot_text(const struct ks_llm_context *c, const struct ks_llm_state *s,
			     const struct slot *slot)
{
	const char *name = slot->name;
	const char *v[][2] = {
		{"task", ks_buf_str(&c->task)}, {"reference", ks_buf_str(&c->reference)},
		{"hardware", ks_buf_str(&c->hardware)},
		{"translation", ks_buf_str(&c->translation)}, {"action", s->action},
		{"evidence", s->evidence}, {"repeat", s->repeat}, {"notes", s->notes},
		{"parent_code", s->parent_code}, {"candidate_code", s->candidate_code},
		{"base_code", s->base_code}, {"best_code", s->best_code}, {"code", s->code},
		{"attempts", s->attempts}, {"feedback", s->feedback}, {"tree", s->tree},
		{"noise", s->noise}, {"parent_from", s->parent_from},
		{"candidate_from", s->candidate_from}, {"base_from", s->base_from},
		{"best_from", s->best_from}, {"code_from", s->code_from},
	};
	const char *none = slot->optional ? "" : "(none)";
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!strcmp(v[i][0], name))
			return v[i][1] && v[i][1][0] ? v[i][1] : none;
	return none;
}

int ks_llm_prompt_make(const char *prompts_dir, const char *tmpl, const char *backend,
		       const struct ks_llm_context *c, struct ks_llm_state *s,
		       struct ks_buf *sys, struct ks_buf *user, struct ks_error *e)
{
	char file[96], ph[64];
	snprintf(file, sizeof(file), "%s.txt", tmpl);
	struct ks_buf t = KS_BUF_INIT;
	int rc = ks_prompt_load(prompts_dir, file, &t, e);
	struct ks_context_piece pieces[sizeof(slots) / sizeof(slots[0])];
	int np = 0;
	s->notes_shown = 0;
	for (size_t i = 0; !rc && i < sizeof(slots) / sizeof(slots[0]); i++) {
		snprintf(ph, sizeof(ph), "{{%s}}", slots[i].name);
		if (!strstr(ks_buf_str(&t), ph))
			continue; /* the template does not show it: it costs no budget */
		s->notes_shown |= !strcmp(slots[i].name, "notes");
		pieces[np++] = (struct ks_context_piece){
			.name = slots[i].name, .text = slot_text(c, s, &slots[i]),
			.short_text = !strcmp(slots[i].name, "tree") ? s->tree_brief : NULL,
			.priority = slots[i].priority, .required = slots[i].required,
			.optional_section = slots[i].optional};
	}
	ks_buf_release(&t);
	if (rc)
		return rc;
	char maxnew[16];
	snprintf(maxnew, sizeof(maxnew), "%d", KS_WORLD_MAX_NEW_PER_EDIT);
	struct ks_prompt_var vars[] = {{"backend", backend},
				       {"language", c->flavour},
				       {"node_id", s->node_id ? s->node_id : "?"},
				       {"max_new_nodes", maxnew},
				       {"reply_file", c->reply_file ? c->reply_file : ""},
				       {"knob_use", c->knob_use ? c->knob_use : ""}};
	struct ks_llm_prompt p = {.dir = prompts_dir, .purpose = tmpl, .pieces = pieces,
				  .npieces = np, .vars = vars, .nvars = sizeof(vars) / sizeof(vars[0]),
				  .budget_tokens = KS_LLM_PROMPT_BUDGET};
	rc = ks_llm_prompt_build(&p, sys, user, NULL, e);
	return rc ? ks_error_wrap(e, "prompt '%s'", tmpl) : 0;
}
