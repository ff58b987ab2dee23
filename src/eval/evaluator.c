/* The evaluator: compiled reference and baseline, reference outputs, and the loop over
 * checks and workloads for each candidate. */
#include "eval/evaluator.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backends.h"
#include "eval/stats.h"
#include "ksearch/log.h"
#include "ksearch/store.h"
#include "util/clock.h"
#include "util/exe_path.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/os.h"

static const char *status_names[] = {
#define KS_STATUS_NAME_(name) #name,
	KS_STATUS_MAP(KS_STATUS_NAME_)
#undef KS_STATUS_NAME_
};

const char *ks_status_name(enum ks_status s)
{
	return s >= 0 && s < KS_STATUS_COUNT_ ? status_names[s] : "UNKNOWN";
}

int ks_status_parse(const char *name)
{
	for (int i = 0; i < KS_STATUS_COUNT_; i++)
		if (!strcmp(name, status_names[i]))
			return i;
	return -1;
}

static size_t llc_bytes(void)
{
	size_t best = 0;
	for (int i = 0; i < 8; i++) {
		char path[128];
		struct ks_buf b = KS_BUF_INIT;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		if (ks_file_read(path, 64, &b, NULL) == 0) {
			char *end;
			size_t v = strtoull(ks_buf_str(&b), &end, 10);
			if (*end == 'K')
				v <<= 10;
			else if (*end == 'M')
				v <<= 20;
			if (v > best)
				best = v;
		}
		ks_buf_release(&b);
	}
	return best ? best : (size_t)32 << 20;
}

void ks_eval_opts_init(struct ks_eval_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = "cpu";
	o->nseeds = 3;
	o->timeout_s = 60;
	o->memory_limit = (size_t)2 << 30;
	o->min_time_s = 0.2;
	o->min_reps = 10;
	o->max_reps = 2000;
	o->rep_ci_min_reps = 20;
	o->warmup = 2;
	o->blocks = 2;
	o->suspicious_factor = 1.5;
}

static void fill_defaults(struct ks_eval_opts *o)
{
	if (!o->backend)
		o->backend = "cpu";
	if (o->nseeds < 3)
		o->nseeds = 3;
	if (o->nseeds > KS_MAX_SEEDS)
		o->nseeds = KS_MAX_SEEDS;
	if (o->timeout_s <= 0)
		o->timeout_s = 60;
	if (!o->memory_limit)
		o->memory_limit = (size_t)2 << 30;
	if (o->min_reps < 1)
		o->min_reps = 1;
	if (o->max_reps < o->min_reps)
		o->max_reps = o->min_reps;
	if (o->max_reps > 20000)
		o->max_reps = 20000;
	if (o->rep_ci_min_reps < 6)
		o->rep_ci_min_reps = 20; /* below 6 the interval is the whole range */
	if (o->rep_ci_rel < 0)
		o->rep_ci_rel = 0;
	if (o->blocks < 1)
		o->blocks = 1;
	if (o->max_blocks < o->blocks)
		o->max_blocks = o->blocks;
	if (o->max_blocks > 50)
		o->max_blocks = 50 > o->blocks ? 50 : o->blocks;
	if (o->suspicious_factor < 1)
		o->suspicious_factor = 1.5;
	if (!o->rotate_bytes) {
		size_t two = 2 * llc_bytes(), cap = (size_t)512 << 20;
		o->rotate_bytes = two < cap ? two : cap;
	}
}

int ks_eval_workload_selected(const char *sel, int i)
{
	if (!sel || !sel[0] || !strcmp(sel, "all"))
		return 1;
	const char *p = sel;
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p)
			return 0;
		if (v == i)
			return 1;
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return 0;
	}
	return 0;
}

int ks_eval_validate_workloads(const char *sel, int n, struct ks_error *e)
{
	if (!sel || !strcmp(sel, "all"))
		return 0; /* NULL: not given */
	if (!sel[0]) /* given, but empty: a mistake, not "all" */
		return ks_error_set(e, KS_EINVAL,
				    "--workloads: empty list (give 'all' or indexes like 0,2)");
	const char *p = sel;
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || (*end && *end != ','))
			return ks_error_set(e, KS_EINVAL,
					    "--workloads expects 'all' or indexes like 0,2; got '%s'", sel);
		if (v < 0 || v >= n)
			return ks_error_set(e, KS_EINVAL,
					    "workload index %ld out of range (the task has %d for this backend: "
					    "0..%d, numbered by 'ksearch tasks show TASK --backend B')",
					    v, n, n - 1);
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int compile_file(const struct ks_backend_i *be, const struct ks_task *t,
			const char *file, const char *flags, const char *const *defines,
			struct ks_artifact *a, struct ks_error *e)
{
	char path[PATH_MAX];
	struct ks_buf src = KS_BUF_INIT;
	ks_path_join(path, sizeof(path), t->dir, file);
	int rc = ks_kernel_source_read(path, 4 << 20, &src, e);
	if (rc == 0) {
		struct ks_compile_req req = {.task = t, .source = ks_buf_str(&src),
					     .defines = defines, .flags = flags};
		rc = be->compile(&req, a, e);
		if (rc == 0 && !a->ok)
			rc = ks_error_set(e, KS_EINVAL, "'%s' does not compile:\n%.2000s", path,
					  ks_buf_str(&a->log));
	}
	ks_buf_release(&src);
	return rc;
}

