/* The mlx exporter: a Python module with one function per task (`softmax(x)`) that builds
 * the found kernel with mx.fast.cuda_kernel or mx.fast.metal_kernel and launches it the way
 * the kernel file's `// @mlx` lines say.  Params come from the inputs' shapes where a
 * shape names them, else they are keyword arguments; launch expressions are translated
 * from ksearch's C-like expressions to Python (integer division truncates). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "backend/mlx_kernel.h"
#include "export/exporters.h"

static const char *mx_dtype(enum ks_dtype t)
{
	static const char *const names[] = {"mx.float32", "mx.float64", "mx.float16",
					    "mx.bfloat16", "mx.int32", "mx.int64"};
	return (unsigned)t < 6 ? names[t] : "None";
}

static int add_targ_value(struct ks_buf *out, const char *v, struct ks_error *e)
{
	enum ks_dtype dt;
	if (!strcmp(v, "true") || !strcmp(v, "false"))
		return ks_buf_adds(out, v[0] == 't' ? "True" : "False");
	if (!ks_dtype_parse(v, &dt))
		return ks_buf_adds(out, mx_dtype(dt));
	return ks_py_add_expr(out, v, "template", e);
}

/* the kernel's header and body as module constants, the signature (inputs, then the
 * params no input shape gives, as keywords), the docstring, the params from shapes */
static void fn_head(const struct ks_export_item *it, const struct ks_mlx_kernel *k,
		    const char *fl, const char *upper, struct ks_buf *out)
{
	const struct ks_task *t = it->task;
	char src[KS_MLX_NAME + 32];
	int kw = 0;
	ks_buf_addf(out, "\n# %s: %s, flavour %s\n_%s_HEADER = ", t->name, it->origin, fl, upper);
	ks_py_add_str(out, k->header);
	ks_buf_addf(out, "_%s_SOURCE = ", upper);
	ks_py_add_str(out, k->body);
	ks_buf_addf(out, "\n\ndef %s(", t->name);
	for (int i = 0; i < t->ninputs; i++)
		ks_buf_addf(out, "%s%s", i ? ", " : "", t->tensors[i].name);
	for (int i = 0; i < t->nparams; i++)
		if (!ks_py_param_source(t, t->params[i].name, src, sizeof(src)))
			ks_buf_addf(out, "%s%s", kw++ ? ", " : ", *, ", t->params[i].name);
	ks_buf_addf(out, "):\n    \"\"\"%s\n\n    ", t->summary ? t->summary : t->name);
	ks_export_tensors_doc(out, t);
	ks_buf_addf(out, ".\n    Found by ksearch (%s); needs MLX's %s backend.\n    \"\"\"\n",
		    it->origin, k->flavour == KS_MLX_CUDA ? "CUDA" : "Metal");
	ks_buf_addf(out, "    _need_gpu(\"%s\", \"%s\")\n", fl, t->name);
	for (int i = 0; i < t->nparams; i++)
		if (ks_py_param_source(t, t->params[i].name, src, sizeof(src)))
			ks_buf_addf(out, "    %s = %s\n", t->params[i].name, src);
}

/* the template arguments' values and the kernel built */
static int fn_kernel(const struct ks_task *t, const struct ks_mlx_kernel *k, const char *fl,
		     const char *upper, struct ks_buf *out, struct ks_error *e)
{
	int rc = 0;
	for (int i = 0; i < k->ntemplate && !rc; i++) {
		ks_buf_addf(out, "    %s = ", k->tmpl[i].name);
		rc = add_targ_value(out, k->tmpl[i].expr, e);
		ks_buf_adds(out, "\n");
	}
	ks_buf_addf(out, "    kernel = _kernel(\"%s\", \"%s\", [", fl, t->name);
	for (int i = 0; i < t->ntensors; i++)
		ks_buf_addf(out, "%s\"%s\"", i == t->ninputs ? "], [" : i ? ", " : "", t->tensors[i].name);
	ks_buf_addf(out, "], _%s_SOURCE, _%s_HEADER, ", upper, upper);
	if (!rc)
		rc = ks_py_add_expr(out, k->shared_memory, "shared_memory", e);
	ks_buf_adds(out, ")\n");
	return rc;
}

/* the launch: grid, threadgroup, the outputs' shapes and dtypes, template, init value */
static int fn_launch(const struct ks_task *t, const struct ks_mlx_kernel *k, struct ks_buf *out,
		     struct ks_error *e)
{
	int rc = 0;
	ks_buf_adds(out, "    outs = kernel(\n        inputs=[");
	for (int i = 0; i < t->ninputs; i++)
		ks_buf_addf(out, "%s%s", i ? ", " : "", t->tensors[i].name);
	ks_buf_adds(out, "],\n        grid=(");
	for (int a = 0; a < 3 && !rc; a++) {
		rc = ks_py_add_expr(out, k->grid[a], "grid", e);
		ks_buf_adds(out, a < 2 ? ", " : "),\n        threadgroup=(");
	}
	for (int a = 0; a < 3 && !rc; a++) {
		rc = ks_py_add_expr(out, k->threadgroup[a], "threadgroup", e);
		ks_buf_adds(out, a < 2 ? ", " : "),\n        output_shapes=[");
	}
	for (int i = t->ninputs; i < t->ntensors && !rc; i++) {
		ks_buf_adds(out, i > t->ninputs ? ", (" : "(");
		for (int j = 0; j < t->tensors[i].ndim && !rc; j++) {
			rc = ks_py_add_expr(out, t->tensors[i].shape[j], "shape", e);
			ks_buf_adds(out, ", ");
		}
		ks_buf_adds(out, ")");
	}
	ks_buf_adds(out, "],\n        output_dtypes=[");
	for (int i = t->ninputs; i < t->ntensors; i++)
		ks_buf_addf(out, "%s%s", i > t->ninputs ? ", " : "", mx_dtype(t->tensors[i].dtype));
	ks_buf_adds(out, "],\n        template=[");
	for (int i = 0; i < t->nparams; i++)
		ks_buf_addf(out, "(\"%s\", %s), ", t->params[i].name, t->params[i].name);
	for (int i = 0; i < k->ntemplate; i++)
		ks_buf_addf(out, "(\"%s\", %s), ", k->tmpl[i].name, k->tmpl[i].name);
	ks_buf_adds(out, "],\n        init_value=");
	if (!strcmp(k->init, "none"))
		ks_buf_adds(out, "None");
	else if (!strcmp(k->init, "nan"))
		ks_buf_adds(out, "float(\"nan\")");
	else if (!rc)
		rc = ks_py_add_expr(out, k->init, "init", e);
	ks_buf_addf(out, ",\n    )\n    return %s\n", t->ntensors - t->ninputs == 1 ? "outs[0]" : "tuple(outs)");
	return rc;
}

