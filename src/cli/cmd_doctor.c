/* ksearch doctor: runs what matters on this machine and prints a report to paste into an
 * issue (docs/macos.md).  Three parts, each kernel evaluated as `ksearch eval --quick
 * --workloads 0 --no-baseline --no-library` would (its checks included):
 *   - the compiler's jail and the runner's sandbox on CPU kernels: a task's baseline and
 *     rows of the hostile catalogue (tests/fixtures/hostile/catalogue.txt), against the
 *     statuses Linux gives;
 *   - every MLX kernel file the project ships (tasks/), where this machine's MLX can run it
 *     (the backend's template_runs says which), each rerun without the sandbox when it
 *     fails, to tell the sandbox from the kernel;
 *   - the mlx backend's hostile catalogue (tests/fixtures/hostile_mlx/catalogue.txt), each
 *     followed by its good kernel.
 * What cannot run here is listed as skipped, with the reason. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "cli/cli.h"
#include "ksearch/backend.h"
#include "ksearch/eval.h"
#include "ksearch/knowledge.h"
#include "ksearch/task.h"
#include "util/defines.h"
#include "util/fs.h"

static const char usage[] =
	"ksearch doctor [--only sandbox|kernels|hostile] [--backend B] [--timeout S] [--out FILE]";
static const char about[] =
	"Runs what matters on this machine and prints a Markdown report to paste into an issue:\n"
	"the system and what isolates kernels here; CPU kernels through the compiler's jail and\n"
	"the runner's sandbox (a task's baseline and hostile kernels, against the statuses Linux\n"
	"gives); every MLX kernel file of tasks/ where this machine's MLX runs it (Metal kernels\n"
	"on Apple silicon, CUDA ones on MLX's CUDA build), rerun without the sandbox when one\n"
	"fails; the mlx backend's hostile kernels.  What cannot run here is listed as skipped,\n"
	"with the reason.  Takes minutes (each kernel is compiled and checked, its timing kept\n"
	"short).\n\n"
	"Exit status: 0 every kernel that ran got the status expected of it, 1 one did not, 2\n"
	"usage or infrastructure error.";

/* the rows of tests/fixtures/hostile/catalogue.txt run on the CPU: one of each kind of
 * refusal the sandbox makes, and the statuses that do not depend on it */
static const char *const cpu_rows[] = {"plain",        "compile_error", "segfault",
				       "infinite_loop", "huge_alloc",   "fork_loop",
				       "exec",         "socket_connect", "file_write",
				       "kill_parent",  NULL};

struct doctor {
	FILE *out;           /* the report */
	const char *only;    /* NULL, or the one part to run: sandbox, kernels or hostile */
	const char *backend; /* where the kernel files run */
	double timeout_s;    /* per call of a hostile kernel (the rest: ksearch eval's default) */
	int ran, unexpected, skipped;
	char sandbox[160];   /* what isolated the first sandboxed kernel */
};

/* the first line of the first failing workload's or check's log into note, with the
 * table's separator replaced */
static void first_failure(const struct ks_eval_result *r, char *note, size_t n)
{
	const char *log = NULL;
	for (int i = 0; i < r->nchecks && !log; i++)
		if (r->checks[i].status != KS_STATUS_PASSED)
			log = r->checks[i].log;
	for (int i = 0; i < r->nworkloads && !log; i++)
		if (r->workloads[i].status != KS_STATUS_PASSED)
			log = r->workloads[i].log;
	if (!log && r->compile_log && r->status == KS_STATUS_COMPILE_ERROR)
		log = r->compile_log;
	snprintf(note, n, "%.*s", (int)strcspn(log ? log : "", "\n"), log ? log : "");
	for (char *p = note; *p; p++)
		*p = *p == '|' ? '/' : *p;
}

static void eval_opts(const struct doctor *d, const char *backend, int no_sandbox,
		      int hostile, struct ks_eval_opts *o)
{
	ks_eval_opts_init(o);
	o->backend = backend;
	o->workloads = "0";
	o->skip_baseline = 1;
	o->skip_library = 1;
	o->min_time_s = 0.05;
	o->blocks = 1;
	if (hostile)
		o->timeout_s = d->timeout_s;
	o->memory_limit = (size_t)512 << 20; /* the hostile catalogue's */
	o->no_sandbox = no_sandbox;
}

