/* Prompt templates (rendering, loading the shipped prompts) and context assembly under a
 * token budget. */
#include "ksearch/llm.h"
#include "ksearch/template.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_render(void)
{
	struct ks_buf b;
	struct ks_error e = {0};
	ks_buf_init(&b, 4096);
	struct ks_prompt_var v[] = {{"name", "softmax"}, {"n", "3"}, {"empty", NULL}};
	int rc = ks_prompt_render("t", "Task {{name}}, {{ n }} ways{{empty}}.", v, 3, &b, &e);
	is_int(rc, 0, "render");
	is_str(ks_buf_str(&b), "Task softmax, 3 ways.", "placeholders replaced");

	ks_buf_reset(&b);
	rc = ks_prompt_render("t", "{\"a\": {\"b\": {}}} {{{name}}} {{ not closed", v, 3, &b, &e);
	is_int(rc, 0, "JSON braces are literal");
	is_str(ks_buf_str(&b), "{\"a\": {\"b\": {}}} {softmax} {{ not closed", "literal braces kept");

	ks_buf_reset(&b);
	rc = ks_prompt_render("x.txt", "line1\nline2 {{name}}\n{{nope}}", v, 3, &b, &e);
	is_int(rc, KS_EINVAL, "unknown placeholder");
	is_str(e.msg, "x.txt line 3: unknown placeholder '{{nope}}'", "error names file and line");

	ks_buf_reset(&b);
	struct ks_prompt_var self[] = {{"a", "{{b}}"}};
	rc = ks_prompt_render("t", "{{a}}", self, 1, &b, &e);
	is_int(rc, 0, "values are not re-expanded");
	is_str(ks_buf_str(&b), "{{b}}", "value inserted verbatim");

	struct ks_buf tiny;
	ks_buf_init(&tiny, 8);
	rc = ks_prompt_render("t", "{{name}} and more text", v, 3, &tiny, &e);
	is_int(rc, KS_ELIMIT, "output cap");
	ks_buf_release(&tiny);
	ks_buf_release(&b);
}

/* every shipped template renders with the documented variables (docs/llm.md) and nothing
 * else, and carries its PURPOSE marker */
static void test_shipped(void)
{
	struct ks_prompt_var all[] = {
		{"backend", "cpu"},       {"language", "c"},         {"task", "TASK"},
		{"hardware", "HW"},       {"translation", "TR"},     {"tree", "TREE"},
		{"parent_code", "PARENT"}, {"feedback", "FEEDBACK"}, {"evidence", "EVIDENCE"},
		{"max_new_nodes", "3"},   {"action", "ACTION"},      {"node_id", "4"},
		{"candidate_code", "CAND"}, {"best_code", "BEST"}, {"reference", "REF"},
		{"notes", "NOTES"},       {"attempts", "ATTEMPTS"},  {"base_code", "BASE"},
		{"code", "CODE"},         {"repeat", "REPEAT"},          {"noise", "NOISE"},
		{"parent_from", "PFROM"}, {"candidate_from", "CFROM"}, {"base_from", "BFROM"},
		{"best_from", "BESTFROM"}, {"code_from", "CODEFROM"}, {"reply_file", "REPLYFILE"},
		{"knob_use", "KNOBUSE"},
	};
	static const struct {
		const char *file, *purpose;
		const char *must[4];
	} t[] = {
		{"system.txt", NULL, {"cpu", NULL}},
		{"init.txt", "init", {"TASK", "HW", "PARENT", "\"decision_tree\""}},
		{"edit.txt", "edit", {"TREE", "EVIDENCE", "FOLLOW_THROUGH", "split_node"}},
		{"action.txt", "action", {"ACTION", "PARENT", "```c\nPARENT\n```", "node 4"}},
		{"debug.txt", "debug", {"CAND", "FEEDBACK", "```c\nBASE\n```", "ATTEMPTS"}},
		{"improve.txt", "improve", {"BEST", "FEEDBACK", "ACTION", "ATTEMPTS"}},
		{"repeat.txt", "repeat", {"REPEAT", "BEST", "ATTEMPTS", "NOTES"}},
		{"direct.txt", "direct", {"BEST", "TREE", "NOTES", NULL}},
	};
	struct ks_error e = {0};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct ks_buf b;
		ks_buf_init(&b, 1 << 20);
		int rc = ks_prompt_render_file("prompts", t[i].file, all,
					       (int)(sizeof(all) / sizeof(all[0])), &b, &e);
		ok(rc == 0, "%s renders (%s)", t[i].file, rc ? e.msg : "ok");
		if (t[i].purpose) {
			char marker[64];
			snprintf(marker, sizeof(marker), "PURPOSE: %s\n", t[i].purpose);
			ok(strncmp(ks_buf_str(&b), marker, strlen(marker)) == 0,
			   "%s starts with its purpose marker", t[i].file);
		}
		for (int k = 0; k < 4 && t[i].must[k]; k++)
			ok(strstr(ks_buf_str(&b), t[i].must[k]) != NULL, "%s contains '%s'",
			   t[i].file, t[i].must[k]);
		ks_buf_release(&b);
	}
	/* the default directory is <data root>/prompts (KSEARCH_HOME is the source tree) */
	struct ks_buf b;
	ks_buf_init(&b, 1 << 20);
	int rc = ks_prompt_load(NULL, "system.txt", &b, &e);
	is_int(rc, 0, "load from the data root");
	rc = ks_prompt_load("prompts", "missing.txt", &b, &e);
	is_int(rc, KS_ENOTFOUND, "missing template");
	ok(strstr(e.msg, "--prompts") != NULL, "missing message: %s", e.msg);
	rc = ks_prompt_load("prompts", "../CMakeLists.txt", &b, &e);
	is_int(rc, KS_EINVAL, "no path escapes");
	ks_buf_release(&b);
}

