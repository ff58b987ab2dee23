/* The mlx kernel file and artifact: directives, header/body split, errors with line and
 * column, launch evaluation (params and knobs as template args), and every shipped MLX
 * template parses and gives a launch for every workload and check in every knob
 * configuration (they cannot run without a GPU MLX: this is what CI can check). */
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backends.h"
#include "backend/mlx_kernel.h"
#include "ksearch/task.h"
#include "ksearch/template.h"
#include "tap.h"
#include "util/fs.h"

static const char *cuda_kernel =
	"/* @ksearch\nknobs:\n  W: {values: [1, 2]}\n@end */\n"
	"// @mlx flavour: cuda\n"
	"//   @mlx grid: ceil_div(rows, W) * 32, min(2, cols), 1\n"
	"// @mlx threadgroup: W * 32\n"
	"// @mlx template: HALF = cols / 2\n"
	"// @mlx template: T = f16\n"
	"// @mlx header\n"
	"__device__ int helper() { return 1; }\n"
	"// @mlx body\n"
	"y[0] = x[0];\n";

static void test_parse(void)
{
	struct ks_mlx_kernel k;
	struct ks_error e = {0};
	is_int(ks_mlx_kernel_parse(cuda_kernel, &k, &e), 0, "cuda kernel parses");
	is_int(k.flavour, KS_MLX_CUDA, "flavour cuda");
	is_str(k.grid[0], "ceil_div(rows, W) * 32", "grid x keeps its commas inside calls");
	is_str(k.grid[1], "min(2, cols)", "grid y");
	is_str(k.grid[2], "1", "grid z");
	is_str(k.threadgroup[1], "1", "missing threadgroup axes are 1");
	is_int(k.ntemplate, 2, "two template lines");
	is_str(k.tmpl[0].name, "HALF", "template name");
	is_str(k.tmpl[0].expr, "cols / 2", "template expression");
	is_str(k.header, "__device__ int helper() { return 1; }\n", "header is between the markers");
	is_str(k.body, "y[0] = x[0];\n", "body follows '@mlx body'");
	is_int(k.body_line, 13, "body line");
	is_str(k.init, "nan", "init defaults to nan (poisoned outputs)");
	ks_mlx_kernel_release(&k);

	is_int(ks_mlx_kernel_parse("#define WARPS 8\n// @mlx flavour: metal\n// @mlx grid: 1\n"
				   "// @mlx threadgroup: WARPS\n// @mlx header\n#define H 1\n"
				   "// @mlx body\n#define B 2\n",
				   &k, &e),
	       0, "#define before the body parses");
	ok(k.ntemplate == 1 && !strcmp(k.tmpl[0].name, "WARPS") && !strcmp(k.tmpl[0].expr, "8"),
	   "#define NAME VALUE before header and body is a template arg (a run's best.mlx)");
	ok(strstr(k.header, "#define H 1") && strstr(k.body, "#define B 2"),
	   "#define inside header and body stays there");
	ks_mlx_kernel_release(&k);

	is_int(ks_mlx_kernel_parse("// @mlx native: softmax\n", &k, &e), 0, "native op alone parses");
	is_int(k.flavour, KS_MLX_NATIVE, "native: implies flavour native");
	is_str(k.native, "softmax", "native op name");
	ks_mlx_kernel_release(&k);

	static const struct {
		const char *text, *want;
	} bad[] = {
		{"int x;\n", "no '// @mlx flavour"},
		{"// @mlx flavour: cud\n", "1:18: flavour: expected cuda, metal or native"},
		{"// @mlx flavour: cuda\n// @mlx gird: 1\n", "2:9: unknown @mlx directive 'gird'"},
		{"// @mlx flavour: cuda\n// @mlx grid: 1, 2, 3, 4\n", "2:15: grid takes at most three"},
		{"// @mlx flavour: cuda\n// @mlx grid: 1,,2\n", "grid: expected an expression"},
		{"// @mlx flavour: cuda\n// @mlx template: 3 = 4\n", "template: expected NAME = expression"},
		{"// @mlx flavour: cuda\n// @mlx grid 1\n", "2:13: expected ':' after 'grid'"},
		{"// @mlx flavour: metal\n// @mlx grid: 1\n// @mlx threadgroup: 1\n", "no '// @mlx body'"},
		{"// @mlx flavour: metal\n// @mlx threadgroup: 1\n// @mlx body\n", "needs '// @mlx grid"},
		{"// @mlx flavour: native\n", "flavour native needs"},
		{"// @mlx flavour: cuda\n// @mlx native: softmax\n", "belongs to flavour native"},
		{"// @mlx flavour: cuda\n// @mlx body x\n", "stands alone on its line"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&e, 0, sizeof(e));
		int rc = ks_mlx_kernel_parse(bad[i].text, &k, &e);
		ok(rc == KS_EPARSE && strstr(e.msg, bad[i].want), "rejected: %s (got: %s)", bad[i].want,
		   e.msg);
		ks_mlx_kernel_release(&k);
	}
}

