/* flashinfer-bench problems: a Definition (JSON: axes, inputs, outputs, a Python reference
 * whose entry point is run()) and optionally its Workloads (JSONL, one workload per line,
 * bare or inside a Trace-shaped object).  Axes become i32 params (const axes keep their
 * value in every workload), scalar inputs (shape null) become params, tensors keep their
 * symbolic shapes. */
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/import_impl.h"
#include "util/fs.h"

static const struct {
	const char *fib, *ks, *param;
} dtypes[] = {
	{"float32", "f32", "f32"}, {"float64", "f64", "f64"}, {"float16", "f16", "f32"},
	{"bfloat16", "bf16", "f32"}, {"int32", "i32", "i32"}, {"int64", "i64", "i64"},
	{"bool", NULL, "i32"},
};

struct fib {
	struct imp_task *it;
	const char *path;
	const char *wl_path; /* the workloads file, NULL: none */
	int naxes;
	char axis_src[IMP_MAX][IMP_NAME]; /* axis names as the definition spells them */
	int axis_const[IMP_MAX];
	double axis_value[IMP_MAX];
	int nscalars;
	char scalar_src[IMP_MAX][IMP_NAME]; /* scalar inputs, by param index - naxes */
	int nrun;
	char run_args[IMP_MAX][IMP_NAME];   /* run()'s arguments: every input in order */
	char run_torch[IMP_MAX][16];        /* torch dtype of tensor arguments, "" for scalars */
	int random_sources;                 /* safetensors inputs drawn at random instead */
	int max_workloads;                  /* distinct workloads kept before refusing */
	json_t *uuids;                      /* per distinct workload, the uuids of its lines */
};

static int dtype_find(const char *fib)
{
	for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (!strcmp(dtypes[i].fib, fib))
			return (int)i;
	return -1;
}

