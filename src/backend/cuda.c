/* The cuda backend: kernels are CUDA C++ (.cu), compiled with nvcc for the detected
 * architecture into a shared library that links the shared CUDA runtime (the same
 * libcudart the runner uses, so ksearch's stream and the kernel's launches share one
 * runtime), and run by ksearch-runner-cuda in the sandbox (src/runner/device_cuda.c).
 * ptxas's resource report (registers, shared memory, spills) is kept with each artifact. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backends.h"
#include "backend/cuda.h"
#include "util/env.h"

int ks_cuda_nvcc(char *out, size_t n, struct ks_error *e)
{
	const char *env = ks_env_get()->nvcc;
	if (env && env[0]) {
		if (access(env, X_OK))
			return ks_error_set(e, KS_EUNAVAILABLE, "KSEARCH_NVCC='%s' is not executable",
					    env);
		snprintf(out, n, "%s", env);
		return 0;
	}
	const char *path = ks_env_get()->path;
	while (path && *path) {
		size_t len = strcspn(path, ":");
		if (len) {
			snprintf(out, n, "%.*s/nvcc", (int)len, path);
			if (!access(out, X_OK))
				return 0;
		}
		path += len + (path[len] == ':');
	}
	snprintf(out, n, "/usr/local/cuda/bin/nvcc");
	if (!access(out, X_OK))
		return 0;
	return ks_error_set(e, KS_EUNAVAILABLE,
			    "nvcc not found (set KSEARCH_NVCC, or put the CUDA toolkit's bin on PATH)");
}

static int device_index(void)
{
	const char *d = ks_env_get()->device;
	return d && d[0] ? atoi(d) : 0;
}

int ks_cuda_arch(char *out, size_t n, struct ks_error *e)
{
	const char *env = ks_env_get()->cuda_arch;
	int cc = 0;
	if (env && env[0]) {
		const char *p = env;
		if (!strncmp(p, "sm_", 3) || !strncmp(p, "compute_", 8))
			p = strchr(p, '_') + 1;
		int major = 0, minor = 0;
		char suffix[8] = "";
		if (sscanf(p, "%d.%d", &major, &minor) == 2 && strchr(p, '.'))
			cc = major * 10 + minor;
		else if (sscanf(p, "%d%7s", &cc, suffix) < 1 || cc < 10 ||
			 (suffix[0] && strcmp(suffix, "a") && strcmp(suffix, "f")))
			return ks_error_set(e, KS_EINVAL,
					    "KSEARCH_CUDA_ARCH='%s': expected e.g. 90a, sm_90a or 9.0", env);
		if (suffix[0]) {
			snprintf(out, n, "%d%s", cc, suffix);
			return 0;
		}
	} else {
		int rc = ks_cuda_device_cc(device_index(), &cc, e);
		if (rc)
			return rc;
	}
	/* Hopper and datacenter Blackwell: the arch-specific target (wgmma, setmaxnreg,
	 * tcgen05 need it); the rest: the plain one */
	snprintf(out, n, "%d%s", cc, cc == 90 || cc == 100 || cc == 103 ? "a" : "");
	return 0;
}

static int cuda_probe(char *why, size_t n)
{
	struct ks_error e = {0};
	char nvcc[PATH_MAX];
	const struct ks_cuda_driver *d;
	if (ks_cuda_nvcc(nvcc, sizeof(nvcc), &e) || ks_cuda_driver(&d, &e)) {
		snprintf(why, n, "%s", e.msg);
		return KS_EUNAVAILABLE;
	}
	return 0;
}

/* "_Z14softmax_kernelILi256EEvPKfPfii" -> "softmax_kernel<...>"-ish short name: the first
 * identifier of a mangled name, else the name itself */
