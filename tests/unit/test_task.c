/* Task loader (good and broken task files), workload helpers, tensor keys, prototypes,
 * the generated shim (compiled and called for real) and the task hash.
 * Runs from the source root (ctest's working directory). */
#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ksearch/backend.h"
#include "ksearch/task.h"
#include "tap.h"
#include "util/fs.h"
#include "util/yaml.h"
#include "util/env.h"

#define FIX "tests/fixtures/tasks"

static struct ks_task *load(const char *dir)
{
	struct ks_task *t = NULL;
	struct ks_error e = {0};
	int rc = ks_task_load(dir, &t, &e);
	ok(rc == 0 && t, "load %s (%s)", dir, rc ? e.msg : "ok");
	return rc ? NULL : t;
}

/* each broken fixture fails with exactly this FILE:LINE:COL: message prefix */
static const struct {
	const char *name, *want;
} broken[] = {
	{"missing_key", "missing_key/task.yaml:1:1: task lacks the key 'bytes'"},
	{"unknown_key", "unknown_key/task.yaml:9:1: unknown key 'flop_count' in task (allowed: "
			"name, class, summary, params, inputs, outputs, flops, bytes, tolerance, "
			"workloads, checks, library)"},
	{"bad_dtype", "bad_dtype/task.yaml:8:14: expected the dtype of output 'y': f32, f64, f16, "
		      "bf16, i32 or i64, got 'float32'"},
	{"bad_param_type", "bad_param_type/task.yaml:4:27: expected the type of param 'cols': "
			   "i32, i64, f32 or f64, got 'int'"},
	{"bad_shape_expr", "bad_shape_expr/task.yaml:6:42: expected ')', got end of expression "
			   "in dimension 1 of the shape of input 'x'"},
	{"unknown_name", "unknown_name/task.yaml:8:33: unknown name 'colz' in dimension 1 of the "
			 "shape of output 'y'; expected a param (rows, cols)"},
	{"flops_unknown_name", "flops_unknown_name/task.yaml:9:16: unknown name 'width' in "
			       "flops; expected a param (rows, cols)"},
	{"syntax_error", "syntax_error/task.yaml:10:1: invalid YAML: "},
	{"non_integer_param", "non_integer_param/task.yaml:12:22: expected a value for the i32 "
			      "param 'cols' (an integer in "},
	{"int_param_range", "int_param_range/task.yaml:12:12: expected a value for the i32 param "
			    "'rows' (an integer in [-2147483647, 2147483647]), got '3000000000'"},
	{"param_not_number", "param_not_number/task.yaml:12:22: expected a value for the i32 "
			     "param 'cols', got 'lots'"},
	{"missing_param", "missing_param/task.yaml:12:5: workload lacks the param 'cols'"},
	{"duplicate_check", "duplicate_check/task.yaml:15:12: duplicate check name 'small' "
			    "(first at line 14)"},
	{"check_without_name", "check_without_name/task.yaml:14:5: check lacks the key 'name'"},
	{"bad_init", "bad_init/task.yaml:6:56: bad initialiser of 'x': expected ',' between the "
		     "two arguments, got '1'"},
	{"bad_init_override", "bad_init_override/task.yaml:14:56: bad initialiser of 'x': "
			      "expected lo < hi in uniform(lo, hi)"},
	{"init_unknown_tensor", "init_unknown_tensor/task.yaml:14:44: expected the name of an "
				"input, got 'q'"},
	{"no_output", "no_output/task.yaml:7:10: expected at least one output"},
	{"no_workload", "no_workload/task.yaml:11:12: expected at least one workload"},
	{"negative_shape", "negative_shape/task.yaml:14:5: expected a positive shape under this "
			   "check: dimension 1 of 'y' ('cols - 5') is 0"},
	{"duplicate_name", "duplicate_name/task.yaml:8:3: duplicate name 'x'"},
	{"duplicate_key", "duplicate_key/task.yaml:3:1: duplicate key 'class' (first at line 2)"},
	{"name_mismatch", "name_mismatch/task.yaml:1:7: expected the task name to match its "
			  "folder 'name_mismatch', got 'softmax'"},
	{"bad_backend", "bad_backend/task.yaml:12:38: expected a backend (cpu, cuda, mlx, metal, "
			"opencl), got 'tpu'"},
	{"bad_tolerance", "bad_tolerance/task.yaml:10:19: expected a number >= 0 for 'atol', got "
			  "'-1'"},
	{"division_by_zero", "division_by_zero/task.yaml:12:5: expected 'flops' to evaluate "
			     "under this workload: "},
	{"output_with_init", "output_with_init/task.yaml:8:40: unknown key 'init' in output 'y' "
			     "(allowed: dtype, shape)"},
	{"bad_identifier", "bad_identifier/task.yaml:6:3: expected an input name: a C "
			   "identifier"},
};

