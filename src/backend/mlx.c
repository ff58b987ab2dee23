/* The mlx backend: candidates are MLX custom-kernel bodies with a launch block (Metal on
 * Apple silicon, CUDA on NVIDIA GPUs) or MLX native ops (each task's baseline.mlx), run by
 * ksearch-runner-mlx through MLX's C++ API (docs/mlx.md).
 *
 * Nothing here links MLX: ksearch stays C.  The runner is built only where CMake finds MLX,
 * and what the installed MLX can do is asked of the runner (`ksearch-runner-mlx --probe`),
 * once per process.  "Compiling" writes the artifact the runner loads (mlx_kernel.h): the
 * task's tensors and params, the knob values and the kernel file; the real compile (NVRTC
 * or Metal) happens in the runner at the first eval, whose failure the runner reports as a
 * compile error. */
#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backends.h"
#include "backend/cuda.h"
#include "backend/mlx_kernel.h"
#include "ksearch/task.h"
#include "util/exe_path.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/proc.h"

#define MLX_DEFAULT_CHAIN 8

static struct {
	int probed, rc, metal, cuda;
	char version[32], device[160], why[512];
} probe_state;

/* what to install, for the machine we are on */
static const char *install_hint(void)
{
#ifdef __APPLE__
	return "pip install mlx";
#else
	if (ks_path_exists("/proc/driver/nvidia") || ks_path_exists("/dev/nvidia0"))
		return "pip install \"mlx[cuda13]\" (this machine has an NVIDIA GPU; \"mlx[cpu]\" "
		       "runs the native baselines only)";
	return "pip install \"mlx[cpu]\" (native baselines only; \"mlx[cuda13]\" on Linux with "
	       "an NVIDIA GPU, mlx on macOS)";
#endif
}

/* what to install for custom kernels */
static const char *gpu_hint(void)
{
	return "pip install mlx (macOS, Metal) or pip install \"mlx[cuda13]\" (Linux with an "
	       "NVIDIA GPU)";
}

static int mlx_probe_once(void)
{
	if (probe_state.probed)
		return probe_state.rc;
	probe_state.probed = 1;
	char runner[PATH_MAX];
	struct ks_error e = {0};
	if (ks_runner_path("ksearch-runner-mlx", runner, sizeof(runner), &e)) {
		snprintf(probe_state.why, sizeof(probe_state.why),
			 "ksearch was built without MLX (no ksearch-runner-mlx beside it): %s, then "
			 "rebuild (CMake finds MLX through python3, or -DMLX_DIR=)",
			 install_hint());
		return probe_state.rc = KS_EUNAVAILABLE;
	}
	char *argv[] = {runner, (char *)"--probe", NULL};
	struct ks_buf out = KS_BUF_INIT;
	struct ks_proc_result pr;
	ks_buf_init(&out, 16 << 10);
	int rc = ks_proc_run(argv, NULL, 60, &out, &pr, &e);
	const char *o = ks_buf_str(&out);
	if (rc || !pr.exited || pr.code != 0 ||
	    sscanf(o, "mlx %31s metal=%d cuda=%d device=%159[^\n]", probe_state.version,
		   &probe_state.metal, &probe_state.cuda, probe_state.device) != 4) {
		snprintf(probe_state.why, sizeof(probe_state.why),
			 "ksearch-runner-mlx --probe failed (%s): %.300s; reinstall MLX (%s) and rebuild",
			 rc ? e.msg : pr.timed_out ? "timed out" : "bad answer", o, install_hint());
		probe_state.rc = KS_EUNAVAILABLE;
	}
	ks_buf_release(&out);
	return probe_state.rc;
}

/* Usable when MLX is: its native ops run on every build.  Whether custom kernels can run
 * (a GPU backend) is checked when one is compiled. */
static int mlx_probe(char *why, size_t n)
{
	int rc = mlx_probe_once();
	if (rc)
		snprintf(why, n, "%s", probe_state.why);
	return rc;
}

/* Custom kernels need a GPU backend of MLX; the CPU build runs the native ops only. */
static int mlx_probe_kernels(char *why, size_t n)
{
	int rc = mlx_probe(why, n);
	if (rc || probe_state.metal || probe_state.cuda)
		return rc;
	snprintf(why, n,
		 "custom kernels need MLX's Metal or CUDA backend (this MLX %s is the CPU build; it "
		 "runs the native baselines only, the tasks' baseline.mlx): on a GPU machine %s",
		 probe_state.version, gpu_hint());
	return KS_EUNAVAILABLE;
}