static void short_name(const char *mangled, char *out, size_t n)
{
	const char *p = mangled;
	if (!strncmp(p, "_Z", 2)) {
		p += 2;
		if (*p == 'N')
			p++;
		char *end;
		long len = strtol(p, &end, 10);
		if (len > 0 && end != p && (size_t)len <= strlen(end)) {
			int w = snprintf(out, n, "%.*s", (int)len, end);
			/* int and bool template arguments: I Li4E Lb1E E -> <4,1> */
			const char *q = end + len;
			if (*q == 'I' && w > 0 && (size_t)w < n) {
				size_t used = (size_t)w;
				char sep = '<';
				for (q++; (!strncmp(q, "Li", 2) || !strncmp(q, "Lb", 2)) &&
					  used + 24 < n;) {
					long v = strtol(q + 2, &end, 10);
					if (*end != 'E')
						break;
					used += (size_t)snprintf(out + used, n - used, "%c%ld", sep, v);
					sep = ',';
					q = end + 1;
				}
				if (sep == ',')
					snprintf(out + used, n - used, ">");
			}
			return;
		}
	}
	snprintf(out, n, "%s", mangled);
}

void ks_cuda_parse_ptxas(const char *log, char *out, size_t n)
{
	char name[128] = "?";
	long regs = -1, smem = 0, st = 0, ld = 0;
	size_t used = 0;
	if (n)
		out[0] = '\0';
	for (const char *line = log; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[1024];
		snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1),
			 line);
		const char *p;
		if ((p = strstr(buf, "Compiling entry function '"))) {
			p += strlen("Compiling entry function '");
			char mangled[512];
			snprintf(mangled, sizeof(mangled), "%.*s", (int)strcspn(p, "'"), p);
			short_name(mangled, name, sizeof(name));
			regs = -1;
			smem = st = ld = 0;
		}
		if ((p = strstr(buf, "bytes spill stores")))
			sscanf(buf, " %*d bytes stack frame, %ld bytes spill stores, %ld bytes spill loads",
			       &st, &ld);
		if ((p = strstr(buf, "ptxas info")) && (p = strstr(buf, "Used "))) {
			sscanf(p, "Used %ld registers", &regs);
			const char *s = strstr(p, " bytes smem");
			if (s) {
				while (s > p && s[-1] >= '0' && s[-1] <= '9')
					s--;
				smem = strtol(s, NULL, 10);
			}
			/* the Used line closes one function's report */
			char entry[256];
			int w = snprintf(entry, sizeof(entry),
					 "%s%s regs=%ld smem=%ld spill_stores=%ld spill_loads=%ld",
					 used ? "; " : "", name, regs, smem, st, ld);
			if (w > 0 && used + (size_t)w < n) {
				memcpy(out + used, entry, (size_t)w + 1);
				used += (size_t)w;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
}

static int compile_flags(const char *base, char *out, size_t n, struct ks_error *e)
{
	char arch[32];
	int rc = ks_cuda_arch(arch, sizeof(arch), e);
	if (rc)
		return rc;
	snprintf(out, n,
		 "%s -std=c++17 -gencode arch=compute_%s,code=sm_%s -Xptxas -v -lineinfo "
		 "-cudart shared -shared -Xcompiler -fPIC",
		 base, arch, arch);
	return 0;
}

static int cuda_compile(const struct ks_compile_req *req, struct ks_artifact *a,
			struct ks_error *e)
{
	char nvcc[PATH_MAX], flags[2048];
	int rc;
	if ((rc = ks_cuda_nvcc(nvcc, sizeof(nvcc), e)) ||
	    (rc = compile_flags(req->flags ? req->flags : ks_backend_cuda.default_flags, flags,
				sizeof(flags), e)))
		return rc;
	rc = ks_compile_shared(&ks_backend_cuda, nvcc, flags, req, a, e);
	if (!rc)
		ks_cuda_parse_ptxas(ks_buf_str(&a->log), a->resources, sizeof(a->resources));
	return rc;
}

int ks_cuda_compile_only(const struct ks_task *t, const char *source,
			 const char *const *defines, const char *libs, struct ks_artifact *a,
			 struct ks_error *e)
{
	struct ks_compile_req req = {.task = t, .source = source, .defines = defines,
				     .libs = libs};
	return cuda_compile(&req, a, e);
}

static int cuda_describe(struct ks_buf *out)
{
	const struct ks_cuda_driver *d;
	struct ks_error e = {0};
	int dev = device_index(), h = 0, cc = 0;
	char name[256] = "NVIDIA GPU";
	if (ks_cuda_driver(&d, &e) || d->device_get(&h, dev))
		return ks_buf_addf(out, "CUDA device %d", dev);
	d->device_get_name(name, sizeof(name), h);
	ks_cuda_device_cc(dev, &cc, &e);
	return ks_buf_addf(out, "%s (device %d, compute capability %d.%d)", name, dev, cc / 10,
			   cc % 10);
}

/* A template whose fast path needs an arch-specific target names it in a line of its source,
 * "@cuda arch: 90a 100a": on any other GPU the search leaves it out, since every candidate
 * would run its plain fallback (flash_wgmma.cu's wgmma path exists only in sm_90a code).
 * Without the line, or when the target is unknown (no GPU here), the template runs.  The mlx
 * backend asks the same of its CUDA-flavoured templates (flash_wgmma.cuda.mlx). */
int ks_cuda_arch_line_runs(const char *source, char *why, size_t n)
{
	const char *p = strstr(source, "@cuda arch:");
	char arch[32], named[128], list[128];
	struct ks_error e = {0};
	if (!p || ks_cuda_arch(arch, sizeof(arch), &e))
		return 1;
	p += strlen("@cuda arch:");
	p += strspn(p, " \t");
	/* the line, up to a comment's end, without trailing blanks */
	snprintf(named, sizeof(named), "%.*s", (int)strcspn(p, "\n*"), p);
	for (size_t len = strlen(named); len && strchr(" \t", named[len - 1]); len--)
		named[len - 1] = '\0';
	memcpy(list, named, sizeof(list));
	char *save = NULL;
	for (char *tok = strtok_r(list, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save))
		if (!strcmp(!strncmp(tok, "sm_", 3) ? tok + 3 : tok, arch))
			return 1;
	snprintf(why, n, "its fast path is for \"@cuda arch: %s\" only; this GPU builds for sm_%s",
		 named, arch);
	return 0;
}

/* CUDA C++: the entry point is host code that launches on ksearch's stream; the shim has C
 * linkage so the runner finds ks__entry_v1 */
const struct ks_abi ks_abi_cuda = {
	.lang = "cuda",
	.ctype = {[KS_DT_F32] = "float", [KS_DT_F64] = "double", [KS_DT_F16] = "__half",
		  [KS_DT_BF16] = "__nv_bfloat16", [KS_DT_I32] = "int32_t", [KS_DT_I64] = "int64_t"},
	.stream_type = "cudaStream_t",
	.shim_includes = "#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n",
	.shim_linkage = "extern \"C\" ",
};

/* docs/cuda.md: events around the call, the L2 flushed between calls, rotated inputs */
static void cuda_describe_timing(struct ks_buf *out)
{
	ks_buf_adds(out, "a timed call is one call of the entry point on the given stream, timed by "
			 "CUDA events around it (by the host's clock when work outlives the stream), "
			 "the L2 flushed before each call and the input sets rotated");
}

const struct ks_backend_i ks_backend_cuda = {
	.version = KS_BACKEND_VERSION,
	.name = "cuda",
	.lang = "cuda",
	.ext = "cu",
	.default_flags = "-O3",
	.probe = cuda_probe,
	.compile = cuda_compile,
	.runner = "ksearch-runner-cuda",
	.describe_target = cuda_describe,
	.template_runs = ks_cuda_arch_line_runs,
	.abi = &ks_abi_cuda,
	.sandbox = &ks_sandbox_cuda,
	.detect_spec = ks_cuda_detect,
	.device_reference = "reference.cu",
	.on_host = 0,
	/* cudaEvents on the GPU time the kernels; nvcc on the host's cores does not touch them */
	.timing_tolerates_host_load = 1,
	.describe_timing = cuda_describe_timing,
};
