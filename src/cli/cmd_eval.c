/* ksearch eval TASK KERNEL_FILE: check and time one kernel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ksearch/backend.h"
#include "ksearch/eval.h"
#include "ksearch/knowledge.h"
#include "ksearch/task.h"
#include "ksearch/worker.h"
#include "util/fs.h"
#include "util/units.h"

static const char usage[] = "ksearch eval TASK KERNEL_FILE [options]";
static const char about[] =
	"Compile KERNEL_FILE, check it against the task's reference on several seeds and\n"
	"every check, and time it against the task's baseline in the same session.\n"
	"TASK is a shipped task name (see 'ksearch tasks list') or a task folder.\n"
	"The kernel must define the prototype 'ksearch tasks show TASK' prints.\n\n"
	"Exit status: 0 the kernel passed, 1 it was evaluated and did not pass,\n"
	"2 usage or infrastructure error.";

/* One cell of the table: the value, or "-" right-aligned in the same width where there is
 * none (a workload that failed before it was compared or timed has no error or time, and a
 * roofline needs a spec; 0 would read as a measurement).  fmt: " %W.P?" and an optional
 * "x" after it. */
static void cell(const char *fmt, int known, double v)
{
	if (known)
		printf(fmt, v);
	else
		printf(" %*s", atoi(fmt + 2) + (fmt[strlen(fmt) - 1] == 'x'), "-");
}

/* max_abs and max_rel: known when the outputs were compared with the reference (nan when
 * they held NaN or Inf) */
static void print_errors(const struct ks_wl_result *w)
{
	int known = !w->not_run && (w->status == KS_STATUS_PASSED ||
				    w->status == KS_STATUS_INCORRECT_NUMERICAL ||
				    w->status == KS_STATUS_SUSPICIOUS || w->max_abs_err != 0 ||
				    w->max_rel_err != 0);
	cell(" %9.2e", known, w->max_abs_err);
	cell(" %9.2e", known, w->max_rel_err);
}

/* the label column fits the longest label ("batch=1 heads=32 kv_heads=8 seqlen=2048 ..."),
 * so that no two workloads read the same */
static int label_width(const struct ks_eval_result *r)
{
	int lw = 28;
	for (int l = 0; l < 2; l++)
		for (int i = 0; i < (l ? r->nchecks : r->nworkloads); i++) {
			const char *s = (l ? r->checks : r->workloads)[i].label;
			if (s && (int)strlen(s) > lw)
				lw = (int)strlen(s);
		}
	return lw;
}

/* one row per timed workload: errors, time, rates, roofline, baseline and library */
static void print_workloads(const struct ks_eval_result *r, int lw)
{
	/* the library's columns, named after it ("OpenBLAS_us", "vs OpenBLAS") */
	char lib_us[48] = "", lib_vs[48] = "";
	if (r->library) {
		snprintf(lib_us, sizeof(lib_us), " %.20s_us", r->library);
		snprintf(lib_vs, sizeof(lib_vs), " vs %.20s", r->library);
	}
	printf("\n%-*s %-20s %9s %9s %12s %7s %9s %8s %7s %12s %8s%*s%*s\n", lw, "workload",
	       "status", "max_abs", "max_rel", "median_us", "+-%", "GFLOP/s", "GB/s", "roof%",
	       "baseline_us", "speedup", r->library ? 13 : 0, lib_us, r->library ? 12 : 0, lib_vs);
	int cached = 0;
	for (int i = 0; i < r->nworkloads; i++) {
		const struct ks_wl_result *w = &r->workloads[i];
		int timed = w->median_us > 0;
		printf("%-*s %-20s", lw, w->label, w->not_run ? "not run" : ks_status_name(w->status));
		print_errors(w);
		cell(" %12.1f", timed, w->median_us);
		cell(" %7.1f", timed, w->spread_pct);
		cell(" %9.2f", timed, w->gflops);
		cell(" %8.2f", timed, w->gbps);
		cell(" %7.1f", timed && w->roofline_pct > 0, w->roofline_pct);
		cell(" %12.1f", w->baseline_us > 0, w->baseline_us);
		cell(" %7.2fx", timed && w->speedup > 0, w->speedup);
		if (r->library && w->library_us > 0)
			printf(" %12.1f %10.2fx", w->library_us, w->library_speedup);
		else if (r->library)
			printf(" %12s %11s", "-", "-");
		printf("\n");
		cached |= timed && w->roofline_pct > 100;
	}
	if (cached)
		printf("roof%% over 100: faster than the memory roof allows for data that streams "
		       "from memory; that workload's data stayed in cache between calls\n");
}

