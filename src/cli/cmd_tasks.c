/* ksearch tasks [list | show NAME [--backend B]] [--json] */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ksearch/backend.h"
#include "ksearch/knowledge.h"
#include "ksearch/task.h"
#include "ksearch/template.h"
#include "util/fs.h"

#define README_SHORT_LINES 20

static const char usage[] = "ksearch tasks [list | show NAME|DIR [--backend cpu|cuda|metal|mlx]] [--json]\n"
	"       ksearch tasks import FORMAT FILE... [--out DIR]   (see 'ksearch tasks import --help')";
static const char about[] =
	"List the tasks (from <data root>/tasks, $KSEARCH_HOME overrides the data root) or show\n"
	"one: the math, tensors, params, workloads (numbered for 'ksearch run --workloads'),\n"
	"checks, the knob templates a search explores and the exact prototype your kernel\n"
	"must define for a backend.  NAME may also be the path of a task folder.\n"
	"Exit status 2 when a task does not exist or its task.yaml has an error\n"
	"(printed as FILE:LINE:COL: what was expected).";

static void print_available(FILE *f)
{
	char **names = NULL;
	int n = 0;
	if (ks_task_list(&names, &n, NULL) || n == 0) {
		fprintf(f, "ksearch: no tasks found (the data root's tasks/ folder is empty; "
			   "$KSEARCH_HOME sets the data root)\n");
		return;
	}
	fprintf(f, "available tasks:");
	for (int i = 0; i < n; i++)
		fprintf(f, "%s %s", i ? "," : "", names[i]);
	fprintf(f, "\n");
	ks_strv_free(names, n);
}

static int cmd_list(int json)
{
	char **names = NULL;
	int n = 0, bad = 0;
	struct ks_error e = {0};
	if (ks_task_list(&names, &n, &e)) {
		fprintf(stderr, "ksearch: %s\n", e.msg);
		return KS_EXIT_USAGE;
	}
	json_t *arr = json ? json_array() : NULL;
	int width = 20; /* the name column: the longest name, so the classes line up */
	for (int i = 0; i < n; i++)
		width = (int)strlen(names[i]) > width ? (int)strlen(names[i]) : width;
	if (!json && n == 0)
		printf("no tasks found ($KSEARCH_HOME sets the data root)\n");
	for (int i = 0; i < n; i++) {
		struct ks_task *t = NULL;
		if (ks_task_load(names[i], &t, &e)) {
			fprintf(stderr, "ksearch: %s\n", e.msg);
			bad++;
			if (json)
				json_array_append_new(arr, json_pack("{s:s, s:s}", "name", names[i],
								     "error", e.msg));
			else
				printf("%-*s %-12s (invalid task.yaml, see the error above)\n",
				       width, names[i], "?");
			continue;
		}
		if (json)
			json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:i, s:i}", "name",
							     t->name, "class", t->cls, "summary",
							     t->summary, "workloads", t->nworkloads,
							     "checks", t->nchecks));
		else
			printf("%-*s %-12s %s\n", width, t->name, t->cls, t->summary);
		ks_task_free(t);
	}
	if (json) {
		json_t *obj = json_pack("{s:o}", "tasks", arr);
		char *s = json_dumps(obj, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("%s\n", s ? s : "{}");
		free(s);
		json_decref(obj);
	}
	ks_strv_free(names, n);
	return bad ? KS_EXIT_USAGE : KS_EXIT_OK;
}

/* The README's math summary: the whole file when short, else its first paragraph (after
 * a leading title line). */
static void readme_summary(const char *readme, FILE *f)
{
	int lines = 0;
	for (const char *p = readme; *p; p++)
		lines += *p == '\n';
	if (lines <= README_SHORT_LINES) {
		size_t len = strlen(readme);
		while (len && (readme[len - 1] == '\n' || readme[len - 1] == ' '))
			len--;
		fprintf(f, "%.*s\n", (int)len, readme);
		return;
	}
	const char *p = readme;
	/* skip blank lines and headings before the first paragraph */
	for (;;) {
		while (*p == '\n')
			p++;
		if (*p != '#')
			break;
		const char *nl = strchr(p, '\n');
		if (!nl)
			return;
		p = nl + 1;
	}
	const char *end = strstr(p, "\n\n");
	size_t len = end ? (size_t)(end - p) : strlen(p);
	while (len && p[len - 1] == '\n')
		len--;
	fprintf(f, "%.*s\n", (int)len, p);
}