static const char *artifact_head = KS_MLX_ARTIFACT_MAGIC "\n"
				   "task softmax\nchain 4\nparam rows\nparam cols\n"
				   "tensor in x f32 rows;cols\ntensor out y f32 rows;cols\n"
				   "define W 2\nkernel\n";

/* resolve a cuda kernel of LINES (its leading lines and directives; a template: V line gives
 * the value) after the artifact head (softmax's rows=100, cols=7; artifact_head defines the
 * knob W=2): 0 and *v and the grid's y, or the error */
static int resolve_head(const char *head, const char *lines, int *v, int *grid1,
			struct ks_error *e)
{
	struct ks_mlx_artifact *a = calloc(1, sizeof(*a));
	struct ks_mlx_launch *l = calloc(1, sizeof(*l));
	struct ks_buf text = KS_BUF_INIT;
	ks_buf_adds(&text, head);
	ks_buf_addf(&text, "%s\n// @mlx flavour: cuda\n// @mlx threadgroup: 1\n// @mlx body\n", lines);
	double p[2] = {100, 7};
	int rc = ks_mlx_artifact_parse(ks_buf_str(&text), a, e);
	if (!rc)
		rc = ks_mlx_launch_resolve(a, p, l, e);
	for (int i = 0; !rc && i < l->ntargs; i++)
		if (!strcmp(l->targs[i].name, "V"))
			*v = l->targs[i].value;
	if (!rc && grid1)
		grid1[0] = l->grid[0], grid1[1] = l->grid[1];
	ks_mlx_artifact_release(a);
	ks_buf_release(&text);
	free(a);
	free(l);
	return rc;
}

static int resolve_lines(const char *lines, int *v, int *grid, struct ks_error *e)
{
	return resolve_head(artifact_head, lines, v, grid, e);
}


