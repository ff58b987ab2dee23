/* Ask with bounded corrections: one prompt, parse the reply, and when it is unusable
 * send the reply back with a short correction prompt, a bounded number of times. */
#include "ksearch/llm.h"
#include "ksearch/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ASK_MAX_FIXES 5

static const char *want_expect(const struct ks_llm_ask *q, char *buf, size_t n)
{
	switch (q->want) {
	case KS_LLM_WANT_CODE:
		/* the whole reply: a model asked only for the block drops the lines before it
		 * (a real model asked whether to repeat them) */
		snprintf(buf, n, "the whole reply the request asked for: the lines it asks for "
			 "before the code, as before, then exactly one fenced ```%s code block "
			 "holding the complete source file",
			 q->lang && q->lang[0] ? q->lang : "c");
		return buf;
	case KS_LLM_WANT_JSON_OBJECT:
		return "one fenced ```json block holding one valid JSON object in the requested "
		       "shape";
	case KS_LLM_WANT_JSON_ARRAY:
		return "your notes and one fenced ```json block holding one valid JSON array of "
		       "ops";
	case KS_LLM_WANT_JSON:
		return "one fenced ```json block holding one valid JSON document in the requested "
		       "shape";
	case KS_LLM_WANT_TEXT:
		break;
	}
	return "a non-empty answer";
}

int ks_llm_ask_extract(const struct ks_llm_ask *q, const struct ks_llm_reply *r,
		       struct ks_buf *out, struct ks_error *e)
{
	ks_buf_reset(out);
	switch (q->want) {
	case KS_LLM_WANT_CODE: {
		int rc = ks_reply_code(r->content, r->len, q->lang, out, NULL, e);
		if (!rc && q->max_code && out->len > q->max_code)
			return ks_error_set(e, KS_EPARSE,
					    "the code block is %zu bytes, over the %zu-byte limit of a "
					    "kernel source",
					    out->len, q->max_code);
		return rc;
	}
	case KS_LLM_WANT_JSON_OBJECT:
		return ks_reply_json(r->content, r->len, '{', out, e);
	case KS_LLM_WANT_JSON_ARRAY:
		return ks_reply_json(r->content, r->len, '[', out, e);
	case KS_LLM_WANT_JSON:
		return ks_reply_json(r->content, r->len, 0, out, e);
	case KS_LLM_WANT_TEXT:
		break;
	}
	size_t i = 0;
	while (i < r->len && (r->content[i] == ' ' || r->content[i] == '\n' ||
			      r->content[i] == '\t' || r->content[i] == '\r'))
		i++;
	if (i == r->len)
		return ks_error_set(e, KS_EPARSE, "reply is empty");
	if (ks_buf_add(out, r->content, r->len))
		return ks_error_set(e, KS_ELIMIT, "reply larger than %zu bytes", out->cap);
	return 0;
}

int ks_llm_ask(struct ks_llm *c, const struct ks_llm_ask *q, struct ks_buf *out,
	       struct ks_llm_reply *reply, struct ks_error *e)
{
	/* system, user, then (assistant, user) per correction round */
	struct ks_llm_msg msgs[2 + 2 * ASK_MAX_FIXES];
	char *owned[2 * ASK_MAX_FIXES] = {0};
	int nowned = 0, n = 0, rc;
	int fixes = q->max_fixes < 0 ? 0 : q->max_fixes > ASK_MAX_FIXES ? ASK_MAX_FIXES
									: q->max_fixes;
	char purpose_fix[64], expect[256];
	struct ks_llm_reply r;
	struct ks_error pe = {0};
	if (!q->user || !q->purpose)
		return ks_error_set(e, KS_EINVAL, "llm ask without a prompt or purpose");
	snprintf(purpose_fix, sizeof(purpose_fix), "%s-fix", q->purpose);
	if (q->system)
		msgs[n++] = (struct ks_llm_msg){"system", q->system};
	msgs[n++] = (struct ks_llm_msg){"user", q->user};
	memset(&r, 0, sizeof(r));
	for (int round = 0;; round++) {
		rc = ks_llm_complete(c, round ? purpose_fix : q->purpose, msgs, n, &r, e);
		if (rc)
			goto out;
		rc = ks_llm_ask_extract(q, &r, out, &pe);
		if (!rc)
			break;
		if (rc == KS_EPARSE && q->unusable)
			q->unusable(q->unusable_ctx, round ? purpose_fix : q->purpose, pe.msg);
		if (rc != KS_EPARSE || round >= fixes) {
			if (e)
				*e = pe;
			ks_error_wrap(e, "%s reply unusable after %d correction%s", q->purpose,
				      round, round == 1 ? "" : "s");
			goto out;
		}
		ks_warn("llm %s reply unusable (%s); asking again (%d of %d)", q->purpose, pe.msg,
			round + 1, fixes);
		/* the conversation continues: the model's own reply, then the correction */
		struct ks_buf fix;
		ks_buf_init(&fix, 8192);
		char *said = malloc(r.len + 1);
		if (!said || ks_buf_addf(&fix, "PURPOSE: %s\n", purpose_fix) ||
		    ks_reply_correction(pe.msg, want_expect(q, expect, sizeof(expect)), &fix)) {
			free(said);
			ks_buf_release(&fix);
			rc = ks_error_set(e, KS_ENOMEM, "llm ask: out of memory");
			goto out;
		}
		/* inner NULs would end the message early; the model sees what precedes them */
		memcpy(said, r.content, r.len);
		said[r.len] = '\0';
		owned[nowned++] = said;
		if (!(owned[nowned++] = ks_buf_detach(&fix, NULL))) {
			rc = ks_error_set(e, KS_ENOMEM, "llm ask: the correction could not be built");
			goto out;
		}
		msgs[n++] = (struct ks_llm_msg){"assistant", said};
		msgs[n++] = (struct ks_llm_msg){"user", owned[nowned - 1]};
		ks_llm_reply_release(&r);
	}
out:
	for (int i = 0; i < nowned; i++)
		free(owned[i]);
	/* an unusable reply is handed back too: a kernel may sit beside broken JSON */
	int handed = reply && (!rc || (rc == KS_EPARSE && r.content));
	if (handed)
		*reply = r;
	else
		ks_llm_reply_release(&r);
	if (reply && !handed) {
		memset(reply, 0, sizeof(*reply));
		reply->prompt_tokens = reply->completion_tokens = -1;
	}
	return rc;
}