static void shape_text(const struct ks_tensor_decl *d, char *buf, size_t n)
{
	size_t used = (size_t)snprintf(buf, n, "[");
	for (int k = 0; k < d->ndim && used < n; k++)
		used += (size_t)snprintf(buf + used, n - used, "%s%s", k ? ", " : "", d->shape[k]);
	if (used < n)
		snprintf(buf + used, n - used, "]");
}

static json_t *params_json(const struct ks_task *t, const struct ks_workload *w)
{
	json_t *o = json_object();
	for (int i = 0; i < t->nparams; i++) {
		int isint = t->params[i].dtype == KS_DT_I32 || t->params[i].dtype == KS_DT_I64;
		json_object_set_new(o, t->params[i].name,
				    isint ? json_integer((json_int_t)w->values[i])
					  : json_real(w->values[i]));
	}
	return o;
}

static json_t *workload_json(const struct ks_task *t, const struct ks_workload *w,
			     const char *backend)
{
	struct ks_buf label;
	ks_buf_init(&label, 4096);
	ks_workload_label(t, w, &label);
	double flops = 0, bytes = 0;
	ks_workload_expr(t, w, t->flops, &flops, NULL);
	ks_workload_expr(t, w, t->bytes, &bytes, NULL);
	json_t *o = json_object();
	if (w->name)
		json_object_set_new(o, "name", json_string(w->name));
	json_object_set_new(o, "label", json_string(ks_buf_str(&label)));
	json_object_set_new(o, "params", params_json(t, w));
	json_object_set_new(o, "gflop", json_real(flops / 1e9));
	json_object_set_new(o, "mb", json_real(bytes / 1e6));
	json_t *be = json_null();
	if (w->backends) {
		be = json_array();
		for (char **b = w->backends; *b; b++)
			json_array_append_new(be, json_string(*b));
	}
	json_object_set_new(o, "backends", be);
	json_object_set_new(o, "applies", json_boolean(ks_workload_for_backend(w, backend)));
	json_t *init = json_object();
	for (int i = 0; w->init && i < t->ninputs; i++)
		if (w->init[i])
			json_object_set_new(init, t->tensors[i].name, json_string(w->init[i]));
	json_object_set_new(o, "init", init);
	ks_buf_release(&label);
	return o;
}

static int show_json(const struct ks_task *t, const char *backend, const char *proto)
{
	json_t *o = json_object(), *params = json_array(), *ins = json_array(),
	       *outs = json_array(), *wl = json_array(), *ck = json_array();
	json_object_set_new(o, "name", json_string(t->name));
	json_object_set_new(o, "class", json_string(t->cls));
	json_object_set_new(o, "summary", json_string(t->summary));
	json_object_set_new(o, "dir", json_string(t->dir));
	json_object_set_new(o, "readme", t->readme ? json_string(t->readme) : json_null());
	json_object_set_new(o, "backend", json_string(backend));
	json_object_set_new(o, "prototype", json_string(proto));
	for (int i = 0; i < t->nparams; i++)
		json_array_append_new(params, json_pack("{s:s, s:s}", "name", t->params[i].name,
							"dtype",
							ks_dtype_name(t->params[i].dtype)));
	json_object_set_new(o, "params", params);
	for (int i = 0; i < t->ntensors; i++) {
		const struct ks_tensor_decl *d = &t->tensors[i];
		json_t *shape = json_array();
		for (int k = 0; k < d->ndim; k++)
			json_array_append_new(shape, json_string(d->shape[k]));
		json_t *td = json_pack("{s:s, s:s, s:o}", "name", d->name, "dtype",
				       ks_dtype_name(d->dtype), "shape", shape);
		if (d->init)
			json_object_set_new(td, "init", json_string(d->init));
		json_array_append_new(d->is_output ? outs : ins, td);
	}
	json_object_set_new(o, "inputs", ins);
	json_object_set_new(o, "outputs", outs);
	json_object_set_new(o, "flops", json_string(t->flops));
	json_object_set_new(o, "bytes", json_string(t->bytes));
	json_object_set_new(o, "tolerance", json_pack("{s:f, s:f, s:f}", "atol", t->atol, "rtol",
						      t->rtol, "l2", t->l2));
	for (int i = 0; i < t->nworkloads; i++)
		json_array_append_new(wl, workload_json(t, &t->workloads[i], backend));
	for (int i = 0; i < t->nchecks; i++)
		json_array_append_new(ck, workload_json(t, &t->checks[i], backend));
	json_object_set_new(o, "workloads", wl);
	json_object_set_new(o, "checks", ck);
	const struct ks_task_library *lib = ks_task_library_for(t, backend);
	json_object_set_new(o, "library", lib ? json_string(lib->name) : json_null());
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	printf("%s\n", s ? s : "{}");
	free(s);
	json_decref(o);
	return KS_EXIT_OK;
}

