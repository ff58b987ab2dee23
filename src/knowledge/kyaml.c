#include "knowledge/kyaml.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/buf.h"
#include "util/fs.h"

#define KS_KNOWLEDGE_FILE_MAX (4u << 20)

int ks_kyaml_load(const char *path, struct ks_yaml *y, struct ks_error *e)
{
	memset(y, 0, sizeof(*y));
	struct ks_buf b = KS_BUF_INIT;
	int rc = ks_file_read(path, KS_KNOWLEDGE_FILE_MAX, &b, e);
	if (rc) {
		ks_buf_release(&b);
		return rc;
	}
	struct fy_diag_cfg dcfg;
	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	dcfg.output_fn = NULL;
	struct fy_diag *diag = fy_diag_create(&dcfg);
	if (!diag) {
		ks_buf_release(&b);
		return ks_error_set(e, KS_ENOMEM, "create yaml diagnostics");
	}
	fy_diag_set_collect_errors(diag, true);
	struct fy_parse_cfg cfg = {.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG, .diag = diag};
	struct fy_document *doc = fy_document_build_from_string(&cfg, ks_buf_str(&b), b.len);
	if (!doc || !fy_document_root(doc)) {
		void *it = NULL;
		struct fy_diag_error *de = fy_diag_errors_iterate(diag, &it);
		if (de)
			rc = ks_error_set(e, KS_EPARSE, "%s:%d:%d: %s", path, de->line + 1,
					  de->column + 1, de->msg ? de->msg : "invalid yaml");
		else
			rc = ks_error_set(e, KS_EPARSE, "%s:1:1: %s", path,
					  doc ? "empty document" : "invalid yaml");
		if (doc)
			fy_document_destroy(doc);
		fy_diag_destroy(diag);
		ks_buf_release(&b);
		return rc;
	}
	fy_diag_destroy(diag);
	y->text = ks_buf_detach(&b, NULL);
	y->doc = doc;
	y->root = fy_document_root(doc);
	y->path = strdup(path);
	if (!y->path) {
		ks_kyaml_release(y);
		return ks_error_set(e, KS_ENOMEM, "load '%s'", path);
	}
	return 0;
}

void ks_kyaml_release(struct ks_yaml *y)
{
	if (y->doc)
		fy_document_destroy(y->doc);
	free(y->path);
	free(y->text);
	memset(y, 0, sizeof(*y));
}

/* libfyaml 0.7 exposes marks only on tokens: a collection is located by its first
 * scalar (the first key of a mapping, the first item of a sequence) */
void ks_kyaml_pos(struct fy_node *n, int *line, int *col)
{
	*line = *col = 0;
	for (int depth = 0; n && depth < 32; depth++) {
		if (fy_node_is_scalar(n)) {
			struct fy_token *t = fy_node_get_scalar_token(n);
			const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
			if (m) {
				*line = m->line + 1;
				*col = m->column + 1;
			}
			return;
		}
		void *it = NULL;
		if (fy_node_is_mapping(n)) {
			struct fy_node_pair *p = fy_node_mapping_iterate(n, &it);
			n = p ? fy_node_pair_key(p) : NULL;
		} else if (fy_node_is_sequence(n)) {
			n = fy_node_sequence_iterate(n, &it);
		} else {
			return;
		}
	}
}

int ks_kyaml_err(const struct ks_yaml *y, struct fy_node *n, struct ks_error *e, const char *fmt,
		...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	int line, col;
	ks_kyaml_pos(n ? n : y->root, &line, &col);
	if (line < 1)
		line = col = 1;
	return ks_error_set(e, KS_EPARSE, "%s:%d:%d: %s", y->path, line, col, msg);
}

struct fy_node *ks_kyaml_get(struct fy_node *map, const char *key)
{
	if (!map || !fy_node_is_mapping(map))
		return NULL;
	size_t kl = strlen(key);
	void *it = NULL;
	struct fy_node_pair *p;
	while ((p = fy_node_mapping_iterate(map, &it))) {
		struct fy_node *k = fy_node_pair_key(p);
		size_t len;
		const char *s = k && fy_node_is_scalar(k) ? fy_node_get_scalar(k, &len) : NULL;
		if (s && len == kl && !memcmp(s, key, kl))
			return fy_node_pair_value(p);
	}
	return NULL;
}

const char *ks_kyaml_scalar(struct fy_node *n, char *buf, size_t n_buf)
{
	if (!n || !fy_node_is_scalar(n))
		return NULL;
	size_t len;
	const char *s = fy_node_get_scalar(n, &len);
	if (!s)
		return NULL;
	if (len >= n_buf)
		len = n_buf - 1;
	memcpy(buf, s, len);
	buf[len] = 0;
	return buf;
}

char *ks_kyaml_strdup(struct fy_node *n)
{
	if (!n || !fy_node_is_scalar(n))
		return NULL;
	size_t len;
	const char *s = fy_node_get_scalar(n, &len);
	if (!s)
		return NULL;
	return strndup(s, len);
}

int ks_kyaml_number(struct fy_node *n, double *out)
{
	char buf[64], *end;
	const char *s = ks_kyaml_scalar(n, buf, sizeof(buf));
	if (!s || !*s || fy_node_get_style(n) == FYNS_SINGLE_QUOTED ||
	    fy_node_get_style(n) == FYNS_DOUBLE_QUOTED)
		return -1;
	double v = strtod(s, &end);
	if (*end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

char *ks_kyaml_key(struct fy_node_pair *p)
{
	return ks_kyaml_strdup(fy_node_pair_key(p));
}

int ks_kyaml_need(const struct ks_yaml *y, struct fy_node *map, const char *key, char kind,
		 struct fy_node **out, struct ks_error *e)
{
	struct fy_node *n = ks_kyaml_get(map, key);
	if (!n)
		return ks_kyaml_err(y, map, e, "missing required key '%s'", key);
	int okk = kind == 's' ? fy_node_is_scalar(n)
		  : kind == 'm' ? fy_node_is_mapping(n)
				: fy_node_is_sequence(n);
	if (!okk)
		return ks_kyaml_err(y, n, e, "'%s' must be a %s", key,
				   kind == 's' ? "scalar" : kind == 'm' ? "mapping" : "sequence");
	*out = n;
	return 0;
}

int ks_kyaml_only(const struct ks_yaml *y, struct fy_node *map, const char *const *allowed,
		 struct ks_error *e)
{
	void *it = NULL;
	struct fy_node_pair *p;
	while ((p = fy_node_mapping_iterate(map, &it))) {
		char kb[128];
		const char *k = ks_kyaml_scalar(fy_node_pair_key(p), kb, sizeof(kb));
		int found = 0;
		for (const char *const *a = allowed; k && *a; a++)
			if (!strcmp(*a, k))
				found = 1;
		if (!found)
			return ks_kyaml_err(y, fy_node_pair_key(p), e, "unknown key '%s'",
					   k ? k : "?");
	}
	return 0;
}
