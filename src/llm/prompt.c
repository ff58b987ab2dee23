/* Prompt templates: text files in prompts/ with {{name}} placeholders. */
#include "ksearch/llm.h"
#include "util/fs.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
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