/* index: the workload's number for --workloads (timed ones that run on the backend), -1
 * for checks and workloads of other backends */
/* the label column of the workload and check lists: the longest label, at least 36 */
static int label_width(const struct ks_task *t)
{
	int width = 36;
	for (int i = 0; i < t->nworkloads + t->nchecks; i++) {
		struct ks_buf label = KS_BUF_INIT;
		ks_workload_label(t, i < t->nworkloads ? &t->workloads[i] : &t->checks[i - t->nworkloads],
				  &label);
		width = (int)label.len > width ? (int)label.len : width;
		ks_buf_release(&label);
	}
	return width;
}

static void print_workload(const struct ks_task *t, const struct ks_workload *w,
			   const char *backend, int index, int width)
{
	struct ks_buf label;
	ks_buf_init(&label, 4096);
	ks_workload_label(t, w, &label);
	double flops = 0, bytes = 0;
	ks_workload_expr(t, w, t->flops, &flops, NULL);
	ks_workload_expr(t, w, t->bytes, &bytes, NULL);
	if (index >= 0)
		printf("  %2d", index);
	else if (!w->name)
		printf("    ");
	printf("  %-*s %10.4g GFLOP %10.4g MB", width, ks_buf_str(&label), flops / 1e9,
	       bytes / 1e6);
	if (w->backends) {
		printf("  [");
		for (char **b = w->backends; *b; b++)
			printf("%s%s", b == w->backends ? "" : ", ", *b);
		printf(" only%s]", ks_workload_for_backend(w, backend) ? "" : "; skipped here");
	}
	for (int i = 0; w->init && i < t->ninputs; i++)
		if (w->init[i])
			printf("  %s: %s", t->tensors[i].name, w->init[i]);
	printf("\n");
	ks_buf_release(&label);
}

/* what a template's `require` sees: the task's workloads of the backend and this machine */
struct require_env {
	const struct ks_task *task;
	const struct ks_workload *wl[512];
	int nwl;
	struct ks_spec spec;
};

static int require_name(int w, const char *name, size_t len, double *out, void *ctx)
{
	const struct require_env *r = ctx;
	return ks_template_task_name(r->task, w < 0 ? NULL : r->wl[w], &r->spec, name, len, out);
}

/* the configurations of tp whose `require` holds here, as `run` enumerates them: -1 with the
 * error in e when an expression cannot be evaluated (an unknown name, a division by zero) */
static long feasible_here(const struct ks_template *tp, struct require_env *r, struct ks_error *e)
{
	struct ks_config_set cs;
	if (ks_template_enumerate(tp, r->nwl, require_name, r, &cs, e))
		return -1;
	long n = cs.n;
	ks_config_set_release(&cs);
	return n;
}

/* the knob templates `ksearch run` explores on this backend: family, knobs, raw size and, for
 * a backend on this machine, how many satisfy `require` here; -1 (after saying why on
 * stderr) when one does not load or its `require` cannot be evaluated, as `run` would refuse
 * it */