/* ws's bytes: one set's, its outputs' (packed), and their layout in the runner's shared
 * output file */
static int wl_sizes(const struct ks_task *t, struct ks_wl_state *ws, struct ks_error *e)
{
	size_t bytes[KS_RUNNER_MAX_TENSORS];
	int outs[KS_RUNNER_MAX_TENSORS];
	if (t->ntensors > KS_RUNNER_MAX_TENSORS)
		return ks_error_set(e, KS_ELIMIT, "task '%s' has %d tensors, the runner takes %d",
				    t->name, t->ntensors, KS_RUNNER_MAX_TENSORS);
	for (int j = 0; j < t->ntensors; j++) {
		int64_t dims[KS_MAX_DIMS];
		int rc = ks_workload_shape(t, ws->wl, j, dims, &ws->numel[j], e);
		if (rc)
			return rc;
		bytes[j] = ws->numel[j] * ks_dtype_size(t->tensors[j].dtype);
		outs[j] = t->tensors[j].is_output;
		ws->set_bytes += bytes[j];
		if (outs[j])
			ws->out_bytes += bytes[j];
	}
	ws->out_stride = ks_runner_out_layout(bytes, outs, t->ntensors,
					      (size_t)sysconf(_SC_PAGESIZE), ws->out_off);
	return 0;
}

static int setup_workloads(struct ks_evaluator *ev, struct ks_error *e)
{
	const struct ks_task *t = ev->task;
	int ntimed = ks_task_timed_count(t, ev->o.backend);
	if (ntimed == 0)
		return ks_error_set(e, KS_EINVAL, "task '%s' has no workload for backend '%s'",
				    t->name, ev->o.backend);
	int rc = ks_eval_validate_workloads(ev->o.workloads, ntimed, e);
	if (rc)
		return rc;
	ev->wl = calloc((size_t)(t->nworkloads + t->nchecks), sizeof(*ev->wl));
	if (!ev->wl)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	for (int pass = 0; pass < 2; pass++) {
		int n = pass ? t->nchecks : t->nworkloads, k = 0;
		if (pass && ev->o.skip_checks)
			break;
		for (int i = 0; i < n; i++) {
			const struct ks_workload *w = pass ? &t->checks[i] : &t->workloads[i];
			if (!ks_workload_for_backend(w, ev->o.backend))
				continue;
			if (!pass && !ks_eval_workload_selected(ev->o.workloads, k++))
				continue;
			struct ks_wl_state *ws = &ev->wl[ev->nwl++];
			ws->wl = w;
			ws->index = i;
			ws->is_check = pass;
			if ((rc = wl_sizes(t, ws, e)))
				return rc;
			size_t sets = ws->set_bytes ? (ev->o.rotate_bytes + ws->set_bytes - 1) / ws->set_bytes : 1;
			ws->nsets = sets < 1 ? 1 : sets > KS_RUNNER_MAX_SETS ? KS_RUNNER_MAX_SETS : (int)sets;
			if (pass)
				ws->nsets = 1;
			ws->ntimed_seeds = ws->nsets < KS_TIMED_SEEDS ? ws->nsets : KS_TIMED_SEEDS;
			ws->flops = ws->bytes = 0;
			if (t->flops)
				ks_workload_expr(t, w, t->flops, &ws->flops, NULL);
			if (t->bytes)
				ks_workload_expr(t, w, t->bytes, &ws->bytes, NULL);
		}
	}
	return 0;
}

enum ks_ref_source ks_eval_ref_source(int have_device_ref, int is_check, double flops)
{
	return have_device_ref && !is_check && flops >= KS_REF_DEVICE_MIN_FLOPS ? KS_REF_DEVICE
										: KS_REF_HOST;
}

/* Picks the reference of every workload and compiles the task's device reference (the
 * backend's device_reference slot: reference.cu for cuda) when one of them needs it, the way
 * the baseline is compiled. */