/* The status of kernel file path on task (its knobs at their defaults) into status, or
 * "ERROR" with the message in note; 0, or the error that kept it from being evaluated
 * (KS_EUNAVAILABLE: this machine cannot run it).  hostile: the short time limit. */
static int evaluate(struct doctor *d, const char *task, const char *path, const char *backend,
		    int no_sandbox, int hostile, char *status, size_t n, char *note, size_t nn)
{
	struct ks_error e = {0};
	struct ks_task *t = NULL;
	struct ks_buf src = KS_BUF_INIT;
	struct ks_defines vals;
	struct ks_eval_result r;
	ks_defines_init(&vals);
	struct ks_eval_opts o;
	eval_opts(d, backend, no_sandbox, hostile, &o);
	int rc = ks_task_load(task, &t, &e);
	if (!rc)
		rc = ks_assertions_apply(t, &e);
	if (!rc)
		rc = ks_file_read(path, 1 << 20, &src, &e);
	if (!rc)
		rc = ks_cli_knob_values(ks_buf_str(&src), path, NULL, &vals, &e);
	if (!rc) {
		o.defines = vals.list;
		fprintf(stderr, "doctor: %s on %s (%s)%s\n", path, t->name, backend,
			no_sandbox ? " without the sandbox" : "");
		rc = ks_eval_kernel(t, ks_buf_str(&src), path, &o, &r, &e);
	}
	if (rc) {
		snprintf(status, n, "ERROR");
		snprintf(note, nn, "%s", e.msg);
	} else {
		snprintf(status, n, "%s", ks_status_name(r.status));
		first_failure(&r, note, nn);
		if (!d->sandbox[0] && !no_sandbox && r.sandbox)
			snprintf(d->sandbox, sizeof(d->sandbox), "%s", r.sandbox);
		ks_eval_result_release(&r);
	}
	ks_defines_release(&vals);
	ks_buf_release(&src);
	ks_task_free(t);
	return rc;
}

/* 1 when got is one of want's "A|B" statuses */
static int expected(const char *want, const char *got)
{
	size_t len = strlen(got);
	for (const char *p = want; *p;) {
		size_t w = strcspn(p, "|");
		if (w == len && !strncmp(p, got, len))
			return 1;
		p += w + (p[w] == '|');
	}
	return 0;
}

/* one table row, counted */
static void row(struct doctor *d, const char *what, const char *got, const char *want,
		const char *note)
{
	int same = expected(want, got);
	d->ran++;
	d->unexpected += !same;
	fprintf(d->out, "| %s | %s | %s | %s | %s |\n", what, got, want, same ? "ok" : "**UNEXPECTED**",
		note);
}

static void skipped(struct doctor *d, const char *what, const char *why)
{
	d->skipped++;
	fprintf(d->out, "| %s | skipped | | | %s |\n", what, why);
}

static void table_head(struct doctor *d, const char *title, const char *want)
{
	fprintf(d->out, "\n## %s\n\n| kernel | status | %s | | note |\n|---|---|---|---|---|\n",
		title, want);
}

/* the task's baseline and the chosen rows of the CPU hostile catalogue */
static void doctor_cpu(struct doctor *d)
{
	char path[4096], task[4096], st[64], note[512], line[512];
	table_head(d, "CPU kernels: the compiler's jail and the runner's sandbox", "Linux gives");
	snprintf(path, sizeof(path), "%s/tasks/softmax/baseline.c", ks_data_root());
	evaluate(d, "softmax", path, "cpu", 0, 0, st, sizeof(st), note, sizeof(note));
	row(d, "tasks/softmax/baseline.c", st, "PASSED", note);
	snprintf(task, sizeof(task), "%s/tests/fixtures/eval/scale", ks_data_root());
	snprintf(path, sizeof(path), "%s/tests/fixtures/hostile/catalogue.txt", ks_data_root());
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char mark[16], kernel[64], want[64], extra[64] = "";
		if (line[0] == '#' || sscanf(line, "%15s %63s %63s %63s", mark, kernel, want, extra) < 3 ||
		    extra[0])
			continue;
		for (int i = 0; cpu_rows[i]; i++)
			if (!strcmp(kernel, cpu_rows[i])) {
				snprintf(path, sizeof(path), "%s/tests/fixtures/hostile/%s.c",
					 ks_data_root(), kernel);
				evaluate(d, task, path, "cpu", 0, 1, st, sizeof(st), note, sizeof(note));
				snprintf(line, sizeof(line), "hostile %s.c", kernel);
				row(d, line, st, want, note);
			}
	}
	if (f)
		fclose(f);
	else
		skipped(d, "the hostile catalogue", "tests/fixtures/hostile/catalogue.txt not found");
}

