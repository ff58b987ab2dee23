/* Concept maps (knowledge/translate/cuda-to-TARGET.yaml): loading and validation. */
#include "knowledge/conceptmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/yaml.h"
#include "knowledge/spec_schema.h"
#include "util/fs.h"

static const char *const checks[] = {"smem_static", "smem_dynamic", "threads_per_group",
				     "warp_size", "fp64", "feature", NULL};

const char *ks_target_canonical(const char *target)
{
	if (!target)
		return NULL;
	if (!strcmp(target, "metal") || !strcmp(target, "mlx"))
		return "metal";
	if (!strcmp(target, "cpu"))
		return "cpu";
	if (!strcmp(target, "opencl"))
		return "opencl";
	return NULL;
}

void ks_cmap_release(struct ks_cmap *m)
{
	for (int i = 0; i < m->n; i++) {
		struct ks_cmap_concept *c = &m->c[i];
		free(c->id);
		free(c->title);
		free(c->equivalent);
		free(c->notes);
		free(c->feature);
		for (int k = 0; k < c->nre; k++) {
			regfree(&c->re[k]);
			free(c->re_src[k]);
		}
		free(c->re);
		free(c->re_src);
		for (int k = 0; k < c->ncons; k++) {
			free(c->cons[k].text);
			free(c->cons[k].check);
		}
		free(c->cons);
	}
	free(m->c);
	free(m->target);
	free(m->summary);
	free(m->default_source_spec);
	free(m->default_target_spec);
	memset(m, 0, sizeof(*m));
}

static int opt_str(const struct ks_yaml_doc *y, struct ks_yaml_node *map, const char *key, char **out,
		   struct ks_error *e)
{
	struct ks_yaml_node *n = ks_yaml_get(map, key);
	*out = NULL;
	if (!n)
		return 0;
	if (!(*out = ks_yaml_strdup(n)))
		return ks_yaml_error_in(y, n, e, "'%s' must be text", key);
	return 0;
}

