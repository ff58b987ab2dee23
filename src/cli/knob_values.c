/* The knob values of a kernel file given on the command line: a knob template (an @ksearch
 * block) is evaluated and exported at its knobs' defaults unless --define gives a value or
 * the file already fixes one with a '#define NAME VALUE' line (a run's best file). */
#include <string.h>

#include "cli/cli.h"
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
	for (int k = 0; k < t->nknobs && !rc; k++) {
		const struct ks_knob *kb = &t->knobs[k];
		if (!listed(defines, kb->name) && !has_define(src, kb->name))
			rc = ks_buf_addf(out, "%s%s=%s", out->len ? "," : "", kb->name,
					 kb->values[kb->def]);
	}
	ks_template_free(t);
	return rc ? ks_error_set(e, KS_ENOMEM, "out of memory") : 0;
}
