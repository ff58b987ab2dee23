/* Loading and validating task.yaml (format: docs/tasks.md).
 *
 * Every error names the file, line and column of the offending node: the value that is
 * wrong, or the mapping that lacks a key. */
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/suggest.h"
#include "ksearch/task.h"
#include "task/task_priv.h"
#include "util/expr.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/yaml.h"

#define TASK_YAML_MAX ((size_t)1 << 20)
#define TASK_README_MAX ((size_t)1 << 20)
#define TASK_MAX_ITEMS 4096

struct loader {
	struct ks_yaml_doc *doc;
	struct ks_task *t;
	struct ks_error *e;
};

static const char *const known_backends[] = {"cpu", "cuda", "mlx", "metal", "opencl", NULL};

int ks_task_ident_ok(const char *s)
{
	static const char *const reserved[] = {
		"auto", "break", "case", "char", "const", "continue", "default", "do", "double",
		"else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
		"register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
		"switch", "typedef", "union", "unsigned", "void", "volatile", "while", "half",
		"bool", "true", "false", "stream", "tensors", "params", "main", NULL};
	if (!s || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return 0;
	if (!strncmp(s, "ks_", 3) || !strncmp(s, "__", 2) || strlen(s) > 64)
		return 0;
	for (int i = 0; reserved[i]; i++)
		if (!strcmp(s, reserved[i]))
			return 0;
	return 1;
}

static int oom(struct loader *L)
{
	return ks_error_set(L->e, KS_ENOMEM, "out of memory loading '%s'", L->doc->path);
}

static int dup_str(struct loader *L, const char *s, char **out)
{
	if (!(*out = strdup(s)))
		return oom(L);
	return 0;
}

static int ident(struct loader *L, const struct ks_yaml_node *n, const char *what)
{
	if (ks_task_ident_ok(n->str))
		return 0;
	return ks_yaml_error(L->doc, n, KS_EPARSE, L->e,
			     "expected %s: a C identifier (letters, digits, '_'; not a C keyword, "
			     "not starting with 'ks_'), got '%s'",
			     what, n->str);
}

/* a name used in the kernel's signature must be unique among params and tensors */
static int unique_name(struct loader *L, const struct ks_yaml_node *n)
{
	struct ks_task *t = L->t;
	for (int i = 0; i < t->nparams; i++)
		if (!strcmp(t->params[i].name, n->str))
			goto dup;
	for (int i = 0; i < t->ntensors; i++)
		if (t->tensors[i].name && !strcmp(t->tensors[i].name, n->str))
			goto dup;
	if (!strcmp(n->str, t->name))
		goto dup;
	return 0;
dup:
	return ks_yaml_error(L->doc, n, KS_EPARSE, L->e,
			     "duplicate name '%s'; expected params, inputs and outputs to have "
			     "distinct names (they become the kernel's arguments)",
			     n->str);
}

static int get_str(struct loader *L, const struct ks_yaml_node *map, const char *key,
		   const char *what, char **out)
{
	const char *s;
	int rc = ks_yaml_str(L->doc, ks_yaml_get(map, key), what, &s, L->e);
	return rc ? rc : dup_str(L, s, out);
}

static int parse_params(struct loader *L, const struct ks_yaml_node *n)
{
	int rc = ks_yaml_expect(L->doc, n, KS_YAML_MAP, "a mapping of param names to i32, i64, "
							"f32 or f64",
				L->e);
	if (rc)
		return rc;
	if (n->n > TASK_MAX_ITEMS)
		return ks_yaml_error(L->doc, n, KS_ELIMIT, L->e, "too many params");
	if (n->n && !(L->t->params = calloc((size_t)n->n, sizeof(struct ks_param))))
		return oom(L);
	for (int i = 0; i < n->n; i++) {
		const struct ks_yaml_node *k = n->keys[i], *v = n->items[i];
		if ((rc = ident(L, k, "a param name")) || (rc = unique_name(L, k)))
			return rc;
		enum ks_dtype dt;
		if (v->kind != KS_YAML_SCALAR || ks_dtype_parse(v->str, &dt) ||
		    (dt != KS_DT_I32 && dt != KS_DT_I64 && dt != KS_DT_F32 && dt != KS_DT_F64))
			return ks_yaml_error(L->doc, v, KS_EPARSE, L->e,
					     "expected the type of param '%s': i32, i64, f32 or f64, "
					     "got '%s'",
					     k->str, v->kind == KS_YAML_SCALAR ? v->str : "a collection");
		if ((rc = dup_str(L, k->str, &L->t->params[i].name)))
			return rc;
		L->t->params[i].dtype = dt;
		L->t->nparams++;
	}
	return 0;
}

/* check an expression's syntax and names once (independent of the workload): names are
 * bound to 1, and only syntax and unknown-name errors count here */
static int check_expr(struct loader *L, const struct ks_yaml_node *n, const char *what)
{
	double *vals = calloc((size_t)(L->t->nparams ? L->t->nparams : 1), sizeof(double));
	if (!vals)
		return oom(L);
	for (int i = 0; i < L->t->nparams; i++)
		vals[i] = 1;
	struct ks_param_scope s = {L->t, vals};
	struct ks_error ee = {0};
	int col = 0;
	double v;
	int rc = ks_expr_eval(n->str, ks_task_param_lookup, &s, &v, &col, &ee);
	free(vals);
	if (!rc || (rc != KS_EPARSE && rc != KS_ENOTFOUND && rc != KS_ELIMIT))
		return 0;
	if (rc == KS_ENOTFOUND && strstr(ee.msg, "unknown name")) {
		struct ks_buf names;
		ks_buf_init(&names, 4096);
		for (int i = 0; i < L->t->nparams; i++)
			ks_buf_addf(&names, "%s%s", i ? ", " : "", L->t->params[i].name);
		rc = ks_yaml_error_at(L->doc, n, col - 1, KS_EPARSE, L->e,
				      "%s in %s; expected a param (%s)", ee.msg, what,
				      names.len ? ks_buf_str(&names) : "none declared");
		ks_buf_release(&names);
		return rc;
	}
	return ks_yaml_error_at(L->doc, n, col - 1, KS_EPARSE, L->e, "%s in %s", ee.msg, what);
}

static int expr_node(struct loader *L, const struct ks_yaml_node *n, const char *what,
		     char **out)
{
	if (!n || n->kind != KS_YAML_SCALAR || !n->len)
		return ks_yaml_error(L->doc, n, KS_EPARSE, L->e,
				     "expected %s: an expression over the params", what);
	int rc = check_expr(L, n, what);
	return rc ? rc : dup_str(L, n->str, out);
}

static int init_node(struct loader *L, const struct ks_yaml_node *n, const char *tensor,
		     char **out)
{
	struct ks_init in;
	struct ks_error ee = {0};
	int col = 0;
	if (!n || n->kind != KS_YAML_SCALAR)
		return ks_yaml_error(L->doc, n, KS_EPARSE, L->e,
				     "expected the initialiser of '%s' as a string, e.g. "
				     "\"normal(0, 1)\"",
				     tensor);
	if (ks_init_parse(n->str, &in, &col, &ee))
		return ks_yaml_error_at(L->doc, n, col - 1, KS_EPARSE, L->e,
					"bad initialiser of '%s': %s", tensor, ee.msg);
	return out ? dup_str(L, n->str, out) : 0;
}

static int parse_tensors(struct loader *L, const struct ks_yaml_node *n, int outputs)
{
	static const char *const in_keys[] = {"dtype", "shape", "init", NULL};
	static const char *const out_keys[] = {"dtype", "shape", NULL};
	static const char *const req[] = {"dtype", "shape", NULL};
	struct ks_task *t = L->t;
	int rc = ks_yaml_expect(L->doc, n, KS_YAML_MAP,
				outputs ? "a mapping of output names to {dtype, shape}"
					: "a mapping of input names to {dtype, shape, init}",
				L->e);
	if (rc)
		return rc;
	if (outputs && n->n == 0)
		return ks_yaml_error(L->doc, n, KS_EPARSE, L->e, "expected at least one output");
	if (t->ntensors + n->n > TASK_MAX_ITEMS)
		return ks_yaml_error(L->doc, n, KS_ELIMIT, L->e, "too many tensors");
	struct ks_tensor_decl *tv =
		realloc(t->tensors, (size_t)(t->ntensors + n->n + 1) * sizeof(*tv));
	if (!tv)
		return oom(L);
	t->tensors = tv;
	for (int i = 0; i < n->n; i++) {
		const struct ks_yaml_node *k = n->keys[i], *v = n->items[i];
		char where[160];
		snprintf(where, sizeof(where), "%s '%s'", outputs ? "output" : "input", k->str);
		if ((rc = ident(L, k, outputs ? "an output name" : "an input name")) ||
		    (rc = unique_name(L, k)))
			return rc;
		if ((rc = ks_yaml_check_keys(L->doc, v, where, outputs ? out_keys : in_keys, req,
					     L->e)))
			return rc;
		struct ks_tensor_decl *d = &t->tensors[t->ntensors];
		memset(d, 0, sizeof(*d));
		d->is_output = outputs;
		if ((rc = dup_str(L, k->str, &d->name)))
			return rc;
		t->ntensors++;
		const struct ks_yaml_node *dt = ks_yaml_get(v, "dtype");
		if (dt->kind != KS_YAML_SCALAR || ks_dtype_parse(dt->str, &d->dtype))
			return ks_yaml_error(L->doc, dt, KS_EPARSE, L->e,
					     "expected the dtype of %s: f32, f64, f16, bf16, i32 or "
					     "i64, got '%s'",
					     where, dt->kind == KS_YAML_SCALAR ? dt->str : "a collection");
		const struct ks_yaml_node *sh = ks_yaml_get(v, "shape");
		if (sh->kind != KS_YAML_SEQ)
			return ks_yaml_error(L->doc, sh, KS_EPARSE, L->e,
					     "expected the shape of %s as a list of dimensions, e.g. "
					     "[rows, cols]",
					     where);
		if (sh->n > KS_MAX_DIMS)
			return ks_yaml_error(L->doc, sh, KS_EPARSE, L->e,
					     "expected at most %d dimensions, got %d", KS_MAX_DIMS,
					     sh->n);
		char what[200];
		for (int j = 0; j < sh->n; j++) {
			snprintf(what, sizeof(what), "dimension %d of the shape of %s", j, where);
			if ((rc = expr_node(L, sh->items[j], what, &d->shape[j])))
				return rc;
			d->ndim++;
		}
		if (!outputs) {
			const struct ks_yaml_node *in = ks_yaml_get(v, "init");
			if (in) {
				if ((rc = init_node(L, in, k->str, &d->init)))
					return rc;
			} else if (d->dtype == KS_DT_I32 || d->dtype == KS_DT_I64) {
				return ks_yaml_error(L->doc, v, KS_EPARSE, L->e,
						     "%s lacks the key 'init' (integer inputs need "
						     "one, e.g. \"randint(0, 10)\")",
						     where);
			} else if ((rc = dup_str(L, "normal(0, 1)", &d->init))) {
				return rc;
			}
		}
	}
	if (!outputs)
		t->ninputs = t->ntensors;
	return 0;
}

static int parse_tolerance(struct loader *L, const struct ks_yaml_node *n)
{
	static const char *const keys[] = {"atol", "rtol", "l2", NULL};
	struct ks_task *t = L->t;
	t->atol = 1e-5;
	t->rtol = 1e-5;
	t->l2 = -1;
	if (!n)
		goto out;
	int rc = ks_yaml_check_keys(L->doc, n, "tolerance", keys, NULL, L->e);
	if (rc)
		return rc;
	double *dst[] = {&t->atol, &t->rtol, &t->l2};
	for (int i = 0; i < 3; i++) {
		const struct ks_yaml_node *v = ks_yaml_get(n, keys[i]);
		if (!v)
			continue;
		char what[64];
		snprintf(what, sizeof(what), "a number >= 0 for '%s'", keys[i]);
		if ((rc = ks_yaml_number(L->doc, v, what, dst[i], L->e)))
			return rc;
		if (*dst[i] < 0)
			return ks_yaml_error(L->doc, v, KS_EPARSE, L->e, "expected %s, got '%s'",
					     what, v->str);
	}
out:
	if (t->l2 < 0)
		t->l2 = t->rtol > 1e-6 ? t->rtol : 1e-6;
	return 0;
}

static void workload_release(struct ks_workload *w, int ntensors)
{
	free(w->name);
	free(w->values);
	if (w->init)
		for (int i = 0; i < ntensors; i++)
			free(w->init[i]);
	free(w->init);
	if (w->backends)
		for (char **b = w->backends; *b; b++)
			free(*b);
	free(w->backends);
}

/* evaluate every shape, flops and bytes under w; errors point at the workload */
static int check_workload_values(struct loader *L, const struct ks_yaml_node *wn,
				 struct ks_workload *w)
{
	struct ks_task *t = L->t;
	struct ks_error ee = {0};
	for (int i = 0; i < t->ntensors; i++) {
		int64_t dims[KS_MAX_DIMS];
		size_t numel;
		if (ks_workload_shape(t, w, i, dims, &numel, &ee))
			return ks_yaml_error(L->doc, wn, KS_EPARSE, L->e,
					     "expected a positive shape under this %s: %s",
					     w->name ? "check" : "workload", ee.msg);
	}
	const char *names[] = {"flops", "bytes"};
	const char *exprs[] = {t->flops, t->bytes};
	for (int i = 0; i < 2; i++) {
		double v;
		if (ks_workload_expr(t, w, exprs[i], &v, &ee))
			return ks_yaml_error(L->doc, wn, KS_EPARSE, L->e,
					     "expected '%s' to evaluate under this %s: %s", names[i],
					     w->name ? "check" : "workload", ee.msg);
		if (!(v >= 0) || isinf(v))
			return ks_yaml_error(L->doc, wn, KS_EPARSE, L->e,
					     "expected '%s' >= 0 under this %s, got %g", names[i],
					     w->name ? "check" : "workload", v);
	}
	return 0;
}

static int parse_workload(struct loader *L, const struct ks_yaml_node *n, int is_check,
			  struct ks_workload *w)
{
	struct ks_task *t = L->t;
	const char *kind = is_check ? "check" : "workload";
	int rc = ks_yaml_expect(L->doc, n, KS_YAML_MAP,
				is_check ? "a check: {name: ..., <param>: value, ...}"
					 : "a workload: {<param>: value, ...}",
				L->e);
	if (rc)
		return rc;
	w->line = n->line;
	if (!(w->values = calloc((size_t)(t->nparams ? t->nparams : 1), sizeof(double))) ||
	    !(w->init = calloc((size_t)(t->ntensors ? t->ntensors : 1), sizeof(char *))))
		return oom(L);
	/* allowed keys: the params, then name (checks), init, backends */
	const char **allowed = calloc((size_t)t->nparams + 4, sizeof(char *));
	if (!allowed)
		return oom(L);
	int na = 0;
	if (is_check)
		allowed[na++] = "name";
	for (int i = 0; i < t->nparams; i++)
		allowed[na++] = t->params[i].name;
	allowed[na++] = "init";
	allowed[na++] = "backends";
	rc = ks_yaml_check_keys(L->doc, n, kind, allowed, NULL, L->e);
	free(allowed);
	if (rc)
		return rc;
	if (is_check) {
		const struct ks_yaml_node *nm = ks_yaml_get(n, "name");
		const char *s;
		if (!nm)
			return ks_yaml_error(L->doc, n, KS_EPARSE, L->e,
					     "check lacks the key 'name'");
		if ((rc = ks_yaml_str(L->doc, nm, "a check name", &s, L->e)))
			return rc;
		for (const char *p = nm->str; *p; p++)
			if (!isalnum((unsigned char)*p) && !strchr("-_.", *p))
				return ks_yaml_error(L->doc, nm, KS_EPARSE, L->e,
						     "expected a check name of letters, digits, "
						     "'-', '_' and '.', got '%s'",
						     nm->str);
		for (int i = 0; i < t->nchecks; i++)
			if (!strcmp(t->checks[i].name, nm->str))
				return ks_yaml_error(L->doc, nm, KS_EPARSE, L->e,
						     "duplicate check name '%s' (first at line %d)",
						     nm->str, t->checks[i].line);
		if ((rc = dup_str(L, nm->str, &w->name)))
			return rc;
	}
	for (int i = 0; i < t->nparams; i++) {
		const struct ks_param *p = &t->params[i];
		const struct ks_yaml_node *v = ks_yaml_get(n, p->name);
		char what[160];
		if (!v)
			return ks_yaml_error(L->doc, n, KS_EPARSE, L->e,
					     "%s lacks the param '%s' (every %s gives every param)",
					     kind, p->name, kind);
		if (p->dtype == KS_DT_I32 || p->dtype == KS_DT_I64) {
			int64_t x;
			snprintf(what, sizeof(what), "a value for the %s param '%s'",
				 ks_dtype_name(p->dtype), p->name);
			int64_t lim = p->dtype == KS_DT_I32 ? INT32_MAX : ((int64_t)1 << 53);
			if ((rc = ks_yaml_int(L->doc, v, what, -lim, lim, &x, L->e)))
				return rc;
			w->values[i] = (double)x;
		} else {
			snprintf(what, sizeof(what), "a number for the %s param '%s'",
				 ks_dtype_name(p->dtype), p->name);
			if ((rc = ks_yaml_number(L->doc, v, what, &w->values[i], L->e)))
				return rc;
		}
	}
	const struct ks_yaml_node *in = ks_yaml_get(n, "init");
	if (in) {
		if ((rc = ks_yaml_expect(L->doc, in, KS_YAML_MAP,
					 "a mapping of input names to initialisers", L->e)))
			return rc;
		for (int j = 0; j < in->n; j++) {
			int idx = -1;
			for (int i = 0; i < t->ninputs; i++)
				if (!strcmp(t->tensors[i].name, in->keys[j]->str))
					idx = i;
			if (idx < 0)
				return ks_yaml_error(L->doc, in->keys[j], KS_EPARSE, L->e,
						     "expected the name of an input, got '%s'",
						     in->keys[j]->str);
			if ((rc = init_node(L, in->items[j], in->keys[j]->str, &w->init[idx])))
				return rc;
		}
	}
	const struct ks_yaml_node *be = ks_yaml_get(n, "backends");
	if (be) {
		if (be->kind != KS_YAML_SEQ || be->n == 0)
			return ks_yaml_error(L->doc, be, KS_EPARSE, L->e,
					     "expected a non-empty list of backends, e.g. [cuda]");
		if (!(w->backends = calloc((size_t)be->n + 1, sizeof(char *))))
			return oom(L);
		for (int j = 0; j < be->n; j++) {
			const struct ks_yaml_node *b = be->items[j];
			int known = 0;
			for (int k = 0; known_backends[k]; k++)
				known |= b->kind == KS_YAML_SCALAR && !strcmp(b->str, known_backends[k]);
			if (!known)
				return ks_yaml_error(L->doc, b, KS_EPARSE, L->e,
						     "expected a backend (cpu, cuda, mlx, metal, opencl), "
						     "got '%s'",
						     b->kind == KS_YAML_SCALAR ? b->str : "a collection");
			if ((rc = dup_str(L, b->str, &w->backends[j])))
				return rc;
		}
	}
	return check_workload_values(L, n, w);
}

static int parse_workloads(struct loader *L, const struct ks_yaml_node *n, int is_check)
{
	struct ks_task *t = L->t;
	const char *what = is_check ? "a list of checks" : "a list of workloads";
	int rc = ks_yaml_expect(L->doc, n, KS_YAML_SEQ, what, L->e);
	if (rc)
		return rc;
	if (!is_check && n->n == 0)
		return ks_yaml_error(L->doc, n, KS_EPARSE, L->e, "expected at least one workload");
	if (n->n > TASK_MAX_ITEMS)
		return ks_yaml_error(L->doc, n, KS_ELIMIT, L->e, "too many entries");
	struct ks_workload *v = calloc((size_t)n->n + 1, sizeof(*v));
	if (!v)
		return oom(L);
	if (is_check)
		t->checks = v;
	else
		t->workloads = v;
	for (int i = 0; i < n->n; i++) {
		rc = parse_workload(L, n->items[i], is_check, &v[i]);
		/* count it even when it failed so ks_task_free releases what it holds */
		if (is_check)
			t->nchecks++;
		else
			t->nworkloads++;
		if (rc)
			return rc;
	}
	return 0;
}

static int parse_task(struct loader *L, const char *dir)
{
	static const char *const keys[] = {"name",    "class",   "summary", "params",
					   "inputs",  "outputs", "flops",   "bytes",
					   "tolerance", "workloads", "checks", "library", NULL};
	static const char *const req[] = {"name",  "class", "summary", "params",   "inputs",
					  "outputs", "flops", "bytes",   "workloads", NULL};
	const struct ks_yaml_node *root = L->doc->root;
	struct ks_task *t = L->t;
	int rc;
	if (!root)
		return ks_yaml_error(L->doc, NULL, KS_EPARSE, L->e,
				     "expected a task: a mapping with the keys %s", "name, class, "
				     "summary, params, inputs, outputs, flops, bytes, workloads");
	if ((rc = ks_yaml_check_keys(L->doc, root, "task", keys, req, L->e)))
		return rc;
	const struct ks_yaml_node *name = ks_yaml_get(root, "name");
	const char *s;
	if ((rc = ks_yaml_str(L->doc, name, "the task name", &s, L->e)) ||
	    (rc = ident(L, name, "a task name")))
		return rc;
	/* the folder name is how users find the task; the two must agree */
	const char *base = strrchr(dir, '/');
	base = base ? base + 1 : dir;
	if (strcmp(base, name->str) && strcmp(base, ".") && strcmp(base, ".."))
		return ks_yaml_error(L->doc, name, KS_EPARSE, L->e,
				     "expected the task name to match its folder '%s', got '%s'",
				     base, name->str);
	if ((rc = dup_str(L, name->str, &t->name)) ||
	    (rc = get_str(L, root, "class", "the kernel class (reduction, scan, ...)", &t->cls)) ||
	    (rc = get_str(L, root, "summary", "a one-line summary", &t->summary)) ||
	    (rc = parse_params(L, ks_yaml_get(root, "params"))) ||
	    (rc = parse_tensors(L, ks_yaml_get(root, "inputs"), 0)) ||
	    (rc = parse_tensors(L, ks_yaml_get(root, "outputs"), 1)) ||
	    (rc = expr_node(L, ks_yaml_get(root, "flops"), "flops", &t->flops)) ||
	    (rc = expr_node(L, ks_yaml_get(root, "bytes"), "bytes", &t->bytes)) ||
	    (rc = parse_tolerance(L, ks_yaml_get(root, "tolerance"))) ||
	    (rc = parse_workloads(L, ks_yaml_get(root, "workloads"), 0)))
		return rc;
	const struct ks_yaml_node *checks = ks_yaml_get(root, "checks");
	if (checks && (rc = parse_workloads(L, checks, 1)))
		return rc;
	const struct ks_yaml_node *lib = ks_yaml_get(root, "library");
	if (lib && (rc = ks_task_parse_libraries(L->doc, t, lib, known_backends, L->e)))
		return rc;
	return 0;
}


/* "unknown task 'sofmax' (no folder '...'); did you mean 'softmax'?" */
static int unknown_task(const char *name, const char *dir, struct ks_error *e)
{
	char **names = NULL;
	int n = 0;
	const char *near = NULL;
	if (ks_task_list(&names, &n, NULL) == 0)
		near = ks_suggest(name, (const char *const *)names, n);
	int rc = ks_error_set(e, KS_ENOTFOUND, "unknown task '%s' (no folder '%s')%s%s%s", name, dir,
			      near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
	ks_strv_free(names, n);
	return rc;
}

static int resolve_dir(const char *name_or_dir, char *out, size_t n, struct ks_error *e)
{
	if (!name_or_dir || !name_or_dir[0])
		return ks_error_set(e, KS_EINVAL, "empty task name");
	int is_path = strchr(name_or_dir, '/') != NULL || name_or_dir[0] == '.';
	if (!is_path) {
		char tasks[4096];
		if (ks_path_join(tasks, sizeof(tasks), ks_data_root(), "tasks") ||
		    ks_path_join(out, n, tasks, name_or_dir))
			return ks_error_set(e, KS_ELIMIT, "task name '%s' too long", name_or_dir);
		if (ks_is_dir(out))
			return 0;
		if (!ks_is_dir(name_or_dir))
			return unknown_task(name_or_dir, out, e);
	}
	if (strlen(name_or_dir) >= n)
		return ks_error_set(e, KS_ELIMIT, "task path '%s' too long", name_or_dir);
	strcpy(out, name_or_dir);
	/* drop trailing slashes so the folder's base name is its last component */
	size_t len = strlen(out);
	while (len > 1 && out[len - 1] == '/')
		out[--len] = 0;
	if (!ks_is_dir(out))
		return ks_error_set(e, KS_ENOTFOUND, "task folder '%s' does not exist", out);
	return 0;
}

int ks_task_load(const char *name_or_dir, struct ks_task **out, struct ks_error *e)
{
	char dir[4096], path[4200];
	struct ks_task *t = NULL;
	struct loader L = {NULL, NULL, e};
	*out = NULL;
	int rc = resolve_dir(name_or_dir, dir, sizeof(dir), e);
	if (rc)
		return rc;
	if (ks_path_join(path, sizeof(path), dir, "task.yaml"))
		return ks_error_set(e, KS_ELIMIT, "task path '%s' too long", dir);
	if (!ks_path_exists(path))
		return ks_error_set(e, KS_ENOTFOUND, "'%s' is not a task: it has no task.yaml",
				    dir);
	if ((rc = ks_task_files_check(dir, e)) ||
	    (rc = ks_yaml_load_file(path, TASK_YAML_MAX, &L.doc, e)))
		return rc;
	if (!(t = calloc(1, sizeof(*t))) || !(t->dir = strdup(dir)) ||
	    !(t->yaml_path = strdup(path))) {
		rc = ks_error_set(e, KS_ENOMEM, "out of memory loading '%s'", path);
		goto out;
	}
	L.t = t;
	if ((rc = parse_task(&L, dir)))
		goto out;
	char readme[4200];
	if (!ks_path_join(readme, sizeof(readme), dir, "README.md") && ks_path_exists(readme)) {
		struct ks_buf b;
		ks_buf_init(&b, 0);
		if ((rc = ks_file_read(readme, TASK_README_MAX, &b, e))) {
			ks_buf_release(&b);
			goto out;
		}
		t->readme = ks_buf_detach(&b, NULL);
	}
out:
	ks_yaml_free(L.doc);
	if (rc) {
		ks_task_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void ks_task_free(struct ks_task *t)
{
	if (!t)
		return;
	free(t->name);
	free(t->cls);
	free(t->summary);
	free(t->dir);
	free(t->yaml_path);
	free(t->readme);
	for (int i = 0; i < t->nparams; i++)
		free(t->params[i].name);
	free(t->params);
	for (int i = 0; i < t->ntensors; i++) {
		free(t->tensors[i].name);
		for (int k = 0; k < t->tensors[i].ndim; k++)
			free(t->tensors[i].shape[k]);
		free(t->tensors[i].init);
	}
	free(t->tensors);
	free(t->flops);
	free(t->bytes);
	for (int i = 0; i < t->nworkloads; i++)
		workload_release(&t->workloads[i], t->ntensors);
	free(t->workloads);
	for (int i = 0; i < t->nchecks; i++)
		workload_release(&t->checks[i], t->ntensors);
	free(t->checks);
	ks_task_libraries_free(t);
	free(t);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ks_task_list(char ***names, int *n, struct ks_error *e)
{
	char tasks[4096];
	*names = NULL;
	*n = 0;
	if (ks_path_join(tasks, sizeof(tasks), ks_data_root(), "tasks"))
		return ks_error_set(e, KS_ELIMIT, "data root '%s' too long", ks_data_root());
	DIR *d = opendir(tasks);
	if (!d)
		return 0; /* no tasks folder: no tasks */
	char **v = NULL;
	int count = 0, rc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		char dir[4400], yaml[4500];
		if (de->d_name[0] == '.')
			continue;
		if (ks_path_join(dir, sizeof(dir), tasks, de->d_name) ||
		    ks_path_join(yaml, sizeof(yaml), dir, "task.yaml") || !ks_is_dir(dir) ||
		    !ks_path_exists(yaml))
			continue;
		if (count >= TASK_MAX_ITEMS) {
			rc = ks_error_set(e, KS_ELIMIT, "more than %d tasks in '%s'", TASK_MAX_ITEMS,
					  tasks);
			break;
		}
		char **nv = realloc(v, (size_t)(count + 1) * sizeof(*nv));
		if (!nv || !(nv[count] = strdup(de->d_name))) {
			v = nv ? nv : v;
			rc = ks_error_set(e, KS_ENOMEM, "out of memory listing '%s'", tasks);
			break;
		}
		v = nv;
		count++;
	}
	closedir(d);
	if (rc) {
		ks_strv_free(v, count);
		return rc;
	}
	if (count)
		qsort(v, (size_t)count, sizeof(*v), cmp_str);
	*names = v;
	*n = count;
	return 0;
}

void ks_strv_free(char **v, int n)
{
	if (!v)
		return;
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* source: a reference kernel, hashed with its includes expanded, so that a change to an
 * included file changes the hash (and so the cached references) */
static int hash_file(struct ks_sha256 *h, const char *path, int source, struct ks_error *e)
{
	struct ks_buf b;
	ks_buf_init(&b, 0);
	int rc = source ? ks_kernel_source_read(path, (size_t)64 << 20, &b, e)
			: ks_file_read(path, (size_t)64 << 20, &b, e);
	if (rc == KS_ENOTFOUND) {
		ks_sha256_update_str(h, "(absent)");
		rc = 0;
	} else if (!rc) {
		uint64_t len = b.len;
		ks_sha256_update(h, &len, sizeof(len));
		ks_sha256_update(h, b.data ? b.data : "", b.len);
	}
	ks_buf_release(&b);
	return rc;
}

int ks_task_hash_files(const struct ks_task *t, const char *const *extra_files, char out[65],
		       struct ks_error *e)
{
	char ref[4200];
	struct ks_sha256 h;
	ks_sha256_init(&h);
	ks_sha256_update_str(&h, "ksearch task v1");
	int rc = hash_file(&h, t->yaml_path, 0, e);
	if (rc)
		return rc;
	if (ks_path_join(ref, sizeof(ref), t->dir, "reference.c"))
		return ks_error_set(e, KS_ELIMIT, "task path '%s' too long", t->dir);
	if ((rc = hash_file(&h, ref, 1, e)))
		return rc;
	/* a Python reference, only when there is one: other tasks' hashes stay what they were */
	if (ks_path_join(ref, sizeof(ref), t->dir, "reference.py"))
		return ks_error_set(e, KS_ELIMIT, "task path '%s' too long", t->dir);
	if (ks_path_exists(ref)) {
		ks_sha256_update_str(&h, "reference.py");
		if ((rc = hash_file(&h, ref, 1, e)))
			return rc;
	}
	/* extra ground truth (the backends' device references): only those that exist, so the
	 * hash of a task without one (and its cached references) stays what it was */
	for (int i = 0; extra_files && extra_files[i]; i++) {
		if (ks_path_join(ref, sizeof(ref), t->dir, extra_files[i]))
			return ks_error_set(e, KS_ELIMIT, "task path '%s' too long", t->dir);
		if (ks_path_exists(ref)) {
			ks_sha256_update_str(&h, extra_files[i]);
			if ((rc = hash_file(&h, ref, 1, e)))
				return rc;
		}
	}
	ks_sha256_hex(&h, out);
	return 0;
}
