/* The torch exporter: a Python module registering one torch.library custom op per task
 * (torch.ops.ksearch.softmax, also softmax() in the module) with the task's signature:
 * input tensors and the params no input shape gives in, the outputs returned; dtypes, ranks
 * and shapes checked against task.yaml.  The kernel is built on first use with
 * torch.utils.cpp_extension.load_inline: a C kernel (cpu backend) is compiled by cc with the
 * backend's flags into an object the extension links, a CUDA kernel goes in as
 * cuda_sources.  Either way a C-linkage launcher appended to the kernel takes the tensors'
 * data pointers and the stream as integers, so the extension needs no kernel headers.
 * Exported --per-shape, when candidates won different workloads each is its own extension
 * and the op picks the one that won the shape measured, the overall best for any other. */
#include <stdio.h>
#include <string.h>

#include "export/exporters.h"
#include "ksearch/backend.h"

static const char *torch_dtype(enum ks_dtype t)
{
	static const char *const names[] = {"torch.float32", "torch.float64", "torch.float16",
					    "torch.bfloat16", "torch.int32", "torch.int64"};
	return (unsigned)t < 6 ? names[t] : "None";
}

static int is_cuda(const struct ks_export_item *it)
{
	return !strcmp(ks_export_ext(it), "cu");
}

/* the launcher appended to the kernel source: ks_launch_NAME(int64 pointers, params, stream) */
static void add_launcher(const struct ks_export_item *it, struct ks_buf *out)
{
	const struct ks_task *t = it->task;
	const struct ks_abi *abi = ks_abi_find(it->backend);
	ks_buf_addf(out, "\n\n/* ksearch export: the op's launcher */\n#include <stdint.h>\n%s"
			 "void ks_launch_%s(",
		    is_cuda(it) ? "extern \"C\" " : "", t->name);
	for (int i = 0; i < t->ntensors; i++)
		ks_buf_addf(out, "%sint64_t %s", i ? ", " : "", t->tensors[i].name);
	for (int i = 0; i < t->nparams; i++)
		ks_buf_addf(out, ", %s %s",
			    t->params[i].dtype == KS_DT_F32 || t->params[i].dtype == KS_DT_F64 ? "double"
											   : "int64_t",
			    t->params[i].name);
	ks_buf_addf(out, ", int64_t stream)\n{\n\t%s(", t->name);
	for (int i = 0; i < t->ntensors; i++)
		ks_buf_addf(out, "%s(%s%s *)(intptr_t)%s", i ? ", " : "", i < t->ninputs ? "const " : "",
			    ks_dtype_ctype(t->tensors[i].dtype, it->backend), t->tensors[i].name);
	for (int i = 0; i < t->nparams; i++)
		ks_buf_addf(out, ", (%s)%s", ks_dtype_ctype(t->params[i].dtype, it->backend),
			    t->params[i].name);
	if (abi && abi->stream_type)
		ks_buf_addf(out, ", (%s)(intptr_t)stream", abi->stream_type);
	ks_buf_adds(out, ");\n");
	if (!(abi && abi->stream_type))
		ks_buf_adds(out, "\t(void)stream;\n");
	ks_buf_adds(out, "}\n");
}

/* the C++ the extension compiles: the launcher's declaration and `launch` calling it */
static void add_cpp(const struct ks_export_item *it, struct ks_buf *out)
{
	const struct ks_task *t = it->task;
	struct ks_buf args = KS_BUF_INIT, names = KS_BUF_INIT;
	for (int i = 0; i < t->ntensors; i++) {
		ks_buf_addf(&args, "%sint64_t %s", i ? ", " : "", t->tensors[i].name);
		ks_buf_addf(&names, "%s%s", i ? ", " : "", t->tensors[i].name);
	}
	for (int i = 0; i < t->nparams; i++) {
		ks_buf_addf(&args, ", %s %s",
			    t->params[i].dtype == KS_DT_F32 || t->params[i].dtype == KS_DT_F64 ? "double"
											   : "int64_t",
			    t->params[i].name);
		ks_buf_addf(&names, ", %s", t->params[i].name);
	}
	struct ks_buf cpp = KS_BUF_INIT;
	ks_buf_addf(&cpp, "#include <cstdint>\nextern \"C\" void ks_launch_%s(%s, int64_t stream);\n"
			  "void launch(%s, int64_t stream) { ks_launch_%s(%s, stream); }\n",
		    t->name, ks_buf_str(&args), ks_buf_str(&args), t->name, ks_buf_str(&names));
	ks_py_add_str(out, ks_buf_str(&cpp));
	ks_buf_release(&cpp);
	ks_buf_release(&args);
	ks_buf_release(&names);
}