static void test_launch(void)
{
	struct ks_mlx_artifact *a = calloc(1, sizeof(*a));
	struct ks_mlx_launch *l = calloc(1, sizeof(*l));
	struct ks_buf text = KS_BUF_INIT;
	struct ks_error e = {0};
	ks_buf_adds(&text, artifact_head);
	ks_buf_adds(&text, cuda_kernel);
	is_int(ks_mlx_artifact_parse(ks_buf_str(&text), a, &e), 0, "artifact parses");
	is_int(a->chain, 4, "chain");
	is_int(a->ntensors, 2, "two tensors");
	is_int(a->tensors[1].is_output, 1, "y is the output");
	is_str(a->tensors[0].shape[1], "cols", "shape expressions");
	double p[2] = {100, 7};
	is_int(ks_mlx_launch_resolve(a, p, l, &e), 0, "launch resolves");
	is_int(l->grid[0], 50 * 32, "grid uses params and knobs");
	is_int(l->grid[1], 2, "grid y: min(2, cols)");
	is_int(l->threadgroup[0], 64, "threadgroup uses the knob");
	is_int(l->ntargs, 5, "template args: 2 params + 1 knob + 2 lines");
	is_str(l->targs[0].name, "rows", "params come first");
	is_int(l->targs[0].value, 100, "rows value");
	is_str(l->targs[2].name, "W", "then knobs");
	is_int(l->targs[3].value, 3, "HALF = cols / 2 truncates like C");
	is_int(l->targs[4].kind, KS_MLX_TARG_DTYPE, "T = f16 is a dtype template arg");
	is_int(l->targs[4].value, KS_DT_F16, "dtype value");
	ok(l->has_init && isnan(l->init), "init nan");
	is_int(l->shape[1][0], 100, "output shape rows");
	is_int(l->shape[1][1], 7, "output shape cols");
	ks_mlx_artifact_release(a);

	/* an unknown name in grid is an error naming the directive */
	ks_buf_reset(&text);
	ks_buf_adds(&text, artifact_head);
	ks_buf_adds(&text, "// @mlx flavour: metal\n// @mlx grid: rowz\n// @mlx threadgroup: 1\n"
			   "// @mlx init: none\n// @mlx body\n");
	is_int(ks_mlx_artifact_parse(ks_buf_str(&text), a, &e), 0, "second artifact parses");
	memset(&e, 0, sizeof(e));
	ok(ks_mlx_launch_resolve(a, p, l, &e) != 0 && strstr(e.msg, "grid 'rowz'") &&
		   strstr(e.msg, "rowz"),
	   "unknown name in grid: %s", e.msg);
	ks_mlx_artifact_release(a);

	/* a template arg that repeats a param */
	ks_buf_reset(&text);
	ks_buf_adds(&text, artifact_head);
	ks_buf_adds(&text, "// @mlx flavour: cuda\n// @mlx grid: 1\n// @mlx threadgroup: 1\n"
			   "// @mlx template: rows = 3\n// @mlx init: 0.5\n// @mlx body\n");
	ks_mlx_artifact_parse(ks_buf_str(&text), a, &e);
	memset(&e, 0, sizeof(e));
	ok(ks_mlx_launch_resolve(a, p, l, &e) != 0 && strstr(e.msg, "given twice"),
	   "a template arg named like a param is refused: %s", e.msg);
	ks_mlx_artifact_release(a);

	/* a knob's leading #define (its value as the file runs as written) yields to a define of
	 * the same name (the knob tuning's value); a template: line does not */
	int g[2] = {0, 0}, v = 0;
	memset(&e, 0, sizeof(e));
	int rc = resolve_lines("#define W 32\n// @mlx grid: W", &v, g, &e);
	ok(rc == 0 && g[0] == 2, "a define replaces the file's #define of the knob (%s)", e.msg);
	rc = resolve_head(KS_MLX_ARTIFACT_MAGIC "\ntask softmax\nparam rows\nparam cols\nkernel\n",
			  "#define W 32\n// @mlx grid: W", &v, g, &e);
	ok(rc == 0 && g[0] == 32, "... and holds without one (the file as written)");
	memset(&e, 0, sizeof(e));
	rc = resolve_lines("// @mlx grid: W\n// @mlx template: W = 4", &v, g, &e);
	ok(rc != 0 && strstr(e.msg, "given twice"), "a template: line named like a knob is still refused");

	/* the header line: inline by default, file on request, nothing else */
	ks_buf_reset(&text);
	ks_buf_adds(&text, artifact_head);
	ks_buf_adds(&text, cuda_kernel);
	is_int(ks_mlx_artifact_parse(ks_buf_str(&text), a, &e), 0, "an artifact without a header line");
	is_int(a->header_file, 0, "header inline when the artifact does not say");
	ks_mlx_artifact_release(a);
	ks_buf_reset(&text);
	ks_buf_adds(&text, KS_MLX_ARTIFACT_MAGIC "\nheader file\nkernel\n");
	ks_buf_adds(&text, cuda_kernel);
	is_int(ks_mlx_artifact_parse(ks_buf_str(&text), a, &e), 0, "header file parses");
	is_int(a->header_file, 1, "header file");
	ks_mlx_artifact_release(a);
	memset(&e, 0, sizeof(e));
	ok(ks_mlx_artifact_parse(KS_MLX_ARTIFACT_MAGIC "\nheader disk\nkernel\n", a, &e) ==
			   KS_EPARSE &&
		   strstr(e.msg, "header inline or file"),
	   "an unknown header mode is refused: %s", e.msg);
	ks_mlx_artifact_release(a);

	memset(&e, 0, sizeof(e));
	ok(ks_mlx_artifact_parse("not an artifact\n", a, &e) == KS_EPARSE, "bad magic refused");
	ks_mlx_artifact_release(a);
	ks_buf_release(&text);
	free(l);
	free(a);
}

/* source with the defines list: artifact written (the header as a file when hfile), parsed
 * and launched on every workload and check of t; 0, or 1 with why */