/* The knob block the action prompt shows as an example is one the run accepts: a model that
 * copies it gets its knobs tuned, not dropped ("@ksearch block lacks the key 'family'"). */
static void test_knob_example(void)
{
	struct ks_buf b;
	struct ks_error e = {0};
	ks_buf_init(&b, 1 << 20);
	int rc = ks_prompt_load("prompts", "action.txt", &b, &e);
	is_int(rc, 0, "action.txt loads");
	const char *t = ks_buf_str(&b), *start = strstr(t, "/* @ksearch"), *end = strstr(t, "@end */");
	if (!ok(start && end && end > start, "action.txt shows an @ksearch block")) {
		ks_buf_release(&b);
		return;
	}
	char kernel[2048];
	snprintf(kernel, sizeof(kernel), "%.*s\nvoid f(void) {}\n", (int)(end + 7 - start), start);
	struct ks_template *tp = NULL;
	rc = ks_template_parse(kernel, strlen(kernel), "example", &tp, &e);
	ok(rc == 0, "the example block parses (%s)", rc ? e.msg : "ok");
	ok(tp && tp->nknobs == 1, "... with its knob");
	ks_template_free(tp);
	ks_buf_release(&b);
}

static const char *json_doc = "{\"decision_tree\": {\"nodes\": [{\"node_id\": 0}]}}";
static const char *code = "```c\nvoid softmax(const float *x, float *y) { }\n```";