/* the correctness-only checks, then every log a workload or check left */
static void print_checks_and_logs(const struct ks_eval_result *r, int lw)
{
	if (r->nchecks) {
		printf("\n%-*s %-20s %9s %9s\n", lw, "check", "status", "max_abs", "max_rel");
		for (int i = 0; i < r->nchecks; i++) {
			const struct ks_wl_result *w = &r->checks[i];
			printf("%-*s %-20s", lw, w->label, w->not_run ? "not run" : ks_status_name(w->status));
			print_errors(w);
			printf("\n");
		}
	}
	int shown = 0;
	for (int l = 0; l < 2; l++) {
		const struct ks_wl_result *list = l ? r->checks : r->workloads;
		int n = l ? r->nchecks : r->nworkloads;
		for (int i = 0; i < n; i++)
			if (list[i].log && list[i].log[0] && strncmp(list[i].log, "not run", 7)) {
				if (!shown++)
					printf("\n");
				printf("%s: %s\n", list[i].label, list[i].log);
			}
	}
}

/* the human summary: the verdict line, then the tables (or the compiler's output) */
static void print_human(const struct ks_task *t, const char *backend, const char *path,
			const struct ks_eval_result *r)
{
	const char *base = ks_backend_baseline_label(ks_backend_find(backend));
	int passed = r->status == KS_STATUS_PASSED;
	printf("task %s, kernel %s: %s", t->name, path, ks_status_name(r->status));
	if (passed && r->speedup > 0)
		printf(", %.2fx %s%s", r->speedup, strcmp(base, "baseline") ? "vs " : "the ", base);
	if (passed && r->library && r->library_speedup > 0)
		printf(", %.2fx %s", r->library_speedup, r->library);
	printf("%s\n", passed && r->speedup > 0 ? " (geometric means)" : "");
	if (r->status == KS_STATUS_COMPILE_ERROR) {
		printf("\ncompiler output:\n%s\n", r->compile_log ? r->compile_log : "");
		return;
	}
	int lw = label_width(r);
	if (r->nworkloads)
		print_workloads(r, lw);
	print_checks_and_logs(r, lw);
	printf("\nsandbox: %s; median of timed repetitions, +-%% is the interquartile range\n",
	       r->sandbox ? r->sandbox : "");
}

/* the JSON summary: one object */
static int print_json(const struct ks_task *t, const char *backend, const char *path,
		      const struct ks_eval_result *r)
{
	struct ks_buf out = KS_BUF_INIT;
	ks_eval_result_json(t, backend, path, r, &out);
	ks_buf_adds(&out, "\n");
	int rc = ks_cli_print_buf("eval", &out);
	ks_buf_release(&out);
	return rc;
}

/* The compiler saw a copy of the kernel in the compile cache (CACHE/kernels/HH/HASH/kernel.c,
 * the one folder its jail may write; the user's path may not even be readable there), but
 * people know the kernel by the path they gave.  Every mention of the copy becomes that
 * path, other files of its folder (the generated shim, the linker's objects) lose the
 * folder, and a missing entry point is said in the user's terms.  The log is rewritten,
 * not the source: a '#line' directive would make the compiler quote lines from whatever
 * file has that name in its working folder. */
static void log_for_user(struct ks_eval_result *r, const struct ks_task *t, const char *path)
{
	if (!r->compile_log || !r->kernel_hash || strlen(r->kernel_hash) != 64)
		return;
	struct ks_buf out = KS_BUF_INIT;
	const char *p = r->compile_log, *h;
	while ((h = strstr(p, r->kernel_hash))) {
		const char *start = h, *end = h + 64;
		while (start > p && !strchr(" \t\n'\"`(", start[-1]))
			start--;
		ks_buf_add(&out, p, (size_t)(start - p));
		if (*end == '/' && !strncmp(end + 1, "kernel.", 7)) {
			ks_buf_adds(&out, path);
			end += 8 + strspn(end + 8, "abcdefghijklmnopqrstuvwxyz");
		} else if (*end == '/') {
			end++;
		} else {
			ks_buf_add(&out, start, (size_t)(end - start));
		}
		p = end;
	}
	ks_buf_adds(&out, p);
	char ref[160], sym[160];
	snprintf(ref, sizeof(ref), "undefined reference to `%s", t->name);
	snprintf(sym, sizeof(sym), "undefined symbol: %s", t->name);
	const char *u = strstr(ks_buf_str(&out), ref);
	size_t ul = strlen(ref);
	if (!u && (u = strstr(ks_buf_str(&out), sym)))
		ul = strlen(sym);
	if (u && strchr("'( \n", u[ul]))
		ks_buf_addf(&out, "%s%s defines no function '%s' (with C linkage), the entry point "
				  "the task calls: 'ksearch tasks show %s' prints its prototype\n",
			    out.len && out.data[out.len - 1] != '\n' ? "\n" : "", path, t->name,
			    t->name);
	if (!ks_buf_failed(&out)) {
		free(r->compile_log);
		r->compile_log = ks_buf_detach(&out, NULL);
	}
	ks_buf_release(&out);
}

