/* Reusable assertions (knowledge/assertions/CLASS.yaml): properties in prose for prompts
 * and check workloads appended to every task of the class. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/yaml.h"
#include "util/expr.h"
#include "ksearch/knowledge.h"
#include "ksearch/log.h"
#include "util/fs.h"

#define KS_ASSERT_MAX_ELEMENTS (1u << 26) /* per tensor: checks stay cheap on a CPU */

static const struct {
	const char *task_class, *file;
} aliases[] = {
	{"reduction", "reduction"}, {"softmax", "reduction"}, {"layernorm", "reduction"},
	{"rmsnorm", "reduction"},   {"scan", "scan"},	       {"selective_scan", "scan"},
	{"attention", "attention"}, {"matmul", "matmul"},      {"gemm", "matmul"},
};

const char *ks_assertions_class(const char *task_class)
{
	for (size_t i = 0; task_class && i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(aliases[i].task_class, task_class))
			return aliases[i].file;
	return NULL;
}

struct kv {
	char *key, *val;
	int line;
};

struct acheck {
	char *name, *why;
	int line;
	int nparams;
	struct kv *params;
	int ninit;
	struct kv *init;
	int nreq;
	char **req;
};

struct aset {
	char *cls, *prose;
	int nprops;
	struct kv *props; /* key = name, val = text */
	int ndefaults;
	struct kv *defaults;
	int nchecks;
	struct acheck *checks;
};

static void kv_free(struct kv *v, int n)
{
	for (int i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].val);
	}
	free(v);
}

static void aset_release(struct aset *a)
{
	free(a->cls);
	free(a->prose);
	kv_free(a->props, a->nprops);
	kv_free(a->defaults, a->ndefaults);
	for (int i = 0; i < a->nchecks; i++) {
		struct acheck *c = &a->checks[i];
		free(c->name);
		free(c->why);
		kv_free(c->params, c->nparams);
		kv_free(c->init, c->ninit);
		for (int k = 0; k < c->nreq; k++)
			free(c->req[k]);
		free(c->req);
	}
	free(a->checks);
	memset(a, 0, sizeof(*a));
}

/* The initialiser vocabulary of task files (DESIGN section 3): a number, normal(m, s),
 * uniform(lo, hi), softplus(normal(m, s)), -exp(normal(m, s)), randint(lo, hi).  Checked
 * here with a small parser so the knowledge layer stands alone. */
static int init_valid(const char *t)
{
	char *end;
	while (isspace((unsigned char)*t))
		t++;
	strtod(t, &end);
	if (end != t) {
		while (isspace((unsigned char)*end))
			end++;
		return *end == 0;
	}
	static const char *const forms[][2] = {
		{"normal(", ")"},	   {"uniform(", ")"}, {"randint(", ")"},
		{"softplus(normal(", "))"}, {"-exp(normal(", "))"},
	};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		size_t n = strlen(forms[i][0]);
		if (strncmp(t, forms[i][0], n))
			continue;
		const char *p = t + n;
		strtod(p, &end);
		if (end == p)
			return 0;
		p = end;
		while (isspace((unsigned char)*p))
			p++;
		if (*p++ != ',')
			return 0;
		strtod(p, &end);
		if (end == p)
			return 0;
		p = end;
		while (isspace((unsigned char)*p))
			p++;
		size_t cl = strlen(forms[i][1]);
		if (strncmp(p, forms[i][1], cl))
			return 0;
		p += cl;
		while (isspace((unsigned char)*p))
			p++;
		return *p == 0;
	}
	return 0;
}

static int no_names(const char *name, size_t len, double *out, void *ctx)
{
	(void)name;
	(void)len;
	(void)ctx;
	*out = 1; /* syntax check only: every name is acceptable at load time */
	return 0;
}