int ks_mlx_artifact_write(const struct ks_task *t, const char *source,
			  const char *const *defines, int chain, enum ks_mlx_timer timer,
			  int header_file, struct ks_buf *out, struct ks_error *e)
{
	ks_buf_addf(out, "%s\ntask %s\nchain %d\ntimer %s\n", KS_MLX_ARTIFACT_MAGIC, t->name,
		    chain, timer == KS_MLX_TIMER_EVENTS ? "events" : "wall");
	/* only when asked: an inline artifact's text, and so its hash, stays what it was */
	if (header_file)
		ks_buf_adds(out, "header file\n");
	for (int i = 0; i < t->nparams; i++)
		ks_buf_addf(out, "param %s\n", t->params[i].name);
	for (int i = 0; i < t->ntensors; i++) {
		const struct ks_tensor_decl *d = &t->tensors[i];
		ks_buf_addf(out, "tensor %s %s %s ", d->is_output ? "out" : "in", d->name,
			    ks_dtype_name(d->dtype));
		for (int j = 0; j < d->ndim; j++)
			ks_buf_addf(out, "%s%s", j ? ";" : "", d->shape[j]);
		ks_buf_adds(out, d->ndim ? "\n" : "-\n");
	}
	for (const char *const *d = defines; d && *d; d++) {
		const char *eq = strchr(*d, '=');
		if (eq)
			ks_buf_addf(out, "define %.*s %s\n", (int)(eq - *d), *d, eq + 1);
		else
			ks_buf_addf(out, "define %s 1\n", *d);
	}
	ks_buf_adds(out, "kernel\n");
	int rc = ks_mlx_resolve_includes(t->dir, source, defines, out, e);
	if (!rc && ks_buf_failed(out))
		rc = ks_error_set(e, KS_ENOMEM, "kernel source too large");
	return rc;
}

/* KSEARCH_MLX_TIMER=events: time with CUDA events on MLX's stream (docs/mlx.md) */
static enum ks_mlx_timer timer_kind(void)
{
	const char *t = getenv("KSEARCH_MLX_TIMER");
	return t && !strcmp(t, "events") ? KS_MLX_TIMER_EVENTS : KS_MLX_TIMER_WALL;
}

/* KSEARCH_MLX_HEADER=file: hand MLX the header as an #include of a file (docs/mlx.md) */
static int header_file_mode(void)
{
	const char *h = getenv("KSEARCH_MLX_HEADER");
	return h && !strcmp(h, "file");
}

static int chain_count(void)
{
	const char *c = getenv("KSEARCH_MLX_CHAIN");
	int v = c && c[0] ? atoi(c) : MLX_DEFAULT_CHAIN;
	return v < 1 ? 1 : v > KS_MLX_MAX_CHAIN ? KS_MLX_MAX_CHAIN : v;
}

/* every workload and check of the task on this backend must give a launch */
static int check_launches(const struct ks_task *t, const struct ks_mlx_artifact *art,
			  struct ks_buf *log)
{
	struct ks_mlx_launch *l = malloc(sizeof(*l));
	if (!l)
		return KS_ENOMEM;
	int bad = 0;
	for (int pass = 0; pass < 2 && !bad; pass++) {
		int n = pass ? t->nchecks : t->nworkloads;
		for (int i = 0; i < n && !bad; i++) {
			const struct ks_workload *w = pass ? &t->checks[i] : &t->workloads[i];
			if (!ks_workload_for_backend(w, "mlx"))
				continue;
			struct ks_error e = {0};
			if (ks_mlx_launch_resolve(art, w->values, l, &e)) {
				ks_buf_adds(log, "launch block: ");
				ks_workload_label(t, w, log);
				ks_buf_addf(log, ": %s\n", e.msg);
				bad = 1;
			}
		}
	}
	free(l);
	return bad;
}