static void test_broken(void)
{
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		char dir[256], want[512];
		snprintf(dir, sizeof(dir), FIX "/broken/%s", broken[i].name);
		snprintf(want, sizeof(want), FIX "/broken/%s", broken[i].want);
		struct ks_task *t = NULL;
		struct ks_error e = {0};
		int rc = ks_task_load(dir, &t, &e);
		ok(rc == KS_EPARSE && !t && !strncmp(e.msg, want, strlen(want)),
		   "broken %s: '%s'", broken[i].name, e.msg);
		if (!(rc == KS_EPARSE && !strncmp(e.msg, want, strlen(want))))
			printf("#   want prefix '%s'\n", want);
	}
}

static void test_softmax(void)
{
	struct ks_task *t = load(FIX "/softmax");
	if (!t)
		return;
	is_str(t->name, "softmax", "name");
	is_str(t->cls, "reduction", "class");
	is_str(t->summary, "Row-wise softmax over the last axis.", "summary");
	ok(t->readme && strstr(t->readme, "y[r, c] = exp"), "README.md read");
	is_int(t->nparams, 2, "two params");
	ok(!strcmp(t->params[0].name, "rows") && !strcmp(t->params[1].name, "cols") &&
		   t->params[0].dtype == KS_DT_I32,
	   "params in declaration order");
	is_int(t->ntensors, 2, "two tensors");
	is_int(t->ninputs, 1, "one input");
	ok(!strcmp(t->tensors[0].name, "x") && !t->tensors[0].is_output &&
		   t->tensors[1].is_output && t->tensors[1].init == NULL,
	   "inputs first, then outputs");
	is_str(t->tensors[0].init, "normal(0, 3)", "init text");
	ok(t->tensors[0].ndim == 2 && !strcmp(t->tensors[0].shape[1], "cols"), "shape exprs");
	is_str(t->flops, "5*rows*cols", "flops");
	ok(t->atol == 1e-5 && t->rtol == 1e-5 && t->l2 == 1e-5, "tolerance, l2 defaults to rtol");
	is_int(t->nworkloads, 2, "two workloads");
	is_int(t->nchecks, 2, "two checks");
	ok(t->workloads[0].values[0] == 4096 && t->workloads[1].values[1] == 512,
	   "workload values");
	is_int(t->workloads[0].line, 14, "workload line");
	ok(ks_workload_for_backend(&t->workloads[0], "cpu") &&
		   !ks_workload_for_backend(&t->workloads[1], "cpu") &&
		   ks_workload_for_backend(&t->workloads[1], "cuda"),
	   "backend restriction");
	is_str(t->checks[0].name, "large-logits", "check name");
	is_str(ks_workload_init(t, &t->checks[0], 0), "normal(0, 80)", "check init override");
	is_str(ks_workload_init(t, &t->checks[1], 0), "normal(0, 3)", "default init");

	struct ks_buf b;
	ks_buf_init(&b, 0);
	ks_workload_label(t, &t->workloads[0], &b);
	is_str(ks_buf_str(&b), "rows=4096 cols=4096", "workload label");
	ks_buf_reset(&b);
	ks_workload_label(t, &t->checks[1], &b);
	is_str(ks_buf_str(&b), "odd-width (rows=5 cols=1)", "check label");

	double v = 0;
	struct ks_error e = {0};
	ok(!ks_workload_expr(t, &t->workloads[0], t->flops, &v, &e) && v == 5.0 * 4096 * 4096,
	   "flops under a workload");
	ok(ks_workload_expr(t, &t->workloads[0], "rows / (cols - 4096)", &v, &e) == KS_EINVAL &&
		   strstr(e.msg, "division by zero"),
	   "expression errors reach the caller (%s)", e.msg);
	int64_t dims[KS_MAX_DIMS];
	size_t numel = 0;
	ok(!ks_workload_shape(t, &t->checks[0], 1, dims, &numel, &e) && dims[0] == 67 &&
		   dims[1] == 1000 && dims[2] == 1 && numel == 67000,
	   "shape and numel");

	/* keys: stable values, distinct per tensor and per workload */
	uint64_t kx = ks_tensor_key(t, &t->workloads[0], 0);
	uint64_t ky = ks_tensor_key(t, &t->workloads[0], 1);
	uint64_t kx2 = ks_tensor_key(t, &t->workloads[1], 0);
	ok(kx != ky && kx != kx2, "keys differ by tensor and workload");
	ok(kx == 0xa16a4ad389b3627aull, "tensor key is pinned (%016" PRIx64 ")", kx);

	/* prototypes */
	ks_buf_reset(&b);
	ok(!ks_task_prototype(t, "c", &b), "c prototype");
	is_str(ks_buf_str(&b), "void softmax(const float *x, float *y, int32_t rows, int32_t cols);",
	       "c prototype text");
	ks_buf_reset(&b);
	ks_task_prototype(t, "cuda", &b);
	is_str(ks_buf_str(&b),
	       "void softmax(const float *x, float *y, int32_t rows, int32_t cols, cudaStream_t "
	       "stream);",
	       "cuda prototype text");
	ks_buf_reset(&b);
	ks_task_prototype(t, "metal", &b);
	ok(strstr(ks_buf_str(&b), "kernel void softmax(device const float *x [[buffer(0)]], "
				  "device float *y [[buffer(1)]], constant int &rows [[buffer(2)]]"),
	   "metal prototype text (%s)", ks_buf_str(&b));
	ok(ks_task_prototype(t, "fortran", &b) == KS_EINVAL, "unknown language refused");
	ks_buf_reset(&b);
	ok(!ks_task_shim(t, "cuda", &b) && strstr(b.data, "extern \"C\"") &&
		   strstr(b.data, "#include <cuda_bf16.h>") &&
		   strstr(b.data, "(int32_t)params[1], (cudaStream_t)stream);"),
	   "cuda shim");
	ok(ks_task_shim(t, "metal", &b) == KS_EINVAL, "no metal shim");

	char h1[65], h2[65];
	ok(!ks_task_hash(t, h1, &e) && strlen(h1) == 64, "task hash");
	ks_buf_release(&b);
	ks_task_free(t);

	/* by name, through the data root; the hash changes with reference.c */
	t = load("softmax");
	if (t) {
		ok(strstr(t->dir, "fixtures/tasks/softmax") != NULL, "bare name resolves (%s)",
		   t->dir);
		ok(!ks_task_hash(t, h2, &e) && !strcmp(h1, h2), "hash is stable");
		ks_task_free(t);
	}
	/* a copy hashes the same; editing reference.c, task.yaml or reference.cu changes it */
	char dir[] = "/tmp/ks-test-hash-XXXXXX", cmd[256], tdir[128];
	if (mkdtemp(dir)) {
		snprintf(tdir, sizeof(tdir), "%s/softmax", dir);
		snprintf(cmd, sizeof(cmd), "cp -r " FIX "/softmax %s/", dir);
		struct ks_task *c = NULL;
		ok(system(cmd) == 0 && !ks_task_load(tdir, &c, &e) && !ks_task_hash(c, h2, &e) &&
			   !strcmp(h1, h2),
		   "a copied task hashes the same");
		snprintf(cmd, sizeof(cmd), "echo '/* edit */' >> %s/reference.c", tdir);
		ok(c && system(cmd) == 0 && !ks_task_hash(c, h2, &e) && strcmp(h1, h2),
		   "editing reference.c changes the hash");
		char h3[65];
		snprintf(cmd, sizeof(cmd), "echo '# edit' >> %s/task.yaml", tdir);
		ok(c && system(cmd) == 0 && !ks_task_hash(c, h3, &e) && strcmp(h2, h3),
		   "editing task.yaml changes the hash");
		/* a trusted reference.cu is ground truth too: adding or editing it changes the
		 * hash, removing it gives the hash back */
		char h4[65], h5[65];
		snprintf(cmd, sizeof(cmd), "echo '/* cu */' > %s/reference.cu", tdir);
		ok(c && system(cmd) == 0 && !ks_task_hash(c, h4, &e) && strcmp(h3, h4),
		   "adding reference.cu changes the hash");
		snprintf(cmd, sizeof(cmd), "echo '/* edit */' >> %s/reference.cu", tdir);
		ok(c && system(cmd) == 0 && !ks_task_hash(c, h5, &e) && strcmp(h4, h5),
		   "editing reference.cu changes the hash");
		snprintf(cmd, sizeof(cmd), "rm %s/reference.cu", tdir);
		ok(c && system(cmd) == 0 && !ks_task_hash(c, h5, &e) && !strcmp(h3, h5),
		   "without reference.cu the hash is as before");
		ks_task_free(c);
		ks_rm_rf(dir);
	}
}