static int print_templates(const struct ks_task *t, const char *backend)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/templates/%s", t->dir, backend);
	if (!ks_path_exists(dir))
		return 0;
	struct ks_template **list = NULL;
	int n = 0;
	struct ks_error e = {0};
	printf("\nknob templates (backend %s; what 'ksearch run' explores):\n", backend);
	if (ks_template_load_dir(dir, &list, &n, &e)) {
		printf("  error: %s\n", e.msg);
		fflush(stdout);
		fprintf(stderr, "ksearch: %s\n", e.msg);
		return -1;
	}
	/* require is checked where the backend runs on this machine: a device's spec.X is not
	 * known here */
	static struct require_env r;
	int here = ks_backend_on_host(ks_backend_find(backend)) && !ks_spec_detect_host(&r.spec, &e);
	r.task = t;
	r.nwl = 0;
	for (int i = 0; i < t->nworkloads + t->nchecks && r.nwl < 512; i++) {
		const struct ks_workload *w =
			i < t->nworkloads ? &t->workloads[i] : &t->checks[i - t->nworkloads];
		if (ks_workload_for_backend(w, backend))
			r.wl[r.nwl++] = w;
	}
	int bad = 0;
	for (int i = 0; i < n; i++) {
		const struct ks_template *tp = list[i];
		const char *file = strrchr(tp->path, '/') ? strrchr(tp->path, '/') + 1 : tp->path;
		long ok = here ? feasible_here(tp, &r, &e) : 0;
		printf("  %-14s %s, %ld configurations before 'require'", file, tp->family,
		       ks_template_size(tp));
		if (ok >= 0 && here)
			printf(", %ld feasible here", ok);
		printf(":\n   ");
		if (ok < 0) {
			fflush(stdout);
			fprintf(stderr, "ksearch: %s\n", e.msg);
			bad = 1;
		}
		for (int k = 0; k < tp->nknobs; k++) {
			const struct ks_knob *kn = &tp->knobs[k];
			printf(" %s {", kn->name);
			for (int v = 0; v < kn->nvalues; v++)
				printf("%s%s", v ? "," : "", kn->values[v]);
			printf("}");
		}
		printf("\n");
	}
	if (!n)
		printf("  (none)\n");
	if (here)
		ks_spec_release(&r.spec);
	ks_template_list_free(list, n);
	return bad ? -1 : 0;
}

static int show_text(const struct ks_task *t, const char *backend, const char *proto)
{
	printf("%s (%s)\n  %s\n", t->name, t->cls, t->summary);
	if (t->readme) {
		printf("\n");
		readme_summary(t->readme, stdout);
	}
	printf("\ntensors:\n");
	for (int i = 0; i < t->ntensors; i++) {
		const struct ks_tensor_decl *d = &t->tensors[i];
		char shape[512];
		shape_text(d, shape, sizeof(shape));
		printf("  %-6s %-12s %-5s %s", d->is_output ? "out" : "in", d->name,
		       ks_dtype_name(d->dtype), shape);
		if (d->init)
			printf("  init %s", d->init);
		printf("\n");
	}
	printf("\nparams:\n");
	for (int i = 0; i < t->nparams; i++)
		printf("  %-12s %s\n", t->params[i].name, ks_dtype_name(t->params[i].dtype));
	if (!t->nparams)
		printf("  (none)\n");
	printf("\nflops: %s\nbytes: %s\n", t->flops, t->bytes);
	printf("tolerance: atol %g, rtol %g, relative L2 %g\n", t->atol, t->rtol, t->l2);
	/* the vendor-library yardstick timed beside the baseline on this backend */
	const struct ks_task_library *lib = ks_task_library_for(t, backend);
	if (lib)
		printf("library (backend %s): %s, library.%s%s%s%s%s\n", backend, lib->name,
		       ks_backend_find(backend) ? ks_backend_find(backend)->ext : "?",
		       lib->pkg ? ", pkg-config " : "", lib->pkg ? lib->pkg : "",
		       lib->libs ? ", links " : "", lib->libs ? lib->libs : "");
	int width = label_width(t);
	printf("\nworkloads (timed; the number selects it in --workloads):\n");
	for (int i = 0, k = 0; i < t->nworkloads; i++)
		print_workload(t, &t->workloads[i], backend,
			       ks_workload_for_backend(&t->workloads[i], backend) ? k++ : -1, width);
	printf("\nchecks (correctness only):\n");
	for (int i = 0; i < t->nchecks; i++)
		print_workload(t, &t->checks[i], backend, -1, width);
	if (!t->nchecks)
		printf("  (none)\n");
	int bad = print_templates(t, backend);
	if (strchr(proto, '\n'))
		printf("\nYour kernel (backend %s):\n%s", backend, proto);
	else
		printf("\nYour kernel must define (backend %s):\n  %s\n", backend, proto);
	return bad ? KS_EXIT_USAGE : KS_EXIT_OK;
}

