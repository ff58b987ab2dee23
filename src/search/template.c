/* Knob templates: the @ksearch YAML block, configuration space, feasibility, defines. */
#include "ksearch/template.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/knowledge.h"
#include "ksearch/task.h"
#include "util/expr.h"
#include "util/fs.h"
#include "util/yaml.h"

static const char *const top_keys[] = {"family", "summary", "rating", "difficulty", "knobs",
				       "require", NULL};
static const char *const top_required[] = {"family", "knobs", NULL};
static const char *const knob_keys[] = {"values", "default", "summary", "impacts", NULL};
static const char *const knob_required[] = {"values", NULL};
#define IMPACT_KEY_(id, name) name,
static const char *const impact_keys[] = {KS_IMPACT_LIST(IMPACT_KEY_) NULL};
#undef IMPACT_KEY_

void ks_template_free(struct ks_template *t)
{
	if (!t)
		return;
	for (int k = 0; k < t->nknobs; k++) {
		struct ks_knob *kb = &t->knobs[k];
		free(kb->name);
		free(kb->summary);
		for (int i = 0; i < kb->nvalues; i++)
			free(kb->values[i]);
		free(kb->values);
		free(kb->nums);
	}
	free(t->knobs);
	for (int i = 0; i < t->nrequire; i++)
		free(t->require[i].expr);
	free(t->require);
	free(t->path);
	free(t->family);
	free(t->summary);
	free(t->source);
	free(t);
}

static int is_ident(const char *s)
{
	if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return 0;
	return 1;
}

static int parse_number(const char *s, double *out)
{
	char *end;
	if (!*s)
		return 0;
	*out = strtod(s, &end);
	return *end == '\0' && isfinite(*out);
}

/* names the placeholder lookup used for the syntax check at load time */
static int lookup_placeholder(const char *name, size_t len, double *out, void *ctx)
{
	(void)name;
	(void)len;
	(void)ctx;
	*out = 3.0;
	return 0;
}

static int parse_knob(struct ks_yaml_doc *d, struct ks_yaml_node *key, struct ks_yaml_node *v,
		      struct ks_knob *kb, struct ks_error *e)
{
	struct ks_yaml_node *vals, *def, *imp, *sum;
	char where[160];
	int rc;

	if (!is_ident(key->str))
		return ks_yaml_error(d, key, KS_EPARSE, e, "knob name '%s' is not a C identifier",
				     key->str);
	snprintf(where, sizeof(where), "knob '%s'", key->str);
	if ((rc = ks_yaml_expect(d, v, KS_YAML_MAP, "a knob mapping {values: [...], ...}", e)) ||
	    (rc = ks_yaml_check_keys(d, v, where, knob_keys, knob_required, e)))
		return rc;
	kb->name = strdup(key->str);
	kb->line = key->line;
	if (!kb->name)
		return ks_error_set(e, KS_ENOMEM, "copy knob name");
	vals = ks_yaml_get(v, "values");
	if ((rc = ks_yaml_expect(d, vals, KS_YAML_SEQ, "a list of values", e)))
		return rc;
	if (vals->n < 1 || vals->n > KS_TEMPLATE_MAX_VALUES)
		return ks_yaml_error(d, vals, KS_EPARSE, e, "a knob needs 1 to %d values, got %d",
				     KS_TEMPLATE_MAX_VALUES, vals->n);
	kb->values = calloc((size_t)vals->n, sizeof(char *));
	kb->nums = calloc((size_t)vals->n, sizeof(double));
	if (!kb->values || !kb->nums)
		return ks_error_set(e, KS_ENOMEM, "knob values");
	for (int i = 0; i < vals->n; i++) {
		const char *s;
		if ((rc = ks_yaml_str(d, vals->items[i], "a knob value", &s, e)))
			return rc;
		for (const char *c = s; *c; c++)
			if (!(isalnum((unsigned char)*c) || strchr("_.+-", *c)))
				return ks_yaml_error(d, vals->items[i], KS_EPARSE, e,
						     "knob value '%s' must be a number or an identifier",
						     s);
		for (int j = 0; j < i; j++)
			if (!strcmp(kb->values[j], s))
				return ks_yaml_error(d, vals->items[i], KS_EPARSE, e,
						     "duplicate value '%s'", s);
		kb->values[i] = strdup(s);
		if (!kb->values[i])
			return ks_error_set(e, KS_ENOMEM, "knob value");
		kb->nvalues = i + 1;
		if (!parse_number(s, &kb->nums[i]))
			kb->nums[i] = i;
	}
	def = ks_yaml_get(v, "default");
	kb->def = 0;
	if (def) {
		const char *s;
		int found = -1;
		if ((rc = ks_yaml_str(d, def, "a default value", &s, e)))
			return rc;
		for (int i = 0; i < kb->nvalues; i++) {
			double a, b;
			if (!strcmp(kb->values[i], s) ||
			    (parse_number(s, &a) && parse_number(kb->values[i], &b) && a == b))
				found = i;
		}
		if (found < 0)
			return ks_yaml_error(d, def, KS_EPARSE, e,
					     "default '%s' is not one of the knob's values", s);
		kb->def = found;
	}
	sum = ks_yaml_get(v, "summary");
	if (sum) {
		const char *s;
		if ((rc = ks_yaml_str(d, sum, "a summary", &s, e)))
			return rc;
		if (!(kb->summary = strdup(s)))
			return ks_error_set(e, KS_ENOMEM, "knob summary");
	}
	imp = ks_yaml_get(v, "impacts");
	if (imp) {
		snprintf(where, sizeof(where), "impacts of knob '%s'", key->str);
		if ((rc = ks_yaml_expect(d, imp, KS_YAML_MAP, "a mapping of impacts", e)) ||
		    (rc = ks_yaml_check_keys(d, imp, where, impact_keys, NULL, e)))
			return rc;
		for (int k = 0; k < KS_IMPACT_COUNT; k++) {
			struct ks_yaml_node *x = ks_yaml_get(imp, impact_keys[k]);
			if (!x)
				continue;
			if ((rc = ks_yaml_number(d, x, "an impact score", &kb->impacts[k], e)))
				return rc;
			if (kb->impacts[k] < 0 || kb->impacts[k] > 10)
				return ks_yaml_error(d, x, KS_EPARSE, e,
						     "impact %g outside [0, 10]", kb->impacts[k]);
		}
	}
	return 0;
}