/* writes the C shim and a kernel, builds a shared object, calls ks__entry_v1 */
static void test_shim_runs(const struct ks_task *t)
{
	char dir[] = "/tmp/ks-test-shim-XXXXXX";
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	struct ks_buf b;
	ks_buf_init(&b, 0);
	ok(!ks_task_shim(t, "c", &b), "c shim generated");
	char shim[128], kern[128], so[128], cmd[1024];
	snprintf(shim, sizeof(shim), "%s/shim.c", dir);
	snprintf(kern, sizeof(kern), "%s/kernel.c", dir);
	snprintf(so, sizeof(so), "%s/k.so", dir);
	ks_file_write_atomic(shim, b.data, b.len, NULL);
	const char *k =
		"#include <stdint.h>\n#include \"ksearch/kernel.h\"\n"
		"void mixed(const _Float16 *a, const uint16_t *b, const int32_t *idx, const double *w,"
		" const float *bias, const int64_t *z, _Float16 *out, float *stats, int32_t batch,"
		" int64_t n, float scale, double eps)\n{\n"
		"  for (int64_t i = 0; i < batch * n; i++)\n"
		"    out[i] = ks_f32_to_f16(ks_f16_to_f32(a[i]) * scale + *bias);\n"
		"  stats[0] = ks_bf16_to_f32(b[0]) + (float)idx[0] + (float)w[0] + (float)z[1];\n"
		"  stats[1] = (float)eps + ks_bf16_to_f32(ks_f32_to_bf16(1.00390625f));\n}\n";
	ks_file_write_atomic(kern, k, strlen(k), NULL);
	snprintf(cmd, sizeof(cmd),
		 "cc -std=c11 -Wall -Wextra -Werror -Iinclude -shared -fPIC -o %s %s %s 2>&1", so,
		 shim, kern);
	int rc = system(cmd);
	ok(rc == 0, "shim + kernel compile warning-free (%s)", cmd);
	void *h = rc == 0 ? dlopen(so, RTLD_NOW | RTLD_LOCAL) : NULL;
	void (*entry)(void **, const double *, void *) =
		h ? (void (*)(void **, const double *, void *))dlsym(h, "ks__entry_v1") : NULL;
	ok(entry != NULL, "ks__entry_v1 exported");
	if (entry) {
		uint16_t a[6], out[6] = {0}; /* f16 bit patterns */
		for (int i = 0; i < 6; i++)
			ks_dtype_store(KS_DT_F16, a, (size_t)i, i + 1);
		uint16_t bb[2] = {0x4040, 0}; /* 3.0 in bf16 */
		int32_t idx[2] = {7, 0};
		double w[4] = {0.5, 0, 0, 0};
		float bias = 0.25f, stats[2] = {0};
		int64_t z[2] = {0, 100};
		void *tensors[] = {a, bb, idx, w, &bias, z, out, stats};
		const double params[] = {2, 3, 2.0, 0.125};
		entry(tensors, params, NULL);
		ok(ks_dtype_load(KS_DT_F16, out, 0) == 2.25 && ks_dtype_load(KS_DT_F16, out, 5) == 12.25,
		   "tensors and params reach the kernel in order");
		ok(stats[0] == 3.0f + 7 + 0.5f + 100, "bf16, i32, f64 and i64 arguments");
		ok(stats[1] == 0.125f + 1.0f, "f64 param; kernel.h bf16 rounding ties to even");
	}
	if (h)
		dlclose(h);
	ks_buf_release(&b);
	ks_rm_rf(dir);
}