static int mlx_compile(const struct ks_compile_req *req, struct ks_artifact *a,
		       struct ks_error *e)
{
	int rc = mlx_probe_once();
	if (rc)
		return ks_error_set(e, rc, "%s", probe_state.why);
	struct ks_buf text = KS_BUF_INIT;
	struct ks_mlx_artifact *art = calloc(1, sizeof(*art));
	if (!art)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	ks_buf_reset(&a->log);
	struct ks_error pe = {0};
	if ((rc = ks_mlx_artifact_write(req->task, req->source, req->defines, chain_count(),
					timer_kind(), header_file_mode(), &text, &pe))) {
		if (rc != KS_EPARSE) {
			rc = ks_error_set(e, rc, "%s", pe.msg);
			goto out;
		}
		/* an include that does not resolve: the candidate's fault */
		ks_buf_addf(&a->log, "kernel: %s\n", pe.msg);
		a->ok = 0;
		rc = 0;
		goto out;
	}
	if (ks_mlx_artifact_parse(ks_buf_str(&text), art, &pe)) {
		/* "kernel: LINE:COL: ...": the candidate's fault, a compile error */
		ks_buf_addf(&a->log, "%s\n", pe.msg);
		a->ok = 0;
		goto out;
	}
	enum ks_mlx_flavour f = art->kernel.flavour;
	char why[1024];
	if (f != KS_MLX_NATIVE && (rc = mlx_probe_kernels(why, sizeof(why)))) {
		rc = ks_error_set(e, rc, "%s", why);
		goto out;
	}
	if ((f == KS_MLX_METAL && !probe_state.metal) || (f == KS_MLX_CUDA && !probe_state.cuda)) {
		ks_buf_addf(&a->log, "a %s kernel needs MLX's %s backend; this MLX has %s\n",
			    ks_mlx_flavour_name(f), f == KS_MLX_METAL ? "Metal" : "CUDA",
			    probe_state.metal ? "Metal" : "CUDA");
		a->ok = 0;
		goto out;
	}
	if (check_launches(req->task, art, &a->log)) {
		a->ok = 0;
		goto out;
	}
	struct ks_sha256 h;
	ks_sha256_init(&h);
	ks_sha256_update_str(&h, "mlx");
	ks_sha256_update_str(&h, probe_state.version);
	ks_sha256_update_str(&h, ks_buf_str(&text));
	ks_sha256_hex(&h, a->hash);
	char dir[PATH_MAX], ok[PATH_MAX + 8], hdr[PATH_MAX + 16];
	if ((rc = ks_compile_cache_dir(a->hash, dir, sizeof(dir), e)))
		goto out;
	snprintf(a->path, sizeof(a->path), "%s/kernel.mlxk", dir);
	snprintf(ok, sizeof(ok), "%s/ok", dir);
	/* the folder is named by the hash of the whole text: header.cuh's path changes with its
	 * content, and so do MLX's module and PTX-cache keys */
	snprintf(hdr, sizeof(hdr), "%s/" KS_MLX_HEADER_FILE, dir);
	const char *header = art->kernel.header;
	int hfile = ks_mlx_header_in_file(art);
	if (ks_path_exists(ok) && ks_path_exists(a->path) && (!hfile || ks_path_exists(hdr))) {
		a->cached = 1;
	} else if ((rc = ks_mkdir_p(dir, e)) ||
		   (rc = ks_file_write_atomic(a->path, text.data, text.len, e)) ||
		   (hfile && (rc = ks_file_write_atomic(hdr, header, strlen(header), e))) ||
		   (rc = ks_file_write_atomic(ok, "", 0, e))) {
		goto out;
	}
	/* the runner works in its scratch directory: a relative cache path must not reach it */
	char abs[PATH_MAX];
	if (realpath(a->path, abs))
		snprintf(a->path, sizeof(a->path), "%s", abs);
	a->ok = 1;
	snprintf(a->resources, sizeof(a->resources), "mlx %s %s%s%s", probe_state.version,
		 ks_mlx_flavour_name(f), f == KS_MLX_NATIVE ? " " : "",
		 f == KS_MLX_NATIVE ? art->kernel.native : "");
out:
	ks_mlx_artifact_release(art);
	free(art);
	ks_buf_release(&text);
	return rc;
}

/* A template of the flavour this MLX cannot run is left out of the search (a Metal template
 * on MLX's CUDA build, a CUDA one on Apple silicon): every candidate of it would be a
 * COMPILE_ERROR.  On the CPU build no custom kernel runs, and compiling one says why. */