/* a mapping of name -> number or expression text */
static int load_map(const struct ks_yaml_doc *y, struct ks_yaml_node *n, const char *what, int is_init,
		    struct kv **out, int *nout, struct ks_error *e)
{
	if (!(n && n->kind == KS_YAML_MAP))
		return ks_yaml_error_in(y, n, e, "'%s' must be a mapping", what);
	int cnt = n->n;
	struct kv *v = calloc((size_t)cnt + 1, sizeof(*v));
	if (!v)
		return ks_error_set(e, KS_ENOMEM, "load '%s'", y->path);
	*out = v;
	for (int i = 0; i < n->n; i++) {
		struct kv *k = &v[(*nout)++];
		struct ks_yaml_node *val = n->items[i];
		k->key = ks_yaml_strdup(n->keys[i]);
		k->val = ks_yaml_strdup(val);
		int col;
		ks_yaml_pos(val, &k->line, &col);
		if (!k->key || !k->val || !*k->val)
			return ks_yaml_error_in(y, val, e, "'%s' entries must be scalars", what);
		if (is_init) {
			if (!init_valid(k->val))
				return ks_yaml_error_in(y, val, e,
						   "initialiser '%s' is not one of: a number, normal(m, s), "
						   "uniform(lo, hi), softplus(normal(m, s)), "
						   "-exp(normal(m, s)), randint(lo, hi)",
						   k->val);
			if (k->key[0] == '#') {
				char *end;
				long idx = strtol(k->key + 1, &end, 10);
				if (*end || end == k->key + 1 || idx < 0)
					return ks_yaml_error_in(y, n->keys[i], e,
							   "input key '%s': use a name or #N", k->key);
			}
		} else {
			double d;
			int ecol = 0;
			struct ks_error xe = {0};
			if (ks_expr_eval(k->val, no_names, NULL, &d, &ecol, &xe))
				return ks_yaml_error_in(y, val, e, "'%s': %s at column %d", k->val,
						   xe.msg, ecol);
		}
	}
	return 0;
}

static int aset_load(const char *path, struct aset *a, struct ks_error *e)
{
	static const char *const top[] = {"schema", "class", "prose", "properties", "defaults",
					  "checks", NULL};
	memset(a, 0, sizeof(*a));
	struct ks_yaml_doc *y = NULL;
	int rc = ks_yaml_load_schema(path, "the assertions file", "ks-assertions/1", top, &y, e);
	if (rc)
		return rc;
	struct ks_yaml_node *root = y->root, *n;
	if ((rc = ks_yaml_need(y, root, "class", KS_YAML_SCALAR, &n, e)))
		goto out;
	a->cls = ks_yaml_strdup(n);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strncmp(base, a->cls, strlen(a->cls)) || strcmp(base + strlen(a->cls), ".yaml")) {
		rc = ks_yaml_error_in(y, n, e, "'class' (%s) must match the file name", a->cls);
		goto out;
	}
	if ((rc = ks_yaml_need(y, root, "prose", KS_YAML_SCALAR, &n, e)))
		goto out;
	a->prose = ks_yaml_strdup(n);
	if ((rc = ks_yaml_need(y, root, "properties", KS_YAML_SEQ, &n, e)))
		goto out;
	a->props = calloc((size_t)n->n + 1, sizeof(struct kv));
	if (!a->props) {
		rc = ks_error_set(e, KS_ENOMEM, "load '%s'", path);
		goto out;
	}
	for (int i = 0; i < n->n; i++) {
		struct ks_yaml_node *item = n->items[i];
		static const char *const pk[] = {"name", "text", NULL};
		struct ks_yaml_node *nm, *tx;
		if (!(item && item->kind == KS_YAML_MAP)) {
			rc = ks_yaml_error_in(y, item, e, "a property is {name, text}");
			goto out;
		}
		if ((rc = ks_yaml_check_keys(y, item, "a property", pk, NULL, e)) ||
		    (rc = ks_yaml_need(y, item, "name", KS_YAML_SCALAR, &nm, e)) ||
		    (rc = ks_yaml_need(y, item, "text", KS_YAML_SCALAR, &tx, e)))
			goto out;
		struct kv *p = &a->props[a->nprops++];
		p->key = ks_yaml_strdup(nm);
		p->val = ks_yaml_strdup(tx);
	}
	if ((n = ks_yaml_get(root, "defaults")) &&
	    (rc = load_map(y, n, "defaults", 0, &a->defaults, &a->ndefaults, e)))
		goto out;
	if ((rc = ks_yaml_need(y, root, "checks", KS_YAML_SEQ, &n, e)))
		goto out;
	a->checks = calloc((size_t)n->n + 1, sizeof(struct acheck));
	if (!a->checks) {
		rc = ks_error_set(e, KS_ENOMEM, "load '%s'", path);
		goto out;
	}
	for (int i = 0; i < n->n; i++) {
		struct ks_yaml_node *item = n->items[i];
		static const char *const ck[] = {"name", "why", "params", "init", "requires", NULL};
		struct ks_yaml_node *nm, *v;
		if (!(item && item->kind == KS_YAML_MAP)) {
			rc = ks_yaml_error_in(y, item, e, "a check is {name, params, init, requires, why}");
			goto out;
		}
		struct acheck *c = &a->checks[a->nchecks++];
		int col;
		ks_yaml_pos(item, &c->line, &col);
		if ((rc = ks_yaml_check_keys(y, item, "a check", ck, NULL, e)) ||
		    (rc = ks_yaml_need(y, item, "name", KS_YAML_SCALAR, &nm, e)))
			goto out;
		c->name = ks_yaml_strdup(nm);
		for (const char *p = c->name; p && *p; p++)
			if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_') {
				rc = ks_yaml_error_in(y, nm, e, "check names use a-z, 0-9, '-', '_'");
				goto out;
			}
		for (int k = 0; k < a->nchecks - 1; k++)
			if (!strcmp(a->checks[k].name, c->name)) {
				rc = ks_yaml_error_in(y, nm, e, "duplicate check '%s'", c->name);
				goto out;
			}
		if ((v = ks_yaml_get(item, "why")))
			c->why = ks_yaml_strdup(v);
		if ((rc = ks_yaml_need(y, item, "params", KS_YAML_MAP, &v, e)) ||
		    (rc = load_map(y, v, "params", 0, &c->params, &c->nparams, e)))
			goto out;
		if ((v = ks_yaml_get(item, "init")) &&
		    (rc = load_map(y, v, "init", 1, &c->init, &c->ninit, e)))
			goto out;
		if ((v = ks_yaml_get(item, "requires"))) {
			if (!(v && v->kind == KS_YAML_SEQ)) {
				rc = ks_yaml_error_in(y, v, e, "'requires' is a list of param names");
				goto out;
			}
			c->req = calloc((size_t)v->n + 1, sizeof(char *));
			for (int k = 0; c->req && k < v->n; k++)
				if (!(c->req[c->nreq++] = ks_yaml_strdup(v->items[k]))) {
					rc = ks_yaml_error_in(y, v->items[k], e, "'requires' items are names");
					goto out;
				}
		}
	}