static int launch_all(const struct ks_task *t, const char *source, const char *const *list,
		      int hfile, struct ks_mlx_artifact *a, struct ks_mlx_launch *l, char *why,
		      size_t n)
{
	struct ks_error e = {0};
	struct ks_buf text = KS_BUF_INIT;
	int bad = 0;
	if (ks_mlx_artifact_write(t, source, list, 1, KS_MLX_TIMER_WALL, hfile, &text, &e)) {
		bad = 1;
		snprintf(why, n, "write: %s", e.msg);
	} else if (ks_mlx_artifact_parse(ks_buf_str(&text), a, &e)) {
		bad = 1;
		snprintf(why, n, "parse: %s", e.msg);
	} else if (a->header_file != hfile) {
		bad = 1;
		snprintf(why, n, "header mode %d read back as %d", hfile, a->header_file);
	}
	for (int pass = 0; pass < 2 && !bad; pass++) {
		int cnt = pass ? t->nchecks : t->nworkloads;
		for (int w = 0; w < cnt && !bad; w++) {
			const struct ks_workload *wl = pass ? &t->checks[w] : &t->workloads[w];
			if (ks_mlx_launch_resolve(a, wl->values, l, &e)) {
				bad = 1;
				snprintf(why, n, "workload %d: %s", w, e.msg);
			} else if (l->grid[0] < 1 ||
				   l->threadgroup[0] * l->threadgroup[1] * l->threadgroup[2] > 1024) {
				bad = 1;
				snprintf(why, n, "threadgroup over 1024 threads");
			}
		}
	}
	ks_mlx_artifact_release(a);
	ks_buf_release(&text);
	return bad;
}

/* tpl's text as the prompts tell a model to write a kernel file (mlx_describe.c): a
 * '#define NAME DEFAULT' line per knob after the @ksearch block, so that it runs as written */
static void as_model_writes(const struct ks_template *tp, const char *src, struct ks_buf *out)
{
	const char *end = strstr(src, "@end */");
	end = end ? strchr(end, '\n') : NULL;
	size_t head = end ? (size_t)(end + 1 - src) : 0;
	ks_buf_add(out, src, head);
	for (int k = 0; k < tp->nknobs; k++)
		ks_buf_addf(out, "#define %s %s\n", tp->knobs[k].name,
			    tp->knobs[k].values[tp->knobs[k].def]);
	ks_buf_adds(out, src + head);
}

/* every configuration of tpl on task t: artifact written, parsed, launched everywhere; and
 * the same text written as a model is told to (#define lines for the defaults): as written,
 * and with every configuration's defines (the knob tuning) in place of those lines */
static void check_template(const struct ks_task *t, const char *path)
{
	struct ks_template *tp = NULL;
	struct ks_error e = {0};
	struct ks_buf src = KS_BUF_INIT, model = KS_BUF_INIT;
	if (ks_template_load(path, &tp, &e) || ks_file_read(path, 4 << 20, &src, &e)) {
		ok(0, "%s loads: %s", path, e.msg);
		return;
	}
	as_model_writes(tp, ks_buf_str(&src), &model);
	struct ks_mlx_artifact *a = calloc(1, sizeof(*a));
	struct ks_mlx_launch *l = calloc(1, sizeof(*l));
	long n = ks_template_size(tp);
	char why[1200] = "", mwhy[1200] = "";
	int bad = 0, mbad = launch_all(t, ks_buf_str(&model), NULL, 0, a, l, mwhy, sizeof(mwhy));
	for (long c = 0; c < n && !bad && !mbad; c++) {
		int cfg[KS_TEMPLATE_MAX_KNOBS];
		char **defs = NULL;
		ks_template_config_at(tp, c, cfg);
		ks_template_defines(tp, cfg, &defs, &e);
		const char *list[KS_TEMPLATE_MAX_KNOBS + 1];
		int nd = 0;
		for (; defs && defs[nd]; nd++)
			list[nd] = defs[nd] + 2; /* "-DW=2" -> "W=2" */
		list[nd] = NULL;
		/* every other configuration with the header as a file: the mode round-trips */
		bad = launch_all(t, ks_buf_str(&src), list, (int)(c & 1), a, l, why, sizeof(why));
		mbad = launch_all(t, ks_buf_str(&model), list, 0, a, l, mwhy, sizeof(mwhy));
		ks_template_defines_free(defs);
	}
	ok(!bad, "%s: all %ld configurations launch on every workload and check %s", path, n, why);
	ok(!mbad, "... and as a model writes it (#define lines), as written and tuned %s", mwhy);
	free(a);
	free(l);
	ks_buf_release(&src);
	ks_buf_release(&model);
	ks_template_free(tp);
}