static int mlx_template_runs(const char *source, char *why, size_t n)
{
	if (mlx_probe_once() || (!probe_state.metal && !probe_state.cuda))
		return 1;
	const char *p = strstr(source, "@mlx flavour:");
	if (!p)
		p = strstr(source, "@mlx flavor:");
	if (!p)
		return 1; /* no flavour line: compiling it says what is missing */
	p = strchr(p, ':') + 1;
	p += strspn(p, " \t");
	int metal = !strncmp(p, "metal", 5), cuda = !strncmp(p, "cuda", 4);
	if ((metal && !probe_state.metal) || (cuda && !probe_state.cuda)) {
		snprintf(why, n, "a %s template; this MLX (%s) runs %s kernels", metal ? "Metal" : "CUDA",
			 probe_state.device, probe_state.metal ? "Metal" : "CUDA");
		return 0;
	}
	/* MLX's CUDA build compiles for this GPU's arch-specific target as nvcc does (sm_90a on
	 * Hopper), so a CUDA template's "@cuda arch:" line means what it means on cuda */
	return cuda ? ks_cuda_arch_line_runs(source, why, n) : 1;
}

static int mlx_describe(struct ks_buf *out)
{
	if (mlx_probe_once())
		return ks_buf_adds(out, "MLX (not available)");
	return ks_buf_addf(out, "MLX %s on %s (%s)", probe_state.version, probe_state.device,
			   probe_state.metal ? "Metal" : probe_state.cuda ? "CUDA" : "CPU build: native ops only");
}

/* MLX's spelling of a task dtype in each flavour (the signature MLX writes) */
static const char *mlx_ctype(enum ks_dtype t, int metal)
{
	static const char *const cuda[] = {"float", "double", "__half", "__nv_bfloat16", "int32_t",
					   "int64_t"};
	static const char *const mtl[] = {"float", "double", "float16_t", "bfloat16_t", "int32_t",
					  "int64_t"};
	return (unsigned)t < 6 ? (metal ? mtl : cuda)[t] : "?";
}

/* the flavour this MLX compiles: "metal" on Apple silicon, "cuda" on the CUDA build, NULL
 * on the CPU build (native ops only) or without MLX */
static const char *mlx_flavour(void)
{
	if (mlx_probe_once())
		return NULL;
	return probe_state.metal ? "metal" : probe_state.cuda ? "cuda" : NULL;
}

/* The smallest of the task's templates of flavour (templates/mlx/NAME.FLAVOUR.mlx) as a
 * worked example: the task's own code, known to pass, and the shortest to read.  path gets
 * its file; "" when the task has none. */
static void example_path(const struct ks_task *t, const char *flavour, char *path, size_t n)
{
	char dir[PATH_MAX], suffix[32];
	snprintf(dir, sizeof(dir), "%s/templates/mlx", t->dir);
	snprintf(suffix, sizeof(suffix), ".%s.mlx", flavour);
	path[0] = '\0';
	DIR *d = opendir(dir);
	if (!d)
		return;
	off_t best = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name), sl = strlen(suffix);
		char p[PATH_MAX];
		struct stat st;
		if (len <= sl || strcmp(de->d_name + len - sl, suffix))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		/* the smallest, the first name on ties: the same example on every machine */
		if (stat(p, &st) || (path[0] && (st.st_size > best ||
						 (st.st_size == best && strcmp(p, path) > 0))))
			continue;
		best = st.st_size;
		snprintf(path, n, "%s", p);
	}
	closedir(d);
}

/* a worked example of flavour from the task's own templates (its @ksearch block left out),
 * or a skeleton when the task has none */
static int add_example(const struct ks_task *t, const char *flavour, struct ks_buf *out)
{
	char path[PATH_MAX];
	example_path(t, flavour, path, sizeof(path));
	struct ks_buf src = KS_BUF_INIT;
	if (path[0] && ks_kernel_source_read(path, 1 << 20, &src, NULL) == 0) {
		const char *p = ks_buf_str(&src), *end = strstr(p, "@end */");
		p = end ? end + 8 : p;
		ks_buf_addf(out, "\nExample (flavour %s, %s: one of this task's templates, a worked "
				 "kernel; its knob values arrive as template args, --define NAME=V "
				 "sets them for ksearch eval):\n",
			    flavour, path + strlen(t->dir) + 1);
		for (const char *l = p; *l;) {
			size_t n = strcspn(l, "\n");
			ks_buf_addf(out, "  %.*s\n", (int)n, l);
			l += n + (l[n] == '\n');
		}
		ks_buf_release(&src);
		return ks_buf_failed(out);
	}
	ks_buf_release(&src);
	int metal = !strcmp(flavour, "metal");
	ks_buf_addf(out, "\nExample (flavour %s, one thread per element of the first output; a "
			 "skeleton, not this task's math):\n"
			 "  // @mlx flavour: %s\n  // @mlx grid: <number of elements>, 1, 1\n"
			 "  // @mlx threadgroup: 256, 1, 1\n  // @mlx body\n%s"
			 "  ...\n",
		    flavour, flavour,
		    metal ? "  uint i = thread_position_in_grid.x;\n"
			  : "  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;\n");
	return ks_buf_failed(out);
}

