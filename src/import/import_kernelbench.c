/* KernelBench problems: a Python file with class Model (its forward is the reference),
 * get_inputs() (the tensors of the one workload) and get_init_inputs().  The file is read by
 * the interpreter of kernelbench_scan.h, run inside the jail: it folds the module-level sizes
 * (the task's i32 params), interprets __init__ and forward into a graph of tensor operations
 * and writes back the shapes as expressions of the sizes, a naive C kernel, a numpy form
 * of the reference, and the shipped task whose kernels compute the same thing, if any. */
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h> /* mkdtemp on macOS */

#include "eval/evaluator.h"
#include "import/import_impl.h"
#include "import/kernelbench_scan.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/utf8.h"
#include "util/env.h"

#define KB_SCAN_TIMEOUT_S 300.0
#define KB_SCAN_MEMORY ((size_t)16 << 30) /* torch's import maps a lot of address space */

/* the offset of the first byte of s that is not UTF-8, or -1 */
static long utf8_bad(const unsigned char *s, size_t n)
{
	for (size_t i = 0, len; i < n; i += len)
		if (!(len = ks_utf8_seq(s + i, n - i)))
			return (long)i;
	return -1;
}

/* the scan's last line of output: the reason it failed */
static int scan_failed(const char *path, struct ks_buf *log, const struct ks_proc_result *res,
		       struct ks_error *e)
{
	char *s = log->data ? log->data : "";
	size_t len = strlen(s);
	while (len && s[len - 1] == '\n')
		s[--len] = '\0';
	char *last = strrchr(s, '\n');
	if (res->timed_out)
		return ks_error_set(e, KS_ETIMEOUT, "reading '%s' took longer than %.0f s", path,
				    KB_SCAN_TIMEOUT_S);
	return ks_error_set(e, KS_EUNAVAILABLE, "reading '%s' failed (%s %d): %.300s", path,
			    res->exited ? "exit" : "signal", res->code, last ? last + 1 : s);
}