/* the op's module-level data: the C++ glue, one kernel source per variant (each with its
 * launcher), the measured shapes each variant won */
static void op_sources(const struct ks_export_item *it, const char *kernel_file,
		       struct ks_buf *out)
{
	const char *name = it->task->name;
	char src[256];
	ks_buf_addf(out, "\n# %s: %s (backend %s)\n_%s_CPP = ", name, it->origin, it->backend, name);
	add_cpp(it, out);
	ks_buf_addf(out, "_%s_SOURCES = [\n", name);
	for (int v = 0; v < it->nvariants; v++) {
		struct ks_buf k = KS_BUF_INIT, l = KS_BUF_INIT;
		add_launcher(it, &l);
		if (kernel_file) {
			ks_export_kernel_name(it, v, src, sizeof(src));
			ks_buf_addf(out, "    _read(\"%s\") + ", src);
		} else {
			ks_export_kernel_source(it, v, &k);
			ks_buf_adds(out, "    ");
			ks_py_add_str(out, ks_buf_str(&k));
			ks_buf_adds(out, "    + ");
		}
		ks_py_add_str(out, ks_buf_str(&l));
		ks_buf_adds(out, ",\n");
		ks_buf_release(&k);
		ks_buf_release(&l);
	}
	ks_buf_addf(out, "]\n_%s_ROUTES = [", name);
	for (int r = 0; r < it->nroutes; r++) {
		ks_buf_adds(out, "((");
		for (int p = 0; p < it->task->nparams; p++)
			ks_buf_addf(out, "%.17g, ", it->routes[r].values[p]);
		ks_buf_addf(out, "), %d), ", it->routes[r].variant);
	}
	ks_buf_adds(out, "]\n");
}

/* the params no input shape gives in, as arguments ", n: int" (types: 1) or ", n" */
static void op_params(const struct ks_task *t, int types, struct ks_buf *out)
{
	char src[256];
	for (int i = 0; i < t->nparams; i++) {
		if (ks_py_param_source(t, t->params[i].name, src, sizeof(src)))
			continue;
		int real = t->params[i].dtype == KS_DT_F32 || t->params[i].dtype == KS_DT_F64;
		ks_buf_addf(out, ", %s%s", t->params[i].name, !types ? "" : real ? ": float" : ": int");
	}
}

/* "    n = x.shape[1]" for each param an input's shape gives */
static void op_params_from_shapes(const struct ks_task *t, struct ks_buf *out)
{
	char src[256];
	for (int i = 0; i < t->nparams; i++)
		if (ks_py_param_source(t, t->params[i].name, src, sizeof(src)))
			ks_buf_addf(out, "    %s = %s\n", t->params[i].name, src);
}

/* the decorator, the signature and the docstring */
static void op_signature(const struct ks_export_item *it, const char *fn, struct ks_buf *out)
{
	const struct ks_task *t = it->task;
	ks_buf_addf(out, "\n\n@torch.library.custom_op(\"ksearch::%s\", mutates_args=())\ndef %s(",
		    t->name, fn);
	for (int i = 0; i < t->ninputs; i++)
		ks_buf_addf(out, "%s%s: torch.Tensor", i ? ", " : "", t->tensors[i].name);
	op_params(t, 1, out);
	int nout = t->ntensors - t->ninputs;
	ks_buf_addf(out, ") -> %s:\n    \"\"\"%s\n\n    ",
		    nout == 1 ? "torch.Tensor" : "typing.List[torch.Tensor]",
		    t->summary ? t->summary : t->name);
	ks_export_tensors_doc(out, t);
	ks_buf_addf(out, ".\n    Found by ksearch (%s); takes %s tensors.\n    \"\"\"\n", it->origin,
		    is_cuda(it) ? "CUDA" : "CPU");
}

