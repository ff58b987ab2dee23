/* The MLX device of ksearch-runner-mlx: the "kernel" is an mlx artifact (src/backend/
 * mlx_kernel.h) read by this device instead of a shared library; tensors are MLX arrays
 * made from the runner's host buffers; one call is `chain` calls of the MLX custom kernel
 * or native op, evaluated together and timed with the wall clock, MLX's own way (it has no
 * GPU timer).  docs/mlx.md says why.
 *
 * Correctness calls (the runner poisons the outputs first, which reaches here as an upload
 * to an output) run with init_value NaN, so elements a kernel skips stay NaN; timed calls
 * use the kernel's own init.  MLX errors end the call: "compile error: <log>" for a custom
 * kernel that does not compile (the evaluator's COMPILE_ERROR), anything else a device
 * error (RUNTIME_ERROR). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backends.h"
#include "backend/mlx_kernel.h"
#include "eval/runner_proto.h"
#include "runner/mlx_shim.h"
#include "runner/runner.h"
#include "util/clock.h"
#include "util/env.h"

struct slot {
	int tensor, set;
	struct ks_mlx_arr *arr;
	int poisoned; /* the next call runs with init_value NaN */
};

static struct {
	struct ks_mlx_artifact *art;
	struct ks_mlx_prog *prog;
	struct ks_mlx_info info;
	int have_params;
	struct ks_mlx_launch launch;
	struct slot slots[KS_MLX_MAX_TENSORS][KS_RUNNER_MAX_SETS];
	/* the ks_mlx_call views of launch */
	const char *targ_names[KS_MLX_MAX_TEMPLATE + KS_MLX_MAX_PARAMS];
	int targ_kinds[KS_MLX_MAX_TEMPLATE + KS_MLX_MAX_PARAMS];
	int targ_values[KS_MLX_MAX_TEMPLATE + KS_MLX_MAX_PARAMS];
	const int *out_shapes[KS_MLX_MAX_TENSORS];
	int out_ndims[KS_MLX_MAX_TENSORS], out_dtypes[KS_MLX_MAX_TENSORS];
	const char *param_names[KS_MLX_MAX_PARAMS];
	double params[KS_MLX_MAX_PARAMS];
	struct ks_mlx_call call;
	/* calls recorded by the entry point and not yet evaluated */
	struct ks_mlx_arr *pending[KS_MLX_MAX_CHAIN][KS_MLX_MAX_TENSORS];
	int npending, noutputs, ninputs;
	int rc;
	char err[4096];
} m;

/* the entry point `launch` calls: record one call on set s (lazily; eval comes later) */
static void mlx_entry(void **tensors, const double *params, void *stream)
{
	(void)params;
	(void)stream;
	if (m.rc || m.npending == KS_MLX_MAX_CHAIN)
		return;
	struct ks_mlx_arr *in[KS_MLX_MAX_TENSORS];
	int poisoned = 0;
	for (int i = 0; i < m.art->ntensors; i++) {
		struct slot *sl = tensors[i];
		if (i < m.ninputs)
			in[i] = sl->arr;
		else
			poisoned |= sl->poisoned;
	}
	struct ks_mlx_call c = m.call;
	if (poisoned) {
		c.has_init = 1;
		c.init = NAN;
	}
	m.rc = ks_mlx_prog_call(m.prog, in, &c, m.pending[m.npending], m.err, sizeof(m.err));
	if (!m.rc)
		m.npending++;
}

static void drop_pending(int keep_last, void **tensors)
{
	for (int k = 0; k < m.npending; k++)
		for (int o = 0; o < m.noutputs; o++) {
			struct ks_mlx_arr *a = m.pending[k][o];
			if (keep_last && k == m.npending - 1) {
				struct slot *sl = tensors[m.ninputs + o];
				ks_mlx_arr_free(sl->arr);
				sl->arr = a;
				sl->poisoned = 0;
			} else {
				ks_mlx_arr_free(a);
			}
		}
	m.npending = 0;
}

