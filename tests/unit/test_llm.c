/* The client layer and the replay transport: message text, redaction, records on success
 * and failure, token budget, replay order, purpose mismatch, exhaustion. */
#include "ksearch/secret.h"
#include "ksearch/llm.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rec {
	int n;
	int status[8];
	char purpose[8][16];
	char reply[8][64];
	char error[8][256];
	char prompt[8][512];
	size_t reply_len[8];
	int cost_known[8];
};

static void on_record(const struct ks_llm_exchange *x, void *ctx)
{
	struct rec *r = ctx;
	if (r->n >= 8)
		return;
	r->status[r->n] = x->status;
	snprintf(r->purpose[r->n], 16, "%s", x->purpose);
	snprintf(r->reply[r->n], 64, "%s", x->reply);
	snprintf(r->error[r->n], 256, "%s", x->error ? x->error : "");
	snprintf(r->prompt[r->n], sizeof(r->prompt[0]), "%s", x->prompt);
	r->reply_len[r->n] = x->reply_len;
	r->cost_known[r->n] = x->cost_known;
	r->n++;
}

static void test_status_words(void)
{
	int codes[] = {0, KS_ETIMEOUT, KS_ELIMIT, KS_EPARSE, KS_EHTTP, KS_EBUDGET, KS_EPROTO,
		       KS_ENOTFOUND};
	int round_trip = 1;
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		round_trip &= ks_llm_status_parse(ks_llm_status_text(codes[i])) == codes[i];
	ok(round_trip, "status words round-trip");
	is_str(ks_llm_status_text(KS_ENOMEM), "error", "other failures are 'error'");
	is_int(ks_llm_status_parse("weird"), KS_EIO, "unknown word");
}

static void test_msgs_text(void)
{
	struct ks_buf b;
	ks_buf_init(&b, 1024);
	struct ks_llm_msg m[] = {{"system", "S"}, {"user", "U"}, {NULL, "x"}};
	int rc = ks_llm_msgs_text(m, 3, &b);
	is_int(rc, 0, "msgs text");
	is_str(ks_buf_str(&b), "### system\nS\n\n### user\nU\n\n### user\nx", "stable format");
	ks_buf_release(&b);
}

static void test_redact(void)
{
	struct ks_llm c;
	struct ks_buf b;
	ks_llm_init(&c, NULL);
	ks_secret_add("sk-abcdef");
	ks_secret_add("abc"); /* too short: ignored, would redact ordinary words */
	ks_secret_add("tok-99999");
	ks_buf_init(&b, 1024);
	const char s[] = "sk-abcdefsk-abcdef and tok-99999, abc";
	int rc = ks_secret_redact(s, sizeof(s) - 1, &b);
	is_int(rc, 0, "redact");
	is_str(ks_buf_str(&b), "[REDACTED][REDACTED] and [REDACTED], abc", "all secrets replaced");
	ks_buf_release(&b);
	ks_llm_release(&c);
}

