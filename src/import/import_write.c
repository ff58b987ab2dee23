/* An imported problem written out as a task folder (contract in import_impl.h): task.yaml,
 * reference.py, README.md and, for the operators of the table below, a naive baseline.c and
 * a knob template templates/cpu/<op>.c generated from the task's own prototype. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import/import_impl.h"
#include "ksearch/backend.h"
#include "task/task_priv.h"
#include "util/fs.h"
#include "util/units.h"

static const struct imp_op ops[] = {
	{IMP_OP_UNARY, "relu", "ks_v > 0.0f ? ks_v : 0.0f", "np.maximum(v, 0)"},
	{IMP_OP_UNARY, "sigmoid", "1.0f / (1.0f + expf(-ks_v))", "1.0 / (1.0 + np.exp(-v.astype(np.float64)))"},
	{IMP_OP_UNARY, "tanh", "tanhf(ks_v)", "np.tanh(v.astype(np.float64))"},
	{IMP_OP_SOFTMAX, "softmax", NULL, NULL},
	{IMP_OP_RMSNORM, "rmsnorm", NULL, NULL},
};

void imp_task_init(struct imp_task *it)
{
	memset(it, 0, sizeof(*it));
	ks_buf_init(&it->reference, (size_t)4 << 20);
	ks_buf_init(&it->readme, (size_t)1 << 20);
	ks_buf_init(&it->kernel_head, (size_t)1 << 16);
	ks_buf_init(&it->kernel_body, (size_t)1 << 20);
	ks_buf_init(&it->sidecar, (size_t)16 << 20);
}

void imp_task_release(struct imp_task *it)
{
	ks_buf_release(&it->reference);
	ks_buf_release(&it->readme);
	ks_buf_release(&it->kernel_head);
	ks_buf_release(&it->kernel_body);
	ks_buf_release(&it->sidecar);
	free(it->values);
	it->values = NULL;
}

double *imp_workload_row(struct imp_task *it, int w)
{
	if (w < 0)
		return NULL;
	if (w >= it->cap_workloads) {
		int cap = it->cap_workloads ? it->cap_workloads * 2 : 8;
		while (cap <= w)
			cap *= 2;
		void *p = realloc(it->values, sizeof(*it->values) * (size_t)cap);
		if (!p)
			return NULL;
		it->values = p;
		memset(it->values[it->cap_workloads], 0,
		       sizeof(*it->values) * (size_t)(cap - it->cap_workloads));
		it->cap_workloads = cap;
	}
	return it->values[w];
}

void imp_identifier(const char *text, const char *prefix, char *out, size_t n)
{
	char id[IMP_NAME * 2];
	size_t k = 0;
	/* runs of anything else become one '_', none at either end */
	for (const char *p = text; *p && k + 1 < sizeof(id); p++) {
		char c = isalnum((unsigned char)*p) && !(*p & 0x80) ? (char)tolower((unsigned char)*p) : '_';
		if (c != '_' || (k && id[k - 1] != '_'))
			id[k++] = c;
	}
	while (k && id[k - 1] == '_')
		k--;
	id[k] = '\0';
	if (!k)
		snprintf(id, sizeof(id), "task");
	/* digits first, C keywords and names the loader reserves get the prefix */
	if (isdigit((unsigned char)id[0]) || !ks_task_ident_ok(id))
		snprintf(out, n, "%s%s", prefix, id);
	else
		snprintf(out, n, "%s", id);
	size_t len = strlen(out);
	if (len > 64)
		len = 64;
	while (len && out[len - 1] == '_')
		len--;
	out[len] = '\0';
}

const struct imp_op *imp_op_find(const char *name)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(ops[i].name, name))
			return &ops[i];
	return NULL;
}

static int same_shape(const struct imp_tensor *a, const struct imp_tensor *b)
{
	if (a->ndim != b->ndim)
		return 0;
	for (int k = 0; k < a->ndim; k++)
		if (strcmp(a->shape[k], b->shape[k]))
			return 0;
	return 1;
}