static const char *str_field(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* the earlier axis, input or output whose C name is name, or NULL */
static const char *name_taken(const struct fib *f, const char *name)
{
	for (int i = 0; i < f->it->nparams; i++)
		if (!strcmp(f->it->params[i].name, name))
			return i < f->naxes ? "axis" : "input";
	for (int i = 0; i < f->it->ntensors; i++)
		if (!strcmp(f->it->tensors[i].name, name))
			return f->it->tensors[i].is_output ? "output" : "input";
	return NULL;
}

static int add_param(struct fib *f, const char *what, const char *src, const char *type,
		     struct ks_error *e)
{
	struct imp_task *it = f->it;
	if (it->nparams >= IMP_MAX)
		return ks_error_set(e, KS_ELIMIT, "'%s': more than %d axes and scalar inputs", f->path,
				    IMP_MAX);
	char id[IMP_NAME];
	imp_identifier(src, "a_", id, sizeof(id));
	const char *other = name_taken(f, id);
	if (other)
		return ks_error_set(e, KS_EPARSE, "'%s': %s '%s' has the name of an %s ('%s' in C)",
				    f->path, what, src, other, id);
	struct imp_param *p = &it->params[it->nparams++];
	snprintf(p->name, sizeof(p->name), "%s", id);
	p->type = type;
	return 0;
}

static int read_axes(struct fib *f, json_t *axes, struct ks_error *e)
{
	if (!json_is_object(axes) || !json_object_size(axes))
		return ks_error_set(e, KS_EPARSE, "definition '%s' has no 'axes' object", f->path);
	const char *key;
	json_t *ax;
	json_object_foreach(axes, key, ax) {
		const char *type = str_field(ax, "type");
		int is_const = type && !strcmp(type, "const");
		if (!type || (!is_const && strcmp(type, "var")))
			return ks_error_set(e, KS_EPARSE, "axis '%s' of '%s': type must be \"const\" or \"var\"",
					    key, f->path);
		json_t *v = json_object_get(ax, "value");
		if (is_const && !json_is_integer(v))
			return ks_error_set(e, KS_EPARSE, "const axis '%s' of '%s' has no integer value",
					    key, f->path);
		if (is_const && (json_integer_value(v) < 1 || json_integer_value(v) > INT32_MAX))
			return ks_error_set(e, KS_EPARSE, "'%s': const axis '%s' is %lld, not a positive "
					    "32-bit integer", f->path, key,
					    (long long)json_integer_value(v));
		int rc = add_param(f, "axis", key, "i32", e);
		if (rc)
			return rc;
		snprintf(f->axis_src[f->naxes], IMP_NAME, "%s", key);
		f->axis_const[f->naxes] = is_const;
		/* a kernel may specialise a const axis (flashinfer-bench's own gemm solutions
		 * hard-code N and K): the generated check keeps its value */
		if (is_const)
			f->it->fixed |= 1u << (f->it->nparams - 1);
		f->axis_value[f->naxes++] = is_const ? (double)json_integer_value(v) : 0;
	}
	return 0;
}

/* the param name of axis src, or NULL */
static const char *axis_param(const struct fib *f, const char *src)
{
	for (int i = 0; i < f->naxes; i++)
		if (!strcmp(f->axis_src[i], src))
			return f->it->params[i].name;
	return NULL;
}

static int read_tensors(struct fib *f, json_t *obj, int is_output, struct ks_error *e)
{
	const char *what = is_output ? "outputs" : "inputs";
	if (!json_is_object(obj) || (is_output && !json_object_size(obj)))
		return ks_error_set(e, KS_EPARSE, "definition '%s' has no '%s' object", f->path, what);
	const char *key;
	json_t *td;
	json_object_foreach(obj, key, td) {
		const char *dt = str_field(td, "dtype");
		int d = dt ? dtype_find(dt) : -1;
		json_t *shape = json_object_get(td, "shape");
		if (d < 0)
			return ks_error_set(e, KS_EUNAVAILABLE, "dtype '%s' of %s '%s' has no ksearch equivalent "
					    "(float32, float64, float16, bfloat16, int32, int64)",
					    dt ? dt : "(none)", is_output ? "output" : "input", key);
		if (json_is_null(shape) || !shape) {
			if (is_output)
				return ks_error_set(e, KS_EUNAVAILABLE, "scalar output '%s' is not supported", key);
			int rc = add_param(f, "input", key, dtypes[d].param, e);
			if (rc)
				return rc;
			snprintf(f->scalar_src[f->nscalars++], IMP_NAME, "%s", key);
			snprintf(f->run_args[f->nrun], IMP_NAME, "%s", f->it->params[f->it->nparams - 1].name);
			f->run_torch[f->nrun++][0] = '\0';
			continue;
		}
		if (!dtypes[d].ks)
			return ks_error_set(e, KS_EUNAVAILABLE, "dtype 'bool' of tensor '%s' has no ksearch equivalent", key);
		if (!json_is_array(shape) || json_array_size(shape) > KS_MAX_DIMS)
			return ks_error_set(e, KS_EPARSE, "shape of '%s' must be a list of at most %d axis names",
					    key, KS_MAX_DIMS);
		if (f->it->ntensors >= IMP_MAX || f->nrun >= IMP_MAX)
			return ks_error_set(e, KS_ELIMIT, "more than %d tensors", IMP_MAX);
		char id[IMP_NAME];
		imp_identifier(key, "t_", id, sizeof(id));
		const char *other = name_taken(f, id);
		if (other)
			return ks_error_set(e, KS_EPARSE, "'%s': %s '%s' has the name of an %s ('%s' in C)",
					    f->path, is_output ? "output" : "input", key, other, id);
		struct imp_tensor *t = &f->it->tensors[f->it->ntensors++];
		snprintf(t->name, sizeof(t->name), "%s", id);
		t->dtype = dtypes[d].ks;
		t->is_output = is_output;
		if (!is_output)
			t->init = d >= 4 ? "randint(0, 8)" : "normal(0, 1)";
		size_t k;
		json_t *ax;
		json_array_foreach(shape, k, ax) {
			const char *p = json_is_string(ax) ? axis_param(f, json_string_value(ax)) : NULL;
			if (!p)
				return ks_error_set(e, KS_EPARSE, "dimension %zu of '%s' is not one of the axes",
						    k, key);
			snprintf(t->shape[k], IMP_NAME, "%s", p);
		}
		t->ndim = (int)json_array_size(shape);
		if (!is_output) {
			snprintf(f->run_args[f->nrun], IMP_NAME, "%s", t->name);
			snprintf(f->run_torch[f->nrun++], 16, "%s", dt);
		}
	}
	return 0;
}

static int axis_index(const struct fib *f, const char *src)
{
	for (int i = 0; i < f->naxes; i++)
		if (!strcmp(f->axis_src[i], src))
			return i;
	return -1;
}

static int scalar_index(const struct fib *f, const char *src)
{
	for (int i = 0; i < f->nscalars; i++)
		if (!strcmp(f->scalar_src[i], src))
			return i;
	return -1;
}

/* what the workload says of its inputs: scalars known, types known */
static int check_workload_inputs(struct fib *f, json_t *inputs, int line, struct ks_error *e)
{
	const char *key;
	json_t *in;
	json_object_foreach(inputs, key, in) {
		const char *type = str_field(in, "type");
		int is_scalar = scalar_index(f, key) >= 0, known = is_scalar;
		char id[IMP_NAME];
		imp_identifier(key, "t_", id, sizeof(id));
		for (int i = 0; i < f->nrun && !known; i++)
			known = f->run_torch[i][0] && !strcmp(f->run_args[i], id);
		if (!known)
			return ks_error_set(e, KS_EPARSE, "%s:%d: input '%s' is not an input of '%s'",
					    f->wl_path, line, key, f->path);
		if (!type || (strcmp(type, "scalar") && strcmp(type, "random") &&
			      strcmp(type, "safetensors")))
			return ks_error_set(e, KS_EPARSE, "%s:%d: input '%s' has type '%s' (expected "
					    "\"random\", \"scalar\" or \"safetensors\")", f->wl_path,
					    line, key, type ? type : "(none)");
		if (is_scalar != !strcmp(type, "scalar"))
			return ks_error_set(e, KS_EPARSE, "%s:%d: input '%s' is %s, not of type '%s'",
					    f->wl_path, line, key, is_scalar ? "a scalar" : "a tensor", type);
		f->random_sources += !strcmp(type, "safetensors");
	}
	return 0;
}

/* one workload (a Workload object) into values row w */
static int read_workload(struct fib *f, json_t *wl, int line, struct ks_error *e)
{
	struct imp_task *it = f->it;
	json_t *axes = json_object_get(wl, "axes"), *inputs = json_object_get(wl, "inputs");
	double *v = imp_workload_row(it, it->nworkloads);
	if (!v)
		return ks_error_set(e, KS_ENOMEM, "%s:%d: out of memory for the workloads", f->wl_path,
				    line);
	memset(v, 0, sizeof(double) * IMP_MAX);
	const char *key;
	json_t *x;
	json_object_foreach(axes, key, x) {
		if (axis_index(f, key) < 0)
			return ks_error_set(e, KS_EPARSE, "%s:%d: axis '%s' is not an axis of '%s'",
					    f->wl_path, line, key, f->path);
	}
	for (int i = 0; i < f->naxes; i++) {
		x = json_object_get(axes, f->axis_src[i]);
		if (f->axis_const[i]) {
			v[i] = f->axis_value[i];
		} else if (!json_is_integer(x)) {
			return ks_error_set(e, KS_EPARSE, "%s:%d: the workload lacks an integer for axis '%s'",
					    f->wl_path, line, f->axis_src[i]);
		} else if (json_integer_value(x) < 1 || json_integer_value(x) > INT32_MAX) {
			return ks_error_set(e, KS_EPARSE, "%s:%d: axis '%s' is %lld, not a positive 32-bit "
					    "integer", f->wl_path, line, f->axis_src[i],
					    (long long)json_integer_value(x));
		} else {
			v[i] = (double)json_integer_value(x);
		}
	}
	for (int s = 0; s < f->nscalars; s++) {
		json_t *in = json_object_get(inputs, f->scalar_src[s]);
		x = json_object_get(in, "value");
		const char *type = it->params[f->naxes + s].type;
		if (!json_is_number(x) && !json_is_boolean(x))
			return ks_error_set(e, KS_EPARSE, "%s:%d: the workload gives no scalar value for input '%s'",
					    f->wl_path, line, f->scalar_src[s]);
		v[f->naxes + s] = json_is_boolean(x) ? json_is_true(x) : json_number_value(x);
		double lim = !strcmp(type, "i32") ? 2147483647.0 : 9007199254740992.0;
		if (strcmp(type, "f32") && (!json_is_integer(x) && !json_is_boolean(x)))
			return ks_error_set(e, KS_EPARSE, "%s:%d: scalar input '%s' is an integer: got %g",
					    f->wl_path, line, f->scalar_src[s], v[f->naxes + s]);
		if (strcmp(type, "f32") && (v[f->naxes + s] > lim || v[f->naxes + s] < -lim))
			return ks_error_set(e, KS_EPARSE, "%s:%d: scalar input '%s' is %.0f, out of range for %s",
					    f->wl_path, line, f->scalar_src[s], v[f->naxes + s], type);
	}
	int rc = check_workload_inputs(f, inputs, line, e);
	if (rc)
		return rc;
	json_t *uuid = json_object_get(wl, "uuid");
	for (int w = 0; w < it->nworkloads; w++)
		if (!memcmp(it->values[w], v, sizeof(double) * (size_t)it->nparams)) {
			/* the same shape twice is timed once; its traces carry both uuids */
			if (json_is_string(uuid))
				json_array_append(json_array_get(f->uuids, (size_t)w), uuid);
			return 0;
		}
	if (it->nworkloads >= f->max_workloads)
		return ks_error_set(e, KS_ELIMIT, "%s:%d: more than %d distinct workloads: every "
				    "evaluation times each workload of a task, so the import stops at "
				    "%d; give --max-workloads N to keep more, or fewer lines",
				    f->wl_path, line, f->max_workloads, f->max_workloads);
	json_array_append_new(f->uuids, json_is_string(uuid) ? json_pack("[O]", uuid) : json_array());
	it->nworkloads++;
	return 0;
}

static int read_workloads(struct fib *f, const char *path, struct ks_error *e)
{
	struct ks_buf text = KS_BUF_INIT;
	int rc = ks_file_read(path, (size_t)64 << 20, &text, e), line = 0;
	for (char *save = NULL, *l = rc ? NULL : strtok_r(text.data, "\n", &save); l && !rc;
	     l = strtok_r(NULL, "\n", &save)) {
		line++;
		if (strspn(l, " \t\r") == strlen(l))
			continue;
		json_error_t je;
		json_t *o = json_loads(l, 0, &je);
		if (!o) {
			rc = ks_error_set(e, KS_EPARSE, "%s:%d: %s", path, line, je.text);
			break;
		}
		json_t *wl = json_object_get(o, "workload");
		if (!json_is_object(o))
			rc = ks_error_set(e, KS_EPARSE, "%s:%d: expected a Workload object", path, line);
		else
			rc = read_workload(f, json_is_object(wl) ? wl : o, line, e);
		json_decref(o);
	}
	ks_buf_release(&text);
	if (!rc && !f->it->nworkloads)
		rc = ks_error_set(e, KS_EPARSE, "'%s' holds no workload", path);
	return rc;
}

static void write_reference(struct fib *f, const char *source)
{
	struct imp_task *it = f->it;
	imp_reference_prelude(it, source, "'definition reference'");
	struct ks_buf *b = &it->reference;
	ks_buf_adds(b, "\n# run()'s arguments in the definition's order, and the torch dtype of each tensor\n_KS_ARGS = [");
	for (int i = 0; i < f->nrun; i++)
		ks_buf_addf(b, "%s('%s', '%s')", i ? ", " : "", f->run_args[i], f->run_torch[i]);
	ks_buf_adds(b, "]\n\n\n"
		       "def _ks_torch_reference(kw):\n"
		       "    torch = _ks_torch()\n"
		       "    args = [torch.from_numpy(np.ascontiguousarray(kw[n])).to(getattr(torch, t)) if t\n"
		       "            else kw[n] for n, t in _KS_ARGS]\n"
		       "    with torch.no_grad():\n"
		       "        return _ks_module()['run'](*args)\n\n\n"
		       "def _ks_plain_reference(kw):\n"
		       "    return _ks_module()['run'](*[kw[n] for n, _ in _KS_ARGS])\n");
	imp_numpy_form(it);
}

static void write_readme(struct fib *f, json_t *def, const char *name)
{
	struct ks_buf *b = &f->it->readme;
	const char *desc = str_field(def, "description"), *op = str_field(def, "op_type");
	ks_buf_addf(b, "# %s\n\n%s\n\nImported from the flashinfer-bench Definition `%s` (op_type `%s`) "
		       "by `ksearch tasks import flashinfer-bench`.  Every axis is a param (const axes "
		       "keep their value in every workload), scalar inputs are params too; tensors are "
		       "row-major with the definition's shapes.  The reference is the definition's own "
		       "`run()` (reference.py).\n",
		    f->it->name, desc ? desc : "(the definition gives no description)", name,
		    op ? op : "?");
	json_t *cons = json_object_get(def, "constraints");
	if (json_is_array(cons) && json_array_size(cons)) {
		ks_buf_adds(b, "\nConstraints the definition states (not checked by ksearch):\n\n");
		size_t i;
		json_t *c;
		json_array_foreach(cons, i, c)
			if (json_is_string(c))
				ks_buf_addf(b, "- `%s`\n", json_string_value(c));
	}
	if (f->random_sources)
		ks_buf_addf(b, "\n%d workload inputs came from safetensors files; ksearch draws every "
			       "input from its initialiser instead.\n", f->random_sources);
}

/* element load and store of a dtype in the generated C */
static void c_access(const char *dt, const char **load, const char **store)
{
	*load = !strcmp(dt, "f16") ? "ks_f16_to_f32(%s)" : !strcmp(dt, "bf16") ? "ks_bf16_to_f32(%s)"
									      : "(float)%s";
	*store = !strcmp(dt, "f16") ? "ks_f32_to_f16" : !strcmp(dt, "bf16") ? "ks_f32_to_bf16" : "(float)";
}

/* op_type gemm: C[m, n] = sum over k of A[m, k] * B[k, n] or B[n, k] (C = A @ B.T): the
 * flops, and a naive kernel whose row loop the generated template splits among threads */
static void gemm_form(struct imp_task *it)
{
	if (it->ntensors != 3 || it->tensors[0].ndim != 2 || it->tensors[1].ndim != 2 ||
	    it->tensors[2].ndim != 2 || !it->tensors[2].is_output)
		return;
	const struct imp_tensor *a = &it->tensors[0], *b = &it->tensors[1], *c = &it->tensors[2];
	const char *m = c->shape[0], *n = c->shape[1], *k = a->shape[1];
	int nt = !strcmp(b->shape[0], n) && !strcmp(b->shape[1], k);
	if (strcmp(a->shape[0], m) || (!nt && (strcmp(b->shape[0], k) || strcmp(b->shape[1], n))))
		return;
	snprintf(it->flops, sizeof(it->flops), "2 * %s * %s * %s", m, n, k);
	const char *la, *lb, *lc, *sa, *sb, *sc;
	c_access(a->dtype, &la, &sa);
	c_access(b->dtype, &lb, &sb);
	c_access(c->dtype, &lc, &sc);
	char ea[96], eb[96];
	snprintf(ea, sizeof(ea), la, "A_[i * ks_k + p]");
	snprintf(eb, sizeof(eb), lb, nt ? "B_[j * ks_k + p]" : "B_[p * ks_n + j]");
	ks_buf_addf(&it->kernel_head, "/* gemm (%s = %s @ %s%s): one dot product per output element, "
		    "accumulated in double, written by 'ksearch tasks import flashinfer-bench' */\n"
		    "#include <stdint.h>\n#include \"ksearch/kernel.h\"\n\n"
		    "#ifndef KS_PAR\n#define KS_PAR\n#endif\n#define A_ %s\n#define B_ %s\n\n",
		    c->name, a->name, b->name, nt ? ".T" : "", a->name, b->name);
	ks_buf_addf(&it->kernel_body, "\tint64_t ks_m = %s, ks_n = %s, ks_k = %s;\n"
		    "\tKS_PAR\n\tfor (int64_t i = 0; i < ks_m; i++)\n"
		    "\t\tfor (int64_t j = 0; j < ks_n; j++) {\n\t\t\tdouble s = 0;\n"
		    "\t\t\tfor (int64_t p = 0; p < ks_k; p++)\n\t\t\t\ts += (double)%s * %s;\n"
		    "\t\t\t%s[i * ks_n + j] = %s((float)s);\n\t\t}\n",
		    m, n, k, ea, eb, c->name, sc);
	(void)lc;
	(void)sa;
	(void)sb;
	snprintf(it->cls, sizeof(it->cls), "matmul");
	snprintf(it->op.name, sizeof(it->op.name), "gemm");
}

/* flashinfer.json: what `report --to flashinfer-trace` needs to give ksearch's evaluations
 * back under the definition's own names: the definition's name, its axis and input names
 * by the task's, and each workload's uuid by its values */
static void write_sidecar(const struct fib *f, json_t *def)
{
	json_t *axes = json_object(), *ins = json_object(), *wls = json_array();
	for (int i = 0; i < f->naxes; i++) /* a workload gives its var axes only */
		if (!f->axis_const[i])
			json_object_set_new(axes, f->it->params[i].name, json_string(f->axis_src[i]));
	for (int i = 0; i < f->nscalars; i++)
		json_object_set_new(ins, f->it->params[f->naxes + i].name, json_string(f->scalar_src[i]));
	const char *key;
	json_t *td;
	json_object_foreach(json_object_get(def, "inputs"), key, td) {
		char id[IMP_NAME];
		imp_identifier(key, "t_", id, sizeof(id));
		if (!json_object_get(ins, id))
			json_object_set_new(ins, id, json_string(key));
	}
	for (int w = 0; w < f->it->nworkloads; w++) {
		json_t *vals = json_array();
		for (int i = 0; i < f->it->nparams; i++)
			json_array_append_new(vals, json_real(f->it->values[w][i]));
		json_t *u = json_array_get(f->uuids, (size_t)w);
		json_array_append_new(wls, json_pack("{s:O, s:o}", "uuids", u ? u : json_null(),
						     "values", vals));
	}
	json_t *scalars = json_array();
	for (int i = 0; i < f->nscalars; i++)
		json_array_append_new(scalars, json_string(f->it->params[f->naxes + i].name));
	json_t *o = json_pack("{s:s, s:o, s:o, s:o, s:o}", "definition", str_field(def, "name"),
			      "axes", axes, "inputs", ins, "scalars", scalars, "workloads", wls);
	char *txt = o ? json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(o);
	snprintf(f->it->sidecar_name, sizeof(f->it->sidecar_name), "flashinfer.json");
	ks_buf_adds(&f->it->sidecar, txt ? txt : "");
	if (!txt)
		ks_buf_add(&f->it->sidecar, NULL, (size_t)-1); /* fail it: out of memory */
	free(txt);
}

static int fib_import(const struct ks_import_req *req, struct ks_import_result *res,
		      struct ks_error *e)
{
	json_error_t je;
	json_t *def = json_load_file(req->source, 0, &je);
	if (!def)
		return ks_error_set(e, KS_EPARSE, "%s:%d: %s", req->source, je.line, je.text);
	struct imp_task it;
	imp_task_init(&it);
	struct fib f = {.it = &it, .path = req->source, .wl_path = req->workloads,
			.max_workloads = req->max_workloads > 0 ? req->max_workloads
								: KS_IMPORT_MAX_WORKLOADS,
			.uuids = json_array()};
	it.source = req->source;
	snprintf(it.origin, sizeof(it.origin), "flashinfer-bench");
	const char *name = str_field(def, "name"), *ref = str_field(def, "reference");
	const char *op = str_field(def, "op_type"), *desc = str_field(def, "description");
	int rc = 0;
	const char *need[] = {"name", "reference"};
	for (int i = 0; i < 2 && !rc; i++) {
		json_t *v = json_object_get(def, need[i]);
		if (!v)
			rc = ks_error_set(e, KS_EPARSE, "definition '%s' lacks '%s'", req->source, need[i]);
		else if (!json_is_string(v))
			rc = ks_error_set(e, KS_EPARSE, "definition '%s': '%s' is not a string",
					  req->source, need[i]);
	}
	if (!rc) {
		imp_identifier(name, "fib_", it.name, sizeof(it.name));
		snprintf(it.summary, sizeof(it.summary), "%.200s", desc ? desc : name);
		it.summary[strcspn(it.summary, "\n")] = '\0';
		const struct imp_op *o = op ? imp_op_find(op) : NULL;
		if (o)
			it.op = *o;
	}
	if (!rc)
		rc = read_axes(&f, json_object_get(def, "axes"), e);
	if (!rc)
		rc = read_tensors(&f, json_object_get(def, "inputs"), 0, e);
	if (!rc)
		rc = read_tensors(&f, json_object_get(def, "outputs"), 1, e);
	if (!rc && req->workloads) {
		rc = read_workloads(&f, req->workloads, e);
	} else if (!rc) {
		for (int i = 0; i < f.naxes && !rc; i++)
			if (!f.axis_const[i])
				rc = ks_error_set(e, KS_EINVAL, "axis '%s' of '%s' is var: give the "
						  "workloads (WORKLOADS.jsonl) that set it", f.axis_src[i], name);
		if (!rc && f.nscalars)
			rc = ks_error_set(e, KS_EINVAL, "input '%s' of '%s' is a scalar: give the "
					  "workloads (WORKLOADS.jsonl) that set it", f.scalar_src[0], name);
		double *v = rc ? NULL : imp_workload_row(&it, 0);
		if (!rc && !v)
			rc = ks_error_set(e, KS_ENOMEM, "out of memory");
		for (int i = 0; v && i < f.naxes; i++)
			v[i] = f.axis_value[i];
		it.nworkloads = v ? 1 : 0;
	}
	if (!rc) {
		if (op && !strcmp(op, "gemm"))
			gemm_form(&it);
		write_reference(&f, ref);
		write_readme(&f, def, name);
		write_sidecar(&f, def);
		rc = imp_write(&it, req->out_dir, res, e);
	}
	json_decref(f.uuids);
	imp_task_release(&it);
	json_decref(def);
	return rc;
}

const struct ks_importer_i ks_importer_flashinfer = {
	.version = 1,
	.name = "flashinfer-bench",
	.usage = "DEFINITION.json [WORKLOADS.jsonl]",
	.summary = "a flashinfer-bench Definition and its Workloads",
	.takes_workloads = 1,
	.import = fib_import,
};