static int setup_device_reference(struct ks_evaluator *ev, struct ks_error *e)
{
	const struct ks_task *t = ev->task;
	const char *file = ks_backend_device_reference(ev->be);
	char path[PATH_MAX];
	if (file)
		ks_path_join(path, sizeof(path), t->dir, file);
	int have = file && ks_path_exists(path), ndev = 0;
	struct ks_buf labels = KS_BUF_INIT;
	for (int i = 0; i < ev->nwl; i++) {
		struct ks_wl_state *ws = &ev->wl[i];
		ws->ref_source = ks_eval_ref_source(have, ws->is_check, ws->flops);
		if (ws->ref_source != KS_REF_DEVICE)
			continue;
		ks_buf_adds(&labels, ndev++ ? "; " : "");
		ks_workload_label(t, ws->wl, &labels);
	}
	int rc = 0;
	if (ndev) {
		ks_info("%s gives the expected outputs of %s (at least %.0e flops); reference.c "
			"those of the other workloads and every check",
			file, ks_buf_str(&labels), KS_REF_DEVICE_MIN_FLOPS);
		/* no user flags: nothing may change the trusted reference's values */
		if ((rc = compile_file(ev->be, t, file, NULL, NULL, &ev->ref_dev, e)))
			ks_error_wrap(e, "device reference of task '%s'", t->name);
	}
	ks_buf_release(&labels);
	return rc;
}

/* The runner's extra environment: OMP_NUM_THREADS for --threads, and the variables the
 * backend's runtime reads (ks_sandbox_needs.env) as ksearch has them; the scrub in
 * src/eval/sandbox.c drops everything else */
static void runner_env(struct ks_evaluator *ev)
{
	int n = 0;
	if (ev->o.threads > 0) {
		snprintf(ev->threads_env, sizeof(ev->threads_env), "OMP_NUM_THREADS=%d",
			 ev->o.threads);
		ev->env[n++] = ev->threads_env;
		/* a library's own thread pool (OpenBLAS) runs as many threads as the kernels */
		snprintf(ev->blas_threads_env, sizeof(ev->blas_threads_env),
			 "OPENBLAS_NUM_THREADS=%d", ev->o.threads);
		ev->env[n++] = ev->blas_threads_env;
	}
	const int max = (int)(sizeof(ev->env) / sizeof(ev->env[0])) - 1;
	size_t used = 0;
	for (const char *const *v = ks_backend_sandbox(ev->be)->env; v && *v && n < max; v++) {
		const char *val = getenv(*v);
		size_t len = val ? strlen(*v) + strlen(val) + 2 : 0;
		if (!val || used + len > sizeof(ev->passed_env))
			continue;
		char *kv = ev->passed_env + used;
		snprintf(kv, len, "%s=%s", *v, val);
		used += len;
		ev->env[n++] = kv;
	}
	ev->env[n] = NULL;
}

int ks_evaluator_new(const struct ks_task *t, const struct ks_eval_opts *o,
		     struct ks_evaluator **out, struct ks_error *e)
{
	struct ks_evaluator *ev = calloc(1, sizeof(*ev));
	if (!ev)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	int swept = ks_eval_sweep();
	if (swept)
		ks_debug("removed %d leftovers of killed evaluations from the cache", swept);
	ev->task = t;
	if (o)
		ev->o = *o;
	else
		ks_eval_opts_init(&ev->o);
	fill_defaults(&ev->o);
	ks_artifact_init(&ev->ref);
	for (int y = 0; y < KS_YARD_COUNT; y++)
		ks_artifact_init(&ev->yard[y].art);
	snprintf(ev->yard[KS_YARD_BASELINE].label, sizeof(ev->yard[0].label), "%s",
		 ks_backend_baseline_label(ks_backend_find(ev->o.backend)));
	ks_artifact_init(&ev->ref_dev);
	for (int i = 0; i < KS_SEED_SLOTS; i++)
		ev->seeds[i] = (ev->o.seed ? ev->o.seed : 1) * 1000003ull + (unsigned long long)i;
	int rc;
	/* before anything is compiled: a system that cannot confine candidates runs none
	 * unless the user vouches for them (--no-sandbox) */
	if ((rc = ks_sandbox_check(ev->o.no_sandbox, e)) ||
	    (rc = ks_backend_get(ev->o.backend, &ev->be, e)))
		goto fail;
	runner_env(ev);
	if (ks_eval_inputs_dir(ev->inputs_dir, sizeof(ev->inputs_dir)))
		ev->inputs_dir[0] = '\0';
	if ((rc = ks_runner_path(ev->be->runner, ev->runner, sizeof(ev->runner), e)) ||
	    (rc = ks_runner_path("ksearch-runner", ev->host_runner, sizeof(ev->host_runner), e)) ||
	    (rc = ks_task_hash(t, ev->task_hash, e)) || (rc = setup_workloads(ev, e)) ||
	    (rc = ks_eval_inputs_fit(ev, e)))
		goto fail;
	/* the reference is plain C on the host, compiled without value-changing flags, or
	 * reference.py, which runs as it is */
	ev->ref_py = ks_task_has_pyref(t);
	if (!ev->ref_py && (rc = compile_file(&ks_backend_cpu, t, "reference.c", "-O2 -fno-fast-math " KS_OS_CC_OPENMP,
			       NULL, &ev->ref, e))) {
		ks_error_wrap(e, "reference of task '%s'", t->name);
		goto fail;
	}
	if ((rc = setup_device_reference(ev, e)))
		goto fail;
	if (!ev->o.skip_baseline) {
		char file[64];
		snprintf(file, sizeof(file), "baseline.%s", ev->be->ext);
		char path[PATH_MAX];
		ks_path_join(path, sizeof(path), t->dir, file);
		struct ks_yardstick *y = &ev->yard[KS_YARD_BASELINE];
		if (!ks_path_exists(path)) {
			ks_warn("task '%s' has no %s: speedups are not measured", t->name, file);
			ev->o.skip_baseline = 1;
		} else if ((rc = compile_file(ev->be, t, file, ev->o.cflags, NULL, &y->art, e))) {
			ks_error_wrap(e, "baseline of task '%s'", t->name);
			goto fail;
		}
		y->on = y->art.ok;
	}
	if (!ev->o.skip_library && (rc = ks_eval_library_setup(ev, e)))
		goto fail;
	*out = ev;
	return 0;
fail:
	ks_evaluator_free(ev);
	return rc;
}

