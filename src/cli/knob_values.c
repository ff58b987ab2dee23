/* The knob values of a kernel file given on the command line: a knob template (an @ksearch
 * block) is evaluated and exported at its knobs' defaults unless --define gives a value or
 * the file already fixes one with a '#define NAME VALUE' line (a run's best file).  Against
 * a template, --define names knobs and picks among their values: anything else would
 * evaluate or export a configuration the template does not declare. */
#include <string.h>

#include "cli/cli.h"
#include "ksearch/suggest.h"
#include "ksearch/template.h"

/* whether src has a line '#define NAME ...' */
static int has_define(const char *src, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = src; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, "#define ", 8) && !strncmp(p + 8, name, len) &&
		    (p[8 + len] == ' ' || p[8 + len] == '\t'))
			return 1;
	return 0;
}

/* whether the list "A=1,B=2" names name */
static int listed(const char *defines, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = defines; p && *p;) {
		size_t tl = strcspn(p, ", ");
		if (tl >= len && !strncmp(p, name, len) && (tl == len || p[len] == '='))
			return 1;
		p += tl;
		p += strspn(p, ", ");
	}
	return 0;
}

/* "VEC, UNROLL, ..." or "4, 8, 16" into out */
static void join(char *out, size_t n, const char *const *names, int count)
{
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < count && len < n; i++)
		len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "", names[i]);
}

/* the define "NAME=VALUE" (tl bytes at p) against the template's knobs */
static int check_define(const struct ks_template *t, const char *path, const char *p,
			size_t tl, struct ks_error *e)
{
	char name[128], list[1024];
	const char *eq = memchr(p, '=', tl);
	size_t nl = eq ? (size_t)(eq - p) : tl;
	snprintf(name, sizeof(name), "%.*s", (int)(nl < sizeof(name) ? nl : sizeof(name) - 1), p);
	int k = ks_template_knob(t, name);
	if (k < 0) {
		const char *names[KS_TEMPLATE_MAX_KNOBS];
		for (int i = 0; i < t->nknobs; i++)
			names[i] = t->knobs[i].name;
		const char *near = ks_suggest(name, names, t->nknobs);
		join(list, sizeof(list), names, t->nknobs);
		return ks_error_set(e, KS_EINVAL, "--define: '%s' has no knob '%s' (its knobs: %s)%s%s%s",
				    path, name, list, near ? "; did you mean '" : "", near ? near : "",
				    near ? "'?" : "");
	}
	const struct ks_knob *kb = &t->knobs[k];
	join(list, sizeof(list), (const char *const *)kb->values, kb->nvalues);
	if (!eq)
		return ks_error_set(e, KS_EINVAL, "--define: knob '%s' needs a value: %s=V, V one of %s",
				    name, name, list);
	size_t vl = tl - nl - 1;
	for (int v = 0; v < kb->nvalues; v++)
		if (strlen(kb->values[v]) == vl && !strncmp(kb->values[v], eq + 1, vl))
			return 0;
	return ks_error_set(e, KS_EINVAL, "--define: knob '%s' of '%s' takes %s; got '%.*s'", name,
			    path, list, (int)vl, eq + 1);
}

int ks_cli_knob_values(const char *src, const char *path, const char *defines,
		       struct ks_buf *out, struct ks_error *e)
{
	ks_buf_reset(out);
	if (defines && ks_buf_adds(out, defines))
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	if (!strstr(src, "@ksearch"))
		return 0;
	struct ks_template *t = NULL;
	int rc = ks_template_parse(src, strlen(src), path, &t, e);
	if (rc)
		return rc;
	for (const char *p = defines; p && *p && !rc;) {
		size_t tl = strcspn(p, ", ");
		rc = check_define(t, path, p, tl, e);
		p += tl;
		p += strspn(p, ", ");
	}
	for (int k = 0; k < t->nknobs && !rc; k++) {
		const struct ks_knob *kb = &t->knobs[k];
		if (!listed(defines, kb->name) && !has_define(src, kb->name) &&
		    ks_buf_addf(out, "%s%s=%s", out->len ? "," : "", kb->name, kb->values[kb->def]))
			rc = ks_error_set(e, KS_ENOMEM, "out of memory");
	}
	ks_template_free(t);
	return rc;
}
