/* Context assembly under a token budget: whole pieces are shortened or dropped by
 * priority; text is never cut, so JSON documents and code blocks stay intact. */
#include "ksearch/llm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENTRY_SEP "\n\n"

long ks_context_estimate(size_t bytes)
{
	return (long)((bytes + 3) / 4);
}

int ks_context_init(struct ks_context *c, const struct ks_context_piece *pieces, int n,
		    struct ks_error *e)
{
	memset(c, 0, sizeof(*c));
	c->omitted_note = KS_CONTEXT_OMITTED;
	if (n < 0 || (n && !pieces))
		return ks_error_set(e, KS_EINVAL, "context: no pieces");
	for (int i = 0; i < n; i++) {
		if (!pieces[i].name || !pieces[i].name[0])
			return ks_error_set(e, KS_EINVAL, "context piece %d has no name", i);
		if (pieces[i].nentries < 0 || (pieces[i].nentries && !pieces[i].entries))
			return ks_error_set(e, KS_EINVAL, "context piece '%s': bad entries",
					    pieces[i].name);
		for (int j = 0; j < i; j++)
			if (!strcmp(pieces[i].name, pieces[j].name))
				return ks_error_set(e, KS_EINVAL, "context piece '%s' given twice",
						    pieces[i].name);
	}
	size_t k = n ? (size_t)n : 1;
	c->pieces = calloc(k, sizeof(*c->pieces));
	c->form = calloc(k, sizeof(*c->form));
	c->kept = calloc(k, sizeof(*c->kept));
	c->rendered = calloc(k, sizeof(*c->rendered));
	if (!c->pieces || !c->form || !c->kept || !c->rendered) {
		ks_context_release(c);
		return ks_error_set(e, KS_ENOMEM, "context: out of memory");
	}
	if (n)
		memcpy(c->pieces, pieces, (size_t)n * sizeof(*pieces));
	c->n = n;
	for (int i = 0; i < n; i++) {
		c->kept[i] = c->pieces[i].nentries;
		if (c->pieces[i].keep_min > c->pieces[i].nentries)
			c->pieces[i].keep_min = c->pieces[i].nentries;
		if (c->pieces[i].keep_min < 0)
			c->pieces[i].keep_min = 0;
	}
	return 0;
}

void ks_context_release(struct ks_context *c)
{
	for (int i = 0; c->rendered && i < c->n; i++)
		free(c->rendered[i]);
	free(c->rendered);
	free(c->pieces);
	free(c->form);
	free(c->kept);
	memset(c, 0, sizeof(*c));
}

static size_t slen(const char *s)
{
	return s ? strlen(s) : 0;
}

static int older_note(char *out, size_t n, int dropped)
{
	return snprintf(out, n, "(%d older entr%s omitted to fit the context budget)", dropped,
			dropped == 1 ? "y" : "ies");
}

/* bytes of piece i in its current form */
static size_t piece_bytes(const struct ks_context *c, int i)
{
	const struct ks_context_piece *p = &c->pieces[i];
	char note[96];
	switch (c->form[i]) {
	case KS_CONTEXT_FORM_DROPPED:
		return slen(c->omitted_note);
	case KS_CONTEXT_FORM_SHORT:
		return slen(p->short_text);
	case KS_CONTEXT_FORM_FULL:
		break;
	}
	size_t b = slen(p->text);
	if (!p->entries)
		return b;
	int dropped = p->nentries - c->kept[i];
	if (b)
		b += strlen(ENTRY_SEP);
	if (dropped)
		b += (size_t)older_note(note, sizeof(note), dropped) + strlen(ENTRY_SEP);
	for (int k = p->nentries - c->kept[i]; k < p->nentries; k++)
		b += slen(p->entries[k]) + strlen(ENTRY_SEP);
	return b;
}

static long total_tokens(const struct ks_context *c)
{
	long t = 0;
	for (int i = 0; i < c->n; i++)
		t += ks_context_estimate(piece_bytes(c, i));
	return t;
}

/* One step of shrinking piece i; 0 when it cannot shrink further in this phase.
 * Phase 0 shortens (oldest list entries down to keep_min, then the short form); phase 1
 * drops whole pieces.  Every piece is summarized before any piece is dropped. */