void ks_evaluator_free(struct ks_evaluator *ev)
{
	if (!ev)
		return;
	for (int i = 0; i < ev->nwl; i++) {
		for (int s = 0; s < KS_SEED_SLOTS; s++)
			free(ev->wl[i].ref[s]);
		for (int y = 0; y < KS_YARD_COUNT; y++)
			free(ev->wl[i].yard[y].samples);
	}
	free(ev->wl);
	ks_artifact_release(&ev->ref);
	for (int y = 0; y < KS_YARD_COUNT; y++)
		ks_artifact_release(&ev->yard[y].art);
	ks_artifact_release(&ev->ref_dev);
	free(ev);
}

/* RLIMIT_CPU of one runner: every core busy for as long as the evaluator's own deadlines
 * can keep the runner alive (each command's timeout: the seeds' fills and calls, the
 * input sets, the timing blocks, the checks after timing, the reference's ten-timeout
 * call).  It is a backstop for a runner nobody waits on any more, never the timeout
 * itself, so it is generous. */
static double cpu_budget(const struct ks_evaluator *ev, int nsets)
{
	const struct ks_eval_opts *o = &ev->o;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	double max_s = o->min_time_s * 10 > 2 ? o->min_time_s * 10 : 2;
	double wall = o->timeout_s * (3.0 * o->nseeds + 2.0 * nsets + 14) +
		      o->blocks * (o->timeout_s + max_s) + 120;
	return wall * (double)(cpus > 0 ? cpus : 1);
}

/* What one runner process is allowed: its shared output file, address space and CPU time. */
struct runner_size {
	size_t out_bytes, address_space;
	double cpu_s;
};

static void runner_size_of(const struct ks_evaluator *ev, const struct ks_wl_state *ws,
			   int nsets, int host, size_t mem_extra, struct runner_size *sz)
{
	sz->out_bytes = ws->out_stride * (size_t)nsets;
	sz->cpu_s = cpu_budget(ev, nsets);
	sz->address_space = 0;
	if (host || !ks_backend_sandbox(ev->be)->unlimited_address_space)
		sz->address_space = ws->set_bytes * (size_t)nsets + mem_extra + ((size_t)1 << 30);
}

/* A candidate's runner serves every check and workload in turn: the largest output file
 * and address space any of them needs, and the CPU time of all of them together. */
static void runner_size_candidate(const struct ks_evaluator *ev, struct runner_size *sz)
{
	memset(sz, 0, sizeof(*sz));
	for (int i = 0; i < ev->nwl; i++) {
		const struct ks_wl_state *ws = &ev->wl[i];
		struct runner_size one;
		runner_size_of(ev, ws, ws->is_check ? 1 : ws->nsets, 0, ev->o.memory_limit, &one);
		if (one.out_bytes > sz->out_bytes)
			sz->out_bytes = one.out_bytes;
		if (one.address_space > sz->address_space)
			sz->address_space = one.address_space;
		sz->cpu_s += one.cpu_s;
	}
}

/* a reply "ok N1 N2 ..." (ns) into parts[first ...] (seconds); nothing from a runner that
 * does not say */
static void start_parts(const char *reply, const char *fmt, double *parts, int first, int n)
{
	unsigned long long v[3] = {0, 0, 0};
	if (!parts || sscanf(reply, fmt, &v[0], &v[1], &v[2]) != n)
		return;
	for (int k = 0; k < n; k++)
		parts[first + k] += v[k] * 1e-9;
}

/* a runner's threads where a pids cgroup bounds them (src/eval/cgroup_linux.c): plenty for a
 * thread per core in the kernel, its library's pool and a driver's, far from the machine's
 * pid space */
static long runner_max_threads(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	return KS_RUNNER_THREADS_BASE + KS_RUNNER_THREADS_PER_CPU * (cpus > 0 ? cpus : 1);
}