static void test_replay(void)
{
	static const char nul_reply[] = "a\0b";
	struct ks_llm_replay_entry v[] = {
		{.purpose = "init", .content = "{\"kernel_summary\": \"s\"}", .len = 24,
		 .model = "gpt-x", .prompt_tokens = 100, .completion_tokens = 50},
		{.purpose = "action", .content = nul_reply, .len = 3, .prompt_tokens = -1,
		 .completion_tokens = -1},
		{.purpose = "edit", .content = "[]", .len = 2, .prompt_tokens = 5,
		 .completion_tokens = 1},
		{.purpose = "action", .status = KS_ETIMEOUT, .error = "request timed out"},
	};
	struct ks_llm_transport t;
	struct ks_llm c;
	struct ks_llm_reply r;
	struct ks_error e = {0};
	struct rec rec = {0};
	struct ks_llm_msg m[] = {{"user", "PURPOSE: init\nhello"}};
	struct ks_llm_prices prices = {0};
	int rc = ks_llm_replay_open(v, 4, &t, &e);
	is_int(rc, 0, "replay open");
	ks_llm_init(&c, &t);
	c.record = on_record;
	c.record_ctx = &rec;
	ks_llm_prices_add(&prices, "gpt-x", 1.0, 2.0);
	c.prices = &prices;
	c.limits.max_tokens = 1000;

	rc = ks_llm_complete(&c, "init", m, 1, &r, &e);
	is_int(rc, 0, "first reply");
	is_str(r.content, "{\"kernel_summary\": \"s\"}", "recorded content");
	is_str(r.model, "gpt-x", "recorded model");
	is_int(r.prompt_tokens, 100, "recorded tokens");
	ok(r.cost_usd > 0, "cost recomputed from the price table (%.6f)", r.cost_usd);
	ks_llm_reply_release(&r);

	rc = ks_llm_complete(&c, "action", m, 1, &r, &e);
	is_int(rc, 0, "second reply");
	ok(r.len == 3 && !memcmp(r.content, "a\0b", 3), "inner NUL kept with len");
	ks_llm_reply_release(&r);

	rc = ks_llm_complete(&c, "debug", m, 1, &r, &e);
	is_int(rc, KS_EPROTO, "purpose mismatch");
	ok(strstr(e.msg, "replay diverged at reply 3: recorded for 'edit', the run asked for "
			 "'debug'") != NULL,
	   "mismatch message: %s", e.msg);
	ok(r.content == NULL, "no reply on failure");

	rc = ks_llm_complete(&c, "edit", m, 1, &r, &e);
	is_int(rc, 0, "the recorded purpose still works");
	ks_llm_reply_release(&r);

	rc = ks_llm_complete(&c, "action", m, 1, &r, &e);
	is_int(rc, KS_ETIMEOUT, "recorded failure replayed");
	ok(strstr(e.msg, "replayed failure: request timed out") != NULL, "its message: %s",
	   e.msg);

	rc = ks_llm_complete(&c, "edit", m, 1, &r, &e);
	is_int(rc, KS_ENOTFOUND, "exhausted");
	ok(strstr(e.msg, "replay exhausted") && strstr(e.msg, "only 4 were recorded"),
	   "exhaustion message: %s", e.msg);

	is_int(rec.n, 6, "every call recorded, failures too");
	ok(rec.cost_known[0] && !rec.cost_known[1], "cost known only for the priced model");
	is_int(rec.reply_len[1], 3, "recorded reply length counts inner NULs");
	is_int(rec.status[2], KS_EPROTO, "failure status recorded");
	ok(strstr(rec.error[2], "replay diverged") != NULL, "failure message recorded");
	is_str(rec.purpose[3], "edit", "purpose recorded");
	is_str(rec.prompt[0], "### user\nPURPOSE: init\nhello", "prompt text recorded");
	is_int(c.usage.calls, 6, "calls");
	is_int(c.usage.failures, 3, "failures");
	is_int(c.usage.prompt_tokens, 105, "prompt tokens");

	c.limits.max_tokens = 150;
	rc = ks_llm_complete(&c, "edit", m, 1, &r, &e);
	is_int(rc, KS_EBUDGET, "token budget");
	ok(strstr(e.msg, "token budget") != NULL, "token budget message: %s", e.msg);
	is_int(rec.n, 6, "a refused call is not an exchange");

	rc = ks_llm_complete(&c, "edit", m, 0, &r, &e);
	is_int(rc, KS_EINVAL, "no messages");

	ks_llm_release(&c);
	ks_llm_transport_close(&t);
	ks_llm_transport_close(&t); /* twice is harmless */
	ks_llm_prices_release(&prices);

	struct ks_llm_transport bad = {.version = 99};
	ks_llm_init(&c, &bad);
	rc = ks_llm_complete(&c, "x", m, 1, &r, &e);
	is_int(rc, KS_EINVAL, "transport version checked");
	ks_llm_release(&c);

	rc = ks_llm_replay_open(NULL, 0, &t, &e);
	is_int(rc, 0, "empty replay");
	ks_llm_init(&c, &t);
	rc = ks_llm_complete(&c, "init", m, 1, &r, &e);
	is_int(rc, KS_ENOTFOUND, "empty replay is exhausted at once");
	ks_llm_release(&c);
	ks_llm_transport_close(&t);
}

static void test_notes(void)
{
	struct ks_buf b;
	ks_buf_init(&b, 4096);
	const char *r = "Reflection:\n- **CURRENT:** tiling gave 1.8x\non the big shape.\n"
			"FOLLOW_THROUGH: done\n\nUPDATE_BELIEF: raise node 3\n"
			"```json\n[]\n```\n";
	int rc = ks_reply_note(r, strlen(r), "CURRENT", &b);
	is_int(rc, 0, "note found");
	is_str(ks_buf_str(&b), "tiling gave 1.8x\non the big shape.", "note text, continued line");
	rc = ks_reply_note(r, strlen(r), "FOLLOW_THROUGH", &b);
	is_str(ks_buf_str(&b), "done", "note ends at a blank line");
	rc = ks_reply_note(r, strlen(r), "UPDATE_BELIEF", &b);
	is_str(ks_buf_str(&b), "raise node 3", "note ends at a fence");
	rc = ks_reply_note(r, strlen(r), "PERF_GAP", &b);
	is_int(rc, KS_ENOTFOUND, "missing note");
	ks_buf_release(&b);
}