int imp_op_fits(const struct imp_task *it, char *why, size_t n)
{
	const struct imp_tensor *x = &it->tensors[0], *y = &it->tensors[it->ntensors - 1];
	int nin = it->ntensors - 1, want_in = it->op.kind == IMP_OP_RMSNORM ? 2 : 1;
	int want_params = it->op.kind == IMP_OP_RMSNORM;
	int nfloat = 0;
	for (int i = 0; i < it->nparams; i++)
		nfloat += !strcmp(it->params[i].type, "f32");
	const char *bad = NULL;
	if (it->op.kind == IMP_OP_NONE)
		bad = "no operator was recognised";
	else if (nin != want_in || y->is_output != 1 || it->tensors[nin - 1].is_output)
		bad = want_in == 2 ? "it needs two inputs (x, weight) and one output"
				   : "it needs one input and one output";
	else if (!same_shape(x, y) || x->ndim < 1)
		bad = "the output must have the input's shape";
	else if (nfloat != want_params)
		bad = want_params ? "it needs one f32 scalar (eps)" : "it takes no float scalars";
	for (int i = 0; !bad && i < it->ntensors; i++)
		if (strcmp(it->tensors[i].dtype, "f32"))
			bad = "the generated kernels are f32 only";
	if (!bad && it->op.kind == IMP_OP_RMSNORM &&
	    (it->tensors[1].ndim != 1 || strcmp(it->tensors[1].shape[0], x->shape[x->ndim - 1])))
		bad = "the weight must be one vector over the last axis";
	if (bad)
		snprintf(why, n, "%s", bad);
	return bad ? -1 : 0;
}

/* ---- reference.py ------------------------------------------------------------------ */

void imp_numpy_form(struct imp_task *it)
{
	struct ks_buf *b = &it->reference;
	const char *x = it->tensors[0].name, *w = it->ntensors > 2 ? it->tensors[1].name : "";
	const char *eps = "";
	for (int i = 0; i < it->nparams; i++)
		if (!strcmp(it->params[i].type, "f32"))
			eps = it->params[i].name;
	char why[128];
	if (imp_op_fits(it, why, sizeof(why))) {
		ks_buf_adds(b, "_ks_numpy_reference = None\n");
		return;
	}
	ks_buf_addf(b, "\n\ndef _ks_numpy_reference(kw):\n"
		       "    \"\"\"%s, written with numpy by the importer (used without torch)\"\"\"\n"
		       "    v = kw['%s']\n", it->op.name, x);
	switch (it->op.kind) {
	case IMP_OP_UNARY:
		ks_buf_addf(b, "    return %s\n", it->op.np_expr);
		break;
	case IMP_OP_SOFTMAX:
		ks_buf_adds(b, "    v = v.astype(np.float64)\n"
			       "    e = np.exp(v - v.max(axis=-1, keepdims=True))\n"
			       "    return e / e.sum(axis=-1, keepdims=True)\n");
		break;
	default:
		ks_buf_addf(b, "    v = v.astype(np.float64)\n"
			       "    r = np.sqrt(np.mean(v * v, axis=-1, keepdims=True) + kw['%s'])\n"
			       "    return v / r * kw['%s']\n", eps, w);
		break;
	}
}

void imp_reference_prelude(struct imp_task *it, const char *source, const char *what)
{
	json_t *j = json_string(source);
	char *lit = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	ks_buf_addf(&it->reference,
		    "# The reference of task '%s', written by 'ksearch tasks import' from %s.\n"
		    "# ksearch calls reference(**inputs, **params) with numpy arrays (docs/tasks.md).\n"
		    "import re\n\nimport numpy as np\n\n"
		    "# the problem's own code, as the problem file gives it\n"
		    "_KS_SOURCE = %s\n\n"
		    "_ks_ns = None\n\n\n"
		    "def _ks_module():\n"
		    "    global _ks_ns\n"
		    "    if _ks_ns is None:\n"
		    "        ns = {}\n"
		    "        exec(compile(_KS_SOURCE, %s, 'exec'), ns)\n"
		    "        _ks_ns = ns\n"
		    "    return _ks_ns\n\n\n"
		    "def _ks_wants_torch():\n"
		    "    return re.search(r'^\\s*(import|from)\\s+torch', _KS_SOURCE, re.M) is not None\n\n\n"
		    "def _ks_have_torch():\n"
		    "    try:\n"
		    "        import torch  # noqa: F401\n"
		    "    except ImportError:\n"
		    "        return False\n"
		    "    return True\n\n\n"
		    "def _ks_torch():\n"
		    "    try:\n"
		    "        import torch\n"
		    "    except ImportError:\n"
		    "        raise RuntimeError('the reference of this problem needs torch, which is not '\n"
		    "                           'installed for this python3') from None\n"
		    "    return torch\n",
		    it->name, it->origin, lit ? lit : "''", what);
	free(lit);
	json_decref(j);
}

/* ---- task.yaml ---------------------------------------------------------------------- */

static void yaml_string(struct ks_buf *b, const char *s)
{
	json_t *j = json_string(s);
	char *txt = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	ks_buf_adds(b, txt ? txt : "\"\"");
	free(txt);
	json_decref(j);
}