static int runner_start_load(struct ks_evaluator *ev, const char *lib, int host,
			     const struct runner_size *sz, struct ks_runner **out,
			     double *parts, struct ks_error *e)
{
	struct ks_runner_spawn sp = {
		.runner_path = host ? ev->host_runner : ev->runner,
		.sandbox = !ev->o.no_sandbox,
		.limits = {.address_space = sz->address_space, .file_size = (size_t)64 << 20,
			   .isolate_network = 1, .parent = getpid(), .cpu_seconds = sz->cpu_s,
			   .scratch_bytes = ev->o.no_sandbox ? 0 : KS_SCRATCH_BYTES},
		.max_threads = ev->o.no_sandbox ? 0 : runner_max_threads(),
		.extra_env = ev->env,
		.out_bytes = sz->out_bytes,
		.inputs_dir = ev->inputs_dir[0] ? ev->inputs_dir : NULL,
	};
	const char *reply;
	*out = NULL;
	int rc = ks_runner_start(&sp, out, e);
	if (!rc && parts)
		parts[KS_PART_EXEC] += (*out)->exec_s;
	if (!rc && !(rc = ks_runner_cmd(*out, 30, &reply, e, "load %s", lib)))
		start_parts(reply, "ok %llu %llu %llu", parts, KS_PART_SANDBOX, 3);
	return rc;
}

/* alloc's reply "ok BYTES HOST_NS DEVICE_NS STRIDE DIRECT": the runner's times into parts,
 * whether its kernel writes the shared output file itself into r; a runner that lays the
 * file out differently from ws is refused */
static int alloc_reply(const char *reply, const struct ks_wl_state *ws, struct ks_runner *r,
		       double *parts, struct ks_error *e)
{
	unsigned long long host = 0, dev = 0, stride = 0;
	int direct = 0;
	if (sscanf(reply, "ok %*u %llu %llu %llu %d", &host, &dev, &stride, &direct) != 4 ||
	    stride != ws->out_stride)
		return ks_error_set(e, KS_EPROTO, "the runner lays out its outputs differently "
				    "(%s; expected a stride of %zu): rebuild ksearch", reply, ws->out_stride);
	if (parts) {
		parts[KS_PART_ALLOC_HOST] += host * 1e-9;
		parts[KS_PART_ALLOC_DEVICE] += dev * 1e-9;
	}
	r->direct = direct;
	return 0;
}

/* The workload's tensors, params and sets, sent in one batch (one round trip); the outputs
 * of the first nshared sets in the shared output file */
static int runner_setup_workload(struct ks_evaluator *ev, struct ks_wl_state *ws, int nsets,
				 int nshared, struct ks_runner *r, double *parts,
				 struct ks_error *e)
{
	const struct ks_task *t = ev->task;
	const char *reply;
	int rc = 0, sent = 0;
	for (int j = 0; j < t->ntensors && !rc; j++) {
		size_t numel;
		int64_t dims[KS_MAX_DIMS];
		struct ks_init init = {KS_INIT_CONST, 0, 0};
		if ((rc = ks_workload_shape(t, ws->wl, j, dims, &numel, e)))
			break;
		if (!t->tensors[j].is_output &&
		    (rc = ks_init_parse(ks_workload_init(t, ws->wl, j), &init, NULL, e)))
			break;
		rc = ks_runner_send(r, e, "tensor %d %s %zu %d %d %.17g %.17g %llu", j,
				    ks_dtype_name(t->tensors[j].dtype), numel,
				    t->tensors[j].is_output, (int)init.kind, init.a, init.b,
				    (unsigned long long)ks_tensor_key(t, ws->wl, j));
		sent += !rc;
	}
	char params[4096];
	int len = snprintf(params, sizeof(params), "%d", t->nparams);
	for (int i = 0; i < t->nparams && len < (int)sizeof(params) - 32; i++)
		len += snprintf(params + len, sizeof(params) - (size_t)len, " %.17g",
				ws->wl->values[i]);
	if (!rc && !(rc = ks_runner_send(r, e, "params %s", params)))
		sent++;
	if (!rc && !(rc = ks_runner_send(r, e, "alloc %d %d", nsets, nshared)))
		sent++;
	/* every reply, even after a failure to send: the runner's first error is the one */
	for (int k = 0; k < sent; k++) {
		int w = ks_runner_wait(r, k == sent - 1 ? 60 : 30, &reply, rc ? NULL : e);
		if (w && !rc)
			rc = w;
		if (w)
			break;
		if (k == sent - 1 && !rc) /* alloc's */
			rc = alloc_reply(reply, ws, r, parts, e);
	}
	return rc;
}

int ks_eval_open_runner(struct ks_evaluator *ev, struct ks_wl_state *ws, const char *lib,
			int nsets, int host, size_t mem_extra, struct ks_runner **out,
			struct ks_error *e)
{
	struct runner_size sz;
	runner_size_of(ev, ws, nsets, host, mem_extra, &sz);
	sz.out_bytes = ws->out_stride; /* set 0's outputs are read, alone */
	int rc = runner_start_load(ev, lib, host, &sz, out, NULL, e);
	if (!rc)
		rc = runner_setup_workload(ev, ws, nsets, 1, *out, NULL, e);
	return rc; /* *out set either way: the caller decides whether this is the kernel's fault */
}

