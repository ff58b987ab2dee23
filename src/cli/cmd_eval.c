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

static void print_human(const struct ks_task *t, const char *backend, const char *path,
			const struct ks_eval_result *r)
{
	const char *base = ks_backend_baseline_label(ks_backend_find(backend));
	printf("task %s, kernel %s: %s", t->name, path, ks_status_name(r->status));
	if (r->status == KS_STATUS_PASSED && r->speedup > 0)
		printf(", %.2fx %s%s", r->speedup, strcmp(base, "baseline") ? "vs " : "the ", base);
	if (r->status == KS_STATUS_PASSED && r->library && r->library_speedup > 0)
		printf(", %.2fx %s", r->library_speedup, r->library);
	if (r->status == KS_STATUS_PASSED && r->speedup > 0)
		printf(" (geometric means)");
	printf("\n");
	if (r->status == KS_STATUS_COMPILE_ERROR) {
		printf("\ncompiler output:\n%s\n", r->compile_log ? r->compile_log : "");
		return;
	}
	/* the label column fits the longest label ("batch=1 heads=32 kv_heads=8 seqlen=2048 ..."),
	 * so that no two workloads read the same */
	int lw = 28;
	for (int l = 0; l < 2; l++)
		for (int i = 0; i < (l ? r->nchecks : r->nworkloads); i++) {
			const char *s = (l ? r->checks : r->workloads)[i].label;
			if (s && (int)strlen(s) > lw)
				lw = (int)strlen(s);
		}
	if (r->nworkloads) {
		/* the library's columns, named after it ("OpenBLAS_us", "vs OpenBLAS") */
		char lib_us[48] = "", lib_vs[48] = "";
		if (r->library) {
			snprintf(lib_us, sizeof(lib_us), " %.20s_us", r->library);
			snprintf(lib_vs, sizeof(lib_vs), " vs %.20s", r->library);
		}
		printf("\n%-*s %-20s %9s %9s %12s %7s %9s %8s %7s %12s %8s%*s%*s\n", lw, "workload",
		       "status", "max_abs", "max_rel", "median_us", "+-%", "GFLOP/s", "GB/s", "roof%",
		       "baseline_us", "speedup", r->library ? 13 : 0, lib_us, r->library ? 12 : 0,
		       lib_vs);
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
		}
		int cached = 0;
		for (int i = 0; i < r->nworkloads; i++)
			cached |= r->workloads[i].median_us > 0 && r->workloads[i].roofline_pct > 100;
		if (cached)
			printf("roof%% over 100: faster than the memory roof allows for data that streams "
			       "from memory; that workload's data stayed in cache between calls\n");
	}
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
	printf("\nsandbox: %s; median of timed repetitions, +-%% is the interquartile range\n",
	       r->sandbox ? r->sandbox : "");
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