out:
	ks_yaml_free(y);
	if (rc)
		aset_release(a);
	return rc;
}

static int aset_load_class(const char *cls, struct aset *a, struct ks_error *e)
{
	const char *file = ks_assertions_class(cls);
	if (!file)
		return ks_error_set(e, KS_ENOTFOUND, "no assertions for class '%s'",
				    cls ? cls : "");
	char path[4096];
	snprintf(path, sizeof(path), "%s/knowledge/assertions/%s.yaml", ks_data_root(), file);
	return aset_load(path, a, e);
}

int ks_assertions_validate_file(const char *path, struct ks_error *e)
{
	struct aset a;
	int rc = aset_load(path, &a, e);
	if (!rc)
		aset_release(&a);
	return rc;
}

int ks_assertions_properties(const char *cls, struct ks_buf *out)
{
	struct aset a;
	struct ks_error e = {0};
	int rc = aset_load_class(cls, &a, &e);
	if (rc)
		return rc;
	ks_buf_addf(out, "Reusable assertions for %s kernels. %s", a.cls, a.prose);
	if (a.prose[0] && a.prose[strlen(a.prose) - 1] != '\n')
		ks_buf_adds(out, "\n");
	for (int i = 0; i < a.nprops; i++)
		ks_buf_addf(out, "- %s: %s\n", a.props[i].key, a.props[i].val);
	aset_release(&a);
	return 0;
}

/* "; input 1 from normal(0, 4)", ", b = 0 everywhere": a check's input in words ("#0" is
 * the task's first input, whatever its name) */
static void init_words(const struct kv *in, const char *sep, struct ks_buf *out)
{
	char *end;
	strtod(in->val, &end);
	int number = end != in->val && !end[strspn(end, " ")];
	if (in->key[0] == '#')
		ks_buf_addf(out, "%sinput %d", sep, atoi(in->key + 1) + 1);
	else
		ks_buf_addf(out, "%s%s", sep, in->key);
	ks_buf_addf(out, number ? " = %s everywhere" : " from %s", in->val);
}