static void test_mixed(void)
{
	struct ks_task *t = load(FIX "/mixed/");
	if (!t)
		return;
	ok(t->nparams == 4 && t->params[1].dtype == KS_DT_I64 && t->params[2].dtype == KS_DT_F32 &&
		   t->params[3].dtype == KS_DT_F64,
	   "param dtypes");
	is_int(t->ninputs, 6, "six inputs");
	is_int(t->ntensors, 8, "eight tensors");
	ok(t->tensors[4].ndim == 0, "scalar tensor has no dims");
	ok(t->atol == 1e-3 && t->rtol == 1e-2 && t->l2 == 5e-3, "explicit tolerance");
	struct ks_error e = {0};
	int64_t dims[KS_MAX_DIMS];
	size_t numel = 0;
	ok(!ks_workload_shape(t, &t->workloads[1], 1, dims, &numel, &e) && numel == 2,
	   "ceil_div in a shape");
	ok(!ks_workload_shape(t, &t->workloads[1], 3, dims, &numel, &e) && dims[1] == 1 &&
		   numel == 4,
	   "integer division and max in a shape");
	ok(!ks_workload_shape(t, &t->workloads[1], 4, dims, &numel, &e) && numel == 1,
	   "scalar tensor has one element");
	ok(t->workloads[1].backends && !strcmp(t->workloads[1].backends[1], "cuda") &&
		   !t->workloads[1].backends[2],
	   "backends list");
	ok(ks_workload_for_backend(&t->workloads[1], "cpu") &&
		   !ks_workload_for_backend(&t->workloads[2], "cpu"),
	   "backend filter");
	ok(t->checks[0].line == 28 && t->checks[0].init[0] && t->checks[0].init[3] &&
		   !t->checks[0].init[1],
	   "block-style check with init overrides");
	struct ks_buf b;
	ks_buf_init(&b, 0);
	ks_workload_label(t, &t->workloads[0], &b);
	is_str(ks_buf_str(&b), "batch=8 n=1024 scale=0.5 eps=1e-06", "float param label");
	ks_buf_reset(&b);
	ks_task_prototype(t, "c", &b);
	is_str(ks_buf_str(&b),
	       "void mixed(const _Float16 *a, const uint16_t *b, const int32_t *idx, const double "
	       "*w, const float *bias, const int64_t *z, _Float16 *out, float *stats, int32_t "
	       "batch, int64_t n, float scale, double eps);",
	       "prototype with every dtype");
	ks_buf_reset(&b);
	ks_task_prototype(t, "cuda", &b);
	ok(strstr(ks_buf_str(&b), "const __half *a, const __nv_bfloat16 *b") != NULL,
	   "cuda spellings");
	ks_buf_release(&b);
	test_shim_runs(t);
	ks_task_free(t);
}