static void test_shipped(void)
{
	int found = 0;
	static const char *const tasks[] = {"softmax", "matmul", "matmul_bf16", "attention",
					    "selective_scan"};
	for (size_t i = 0; i < sizeof(tasks) / sizeof(tasks[0]); i++) {
		struct ks_task *t = NULL;
		struct ks_error e = {0};
		if (ks_task_load(tasks[i], &t, &e))
			continue;
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s/templates/mlx", t->dir);
		DIR *d = opendir(dir);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			size_t len = strlen(de->d_name);
			if (len < 5 || strcmp(de->d_name + len - 4, ".mlx"))
				continue;
			char path[4400];
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			check_template(t, path);
			found++;
		}
		if (d)
			closedir(d);
		/* the native baseline parses too */
		char base[4200];
		struct ks_buf b = KS_BUF_INIT;
		snprintf(base, sizeof(base), "%s/baseline.mlx", t->dir);
		struct ks_mlx_kernel k;
		ok(ks_file_read(base, 1 << 20, &b, &e) == 0 &&
			   ks_mlx_kernel_parse(ks_buf_str(&b), &k, &e) == 0 && k.flavour == KS_MLX_NATIVE,
		   "%s/baseline.mlx is a native kernel %s", tasks[i], e.msg);
		ks_mlx_kernel_release(&k);
		ks_buf_release(&b);
		ks_task_free(t);
	}
	ok(found >= 4, "shipped MLX templates found (%d)", found);
}

/* `// @mlx include:` lines: resolved against the task's folder, knob macros around the
 * file, refused outside it; the attention template runs flash2.cu's device code */
