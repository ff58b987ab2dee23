/* Prompt templates: text files in prompts/ with {{name}} placeholders. */
#include "ksearch/llm.h"
#include "util/fs.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROMPT_FILE_CAP ((size_t)256 << 10)

static int ident_start(int c)
{
	return isalpha(c) || c == '_';
}

static int ident_char(int c)
{
	return isalnum(c) || c == '_';
}

int ks_prompt_render(const char *what, const char *tmpl, const struct ks_prompt_var *vars,
		     int nvars, struct ks_buf *out, struct ks_error *e)
{
	const char *p = tmpl, *lit = tmpl;
	int line = 1;
	if (!what)
		what = "template";
	while (*p) {
		if (*p == '\n')
			line++;
		if (p[0] != '{' || p[1] != '{') {
			p++;
			continue;
		}
		const char *q = p + 2;
		while (*q == ' ')
			q++;
		if (!ident_start((unsigned char)*q)) {
			p++;
			continue;
		}
		const char *name = q;
		while (ident_char((unsigned char)*q))
			q++;
		size_t nlen = (size_t)(q - name);
		while (*q == ' ')
			q++;
		if (q[0] != '}' || q[1] != '}') {
			p++;
			continue;
		}
		const char *value = NULL;
		for (int i = 0; i < nvars; i++)
			if (vars[i].name && strlen(vars[i].name) == nlen &&
			    !strncmp(vars[i].name, name, nlen)) {
				value = vars[i].value ? vars[i].value : "";
				break;
			}
		if (!value)
			return ks_error_set(e, KS_EINVAL, "%s line %d: unknown placeholder '{{%.*s}}'",
					    what, line, (int)nlen, name);
		if (ks_buf_add(out, lit, (size_t)(p - lit)) || ks_buf_adds(out, value))
			return ks_error_set(e, KS_ELIMIT, "%s: rendered prompt larger than %zu bytes",
					    what, out->cap);
		p = q + 2;
		lit = p;
	}
	if (ks_buf_add(out, lit, (size_t)(p - lit)))
		return ks_error_set(e, KS_ELIMIT, "%s: rendered prompt larger than %zu bytes", what,
				    out->cap);
	return 0;
}

int ks_prompt_load(const char *dir, const char *name, struct ks_buf *out, struct ks_error *e)
{
	char base[PATH_MAX], path[PATH_MAX];
	if (!name || !name[0] || strchr(name, '/') || !strcmp(name, "..") || !strcmp(name, "."))
		return ks_error_set(e, KS_EINVAL, "bad prompt name '%s'", name ? name : "");
	if (!dir) {
		if (ks_path_join(base, sizeof(base), ks_data_root(), "prompts"))
			return ks_error_set(e, KS_ELIMIT, "prompt path too long");
		dir = base;
	}
	if (ks_path_join(path, sizeof(path), dir, name))
		return ks_error_set(e, KS_ELIMIT, "prompt path too long '%s/%s'", dir, name);
	ks_buf_reset(out);
	int rc = ks_file_read(path, PROMPT_FILE_CAP, out, e);
	if (rc == KS_ENOTFOUND)
		return ks_error_set(e, rc, "prompt template '%s' not found (--prompts DIR)", path);
	if (rc)
		return ks_error_wrap(e, "load prompt template");
	if (memchr(ks_buf_str(out), '\0', out->len))
		return ks_error_set(e, KS_EPARSE, "prompt template '%s' holds a NUL byte", path);
	return 0;
}

int ks_prompt_render_file(const char *dir, const char *name, const struct ks_prompt_var *vars,
			  int nvars, struct ks_buf *out, struct ks_error *e)
{
	struct ks_buf t;
	ks_buf_init(&t, PROMPT_FILE_CAP);
	int rc = ks_prompt_load(dir, name, &t, e);
	if (!rc)
		rc = ks_prompt_render(name, ks_buf_str(&t), vars, nvars, out, e);
	ks_buf_release(&t);
	return rc;
}

/* Leave out the section of placeholder name: the "## " heading line right above the line
 * holding only "{{name}}", that line, and one blank line after it.  A template shaped
 * otherwise is left as it is (the placeholder renders empty). */
static void section_drop(struct ks_buf *t, const char *name)
{
	char ph[128];
	snprintf(ph, sizeof(ph), "\n{{%s}}\n", name);
	char *s = t->data, *at = s ? strstr(s, ph) : NULL;
	if (!at || at == s)
		return;
	char *head = at; /* the start of the line above */
	while (head > s && head[-1] != '\n')
		head--;
	if (strncmp(head, "## ", 3))
		return;
	char *end = at + strlen(ph);
	if (*end == '\n')
		end++;
	memmove(head, end, strlen(end) + 1);
	t->len = strlen(s);
}

int ks_llm_prompt_build(const struct ks_llm_prompt *p, struct ks_buf *system,
			struct ks_buf *user, struct ks_context *ctx_out, struct ks_error *e)
{
	struct ks_buf sys_t, user_t;
	struct ks_context ctx;
	struct ks_prompt_var *all = NULL;
	char name[128];
	int rc;
	memset(&ctx, 0, sizeof(ctx));
	ks_buf_init(&sys_t, PROMPT_FILE_CAP);
	ks_buf_init(&user_t, PROMPT_FILE_CAP);
	if (!p->purpose || !p->purpose[0] || strlen(p->purpose) > 100)
		return ks_error_set(e, KS_EINVAL, "prompt without a purpose");
	snprintf(name, sizeof(name), "%s.txt", p->purpose);
	if ((rc = ks_prompt_load(p->dir, "system.txt", &sys_t, e)) ||
	    (rc = ks_prompt_load(p->dir, name, &user_t, e)))
		goto out;
	for (int i = 0; i < p->npieces; i++)
		if (p->pieces[i].optional_section && !(p->pieces[i].text && p->pieces[i].text[0]))
			section_drop(&user_t, p->pieces[i].name);
	if ((rc = ks_context_init(&ctx, p->pieces, p->npieces, e)))
		goto out;
	/* reserve: both templates and the fixed values (an upper bound: a value may be used
	 * more than once, counted once per use would be exact but is rarely worth it) */
	size_t fixed = sys_t.len + user_t.len;
	for (int i = 0; i < p->nvars; i++)
		fixed += p->vars[i].value ? strlen(p->vars[i].value) : 0;
	if ((rc = ks_context_fit(&ctx, p->budget_tokens, ks_context_estimate(fixed), e))) {
		ks_error_wrap(e, "prompt '%s'", name);
		goto out;
	}
	all = calloc((size_t)(p->nvars + ctx.n + 1), sizeof(*all));
	if (!all) {
		rc = ks_error_set(e, KS_ENOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < p->nvars; i++)
		all[i] = p->vars[i];
	ks_context_vars(&ctx, all + p->nvars);
	ks_buf_reset(system);
	ks_buf_reset(user);
	if ((rc = ks_prompt_render("system.txt", ks_buf_str(&sys_t), all, p->nvars + ctx.n,
				   system, e)) ||
	    (rc = ks_prompt_render(name, ks_buf_str(&user_t), all, p->nvars + ctx.n, user, e)))
		goto out;
out:
	free(all);
	ks_buf_release(&sys_t);
	ks_buf_release(&user_t);
	if (ctx_out && !rc)
		*ctx_out = ctx;
	else
		ks_context_release(&ctx);
	return rc;
}
