/* KernelBench level-1 problems: a Python file with class Model (its forward is the
 * reference), get_inputs() (the tensors of the one workload: torch.randn / torch.rand of
 * module-level sizes) and get_init_inputs().  The file is read by kernelbench_scan.h; the
 * module-level sizes the inputs use become i32 params. */
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "import/import_impl.h"
#include "import/kernelbench_scan.h"
#include "util/fs.h"
#include "util/proc.h"

static const char *torch_dtype(const char *ks)
{
	return !strcmp(ks, "f16") ? "float16" : !strcmp(ks, "bf16") ? "bfloat16"
	       : !strcmp(ks, "f64") ? "float64" : "float32";
}

static int scan(const char *path, json_t **out, struct ks_error *e)
{
	const char *py = getenv("KSEARCH_PYTHON");
	char *argv[] = {(char *)(py && *py ? py : "python3"), "-I", "-c", (char *)ks_kernelbench_scan,
			(char *)path, NULL};
	struct ks_buf txt;
	ks_buf_init(&txt, (size_t)1 << 20);
	struct ks_proc_result res;
	int rc = ks_proc_run(argv, NULL, 120, &txt, &res, e);
	if (!rc && (!res.exited || res.code))
		rc = ks_error_set(e, KS_EUNAVAILABLE, "reading '%s' with %s failed: %.300s", path,
				  argv[0], ks_buf_str(&txt));
	json_error_t je;
	if (!rc && !(*out = json_loads(ks_buf_str(&txt), 0, &je)))
		rc = ks_error_set(e, KS_EPROTO, "reading '%s': unexpected output: %.200s", path,
				  ks_buf_str(&txt));
	ks_buf_release(&txt);
	return rc;
}

/* the param for dimension k of tensor tname: a module constant becomes an i32 param
 * (once), a number stays */
static int dim_of(struct imp_task *it, json_t *consts, const char *tname, size_t k, json_t *d,
		  char *out, struct ks_error *e)
{
	if (json_is_integer(d)) {
		json_int_t n = json_integer_value(d);
		if (n < 1 || n > INT_MAX)
			return ks_error_set(e, KS_EPARSE, "'%s': dimension %zu of input '%s' of "
					    "get_inputs() is %lld, not a positive 32-bit integer",
					    it->source, k, tname, (long long)n);
		snprintf(out, IMP_NAME, "%lld", (long long)n);
		return 0;
	}
	const char *name = json_string_value(d);
	char id[IMP_NAME];
	imp_identifier(name ? name : "?", "a_", id, sizeof(id));
	for (int i = 0; i < it->nparams; i++)
		if (!strcmp(it->params[i].name, id)) {
			snprintf(out, IMP_NAME, "%s", id);
			return 0;
		}
	json_t *v = json_object_get(consts, name ? name : "");
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > INT_MAX)
		return ks_error_set(e, KS_EPARSE, "'%s': size '%s' is %lld, not a positive 32-bit integer",
				    it->source, name ? name : "?", (long long)json_integer_value(v));
	if (it->nparams >= IMP_MAX)
		return ks_error_set(e, KS_ELIMIT, "'%s': more than %d sizes", it->source, IMP_MAX);
	struct imp_param *p = &it->params[it->nparams];
	snprintf(p->name, sizeof(p->name), "%s", id);
	p->type = "i32";
	it->values[0][it->nparams++] = (double)json_integer_value(v);
	snprintf(out, IMP_NAME, "%s", id);
	return 0;
}

/* the offset of the first byte of s that is not UTF-8, or -1 */
static long utf8_bad(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 && c >= 0xc2 ? 2
			     : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 && c <= 0xf4 ? 4 : 0;
		if (!len || i + len > n)
			return (long)i;
		for (size_t k = 1; k < len; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return (long)i;
		i += len;
	}
	return -1;
}

static int add_tensor(struct imp_task *it, json_t *consts, const char *name, json_t *spec,
		      int is_output, struct ks_error *e)
{
	json_t *shape = json_object_get(spec, "shape");
	if (it->ntensors >= IMP_MAX || json_array_size(shape) > KS_MAX_DIMS)
		return ks_error_set(e, KS_ELIMIT, "tensor '%s': more than %d tensors or %d dimensions",
				    name, IMP_MAX, KS_MAX_DIMS);
	struct imp_tensor *t = &it->tensors[it->ntensors++];
	imp_identifier(name, "t_", t->name, sizeof(t->name));
	const char *dt = json_string_value(json_object_get(spec, "dtype"));
	t->dtype = dt && !strcmp(dt, "f16") ? "f16" : dt && !strcmp(dt, "bf16") ? "bf16"
		   : dt && !strcmp(dt, "f64") ? "f64" : "f32";
	t->is_output = is_output;
	const char *dist = json_string_value(json_object_get(spec, "dist"));
	t->init = is_output ? NULL : !strcmp(dist ? dist : "", "uniform(0, 1)") ? "uniform(0, 1)" : "normal(0, 1)";
	size_t k;
	json_t *d;
	json_array_foreach(shape, k, d) {
		int rc = dim_of(it, consts, name, k, d, t->shape[k], e);
		if (rc)
			return rc;
	}
	t->ndim = (int)json_array_size(shape);
	return 0;
}