static int piece_shrink(struct ks_context *c, int i, int phase, int apply)
{
	const struct ks_context_piece *p = &c->pieces[i];
	if (p->required || c->form[i] == KS_CONTEXT_FORM_DROPPED)
		return 0;
	if (phase == 0) {
		if (c->form[i] == KS_CONTEXT_FORM_FULL && p->entries && c->kept[i] > p->keep_min) {
			if (apply)
				c->kept[i]--;
			return 1;
		}
		if (c->form[i] == KS_CONTEXT_FORM_FULL && p->short_text) {
			if (apply)
				c->form[i] = KS_CONTEXT_FORM_SHORT;
			return 1;
		}
		return 0;
	}
	/* dropping a piece no longer than the omission note gains nothing */
	if (ks_context_estimate(piece_bytes(c, i)) <= ks_context_estimate(slen(c->omitted_note)))
		return 0;
	if (apply)
		c->form[i] = KS_CONTEXT_FORM_DROPPED;
	return 1;
}

static int piece_render(struct ks_context *c, int i)
{
	const struct ks_context_piece *p = &c->pieces[i];
	struct ks_buf b;
	char note[96];
	int rc = 0;
	ks_buf_init(&b, 0);
	switch (c->form[i]) {
	case KS_CONTEXT_FORM_DROPPED:
		rc = ks_buf_adds(&b, c->omitted_note ? c->omitted_note : "");
		break;
	case KS_CONTEXT_FORM_SHORT:
		rc = ks_buf_adds(&b, p->short_text);
		break;
	case KS_CONTEXT_FORM_FULL:
		if (p->text)
			rc = ks_buf_adds(&b, p->text);
		if (!p->entries)
			break;
		int dropped = p->nentries - c->kept[i];
		if (!rc && p->text && p->text[0])
			rc = ks_buf_adds(&b, ENTRY_SEP);
		if (!rc && dropped) {
			older_note(note, sizeof(note), dropped);
			rc = ks_buf_addf(&b, "%s%s", note, ENTRY_SEP);
		}
		for (int k = dropped; k < p->nentries && !rc; k++)
			rc = ks_buf_addf(&b, "%s%s", p->entries[k] ? p->entries[k] : "",
					 k + 1 < p->nentries ? ENTRY_SEP : "");
		break;
	}
	if (!rc)
		rc = ks_buf_add(&b, "", 0);
	if (rc) {
		ks_buf_release(&b);
		return rc;
	}
	free(c->rendered[i]);
	c->rendered[i] = ks_buf_detach(&b, NULL);
	return 0;
}

int ks_context_fit(struct ks_context *c, long budget_tokens, long reserve_tokens,
		   struct ks_error *e)
{
	for (int i = 0; i < c->n; i++) {
		c->form[i] = KS_CONTEXT_FORM_FULL;
		c->kept[i] = c->pieces[i].nentries;
	}
	long total = total_tokens(c) + reserve_tokens;
	for (int phase = 0; phase < 2; phase++) {
		while (budget_tokens > 0 && total > budget_tokens) {
			/* the lowest priority piece that can still shrink; ties: the later */
			int pick = -1;
			for (int i = 0; i < c->n; i++)
				if (piece_shrink(c, i, phase, 0) &&
				    (pick < 0 || c->pieces[i].priority <= c->pieces[pick].priority))
					pick = i;
			if (pick < 0)
				break;
			piece_shrink(c, pick, phase, 1);
			total = total_tokens(c) + reserve_tokens;
		}
	}
	if (budget_tokens > 0 && total > budget_tokens) {
		c->tokens = total;
		return ks_error_set(e, KS_ELIMIT,
				    "prompt needs about %ld tokens with every optional piece "
				    "dropped, over the %ld-token budget",
				    total, budget_tokens);
	}
	c->tokens = total;
	for (int i = 0; i < c->n; i++)
		if (piece_render(c, i))
			return ks_error_set(e, KS_ENOMEM, "context: out of memory");
	return 0;
}

const char *ks_context_text(const struct ks_context *c, int i)
{
	if (i < 0 || i >= c->n || !c->rendered || !c->rendered[i])
		return "";
	return c->rendered[i];
}

void ks_context_vars(const struct ks_context *c, struct ks_prompt_var *vars)
{
	for (int i = 0; i < c->n; i++) {
		vars[i].name = c->pieces[i].name;
		vars[i].value = ks_context_text(c, i);
	}
}