static void test_include(void)
{
	struct ks_task *t = NULL;
	struct ks_error e = {0};
	if (ks_task_load("attention", &t, &e)) {
		ok(0, "attention task loads: %s", e.msg);
		return;
	}
	static const char *const defs[] = {"BM=128", "BN=32", NULL};
	const char *src = "#define QREG 0\n// @mlx flavour: cuda\n// @mlx grid: 1\n"
			  "// @mlx threadgroup: 1\n// @mlx header\n"
			  "// @mlx include: templates/cuda/flash2.cu\n// @mlx body\nbody();\n";
	struct ks_buf out = KS_BUF_INIT, cu = KS_BUF_INIT;
	char path[4200];
	snprintf(path, sizeof(path), "%s/templates/cuda/flash2.cu", t->dir);
	ks_file_read(path, 4 << 20, &cu, &e);
	int rc0 = ks_mlx_resolve_includes(t->dir, src, defs, &out, &e);
	ok(rc0 == 0, "include resolves: %s", e.msg);
	const char *o = ks_buf_str(&out);
	const char *bm = strstr(o, "#define BM 128\n"), *qr = strstr(o, "#define QREG 0\n");
	const char *body = strstr(o, ks_buf_str(&cu)), *un = strstr(o, "#undef QREG\n");
	ok(bm && qr && body && un && bm < body && qr < body && body < un,
	   "the file's text verbatim, the defines and the file's #define lines as macros before "
	   "it, #undef after it");
	ok(!strstr(o, "@mlx include"), "no include line is left");
	ok(strstr(o, "// @mlx body\nbody();\n") != NULL, "the body follows unchanged");
	struct ks_mlx_kernel k;
	is_int(ks_mlx_kernel_parse(o, &k, &e), 0, "the resolved file parses");
	ok(k.header && strstr(k.header, "attention_cta") && strstr(k.header, "#undef BM"),
	   "the included text is the header");
	ks_mlx_kernel_release(&k);
	memset(&e, 0, sizeof(e));
	is_int(ks_mlx_kernel_parse(src, &k, &e), KS_EPARSE, "an unresolved include is refused");
	ok(strstr(e.msg, "6:9: include 'templates/cuda/flash2.cu' is not resolved here") != NULL,
	   "... saying so: %s", e.msg);
	ks_mlx_kernel_release(&k);

	static const struct {
		const char *line, *want;
	} bad[] = {
		{"// @mlx include: ../softmax/task.yaml", "inside the task's folder"},
		{"// @mlx include: /etc/passwd", "inside the task's folder"},
		{"// @mlx include: templates/../../x", "inside the task's folder"},
		{"// @mlx include: templates/cuda/none.cu", "include 'templates/cuda/none.cu': "},
		{"// @mlx include: templates/mlx/flash2.cuda.mlx", "holds '// @mlx' lines"},
		{"// @mlx include templates/cuda/flash2.cu", "expected ':' after 'include'"},
		{"// @mlx include:", "include: expected a path"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[512];
		snprintf(text, sizeof(text), "// @mlx flavour: cuda\n// @mlx header\n%s\n"
					     "// @mlx body\nx();\n", bad[i].line);
		ks_buf_reset(&out);
		memset(&e, 0, sizeof(e));
		int rc = ks_mlx_resolve_includes(t->dir, text, NULL, &out, &e);
		ok(rc == KS_EPARSE && strstr(e.msg, "3:") == e.msg && strstr(e.msg, bad[i].want),
		   "refused: %s (got: %s)", bad[i].line, e.msg);
	}
	ks_buf_reset(&out);
	memset(&e, 0, sizeof(e));
	ok(ks_mlx_resolve_includes(t->dir, "// @mlx flavour: cuda\n// @mlx include: x.cu\n", NULL,
				   &out, &e) == KS_EPARSE &&
		   strstr(e.msg, "belongs in the header"),
	   "an include outside the header is refused: %s", e.msg);

	/* the MLX template and the CUDA template it includes have one design space */
	struct ks_template *tm = NULL, *tc = NULL;
	char mp[4200];
	snprintf(mp, sizeof(mp), "%s/templates/mlx/flash2.cuda.mlx", t->dir);
	if (ks_template_load(mp, &tm, &e) || ks_template_load(path, &tc, &e)) {
		ok(0, "flash2 templates load: %s", e.msg);
	} else {
		int same = tm->nknobs == tc->nknobs && tm->nrequire == tc->nrequire &&
			   ks_template_size(tm) == ks_template_size(tc);
		for (int i = 0; same && i < tm->nrequire; i++)
			same = !strcmp(tm->require[i].expr, tc->require[i].expr);
		for (int i = 0; same && i < tm->nknobs; i++) {
			same = !strcmp(tm->knobs[i].name, tc->knobs[i].name) &&
			       tm->knobs[i].nvalues == tc->knobs[i].nvalues &&
			       tm->knobs[i].def == tc->knobs[i].def;
			for (int j = 0; same && j < tm->knobs[i].nvalues; j++)
				same = !strcmp(tm->knobs[i].values[j], tc->knobs[i].values[j]);
		}
		ok(same, "flash2.cuda.mlx has flash2.cu's knobs, values, defaults, requirements "
			 "and feasible configurations (%ld)",
		   ks_template_size(tm));
	}
	ks_template_free(tm);
	ks_template_free(tc);
	ks_buf_release(&out);
	ks_buf_release(&cu);
	ks_task_free(t);
}

/* flash_wgmma.cuda.mlx with PERSIST: MLX's grid is the cuda launcher's persistent grid where
 * that launcher takes it (head_dim 64 or 128, at most 8 items a CTA) and the ordinary grid
 * elsewhere; the template argument PGRID tells the body which of the two it runs on */
static void test_persist_grid(void)
{
	struct ks_task *t = NULL;
	struct ks_error e = {0};
	if (ks_task_load("attention", &t, &e)) {
		ok(0, "attention task loads: %s", e.msg);
		return;
	}
	char path[4200];
	snprintf(path, sizeof(path), "%s/templates/mlx/flash_wgmma.cuda.mlx", t->dir);
	struct ks_buf src = KS_BUF_INIT, text = KS_BUF_INIT;
	struct ks_mlx_artifact *a = calloc(1, sizeof(*a));
	struct ks_mlx_launch *l = calloc(1, sizeof(*l));
	static const struct {
		const char *persist;		   /* the PERSIST define */
		double b, h, kvh, sq, skv, d, causal; /* the task's params */
		int grid0, grid1, pgrid;
	} cases[] = {
		/* headline: 16 query blocks x 32 heads = 512 items <= 8 * 132 -> 132 CTAs */
		{"PERSIST=1", 1, 32, 32, 2048, 2048, 128, 0, 132 * 384, 1, 1},
		{"PERSIST=1", 1, 32, 8, 2048, 2048, 64, 1, 132 * 384, 1, 1},
		/* 64 items: fewer than CTAS -> one CTA an item */
		{"PERSIST=1", 1, 4, 4, 2048, 2048, 128, 0, 64 * 384, 1, 1},
		/* 4 x 32 x 32 = 4096 items > 8 * 132: the ordinary grid */
		{"PERSIST=1", 4, 32, 32, 4096, 4096, 128, 1, 32 * 384, 128, 0},
		/* head_dim 32 runs the plain rows on the ordinary grid */
		{"PERSIST=1", 1, 32, 32, 2048, 2048, 32, 0, 16 * 384, 32, 0},
		{"PERSIST=0", 1, 32, 32, 2048, 2048, 128, 0, 16 * 384, 32, 0},
	};
	if (ok(ks_file_read(path, 1 << 20, &src, &e) == 0, "read %s (%s)", path, e.msg))
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			/* every knob, as the search's candidates carry them */
			const char *defs[] = {"WG=2", "BN=128",	    "STAGES=3", "OVL=0",
					      "WS=1", cases[i].persist, "CTAS=132", "QREG=0",
					      NULL};
			const double p[] = {cases[i].b,	  cases[i].h, cases[i].kvh,   cases[i].sq,
					    cases[i].skv, cases[i].d, cases[i].causal};
			ks_buf_reset(&text);
			int rc = ks_mlx_artifact_write(t, ks_buf_str(&src), defs, 1,
						       KS_MLX_TIMER_WALL, 0, &text, &e) ||
				 ks_mlx_artifact_parse(ks_buf_str(&text), a, &e) ||
				 ks_mlx_launch_resolve(a, p, l, &e);
			int pgrid = -1;
			for (int j = 0; !rc && j < l->ntargs; j++)
				if (!strcmp(l->targs[j].name, "PGRID"))
					pgrid = l->targs[j].value;
			ok(!rc && l->grid[0] == cases[i].grid0 && l->grid[1] == cases[i].grid1 &&
				   l->grid[2] == 1 && pgrid == cases[i].pgrid,
			   "%s B%g H%g L%g D%g: grid %d,%d PGRID %d (want %d,%d PGRID %d) %s",
			   cases[i].persist, cases[i].b, cases[i].h, cases[i].sq, cases[i].d,
			   l->grid[0], l->grid[1], pgrid, cases[i].grid0, cases[i].grid1,
			   cases[i].pgrid, rc ? e.msg : "");
			ks_mlx_artifact_release(a);
		}
	free(a);
	free(l);
	ks_buf_release(&src);
	ks_buf_release(&text);
	ks_task_free(t);
}