int ks_eval_candidate_runner(struct ks_evaluator *ev, struct ks_wl_state *ws, const char *lib,
			     int nsets, struct ks_runner **cand, double part_s[KS_PART_COUNT],
			     struct ks_error *e)
{
	const char *reply;
	if (*cand && !(*cand)->reaped) {
		struct ks_error re = {0};
		if (ks_runner_cmd(*cand, 30, &reply, &re, "reset") == 0) {
			start_parts(reply, "ok %llu", part_s, KS_PART_RESET, 1);
			return runner_setup_workload(ev, ws, nsets, nsets, *cand, part_s, e);
		}
		/* a device without reset (or a runner that died between workloads, which the
		 * last workload's status would have caught): a fresh process */
		ks_debug("candidate runner not reused: %s", re.msg);
	}
	ks_runner_free(*cand);
	*cand = NULL;
	struct runner_size sz;
	runner_size_candidate(ev, &sz);
	int rc = runner_start_load(ev, lib, 0, &sz, cand, part_s, e);
	if (!rc)
		rc = runner_setup_workload(ev, ws, nsets, nsets, *cand, part_s, e);
	return rc;
}

void ks_eval_ref_cache_path(const char *task_hash, const char *label, unsigned long long seed,
			    const char *device_ext, char *out, size_t n)
{
	char h[65];
	ks_sha256_str_hex(label, h);
	snprintf(out, n, "%s/reference/v%d-%.16s/%.16s-%llu%s%s.bin", ks_cache_root(),
		 KS_INPUTS_VERSION, task_hash, h, seed, device_ext ? "-" : "",
		 device_ext ? device_ext : "");
}

/* the outputs of one set of the runner's shared file (ks_eval_set_outputs) packed, one
 * tensor after the other: the references' form */
static void outputs_pack(const struct ks_task *t, const struct ks_wl_state *ws,
			 const unsigned char *set, unsigned char *packed)
{
	size_t off = 0;
	for (int j = 0; j < t->ntensors; j++) {
		if (!t->tensors[j].is_output)
			continue;
		size_t b = ws->numel[j] * ks_dtype_size(t->tensors[j].dtype);
		memcpy(packed + off, set + ws->out_off[j], b);
		off += b;
	}
}

/* stores the expected outputs in ws and in the cache file cpath */
static void reference_keep(struct ks_wl_state *ws, int seed_idx, unsigned char *ref,
			   const char *cpath)
{
	ws->ref[seed_idx] = ref;
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", cpath);
	*strrchr(dir, '/') = '\0';
	if (ks_mkdir_p(dir, NULL) == 0)
		ks_file_write_atomic(cpath, ref, ws->out_bytes, NULL);
}

static int python_reference(struct ks_evaluator *ev, struct ks_wl_state *ws, int seed_idx,
			    const char *cpath, struct ks_buf *label, struct ks_error *e)
{
	unsigned char *ref = malloc(ws->out_bytes ? ws->out_bytes : 1);
	int rc = ref ? 0 : ks_error_set(e, KS_ENOMEM, "out of memory for reference outputs");
	/* the reference may be slow on big workloads: give it ten call timeouts; numpy
	 * temporaries (and torch's reservations) need room beyond the tensors */
	if (!rc && (rc = ks_pyref_run(ev->task, ws->wl, ev->seeds[seed_idx], ev->o.timeout_s * 10,
				       ws->set_bytes * 8 + ((size_t)16 << 30), ref, ws->out_bytes, e)))
		ks_error_wrap(e, "the reference (reference.py) failed on %s", ks_buf_str(label));
	if (rc)
		free(ref);
	else
		reference_keep(ws, seed_idx, ref, cpath);
	ks_buf_release(label);
	return rc;
}