static void test_not_found(void)
{
	struct ks_task *t = NULL;
	struct ks_error e = {0};
	ok(ks_task_load("no_such_task", &t, &e) == KS_ENOTFOUND && strstr(e.msg, "no_such_task"),
	   "unknown task name (%s)", e.msg);
	ok(ks_task_load(FIX "/broken", &t, &e) == KS_ENOTFOUND && strstr(e.msg, "no task.yaml"),
	   "folder without task.yaml (%s)", e.msg);
	ok(ks_task_load("./tests/fixtures/none", &t, &e) == KS_ENOTFOUND, "missing folder");
}

static void test_list(void)
{
	char **names = NULL;
	int n = 0;
	struct ks_error e = {0};
	ok(!ks_task_list(&names, &n, &e), "list");
	ok(n == 2 && !strcmp(names[0], "mixed") && !strcmp(names[1], "softmax"),
	   "fixture tasks listed sorted, folders without task.yaml skipped (%d)", n);
	ks_strv_free(names, n);
}


static void yaml_bad(const char *text, const char *want)
{
	struct ks_yaml_doc *d = NULL;
	struct ks_error e = {0};
	int rc = ks_yaml_load_string(text, strlen(text), "t.yaml", &d, &e);
	ok(rc < 0 && !d && !strncmp(e.msg, want, strlen(want)), "yaml refuses %s (%s)", want,
	   e.msg);
	ks_yaml_free(d);
}