int ks_assertions_prose(const char *cls, struct ks_buf *out)
{
	int rc = ks_assertions_properties(cls, out);
	struct aset a;
	struct ks_error e = {0};
	if (rc || (rc = aset_load_class(cls, &a, &e)))
		return rc;
	ks_buf_adds(out, "Extra correctness checks run on every candidate of this class:\n");
	for (int i = 0; i < a.nchecks; i++) {
		const struct acheck *c = &a.checks[i];
		ks_buf_addf(out, "- %s (", c->name);
		for (int k = 0; k < c->nparams; k++)
			ks_buf_addf(out, "%s%s=%s", k ? " " : "", c->params[k].key, c->params[k].val);
		for (int k = 0; k < c->ninit; k++)
			init_words(&c->init[k], k ? ", " : "; ", out);
		ks_buf_addf(out, ")%s%s\n", c->why ? ": " : "", c->why ? c->why : "");
	}
	aset_release(&a);
	return 0;
}

int ks_assertions_check_why(const char *cls, const char *name, struct ks_buf *out)
{
	struct aset a;
	struct ks_error e = {0};
	int rc = aset_load_class(cls, &a, &e);
	if (rc)
		return rc;
	rc = KS_ENOTFOUND;
	for (int i = 0; i < a.nchecks && rc; i++)
		if (!strcmp(a.checks[i].name, name)) {
			ks_buf_adds(out, a.checks[i].why ? a.checks[i].why : "");
			rc = 0;
		}
	aset_release(&a);
	return rc;
}

/* ---- applying checks to a task ------------------------------------------------------ */

struct bind {
	const struct ks_task *t;
	double *vals; /* per task param; NaN until resolved */
};

static int param_index(const struct ks_task *t, const char *name, size_t len)
{
	for (int i = 0; i < t->nparams; i++)
		if (strlen(t->params[i].name) == len && !strncmp(t->params[i].name, name, len))
			return i;
	return -1;
}

static int bind_lookup(const char *name, size_t len, double *out, void *ctx)
{
	struct bind *b = ctx;
	if (len > 9 && !strncmp(name, "workload.", 9)) {
		int i = param_index(b->t, name + 9, len - 9);
		if (i < 0 || b->t->nworkloads < 1 || !b->t->workloads[0].values)
			return KS_ENOTFOUND;
		*out = b->t->workloads[0].values[i];
		return 0;
	}
	int i = param_index(b->t, name, len);
	if (i < 0 || !isfinite(b->vals[i]))
		return KS_ENOTFOUND;
	*out = b->vals[i];
	return 0;
}

static const char *kv_get(const struct kv *v, int n, const char *key)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].key, key))
			return v[i].val;
	return NULL;
}

/* resolve the values of c for t; 0 and vals filled, or 1 with why set (skip) */
static int resolve(const struct aset *a, const struct acheck *c, const struct ks_task *t,
		   double *vals, char *why, size_t nwhy)
{
	for (int k = 0; k < c->nreq; k++)
		if (param_index(t, c->req[k], strlen(c->req[k])) < 0) {
			snprintf(why, nwhy, "task has no param '%s'", c->req[k]);
			return 1;
		}
	/* params of the check the task lacks are ignored (causal: 0 on a task without a
	 * causal flag means the same); only `requires` makes a param mandatory */
	for (int i = 0; i < t->nparams; i++)
		vals[i] = NAN;
	struct bind b = {t, vals};
	/* expressions may refer to each other: resolve until nothing changes */
	for (int pass = 0; pass <= t->nparams; pass++) {
		int progress = 0;
		for (int i = 0; i < t->nparams; i++) {
			if (isfinite(vals[i]))
				continue;
			const char *ex = kv_get(c->params, c->nparams, t->params[i].name);
			if (!ex)
				ex = kv_get(a->defaults, a->ndefaults, t->params[i].name);
			if (!ex)
				continue;
			double v;
			if (!ks_expr_eval(ex, bind_lookup, &b, &v, NULL, NULL)) {
				vals[i] = v;
				progress = 1;
			}
		}
		if (!progress)
			break;
	}
	for (int i = 0; i < t->nparams; i++) {
		if (isfinite(vals[i])) {
			enum ks_dtype d = t->params[i].dtype;
			if ((d == KS_DT_I32 || d == KS_DT_I64) && vals[i] != floor(vals[i])) {
				snprintf(why, nwhy, "param '%s' = %g is not an integer",
					 t->params[i].name, vals[i]);
				return 1;
			}
			continue;
		}
		const char *ex = kv_get(c->params, c->nparams, t->params[i].name);
		if (!ex)
			ex = kv_get(a->defaults, a->ndefaults, t->params[i].name);
		if (ex)
			snprintf(why, nwhy, "param '%s': '%s' cannot be evaluated for this task",
				 t->params[i].name, ex);
		else
			snprintf(why, nwhy, "param '%s' has no value in the check or the defaults",
				 t->params[i].name);
		return 1;
	}
	/* every tensor non-empty and of bounded size */
	for (int ti = 0; ti < t->ntensors; ti++) {
		const struct ks_tensor_decl *td = &t->tensors[ti];
		double numel = 1;
		for (int d = 0; d < td->ndim; d++) {
			double v;
			if (!td->shape[d] || ks_expr_eval(td->shape[d], bind_lookup, &b, &v, NULL, NULL))
				continue; /* beyond this evaluator: the loader checks it later */
			if (v < 1) {
				snprintf(why, nwhy, "tensor '%s' would be empty (%s = %g)", td->name,
					 td->shape[d], v);
				return 1;
			}
			numel *= v;
		}
		if (numel > KS_ASSERT_MAX_ELEMENTS) {
			snprintf(why, nwhy, "tensor '%s' would have %.0f elements (limit %u)",
				 td->name, numel, KS_ASSERT_MAX_ELEMENTS);
			return 1;
		}
	}
	return 0;
}