/* path on task with backend b where its runtime runs it; rerun without the sandbox when
 * it does not get want */
static void run_mlx(struct doctor *d, const struct ks_backend_i *b, const char *task,
		    const char *path, const char *label, const char *want, int hostile)
{
	char st[64], note[512], st2[64], note2[512], why[512];
	struct ks_buf src = KS_BUF_INIT;
	struct ks_error e = {0};
	if (ks_file_read(path, 1 << 20, &src, &e)) {
		skipped(d, label, e.msg);
		return;
	}
	int runs = ks_backend_template_runs(b, ks_buf_str(&src), why, sizeof(why));
	ks_buf_release(&src);
	if (!runs) {
		skipped(d, label, why);
		return;
	}
	int rc = evaluate(d, task, path, d->backend, 0, hostile, st, sizeof(st), note, sizeof(note));
	if (rc == KS_EUNAVAILABLE) {
		skipped(d, label, note);
		return;
	}
	/* our own shipped kernels only: a hostile one never runs unconfined */
	if (!rc && !hostile && !expected(want, st) &&
	    !evaluate(d, task, path, d->backend, 1, hostile, st2, sizeof(st2), note2, sizeof(note2))) {
		size_t len = strlen(note);
		snprintf(note + len, sizeof(note) - len, "%swithout the sandbox: %s", len ? "; " : "",
			 st2);
	}
	row(d, label, st, want, note);
}

/* the task folder of tasks/T/...: the part before the second '/' */
static void task_of(const char *rel, char *task, size_t n)
{
	const char *first = strchr(rel, '/'), *second = first ? strchr(first + 1, '/') : NULL;
	int len = second ? (int)(second - rel) : (int)strlen(rel);
	snprintf(task, n, "%s/%.*s", ks_data_root(), len, rel);
}

/* every .mlx file of tasks/ (baselines, naive kernels, templates) */
static void doctor_mlx_files(struct doctor *d, const struct ks_backend_i *b)
{
	static const char *const patterns[] = {"tasks/*/*.mlx", "tasks/*/templates/mlx/*.mlx"};
	char pat[4096], task[4096];
	size_t root = strlen(ks_data_root()) + 1;
	table_head(d, "MLX kernel files of tasks/", "expected");
	for (size_t p = 0; p < sizeof(patterns) / sizeof(patterns[0]); p++) {
		glob_t g;
		snprintf(pat, sizeof(pat), "%s/%s", ks_data_root(), patterns[p]);
		if (glob(pat, 0, NULL, &g))
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++) {
			const char *rel = g.gl_pathv[i] + root;
			task_of(rel, task, sizeof(task));
			run_mlx(d, b, task, g.gl_pathv[i], rel, "PASSED", 0);
		}
		globfree(&g);
	}
}

/* tests/fixtures/hostile_mlx/catalogue.txt: kernel, statuses, the good kernel after it */
static void doctor_mlx_hostile(struct doctor *d, const struct ks_backend_i *b)
{
	char dir[4096], path[8192], line[512], label[256], task[4096];
	snprintf(dir, sizeof(dir), "%s/tests/fixtures/hostile_mlx", ks_data_root());
	snprintf(task, sizeof(task), "%s/tasks/softmax", ks_data_root());
	snprintf(path, sizeof(path), "%s/catalogue.txt", dir);
	table_head(d, "The mlx backend's hostile kernels (on tasks/softmax)", "expected");
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char kernel[128], want[128], good[128] = "";
		if (line[0] == '#' || sscanf(line, "%127s %127s %127s", kernel, want, good) < 2)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, kernel);
		snprintf(label, sizeof(label), "hostile %s", kernel);
		run_mlx(d, b, task, path, label, want, 1);
		if (!good[0])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, good);
		snprintf(label, sizeof(label), "%s after %s", good, kernel);
		run_mlx(d, b, task, path, label, "PASSED", 0);
	}
	if (f)
		fclose(f);
	else
		skipped(d, "the mlx hostile catalogue", "tests/fixtures/hostile_mlx/catalogue.txt not found");
}