static int cmd_show(const char *name, const char *backend, int json)
{
	const struct ks_abi *abi = ks_abi_find(backend);
	if (!abi) {
		fprintf(stderr, "ksearch: unknown backend '%s' (expected", backend);
		const struct ks_backend_i *const *bs = ks_backend_list();
		for (int i = 0; bs[i]; i++)
			fprintf(stderr, "%s %s", i ? "," : "", bs[i]->name);
		fprintf(stderr, " or a kernel language such as metal)\n");
		return KS_EXIT_USAGE;
	}
	struct ks_task *t = NULL;
	struct ks_error e = {0};
	int rc = ks_task_load(name, &t, &e);
	if (rc) {
		fprintf(stderr, "ksearch: %s\n", e.msg);
		if (rc == KS_ENOTFOUND)
			print_available(stderr);
		return KS_EXIT_USAGE;
	}
	/* show the class's reusable assertions too (eval and run check them); a data root
	 * without knowledge/ only loses this part of the listing */
	if (ks_assertions_apply(t, &e))
		fprintf(stderr, "note: the class assertions are not shown: %s\n", e.msg);
	struct ks_buf proto;
	ks_buf_init(&proto, 1 << 16);
	/* the same text the LLM prompts give (every flavour of a backend that has several) */
	if (ks_abi_describe(backend, t, NULL, &proto)) {
		fprintf(stderr, "ksearch: cannot write the prototype of '%s'\n", t->name);
		ks_buf_release(&proto);
		ks_task_free(t);
		return KS_EXIT_USAGE;
	}
	rc = json ? show_json(t, backend, ks_buf_str(&proto))
		  : show_text(t, backend, ks_buf_str(&proto));
	ks_buf_release(&proto);
	ks_task_free(t);
	return rc;
}

int cmd_tasks(int argc, char **argv)
{
	const char *backend = "cpu";
	int json = 0;
	const struct ks_opt opts[] = {
		KS_OPT_STR("backend", &backend, "B", "backend whose prototype to show (cpu, cuda, metal, mlx)"),
		KS_OPT_FLAG("json", &json, "print one JSON object"),
		KS_OPT_END,
	};
	if (argc > 1 && !strcmp(argv[1], "import"))
		return cmd_tasks_import(argc - 1, argv + 1);
	const char *pos[3];
	int npos = 0;
	int rc = ks_opts_parse(argc, argv, opts, usage, about, pos, 3, &npos, NULL);
	if (rc)
		return rc > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	if (npos == 0 || !strcmp(pos[0], "list")) {
		if (npos > 1) {
			fprintf(stderr, "ksearch: 'tasks list' takes no argument\nusage: %s\n", usage);
			return KS_EXIT_USAGE;
		}
		return cmd_list(json);
	}
	if (!strcmp(pos[0], "show")) {
		if (npos != 2) {
			fprintf(stderr, "ksearch: 'tasks show' needs one task name\nusage: %s\n",
				usage);
			print_available(stderr);
			return KS_EXIT_USAGE;
		}
		return cmd_show(pos[1], backend, json);
	}
	static const char *const subs[] = {"list", "show", "import", NULL};
	ks_cli_unknown_sub("tasks", pos[0], subs);
	fprintf(stderr, "usage: %s\n", usage);
	return KS_EXIT_USAGE;
}