static int input_index(const struct ks_task *t, const char *key)
{
	if (key[0] == '#') {
		int i = atoi(key + 1);
		return i < t->ninputs ? i : -1;
	}
	for (int i = 0; i < t->ninputs; i++)
		if (!strcmp(t->tensors[i].name, key))
			return i;
	return -1;
}

int ks_assertions_apply_ex(struct ks_task *t, struct ks_buf *skipped, int *added,
			   struct ks_error *e)
{
	if (added)
		*added = 0;
	if (!ks_assertions_class(t->cls))
		return 0; /* no assertions for this class */
	struct aset a;
	int rc = aset_load_class(t->cls, &a, e);
	if (rc)
		return rc;
	int nadd = 0;
	for (int ci = 0; ci < a.nchecks; ci++) {
		const struct acheck *c = &a.checks[ci];
		char name[160], why[256] = "";
		snprintf(name, sizeof(name), "%s%s", KS_ASSERT_PREFIX, c->name);
		int dup = 0;
		for (int k = 0; k < t->nchecks; k++)
			dup |= t->checks[k].name && !strcmp(t->checks[k].name, name);
		if (dup)
			continue;
		double *vals = calloc((size_t)t->nparams + 1, sizeof(double));
		char **init = calloc((size_t)t->ntensors + 1, sizeof(char *));
		char *nm = strdup(name);
		if (!vals || !init || !nm) {
			free(vals);
			free(init);
			free(nm);
			rc = ks_error_set(e, KS_ENOMEM, "apply assertions to '%s'", t->name);
			break;
		}
		int skip = resolve(&a, c, t, vals, why, sizeof(why));
		for (int k = 0; !skip && k < c->ninit; k++) {
			int ii = input_index(t, c->init[k].key);
			if (ii < 0) {
				snprintf(why, sizeof(why), "task has no input '%s'", c->init[k].key);
				skip = 1;
			} else if (!(init[ii] = strdup(c->init[k].val))) {
				skip = -1;
			}
		}
		if (skip) {
			for (int k = 0; k < t->ntensors; k++)
				free(init[k]);
			free(init);
			free(vals);
			free(nm);
			if (skip < 0) {
				rc = ks_error_set(e, KS_ENOMEM, "apply assertions to '%s'", t->name);
				break;
			}
			ks_info("task '%s': %s skipped: %s", t->name, name, why);
			if (skipped)
				ks_buf_addf(skipped, "%s: skipped: %s\n", name, why);
			continue;
		}
		struct ks_workload *nw =
			realloc(t->checks, (size_t)(t->nchecks + 1) * sizeof(*nw));
		if (!nw) {
			for (int k = 0; k < t->ntensors; k++)
				free(init[k]);
			free(init);
			free(vals);
			free(nm);
			rc = ks_error_set(e, KS_ENOMEM, "apply assertions to '%s'", t->name);
			break;
		}
		t->checks = nw;
		struct ks_workload *w = &nw[t->nchecks++];
		memset(w, 0, sizeof(*w));
		w->name = nm;
		w->values = vals;
		w->init = init;
		w->backends = NULL;
		w->line = c->line;
		nadd++;
	}
	if (added)
		*added = nadd;
	aset_release(&a);
	return rc;
}

int ks_assertions_apply(struct ks_task *t, struct ks_error *e)
{
	return ks_assertions_apply_ex(t, NULL, NULL, e);
}