/* the recognised op, when its numpy form means what forward computes */
static void pick_op(struct imp_task *it, json_t *scan)
{
	json_t *op = json_object_get(scan, "op");
	const char *name = json_string_value(json_object_get(op, "name"));
	const struct imp_op *o = name ? imp_op_find(name) : NULL;
	if (!o || json_integer_value(json_object_get(scan, "init_inputs")) != 0)
		return;
	if (o->kind == IMP_OP_SOFTMAX) {
		json_t *dim = json_object_get(op, "dim");
		int last = it->tensors[0].ndim - 1;
		if (!json_is_integer(dim) ||
		    (json_integer_value(dim) != -1 && json_integer_value(dim) != last))
			return;
	}
	it->op = *o;
}

static int build(struct imp_task *it, const char *path, json_t *scan, struct ks_error *e)
{
	json_t *consts = json_object_get(scan, "constants"), *args = json_object_get(scan, "args");
	json_t *inputs = json_object_get(scan, "inputs");
	size_t i;
	json_t *in;
	int rc = 0;
	json_array_foreach(inputs, i, in) {
		if ((rc = add_tensor(it, consts, json_string_value(json_array_get(args, i)), in, 0, e)))
			return rc;
	}
	if (!it->ntensors)
		return ks_error_set(e, KS_EPARSE, "'%s': get_inputs() returns no tensor", path);
	pick_op(it, scan);
	json_t *outs = json_object_get(scan, "outputs");
	if (it->op.kind != IMP_OP_NONE) {
		int clash = !strcmp(it->tensors[0].name, "y");
		struct imp_tensor *y = &it->tensors[it->ntensors++];
		*y = it->tensors[0];
		snprintf(y->name, sizeof(y->name), "%s", clash ? "out" : "y");
		y->is_output = 1;
		y->init = NULL;
	} else if (json_is_array(outs) && json_array_size(outs)) {
		json_array_foreach(outs, i, in) {
			char name[16];
			snprintf(name, sizeof(name), json_array_size(outs) > 1 ? "y%zu" : "y", i);
			if ((rc = add_tensor(it, consts, name, in, 1, e)))
				return rc;
		}
	} else {
		return ks_error_set(e, KS_EUNAVAILABLE,
				    "the forward of '%s' is not an operator ksearch recognises (relu, "
				    "sigmoid, tanh, softmax over the last axis) and torch is not installed "
				    "to learn the shape of its output", path);
	}
	it->nworkloads = 1;
	return 0;
}

static void write_reference(struct imp_task *it, const char *source)
{
	imp_reference_prelude(it, source, "'problem file'");
	struct ks_buf *b = &it->reference;
	ks_buf_adds(b, "\n# forward()'s arguments and the torch dtype of each\n_KS_ARGS = [");
	for (int i = 0; i < it->ntensors; i++)
		if (!it->tensors[i].is_output)
			ks_buf_addf(b, "%s('%s', '%s')", i ? ", " : "", it->tensors[i].name,
				    torch_dtype(it->tensors[i].dtype));
	ks_buf_adds(b, "]\n\n\n"
		       "def _ks_torch_reference(kw):\n"
		       "    torch = _ks_torch()\n"
		       "    ns = _ks_module()\n"
		       "    torch.manual_seed(0)\n"
		       "    model = ns['Model'](*ns['get_init_inputs']())\n"
		       "    args = [torch.from_numpy(np.ascontiguousarray(kw[n])).to(getattr(torch, t))\n"
		       "            for n, t in _KS_ARGS]\n"
		       "    with torch.no_grad():\n"
		       "        return model(*args)\n\n\n"
		       "_ks_plain_reference = _ks_torch_reference\n");
	imp_numpy_form(it);
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
		rc = scan(req->source, &sc, e);
	const char *err = sc ? json_string_value(json_object_get(sc, "error")) : NULL;
	if (!rc && err)
		rc = ks_error_set(e, KS_EPARSE, "'%s' is not a KernelBench level-1 problem ksearch can "
				  "import: %s", req->source, err);
	struct imp_task it;
	imp_task_init(&it);
	snprintf(it.origin, sizeof(it.origin), "KernelBench");
	it.source = req->source;
	if (!rc) {
		const char *base = strrchr(req->source, '/');
		char stem[IMP_NAME * 2];
		snprintf(stem, sizeof(stem), "%s", base ? base + 1 : req->source);
		char *dot = strrchr(stem, '.');
		if (dot)
			*dot = '\0';
		imp_identifier(stem, "kb_", it.name, sizeof(it.name));
		const char *doc = json_string_value(json_object_get(sc, "doc"));
		snprintf(it.summary, sizeof(it.summary), "%.200s",
			 doc && *doc ? doc : "a KernelBench level-1 problem");
		it.summary[strcspn(it.summary, "\n")] = '\0';
		rc = build(&it, req->source, sc, e);
	}
	if (!rc) {
		write_reference(&it, ks_buf_str(&src));
		const char *doc = json_string_value(json_object_get(sc, "doc"));
		ks_buf_addf(&it.readme, "# %s\n\n%s\n\nImported from the KernelBench problem `%s` by "
			    "`ksearch tasks import kernelbench`: the workload is what get_inputs() "
			    "draws (its module-level sizes are the params), the reference is "
			    "`Model(*get_init_inputs()).forward` run with torch (reference.py)%s.\n",
			    it.name, doc && *doc ? doc : "(the problem has no docstring)", req->source,
			    it.op.kind ? ", or the importer's numpy form of the operator when torch "
					 "is not installed" : "");
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
	.summary = "a KernelBench level-1 problem (Model.forward, get_inputs)",
	.takes_workloads = 0,
	.import = kb_import,
};
