/* YAML for human-written files (task.yaml, knowledge/, knob templates) with positions.
 *
 * The file is parsed with libfyaml's event API into a small tree whose every node knows
 * its 1-based line and column, so validation code can say "FILE:LINE:COL: expected ..."
 * about any value, or about the mapping that lacks a key.  YAML syntax errors come out in
 * the same form.  Duplicate keys are rejected; aliases are not supported. */
#ifndef KS_UTIL_YAML_H
#define KS_UTIL_YAML_H

#include <stddef.h>
#include <stdint.h>

#include "ksearch/error.h"

enum ks_yaml_kind { KS_YAML_SCALAR, KS_YAML_MAP, KS_YAML_SEQ };

struct ks_yaml_node {
	enum ks_yaml_kind kind;
	int line, col;   /* 1-based start of the node (scalars: of their text, after a quote) */
	char *str;       /* scalar text, NUL-terminated; NULL for maps and sequences */
	size_t len;      /* scalar length */
	int quoted;      /* 1: 'single', 2: "double", 3: block (| or >), 0: plain */
	int n;           /* items of a sequence, pairs of a map */
	struct ks_yaml_node **keys;  /* map: the key of pair i (always a scalar) */
	struct ks_yaml_node **items; /* sequence: item i; map: the value of pair i */
};

struct ks_yaml_doc {
	char *path;                /* as given to the loader, used in messages */
	struct ks_yaml_node *root; /* NULL for an empty document */
};

/* Parse a whole file (at most max bytes; 0 = 4 MiB).  Syntax errors, duplicate keys and
 * aliases fail with KS_EPARSE and "PATH:LINE:COL: message" in e. */
int ks_yaml_load_file(const char *path, size_t max, struct ks_yaml_doc **out,
		      struct ks_error *e);
/* Same for text in memory; name stands for the path in messages. */
int ks_yaml_load_string(const char *text, size_t len, const char *name,
			struct ks_yaml_doc **out, struct ks_error *e);
void ks_yaml_free(struct ks_yaml_doc *d);
/* Load a knowledge file of one schema: a mapping whose keys are among top (NULL-terminated)
 * and whose 'schema' is schema ("ks-spec/1"); what names it in messages ("the spec file").
 * The document in *out (the caller frees it); on an error none. */
int ks_yaml_load_schema(const char *path, const char *what, const char *schema,
			const char *const *top, struct ks_yaml_doc **out, struct ks_error *e);

/* Set e to "PATH:LINE:COL: <fmt...>" at node n (or 1:1 when n is NULL); returns code. */
int ks_yaml_error(const struct ks_yaml_doc *d, const struct ks_yaml_node *n, int code,
		  struct ks_error *e, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Same, at byte offset off inside a one-line scalar (for errors inside expressions). */
int ks_yaml_error_at(const struct ks_yaml_doc *d, const struct ks_yaml_node *n, int off,
		     int code, struct ks_error *e, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Like ks_yaml_error (code KS_EPARSE), but a mapping or sequence is pointed at by the
 * first scalar inside it (its first key or item), where a reader scanning the text finds it;
 * n NULL: the document's root. */
int ks_yaml_error_in(const struct ks_yaml_doc *d, const struct ks_yaml_node *n,
		     struct ks_error *e, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* the line and column ks_yaml_error_in uses for n (0 when n has none) */
void ks_yaml_pos(const struct ks_yaml_node *n, int *line, int *col);

/* the value stored under key in map, or NULL (also when map is not a map) */
struct ks_yaml_node *ks_yaml_get(const struct ks_yaml_node *map, const char *key);
/* "a mapping", "a sequence", "a scalar" */
const char *ks_yaml_kind_name(enum ks_yaml_kind k);
/* Fail unless n is of kind k: "expected <what>, got a sequence". */
int ks_yaml_expect(const struct ks_yaml_doc *d, const struct ks_yaml_node *n,
		   enum ks_yaml_kind k, const char *what, struct ks_error *e);
/* Check the keys of map: each one must be in allowed (NULL-terminated), every one of
 * required (NULL-terminated, may be NULL) must be present.  Messages list the allowed keys
 * and point at the unknown key, or at the mapping that lacks a required one.  where names
 * the mapping in messages ("task", "input 'x'"). */
int ks_yaml_check_keys(const struct ks_yaml_doc *d, const struct ks_yaml_node *map,
		       const char *where, const char *const *allowed,
		       const char *const *required, struct ks_error *e);
/* the value under key in map, which must be there and be of kind k: "missing required key
 * 'x'" (at the map) or "'x' must be a mapping" (at the value), code KS_EPARSE */
int ks_yaml_need(const struct ks_yaml_doc *d, const struct ks_yaml_node *map, const char *key,
		 enum ks_yaml_kind k, struct ks_yaml_node **out, struct ks_error *e);
/* scalar text of n, or NULL when n is NULL or not a scalar */
const char *ks_yaml_scalar(const struct ks_yaml_node *n);
/* a malloc'd copy of a scalar's text; NULL when n is not a scalar (or out of memory) */
char *ks_yaml_strdup(const struct ks_yaml_node *n);
/* scalar text of n; fails unless n is a non-empty scalar */
int ks_yaml_str(const struct ks_yaml_doc *d, const struct ks_yaml_node *n, const char *what,
		const char **out, struct ks_error *e);
/* a finite number written as a plain scalar (decimal, exponent, .inf/.nan are refused) */
int ks_yaml_number(const struct ks_yaml_doc *d, const struct ks_yaml_node *n,
		   const char *what, double *out, struct ks_error *e);
/* an integer in [lo, hi] */
int ks_yaml_int(const struct ks_yaml_doc *d, const struct ks_yaml_node *n, const char *what,
		int64_t lo, int64_t hi, int64_t *out, struct ks_error *e);

#endif