static int mlx_load(const char *path, void (**entry)(void **, const double *, void *),
		    char *why, size_t n)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(why, n, "cannot open the artifact '%s'", path);
		return -1;
	}
	static char text[8 << 20];
	size_t len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';
	struct ks_error e = {0};
	m.art = calloc(1, sizeof(*m.art));
	if (!m.art || ks_mlx_artifact_parse(text, m.art, &e)) {
		snprintf(why, n, "artifact '%s': %s", path, m.art ? e.msg : "out of memory");
		return -1;
	}
	const char *names[KS_MLX_MAX_TENSORS];
	for (int i = 0; i < m.art->ntensors; i++) {
		names[i] = m.art->tensors[i].name;
		if (m.art->tensors[i].is_output)
			m.noutputs++;
		else
			m.ninputs++;
	}
	const struct ks_mlx_kernel *k = &m.art->kernel;
	/* header_file: the header NVRTC reads from the artifact's folder, which the sandbox
	 * lets the runner read (ks_sandbox_mlx.artifact_folder) */
	static char include[PATH_MAX + 64];
	const char *slash = strrchr(path, '/');
	include[0] = '\0';
	if (ks_mlx_header_in_file(m.art))
		snprintf(include, sizeof(include), "#include \"%.*s/" KS_MLX_HEADER_FILE "\"\n",
			 slash ? (int)(slash - path) : 1, slash ? path : ".");
	struct ks_mlx_prog_desc d = {
		.flavour = (int)k->flavour, .native = k->native, .name = m.art->task,
		.header = include[0] ? include : k->header, .body = k->body, .ninputs = m.ninputs,
		.noutputs = m.noutputs, .input_names = names, .output_names = names + m.ninputs};
	if (ks_mlx_prog_new(&d, &m.prog, why, n))
		return -1;
	*entry = mlx_entry;
	return 0;
}

static int mlx_init(char *why, size_t n)
{
	/* MLX computes float32 matmuls with TF32 tensor-core inputs by default
	 * (MLX_ENABLE_TF32, read once in mlx/utils.h; cuBLAS's FAST_TF32 compute type and the
	 * Metal GEMMs follow it): 10 mantissa bits, outside a float32 task's tolerance (measured
	 * on an H200: mx::matmul off by 6.5e-3 at k = 65).  The native baseline is float32
	 * arithmetic unless the user asks otherwise. */
	setenv("MLX_ENABLE_TF32", "0", 0);
	if (ks_mlx_shim_info(&m.info, why, n))
		return -1;
	int gpu = m.info.metal || m.info.cuda;
	if (!gpu && m.art->kernel.flavour != KS_MLX_NATIVE) {
		snprintf(why, n, "custom kernels need MLX's Metal or CUDA backend (this MLX %s is the "
				 "CPU build)",
			 m.info.version);
		return -1;
	}
	return ks_mlx_shim_init(gpu, why, n);
}

static int mlx_set_params(const double *params, int n, char *why, size_t len)
{
	if (n != m.art->nparams) {
		snprintf(why, len, "%d params given, the artifact has %d", n, m.art->nparams);
		return -1;
	}
	struct ks_error e = {0};
	if (ks_mlx_launch_resolve(m.art, params, &m.launch, &e)) {
		snprintf(why, len, "launch: %s", e.msg);
		return -1;
	}
	struct ks_mlx_launch *l = &m.launch;
	for (int i = 0; i < l->ntargs; i++) {
		m.targ_names[i] = l->targs[i].name;
		m.targ_kinds[i] = (int)l->targs[i].kind;
		m.targ_values[i] = l->targs[i].value;
	}
	for (int i = 0, o = 0; i < m.art->ntensors; i++)
		if (m.art->tensors[i].is_output) {
			m.out_shapes[o] = l->shape[i];
			m.out_ndims[o] = m.art->tensors[i].ndim;
			m.out_dtypes[o++] = (int)m.art->tensors[i].dtype;
		}
	for (int i = 0; i < n; i++) {
		m.param_names[i] = m.art->params[i];
		m.params[i] = params[i];
	}
	m.call = (struct ks_mlx_call){
		.grid = {l->grid[0], l->grid[1], l->grid[2]},
		.threadgroup = {l->threadgroup[0], l->threadgroup[1], l->threadgroup[2]},
		.ntargs = l->ntargs, .targ_names = m.targ_names, .targ_kinds = m.targ_kinds,
		.targ_values = m.targ_values, .has_init = l->has_init, .init = (float)l->init,
		.shared_memory = l->shared_memory, .out_shapes = m.out_shapes,
		.out_ndims = m.out_ndims, .out_dtypes = m.out_dtypes, .nparams = n,
		.param_names = m.param_names, .params = m.params};
	m.have_params = 1;
	return 0;
}

