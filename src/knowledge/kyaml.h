/* Internal helpers over libfyaml for the knowledge files: loading with FILE:LINE:COL
 * errors, typed lookups that report where a value is wrong. */
#ifndef KS_KNOWLEDGE_KYAML_H
#define KS_KNOWLEDGE_KYAML_H

#include <libfyaml.h>

#include "ksearch/error.h"

struct ks_yaml {
	struct fy_document *doc;
	struct fy_node *root;
	char *path;
	char *text; /* the file contents: libfyaml points into it, so it lives as long */
};

/* parse path; a syntax error becomes "PATH:LINE:COL: MESSAGE" (KS_EPARSE) */
int ks_kyaml_load(const char *path, struct ks_yaml *y, struct ks_error *e);
void ks_kyaml_release(struct ks_yaml *y);
/* 1-based line/column of a node (0 when unknown) */
void ks_kyaml_pos(struct fy_node *n, int *line, int *col);
/* "PATH:LINE:COL: " + message, code KS_EPARSE */
int ks_kyaml_err(const struct ks_yaml *y, struct fy_node *n, struct ks_error *e, const char *fmt,
		...) __attribute__((format(printf, 4, 5)));
/* mapping value by key or NULL */
struct fy_node *ks_kyaml_get(struct fy_node *map, const char *key);
/* NUL-terminated scalar text (copied into buf, truncated to n) or NULL if not a scalar */
const char *ks_kyaml_scalar(struct fy_node *n, char *buf, size_t n_buf);
/* malloc'd copy of a scalar, NULL if not a scalar */
char *ks_kyaml_strdup(struct fy_node *n);
/* scalar parsed as a number; -1 when not a number */
int ks_kyaml_number(struct fy_node *n, double *out);
/* key of a mapping pair as a malloc'd string */
char *ks_kyaml_key(struct fy_node_pair *p);
/* a required mapping entry of a given kind: 's' scalar, 'm' mapping, 'q' sequence */
int ks_kyaml_need(const struct ks_yaml *y, struct fy_node *map, const char *key, char kind,
		 struct fy_node **out, struct ks_error *e);
/* reject keys outside allowed (NULL-terminated) */
int ks_kyaml_only(const struct ks_yaml *y, struct fy_node *map, const char *const *allowed,
		 struct ks_error *e);

#endif