/* the signature MLX generates around the body in one flavour */
static void add_signature(const struct ks_task *t, int metal, struct ks_buf *out)
{
	ks_buf_addf(out, "  Signature MLX generates, flavour %s (%s):\n", metal ? "metal" : "cuda",
		    metal ? "mx.fast.metal_kernel" : "mx.fast.cuda_kernel, compiled by NVRTC");
	if (metal) {
		ks_buf_adds(out, "    template <");
		for (int i = 0; i < t->nparams; i++)
			ks_buf_addf(out, "%sint %s", i ? ", " : "", t->params[i].name);
		ks_buf_addf(out, "%s...>\n    [[kernel]] void custom_kernel_%s(\n",
			    t->nparams ? ", " : "", t->name);
	} else {
		ks_buf_addf(out, "    __global__ void custom_kernel_%s(\n", t->name);
	}
	for (int i = 0; i < t->ntensors; i++) {
		const struct ks_tensor_decl *d = &t->tensors[i];
		if (metal)
			ks_buf_addf(out, "        %sdevice %s* %s [[buffer(%d)]],\n",
				    d->is_output ? "" : "const ", mlx_ctype(d->dtype, 1), d->name, i);
		else
			ks_buf_addf(out, "        %s%s* %s%s\n", d->is_output ? "" : "const ",
				    mlx_ctype(d->dtype, 0), d->name, i + 1 < t->ntensors ? "," : ") {");
	}
	if (metal) {
		ks_buf_adds(out, "        uint3 thread_position_in_grid [[thread_position_in_grid]], "
				 "... (each attribute the body names)) {\n"
				 "      (an input of fewer than 8 elements comes as `const constant T*`, "
				 "not device: take input pointers with `auto`)\n");
	} else {
		for (int i = 0; i < t->nparams; i++)
			ks_buf_addf(out, "      constexpr int %s = ...;\n", t->params[i].name);
	}
	ks_buf_adds(out, "      <body>\n    }\n");
}

static const char mlx_directives[] =
	"  A kernel file (.mlx, docs/mlx.md) holds the body of an MLX custom kernel and\n"
	"  '// @mlx' lines saying how to launch it; MLX writes the signature.  Values are\n"
	"  expressions over the params.\n\n"
	"  // @mlx flavour: cuda | metal | native\n"
	"  // @mlx grid: X, Y, Z            threads (not blocks) per axis\n"
	"  // @mlx threadgroup: X, Y, Z\n"
	"  // @mlx template: NAME = EXPR     extra template args (repeatable)\n"
	"  // @mlx init: nan | none | EXPR   outputs' init_value for timed calls "
	"(correctness calls always poison with NaN)\n"
	"  // @mlx shared_memory: EXPR       dynamic shared memory bytes (cuda)\n"
	"  // @mlx header                    the lines up to '@mlx body' are the header\n"
	"  // @mlx include: PATH             (in the header) a file of the task's folder, "
	"knob values as macros around it\n"
	"  // @mlx body                      the rest of the file is the body\n\n";

/* The format of an MLX kernel file for task t: the directives, the template args, the
 * signature MLX generates and a worked example, for one flavour or (NULL) both, the
 * example then in the flavour this MLX runs (cuda where it runs none). */