static int write_function(const struct ks_export_item *it, struct ks_buf *out, struct ks_error *e)
{
	const struct ks_task *t = it->task;
	struct ks_mlx_kernel k;
	/* `// @mlx include:` lines become the files' text: the module stands alone */
	struct ks_buf text = KS_BUF_INIT;
	memset(&k, 0, sizeof(k));
	int rc = ks_mlx_resolve_includes(t->dir, it->variants[0].source, NULL, &text, e);
	if (!rc)
		rc = ks_mlx_kernel_parse(ks_buf_str(&text), &k, e);
	ks_buf_release(&text);
	if (rc) {
		ks_error_wrap(e, "%s", it->origin);
		goto done;
	}
	if (k.flavour == KS_MLX_NATIVE) {
		rc = ks_error_set(e, KS_EINVAL, "%s is MLX's native op '%s': nothing to export (call it "
						"from MLX directly)",
				  it->origin, k.native);
		goto done;
	}
	const char *fl = k.flavour == KS_MLX_CUDA ? "cuda" : "metal";
	char upper[KS_MLX_NAME];
	snprintf(upper, sizeof(upper), "%s", t->name);
	for (char *c = upper; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	fn_head(it, &k, fl, upper, out);
	rc = fn_kernel(t, &k, fl, upper, out, e);
	if (!rc)
		rc = fn_launch(t, &k, out, e);
done:
	ks_mlx_kernel_release(&k);
	return rc;
}

static const char prelude[] =
	"\"\"\"MLX kernels found by ksearch (ksearch export --to mlx); generated, do not edit.\n"
	"\n"
	"Each function builds its kernel with mx.fast.cuda_kernel or mx.fast.metal_kernel on\n"
	"first use and launches it as ksearch measured it.  The module imports on any MLX;\n"
	"calling a function needs the GPU backend its kernel was written for.\n"
	"\"\"\"\n"
	"import math\n"
	"\n"
	"import mlx.core as mx\n"
	"\n"
	"_KERNELS = {}\n"
	"\n"
	"\n"
	"def _ceil_div(a, b):\n"
	"    return -(-a // b)\n"
	"\n"
	"\n"
	"def _available(flavour):\n"
	"    backend = getattr(mx, \"cuda\" if flavour == \"cuda\" else \"metal\", None)\n"
	"    try:\n"
	"        return bool(backend is not None and backend.is_available())\n"
	"    except Exception:\n"
	"        return False\n"
	"\n"
	"\n"
	"def _need_gpu(flavour, fn):\n"
	"    if not _available(flavour):\n"
	"        name = \"CUDA\" if flavour == \"cuda\" else \"Metal\"\n"
	"        raise RuntimeError(\n"
	"            f\"{fn}: this kernel needs MLX's {name} backend, which this MLX \"\n"
	"            f\"({mx.__version__}) cannot use here (the CPU build, or no GPU): \"\n"
	"            + (\"pip install 'mlx[cuda13]' on Linux with an NVIDIA GPU\" if flavour == \"cuda\"\n"
	"               else \"pip install mlx on Apple silicon\"))\n"
	"\n"
	"\n"
	"def _kernel(flavour, name, inputs, outputs, source, header, shared_memory):\n"
	"    key = (name, shared_memory)\n"
	"    if key not in _KERNELS:\n"
	"        if flavour == \"cuda\":\n"
	"            _KERNELS[key] = mx.fast.cuda_kernel(\n"
	"                name=name, input_names=inputs, output_names=outputs, source=source,\n"
	"                header=header, shared_memory=shared_memory)\n"
	"        else:\n"
	"            _KERNELS[key] = mx.fast.metal_kernel(\n"
	"                name=name, input_names=inputs, output_names=outputs, source=source,\n"
	"                header=header)\n"
	"    return _KERNELS[key]\n";

static int mlx_write(const struct ks_export_item *items, int n, struct ks_export_out *o,
		     struct ks_error *e)
{
	struct ks_buf *out = ks_export_out_file(o, "ksearch_mlx.py");
	ks_buf_adds(out, prelude);
	int rc = ks_export_one_per_task(items, n, "function", e);
	for (int i = 0; i < n && !rc; i++)
		rc = write_function(&items[i], out, e);
	return rc;
}

static const char *const mlx_backends[] = {"mlx", NULL};

const struct ks_exporter_i ks_exporter_mlx = {
	.version = KS_EXPORTER_VERSION,
	.name = "mlx",
	.backends = mlx_backends,
	.summary = "a Python module: one function per task building mx.fast.cuda_kernel / metal_kernel",
	.write = mlx_write,
};