/* --workloads before anything runs: a bad list is better said before "evaluating ..." */
static int check_workloads(const struct ks_task *t, const char *backend, const char *sel)
{
	struct ks_error e = {0};
	int n = ks_task_timed_count(t, backend);
	/* n == 0: the evaluator says so, naming the backend */
	if ((n > 0 || (sel && !sel[0])) && ks_eval_validate_workloads(sel, n, &e)) {
		fprintf(stderr, "ksearch eval: %s\n", e.msg);
		return KS_EINVAL;
	}
	return 0;
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

int cmd_eval(int argc, char **argv)
{
	const char *backend = "cpu", *workloads = NULL, *timeout = NULL, *memlimit = NULL,
		   *cflags = NULL, *defines = NULL, *min_time = NULL, *spec = "auto";
	const char *devices = NULL, *worker_cmd = NULL;
	int seeds = 3, json = 0, threads = 0, quick = 0, no_baseline = 0, no_library = 0, no_checks = 0,
	    verbose = 0, reps = 0, no_sandbox = 0;
	double peak_gflops = 0, peak_gbps = 0;
	const struct ks_opt opts[] = {
		{"backend", KS_OPT_STR, &backend, "B", "where to run: cpu (default), cuda or mlx"},
		{"workloads", KS_OPT_STR, &workloads, "all|N,..", "which timed workloads (indexes)"},
		{"seeds", KS_OPT_INT, &seeds, "N", "correctness seeds per workload (>= 3)"},
		{"timeout", KS_OPT_STR, &timeout, "S", "limit per call or timing block (default 60s)"},
		{"memory-limit", KS_OPT_STR, &memlimit, "SIZE", "memory a kernel may allocate (2G)"},
		{"threads", KS_OPT_INT, &threads, "N",
		 "OMP_NUM_THREADS for the kernel (OPENBLAS_NUM_THREADS for the library too)"},
		{"cflags", KS_OPT_STR, &cflags, "FLAGS", "compiler flags (-O3 -march=native -fopenmp)"},
		{"define", KS_OPT_STR, &defines, "A=1,B=2",
		 "values passed as -D; for a template, its knobs' values (the others: defaults)"},
		{"min-time", KS_OPT_STR, &min_time, "S", "timing floor per block (0.2s)"},
		{"reps", KS_OPT_INT, &reps, "N", "minimum timed repetitions per block (10)"},
		{"quick", KS_OPT_FLAG, &quick, NULL, "short timing (one block, 0.05 s floor)"},
		{"no-baseline", KS_OPT_FLAG, &no_baseline, NULL, "do not time the baseline"},
		{"no-library", KS_OPT_FLAG, &no_library, NULL,
		 "do not time the task's library kernel (library.<ext>: OpenBLAS, cuBLAS)"},
		{"no-checks", KS_OPT_FLAG, &no_checks, NULL, "skip the correctness-only checks"},
		{"spec", KS_OPT_STR, &spec, "NAME|auto|none",
		 "hardware spec for the roofline (auto: the host or the GPU)"},
		{"peak-gflops", KS_OPT_DOUBLE, &peak_gflops, "X", "compute ceiling for the roofline"},
		{"peak-gbps", KS_OPT_DOUBLE, &peak_gbps, "X", "memory ceiling for the roofline"},
		{"no-sandbox", KS_OPT_FLAG, &no_sandbox, NULL,
		 "run without the sandbox (trusted code only, for debugging)"},
		{"json", KS_OPT_FLAG, &json, NULL, "print one JSON object"},
		{"verbose", KS_OPT_FLAG, &verbose, NULL, "log more"},
		{"devices", KS_OPT_STR, &devices, "LIST", "evaluate in a 'ksearch worker' for a device (of a list such as 0,1, the first)"},
		{"worker-cmd", KS_OPT_STR, &worker_cmd, "CMD",
		 "start the worker with this shell command ({device}: the number)"},
		{NULL, 0, NULL, NULL, NULL},
	};
	const char *pos[2];
	int npos = 0;
	int prc = ks_opts_parse(argc, argv, opts, usage, about, pos, 2, &npos);
	if (prc)
		return prc > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	if (ks_opt_range("seeds", seeds, 3, 16 /* KS_MAX_SEEDS */) || ks_opt_range("threads", threads, 0, 4096) ||
	    ks_opt_range("reps", reps, 0, 20000) || ks_opt_range("peak-gflops", peak_gflops, 0, 1e12) ||
	    ks_opt_range("peak-gbps", peak_gbps, 0, 1e12))
		return KS_EXIT_USAGE;
	if (npos != 2) {
		fprintf(stderr, "ksearch eval: needs TASK and KERNEL_FILE\nusage: %s\n", usage);
		return KS_EXIT_USAGE;
	}
	ks_cli_log_init(verbose);
	struct ks_eval_opts o;
	ks_eval_opts_init(&o);
	o.backend = backend;
	o.workloads = workloads;
	o.nseeds = seeds;
	o.threads = threads;
	o.cflags = cflags;
	o.skip_baseline = no_baseline;
	o.skip_library = no_library;
	o.skip_checks = no_checks;
	o.peak_gflops = peak_gflops;
	o.peak_gbps = peak_gbps;
	o.no_sandbox = no_sandbox;
	if (reps > 0)
		o.min_reps = reps;
	if (seeds < 3 || seeds > 16) {
		fprintf(stderr, "ksearch eval: --seeds must be between 3 and 16\n");
		return KS_EXIT_USAGE;
	}
	if (timeout && (ks_parse_duration(timeout, &o.timeout_s) || o.timeout_s <= 0)) {
		fprintf(stderr, "ksearch eval: --timeout expects a duration like 30 or 2m, got '%s'\n",
			timeout);
		return KS_EXIT_USAGE;
	}
	if (memlimit && ks_parse_size(memlimit, &o.memory_limit)) {
		fprintf(stderr, "ksearch eval: --memory-limit expects a size like 512M or 2G, got '%s'\n",
			memlimit);
		return KS_EXIT_USAGE;
	}
	if (min_time && ks_parse_duration(min_time, &o.min_time_s)) {
		fprintf(stderr, "ksearch eval: --min-time expects a duration, got '%s'\n", min_time);
		return KS_EXIT_USAGE;
	}
	if (quick) {
		o.min_time_s = 0.05;
		o.blocks = 1;
	}
	struct ks_error e = {0};
	struct ks_task *t = NULL;
	/* the reusable assertions of the task's class add their checks */
	if (ks_task_load(pos[0], &t, &e) || ks_assertions_apply(t, &e)) {
		fprintf(stderr, "ksearch eval: %s\n", e.msg);
		ks_task_free(t);
		return KS_EXIT_USAGE;
	}
	if (check_workloads(t, backend, workloads)) {
		ks_task_free(t);
		return KS_EXIT_USAGE;
	}
	struct ks_buf src = KS_BUF_INIT;
	if (ks_kernel_source_read(pos[1], 1 << 20, &src, &e)) {
		fprintf(stderr, "ksearch eval: %s\n", e.msg);
		ks_task_free(t);
		return KS_EXIT_USAGE;
	}
	/* a knob template runs at its defaults where --define gives no value */
	struct ks_defines vals;
	ks_defines_init(&vals);
	if (ks_cli_knob_values(ks_buf_str(&src), pos[1], defines, &vals, &e)) {
		fprintf(stderr, "ksearch eval: %s\n", e.msg);
		ks_defines_release(&vals);
		ks_buf_release(&src);
		ks_task_free(t);
		return KS_EXIT_USAGE;
	}
	if (vals.n)
		o.defines = vals.list;
	if (strcmp(spec, "none") && (peak_gflops <= 0 || peak_gbps <= 0)) {
		struct ks_spec sp;
		ks_spec_init(&sp);
		/* auto: the host, or the GPU the kernel runs on when it is on this machine */
		int loaded = KS_ENOTFOUND;
		if (strcmp(spec, "auto")) {
			loaded = ks_spec_load(spec, &sp, &e);
			if (!loaded)
				loaded = ks_backend_spec_fits(ks_backend_find(backend), &sp, &e);
		} else if (ks_backend_on_host(ks_backend_find(backend)))
			loaded = ks_spec_detect_host(&sp, &e);
		else if (!worker_cmd)
			loaded = ks_backend_device_spec(backend, devices, &sp, &e);
		if (loaded == 0) {
			ks_roofline_fill(&sp, &o);
		} else if (strcmp(spec, "auto")) {
			fprintf(stderr, "ksearch eval: %s\n", e.msg);
			ks_spec_release(&sp);
			ks_task_free(t);
			ks_buf_release(&src);
			ks_defines_release(&vals);
			return KS_EXIT_USAGE;
		}
		ks_spec_release(&sp);
	}
	if (!json)
		fprintf(stderr, "evaluating %s on %s (%s backend)...\n", pos[1], t->name, backend);
	struct ks_eval_result r;
	int rc = devices || worker_cmd
			 ? eval_in_worker(pos[0], t, devices, worker_cmd, &o, ks_buf_str(&src), pos[1], &r, &e)
			 : ks_eval_kernel(t, ks_buf_str(&src), pos[1], &o, &r, &e);
	int exit_code;
	if (rc) {
		fprintf(stderr, "ksearch eval: %s\n", e.msg);
		exit_code = KS_EXIT_USAGE;
	} else {
		log_for_user(&r, t, pos[1]);
		if (json) {
			struct ks_buf out = KS_BUF_INIT;
			ks_eval_result_json(t, backend, pos[1], &r, &out);
			printf("%s\n", ks_buf_str(&out));
			ks_buf_release(&out);
		} else {
			print_human(t, backend, pos[1], &r);
		}
		exit_code = r.status == KS_STATUS_PASSED ? KS_EXIT_OK : KS_EXIT_FAIL;
		ks_eval_result_release(&r);
	}
	ks_defines_release(&vals);
	ks_buf_release(&src);
	ks_task_free(t);
	return exit_code;
}