static void test_context(void)
{
	struct ks_context c;
	struct ks_error e = {0};
	char big_tree[4000];
	memset(big_tree, 't', sizeof(big_tree) - 1);
	big_tree[sizeof(big_tree) - 1] = '\0';
	memcpy(big_tree, "{\"x\": \"", 7);
	memcpy(big_tree + sizeof(big_tree) - 4, "\"}", 3);
	const char *fb[] = {"feedback-1 old", "feedback-2", "feedback-3", "feedback-4 newest"};
	struct ks_context_piece p[] = {
		{.name = "task", .text = "softmax: y = exp(x)/sum", .priority = 100, .required = 1},
		{.name = "parent_code", .text = code, .priority = 90},
		{.name = "tree", .text = big_tree, .short_text = json_doc, .priority = 50},
		{.name = "feedback", .text = "Feedback:", .entries = fb, .nentries = 4,
		 .keep_min = 1, .priority = 40},
		{.name = "translation", .text = "T: __shared__ -> threadgroup", .priority = 10},
	};
	int rc = ks_context_init(&c, p, 5, &e);
	is_int(rc, 0, "context init");

	rc = ks_context_fit(&c, 100000, 0, &e);
	is_int(rc, 0, "fits a large budget");
	for (int i = 0; i < 5; i++)
		is_int(c.form[i], KS_CONTEXT_FORM_FULL, "everything full");
	ok(strstr(ks_context_text(&c, 3), "feedback-1 old") != NULL, "all feedback kept");
	ok(!strcmp(ks_context_text(&c, 2), big_tree), "tree full");
	long full = c.tokens;

	/* tight: 4000-byte tree (~1000 tokens) must go short; feedback trimmed first */
	rc = ks_context_fit(&c, 200, 20, &e);
	is_int(rc, 0, "fits a tight budget");
	ok(c.tokens <= 200 && c.tokens < full, "under budget (%ld <= 200)", c.tokens);
	is_int(c.form[4], KS_CONTEXT_FORM_FULL, "summarizing sufficed: nothing dropped");
	is_int(c.kept[3], 1, "feedback down to keep_min");
	ok(strstr(ks_context_text(&c, 3), "feedback-4 newest") &&
		   !strstr(ks_context_text(&c, 3), "feedback-3"),
	   "newest feedback kept: %s", ks_context_text(&c, 3));
	ok(strstr(ks_context_text(&c, 3), "3 older entries omitted") != NULL,
	   "omission noted in feedback");
	is_int(c.form[2], KS_CONTEXT_FORM_SHORT, "tree summarized");
	is_str(ks_context_text(&c, 2), json_doc, "short tree is the whole JSON document");
	is_str(ks_context_text(&c, 0), "softmax: y = exp(x)/sum", "required piece intact");
	is_str(ks_context_text(&c, 1), code, "code block intact");

	struct ks_prompt_var vars[5];
	ks_context_vars(&c, vars);
	struct ks_buf b;
	ks_buf_init(&b, 1 << 16);
	rc = ks_prompt_render("t", "{{task}}|{{tree}}|{{translation}}", vars, 5, &b, &e);
	is_int(rc, 0, "context pieces render as template variables");
	ok(strstr(ks_buf_str(&b), json_doc) != NULL, "rendered with the short tree");
	ks_buf_release(&b);

	/* medium: the lowest priority pieces that gain from it are dropped */
	rc = ks_context_fit(&c, 45, 0, &e);
	is_int(rc, 0, "fits a medium budget");
	is_int(c.form[4], KS_CONTEXT_FORM_FULL, "a piece smaller than the note is not dropped");
	is_int(c.form[3], KS_CONTEXT_FORM_DROPPED, "feedback dropped before the tree");
	is_int(c.form[2], KS_CONTEXT_FORM_DROPPED, "then the tree");
	is_int(c.form[1], KS_CONTEXT_FORM_FULL, "higher priority code kept");
	is_str(ks_context_text(&c, 3), KS_CONTEXT_OMITTED, "dropped piece says so");

	/* tighter still: everything optional dropped, required fits */
	c.omitted_note = "(omitted)";
	rc = ks_context_fit(&c, 20, 0, &e);
	is_int(rc, 0, "fits with only the required piece");
	is_int(c.form[1], KS_CONTEXT_FORM_DROPPED, "code dropped whole, not cut");
	is_int(c.form[2], KS_CONTEXT_FORM_DROPPED, "tree dropped");
	is_int(c.form[3], KS_CONTEXT_FORM_DROPPED, "feedback dropped");
	is_int(c.form[4], KS_CONTEXT_FORM_DROPPED, "translation dropped");
	is_str(ks_context_text(&c, 1), "(omitted)", "custom note");

	rc = ks_context_fit(&c, 5, 0, &e);
	is_int(rc, KS_ELIMIT, "required piece over budget");
	ok(strstr(e.msg, "over the 5-token budget") != NULL, "limit message: %s", e.msg);

	rc = ks_context_fit(&c, 0, 0, &e);
	is_int(rc, 0, "budget 0 = unlimited");
	is_int(c.form[2], KS_CONTEXT_FORM_FULL, "unlimited keeps everything");
	ks_context_release(&c);

	/* priorities decide: the lower one goes first even when it is smaller */
	struct ks_context_piece q[] = {
		{.name = "a", .text = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", .priority = 5},
		{.name = "b", .text = "bbbbbbbb", .priority = 1},
	};
	rc = ks_context_init(&c, q, 2, &e);
	is_int(rc, 0, "init");
	c.omitted_note = "";
	rc = ks_context_fit(&c, 11, 0, &e);
	is_int(rc, 0, "fit");
	is_int(c.form[1], KS_CONTEXT_FORM_DROPPED, "low priority dropped");
	is_int(c.form[0], KS_CONTEXT_FORM_FULL, "high priority kept");
	ks_context_release(&c);

	struct ks_context_piece dup[] = {{.name = "a"}, {.name = "a"}};
	rc = ks_context_init(&c, dup, 2, &e);
	is_int(rc, KS_EINVAL, "duplicate names rejected");
	is_int(ks_context_estimate(9), 3, "estimate rounds up");
}

static void test_build(void)
{
	static char fb_text[20][480];
	const char *fb[20];
	for (int i = 0; i < 20; i++) {
		int n = snprintf(fb_text[i], sizeof(fb_text[i]), "workload %d: PASSED 1.%02d ms ", i, i);
		memset(fb_text[i] + n, '.', sizeof(fb_text[i]) - (size_t)n - 1);
		fb_text[i][sizeof(fb_text[i]) - 1] = '\0';
		fb[i] = fb_text[i];
	}
	struct ks_context_piece pieces[] = {
		{.name = "task", .text = "softmax(const float *x, float *y, int32_t rows, int32_t cols)",
		 .priority = KS_CONTEXT_PRIO_TASK, .required = 1},
		{.name = "action", .text = "parallelize rows with OpenMP",
		 .priority = KS_CONTEXT_PRIO_ACTION, .required = 1},
		{.name = "parent_code", .text = code, .priority = KS_CONTEXT_PRIO_CODE},
		{.name = "hardware", .text = "host CPU: 2 cores, AVX2", .priority = KS_CONTEXT_PRIO_HARDWARE},
		{.name = "feedback", .entries = fb, .nentries = 20, .keep_min = 2,
		 .priority = KS_CONTEXT_PRIO_FEEDBACK},
		{.name = "tree", .text = json_doc, .priority = KS_CONTEXT_PRIO_TREE},
		{.name = "reference", .text = "(none)", .priority = KS_CONTEXT_PRIO_HARDWARE},
		{.name = "notes", .text = "(none)", .priority = KS_CONTEXT_PRIO_ACTION, .required = 1},
		{.name = "parent_from", .text = "candidate 1", .priority = KS_CONTEXT_PRIO_ACTION,
		 .required = 1},
		{.name = "noise", .text = "quiet", .priority = KS_CONTEXT_PRIO_ACTION, .required = 1},
		{.name = "translation", .text = "(none)", .priority = KS_CONTEXT_PRIO_TRANSLATION},
	};
	struct ks_prompt_var vars[] = {{"backend", "cpu"},
				       {"language", "c"},
				       {"node_id", "1"},
				       {"reply_file", "the complete kernel file"},
				       {"knob_use", "#ifndef BLOCK"}};
	struct ks_llm_prompt p = {.dir = "prompts", .purpose = "action", .pieces = pieces,
				  .npieces = 11, .vars = vars, .nvars = 5, .budget_tokens = 2000};
	struct ks_buf sys, user;
	struct ks_context ctx;
	struct ks_error e = {0};
	ks_buf_init(&sys, 1 << 20);
	ks_buf_init(&user, 1 << 20);
	int rc = ks_llm_prompt_build(&p, &sys, &user, &ctx, &e);
	is_int(rc, 0, "action prompt built");
	ok(ks_context_estimate(sys.len + user.len) <= 2000, "within the budget (%ld tokens)",
	   ks_context_estimate(sys.len + user.len));
	ok(strncmp(ks_buf_str(&user), "PURPOSE: action\n", 16) == 0, "purpose marker");
	ok(strstr(ks_buf_str(&sys), "cpu kernels") != NULL, "system prompt rendered");
	ok(strstr(ks_buf_str(&user), "workload 19:") && !strstr(ks_buf_str(&user), "workload 0:"),
	   "newest feedback kept, oldest dropped");
	ok(strstr(ks_buf_str(&user), "older entries omitted") != NULL, "omission noted");
	ok(ctx.kept[4] >= 2 && ctx.kept[4] < 20, "feedback trimmed (%d kept)", ctx.kept[4]);
	ok(strstr(ks_buf_str(&user), code) != NULL, "parent code whole");
	ks_context_release(&ctx);

	p.budget_tokens = 0;
	rc = ks_llm_prompt_build(&p, &sys, &user, NULL, &e);
	is_int(rc, 0, "unlimited budget");
	ok(strstr(ks_buf_str(&user), "workload 0:") != NULL, "everything kept");

	p.budget_tokens = 300;
	rc = ks_llm_prompt_build(&p, &sys, &user, NULL, &e);
	is_int(rc, KS_ELIMIT, "templates alone over a tiny budget");
	ok(strstr(e.msg, "prompt 'action.txt'") != NULL, "message names the prompt: %s", e.msg);

	p.budget_tokens = 0;
	p.npieces = 10; /* no translation piece */
	rc = ks_llm_prompt_build(&p, &sys, &user, NULL, &e);
	is_int(rc, KS_EINVAL, "missing placeholder");
	ok(strstr(e.msg, "{{translation}}") != NULL, "message names it: %s", e.msg);

	p.purpose = "nosuch";
	rc = ks_llm_prompt_build(&p, &sys, &user, NULL, &e);
	is_int(rc, KS_ENOTFOUND, "unknown purpose");
	ks_buf_release(&sys);
	ks_buf_release(&user);
}

int main(void)
{
	test_render();
	test_shipped();
	test_knob_example();
	test_context();
	test_build();
	return tap_done();
}