/* the inputs checked and made contiguous, the outputs allocated */
static int op_tensors(const struct ks_export_item *it, struct ks_buf *out, struct ks_error *e)
{
	const struct ks_task *t = it->task;
	int rc = 0;
	for (int i = 0; i < t->ninputs; i++)
		ks_buf_addf(out, "    _check_tensor(\"%s\", \"%s\", %s, %s, %d, \"%s\")\n", t->name,
			    t->tensors[i].name, t->tensors[i].name, torch_dtype(t->tensors[i].dtype),
			    t->tensors[i].ndim, is_cuda(it) ? "cuda" : "cpu");
	op_params_from_shapes(t, out);
	for (int i = 0; i < t->ntensors && !rc; i++) {
		const struct ks_tensor_decl *d = &t->tensors[i];
		ks_buf_addf(out, "    %s_shape = (", d->name);
		for (int j = 0; j < d->ndim && !rc; j++) {
			rc = ks_py_add_expr(out, d->shape[j], "shape", e);
			ks_buf_adds(out, ", ");
		}
		ks_buf_adds(out, ")\n");
		if (i < t->ninputs)
			ks_buf_addf(out, "    _check_shape(\"%s\", \"%s\", %s, %s_shape)\n    %s = %s.contiguous()\n",
				    t->name, d->name, d->name, d->name, d->name, d->name);
		else
			ks_buf_addf(out, "    %s = torch.empty(%s_shape, dtype=%s, device=%s.device)\n",
				    d->name, d->name, torch_dtype(d->dtype), t->tensors[0].name);
	}
	return rc;
}

/* the variant for the shape built, the kernel launched, the outputs returned */
static void op_launch(const struct ks_export_item *it, struct ks_buf *out)
{
	const struct ks_task *t = it->task;
	const char *name = t->name;
	const struct ks_backend_i *be = ks_backend_find(it->backend);
	ks_buf_addf(out, "    ext = _extension(\"%s\", \"%s\", _%s_SOURCES[_route(_%s_ROUTES, (", name,
		    is_cuda(it) ? "cuda" : "c", name, name);
	for (int p = 0; p < t->nparams; p++)
		ks_buf_addf(out, "%s, ", t->params[p].name);
	ks_buf_addf(out, "))], _%s_CPP, \"%s\")\n    ext.launch(", name,
		    be && be->default_flags ? be->default_flags : "-O3");
	for (int i = 0; i < t->ntensors; i++)
		ks_buf_addf(out, "%s%s.data_ptr()", i ? ", " : "", t->tensors[i].name);
	for (int p = 0; p < t->nparams; p++)
		ks_buf_addf(out, ", %s", t->params[p].name);
	ks_buf_addf(out, ", _stream(%s))\n    return ", t->tensors[0].name);
	if (t->ntensors - t->ninputs == 1) {
		ks_buf_addf(out, "%s\n", t->tensors[t->ninputs].name);
		return;
	}
	ks_buf_adds(out, "[");
	for (int i = t->ninputs; i < t->ntensors; i++)
		ks_buf_addf(out, "%s%s", i > t->ninputs ? ", " : "", t->tensors[i].name);
	ks_buf_adds(out, "]\n");
}