/* the source character at a 1-based line and column, 0 outside the text (the YAML layer
 * may place a quoted scalar at its quote or at its first character) */
static char source_char(const char *src, int line, int col)
{
	for (int l = 1; l < line && src; l++) {
		src = strchr(src, '\n');
		if (src)
			src++;
	}
	if (!src || col < 1)
		return 0;
	for (int c = 1; c < col; c++, src++)
		if (!*src || *src == '\n')
			return 0;
	return *src;
}

static int parse_block(struct ks_template *t, struct ks_yaml_doc *d, struct ks_error *e)
{
	struct ks_yaml_node *r = d->root, *v, *knobs, *req;
	const char *s;
	int rc;

	if (!r)
		return ks_yaml_error(d, NULL, KS_EPARSE, e, "empty @ksearch block");
	if ((rc = ks_yaml_expect(d, r, KS_YAML_MAP, "a mapping", e)) ||
	    (rc = ks_yaml_check_keys(d, r, "@ksearch block", top_keys, top_required, e)))
		return rc;
	if ((rc = ks_yaml_str(d, ks_yaml_get(r, "family"), "a family name", &s, e)))
		return rc;
	if (!(t->family = strdup(s)))
		return ks_error_set(e, KS_ENOMEM, "family");
	if ((v = ks_yaml_get(r, "summary"))) {
		if ((rc = ks_yaml_str(d, v, "a summary", &s, e)))
			return rc;
		if (!(t->summary = strdup(s)))
			return ks_error_set(e, KS_ENOMEM, "summary");
	}
	t->rating = 5;
	if ((v = ks_yaml_get(r, "rating"))) {
		if ((rc = ks_yaml_number(d, v, "a rating", &t->rating, e)))
			return rc;
		if (t->rating < 0 || t->rating > 10)
			return ks_yaml_error(d, v, KS_EPARSE, e, "rating %g outside [0, 10]",
					     t->rating);
	}
	t->difficulty = 3;
	if ((v = ks_yaml_get(r, "difficulty"))) {
		int64_t x;
		if ((rc = ks_yaml_int(d, v, "a difficulty", 1, 5, &x, e)))
			return rc;
		t->difficulty = (int)x;
	}
	knobs = ks_yaml_get(r, "knobs");
	if ((rc = ks_yaml_expect(d, knobs, KS_YAML_MAP, "a mapping of knobs", e)))
		return rc;
	if (knobs->n < 1 || knobs->n > KS_TEMPLATE_MAX_KNOBS)
		return ks_yaml_error(d, knobs, KS_EPARSE, e, "a template needs 1 to %d knobs, got %d",
				     KS_TEMPLATE_MAX_KNOBS, knobs->n);
	t->knobs = calloc((size_t)knobs->n, sizeof(*t->knobs));
	if (!t->knobs)
		return ks_error_set(e, KS_ENOMEM, "knobs");
	for (int k = 0; k < knobs->n; k++) {
		t->nknobs = k + 1;
		if ((rc = parse_knob(d, knobs->keys[k], knobs->items[k], &t->knobs[k], e)))
			return rc;
	}
	if (ks_template_size(t) < 0)
		return ks_yaml_error(d, knobs, KS_ELIMIT, e,
				     "more than %ld configurations", KS_TEMPLATE_MAX_CONFIGS);
	req = ks_yaml_get(r, "require");
	if (!req)
		return 0;
	if ((rc = ks_yaml_expect(d, req, KS_YAML_SEQ, "a list of expressions", e)))
		return rc;
	if (req->n > KS_TEMPLATE_MAX_REQUIRE)
		return ks_yaml_error(d, req, KS_ELIMIT, e, "more than %d require expressions",
				     KS_TEMPLATE_MAX_REQUIRE);
	t->require = calloc((size_t)req->n + 1, sizeof(*t->require));
	if (!t->require)
		return ks_error_set(e, KS_ENOMEM, "require");
	for (int i = 0; i < req->n; i++) {
		struct ks_yaml_node *x = req->items[i];
		double out;
		int errcol = 0;
		struct ks_error ee = {0};
		if ((rc = ks_yaml_str(d, x, "an expression", &s, e)))
			return rc;
		if (memchr(x->str, '\n', x->len))
			return ks_yaml_error(d, x, KS_EPARSE, e, "an expression must fit on one line");
		t->require[i].expr = strdup(s);
		if (!t->require[i].expr)
			return ks_error_set(e, KS_ENOMEM, "require");
		t->require[i].line = x->line;
		t->require[i].col = x->col + (x->quoted && source_char(t->source, x->line, x->col) ==
							      (x->quoted == 1 ? '\'' : '"'));
		t->nrequire = i + 1;
		/* syntax check now, names and values are checked per configuration */
		rc = ks_expr_eval(s, lookup_placeholder, NULL, &out, &errcol, &ee);
		if (rc == KS_EPARSE || rc == KS_ELIMIT)
			return ks_error_set(e, rc, "%s:%d:%d: %s", t->path, t->require[i].line,
					    t->require[i].col + (errcol > 0 ? errcol - 1 : 0), ee.msg);
	}
	return 0;
}