/* --devices / --worker-cmd: the same evaluation through one worker process */
static int eval_in_worker(const char *task_arg, const struct ks_task *t, const char *devices,
			  const char *worker_cmd, const struct ks_eval_opts *o, const char *source,
			  const char *path, struct ks_eval_result *r, struct ks_error *e)
{
	int devs[64], ndev = 0;
	memset(r, 0, sizeof(*r));
	if (devices && ks_pool_parse_devices(devices, devs, 64, &ndev, e))
		return KS_EINVAL;
	if (ndev > 1)
		fprintf(stderr, "ksearch eval: one kernel needs one worker: using device %d\n",
			devs[0]);
	struct ks_pool_opts po;
	ks_pool_opts_init(&po);
	po.backend = o->backend;
	po.devices = ndev ? devs : NULL;
	po.ndevices = ndev ? 1 : 0;
	po.worker_cmd = worker_cmd;
	struct ks_pool *pool;
	int rc = ks_pool_new(&po, &pool, e);
	if (rc)
		return rc;
	struct ks_pool_job job = {.task = task_arg, .opts = o, .source = source, .path = path,
				  .units = t->nworkloads + t->nchecks};
	rc = ks_pool_evaluate_batch(pool, &job, 1, r, e);
	ks_pool_free(pool);
	return rc;
}

/* what the command line gives besides the evaluation's options */
struct eval_cli {
	const char *defines, *spec, *devices, *worker_cmd;
	int json, quick, verbose;
	const char *pos[2];
};

/* argv into o and c: -1 usage error (said), 1 --help (shown), 0 */
static int eval_parse(int argc, char **argv, struct ks_eval_opts *o, struct eval_cli *c)
{
	const struct ks_opt opts[] = {
		KS_OPT_STR("backend", &o->backend, "B", "where to run: cpu (default), cuda or mlx"),
		KS_OPT_STR("workloads", &o->workloads, "all|N,..", "which timed workloads (indexes)"),
		KS_OPT_INT("seeds", &o->nseeds, 3, 16 /* KS_MAX_SEEDS */, "N",
			   "correctness seeds per workload (3 to 16; 3)"),
		KS_OPT_DURATION("timeout", &o->timeout_s, 0.001, INFINITY, "S",
				"limit per call or timing block (default 60s)"),
		KS_OPT_SIZE("memory-limit", &o->memory_limit, "SIZE", "memory a kernel may allocate (2G)"),
		KS_OPT_INT("threads", &o->threads, 0, 4096, "N",
			   "OMP_NUM_THREADS for the kernel (OPENBLAS_NUM_THREADS for the library too)"),
		KS_OPT_STR("cflags", &o->cflags, "FLAGS", "compiler flags (-O3 -march=native -fopenmp)"),
		KS_OPT_STR("define", &c->defines, "A=1,B=2",
			   "values passed as -D; for a template, its knobs' values (the others: defaults)"),
		KS_OPT_DURATION("min-time", &o->min_time_s, 0, INFINITY, "S", "timing floor per block (0.2s)"),
		KS_OPT_INT("reps", &o->min_reps, 1, 20000, "N", "minimum timed repetitions per block (10)"),
		KS_OPT_FLAG("quick", &c->quick, "short timing (one block, 0.05 s floor)"),
		KS_OPT_FLAG("no-baseline", &o->skip_baseline, "do not time the baseline"),
		KS_OPT_FLAG("no-library", &o->skip_library,
			    "do not time the task's library kernel (library.<ext>: OpenBLAS, cuBLAS)"),
		KS_OPT_FLAG("no-checks", &o->skip_checks, "skip the correctness-only checks"),
		KS_OPT_STR("spec", &c->spec, "NAME|auto|none",
			   "hardware spec for the roofline (auto: the host or the GPU)"),
		KS_OPT_DOUBLE("peak-gflops", &o->peak_gflops, 0, 1e12, "X", "compute ceiling for the roofline"),
		KS_OPT_DOUBLE("peak-gbps", &o->peak_gbps, 0, 1e12, "X", "memory ceiling for the roofline"),
		KS_OPT_FLAG("no-sandbox", &o->no_sandbox,
			    "run without the sandbox (trusted code only, for debugging)"),
		KS_OPT_FLAG("json", &c->json, "print one JSON object"),
		KS_OPT_FLAG("verbose", &c->verbose, "log more"),
		KS_OPT_STR("devices", &c->devices, "LIST",
			   "evaluate in a 'ksearch worker' for a device (of a list such as 0,1, the first)"),
		KS_OPT_STR("worker-cmd", &c->worker_cmd, "CMD",
			   "start the worker with this shell command ({device}: the number)"),
		KS_OPT_END,
	};
	int npos = 0;
	int rc = ks_opts_parse(argc, argv, opts, usage, about, c->pos, 2, &npos, NULL);
	if (!rc && npos != 2) {
		fprintf(stderr, "ksearch eval: needs TASK and KERNEL_FILE\nusage: %s\n", usage);
		rc = -1;
	}
	if (!rc && c->quick) {
		o->min_time_s = 0.05;
		o->blocks = 1;
	}
	return rc;
}