/* run the scan on the problem's text inside the jail; its result.json into *out */
static int scan(const struct ks_import_req *req, const struct ks_buf *src, json_t **out,
		struct ks_error *e)
{
	char dir[PATH_MAX], file[PATH_MAX], scale[32];
	const char *tmp = ks_env_get()->tmpdir;
	snprintf(dir, sizeof(dir), "%s/ksearch-import-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return ks_error_set(e, KS_ESYS, "create a folder in '%s'", dir);
	char *real = realpath(dir, NULL);
	if (real)
		snprintf(dir, sizeof(dir), "%s", real);
	free(real);
	int rc = ks_path_join(file, sizeof(file), dir, "problem.py") ? KS_ELIMIT : 0;
	if (!rc)
		rc = ks_file_write_buf(file, src, e);
	if (!rc && !ks_path_join(file, sizeof(file), dir, "scan.py"))
		rc = ks_file_write_atomic(file, ks_kernelbench_scan, strlen(ks_kernelbench_scan), e);
	snprintf(scale, sizeof(scale), "%.9g", req->scale > 0 ? req->scale : 1.0);
	char *args[40] = {file, dir, scale};
	int n = 3;
	for (int i = 0; req->sets && req->sets[i] && n < 39; i++)
		args[n++] = (char *)req->sets[i];
	args[n] = NULL;
	struct ks_buf log;
	ks_buf_init(&log, 65536);
	struct ks_proc_result res;
	if (!rc)
		rc = ks_python_jailed(NULL, dir, args, KB_SCAN_TIMEOUT_S, KB_SCAN_MEMORY, &log, &res, e);
	if (!rc && (!res.exited || res.code || res.timed_out))
		rc = scan_failed(req->source, &log, &res, e);
	json_error_t je;
	if (!rc && (ks_path_join(file, sizeof(file), dir, "result.json") ||
		    !(*out = json_load_file(file, 0, &je))))
		rc = ks_error_set(e, KS_EPROTO, "reading '%s': the scan wrote no result: %.200s",
				  req->source, ks_buf_str(&log));
	ks_buf_release(&log);
	ks_rm_rf(dir);
	return rc;
}

static int add_param(struct imp_task *it, const char *name, const char *type, double value,
		     struct ks_error *e)
{
	double *row = imp_workload_row(it, 0);
	if (it->nparams >= IMP_MAX || !row)
		return ks_error_set(e, KS_ELIMIT, "'%s': more than %d sizes", it->source, IMP_MAX);
	/* a padding may be 0; a tensor's dimension of 0 is the loader's to refuse */
	if (!strcmp(type, "i32") && (value < 0 || value > INT_MAX))
		return ks_error_set(e, KS_EPARSE, "'%s': size '%s' is %.0f, not a 32-bit integer of "
				    "at least 0 (give another with --set %s=N)", it->source, name,
				    value, name);
	struct imp_param *p = &it->params[it->nparams];
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->type = type;
	row[it->nparams++] = value;
	return 0;
}

static int add_tensor(struct imp_task *it, json_t *spec, int is_output, struct ks_error *e)
{
	json_t *shape = json_object_get(spec, "shape");
	const char *name = json_string_value(json_object_get(spec, "name"));
	if (it->ntensors >= IMP_MAX || json_array_size(shape) > KS_MAX_DIMS)
		return ks_error_set(e, KS_ELIMIT, "'%s': more than %d tensors or %d dimensions",
				    it->source, IMP_MAX, KS_MAX_DIMS);
	struct imp_tensor *t = &it->tensors[it->ntensors++];
	snprintf(t->name, sizeof(t->name), "%s", name ? name : "t");
	const char *dt = json_string_value(json_object_get(spec, "dtype"));
	static const char *const known[] = {"f32", "f16", "bf16", "f64", "i32", "i64"};
	t->dtype = "f32";
	for (size_t i = 0; dt && i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(dt, known[i]))
			t->dtype = known[i];
	t->is_output = is_output;
	t->init = is_output ? NULL : json_string_value(json_object_get(spec, "init"));
	size_t k;
	json_t *d;
	json_array_foreach(shape, k, d) {
		if (snprintf(t->shape[k], IMP_EXPR, "%s", json_string_value(d) ? json_string_value(d) : "1") >= IMP_EXPR)
			return ks_error_set(e, KS_ELIMIT, "'%s': dimension %zu of '%s' is too long an "
					    "expression", it->source, k, t->name);
	}
	t->ndim = (int)json_array_size(shape);
	return 0;
}

/* the shipped task's params and tensors, with the values and initialisers of the problem */
static int build_shipped(struct imp_task *it, json_t *sc, json_t *ship, struct ks_error *e)
{
	const char *name = json_string_value(json_object_get(ship, "task"));
	struct ks_task *t = NULL;
	int rc = ks_task_load(name, &t, e);
	if (rc)
		return ks_error_wrap(e, "the shipped task '%s'", name), rc;
	json_t *vals = json_object_get(ship, "params"), *ins = json_object_get(sc, "inputs");
	for (int i = 0; i < t->nparams && !rc; i++) {
		double v = 0;
		size_t k;
		json_t *p;
		json_array_foreach(vals, k, p)
			if (!strcmp(json_string_value(json_object_get(p, "name")), t->params[i].name))
				v = json_number_value(json_object_get(p, "value"));
		rc = add_param(it, t->params[i].name, ks_dtype_name(t->params[i].dtype), v, e);
	}
	for (int j = 0, in = 0; j < t->ntensors && !rc; j++) {
		const struct ks_tensor_decl *d = &t->tensors[j];
		struct imp_tensor *x = &it->tensors[it->ntensors++];
		snprintf(x->name, sizeof(x->name), "%s", d->name);
		x->dtype = d->dtype == KS_DT_F32 ? "f32" : "f64";
		x->is_output = d->is_output;
		x->init = d->is_output ? NULL
			  : json_string_value(json_object_get(json_array_get(ins, (size_t)in++), "init"));
		x->ndim = d->ndim;
		for (int k = 0; k < d->ndim; k++)
			snprintf(x->shape[k], IMP_EXPR, "%s", d->shape[k]);
	}
	if (!rc) {
		snprintf(it->flops, sizeof(it->flops), "%s", t->flops ? t->flops : "0");
		snprintf(it->shipped, sizeof(it->shipped), "%s", name);
		snprintf(it->cls, sizeof(it->cls), "%s", t->cls ? t->cls : "imported");
		it->atol = t->atol, it->rtol = t->rtol, it->l2 = t->l2;
	}
	ks_task_free(t);
	return rc;
}

static int build(struct imp_task *it, json_t *sc, struct ks_error *e)
{
	json_t *ship = json_object_get(sc, "shipped"), *x;
	size_t i;
	int rc = 0;
	if (json_is_object(ship))
		return build_shipped(it, sc, ship, e);
	json_array_foreach(json_object_get(sc, "params"), i, x) {
		if ((rc = add_param(it, json_string_value(json_object_get(x, "name")), "i32",
				    json_number_value(json_object_get(x, "value")), e)))
			return rc;
	}
	json_array_foreach(json_object_get(sc, "fixed"), i, x)
		for (int k = 0; k < it->nparams; k++)
			if (!strcmp(it->params[k].name, json_string_value(x)))
				it->fixed |= 1u << k;
	json_array_foreach(json_object_get(sc, "scalars"), i, x) {
		if ((rc = add_param(it, json_string_value(json_object_get(x, "name")),
				    json_string_value(json_object_get(x, "type")),
				    json_number_value(json_object_get(x, "value")), e)))
			return rc;
	}
	json_array_foreach(json_object_get(sc, "inputs"), i, x) {
		if ((rc = add_tensor(it, x, 0, e)))
			return rc;
	}
	json_t *outs = json_object_get(sc, "outputs");
	if (!json_array_size(outs))
		return ks_error_set(e, KS_EUNAVAILABLE,
				    "the forward of '%s' uses what the importer does not know (%s) and "
				    "torch is not installed to learn the shape of its output", it->source,
				    json_string_value(json_object_get(sc, "unrecognised")));
	json_array_foreach(outs, i, x) {
		if ((rc = add_tensor(it, x, 1, e)))
			return rc;
	}
	const char *flops = json_string_value(json_object_get(sc, "flops"));
	if (snprintf(it->flops, sizeof(it->flops), "%s", flops ? flops : "0") >= (int)sizeof(it->flops))
		snprintf(it->flops, sizeof(it->flops), "0"); /* too long to keep: unknown */
	json_t *c = json_object_get(sc, "c");
	/* the naive kernel sums in double, torch in float (in its own order): a sum's few
	 * ulps of rounding are no error, a wrong element is (the relative L2 bound) */
	it->atol = 1e-4, it->rtol = 1e-3, it->l2 = 1e-5;
	if (json_is_object(c)) {
		ks_buf_adds(&it->kernel_head, json_string_value(json_object_get(c, "head")));
		ks_buf_adds(&it->kernel_body, json_string_value(json_object_get(c, "body")));
	}
	return 0;
}

/* reference.py: the problem's Model with the task's inputs (and its modules' parameters
 * from the task's inputs), or the numpy form without torch */
static void write_reference(struct imp_task *it, const char *source, json_t *sc)
{
	imp_reference_prelude(it, source, "'problem file'");
	struct ks_buf *b = &it->reference;
	json_t *x, *ins = json_object_get(sc, "inputs"), *sca = json_object_get(sc, "scalars");
	size_t i;
	ks_buf_adds(b, "\n# forward()'s arguments: (task name, torch dtype or '' for a number, "
		       "problem name)\n_KS_ARGS = [");
	int n = 0;
	json_array_foreach(ins, i, x) {
		const char *arg = json_string_value(json_object_get(x, "arg"));
		if (arg)
			ks_buf_addf(b, "%s('%s', '%s', '%s')", n++ ? ", " : "",
				    json_is_object(json_object_get(sc, "shipped"))
					    ? it->tensors[i].name
					    : json_string_value(json_object_get(x, "name")),
				    json_string_value(json_object_get(x, "torch")), arg);
	}
	json_array_foreach(sca, i, x)
		ks_buf_addf(b, "%s('%s', '', '%s')", n++ ? ", " : "",
			    json_string_value(json_object_get(x, "name")),
			    json_string_value(json_object_get(x, "arg")));
	ks_buf_adds(b, "]\n# the problem's sizes among the params\n_KS_SIZES = {");
	n = 0;
	json_array_foreach(json_object_get(sc, "params"), i, x)
		ks_buf_addf(b, "%s'%s'", n++ ? ", " : "", json_string_value(json_object_get(x, "name")));
	ks_buf_adds(b, n ? "}" : "}\n_KS_SIZES = set()");
	ks_buf_adds(b, "\n# the modules' parameters: (task input, parameter of Model)\n_KS_WEIGHTS = [");
	n = 0;
	json_array_foreach(ins, i, x) {
		const char *path = json_string_value(json_object_get(x, "path"));
		if (path)
			ks_buf_addf(b, "%s('%s', '%s')", n++ ? ", " : "",
				    json_string_value(json_object_get(x, "name")), path);
	}
	ks_buf_adds(b, "]\n\n\n"
		       "def _ks_sizes(ns, kw):\n"
		       "    \"\"\"the problem's module-level sizes as this workload gives them (a name, or\n"
		       "    NAME_I for element I of a tuple), for get_init_inputs() and the modules\"\"\"\n"
		       "    for k, v in kw.items():\n"
		       "        base, _, i = k.rpartition('_')\n"
		       "        if isinstance(ns.get(k), int) and not isinstance(ns.get(k), bool):\n"
		       "            ns[k] = int(v)\n"
		       "        elif isinstance(ns.get(k), tuple) and len(ns[k]) == 1:\n"
		       "            ns[k] = (int(v),)\n"
		       "        elif isinstance(ns.get(base), tuple) and i.isdigit() and int(i) < len(ns[base]):\n"
		       "            t = list(ns[base])\n"
		       "            t[int(i)] = int(v)\n"
		       "            ns[base] = tuple(t)\n\n\n"
		       "def _ks_torch_reference(kw):\n"
		       "    torch = _ks_torch()\n"
		       "    ns = _ks_module()\n"
		       "    _ks_sizes(ns, {k: v for k, v in kw.items() if k in _KS_SIZES})\n"
		       "    torch.manual_seed(0)\n"
		       "    model = ns['Model'](*ns['get_init_inputs']())\n"
		       "    with torch.no_grad():\n"
		       "        for name, path in _KS_WEIGHTS:\n"
		       "            model.get_parameter(path).copy_(torch.from_numpy(kw[name]))\n"
		       "        order = [a for _, _, a in _KS_ARGS]\n"
		       "        byarg = {a: (torch.from_numpy(np.ascontiguousarray(kw[n])).to(getattr(torch, t))\n"
		       "                     if t else kw[n]) for n, t, a in _KS_ARGS}\n"
		       "        return model(*[byarg[a] for a in order])\n\n\n"
		       "_ks_plain_reference = _ks_torch_reference\n");
	const char *np = json_string_value(json_object_get(sc, "numpy"));
	if (np)
		ks_buf_addf(b, "\n\ndef _ks_erf(v):\n    import math\n"
			       "    return np.vectorize(math.erf)(v)\n\n\n%s", np);
	else
		ks_buf_adds(b, "_ks_numpy_reference = None\n");
}

static void write_readme(struct imp_task *it, const char *source, json_t *sc)
{
	const char *doc = json_string_value(json_object_get(sc, "doc"));
	ks_buf_addf(&it->readme, "# %s\n\n%s\n\nImported from the KernelBench problem `%s` by "
		    "`ksearch tasks import kernelbench`: the workload is what get_inputs() draws "
		    "(its module-level sizes are the params), the reference is "
		    "`Model(*get_init_inputs()).forward` run with torch (reference.py), the "
		    "modules' parameters (weights, biases) are inputs of the task%s.\n",
		    it->name, doc && *doc ? doc : "(the problem has no docstring)", source,
		    json_string_value(json_object_get(sc, "numpy"))
			    ? "; without torch the importer's numpy form of the forward is used" : "");
	if (it->shipped[0])
		ks_buf_addf(&it->readme, "\nThe problem is the shipped task `%s` (the same params and "
			    "tensors): its baseline and knob templates were copied here, their entry "
			    "point renamed.\n", it->shipped);
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(sc, "notes"), i, x)
		ks_buf_addf(&it->readme, "\nNote: %s.\n", json_string_value(x));
}