int ks_template_parse(const char *text, size_t len, const char *name, struct ks_template **out,
		      struct ks_error *e)
{
	struct ks_template *t;
	struct ks_yaml_doc *d = NULL;
	const char *start, *end, *body;
	char *masked = NULL;
	int rc, line = 1;

	*out = NULL;
	if (len > KS_TEMPLATE_MAX_SOURCE)
		return ks_error_set(e, KS_ELIMIT, "%s: template larger than %zu bytes", name,
				    KS_TEMPLATE_MAX_SOURCE);
	t = calloc(1, sizeof(*t));
	if (!t)
		return ks_error_set(e, KS_ENOMEM, "template");
	t->path = strdup(name);
	t->source = malloc(len + 1);
	if (!t->path || !t->source) {
		rc = ks_error_set(e, KS_ENOMEM, "template");
		goto out;
	}
	memcpy(t->source, text, len);
	t->source[len] = '\0';
	t->source_len = len;
	start = strstr(t->source, "@ksearch");
	if (!start) {
		rc = ks_error_set(e, KS_EPARSE, "%s: no '@ksearch' block", name);
		goto out;
	}
	for (const char *c = t->source; c < start; c++)
		line += *c == '\n';
	t->block_line = line;
	body = strchr(start, '\n');
	end = body ? strstr(body, "@end") : NULL;
	if (!end) {
		rc = ks_error_set(e, KS_EPARSE, "%s:%d:%d: '@ksearch' block without '@end'", name,
				  line, (int)(start - t->source) + 1);
		goto out;
	}
	/* keep the block at its place, blank everything before it, so YAML positions are
	 * source positions */
	masked = malloc((size_t)(end - t->source) + 1);
	if (!masked) {
		rc = ks_error_set(e, KS_ENOMEM, "template");
		goto out;
	}
	for (const char *c = t->source; c < end; c++)
		masked[c - t->source] = c < body ? (*c == '\n' ? '\n' : ' ') : *c;
	masked[end - t->source] = '\0';
	rc = ks_yaml_load_string(masked, (size_t)(end - t->source), name, &d, e);
	if (!rc)
		rc = parse_block(t, d, e);
out:
	free(masked);
	ks_yaml_free(d);
	if (rc) {
		ks_template_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int ks_template_load(const char *path, struct ks_template **out, struct ks_error *e)
{
	struct ks_buf b;
	int rc;
	ks_buf_init(&b, KS_TEMPLATE_MAX_SOURCE);
	rc = ks_kernel_source_read(path, KS_TEMPLATE_MAX_SOURCE, &b, e);
	if (!rc)
		rc = ks_template_parse(ks_buf_str(&b), b.len, path, out, e);
	ks_buf_release(&b);
	return rc;
}

int ks_template_knob(const struct ks_template *t, const char *name)
{
	for (int k = 0; k < t->nknobs; k++)
		if (!strcmp(t->knobs[k].name, name))
			return k;
	return -1;
}

long ks_template_size(const struct ks_template *t)
{
	long n = 1;
	for (int k = 0; k < t->nknobs; k++) {
		n *= t->knobs[k].nvalues;
		if (n > KS_TEMPLATE_MAX_CONFIGS)
			return -1;
	}
	return n;
}

void ks_template_config_at(const struct ks_template *t, long index, int *cfg)
{
	for (int k = t->nknobs - 1; k >= 0; k--) {
		cfg[k] = (int)(index % t->knobs[k].nvalues);
		index /= t->knobs[k].nvalues;
	}
}

long ks_template_config_index(const struct ks_template *t, const int *cfg)
{
	long index = 0;
	for (int k = 0; k < t->nknobs; k++)
		index = index * t->knobs[k].nvalues + cfg[k];
	return index;
}

void ks_template_config_default(const struct ks_template *t, int *cfg)
{
	for (int k = 0; k < t->nknobs; k++)
		cfg[k] = t->knobs[k].def;
}

struct eval_ctx {
	const struct ks_template *t;
	const int *cfg;
	int w;
	ks_template_lookup_fn lookup;
	void *ctx;
};

static int lookup_cfg(const char *name, size_t len, double *out, void *vctx)
{
	struct eval_ctx *c = vctx;
	for (int k = 0; k < c->t->nknobs; k++) {
		const struct ks_knob *kb = &c->t->knobs[k];
		if (strlen(kb->name) == len && !memcmp(kb->name, name, len)) {
			*out = kb->nums[c->cfg[k]];
			return 0;
		}
	}
	return c->lookup ? c->lookup(c->w, name, len, out, c->ctx) : KS_ENOTFOUND;
}

int ks_template_feasible(const struct ks_template *t, const int *cfg, int nworkloads,
			 ks_template_lookup_fn lookup, void *ctx, int *feasible,
			 struct ks_error *e)
{
	struct eval_ctx c = {.t = t, .cfg = cfg, .lookup = lookup, .ctx = ctx};
	*feasible = 1;
	for (int k = 0; k < t->nknobs; k++)
		if (cfg[k] < 0 || cfg[k] >= t->knobs[k].nvalues)
			return ks_error_set(e, KS_EINVAL, "%s: knob '%s' value index %d out of range",
					    t->path, t->knobs[k].name, cfg[k]);
	for (int w = nworkloads > 0 ? 0 : -1; w < (nworkloads > 0 ? nworkloads : 0); w++) {
		c.w = w;
		for (int i = 0; i < t->nrequire; i++) {
			double v;
			int errcol = 0, rc;
			struct ks_error ee = {0};
			rc = ks_expr_eval(t->require[i].expr, lookup_cfg, &c, &v, &errcol, &ee);
			if (rc)
				return ks_error_set(e, rc, "%s:%d:%d: %s", t->path, t->require[i].line,
						    t->require[i].col + (errcol > 0 ? errcol - 1 : 0),
						    ee.msg);
			if (v == 0) {
				*feasible = 0;
				return 0;
			}
		}
	}
	return 0;
}

void ks_config_set_release(struct ks_config_set *s)
{
	free(s->cfg);
	free(s->index);
	memset(s, 0, sizeof(*s));
}

int ks_template_enumerate(const struct ks_template *t, int nworkloads,
			  ks_template_lookup_fn lookup, void *ctx, struct ks_config_set *out,
			  struct ks_error *e)
{
	long total = ks_template_size(t);
	int cfg[KS_TEMPLATE_MAX_KNOBS], alloc = 0, rc = 0;
	memset(out, 0, sizeof(*out));
	out->nknobs = t->nknobs;
	if (total < 0)
		return ks_error_set(e, KS_ELIMIT, "%s: configuration space too large", t->path);
	for (long i = 0; i < total; i++) {
		int ok;
		ks_template_config_at(t, i, cfg);
		if ((rc = ks_template_feasible(t, cfg, nworkloads, lookup, ctx, &ok, e)))
			goto fail;
		if (!ok)
			continue;
		if (out->n == alloc) {
			int na = alloc ? 2 * alloc : 64;
			int *nc = realloc(out->cfg, (size_t)na * t->nknobs * sizeof(int));
			long *ni;
			if (!nc) {
				rc = ks_error_set(e, KS_ENOMEM, "enumerate configurations");
				goto fail;
			}
			out->cfg = nc;
			ni = realloc(out->index, (size_t)na * sizeof(long));
			if (!ni) {
				rc = ks_error_set(e, KS_ENOMEM, "enumerate configurations");
				goto fail;
			}
			out->index = ni;
			alloc = na;
		}
		memcpy(out->cfg + (size_t)out->n * t->nknobs, cfg, (size_t)t->nknobs * sizeof(int));
		out->index[out->n++] = i;
	}
	return 0;
fail:
	ks_config_set_release(out);
	return rc;
}

int ks_config_set_find(const struct ks_config_set *s, const struct ks_template *t,
		       const int *cfg)
{
	long key = ks_template_config_index(t, cfg);
	int lo = 0, hi = s->n - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		if (s->index[mid] == key)
			return mid;
		if (s->index[mid] < key)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

void ks_template_defines_free(char **defs)
{
	if (!defs)
		return;
	for (char **p = defs; *p; p++)
		free(*p);
	free(defs);
}

int ks_template_defines(const struct ks_template *t, const int *cfg, char ***out,
			struct ks_error *e)
{
	char **defs = calloc((size_t)t->nknobs + 1, sizeof(char *));
	*out = NULL;
	if (!defs)
		return ks_error_set(e, KS_ENOMEM, "defines");
	for (int k = 0; k < t->nknobs; k++) {
		const struct ks_knob *kb = &t->knobs[k];
		size_t n = strlen(kb->name) + strlen(kb->values[cfg[k]]) + 4;
		defs[k] = malloc(n);
		if (!defs[k]) {
			ks_template_defines_free(defs);
			return ks_error_set(e, KS_ENOMEM, "defines");
		}
		snprintf(defs[k], n, "-D%s=%s", kb->name, kb->values[cfg[k]]);
	}
	*out = defs;
	return 0;
}

int ks_template_config_str(const struct ks_template *t, const int *cfg, struct ks_buf *out)
{
	for (int k = 0; k < t->nknobs; k++) {
		int rc = ks_buf_addf(out, "%s%s=%s", k ? " " : "", t->knobs[k].name,
				     t->knobs[k].values[cfg[k]]);
		if (rc)
			return rc;
	}
	return 0;
}

int ks_template_neighbours(const struct ks_template *t, const int *cfg, struct ks_knob_move *out,
			   int max)
{
	int n = 0;
	for (int k = 0; k < t->nknobs; k++) {
		for (int dir = -1; dir <= 1; dir += 2) {
			int to = cfg[k] + dir;
			if (to < 0 || to >= t->knobs[k].nvalues || n >= max)
				continue;
			out[n].knob = k;
			out[n].from = cfg[k];
			out[n].to = to;
			n++;
		}
	}
	return n;
}

int ks_template_move_key(const struct ks_template *t, const struct ks_knob_move *m, int exact,
			 char *out, size_t n)
{
	const struct ks_knob *kb = &t->knobs[m->knob];
	int w;
	if (exact)
		w = snprintf(out, n, "%s:%s->%s", kb->name, kb->values[m->from], kb->values[m->to]);
	else
		w = snprintf(out, n, "%s:%+d", kb->name, m->to - m->from);
	return w < 0 || (size_t)w >= n ? KS_ELIMIT : 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void ks_template_list_free(struct ks_template **list, int n)
{
	for (int i = 0; list && i < n; i++)
		ks_template_free(list[i]);
	free(list);
}

int ks_template_family_clash(struct ks_template *const *list, int n, struct ks_error *e)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (!strcmp(list[i]->family, list[j]->family))
				return ks_error_set(e, KS_EINVAL,
						    "%s: family '%s' is taken by %s already: give each "
						    "template a family of its own (the world model and "
						    "the reports tell templates apart by it)",
						    list[i]->path, list[i]->family, list[j]->path);
	return 0;
}

int ks_template_load_dir(const char *dir, struct ks_template ***out, int *n, struct ks_error *e)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *names[KS_TEMPLATE_MAX_DIR * 4];
	int nnames = 0, rc = 0;
	struct ks_template **list = NULL;

	*out = NULL;
	*n = 0;
	if (!d)
		return ks_error_set(e, KS_EIO, "open template folder '%s'", dir);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (nnames == (int)(sizeof(names) / sizeof(names[0]))) {
			rc = ks_error_set(e, KS_ELIMIT, "template folder '%s' has too many files", dir);
			break;
		}
		if (!(names[nnames] = strdup(de->d_name))) {
			rc = ks_error_set(e, KS_ENOMEM, "template folder");
			break;
		}
		nnames++;
	}
	closedir(d);
	if (!rc)
		qsort(names, (size_t)nnames, sizeof(char *), name_cmp);
	list = calloc(KS_TEMPLATE_MAX_DIR, sizeof(*list));
	if (!rc && !list)
		rc = ks_error_set(e, KS_ENOMEM, "template list");
	for (int i = 0; !rc && i < nnames; i++) {
		char path[4096];
		struct ks_buf b;
		if (ks_path_join(path, sizeof(path), dir, names[i])) {
			rc = ks_error_set(e, KS_ELIMIT, "path of '%s' too long", names[i]);
			break;
		}
		if (!ks_path_exists(path) || ks_is_dir(path))
			continue;
		ks_buf_init(&b, KS_TEMPLATE_MAX_SOURCE);
		rc = ks_kernel_source_read(path, KS_TEMPLATE_MAX_SOURCE, &b, e);
		if (!rc && strstr(ks_buf_str(&b), "@ksearch")) {
			if (*n == KS_TEMPLATE_MAX_DIR)
				rc = ks_error_set(e, KS_ELIMIT, "more than %d templates in '%s'",
						  KS_TEMPLATE_MAX_DIR, dir);
			else if (!(rc = ks_template_parse(ks_buf_str(&b), b.len, path, &list[*n], e)))
				(*n)++;
		}
		ks_buf_release(&b);
	}
	for (int i = 0; i < nnames; i++)
		free(names[i]);
	if (!rc)
		rc = ks_template_family_clash(list, *n, e);
	if (rc) {
		ks_template_list_free(list, *n);
		*n = 0;
		return rc;
	}
	*out = list;
	return 0;
}

int ks_template_task_name(const struct ks_task *t, const struct ks_workload *wl,
			  const struct ks_spec *spec, const char *name, size_t len, double *out)
{
	char key[128];
	if (len >= sizeof(key))
		return KS_ENOTFOUND;
	memcpy(key, name, len);
	key[len] = '\0';
	if (!strncmp(key, "spec.", 5))
		return spec && ks_spec_field(spec, key, out) == 0 ? 0 : KS_ENOTFOUND;
	if (!strncmp(key, "sizeof.", 7)) {
		for (int i = 0; i < t->ntensors; i++)
			if (!strcmp(t->tensors[i].name, key + 7)) {
				*out = (double)ks_dtype_size(t->tensors[i].dtype);
				return 0;
			}
		return KS_ENOTFOUND;
	}
	if (!wl)
		return KS_ENOTFOUND;
	for (int i = 0; i < t->nparams; i++)
		if (!strcmp(t->params[i].name, key)) {
			*out = wl->values[i];
			return 0;
		}
	return KS_ENOTFOUND;
}