/* shapes without running: torch.compile and meta tensors */
static int op_fake(const struct ks_export_item *it, const char *fn, struct ks_buf *out,
		   struct ks_error *e)
{
	const struct ks_task *t = it->task;
	int rc = 0;
	ks_buf_addf(out, "\n\n@%s.register_fake\ndef _%s_fake(", fn, t->name);
	for (int i = 0; i < t->ninputs; i++)
		ks_buf_addf(out, "%s%s", i ? ", " : "", t->tensors[i].name);
	op_params(t, 0, out);
	ks_buf_adds(out, "):\n");
	op_params_from_shapes(t, out);
	ks_buf_adds(out, "    outs = [");
	for (int i = t->ninputs; i < t->ntensors && !rc; i++) {
		ks_buf_adds(out, "torch.empty((");
		for (int j = 0; j < t->tensors[i].ndim && !rc; j++) {
			rc = ks_py_add_expr(out, t->tensors[i].shape[j], "shape", e);
			ks_buf_adds(out, ", ");
		}
		ks_buf_addf(out, "), dtype=%s, device=%s.device), ", torch_dtype(t->tensors[i].dtype),
			    t->tensors[0].name);
	}
	ks_buf_addf(out, "]\n    return %s\n", t->ntensors - t->ninputs == 1 ? "outs[0]" : "outs");
	return rc;
}

static int write_op(const struct ks_export_item *it, const char *kernel_file, const char *fn,
		    struct ks_buf *out, struct ks_error *e)
{
	op_sources(it, kernel_file, out);
	op_signature(it, fn, out);
	int rc = op_tensors(it, out, e);
	if (rc)
		return rc;
	op_launch(it, out);
	return op_fake(it, fn, out, e);
}

static const char prelude[] =
	"\"\"\"PyTorch ops for kernels found by ksearch (ksearch export --to torch); generated, do "
	"not edit.\n"
	"\n"
	"Each op is a torch.library custom op (torch.ops.ksearch.<task>, also a function here) that\n"
	"checks its tensors against the task's dtypes and shapes, allocates the outputs and calls\n"
	"the kernel.  The kernel is built on first use with torch.utils.cpp_extension.load_inline\n"
	"(C kernels compiled by $CC, default cc, into an object the extension links; CUDA kernels\n"
	"as cuda_sources) in $KSEARCH_TORCH_BUILD (default: <tmp>/ksearch_torch).\n";