/* the task with its class's reusable assertions, and --workloads checked against it before
 * anything runs (a bad list is better said before "evaluating ...") */
static int load_task(const char *name, const struct ks_eval_opts *o, struct ks_task **t,
		     struct ks_error *e)
{
	int rc = ks_task_load(name, t, e);
	if (!rc)
		rc = ks_assertions_apply(*t, e);
	int n = rc ? 0 : ks_task_timed_count(*t, o->backend);
	/* n == 0: the evaluator says so, naming the backend */
	if (!rc && (n > 0 || (o->workloads && !o->workloads[0])))
		rc = ks_eval_validate_workloads(o->workloads, n, e);
	return rc;
}

/* the roofline's roofs from --spec (auto: the host, or the GPU the kernel runs on when it
 * is on this machine), unless --peak-* gave both; only a named spec that fails is an error */
static int roofline_spec(const struct eval_cli *c, struct ks_eval_opts *o, struct ks_error *e)
{
	if (!strcmp(c->spec, "none") || (o->peak_gflops > 0 && o->peak_gbps > 0))
		return 0;
	const struct ks_backend_i *be = ks_backend_find(o->backend);
	struct ks_spec sp;
	ks_spec_init(&sp);
	int named = strcmp(c->spec, "auto"), rc = KS_ENOTFOUND;
	if (named && !(rc = ks_spec_load(c->spec, &sp, e)))
		rc = ks_backend_spec_fits(be, &sp, e);
	else if (!named && ks_backend_on_host(be))
		rc = ks_spec_detect_host(&sp, e);
	else if (!named && !c->worker_cmd)
		rc = ks_backend_device_spec(o->backend, c->devices, &sp, e);
	if (!rc)
		ks_roofline_fill(&sp, o);
	ks_spec_release(&sp);
	return named ? rc : 0;
}

/* the task, the kernel's source and knob values (a template runs at its defaults where
 * --define gives no value), the roofs */
static int eval_setup(struct eval_cli *c, struct ks_eval_opts *o, struct ks_task **t,
		      struct ks_buf *src, struct ks_defines *vals, struct ks_error *e)
{
	int rc = load_task(c->pos[0], o, t, e);
	if (!rc)
		rc = ks_kernel_source_read(c->pos[1], 1 << 20, src, e);
	if (!rc)
		rc = ks_cli_knob_values(ks_buf_str(src), c->pos[1], c->defines, vals, e);
	if (!rc && vals->n)
		o->defines = vals->list;
	return rc ? rc : roofline_spec(c, o, e);
}

int cmd_eval(int argc, char **argv)
{
	struct eval_cli c = {.spec = "auto"};
	struct ks_eval_opts o;
	ks_eval_opts_init(&o);
	int rc = eval_parse(argc, argv, &o, &c);
	if (rc)
		return rc > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	ks_cli_log_init(c.verbose);
	struct ks_error e = {0};
	struct ks_task *t = NULL;
	struct ks_buf src = KS_BUF_INIT;
	struct ks_defines vals;
	ks_defines_init(&vals);
	struct ks_eval_result r;
	int passed = 0;
	if ((rc = eval_setup(&c, &o, &t, &src, &vals, &e)))
		goto out;
	if (!c.json)
		fprintf(stderr, "evaluating %s on %s (%s backend)...\n", c.pos[1], t->name, o.backend);
	rc = c.devices || c.worker_cmd
		     ? eval_in_worker(c.pos[0], t, c.devices, c.worker_cmd, &o, ks_buf_str(&src),
				      c.pos[1], &r, &e)
		     : ks_eval_kernel(t, ks_buf_str(&src), c.pos[1], &o, &r, &e);
	if (rc)
		goto out;
	log_for_user(&r, t, c.pos[1]);
	if (c.json)
		rc = print_json(t, o.backend, c.pos[1], &r);
	else
		print_human(t, o.backend, c.pos[1], &r);
	passed = r.status == KS_STATUS_PASSED;
	ks_eval_result_release(&r);
out:
	if (rc < 0)
		fprintf(stderr, "ksearch eval: %s\n", e.msg);
	ks_defines_release(&vals);
	ks_buf_release(&src);
	ks_task_free(t);
	return rc ? KS_EXIT_USAGE : passed ? KS_EXIT_OK : KS_EXIT_FAIL;
}
