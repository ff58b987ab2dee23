/* Concept maps (knowledge/translate/cuda-to-TARGET.yaml): loading and validation. */
#include "knowledge/conceptmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knowledge/kyaml.h"
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

static int opt_str(const struct ks_yaml *y, struct fy_node *map, const char *key, char **out,
		   struct ks_error *e)
{
	struct fy_node *n = ks_kyaml_get(map, key);
	*out = NULL;
	if (!n)
		return 0;
	if (!(*out = ks_kyaml_strdup(n)))
		return ks_kyaml_err(y, n, e, "'%s' must be text", key);
	return 0;
}

static int load_concept(const struct ks_yaml *y, struct fy_node *cn, struct ks_cmap *m,
			struct ks_cmap_concept *c, struct ks_error *e)
{
	static const char *const keys[] = {"id", "title", "detect", "equivalent", "constraints",
					   "notes", "feature", "missing", "severity", NULL};
	int rc;
	struct fy_node *n;
	if (!fy_node_is_mapping(cn))
		return ks_kyaml_err(y, cn, e, "a concept must be a mapping");
	if ((rc = ks_kyaml_only(y, cn, keys, e)))
		return rc;
	const char *req[] = {"id", "title", "equivalent"};
	char **dst[] = {&c->id, &c->title, &c->equivalent};
	for (int i = 0; i < 3; i++) {
		if ((rc = ks_kyaml_need(y, cn, req[i], 's', &n, e)))
			return rc;
		*dst[i] = ks_kyaml_strdup(n);
		if (!*dst[i] || !**dst[i])
			return ks_kyaml_err(y, n, e, "'%s' must not be empty", req[i]);
	}
	for (int i = 0; i < m->n; i++)
		if (m->c[i].id && &m->c[i] != c && !strcmp(m->c[i].id, c->id))
			return ks_kyaml_err(y, ks_kyaml_get(cn, "id"), e, "duplicate concept id '%s'",
					   c->id);
	if ((rc = opt_str(y, cn, "notes", &c->notes, e)) ||
	    (rc = opt_str(y, cn, "feature", &c->feature, e)))
		return rc;
	if (c->feature) {
		int known = 0;
		for (const char *const *f = ks_spec_feature_names; *f; f++)
			known |= !strcmp(*f, c->feature);
		if (!known)
			return ks_kyaml_err(y, ks_kyaml_get(cn, "feature"), e,
					   "unknown feature '%s' (see docs/knowledge.md)", c->feature);
	}
	char buf[32];
	if ((n = ks_kyaml_get(cn, "missing"))) {
		const char *s = ks_kyaml_scalar(n, buf, sizeof(buf));
		if (!s || (strcmp(s, "true") && strcmp(s, "false")))
			return ks_kyaml_err(y, n, e, "'missing' must be true or false");
		c->missing = !strcmp(s, "true");
	}
	c->severity = KS_SEV_ERROR;
	if ((n = ks_kyaml_get(cn, "severity"))) {
		const char *s = ks_kyaml_scalar(n, buf, sizeof(buf));
		if (s && !strcmp(s, "error"))
			c->severity = KS_SEV_ERROR;
		else if (s && !strcmp(s, "warn"))
			c->severity = KS_SEV_WARN;
		else if (s && !strcmp(s, "info"))
			c->severity = KS_SEV_INFO;
		else
			return ks_kyaml_err(y, n, e, "'severity' must be error, warn or info");
	}
	if ((rc = ks_kyaml_need(y, cn, "detect", 'q', &n, e)))
		return rc;
	int nre = fy_node_sequence_item_count(n);
	if (nre < 1)
		return ks_kyaml_err(y, n, e, "'detect' needs at least one regular expression");
	c->re = calloc((size_t)nre, sizeof(regex_t));
	c->re_src = calloc((size_t)nre, sizeof(char *));
	if (!c->re || !c->re_src)
		return ks_error_set(e, KS_ENOMEM, "load '%s'", y->path);
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(n, &it))) {
		char *src = ks_kyaml_strdup(item);
		if (!src || !*src) {
			free(src);
			return ks_kyaml_err(y, item, e, "detect entries must be non-empty text");
		}
		int rr = regcomp(&c->re[c->nre], src, REG_EXTENDED | REG_NEWLINE);
		if (rr) {
			char msg[128];
			regerror(rr, &c->re[c->nre], msg, sizeof(msg));
			free(src);
			return ks_kyaml_err(y, item, e, "invalid regular expression: %s", msg);
		}
		c->re_src[c->nre++] = src;
	}
	if ((n = ks_kyaml_get(cn, "constraints"))) {
		if (!fy_node_is_sequence(n))
			return ks_kyaml_err(y, n, e, "'constraints' must be a list of {text, check}");
		int nc = fy_node_sequence_item_count(n);
		c->cons = calloc((size_t)nc + 1, sizeof(*c->cons));
		if (!c->cons)
			return ks_error_set(e, KS_ENOMEM, "load '%s'", y->path);
		it = NULL;
		while ((item = fy_node_sequence_iterate(n, &it))) {
			static const char *const ck[] = {"text", "check", NULL};
			struct fy_node *t;
			if (!fy_node_is_mapping(item))
				return ks_kyaml_err(y, item, e, "a constraint is {text, check}");
			if ((rc = ks_kyaml_only(y, item, ck, e)) ||
			    (rc = ks_kyaml_need(y, item, "text", 's', &t, e)))
				return rc;
			struct ks_cmap_constraint *k = &c->cons[c->ncons++];
			k->text = ks_kyaml_strdup(t);
			if ((rc = opt_str(y, item, "check", &k->check, e)))
				return rc;
			if (k->check) {
				int known = 0;
				for (const char *const *ch = checks; *ch; ch++)
					known |= !strcmp(*ch, k->check);
				if (!known)
					return ks_kyaml_err(y, ks_kyaml_get(item, "check"), e,
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
	struct ks_yaml y;
	int rc = ks_kyaml_load(path, &y, e);
	if (rc)
		return rc;
	struct fy_node *root = y.root, *n;
	static const char *const top[] = {"schema", "source", "target", "default_source_spec",
					  "default_target_spec", "summary", "concepts", NULL};
	char buf[64];
	if (!fy_node_is_mapping(root)) {
		rc = ks_kyaml_err(&y, root, e, "a concept map must be a mapping");
		goto out;
	}
	if ((rc = ks_kyaml_only(&y, root, top, e)) ||
	    (rc = ks_kyaml_need(&y, root, "schema", 's', &n, e)))
		goto out;
	if (strcmp(ks_kyaml_scalar(n, buf, sizeof(buf)), "ks-conceptmap/1")) {
		rc = ks_kyaml_err(&y, n, e, "'schema' must be ks-conceptmap/1");
		goto out;
	}
	if ((rc = ks_kyaml_need(&y, root, "source", 's', &n, e)))
		goto out;
	if (strcmp(ks_kyaml_scalar(n, buf, sizeof(buf)), "cuda")) {
		rc = ks_kyaml_err(&y, n, e, "'source' must be cuda");
		goto out;
	}
	if ((rc = ks_kyaml_need(&y, root, "target", 's', &n, e)))
		goto out;
	m->target = ks_kyaml_strdup(n);
	if (!ks_target_canonical(m->target) || strcmp(ks_target_canonical(m->target), m->target)) {
		rc = ks_kyaml_err(&y, n, e, "'target' must be metal, cpu or opencl");
		goto out;
	}
	if ((rc = opt_str(&y, root, "summary", &m->summary, e)) ||
	    (rc = opt_str(&y, root, "default_source_spec", &m->default_source_spec, e)) ||
	    (rc = opt_str(&y, root, "default_target_spec", &m->default_target_spec, e)))
		goto out;
	const char *specs[] = {m->default_source_spec, m->default_target_spec};
	const char *skeys[] = {"default_source_spec", "default_target_spec"};
	for (int i = 0; i < 2; i++) {
		char sp[4096];
		if (!specs[i])
			continue;
		snprintf(sp, sizeof(sp), "%s/knowledge/specs/%s.yaml", ks_data_root(), specs[i]);
		if (!ks_path_exists(sp)) {
			rc = ks_kyaml_err(&y, ks_kyaml_get(root, skeys[i]), e, "unknown spec '%s'",
					 specs[i]);
			goto out;
		}
	}
	if ((rc = ks_kyaml_need(&y, root, "concepts", 'q', &n, e)))
		goto out;
	int nc = fy_node_sequence_item_count(n);
	m->c = calloc((size_t)nc + 1, sizeof(*m->c));
	if (!m->c) {
		rc = ks_error_set(e, KS_ENOMEM, "load '%s'", path);
		goto out;
	}
	void *it = NULL;
	struct fy_node *cn;
	while ((cn = fy_node_sequence_iterate(n, &it))) {
		m->n++;
		if ((rc = load_concept(&y, cn, m, &m->c[m->n - 1], e)))
			goto out;
	}
out:
	ks_kyaml_release(&y);
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