/* a dimension: plain when a name or a number, quoted when an expression */
static void yaml_dim(struct ks_buf *b, const char *d)
{
	if (strspn(d, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(d))
		ks_buf_adds(b, d);
	else
		yaml_string(b, d);
}

static void shape_product(const struct imp_tensor *t, int upto, const char *cast,
			  struct ks_buf *b)
{
	if (upto == 0)
		ks_buf_adds(b, "1");
	for (int k = 0; k < upto; k++) {
		int plain = strspn(t->shape[k], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
			    strlen(t->shape[k]);
		ks_buf_addf(b, "%s%s%s%s%s", k ? " * " : "", k == 0 && cast ? cast : "", plain ? "" : "(",
			    t->shape[k], plain ? "" : ")");
	}
}

static void write_value(struct ks_buf *b, const struct imp_param *p, double v)
{
	if (!strcmp(p->type, "f32") || !strcmp(p->type, "f64"))
		ks_buf_addf(b, "%.9g", v);
	else
		ks_buf_addf(b, "%.0f", v);
}

/* param i is a free dimension: a size of an input that the check may change */
static int free_dim(const struct imp_task *it, int i)
{
	if ((it->fixed >> i & 1) || strcmp(it->params[i].type, "i32"))
		return 0;
	for (int t = 0; t < it->ntensors; t++)
		for (int k = 0; k < it->tensors[t].ndim && !it->tensors[t].is_output; k++)
			if (!strcmp(it->tensors[t].shape[k], it->params[i].name))
				return 1;
	return 0;
}

/* the workload the check starts from: the smallest (by the product of its free dimensions)
 * with an even one, so the check costs what the cheapest such workload costs; -1: none */
static int odd_basis(const struct imp_task *it)
{
	int best = -1;
	double best_size = 0;
	for (int w = 0; w < it->nworkloads; w++) {
		double size = 1;
		int even = 0;
		for (int i = 0; i < it->nparams; i++)
			if (free_dim(it, i)) {
				size *= it->values[w][i];
				even |= fmod(it->values[w][i], 2) == 0;
			}
		if (even && (best < 0 || size < best_size))
			best = w, best_size = size;
	}
	return best;
}

/* a generated kernel's check: every free dimension of the basis workload made odd (one
 * more when even), the others (a const axis, a kernel size, a stride) as they are; none
 * when every workload's free dimensions are all odd */
static void odd_check(const struct imp_task *it, struct ks_buf *b)
{
	int w = odd_basis(it);
	if (w < 0)
		return;
	ks_buf_adds(b, "checks:\n  - {name: odd-sizes");
	for (int i = 0; i < it->nparams; i++) {
		double v = it->values[w][i];
		if (free_dim(it, i) && fmod(v, 2) == 0)
			v += 1;
		ks_buf_addf(b, ", %s: ", it->params[i].name);
		write_value(b, &it->params[i], v);
	}
	ks_buf_adds(b, "}\n");
}

static void task_yaml(const struct imp_task *it, struct ks_buf *b)
{
	const char *op_cls[] = {"imported", "elementwise", "softmax", "normalization"};
	ks_buf_addf(b, "# imported from %s by 'ksearch tasks import'\nname: %s\nclass: %s\nsummary: ",
		    it->origin, it->name, it->cls[0] ? it->cls : op_cls[it->op.kind]);
	yaml_string(b, it->summary);
	ks_buf_adds(b, "\nparams: {");
	for (int i = 0; i < it->nparams; i++)
		ks_buf_addf(b, "%s%s: %s", i ? ", " : "", it->params[i].name, it->params[i].type);
	ks_buf_adds(b, "}\n");
	for (int pass = 0; pass < 2; pass++) {
		ks_buf_adds(b, pass ? "outputs:" : "inputs:");
		int any = 0;
		for (int i = 0; i < it->ntensors; i++) {
			const struct imp_tensor *t = &it->tensors[i];
			if (t->is_output != pass)
				continue;
			any++;
			ks_buf_addf(b, "\n  %s: {dtype: %s, shape: [", t->name, t->dtype);
			for (int k = 0; k < t->ndim; k++) {
				ks_buf_adds(b, k ? ", " : "");
				yaml_dim(b, t->shape[k]);
			}
			ks_buf_adds(b, "]");
			if (t->init)
				ks_buf_addf(b, ", init: \"%s\"", t->init);
			ks_buf_adds(b, "}");
		}
		ks_buf_adds(b, any ? "\n" : " {}\n");
	}
	/* flops of the recognised ops per element; bytes: every tensor read or written once */
	static const int per_elem[] = {0, 1, 5, 4};
	ks_buf_adds(b, "flops: \"");
	if (it->flops[0]) {
		ks_buf_adds(b, it->flops);
	} else if (it->op.kind != IMP_OP_NONE) {
		ks_buf_addf(b, "%d * ", per_elem[it->op.kind]);
		shape_product(&it->tensors[0], it->tensors[0].ndim, NULL, b);
	} else {
		ks_buf_adds(b, "0");
	}
	ks_buf_adds(b, "\"\nbytes: \"");
	for (int i = 0; i < it->ntensors; i++) {
		enum ks_dtype dt = KS_DT_F32;
		ks_dtype_parse(it->tensors[i].dtype, &dt);
		ks_buf_addf(b, "%s%zu * ", i ? " + " : "", ks_dtype_size(dt));
		shape_product(&it->tensors[i], it->tensors[i].ndim, NULL, b);
	}
	int low = 0;
	for (int i = 0; i < it->ntensors; i++)
		low |= !strcmp(it->tensors[i].dtype, "f16") || !strcmp(it->tensors[i].dtype, "bf16");
	if (it->atol > 0)
		ks_buf_addf(b, "\"\ntolerance: {atol: %g, rtol: %g, l2: %g}\nworkloads:\n", it->atol,
			    it->rtol, it->l2);
	else
		ks_buf_addf(b, "\"\ntolerance: {atol: %s, rtol: %s}\nworkloads:\n",
			    low ? "1e-2" : "1e-5", low ? "1e-2" : "1e-4");
	for (int w = 0; w < it->nworkloads; w++) {
		ks_buf_adds(b, "  - {");
		for (int i = 0; i < it->nparams; i++) {
			ks_buf_addf(b, "%s%s: ", i ? ", " : "", it->params[i].name);
			write_value(b, &it->params[i], it->values[w][i]);
		}
		ks_buf_adds(b, "}\n");
	}
	if ((it->op.kind == IMP_OP_NONE && !it->shipped[0] && !it->kernel_body.len) || !it->nworkloads)
		return;
	if (it->kernel_body.len) {
		odd_check(it, b);
		return;
	}
	/* the awkward small case every recognised op must survive: odd sizes on every axis */
	ks_buf_adds(b, "checks:\n  - {name: odd-sizes");
	for (int i = 0, odd = 3; i < it->nparams; i++) {
		ks_buf_addf(b, ", %s: ", it->params[i].name);
		if (strcmp(it->params[i].type, "f32"))
			ks_buf_addf(b, "%d", odd), odd += 2;
		else
			write_value(b, &it->params[i], it->values[0][i]);
	}
	ks_buf_adds(b, "}\n");
}

/* ---- baseline.c and the knob template ------------------------------------------------ */

/* the loops of the op over rows (every axis but the last) and cols (the last); locals
 * start with ks_, which no param or tensor name may */
static void op_body(const struct imp_task *it, int tuned, struct ks_buf *b)
{
	const struct imp_tensor *x = &it->tensors[0], *y = &it->tensors[it->ntensors - 1];
	/* threads only pay off beyond a few pages of work */
	const char *par = tuned ? "#pragma omp parallel for num_threads(ks_threads()) schedule(static, CHUNK) if (ks_work >= 65536)\n\t" : "";
	if (it->op.kind == IMP_OP_UNARY) {
		ks_buf_adds(b, "\tlong ks_n = ");
		shape_product(x, x->ndim, "(long)", b);
		ks_buf_addf(b, ";\n\tlong ks_work = ks_n;\n\t(void)ks_work;\n"
			       "\t%sfor (long ks_i = 0; ks_i < ks_n; ks_i++) {\n"
			       "\t\tfloat ks_v = %s[ks_i];\n\t\t%s[ks_i] = %s;\n\t}\n",
			    par, x->name, y->name, it->op.c_expr);
		return;
	}
	ks_buf_adds(b, "\tlong ks_rows = ");
	shape_product(x, x->ndim - 1, "(long)", b);
	ks_buf_addf(b, ";\n\tlong ks_cols = %s;\n\tlong ks_work = ks_rows * ks_cols;\n\t(void)ks_work;\n"
		       "\t%sfor (long ks_r = 0; ks_r < ks_rows; ks_r++) {\n"
		       "\t\tconst float *ks_x = %s + ks_r * ks_cols;\n\t\tfloat *ks_y = %s + ks_r * ks_cols;\n",
		    x->shape[x->ndim - 1], par, x->name, y->name);
	if (it->op.kind == IMP_OP_SOFTMAX) {
		ks_buf_adds(b, "\t\tfloat ks_m = ks_x[0];\n"
			       "\t\tfor (long ks_c = 1; ks_c < ks_cols; ks_c++)\n"
			       "\t\t\tks_m = ks_x[ks_c] > ks_m ? ks_x[ks_c] : ks_m;\n"
			       "\t\tdouble ks_s = 0;\n"
			       "\t\tfor (long ks_c = 0; ks_c < ks_cols; ks_c++) {\n"
			       "\t\t\tks_y[ks_c] = expf(ks_x[ks_c] - ks_m);\n\t\t\tks_s += ks_y[ks_c];\n\t\t}\n"
			       "\t\tfloat ks_inv = (float)(1.0 / ks_s);\n"
			       "\t\tfor (long ks_c = 0; ks_c < ks_cols; ks_c++)\n\t\t\tks_y[ks_c] *= ks_inv;\n\t}\n");
		return;
	}
	const char *eps = "eps";
	for (int i = 0; i < it->nparams; i++)
		if (!strcmp(it->params[i].type, "f32"))
			eps = it->params[i].name;
	ks_buf_addf(b, "\t\tdouble ks_s = 0;\n"
		       "\t\tfor (long ks_c = 0; ks_c < ks_cols; ks_c++)\n"
		       "\t\t\tks_s += (double)ks_x[ks_c] * ks_x[ks_c];\n"
		       "\t\tfloat ks_inv = (float)(1.0 / sqrt(ks_s / ks_cols + %s));\n"
		       "\t\tfor (long ks_c = 0; ks_c < ks_cols; ks_c++)\n"
		       "\t\t\tks_y[ks_c] = ks_x[ks_c] * ks_inv * %s[ks_c];\n\t}\n",
		    eps, it->tensors[1].name);
}

static void proto_def(const char *proto, struct ks_buf *b)
{
	size_t n = strlen(proto);
	while (n && (proto[n - 1] == ';' || proto[n - 1] == '\n' || proto[n - 1] == ' '))
		n--;
	ks_buf_addf(b, "%.*s\n{\n", (int)n, proto);
}

static void baseline_c(const struct imp_task *it, const char *proto, struct ks_buf *b)
{
	ks_buf_addf(b, "/* %s: the plain loops, generated by 'ksearch tasks import' */\n"
		       "#include <math.h>\n#include <stdint.h>\n\n", it->op.name);
	proto_def(proto, b);
	op_body(it, 0, b);
	ks_buf_adds(b, "}\n");
}

static void template_c(const struct imp_task *it, const char *proto, struct ks_buf *b)
{
	int unary = it->op.kind == IMP_OP_UNARY;
	ks_buf_addf(b, "/* @ksearch\nfamily: %s-openmp\n"
		       "summary: the plain loops over %s, split among OpenMP threads\n"
		       "rating: 5\ndifficulty: 1\nknobs:\n"
		       "  THREADS: {values: [0, 1, 2, 4], default: 0, summary: \"OpenMP threads, 0 = all\", impacts: {memory_bandwidth: 5}}\n"
		       "  CHUNK: {values: [%s], default: %s, summary: \"%s per OpenMP chunk\"}\n"
		       "require:\n  - \"THREADS <= spec.cores\"\n@end */\n"
		       "#include <math.h>\n#include <omp.h>\n#include <stdint.h>\n\n"
		       "#ifndef THREADS\n#define THREADS 0\n#endif\n"
		       "#ifndef CHUNK\n#define CHUNK %s\n#endif\n\n"
		       "static int ks_threads(void)\n{\n\treturn THREADS > 0 ? THREADS : omp_get_max_threads();\n}\n\n",
		    it->op.name, unary ? "elements" : "rows", unary ? "1024, 16384, 131072" : "1, 8, 64",
		    unary ? "16384" : "8", unary ? "elements" : "rows", unary ? "16384" : "8");
	proto_def(proto, b);
	op_body(it, 1, b);
	ks_buf_adds(b, "}\n");
}

/* ---- the folder ----------------------------------------------------------------------- */

static int write_text(const char *dir, const char *file, struct ks_buf *b, struct ks_error *e)
{
	char path[PATH_MAX];
	if (ks_path_join(path, sizeof(path), dir, file))
		return ks_error_set(e, KS_ELIMIT, "path '%s/%s' too long", dir, file);
	return ks_file_write_buf(path, b, e);
}

/* the generated kernel's template: its independent loops split among OpenMP threads */
static void generic_template(const struct imp_task *it, const char *proto, struct ks_buf *b)
{
	ks_buf_adds(b, "/* @ksearch\nfamily: naive-openmp\n"
		       "summary: the importer's naive loops, each independent loop nest split among OpenMP threads\n"
		       "rating: 4\ndifficulty: 1\nknobs:\n"
		       "  THREADS: {values: [0, 1, 2, 4], default: 0, summary: \"OpenMP threads, 0 = all\", impacts: {compute_hw_fit: 5}}\n"
		       "  SCHED: {values: [0, 1], default: 0, summary: \"0 static, 1 dynamic OpenMP schedule\"}\n"
		       "require:\n  - \"THREADS <= spec.cores\"\n@end */\n"
		       "#include <omp.h>\n\n"
		       "#ifndef THREADS\n#define THREADS 0\n#endif\n#ifndef SCHED\n#define SCHED 0\n#endif\n"
		       "#define KS_THREADS (THREADS > 0 ? THREADS : omp_get_max_threads())\n"
		       "#if SCHED\n#define KS_PAR _Pragma(\"omp parallel for num_threads(KS_THREADS) schedule(dynamic, 64)\")\n"
		       "#else\n#define KS_PAR _Pragma(\"omp parallel for num_threads(KS_THREADS) schedule(static)\")\n#endif\n");
	ks_buf_addf(b, "%s", ks_buf_str(&it->kernel_head));
	proto_def(proto, b);
	ks_buf_addf(b, "%s}\n", ks_buf_str(&it->kernel_body));
}

static int write_generated(struct imp_task *it, const char *dir, struct ks_import_result *res,
			   struct ks_error *e)
{
	struct ks_task *t = NULL;
	int rc = ks_task_load(dir, &t, e);
	if (rc)
		return ks_error_wrap(e, "the imported task does not load"), rc;
	struct ks_buf proto = KS_BUF_INIT, src = KS_BUF_INIT;
	char tdir[PATH_MAX];
	if (!(rc = ks_task_prototype(t, "c", &proto))) {
		ks_buf_addf(&src, "%s", ks_buf_str(&it->kernel_head));
		proto_def(ks_buf_str(&proto), &src);
		ks_buf_addf(&src, "%s}\n", ks_buf_str(&it->kernel_body));
		rc = write_text(dir, "baseline.c", &src, e);
		res->baseline = !rc;
	}
	snprintf(tdir, sizeof(tdir), "%s/templates/cpu", dir);
	if (!rc && !(rc = ks_mkdir_p(tdir, e))) {
		ks_buf_reset(&src);
		generic_template(it, ks_buf_str(&proto), &src);
		rc = write_text(tdir, "naive_openmp.c", &src, e);
		res->templates = !rc;
	}
	snprintf(res->op, sizeof(res->op), "%s", it->op.name[0] ? it->op.name
				 : "the forward's operations (a generated naive kernel)");
	ks_buf_release(&proto);
	ks_buf_release(&src);
	ks_task_free(t);
	return rc;
}

/* a shipped task's file with its entry point renamed to the task's, as export does */
static int copy_renamed(const char *from, const char *shipped, const char *name,
			const char *dir, const char *file, struct ks_error *e)
{
	struct ks_buf src = KS_BUF_INIT, out = KS_BUF_INIT;
	int rc = ks_file_read(from, (size_t)4 << 20, &src, e);
	if (!rc) {
		/* the @ksearch block stays first: templates are found by it */
		const char *end = strstr(ks_buf_str(&src), "@end */");
		size_t head = end ? (size_t)(end - src.data) + 7 : 0;
		ks_buf_addf(&out, "%.*s%s/* ksearch tasks import: %s's kernel, entry point renamed */\n"
			    "#define %s %s\n%s", (int)head, src.data, head ? "\n" : "", shipped,
			    shipped, name, src.data + head);
		rc = write_text(dir, file, &out, e);
	}
	ks_buf_release(&src);
	ks_buf_release(&out);
	return rc;
}

static int copy_shipped(struct imp_task *it, const char *dir, struct ks_import_result *res,
			struct ks_error *e)
{
	char from[PATH_MAX], tdir[PATH_MAX];
	snprintf(from, sizeof(from), "%s/tasks/%s/baseline.c", ks_data_root(), it->shipped);
	int rc = copy_renamed(from, it->shipped, it->name, dir, "baseline.c", e);
	res->baseline = !rc;
	snprintf(tdir, sizeof(tdir), "%s/templates/cpu", dir);
	if (!rc)
		rc = ks_mkdir_p(tdir, e);
	snprintf(from, sizeof(from), "%s/tasks/%s/templates/cpu", ks_data_root(), it->shipped);
	DIR *d = rc ? NULL : opendir(from);
	for (struct dirent *de; d && !rc && (de = readdir(d));) {
		size_t len = strlen(de->d_name);
		if (len < 3 || strcmp(de->d_name + len - 2, ".c"))
			continue;
		char f[PATH_MAX];
		snprintf(f, sizeof(f), "%s/%s", from, de->d_name);
		rc = copy_renamed(f, it->shipped, it->name, tdir, de->d_name, e);
		res->templates += !rc;
	}
	if (d)
		closedir(d);
	snprintf(res->op, sizeof(res->op), "%s (the shipped task's kernels)", it->shipped);
	return rc;
}

static int generate_op(struct imp_task *it, const char *dir, const char *final_dir,
			    struct ks_import_result *res, struct ks_error *e)
{
	struct ks_task *t = NULL;
	int rc = ks_task_load(dir, &t, e);
	if (rc)
		return ks_error_wrap(e, "the imported task does not load"), rc;
	char why[128];
	if (imp_op_fits(it, why, sizeof(why))) {
		snprintf(res->note, sizeof(res->note),
			 "no baseline generated (%s%s%s): write %s/baseline.c (the prototype is in "
			 "'ksearch tasks show %s') and knob templates under templates/cpu/ to search",
			 it->op.kind ? it->op.name : "", it->op.kind ? ": " : "", why, final_dir,
			 final_dir);
		ks_task_free(t);
		return 0;
	}
	struct ks_buf proto = KS_BUF_INIT, src = KS_BUF_INIT;
	char tdir[PATH_MAX], file[IMP_NAME];
	if (!(rc = ks_task_prototype(t, "c", &proto))) {
		baseline_c(it, ks_buf_str(&proto), &src);
		rc = write_text(dir, "baseline.c", &src, e);
		res->baseline = !rc;
	}
	snprintf(tdir, sizeof(tdir), "%s/templates/cpu", dir);
	if (!rc && !(rc = ks_mkdir_p(tdir, e))) {
		ks_buf_reset(&src);
		template_c(it, ks_buf_str(&proto), &src);
		snprintf(file, sizeof(file), "%s.c", it->op.name);
		rc = write_text(tdir, file, &src, e);
		res->templates = !rc;
	}
	snprintf(res->op, sizeof(res->op), "%s", it->op.name);
	ks_buf_release(&proto);
	ks_buf_release(&src);
	ks_task_free(t);
	return rc;
}

static int generate_kernels(struct imp_task *it, const char *dir, const char *final_dir,
			    struct ks_import_result *res, struct ks_error *e)
{
	if (it->shipped[0])
		return copy_shipped(it, dir, res, e);
	if (it->kernel_body.len)
		return write_generated(it, dir, res, e);
	return generate_op(it, dir, final_dir, res, e);
}

static int param_index(const struct imp_task *it, const char *name)
{
	for (int i = 0; i < it->nparams; i++)
		if (!strcmp(it->params[i].name, name))
			return i;
	return -1;
}

/* a softmax over the last axis of a matrix takes the names the reduction class's
 * assertions give their shapes (rows, cols), so those checks apply to it too */
static void rename_rows_cols(struct imp_task *it)
{
	struct imp_tensor *x = &it->tensors[0];
	char why[128];
	if (it->op.kind != IMP_OP_SOFTMAX || imp_op_fits(it, why, sizeof(why)) || x->ndim != 2 ||
	    !strcmp(x->shape[0], x->shape[1]) || param_index(it, "rows") >= 0 ||
	    param_index(it, "cols") >= 0)
		return;
	int r = param_index(it, x->shape[0]), c = param_index(it, x->shape[1]);
	if (r < 0 || c < 0)
		return;
	char old_r[IMP_NAME], old_c[IMP_NAME];
	snprintf(old_r, sizeof(old_r), "%s", it->params[r].name);
	snprintf(old_c, sizeof(old_c), "%s", it->params[c].name);
	snprintf(it->params[r].name, IMP_NAME, "rows");
	snprintf(it->params[c].name, IMP_NAME, "cols");
	for (int i = 0; i < it->ntensors; i++)
		for (int k = 0; k < it->tensors[i].ndim; k++) {
			char *d = it->tensors[i].shape[k];
			if (!strcmp(d, old_r))
				snprintf(d, IMP_NAME, "rows");
			else if (!strcmp(d, old_c))
				snprintf(d, IMP_NAME, "cols");
		}
	ks_buf_addf(&it->readme, "\nThe problem's `%s` and `%s` are the params `rows` and `cols`.\n",
		    old_r, old_c);
}

/* distinct names for every param and tensor: the identifiers of two inputs may collide */
static int names_unique(const struct imp_task *it, struct ks_error *e)
{
	const char *names[IMP_MAX * 2];
	int n = 0;
	for (int i = 0; i < it->nparams; i++)
		names[n++] = it->params[i].name;
	for (int i = 0; i < it->ntensors; i++)
		names[n++] = it->tensors[i].name;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (!strcmp(names[i], names[j]))
				return ks_error_set(e, KS_EPARSE, "'%s': two of its axes, sizes, inputs or "
						    "outputs are both named '%s' in C", it->source,
						    names[i]);
	return 0;
}

/* bytes of every tensor of workload w */
static double workload_bytes(const struct imp_task *it, int w)
{
	double total = 0;
	for (int i = 0; i < it->ntensors; i++) {
		const struct imp_tensor *t = &it->tensors[i];
		enum ks_dtype dt = KS_DT_F32;
		ks_dtype_parse(t->dtype, &dt);
		double n = (double)ks_dtype_size(dt);
		for (int k = 0; k < t->ndim; k++) {
			char *end;
			double d = strtod(t->shape[k], &end);
			int p = param_index(it, t->shape[k]);
			n *= *end == '\0' ? d : p >= 0 ? it->values[w][p] : 1;
		}
		total += n;
	}
	return total;
}

static void warn_sizes(const struct imp_task *it, struct ks_import_result *res)
{
	int worst = 0;
	for (int w = 1; w < it->nworkloads; w++)
		if (workload_bytes(it, w) > workload_bytes(it, worst))
			worst = w;
	double b = workload_bytes(it, worst);
	if (b <= IMP_WARN_BYTES)
		return;
	char note[sizeof(res->note)], size[32];
	snprintf(note, sizeof(note), "%s%swarning: workload %d's tensors need %s of memory: "
		 "eval and run will refuse it where that much is not free", res->note,
		 res->note[0] ? "\n" : "", worst + 1, ks_format_bytes(b, size, sizeof(size)));
	memcpy(res->note, note, sizeof(note));
}

/* the loader names the temporary folder: name the task's own folder instead */
static void error_unstage(struct ks_error *e, const char *stage, const char *out_dir)
{
	char *at = strstr(e->msg, stage);
	if (!at)
		return;
	char msg[sizeof(e->msg)];
	snprintf(msg, sizeof(msg), "%.*s%s%s", (int)(at - e->msg), e->msg, out_dir,
		 at + strlen(stage));
	memcpy(e->msg, msg, sizeof(msg));
}

static int write_files(struct imp_task *it, const char *dir, struct ks_error *e)
{
	struct ks_buf yaml = KS_BUF_INIT;
	task_yaml(it, &yaml);
	ks_buf_adds(&it->reference,
		    "\n\ndef reference(**kw):\n"
		    "    \"\"\"ksearch's entry point: the problem's own reference with torch when it\n"
		    "    is installed, else the importer's numpy form of the recognised op\"\"\"\n"
		    "    if _ks_wants_torch() and (_ks_numpy_reference is None or _ks_have_torch()):\n"
		    "        return _ks_torch_reference(kw)\n"
		    "    if _ks_numpy_reference is None:\n"
		    "        return _ks_plain_reference(kw)\n"
		    "    return _ks_numpy_reference(kw)\n");
	int rc = ks_mkdir_p(dir, e);
	if (!rc)
		rc = write_text(dir, "task.yaml", &yaml, e);
	if (!rc)
		rc = write_text(dir, "reference.py", &it->reference, e);
	if (!rc)
		rc = write_text(dir, "README.md", &it->readme, e);
	if (!rc && it->sidecar_name[0])
		rc = write_text(dir, it->sidecar_name, &it->sidecar, e);
	ks_buf_release(&yaml);
	return rc;
}

int imp_write(struct imp_task *it, const char *out_dir, struct ks_import_result *res,
	      struct ks_error *e)
{
	rename_rows_cols(it);
	memset(res, 0, sizeof(*res));
	snprintf(res->name, sizeof(res->name), "%s", it->name);
	out_dir = out_dir ? out_dir : ".";
	if (!it->nworkloads)
		return ks_error_set(e, KS_EINVAL, "problem '%s' has no workload", it->name);
	int rc = names_unique(it, e);
	if (rc)
		return rc;
	if (ks_path_join(res->dir, sizeof(res->dir), out_dir, it->name))
		return ks_error_set(e, KS_ELIMIT, "path of task '%s' too long", it->name);
	char probe[PATH_MAX], stage[PATH_MAX], dir[PATH_MAX];
	snprintf(probe, sizeof(probe), "%s/task.yaml", res->dir);
	if (ks_path_exists(probe))
		return ks_error_set(e, KS_EINVAL, "'%s' already holds a task: remove it or give another --out",
				    res->dir);
	int made_out = !ks_path_exists(out_dir);
	if ((rc = ks_mkdir_p(out_dir, e)))
		return rc;
	stage[0] = '\0';
	if (snprintf(stage, sizeof(stage), "%s/.ksearch-import-XXXXXX", out_dir) >= (int)sizeof(stage) ||
	    ks_path_join(dir, sizeof(dir), stage, it->name))
		rc = ks_error_set(e, KS_ELIMIT, "path of task '%s' too long", it->name);
	else if (!mkdtemp(stage))
		rc = ks_error_set(e, KS_EIO, "create a folder in '%s': %s", out_dir, strerror(errno));
	if (rc) {
		stage[0] = '\0';
		goto out;
	}
	ks_path_join(dir, sizeof(dir), stage, it->name);
	rc = write_files(it, dir, e);
	if (!rc)
		rc = generate_kernels(it, dir, res->dir, res, e);
	if (rc)
		error_unstage(e, dir, res->dir);
	if (!rc && rename(dir, res->dir))
		rc = ks_error_set(e, KS_EIO, "move the task into '%s': %s", res->dir,
				  errno == ENOTEMPTY || errno == EEXIST
					  ? "it exists and is not empty" : strerror(errno));
	if (!rc)
		warn_sizes(it, res);
out:
	if (stage[0] && ks_is_dir(stage))
		ks_rm_rf(stage);
	if (rc && made_out)
		rmdir(out_dir);
	return rc;
}