/* the YAML layer on its own: positions, refusals, number parsing */
static void test_yaml(void)
{
	const char *text = "a: 1\nb:\n  - x\n  - {k: 'v', n: -2.5e3}\nc:\n";
	struct ks_yaml_doc *d = NULL;
	struct ks_error e = {0};
	ok(!ks_yaml_load_string(text, strlen(text), "t.yaml", &d, &e), "yaml loads (%s)", e.msg);
	if (!d)
		return;
	struct ks_yaml_node *b = ks_yaml_get(d->root, "b");
	ok(b && b->kind == KS_YAML_SEQ && b->n == 2 && b->line == 3 && b->col == 3,
	   "sequence position");
	struct ks_yaml_node *m = b ? b->items[1] : NULL;
	struct ks_yaml_node *k = ks_yaml_get(m, "k"), *n = ks_yaml_get(m, "n");
	ok(k && k->quoted == 1 && !strcmp(k->str, "v") && k->line == 4 && k->col == 10,
	   "quoted scalar: text and the column of its first character");
	double v = 0;
	ok(!ks_yaml_number(d, n, "a number", &v, &e) && v == -2500, "number");
	ok(ks_yaml_number(d, k, "a number", &v, &e) == KS_EPARSE &&
		   !strcmp(e.msg, "t.yaml:4:10: expected a number, got 'v'"),
	   "quoted text is not a number (%s)", e.msg);
	struct ks_yaml_node *c = ks_yaml_get(d->root, "c");
	ok(c && c->kind == KS_YAML_SCALAR && c->len == 0 && c->line == 5 && c->col == 1,
	   "empty value gets its key's position");
	const char *s;
	ok(ks_yaml_str(d, c, "a name", &s, &e) == KS_EPARSE &&
		   !strcmp(e.msg, "t.yaml:5:1: expected a name, got an empty value"),
	   "empty value refused (%s)", e.msg);
	int64_t iv;
	ok(ks_yaml_int(d, ks_yaml_get(d->root, "a"), "x", 0, 0, &iv, &e) == KS_EPARSE,
	   "integer range enforced");
	ok(ks_yaml_error_at(d, n, 3, KS_EPARSE, &e, "here") == KS_EPARSE &&
		   !strcmp(e.msg, "t.yaml:4:20: here"),
	   "error at an offset inside a scalar (%s)", e.msg);
	static const char *const allowed[] = {"a", "b", NULL}, *const req[] = {"a", "z", NULL};
	ok(ks_yaml_check_keys(d, d->root, "top", allowed, NULL, &e) == KS_EPARSE &&
		   !strcmp(e.msg, "t.yaml:5:1: unknown key 'c' in top (allowed: a, b)"),
	   "unknown key listed with the allowed ones (%s)", e.msg);
	static const char *const allowed2[] = {"a", "b", "c", NULL};
	ok(ks_yaml_check_keys(d, d->root, "top", allowed2, req, &e) == KS_EPARSE &&
		   !strcmp(e.msg, "t.yaml:1:1: top lacks the key 'z'"),
	   "missing key points at the mapping (%s)", e.msg);
	ks_yaml_free(d);

	static const char *numbers[] = {".inf", "0x10", "1e", "--1", "1.2.3", "nan", "1e999"};
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		char t[32];
		snprintf(t, sizeof(t), "v: %s\n", numbers[i]);
		d = NULL;
		ks_yaml_load_string(t, strlen(t), "n.yaml", &d, NULL);
		ok(d && ks_yaml_number(d, ks_yaml_get(d->root, "v"), "n", &v, &e) == KS_EPARSE,
		   "'%s' is not a finite decimal number", numbers[i]);
		ks_yaml_free(d);
	}

	yaml_bad("a: &x 1\nb: *x\n", "t.yaml:2:5: YAML aliases are not supported");
	yaml_bad("a: 1\n---\nb: 2\n", "t.yaml:3:1: expected a single YAML document");
	yaml_bad("? [1, 2]\n: 3\n", "t.yaml:1:3: expected a plain key, got a sequence");
	yaml_bad("a: 1\nb: 2\na: 3\n", "t.yaml:3:1: duplicate key 'a' (first at line 1)");
	yaml_bad("a: [1, 2\n", "t.yaml:");
	{
		char deep[400];
		memset(deep, '[', 100);
		memset(deep + 100, ']', 100);
		deep[200] = 0;
		yaml_bad(deep, "t.yaml:1:66: nesting deeper than 64 levels");
	}
	d = NULL;
	ok(!ks_yaml_load_string("", 0, "e.yaml", &d, &e) && d && !d->root, "empty document");
	ks_yaml_free(d);
	ok(ks_yaml_load_file("tests/fixtures/none.yaml", 0, &d, &e) == KS_ENOTFOUND,
	   "missing file");
}