static int load_concept(const struct ks_yaml_doc *y, struct ks_yaml_node *cn, struct ks_cmap *m,
			struct ks_cmap_concept *c, struct ks_error *e)
{
	static const char *const keys[] = {"id", "title", "detect", "equivalent", "constraints",
					   "notes", "feature", "missing", "severity", NULL};
	int rc;
	struct ks_yaml_node *n;
	if (!(cn && cn->kind == KS_YAML_MAP))
		return ks_yaml_error_in(y, cn, e, "a concept must be a mapping");
	if ((rc = ks_yaml_check_keys(y, cn, "a concept", keys, NULL, e)))
		return rc;
	const char *req[] = {"id", "title", "equivalent"};
	char **dst[] = {&c->id, &c->title, &c->equivalent};
	for (int i = 0; i < 3; i++) {
		if ((rc = ks_yaml_need(y, cn, req[i], KS_YAML_SCALAR, &n, e)))
			return rc;
		*dst[i] = ks_yaml_strdup(n);
		if (!*dst[i] || !**dst[i])
			return ks_yaml_error_in(y, n, e, "'%s' must not be empty", req[i]);
	}
	for (int i = 0; i < m->n; i++)
		if (m->c[i].id && &m->c[i] != c && !strcmp(m->c[i].id, c->id))
			return ks_yaml_error_in(y, ks_yaml_get(cn, "id"), e, "duplicate concept id '%s'",
					   c->id);
	if ((rc = opt_str(y, cn, "notes", &c->notes, e)) ||
	    (rc = opt_str(y, cn, "feature", &c->feature, e)))
		return rc;
	if (c->feature) {
		int known = 0;
		for (const char *const *f = ks_spec_feature_names; *f; f++)
			known |= !strcmp(*f, c->feature);
		if (!known)
			return ks_yaml_error_in(y, ks_yaml_get(cn, "feature"), e,
					   "unknown feature '%s' (see docs/knowledge.md)", c->feature);
	}
	if ((n = ks_yaml_get(cn, "missing"))) {
		const char *s = ks_yaml_scalar(n);
		if (!s || (strcmp(s, "true") && strcmp(s, "false")))
			return ks_yaml_error_in(y, n, e, "'missing' must be true or false");
		c->missing = !strcmp(s, "true");
	}
	c->severity = KS_SEV_ERROR;
	if ((n = ks_yaml_get(cn, "severity"))) {
		const char *s = ks_yaml_scalar(n);
		if (s && !strcmp(s, "error"))
			c->severity = KS_SEV_ERROR;
		else if (s && !strcmp(s, "warn"))
			c->severity = KS_SEV_WARN;
		else if (s && !strcmp(s, "info"))
			c->severity = KS_SEV_INFO;
		else
			return ks_yaml_error_in(y, n, e, "'severity' must be error, warn or info");
	}
	if ((rc = ks_yaml_need(y, cn, "detect", KS_YAML_SEQ, &n, e)))
		return rc;
	int nre = n->n;
	if (nre < 1)
		return ks_yaml_error_in(y, n, e, "'detect' needs at least one regular expression");
	c->re = calloc((size_t)nre, sizeof(regex_t));
	c->re_src = calloc((size_t)nre, sizeof(char *));
	if (!c->re || !c->re_src)
		return ks_error_set(e, KS_ENOMEM, "load '%s'", y->path);
	for (int i = 0; i < n->n; i++) {
		struct ks_yaml_node *item = n->items[i];
		char *src = ks_yaml_strdup(item);
		if (!src || !*src) {
			free(src);
			return ks_yaml_error_in(y, item, e, "detect entries must be non-empty text");
		}
		int rr = regcomp(&c->re[c->nre], src, REG_EXTENDED | REG_NEWLINE);
		if (rr) {
			char msg[128];
			regerror(rr, &c->re[c->nre], msg, sizeof(msg));
			free(src);
			return ks_yaml_error_in(y, item, e, "invalid regular expression: %s", msg);
		}
		c->re_src[c->nre++] = src;
	}
	if ((n = ks_yaml_get(cn, "constraints"))) {
		if (!(n && n->kind == KS_YAML_SEQ))
			return ks_yaml_error_in(y, n, e, "'constraints' must be a list of {text, check}");
		int nc = n->n;
		c->cons = calloc((size_t)nc + 1, sizeof(*c->cons));
		if (!c->cons)
			return ks_error_set(e, KS_ENOMEM, "load '%s'", y->path);
		for (int i = 0; i < n->n; i++) {
			struct ks_yaml_node *item = n->items[i];
			static const char *const ck[] = {"text", "check", NULL};
			struct ks_yaml_node *t;
			if (!(item && item->kind == KS_YAML_MAP))
				return ks_yaml_error_in(y, item, e, "a constraint is {text, check}");
			if ((rc = ks_yaml_check_keys(y, item, "a constraint", ck, NULL, e)) ||
			    (rc = ks_yaml_need(y, item, "text", KS_YAML_SCALAR, &t, e)))
				return rc;
			struct ks_cmap_constraint *k = &c->cons[c->ncons++];
			k->text = ks_yaml_strdup(t);
			if ((rc = opt_str(y, item, "check", &k->check, e)))
				return rc;
			if (k->check) {
				int known = 0;
				for (const char *const *ch = checks; *ch; ch++)
					known |= !strcmp(*ch, k->check);
				if (!known)
					return ks_yaml_error_in(y, ks_yaml_get(item, "check"), e,
							   "unknown check '%s' (smem_static, "
							   "smem_dynamic, threads_per_group, warp_size, "
							   "fp64, feature)",
							   k->check);
			}
		}
	}
	return 0;
}