static void task_name(struct imp_task *it, const char *source, json_t *sc)
{
	const char *base = strrchr(source, '/');
	char stem[IMP_NAME * 2];
	snprintf(stem, sizeof(stem), "%s", base ? base + 1 : source);
	char *dot = strrchr(stem, '.');
	if (dot)
		*dot = '\0';
	imp_identifier(stem, "kb_", it->name, sizeof(it->name));
	const char *doc = json_string_value(json_object_get(sc, "doc"));
	snprintf(it->summary, sizeof(it->summary), "%.200s",
		 doc && *doc ? doc : "a KernelBench level-1 problem");
	it->summary[strcspn(it->summary, "\n")] = '\0';
}

static int kb_import(const struct ks_import_req *req, struct ks_import_result *res,
		     struct ks_error *e)
{
	struct ks_buf src = KS_BUF_INIT;
	json_t *sc = NULL;
	int rc = ks_file_read(req->source, (size_t)4 << 20, &src, e);
	long bad = rc ? -1 : utf8_bad((const unsigned char *)src.data, src.len);
	if (bad >= 0)
		rc = ks_error_set(e, KS_EPARSE, "'%s': not UTF-8 text (byte 0x%02x at offset %ld)",
				  req->source, (unsigned char)src.data[bad], bad);
	if (!rc)
		rc = scan(req, &src, &sc, e);
	const char *err = sc ? json_string_value(json_object_get(sc, "error")) : NULL;
	if (!rc && err && json_is_true(json_object_get(sc, "bad_value")))
		rc = ks_error_set(e, KS_EPARSE, "'%s': %s", req->source, err);
	else if (!rc && err)
		rc = ks_error_set(e, KS_EPARSE, "'%s' is not a KernelBench problem ksearch can "
				  "import: %s", req->source, err);
	struct imp_task it;
	imp_task_init(&it);
	snprintf(it.origin, sizeof(it.origin), "KernelBench");
	it.source = req->source;
	if (!rc) {
		task_name(&it, req->source, sc);
		rc = build(&it, sc, e);
		it.nworkloads = 1;
	}
	if (!rc) {
		write_reference(&it, ks_buf_str(&src), sc);
		write_readme(&it, req->source, sc);
		rc = imp_write(&it, req->out_dir, res, e);
	}
	imp_task_release(&it);
	json_decref(sc);
	ks_buf_release(&src);
	return rc;
}

const struct ks_importer_i ks_importer_kernelbench = {
	.version = 1,
	.name = "kernelbench",
	.usage = "PROBLEM.py",
	.summary = "a KernelBench problem (Model.forward, get_inputs)",
	.takes_workloads = 0,
	.import = kb_import,
};