/* What the kernel-file format tells a model about values (mlx_describe.c) is what the parser
 * does: each claim of the text, quoted, with an expression that shows it; the examples it
 * gives resolve. */
static void test_described_expressions(void)
{
	struct ks_task *t = NULL;
	struct ks_error e = {0};
	if (!ok(ks_task_load("softmax", &t, &e) == 0, "load softmax"))
		return;
	struct ks_buf d = KS_BUF_INIT;
	ks_mlx_describe_abi(t, "cuda", "cuda", &d);
	/* the text wraps lines: compare with its whitespace runs as one space */
	struct ks_buf flat = KS_BUF_INIT;
	for (const char *c = ks_buf_str(&d); *c; c++)
		if (!(isspace((unsigned char)*c) && flat.len && flat.data[flat.len - 1] == ' '))
			ks_buf_add(&flat, isspace((unsigned char)*c) ? " " : c, 1);
	static const struct {
		const char *claim, *lines;
		int ok, value;
	} cases[] = {
		{"integer / and % truncate as in C", "// @mlx grid: 1\n// @mlx template: V = (0 - 7) / 2", 1, -3},
		{"integer / and % truncate as in C", "// @mlx grid: 1\n// @mlx template: V = 7 % 4", 1, 3},
		{"<< >>", "// @mlx grid: 1\n// @mlx template: V = (1 << 5) >> 1", 1, 16},
		{"?: and parentheses", "// @mlx grid: 1\n// @mlx template: V = rows <= 64 ? 1 : (2)", 1, 2},
		{"&& || !", "// @mlx grid: 1\n// @mlx template: V = !(rows > 1 && cols < 1) || 0", 1, 1},
		{"min and max (2 to 8 arguments)", "// @mlx grid: 1\n// @mlx template: V = max(1, 2, 3, 4, 5, 6, 7, 8)", 1, 8},
		{"min and max (2 to 8 arguments)", "// @mlx grid: 1\n// @mlx template: V = max(1, 2, 3, 4, 5, 6, 7, 8, 9)", 0, 0},
		{"ceil_div(a, b), floor, ceil, sqrt, log2, pow and abs, nested freely",
		 "// @mlx grid: 1\n// @mlx template: V = ceil_div(rows, 8) + floor(sqrt(17)) + ceil(log2(5)) + pow(2, 3) + abs(0 - 1)", 1, 13 + 4 + 3 + 8 + 1},
		{"No bitwise & | ^ ~, casts or sizeof", "// @mlx grid: 1\n// @mlx template: V = rows & 1", 0, 0},
		{"No bitwise & | ^ ~, casts or sizeof", "// @mlx grid: 1\n// @mlx template: V = ~rows", 0, 0},
		{"No bitwise & | ^ ~, casts or sizeof", "// @mlx grid: 1\n// @mlx template: V = (int)rows", 0, 0},
		{"No bitwise & | ^ ~, casts or sizeof", "// @mlx grid: 1\n// @mlx template: V = sizeof(float)", 0, 0},
		{"a 'template:' line sees those above it", "// @mlx grid: 1\n// @mlx template: A = W + 1\n// @mlx template: V = A * rows", 1, 300},
		{"a 'template:' line sees those above it", "// @mlx grid: 1\n// @mlx template: V = A\n// @mlx template: A = 1", 0, 0},
		{"grid, threadgroup, shared_memory and init see them all", "// @mlx grid: V, 1\n// @mlx template: V = W * 3", 1, 6},
		{"true and false count as 1 and 0", "// @mlx grid: 1, V + 1\n// @mlx template: V = true", 1, 1},
		{"a dtype such as f16 is no number", "// @mlx grid: 1, V\n// @mlx template: V = f16", 0, 0},
		{"take one to three values (missing axes are 1)", "// @mlx grid: 1, 1, 1, 1", 0, 0},
		{"each an integer >= 1", "// @mlx grid: rows / 200", 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int v = -999;
		memset(&e, 0, sizeof(e));
		int r = resolve_lines(cases[i].lines, &v, NULL, &e);
		ok(strstr(ks_buf_str(&flat), cases[i].claim) &&
			   (cases[i].ok ? r == 0 && v == cases[i].value : r != 0),
		   "told \"%s\": %s (%s)", cases[i].claim, cases[i].lines, r ? e.msg : "resolves");
	}
	int g[2] = {0, 0}, v = 0, rc = resolve_lines("// @mlx grid: 5\n// @mlx template: V = 1", &v, g, &e);
	ok(rc == 0 && g[1] == 1, "a missing axis is 1");
	/* the examples the text gives, over the task's first param */
	const char *p = strstr(ks_buf_str(&flat), "nested freely: ");
	int n = 0;
	for (p = p ? strchr(p, '\'') : NULL; p && n < 3; p = strchr(strchr(p + 1, '\'') + 1, '\'')) {
		const char *q = strchr(p + 1, '\'');
		char lines[256];
		snprintf(lines, sizeof(lines), "// @mlx grid: 1\n// @mlx template: V = %.*s",
			 (int)(q - p - 1), p + 1);
		int r = resolve_lines(lines, &v, NULL, &e);
		ok(r == 0 && v >= 1, "the example %.*s resolves (%d)", (int)(q - p - 1), p + 1, v);
		n++;
	}
	is_int(n, 3, "three examples");
	ks_buf_release(&flat);
	ks_buf_release(&d);
	ks_task_free(t);
}

int main(void)
{
	test_parse();
	test_launch();
	test_include();
	test_persist_grid();
	test_shipped();
	test_described_expressions();
	return tap_done();
}