static void *mlx_alloc_tensor(int tensor, int set, void *host, size_t bytes)
{
	(void)host;
	(void)bytes;
	if (!m.have_params || tensor < 0 || tensor >= m.art->ntensors || set < 0 ||
	    set >= KS_RUNNER_MAX_SETS)
		return NULL;
	struct slot *sl = &m.slots[tensor][set];
	sl->tensor = tensor;
	sl->set = set;
	return sl;
}

static void *mlx_alloc(void *host, size_t bytes)
{
	return NULL; /* every allocation goes through alloc_tensor */
}

static int mlx_upload(void *dev, const void *host, size_t bytes)
{
	struct slot *sl = dev;
	const struct ks_mlx_tensor *t = &m.art->tensors[sl->tensor];
	if (t->is_output) {
		sl->poisoned = 1;
		return 0;
	}
	ks_mlx_arr_free(sl->arr);
	sl->arr = NULL;
	char err[512];
	if (ks_mlx_arr_from_host(host, (int)t->dtype, m.launch.shape[sl->tensor], t->ndim,
				 &sl->arr, err, sizeof(err))) {
		fprintf(stderr, "ksearch-runner-mlx: input '%s': %s\n", t->name, err);
		return -1;
	}
	return 0;
}

static int mlx_download(void *host, const void *dev, size_t bytes)
{
	const struct slot *sl = dev;
	if (!sl->arr)
		return 0; /* never computed: the host copy keeps its poison */
	char err[512];
	if (ks_mlx_arr_to_host(sl->arr, host, bytes, err, sizeof(err))) {
		fprintf(stderr, "ksearch-runner-mlx: download: %s\n", err);
		return -1;
	}
	return 0;
}

static int mlx_call(void (*launch)(int, void *), int set, uint64_t *ns, char *err, size_t n)
{
	int chain = m.art->chain;
	void *tensors[KS_MLX_MAX_TENSORS];
	for (int i = 0; i < m.art->ntensors; i++)
		tensors[i] = &m.slots[i][set];
	m.rc = 0;
	uint64_t gpu_ns = 0;
	uint64_t t0 = ks_clock_ns();
	for (int k = 0; k < chain && !m.rc; k++)
		launch(set, NULL);
	if (!m.rc) {
		struct ks_mlx_arr *all[KS_MLX_MAX_CHAIN * KS_MLX_MAX_TENSORS];
		int cnt = 0;
		for (int k = 0; k < m.npending; k++)
			for (int o = 0; o < m.noutputs; o++)
				all[cnt++] = m.pending[k][o];
		m.rc = ks_mlx_eval(all, cnt, &gpu_ns, m.err, sizeof(m.err));
	}
	uint64_t t1 = ks_clock_ns();
	if (m.rc) {
		drop_pending(0, tensors);
		snprintf(err, n, "%s%s", m.rc == KS_MLX_ECOMPILE ? "compile error: " : "", m.err);
		return -1;
	}
	drop_pending(1, tensors);
	if (m.art->timer == KS_MLX_TIMER_EVENTS && !gpu_ns) {
		snprintf(err, n, "KSEARCH_MLX_TIMER=events needs CUDA events on MLX's stream, which "
				 "this MLX %s does not give (no CUDA backend, or a runner built without "
				 "CUDA's headers)", m.info.version);
		return -1;
	}
	*ns = (m.art->timer == KS_MLX_TIMER_EVENTS ? gpu_ns : t1 - t0) / (uint64_t)chain;
	return 0;
}

