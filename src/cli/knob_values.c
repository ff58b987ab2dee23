/* The knob values of a kernel file given on the command line: a knob template (an @ksearch
 * block) is evaluated and exported at its knobs' defaults unless --define gives a value or
 * the file already fixes one with a '#define NAME VALUE' line (a run's best file).  Against
 * a template, --define names knobs and picks among their values: anything else would
 * evaluate or export a configuration the template does not declare. */
#include <string.h>

#include "cli/cli.h"
#include "ksearch/suggest.h"
#include "ksearch/template.h"

/* "VEC, UNROLL, ..." or "4, 8, 16" into out */
static void join(char *out, size_t n, const char *const *names, int count)
{
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < count && len < n; i++)
		len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "", names[i]);
}

/* --define's pair name=value (value NULL: none given) against the template's knobs */
static int check_define(const struct ks_template *t, const char *path, const char *name,
			const char *value, struct ks_error *e)
{
	char list[1024];
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
	if (!value)
		return ks_error_set(e, KS_EINVAL, "--define: knob '%s' needs a value: %s=V, V one of %s",
				    name, name, list);
	for (int v = 0; v < kb->nvalues; v++)
		if (!strcmp(kb->values[v], value))
			return 0;
	return ks_error_set(e, KS_EINVAL, "--define: knob '%s' of '%s' takes %s; got '%s'", name,
			    path, list, value);
}

int ks_cli_knob_values(const char *src, const char *path, const char *defines,
		       struct ks_defines *out, struct ks_error *e)
{
	ks_defines_release(out);
	int rc = ks_defines_parse(out, defines, e);
	if (rc || !strstr(src, "@ksearch"))
		return rc ? ks_error_wrap(e, "--define") : 0;
	struct ks_template *t = NULL;
	if ((rc = ks_template_parse(src, strlen(src), path, &t, e)))
		return rc;
	for (int i = 0; i < out->n && !rc; i++)
		rc = check_define(t, path, out->name[i], out->value[i], e);
	char v[8];
	for (int k = 0; k < t->nknobs && !rc; k++) {
		const struct ks_knob *kb = &t->knobs[k];
		if (ks_defines_find(out, kb->name) < 0 &&
		    !ks_defines_in_source(src, kb->name, v, sizeof(v)))
			rc = ks_defines_add(out, kb->name, kb->values[kb->def], e);
	}
	ks_template_free(t);
	return rc;
}