int ks_cmap_load(const char *target_or_path, struct ks_cmap *m, struct ks_error *e)
{
	memset(m, 0, sizeof(*m));
	char path[4096];
	const char *canon = ks_target_canonical(target_or_path);
	if (canon)
		snprintf(path, sizeof(path), "%s/knowledge/translate/cuda-to-%s.yaml",
			 ks_data_root(), canon);
	else if (strchr(target_or_path, '/'))
		snprintf(path, sizeof(path), "%s", target_or_path);
	else
		return ks_error_set(e, KS_EINVAL, "unknown target '%s' (metal, cpu, opencl)",
				    target_or_path);
	static const char *const top[] = {"schema", "source", "target", "default_source_spec",
					  "default_target_spec", "summary", "concepts", NULL};
	struct ks_yaml_doc *y = NULL;
	int rc = ks_yaml_load_schema(path, "the concept map", "ks-conceptmap/1", top, &y, e);
	if (rc)
		return rc;
	struct ks_yaml_node *root = y->root, *n;
	if ((rc = ks_yaml_need(y, root, "source", KS_YAML_SCALAR, &n, e)))
		goto out;
	if (strcmp(ks_yaml_scalar(n), "cuda")) {
		rc = ks_yaml_error_in(y, n, e, "'source' must be cuda");
		goto out;
	}
	if ((rc = ks_yaml_need(y, root, "target", KS_YAML_SCALAR, &n, e)))
		goto out;
	m->target = ks_yaml_strdup(n);
	if (!ks_target_canonical(m->target) || strcmp(ks_target_canonical(m->target), m->target)) {
		rc = ks_yaml_error_in(y, n, e, "'target' must be metal, cpu or opencl");
		goto out;
	}
	if ((rc = opt_str(y, root, "summary", &m->summary, e)) ||
	    (rc = opt_str(y, root, "default_source_spec", &m->default_source_spec, e)) ||
	    (rc = opt_str(y, root, "default_target_spec", &m->default_target_spec, e)))
		goto out;
	const char *specs[] = {m->default_source_spec, m->default_target_spec};
	const char *skeys[] = {"default_source_spec", "default_target_spec"};
	for (int i = 0; i < 2; i++) {
		char sp[4096];
		if (!specs[i])
			continue;
		snprintf(sp, sizeof(sp), "%s/knowledge/specs/%s.yaml", ks_data_root(), specs[i]);
		if (!ks_path_exists(sp)) {
			rc = ks_yaml_error_in(y, ks_yaml_get(root, skeys[i]), e, "unknown spec '%s'",
					 specs[i]);
			goto out;
		}
	}
	if ((rc = ks_yaml_need(y, root, "concepts", KS_YAML_SEQ, &n, e)))
		goto out;
	int nc = n->n;
	m->c = calloc((size_t)nc + 1, sizeof(*m->c));
	if (!m->c) {
		rc = ks_error_set(e, KS_ENOMEM, "load '%s'", path);
		goto out;
	}
	for (int i = 0; i < n->n; i++) {
		struct ks_yaml_node *cn = n->items[i];
		m->n++;
		if ((rc = load_concept(y, cn, m, &m->c[m->n - 1], e)))
			goto out;
	}
out:
	ks_yaml_free(y);
	if (rc)
		ks_cmap_release(m);
	return rc;
}

int ks_conceptmap_validate_file(const char *path, struct ks_error *e)
{
	struct ks_cmap m;
	int rc = ks_cmap_load(path, &m, e);
	if (!rc)
		ks_cmap_release(&m);
	return rc;
}

int ks_conceptmap_text(const char *target, struct ks_buf *out, struct ks_error *e)
{
	struct ks_cmap m;
	int rc = ks_cmap_load(target, &m, e);
	if (rc)
		return rc;
	ks_buf_addf(out, "CUDA -> %s concept map%s%s\n", m.target, m.summary ? ": " : "",
		    m.summary ? m.summary : "");
	for (int i = 0; i < m.n; i++) {
		const struct ks_cmap_concept *c = &m.c[i];
		ks_buf_addf(out, "- %s: %s%s\n", c->title, c->missing ? "NO EQUIVALENT; " : "",
			    c->equivalent);
		for (int k = 0; k < c->ncons; k++)
			ks_buf_addf(out, "  constraint: %s\n", c->cons[k].text);
		if (c->notes)
			ks_buf_addf(out, "  note: %s\n", c->notes);
	}
	ks_cmap_release(&m);
	return 0;
}

int ks_cmap_has_check(const struct ks_cmap_concept *c, const char *check)
{
	for (int k = 0; k < c->ncons; k++)
		if (c->cons[k].check && !strcmp(c->cons[k].check, check))
			return 1;
	return 0;
}