static int mlx_chain(void)
{
	return m.art ? m.art->chain : 1;
}

/* "mlx 0.32.4 metal=0 cuda=0 device=cpu": what the mlx backend's probe reads */
static int mlx_probe(void)
{
	char err[1024];
	if (ks_mlx_shim_info(&m.info, err, sizeof(err))) {
		printf("error %s\n", err);
		return 1;
	}
	printf("mlx %s metal=%d cuda=%d device=%s\n", m.info.version, m.info.metal, m.info.cuda,
	       m.info.device);
	return 0;
}

static void *mlx_stream(void)
{
	return NULL;
}

static const struct ks_runner_device mlx_device = {
	.name = "mlx",
	.sandbox = &ks_sandbox_mlx, /* the same object as ks_backend_mlx.sandbox */
	.init = mlx_init,
	.alloc = mlx_alloc,
	.upload = mlx_upload,
	.download = mlx_download,
	.protect_inputs = 0,
	.call = mlx_call,
	.between_reps = NULL,
	.stream = mlx_stream,
	.load = mlx_load,
	.set_params = mlx_set_params,
	.alloc_tensor = mlx_alloc_tensor,
	.chain = mlx_chain,
	.probe = mlx_probe,
};

/* a copy of path that lives as long as the runner, for the sandbox's read list */
static void add_read(const char *path)
{
	static char store[32 << 10];
	static size_t used;
	char real[PATH_MAX];
	if (!realpath(path, real))
		return; /* absent: nothing to allow */
	size_t len = strlen(real) + 1;
	if (used + len > sizeof(store))
		return;
	memcpy(store + used, real, len);
	if (ks_sandbox_mlx_add_read(store + used) == 0)
		used += len;
}

/* "/tmp/x" and deeper: never a whole top-level tree (/, /tmp, /root) for one library */
static int deep_enough(const char *dir)
{
	int parts = 0;
	for (const char *p = dir; *p; p++)
		parts += *p == '/' && p[1] && p[1] != '/';
	return parts >= 2;
}

/* The trees MLX reads after the sandbox is entered, which a wheel may have unpacked
 * anywhere: the directory of every shared object mapped now (libmlx.so and the CUDA,
 * cuDNN, cuBLAS and NVRTC libraries it links, beside which they dlopen more later:
 * libnvrtc-builtins, cuDNN's engine libraries), MLX's package (its include/ holds the
 * headers NVRTC compiles custom kernels with, CCCL among them), the nvidia packages
 * beside it (MLX takes cu13/include from there first) and $CUDA_HOME/include or
 * $CUDA_PATH/include (else).  The CUDA driver's list comes first. */
static void sandbox_reads(void)
{
	for (const char *const *p = ks_sandbox_cuda.read_paths; p && *p; p++)
		ks_sandbox_mlx_add_read(*p);
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128];
	while (maps && fgets(line, sizeof(line), maps)) {
		char *path = strchr(line, '/');
		if (!path || !strstr(path, ".so"))
			continue;
		path[strcspn(path, "\n")] = '\0';
		char *slash = strrchr(path, '/');
		*slash = '\0';
		if (deep_enough(path))
			add_read(path);
	}
	if (maps)
		fclose(maps);
	char dir[PATH_MAX], more[PATH_MAX + 16];
	ks_mlx_shim_lib_dir(dir, sizeof(dir));
	char *slash = strrchr(dir, '/');
	if (dir[0] && slash) {
		*slash = '\0'; /* .../mlx: lib/ and include/ */
		if (deep_enough(dir))
			add_read(dir);
		snprintf(more, sizeof(more), "%s/../nvidia", dir);
		add_read(more);
	}
	const char *const homes[] = {ks_env_get()->cuda_home, ks_env_get()->cuda_path};
	for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]); i++) {
		const char *h = homes[i];
		if (h && h[0]) {
			snprintf(more, sizeof(more), "%s/include", h);
			add_read(more);
		}
	}
}

const struct ks_runner_device *ks_runner_device_get(void)
{
	static int prepared;
	if (!prepared++)
		sandbox_reads();
	return &mlx_device;
}