static void doctor_mlx(struct doctor *d)
{
	const struct ks_backend_i *b = NULL;
	struct ks_error e = {0};
	if (ks_backend_get(d->backend, &b, &e)) {
		table_head(d, "MLX kernels", "expected");
		skipped(d, "every MLX kernel file and hostile kernel", e.msg);
		return;
	}
	struct ks_buf desc = KS_BUF_INIT;
	if (b->describe_target && !b->describe_target(&desc))
		fprintf(d->out, "\n%s backend: %s\n", d->backend, ks_buf_str(&desc));
	ks_buf_release(&desc);
	if (!d->only || !strcmp(d->only, "kernels"))
		doctor_mlx_files(d, b);
	if (!d->only || !strcmp(d->only, "hostile"))
		doctor_mlx_hostile(d, b);
}

static void doctor_report(struct doctor *d)
{
	struct utsname u;
	fprintf(d->out, "# ksearch doctor\n\nksearch %s", KS_VERSION);
	if (!uname(&u))
		fprintf(d->out, " on %s %s %s", u.sysname, u.release, u.machine);
	fprintf(d->out, "\n");
	if (!d->only || !strcmp(d->only, "sandbox"))
		doctor_cpu(d);
	if (!d->only || strcmp(d->only, "sandbox"))
		doctor_mlx(d);
	fprintf(d->out, "\nkernels isolated by: %s\n", d->sandbox[0] ? d->sandbox : "(none ran)");
	fprintf(d->out, "\n%d ran, %d as expected, %d unexpected, %d skipped\n", d->ran,
		d->ran - d->unexpected, d->unexpected, d->skipped);
}

int cmd_doctor(int argc, char **argv)
{
	const char *out_path = NULL, *backend = "mlx", *only = NULL;
	double timeout = 5;
	int verbose = 0;
	static const char *const parts[] = {"sandbox", "kernels", "hostile", NULL};
	const struct ks_opt opts[] = {
		KS_OPT_STR("backend", &backend, "B", "where the MLX kernel files run (mlx)"),
		KS_OPT_DOUBLE("timeout", &timeout, 0.5, 3600, "S",
			      "limit per call of a hostile kernel, seconds (5; the rest: eval's 60)"),
		KS_OPT_ENUM("only", &only, parts, "PART",
			    "one part: sandbox (CPU kernels), kernels (tasks' MLX files) or "
			    "hostile (MLX)"),
		KS_OPT_STR("out", &out_path, "FILE", "write the report to FILE as well"),
		KS_OPT_FLAG("verbose", &verbose, "log more"),
		KS_OPT_END,
	};
	int npos = 0;
	int prc = ks_opts_parse(argc, argv, opts, usage, about, NULL, 0, &npos, NULL);
	if (prc)
		return prc > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	ks_cli_log_init(verbose);
	char *text = NULL;
	size_t len = 0;
	struct doctor d = {.backend = backend, .timeout_s = timeout, .only = only};
	d.out = open_memstream(&text, &len);
	if (!d.out) {
		fprintf(stderr, "ksearch doctor: out of memory\n");
		return KS_EXIT_USAGE;
	}
	doctor_report(&d);
	fclose(d.out);
	fputs(text, stdout);
	FILE *f = out_path ? fopen(out_path, "w") : NULL;
	if (out_path && (!f || fputs(text, f) < 0 || fclose(f))) {
		fprintf(stderr, "ksearch doctor: cannot write '%s'\n", out_path);
		free(text);
		return KS_EXIT_USAGE;
	}
	free(text);
	return d.unexpected ? KS_EXIT_FAIL : KS_EXIT_OK;
}