static int mlx_describe_abi(const struct ks_task *t, const char *flavour, struct ks_buf *out)
{
	ks_buf_adds(out, mlx_directives);
	ks_buf_adds(out, "  Template args, in order: the params");
	for (int i = 0; i < t->nparams; i++)
		ks_buf_addf(out, "%s%s", i ? ", " : " (", t->params[i].name);
	ks_buf_adds(out, t->nparams ? ") as ints" : "");
	ks_buf_adds(out, ", a template's knobs, then the 'template:' lines.\n\n");
	for (int metal = 0; metal < 2; metal++)
		if (!flavour || !strcmp(flavour, metal ? "metal" : "cuda"))
			add_signature(t, metal, out);
	ks_buf_adds(out, "  An input NAME also gets NAME_shape, NAME_strides, NAME_ndim when the body "
			 "uses them.\n  Metal spellings (uint, device, threadgroup) do not compile "
			 "under NVRTC, nor CUDA's under Metal.\n");
	for (int i = 0; i < t->ntensors; i++) {
		const struct ks_tensor_decl *d = &t->tensors[i];
		ks_buf_addf(out, "%s%s %s [", i ? "; " : "  Shapes: ", d->name, ks_dtype_name(d->dtype));
		for (int j = 0; j < d->ndim; j++)
			ks_buf_addf(out, "%s%s", j ? ", " : "", d->shape[j]);
		ks_buf_adds(out, "]");
	}
	ks_buf_adds(out, " (row-major).\n");
	const char *here = mlx_flavour();
	return add_example(t, flavour ? flavour : here ? here : "cuda", out);
}

int ks_mlx_spec_name(const char *device, char *out, size_t n)
{
	const char *p = device ? strstr(device, "Apple M") : NULL;
	if (!p || n < 16)
		return KS_ENOTFOUND;
	p += 7;
	int gen = 0, len = 0;
	while (*p >= '0' && *p <= '9' && len < 2)
		gen = gen * 10 + (*p++ - '0'), len++;
	if (!len || (*p && *p != ' '))
		return KS_ENOTFOUND;
	const char *tier = *p ? p + 1 : "";
	const char *suffix = !*tier ? "" : !strcmp(tier, "Max") ? "-max" : !strcmp(tier, "Pro") ? "-pro"
										    : NULL;
	if (!suffix)
		return KS_ENOTFOUND;
	snprintf(out, n, "m%d%s", gen, suffix);
	return 0;
}

/* The device MLX runs on as a spec: on MLX's CUDA build the NVIDIA GPU (the cuda backend's
 * detection); on Apple silicon the shipped spec of the chip MLX names ("Apple M3 Max" ->
 * m3-max).  KS_EUNAVAILABLE elsewhere. */
static int mlx_detect_spec(int device, int measure, struct ks_buf *yaml, struct ks_error *e)
{
	if (mlx_probe_once())
		return ks_error_set(e, KS_EUNAVAILABLE, "%s", probe_state.why);
	if (probe_state.cuda)
		return ks_cuda_detect(device, measure, yaml, e);
	char name[64];
	if (!probe_state.metal || ks_mlx_spec_name(probe_state.device, name, sizeof(name)))
		return ks_error_set(e, KS_EUNAVAILABLE, "no spec for MLX's device '%s' (pass --spec "
					"NAME)", probe_state.device);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/knowledge/specs/%s.yaml", ks_data_root(), name);
	int rc = ks_file_read(path, 1 << 20, yaml, e);
	return rc == KS_ENOTFOUND || rc == KS_EIO
		       ? ks_error_set(e, KS_EUNAVAILABLE, "no shipped spec '%s' for MLX's device "
							 "'%s' (pass --spec NAME)",
				      name, probe_state.device)
		       : rc;
}

const struct ks_backend_i ks_backend_mlx = {
	.version = KS_BACKEND_VERSION,
	.name = "mlx",
	.lang = "metal",
	.ext = "mlx",
	.default_flags = "",
	.probe = mlx_probe,
	.compile = mlx_compile,
	.runner = "ksearch-runner-mlx",
	/* the CUDA driver's allowances plus MLX's own trees and environment (mlx_sandbox.c) */
	.sandbox = &ks_sandbox_mlx,
	/* the language a model writes MLX Metal bodies in; the kernel file itself is a body
	 * plus a launch block (describe_abi) */
	.abi = &ks_abi_metal,
	.describe_target = mlx_describe,
	.describe_abi = mlx_describe_abi,
	.detect_spec = mlx_detect_spec,
	.flavour = mlx_flavour,
	/* the seeds' point: CUDA expertise carried over to MLX kernels */
	.translates_cuda = 1,
	.baseline_label = "MLX native",
	.template_runs = mlx_template_runs,
	.probe_kernels = mlx_probe_kernels,
	/* the kernels run and are timed on the GPU (Metal or CUDA); its compile step writes
	 * the artifact file (MLX's JIT runs in the runner, at the first call) */
	.timing_tolerates_host_load = 1,
};