static void test_ask(void)
{
	struct ks_llm_replay_entry v[] = {
		{.purpose = "action", .content = "Sure, I will do it!", .len = 19},
		{.purpose = "action-fix", .content = "```c\nint fixed;\n```", .len = 20},
		{.purpose = "edit", .content = "CURRENT: x\n[{\"op\": }]", .len = 23},
		{.purpose = "edit-fix", .content = "still nothing", .len = 13},
		{.purpose = "init", .content = "{\"kernel_summary\": \"k\"}", .len = 24},
		{.purpose = "debug", .content = "no code", .len = 7},
	};
	struct ks_llm_transport t;
	struct ks_llm c;
	struct ks_llm_reply r;
	struct ks_error e = {0};
	struct ks_buf out;
	struct rec rec = {0};
	ks_buf_init(&out, 1 << 20);
	for (int i = 0; i < 6; i++)
		v[i].len = strlen(v[i].content);
	int rc = ks_llm_replay_open(v, 6, &t, &e);
	is_int(rc, 0, "open");
	ks_llm_init(&c, &t);
	c.record = on_record;
	c.record_ctx = &rec;

	struct ks_llm_ask q = {.purpose = "action", .system = "SYS", .user = "PURPOSE: action\ndo",
			       .want = KS_LLM_WANT_CODE, .lang = "c", .max_fixes = 2};
	rc = ks_llm_ask(&c, &q, &out, &r, &e);
	is_int(rc, 0, "code after one correction");
	is_str(ks_buf_str(&out), "int fixed;\n", "extracted code");
	is_str(r.content, "```c\nint fixed;\n```", "raw reply handed back");
	ks_llm_reply_release(&r);
	is_int(rec.n, 2, "two exchanges");
	is_str(rec.purpose[1], "action-fix", "correction purpose");
	ok(strstr(rec.prompt[1], "### assistant\nSure, I will do it!\n\n### user\nPURPOSE: "
				 "action-fix\nYour previous reply could not be used: reply has no "
				 "code block.") != NULL,
	   "correction conversation: %s", rec.prompt[1]);
	/* a code correction asks for the whole reply, not the block alone: a real model asked
	 * whether to repeat the lines before the code */
	ok(strstr(rec.prompt[1], "Reply again with the whole reply the request asked for: the "
				 "lines it asks for before the code, as before, then exactly one "
				 "fenced ```c code block holding the complete source file.") != NULL,
	   "a code correction asks for the whole reply again");

	struct ks_llm_ask q2 = {.purpose = "edit", .user = "PURPOSE: edit",
				.want = KS_LLM_WANT_JSON_ARRAY, .max_fixes = 1};
	rc = ks_llm_ask(&c, &q2, &out, &r, &e);
	is_int(rc, KS_EPARSE, "still unusable after the allowed corrections");
	ok(strstr(e.msg, "edit reply unusable after 1 correction: reply has no JSON array") !=
		   NULL,
	   "message: %s", e.msg);
	/* the last unusable reply comes back: a kernel may sit beside broken JSON */
	is_str(r.content, "still nothing", "the last unusable reply is handed back on a parse failure");
	ks_llm_reply_release(&r);

	struct ks_llm_ask q3 = {.purpose = "init", .user = "PURPOSE: init",
				.want = KS_LLM_WANT_JSON_OBJECT};
	rc = ks_llm_ask(&c, &q3, &out, NULL, &e);
	is_int(rc, 0, "json object first time");
	is_str(ks_buf_str(&out), "{\"kernel_summary\": \"k\"}", "object text");

	c.limits.max_calls = c.usage.calls + 1;
	struct ks_llm_ask q4 = {.purpose = "debug", .user = "PURPOSE: debug",
				.want = KS_LLM_WANT_CODE, .max_fixes = 3};
	rc = ks_llm_ask(&c, &q4, &out, NULL, &e);
	is_int(rc, KS_EBUDGET, "budget ends the corrections");
	ks_llm_release(&c);
	ks_llm_transport_close(&t);
	ks_buf_release(&out);
}

int main(void)
{
	test_status_words();
	test_msgs_text();
	test_redact();
	test_replay();
	test_notes();
	test_ask();
	return tap_done();
}