/* task.yaml's library map: a name per backend, pkg-config and link flags; an unknown
 * backend or a missing name is an error at its line */
static void test_library(void)
{
	struct ks_task *t = NULL;
	struct ks_error e = {0};
	ok(ks_task_load("./tests/fixtures/library/scale", &t, &e) == 0, "task with a library: %s",
	   e.msg);
	const struct ks_task_library *l = t ? ks_task_library_for(t, "cpu") : NULL;
	ok(l && !strcmp(l->name, "OpenBLAS") && l->pkg && !strcmp(l->pkg, "openblas") && !l->libs,
	   "cpu library: OpenBLAS through pkg-config openblas");
	ok(t && !ks_task_library_for(t, "cuda"), "no cuda library declared: none");
	ks_task_free(t);
	t = NULL;
	ok(ks_task_load("./tests/fixtures/eval/scale", &t, &e) == 0 && !t->nlibraries &&
	   !ks_task_library_for(t, "cpu"), "a task without the key has no library");
	ks_task_free(t);
	static const char *const bad[][2] = {
		{"library: {gpu9: {name: X}}", "expected a backend name (cpu, cuda, mlx, ...), got 'gpu9'"},
		{"library: {cpu: {pkg-config: openblas}}", "library lacks the key 'name'"},
		{"library: {cpu: {name: X, link: -lx}}", "unknown key 'link'"},
		{"library: [cpu]", "expected a mapping of backend names to {name, pkg-config, libs, describe, cores}"},
	};
	char dir[] = "/tmp/ks-test-library-XXXXXX";
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	char sub[256], yaml[300];
	snprintf(sub, sizeof(sub), "%s/scale", dir);
	mkdir(sub, 0700);
	snprintf(yaml, sizeof(yaml), "%s/task.yaml", sub);
	struct ks_buf base = KS_BUF_INIT;
	ks_file_read("tests/fixtures/eval/scale/task.yaml", 1 << 16, &base, NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *f = fopen(yaml, "w");
		fprintf(f, "%s%s\n", ks_buf_str(&base), bad[i][0]);
		fclose(f);
		t = NULL;
		int rc = ks_task_load(sub, &t, &e);
		ok(rc == KS_EPARSE && !t && strstr(e.msg, bad[i][1]), "library error: %s", e.msg);
		ks_task_free(t);
	}
	ks_buf_release(&base);
	unlink(yaml);
	rmdir(sub);
	rmdir(dir);
}

int main(void)
{
	/* the data root is the fixture tree, never the shipped tasks/ */
	setenv("KSEARCH_HOME", "tests/fixtures", 1);
	ks_env_reload();
	test_softmax();
	test_mixed();
	test_broken();
	test_not_found();
	test_list();
	test_yaml();
	test_library();
	return tap_done();
}
