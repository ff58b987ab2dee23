/* YAML loading with positions on top of libfyaml's event API (see yaml.h). */
#include "util/yaml.h"

#include <ctype.h>
#include <errno.h>
#include <libfyaml.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/buf.h"
#include "util/fs.h"
#include "util/utf8.h"

#define YAML_MAX_DEPTH 64
#define YAML_MAX_NODES 1000000
#define YAML_DEFAULT_MAX ((size_t)4 << 20)

struct builder {
	struct fy_parser *fyp;
	struct fy_diag *diag;
	const char *path;
	size_t nodes;
	struct ks_error *e;
};

static void node_free(struct ks_yaml_node *n)
{
	if (!n)
		return;
	for (int i = 0; i < n->n; i++) {
		if (n->keys)
			node_free(n->keys[i]);
		if (n->items)
			node_free(n->items[i]);
	}
	free(n->keys);
	free(n->items);
	free(n->str);
	free(n);
}

void ks_yaml_free(struct ks_yaml_doc *d)
{
	if (!d)
		return;
	node_free(d->root);
	free(d->path);
	free(d);
}

static int pos_error(struct builder *b, int line, int col, int code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int pos_error(struct builder *b, int line, int col, int code, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ks_error_set(b->e, code, "%s:%d:%d: %s", b->path, line, col, msg);
}

/* the first error libfyaml collected, as PATH:LINE:COL */
static int syntax_error(struct builder *b)
{
	void *it = NULL;
	struct fy_diag_error *de = b->diag ? fy_diag_errors_iterate(b->diag, &it) : NULL;
	if (!de)
		return pos_error(b, 1, 1, KS_EPARSE, "invalid YAML");
	const char *m = de->msg ? de->msg : "invalid YAML";
	char low[512];
	snprintf(low, sizeof(low), "%s", m);
	if (low[0] && isupper((unsigned char)low[0]) && !isupper((unsigned char)low[1]))
		low[0] = (char)tolower((unsigned char)low[0]);
	/* libfyaml reports these 1-based already */
	return pos_error(b, de->line, de->column, KS_EPARSE, "invalid YAML: %s", low);
}

static struct fy_event *next_event(struct builder *b, int *rc)
{
	struct fy_event *ev = fy_parser_parse(b->fyp);
	if (!ev) {
		*rc = fy_parser_get_stream_error(b->fyp)
			      ? syntax_error(b)
			      : pos_error(b, 1, 1, KS_EPARSE, "unexpected end of YAML");
	}
	return ev;
}

static struct ks_yaml_node *new_node(struct builder *b, enum ks_yaml_kind k,
				     struct fy_event *ev, int *rc)
{
	if (++b->nodes > YAML_MAX_NODES) {
		*rc = ks_error_set(b->e, KS_ELIMIT, "'%s': more than %d YAML nodes", b->path,
				   YAML_MAX_NODES);
		return NULL;
	}
	struct ks_yaml_node *n = calloc(1, sizeof(*n));
	if (!n) {
		*rc = ks_error_set(b->e, KS_ENOMEM, "out of memory reading '%s'", b->path);
		return NULL;
	}
	const struct fy_mark *m = fy_event_start_mark(ev);
	n->kind = k;
	/* an implicit null has no mark: 0 here, the caller gives it its key's position */
	n->line = m ? m->line + 1 : 0;
	n->col = m ? m->column + 1 : 0;
	return n;
}

static int push(struct builder *b, struct ks_yaml_node *parent, struct ks_yaml_node *key,
		struct ks_yaml_node *item)
{
	struct ks_yaml_node **items = realloc(parent->items, (size_t)(parent->n + 1) * sizeof(*items));
	if (!items)
		return ks_error_set(b->e, KS_ENOMEM, "out of memory reading '%s'", b->path);
	parent->items = items;
	if (parent->kind == KS_YAML_MAP) {
		struct ks_yaml_node **keys =
			realloc(parent->keys, (size_t)(parent->n + 1) * sizeof(*keys));
		if (!keys)
			return ks_error_set(b->e, KS_ENOMEM, "out of memory reading '%s'", b->path);
		parent->keys = keys;
		keys[parent->n] = key;
	}
	items[parent->n++] = item;
	return 0;
}

/* build the node that starts with ev (consumed) */
static int build(struct builder *b, struct fy_event *ev, int depth, struct ks_yaml_node **out)
{
	int rc = 0;
	struct ks_yaml_node *n = NULL;
	*out = NULL;
	if (depth > YAML_MAX_DEPTH) {
		const struct fy_mark *m = fy_event_start_mark(ev);
		rc = pos_error(b, m ? m->line + 1 : 1, m ? m->column + 1 : 1, KS_ELIMIT,
			       "nesting deeper than %d levels", YAML_MAX_DEPTH);
		goto out;
	}
	switch (ev->type) {
	case FYET_SCALAR: {
		if (!(n = new_node(b, KS_YAML_SCALAR, ev, &rc)))
			goto out;
		size_t len = 0;
		const char *text = fy_token_get_text(ev->scalar.value, &len);
		n->str = malloc(len + 1);
		if (!n->str) {
			rc = ks_error_set(b->e, KS_ENOMEM, "out of memory reading '%s'", b->path);
			goto out;
		}
		if (len)
			memcpy(n->str, text, len);
		n->str[len] = 0;
		n->len = len;
		switch (fy_token_scalar_style(ev->scalar.value)) {
		case FYSS_SINGLE_QUOTED:
			n->quoted = 1;
			break;
		case FYSS_DOUBLE_QUOTED:
			n->quoted = 2;
			break;
		case FYSS_LITERAL:
		case FYSS_FOLDED:
			n->quoted = 3;
			break;
		default:
			n->quoted = 0;
		}
		break;
	}
	case FYET_SEQUENCE_START:
	case FYET_MAPPING_START: {
		int map = ev->type == FYET_MAPPING_START;
		enum fy_event_type end = map ? FYET_MAPPING_END : FYET_SEQUENCE_END;
		if (!(n = new_node(b, map ? KS_YAML_MAP : KS_YAML_SEQ, ev, &rc)))
			goto out;
		for (;;) {
			struct fy_event *child = next_event(b, &rc);
			if (!child)
				goto out;
			if (child->type == end) {
				fy_parser_event_free(b->fyp, child);
				break;
			}
			struct ks_yaml_node *key = NULL, *val = NULL;
			if (map) {
				if ((rc = build(b, child, depth + 1, &key)))
					goto out;
				if (key->kind != KS_YAML_SCALAR) {
					rc = pos_error(b, key->line, key->col, KS_EPARSE,
						       "expected a plain key, got %s",
						       ks_yaml_kind_name(key->kind));
					node_free(key);
					goto out;
				}
				for (int i = 0; i < n->n; i++)
					if (!strcmp(n->keys[i]->str, key->str)) {
						rc = pos_error(b, key->line, key->col, KS_EPARSE,
							       "duplicate key '%s' (first at line %d)",
							       key->str, n->keys[i]->line);
						node_free(key);
						goto out;
					}
				struct fy_event *vev = next_event(b, &rc);
				if (!vev) {
					node_free(key);
					goto out;
				}
				child = vev;
			}
			if ((rc = build(b, child, depth + 1, &val))) {
				node_free(key);
				goto out;
			}
			if (!val->line) {
				val->line = key ? key->line : n->line;
				val->col = key ? key->col : n->col;
			}
			if ((rc = push(b, n, key, val))) {
				node_free(key);
				node_free(val);
				goto out;
			}
		}
		break;
	}
	case FYET_ALIAS: {
		const struct fy_mark *m = fy_event_start_mark(ev);
		rc = pos_error(b, m ? m->line + 1 : 1, m ? m->column + 1 : 1, KS_EPARSE,
			       "YAML aliases are not supported here; write the value out");
		goto out;
	}
	default:
		rc = pos_error(b, 1, 1, KS_EPARSE, "unexpected YAML event %d", (int)ev->type);
		goto out;
	}
out:
	fy_parser_event_free(b->fyp, ev);
	if (rc) {
		node_free(n);
		return rc;
	}
	*out = n;
	return 0;
}

static void diag_discard(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
}

/* A NUL or a byte that is not UTF-8 ends libfyaml's input as if the file ended there, so the
 * rest of the document would be dropped without a word: refuse it, at its position. */
static int text_check(const char *text, size_t len, const char *path, struct ks_error *e)
{
	const unsigned char *p = (const unsigned char *)text;
	int line = 1, col = 1;
	for (size_t i = 0; i < len;) {
		size_t n = p[i] ? ks_utf8_seq(p + i, len - i) : 0;
		if (!n)
			return ks_error_set(e, KS_EPARSE, "%s:%d:%d: %s: a YAML file must be UTF-8 text",
					    path, line, col,
					    p[i] ? "a byte that is not UTF-8" : "a NUL byte");
		if (p[i] == '\n') {
			line++;
			col = 0;
		}
		col++;
		i += n;
	}
	return 0;
}

int ks_yaml_load_string(const char *text, size_t len, const char *name,
			struct ks_yaml_doc **out, struct ks_error *e)
{
	struct builder b = {.path = name ? name : "<string>", .e = e};
	struct ks_yaml_doc *d = calloc(1, sizeof(*d));
	struct fy_event *ev = NULL;
	int rc = 0;
	*out = NULL;
	if (!d || !(d->path = strdup(b.path))) {
		rc = ks_error_set(e, KS_ENOMEM, "out of memory reading '%s'", b.path);
		goto out;
	}
	if ((rc = text_check(text, len, b.path, e)))
		goto out;
	struct fy_diag_cfg dcfg;
	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	dcfg.output_fn = diag_discard;
	dcfg.colorize = false;
	b.diag = fy_diag_create(&dcfg);
	if (!b.diag) {
		rc = ks_error_set(e, KS_ENOMEM, "cannot create a YAML diagnostic for '%s'", b.path);
		goto out;
	}
	fy_diag_set_collect_errors(b.diag, true);
	struct fy_parse_cfg cfg = {.flags = FYPCF_QUIET | FYPCF_DISABLE_MMAP_OPT, .diag = b.diag};
	b.fyp = fy_parser_create(&cfg);
	if (!b.fyp || fy_parser_set_string(b.fyp, text, len)) {
		rc = ks_error_set(e, KS_ENOMEM, "cannot create a YAML parser for '%s'", b.path);
		goto out;
	}
	/* stream start, document start, the root node, document end, stream end */
	for (;;) {
		if (!(ev = next_event(&b, &rc)))
			goto out;
		enum fy_event_type t = ev->type;
		if (t == FYET_STREAM_END) {
			fy_parser_event_free(b.fyp, ev);
			ev = NULL;
			break;
		}
		if (t == FYET_STREAM_START || t == FYET_DOCUMENT_START || t == FYET_DOCUMENT_END) {
			fy_parser_event_free(b.fyp, ev);
			ev = NULL;
			continue;
		}
		if (d->root) {
			const struct fy_mark *m = fy_event_start_mark(ev);
			rc = pos_error(&b, m ? m->line + 1 : 1, m ? m->column + 1 : 1, KS_EPARSE,
				       "expected a single YAML document");
			goto out;
		}
		struct fy_event *root_ev = ev;
		ev = NULL;
		if ((rc = build(&b, root_ev, 0, &d->root)))
			goto out;
		if (!d->root->line)
			d->root->line = d->root->col = 1;
	}
out:
	if (ev)
		fy_parser_event_free(b.fyp, ev);
	if (b.fyp)
		fy_parser_destroy(b.fyp);
	if (b.diag)
		fy_diag_destroy(b.diag);
	if (rc) {
		ks_yaml_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

int ks_yaml_load_file(const char *path, size_t max, struct ks_yaml_doc **out,
		      struct ks_error *e)
{
	struct ks_buf text;
	ks_buf_init(&text, 0);
	int rc = ks_file_read(path, max ? max : YAML_DEFAULT_MAX, &text, e);
	if (!rc)
		rc = ks_yaml_load_string(ks_buf_str(&text), text.len, path, out, e);
	ks_buf_release(&text);
	return rc;
}

int ks_yaml_load_schema(const char *path, const char *what, const char *schema,
			const char *const *top, struct ks_yaml_doc **out, struct ks_error *e)
{
	struct ks_yaml_doc *y = NULL;
	struct ks_yaml_node *n = NULL;
	int rc = ks_yaml_load_file(path, 0, &y, e);
	if (rc)
		return rc;
	if (!y->root || y->root->kind != KS_YAML_MAP)
		rc = ks_yaml_error_in(y, y->root, e, "%s must be a mapping", what);
	else if (!(rc = ks_yaml_check_keys(y, y->root, what, top, NULL, e)) &&
		 !(rc = ks_yaml_need(y, y->root, "schema", KS_YAML_SCALAR, &n, e)) &&
		 strcmp(ks_yaml_scalar(n), schema))
		rc = ks_yaml_error_in(y, n, e, "'schema' must be %s", schema);
	if (rc)
		ks_yaml_free(y);
	else
		*out = y;
	return rc;
}

static int verror(const struct ks_yaml_doc *d, int line, int col, int code, struct ks_error *e,
		  const char *fmt, va_list ap)
{
	char msg[768];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	return ks_error_set(e, code, "%s:%d:%d: %s", d && d->path ? d->path : "<yaml>", line, col,
			    msg);
}

int ks_yaml_error(const struct ks_yaml_doc *d, const struct ks_yaml_node *n, int code,
		  struct ks_error *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = verror(d, n ? n->line : 1, n ? n->col : 1, code, e, fmt, ap);
	va_end(ap);
	return rc;
}

int ks_yaml_error_at(const struct ks_yaml_doc *d, const struct ks_yaml_node *n, int off,
		     int code, struct ks_error *e, const char *fmt, ...)
{
	int col = n ? n->col : 1;
	/* columns inside the text are exact for plain and quoted one-line scalars */
	if (n && n->kind == KS_YAML_SCALAR && n->quoted != 3 && !memchr(n->str, '\n', n->len))
		col += off;
	va_list ap;
	va_start(ap, fmt);
	int rc = verror(d, n ? n->line : 1, col, code, e, fmt, ap);
	va_end(ap);
	return rc;
}

static int verror(const struct ks_yaml_doc *d, int line, int col, int code, struct ks_error *e,
		  const char *fmt, va_list ap);

/* the first scalar of a collection: its first key, or its first item, recursively */
static const struct ks_yaml_node *first_scalar(const struct ks_yaml_node *n)
{
	for (int depth = 0; n && n->kind != KS_YAML_SCALAR && depth < YAML_MAX_DEPTH; depth++) {
		if (!n->n)
			return n; /* empty: its own position */
		n = n->kind == KS_YAML_MAP ? n->keys[0] : n->items[0];
	}
	return n;
}

void ks_yaml_pos(const struct ks_yaml_node *n, int *line, int *col)
{
	n = first_scalar(n);
	*line = n ? n->line : 0;
	*col = n ? n->col : 0;
}

int ks_yaml_error_in(const struct ks_yaml_doc *d, const struct ks_yaml_node *n,
		     struct ks_error *e, const char *fmt, ...)
{
	int line, col;
	ks_yaml_pos(n ? n : d ? d->root : NULL, &line, &col);
	if (line < 1)
		line = col = 1;
	va_list ap;
	va_start(ap, fmt);
	int rc = verror(d, line, col, KS_EPARSE, e, fmt, ap);
	va_end(ap);
	return rc;
}

int ks_yaml_need(const struct ks_yaml_doc *d, const struct ks_yaml_node *map, const char *key,
		 enum ks_yaml_kind k, struct ks_yaml_node **out, struct ks_error *e)
{
	struct ks_yaml_node *n = ks_yaml_get(map, key);
	if (!n)
		return ks_yaml_error_in(d, map, e, "missing required key '%s'", key);
	if (n->kind != k)
		return ks_yaml_error_in(d, n, e, "'%s' must be a %s", key,
					k == KS_YAML_SCALAR ? "scalar"
					: k == KS_YAML_MAP  ? "mapping"
							    : "sequence");
	*out = n;
	return 0;
}

const char *ks_yaml_scalar(const struct ks_yaml_node *n)
{
	return n && n->kind == KS_YAML_SCALAR ? n->str : NULL;
}

char *ks_yaml_strdup(const struct ks_yaml_node *n)
{
	return n && n->kind == KS_YAML_SCALAR ? strdup(n->str) : NULL;
}

struct ks_yaml_node *ks_yaml_get(const struct ks_yaml_node *map, const char *key)
{
	if (!map || map->kind != KS_YAML_MAP)
		return NULL;
	for (int i = 0; i < map->n; i++)
		if (!strcmp(map->keys[i]->str, key))
			return map->items[i];
	return NULL;
}

const char *ks_yaml_kind_name(enum ks_yaml_kind k)
{
	return k == KS_YAML_MAP ? "a mapping" : k == KS_YAML_SEQ ? "a sequence" : "a scalar";
}

int ks_yaml_expect(const struct ks_yaml_doc *d, const struct ks_yaml_node *n,
		   enum ks_yaml_kind k, const char *what, struct ks_error *e)
{
	if (n && n->kind == k)
		return 0;
	return ks_yaml_error(d, n, KS_EPARSE, e, "expected %s, got %s", what,
			     n ? ks_yaml_kind_name(n->kind) : "nothing");
}

static int in_list(const char *const *list, const char *s)
{
	for (; list && *list; list++)
		if (!strcmp(*list, s))
			return 1;
	return 0;
}

static void join(char *out, size_t n, const char *const *list)
{
	size_t used = 0;
	out[0] = 0;
	for (int i = 0; list && list[i] && used < n; i++)
		used += (size_t)snprintf(out + used, n - used, "%s%s", i ? ", " : "", list[i]);
}

int ks_yaml_check_keys(const struct ks_yaml_doc *d, const struct ks_yaml_node *map,
		       const char *where, const char *const *allowed,
		       const char *const *required, struct ks_error *e)
{
	char names[512];
	int rc = ks_yaml_expect(d, map, KS_YAML_MAP, "a mapping", e);
	if (rc)
		return rc;
	for (int i = 0; i < map->n; i++)
		if (!in_list(allowed, map->keys[i]->str)) {
			join(names, sizeof(names), allowed);
			return ks_yaml_error(d, map->keys[i], KS_EPARSE, e,
					     "unknown key '%s' in %s (allowed: %s)",
					     map->keys[i]->str, where, names);
		}
	for (; required && *required; required++)
		if (!ks_yaml_get(map, *required))
			return ks_yaml_error(d, map, KS_EPARSE, e, "%s lacks the key '%s'", where,
					     *required);
	return 0;
}

int ks_yaml_str(const struct ks_yaml_doc *d, const struct ks_yaml_node *n, const char *what,
		const char **out, struct ks_error *e)
{
	if (!n || n->kind != KS_YAML_SCALAR || !n->len)
		return ks_yaml_error(d, n, KS_EPARSE, e, "expected %s, got %s", what,
				     !n ? "nothing" : n->kind == KS_YAML_SCALAR ? "an empty value"
									 : ks_yaml_kind_name(n->kind));
	*out = n->str;
	return 0;
}

int ks_yaml_number(const struct ks_yaml_doc *d, const struct ks_yaml_node *n,
		   const char *what, double *out, struct ks_error *e)
{
	if (!n || n->kind != KS_YAML_SCALAR || n->quoted)
		goto bad;
	const char *s = n->str;
	size_t i = 0, digits = 0;
	if (s[i] == '+' || s[i] == '-')
		i++;
	while (isdigit((unsigned char)s[i]))
		i++, digits++;
	if (s[i] == '.')
		for (i++; isdigit((unsigned char)s[i]); i++)
			digits++;
	if (!digits)
		goto bad;
	if (s[i] == 'e' || s[i] == 'E') {
		i++;
		if (s[i] == '+' || s[i] == '-')
			i++;
		if (!isdigit((unsigned char)s[i]))
			goto bad;
		while (isdigit((unsigned char)s[i]))
			i++;
	}
	if (s[i])
		goto bad;
	errno = 0;
	double v = strtod(s, NULL);
	if (errno == ERANGE && isinf(v))
		goto bad;
	*out = v;
	return 0;
bad:
	return ks_yaml_error(d, n, KS_EPARSE, e, "expected %s, got %s%s%s", what,
			     n && n->kind == KS_YAML_SCALAR ? "'" : "",
			     !n ? "nothing"
				: n->kind == KS_YAML_SCALAR ? n->str : ks_yaml_kind_name(n->kind),
			     n && n->kind == KS_YAML_SCALAR ? "'" : "");
}

int ks_yaml_int(const struct ks_yaml_doc *d, const struct ks_yaml_node *n, const char *what,
		int64_t lo, int64_t hi, int64_t *out, struct ks_error *e)
{
	double v;
	int rc = ks_yaml_number(d, n, what, &v, e);
	if (rc)
		return rc;
	if (v != trunc(v) || v < (double)lo || v > (double)hi)
		return ks_yaml_error(d, n, KS_EPARSE, e,
				     "expected %s (an integer in [%lld, %lld]), got '%s'", what,
				     (long long)lo, (long long)hi, n->str);
	*out = (int64_t)v;
	return 0;
}