/* the module after its docstring */
static const char prelude_code[] =
	"import hashlib\n"
	"import os\n"
	"import subprocess\n"
	"import tempfile\n"
	"import typing\n"
	"\n"
	"import torch\n"
	"import torch.utils.cpp_extension as _cpp\n"
	"\n"
	"_BUILT = {}\n"
	"# torch builds CUDA sources with these off; ksearch measured kernels with them on\n"
	"_CUDA_FLAGS = [\"-O3\", \"-std=c++17\", \"-U__CUDA_NO_HALF_OPERATORS__\",\n"
	"               \"-U__CUDA_NO_HALF_CONVERSIONS__\", \"-U__CUDA_NO_BFLOAT16_CONVERSIONS__\",\n"
	"               \"-U__CUDA_NO_HALF2_OPERATORS__\"]\n"
	"\n"
	"\n"
	"def _ceil_div(a, b):\n"
	"    return -(-a // b)\n"
	"\n"
	"\n"
	"def _read(name):\n"
	"    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), name)) as f:\n"
	"        return f.read()\n"
	"\n"
	"\n"
	"def _check_tensor(op, name, t, dtype, ndim, device):\n"
	"    if not isinstance(t, torch.Tensor):\n"
	"        raise TypeError(f\"{op}: '{name}' must be a tensor, not {type(t).__name__}\")\n"
	"    if t.dtype != dtype:\n"
	"        raise TypeError(f\"{op}: '{name}' must be {dtype}, not {t.dtype}\")\n"
	"    if t.dim() != ndim:\n"
	"        raise ValueError(f\"{op}: '{name}' must have {ndim} dimensions, not {t.dim()}\")\n"
	"    if t.device.type != device:\n"
	"        raise ValueError(f\"{op}: '{name}' must be on {device} (the kernel was found there), \"\n"
	"                         f\"not {t.device}\")\n"
	"\n"
	"\n"
	"def _check_shape(op, name, t, want):\n"
	"    if tuple(t.shape) != tuple(want):\n"
	"        raise ValueError(f\"{op}: '{name}' has shape {tuple(t.shape)}, the task wants {tuple(want)}\")\n"
	"\n"
	"\n"
	"def _route(routes, params):\n"
	"    \"\"\"the variant that won this measured shape; 0, the overall best, for any other\"\"\"\n"
	"    for shape, variant in routes:\n"
	"        if tuple(shape) == tuple(params):\n"
	"            return variant\n"
	"    return 0\n"
	"\n"
	"\n"
	"def _stream(t):\n"
	"    return torch.cuda.current_stream(t.device).cuda_stream if t.is_cuda else 0\n"
	"\n"
	"\n"
	"def _extension(name, lang, source, cpp, cflags):\n"
	"    key = hashlib.sha256(\"\\0\".join((lang, source, cpp, cflags)).encode()).hexdigest()[:16]\n"
	"    if key in _BUILT:\n"
	"        return _BUILT[key]\n"
	"    root = os.environ.get(\"KSEARCH_TORCH_BUILD\") or os.path.join(tempfile.gettempdir(), \"ksearch_torch\")\n"
	"    d = os.path.join(root, f\"{name}_{key}\")\n"
	"    os.makedirs(d, exist_ok=True)\n"
	"    ext = f\"ksearch_{name}_{key}\"\n"
	"    if lang == \"c\":\n"
	"        src, obj = os.path.join(d, \"kernel.c\"), os.path.join(d, \"kernel.o\")\n"
	"        with open(src, \"w\") as f:\n"
	"            f.write(source)\n"
	"        cc = os.environ.get(\"CC\", \"cc\")\n"
	"        r = subprocess.run([cc, *cflags.split(), \"-fPIC\", \"-c\", src, \"-o\", obj],\n"
	"                           capture_output=True, text=True)\n"
	"        if r.returncode:\n"
	"            raise RuntimeError(f\"{name}: {cc} failed on the kernel:\\n{r.stderr}\")\n"
	"        libs = [\"-lgomp\"] if \"-fopenmp\" in cflags.split() else []\n"
	"        mod = _cpp.load_inline(ext, cpp_sources=[cpp], functions=[\"launch\"],\n"
	"                               extra_ldflags=[obj, \"-lm\", *libs], build_directory=d)\n"
	"    else:\n"
	"        mod = _cpp.load_inline(ext, cpp_sources=[cpp], cuda_sources=[source],\n"
	"                               extra_cuda_cflags=_CUDA_FLAGS, build_directory=d,\n"
	"                               functions=[\"launch\"])\n"
	"    _BUILT[key] = mod\n"
	"    return mod\n";

int ks_torch_module(const struct ks_export_item *items, int n, const char *kernel_file,
		    const char *fn, struct ks_buf *out, struct ks_error *e)
{
	ks_buf_adds(out, prelude);
	for (int i = 0; i < n; i++) {
		ks_buf_adds(out, "\n");
		ks_export_provenance(out, &items[i], "");
	}
	ks_buf_adds(out, "\"\"\"\n");
	ks_buf_adds(out, prelude_code);
	int rc = ks_export_one_per_task(items, n, "op", e);
	for (int i = 0; i < n && !rc; i++)
		rc = write_op(&items[i], kernel_file, fn ? fn : items[i].task->name, out, e);
	return rc;
}

static int torch_write(const struct ks_export_item *items, int n, struct ks_export_out *o,
		       struct ks_error *e)
{
	return ks_torch_module(items, n, NULL, NULL, ks_export_out_file(o, "ksearch_torch.py"), e);
}

const struct ks_exporter_i ks_exporter_torch = {
	.version = KS_EXPORTER_VERSION,
	.name = "torch",
	.backends = ks_export_host_and_cuda,
	.summary = "a Python module: one torch.library op per task, built with load_inline (CPU: C "
		   "kernels, CUDA: .cu kernels)",
	.write = torch_write,
};