int ks_eval_reference(struct ks_evaluator *ev, struct ks_wl_state *ws, int seed_idx,
		      struct ks_error *e)
{
	if (ws->ref[seed_idx])
		return 0;
	int dev = ws->ref_source == KS_REF_DEVICE;
	char cpath[PATH_MAX];
	struct ks_buf label = KS_BUF_INIT;
	ks_workload_label(ev->task, ws->wl, &label);
	ks_eval_ref_cache_path(ev->task_hash, ks_buf_str(&label), ev->seeds[seed_idx],
			       dev ? ev->be->ext : NULL, cpath, sizeof(cpath));
	struct ks_buf cached = KS_BUF_INIT;
	if (ks_file_read(cpath, ws->out_bytes + 1, &cached, NULL) == 0 &&
	    cached.len == ws->out_bytes) {
		ws->ref[seed_idx] = (unsigned char *)ks_buf_detach(&cached, NULL);
		ks_buf_release(&label);
		return 0;
	}
	ks_buf_release(&cached);
	if (ev->ref_py && !dev)
		return python_reference(ev, ws, seed_idx, cpath, &label, e);
	struct ks_runner *r = NULL;
	const char *reply;
	/* either way in a process of its own, never in the candidate's: reference.c in the
	 * host runner, the device reference in the backend's runner like any kernel */
	int rc = dev ? ks_eval_open_runner(ev, ws, ev->ref_dev.path, 1, 0, ev->o.memory_limit, &r, e)
		     : ks_eval_open_runner(ev, ws, ev->ref.path, 1, 1, (size_t)4 << 30, &r, e);
	if (!rc)
		rc = ks_runner_cmd(r, 30, &reply, e, "fill 0 %llu", ev->seeds[seed_idx]);
	/* the reference may be slow on big workloads: give it ten call timeouts */
	if (!rc)
		rc = ks_runner_cmd(r, ev->o.timeout_s * 10, &reply, e, "call 0");
	if (rc) {
		/* the runner's own answer ("cannot map N bytes ...") first, then its fate */
		struct ks_buf why = KS_BUF_INIT;
		ks_buf_adds(&why, e && e->msg[0] ? e->msg : "");
		if (r) {
			struct ks_buf fate = KS_BUF_INIT;
			ks_runner_fate(r, &fate);
			if (fate.len)
				ks_buf_addf(&why, "%s%s", why.len ? "; " : "", ks_buf_str(&fate));
			ks_buf_release(&fate);
		}
		rc = ks_error_set(e, KS_EIO, "the reference (%s) failed on %s: %s",
				  dev ? ks_backend_device_reference(ev->be) : "reference.c", ks_buf_str(&label), ks_buf_str(&why));
		ks_buf_release(&why);
		ks_buf_release(&label);
		ks_runner_free(r);
		return rc;
	}
	ks_buf_release(&label);
	ws->ref[seed_idx] = malloc(ws->out_bytes ? ws->out_bytes : 1);
	if (!ws->ref[seed_idx]) {
		ks_runner_free(r);
		return ks_error_set(e, KS_ENOMEM, "out of memory for reference outputs");
	}
	outputs_pack(ev->task, ws, ks_eval_set_outputs(r, ws, 0), ws->ref[seed_idx]);
	ks_runner_free(r);
	reference_keep(ws, seed_idx, ws->ref[seed_idx], cpath);
	return 0;
}

const unsigned char *ks_eval_set_outputs(const struct ks_runner *r, const struct ks_wl_state *ws,
					 int s)
{
	return r->out + ws->out_stride * (size_t)s;
}

int ks_eval_seed_slots(const struct ks_evaluator *ev, const struct ks_wl_state *ws,
		       int with_probes, int *slots)
{
	int n = 0;
	for (int s = 0; s < ev->o.nseeds; s++)
		slots[n++] = s;
	if (ws->is_check)
		return n;
	for (int s = 0; s < ws->ntimed_seeds; s++)
		slots[n++] = KS_SEED_TIMED + s;
	slots[n++] = KS_SEED_FRESH;
	for (int s = 0; with_probes && s < KS_PROBE_SEEDS; s++)
		slots[n++] = KS_SEED_PROBE + s;
	return n;
}

static void wl_result_init(struct ks_evaluator *ev, struct ks_wl_state *ws, struct ks_wl_result *res)
{
	memset(res, 0, sizeof(*res));
	const struct ks_task *t = ev->task;
	res->index = ws->index;
	res->is_check = ws->is_check;
	struct ks_buf b = KS_BUF_INIT;
	if (ws->is_check && ws->wl->name)
		ks_buf_adds(&b, ws->wl->name);
	else
		ks_workload_label(t, ws->wl, &b);
	res->label = ks_buf_detach(&b, NULL);
	ks_buf_adds(&b, "{");
	for (int i = 0; i < t->nparams; i++)
		ks_buf_addf(&b, "%s\"%s\": %.17g", i ? ", " : "", t->params[i].name,
			    ws->wl->values[i]);
	ks_buf_adds(&b, "}");
	res->params_json = ks_buf_detach(&b, NULL);
	res->status = KS_STATUS_PASSED;
}

int ks_evaluator_run(struct ks_evaluator *ev, const char *source, const char *path,
		     const char *const *defines, struct ks_eval_result *r, struct ks_error *e)
{
	(void)path;
	memset(r, 0, sizeof(*r));
	struct ks_artifact a;
	ks_artifact_init(&a);
	struct ks_compile_req req = {.task = ev->task, .source = source,
				     .defines = defines ? defines : ev->o.defines,
				     .flags = ev->o.cflags};
	int rc = ev->be->compile(&req, &a, e);
	if (!rc)
		rc = ks_evaluator_run_artifact(ev, &a, r, e);
	ks_artifact_release(&a);
	return rc;
}

