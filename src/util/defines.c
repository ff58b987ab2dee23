#include "util/defines.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ks_defines_init(struct ks_defines *d)
{
	memset(d, 0, sizeof(*d));
}

void ks_defines_release(struct ks_defines *d)
{
	for (int i = 0; i < d->n; i++)
		free((char *)d->name[i]); /* the pair's one allocation */
	ks_defines_init(d);
}

static int is_ident(const char *s, size_t n)
{
	if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return 0;
	return 1;
}

/* name[0..nl) and value[0..vl) (value NULL: bare) as one allocation: "NAME\0VALUE\0NAME=VALUE" */
static int add_n(struct ks_defines *d, const char *name, size_t nl, const char *value, size_t vl,
		 struct ks_error *e)
{
	if (!is_ident(name, nl))
		return ks_error_set(e, KS_EINVAL, "'%.*s%s%.*s': a define's name is a C identifier",
				    (int)nl, name, value ? "=" : "", (int)(value ? vl : 0),
				    value ? value : "");
	if (d->n == KS_DEFINES_MAX)
		return ks_error_set(e, KS_ELIMIT, "more than %d defines", KS_DEFINES_MAX);
	char *m = malloc(2 * nl + 2 * vl + 3);
	if (!m)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	char *v = m + nl + 1, *pair = v + (value ? vl + 1 : 0);
	memcpy(m, name, nl);
	m[nl] = '\0';
	memcpy(pair, name, nl);
	if (value) {
		memcpy(v, value, vl);
		v[vl] = '\0';
		pair[nl] = '=';
		memcpy(pair + nl + 1, value, vl);
		pair[nl + 1 + vl] = '\0';
	} else {
		pair[nl] = '\0';
	}
	d->name[d->n] = m;
	d->value[d->n] = value ? v : NULL;
	d->list[d->n++] = pair;
	d->list[d->n] = NULL;
	return 0;
}

int ks_defines_add(struct ks_defines *d, const char *name, const char *value,
		   struct ks_error *e)
{
	return add_n(d, name, strlen(name), value, value ? strlen(value) : 0, e);
}

int ks_defines_parse(struct ks_defines *d, const char *text, struct ks_error *e)
{
	static const char sep[] = " ,\t\n";
	for (const char *p = text ? text + strspn(text, sep) : ""; *p; p += strspn(p, sep)) {
		size_t len = strcspn(p, sep);
		const char *w = p, *eq;
		p += len;
		if (len > 2 && !strncmp(w, "-D", 2))
			w += 2, len -= 2;
		eq = memchr(w, '=', len);
		int rc = eq ? add_n(d, w, (size_t)(eq - w), eq + 1, len - (size_t)(eq - w) - 1, e)
			    : add_n(d, w, len, NULL, 0, e);
		if (rc)
			return rc;
	}
	return 0;
}

int ks_defines_find(const struct ks_defines *d, const char *name)
{
	for (int i = 0; i < d->n; i++)
		if (!strcmp(d->name[i], name))
			return i;
	return -1;
}

int ks_defines_bake(const char *text, struct ks_buf *out, struct ks_error *e)
{
	struct ks_defines d;
	ks_defines_init(&d);
	int rc = ks_defines_parse(&d, text, e);
	for (int i = 0; i < d.n && !rc; i++)
		rc = ks_buf_addf(out, "#define %s%s%s\n", d.name[i], d.value[i] ? " " : "",
				 d.value[i] ? d.value[i] : "");
	ks_defines_release(&d);
	return rc;
}

const char *ks_defines_in_source(const char *src, const char *name, char *out, size_t n)
{
	size_t len = strlen(name);
	for (const char *p = src; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "#define ", 8) || strncmp(p + 8, name, len) ||
		    (p[8 + len] != ' ' && p[8 + len] != '\t'))
			continue;
		const char *v = p + 8 + len + strspn(p + 8 + len, " \t");
		snprintf(out, n, "%.*s", (int)strcspn(v, " \t\r\n"), v);
		return out;
	}
	return NULL;
}