/* what isolates the kernels, for the record: "seccomp + landlock abi 7 + threads bounded" */
static char *sandbox_describe(const struct ks_evaluator *ev)
{
	char text[160];
	if (ev->o.no_sandbox)
		return strdup("none (--no-sandbox)");
	snprintf(text, sizeof(text), "%s%s", ks_sandbox_describe(),
		 ks_cgroup_available() ? " + pids cgroup" : "");
	return strdup(text);
}

int ks_evaluator_run_artifact(struct ks_evaluator *ev, const struct ks_artifact *ap,
			      struct ks_eval_result *r, struct ks_error *e)
{
	const struct ks_artifact a = *ap;
	int rc = 0;
	memset(r, 0, sizeof(*r));
	r->sandbox = sandbox_describe(ev);
	r->kernel_hash = strdup(a.hash);
	r->compile_log = strdup(ks_buf_str(&a.log));
	int nchecks = 0, ntimed = 0;
	for (int i = 0; i < ev->nwl; i++)
		ev->wl[i].is_check ? nchecks++ : ntimed++;
	r->workloads = calloc((size_t)ntimed + 1, sizeof(*r->workloads));
	r->checks = calloc((size_t)nchecks + 1, sizeof(*r->checks));
	if (!r->workloads || !r->checks)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	r->status = a.ok ? KS_STATUS_PASSED : KS_STATUS_COMPILE_ERROR;
	double speedups[256], lib_speedups[256];
	int nsp = 0, nlsp = 0;
	struct ks_runner *cand = NULL; /* one runner for every check and workload */
	/* checks first: cheap, and a kernel that fails them is not worth timing */
	for (int pass = 1; pass >= 0; pass--) {
		for (int i = 0; i < ev->nwl; i++) {
			struct ks_wl_state *ws = &ev->wl[i];
			if (ws->is_check != pass)
				continue;
			struct ks_wl_result *res = pass ? &r->checks[r->nchecks++]
							: &r->workloads[r->nworkloads++];
			wl_result_init(ev, ws, res);
			if (!a.ok) {
				res->status = KS_STATUS_COMPILE_ERROR;
				res->log = strdup("");
				continue;
			}
			if (r->status != KS_STATUS_PASSED) {
				/* an earlier failure decided the status: do not spend time */
				res->log = strdup(KS_STORE_NOT_RUN_LOG);
				res->status = r->status;
				res->not_run = 1;
				continue;
			}
			rc = ks_eval_workload(ev, ws, a.path, &cand, res, e);
			for (int k = 0; k < KS_PHASE_COUNT; k++)
				r->phase_s[k] += res->phase_s[k];
			for (int k = 0; k < KS_PART_COUNT; k++)
				r->part_s[k] += res->part_s[k];
			r->inputs_cached_bytes += res->inputs_cached_bytes;
			if (rc) {
				ks_runner_free(cand);
				return rc;
			}
			if (res->status != KS_STATUS_PASSED)
				r->status = res->status;
			else if (!pass && res->speedup > 0 && nsp < 256)
				speedups[nsp++] = res->speedup;
			if (!pass && res->status == KS_STATUS_PASSED && res->library_speedup > 0 &&
			    nlsp < 256)
				lib_speedups[nlsp++] = res->library_speedup;
		}
	}
	double t0 = ks_clock_s();
	ks_runner_free(cand);
	r->phase_s[KS_PHASE_CHECK] += ks_clock_s() - t0; /* teardown, as for each workload before */
	r->speedup = r->status == KS_STATUS_PASSED ? ks_geomean(speedups, (size_t)nsp) : 0;
	/* over the workloads the library was timed on (it may be wrong on some) */
	r->library_speedup = r->status == KS_STATUS_PASSED ? ks_geomean(lib_speedups, (size_t)nlsp) : 0;
	if (ev->yard[KS_YARD_LIBRARY].on)
		r->library = strdup(ev->yard[KS_YARD_LIBRARY].label);
	return 0;
}

int ks_eval_kernel(const struct ks_task *t, const char *source, const char *path,
		   const struct ks_eval_opts *o, struct ks_eval_result *r, struct ks_error *e)
{
	struct ks_evaluator *ev;
	int rc = ks_evaluator_new(t, o, &ev, e);
	if (rc)
		return rc;
	rc = ks_evaluator_run(ev, source, path, NULL, r, e);
	ks_evaluator_free(ev);
	return rc;
}

void ks_eval_result_release(struct ks_eval_result *r)
{
	struct ks_wl_result *lists[2] = {r->workloads, r->checks};
	int counts[2] = {r->nworkloads, r->nchecks};
	for (int l = 0; l < 2; l++) {
		for (int i = 0; i < counts[l]; i++) {
			free(lists[l][i].label);
			free(lists[l][i].params_json);
			free(lists[l][i].samples_us);
			free(lists[l][i].baseline_samples_us);
			free(lists[l][i].library_samples_us);
			free(lists[l][i].log);
		}
		free(lists[l]);
	}
	free(r->kernel_hash);
	free(r->compile_log);
	free(r->sandbox);
	free(r->library);
	memset(r, 0, sizeof(*r));
}
