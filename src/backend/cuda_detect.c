/* The NVIDIA driver through dlopen, and `ksearch spec detect` for CUDA devices: the
 * device's properties read from the driver plus two measured ceilings. */
#include <dlfcn.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/proc.h"
#include "util/env.h"

/* CUdevice_attribute values (cuda.h), stable across driver versions */
enum {
	CU_ATTR_MAX_THREADS_PER_BLOCK = 1,
	CU_ATTR_MAX_SMEM_PER_BLOCK = 8,
	CU_ATTR_WARP_SIZE = 10,
	CU_ATTR_MAX_REGS_PER_BLOCK = 12,
	CU_ATTR_CLOCK_RATE = 13,
	CU_ATTR_SM_COUNT = 16,
	CU_ATTR_MEMORY_CLOCK_RATE = 36,
	CU_ATTR_BUS_WIDTH = 37,
	CU_ATTR_L2_SIZE = 38,
	CU_ATTR_MAX_THREADS_PER_SM = 39,
	CU_ATTR_CC_MAJOR = 75,
	CU_ATTR_CC_MINOR = 76,
	CU_ATTR_MAX_SMEM_PER_SM = 81,
	CU_ATTR_MAX_REGS_PER_SM = 82,
	CU_ATTR_MAX_SMEM_PER_BLOCK_OPTIN = 97,
	CU_ATTR_MAX_BLOCKS_PER_SM = 106,
};

static struct ks_cuda_driver drv;
static int drv_state; /* 1 loaded, -1 failed */
static char drv_why[512];
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

static int load_driver(void)
{
	const char *name = ks_env_get()->libcuda;
	if (!name || !name[0])
		name = "libcuda.so.1";
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(drv_why, sizeof(drv_why), "no NVIDIA GPU found (%s)", dlerror());
		return -1;
	}
	static const struct {
		const char *sym;
		size_t off;
	} syms[] = {
		{"cuInit", offsetof(struct ks_cuda_driver, init)},
		{"cuDeviceGetCount", offsetof(struct ks_cuda_driver, device_get_count)},
		{"cuDeviceGet", offsetof(struct ks_cuda_driver, device_get)},
		{"cuDeviceGetAttribute", offsetof(struct ks_cuda_driver, device_get_attribute)},
		{"cuDeviceGetName", offsetof(struct ks_cuda_driver, device_get_name)},
		{"cuDeviceTotalMem_v2", offsetof(struct ks_cuda_driver, device_total_mem)},
		{"cuGetErrorString", offsetof(struct ks_cuda_driver, get_error_string)},
	};
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(h, syms[i].sym);
		if (!f) {
			snprintf(drv_why, sizeof(drv_why), "no NVIDIA GPU found (%s lacks %s)", name,
				 syms[i].sym);
			return -1;
		}
		memcpy((char *)&drv + syms[i].off, &f, sizeof(f));
	}
	int rc = drv.init(0), count = 0;
	if (rc) {
		const char *txt = "unknown error";
		drv.get_error_string(rc, &txt);
		snprintf(drv_why, sizeof(drv_why), "no NVIDIA GPU found (%s: cuInit: %s)", name,
			 txt ? txt : "unknown error");
		return -1;
	}
	if ((rc = drv.device_get_count(&count)) || count < 1) {
		snprintf(drv_why, sizeof(drv_why), "no NVIDIA GPU found (%s: %d devices)", name, count);
		return -1;
	}
	return 0;
}

static void load_driver_once(void)
{
	drv_state = load_driver() ? -1 : 1;
}

/* once per process (parallel compiles ask for the architecture from several threads) */
int ks_cuda_driver(const struct ks_cuda_driver **out, struct ks_error *e)
{
	pthread_once(&drv_once, load_driver_once);
	if (drv_state < 0)
		return ks_error_set(e, KS_EUNAVAILABLE, "%s", drv_why);
	*out = &drv;
	return 0;
}

static int get_attr(const struct ks_cuda_driver *d, int dev, int attr, int *v,
		    struct ks_error *e)
{
	int rc = d->device_get_attribute(v, attr, dev);
	if (rc) {
		const char *txt = "unknown error";
		d->get_error_string(rc, &txt);
		return ks_error_set(e, KS_EIO, "cuDeviceGetAttribute(%d) on device %d: %s", attr, dev,
				    txt ? txt : "unknown error");
	}
	return 0;
}

static int open_device(int device, const struct ks_cuda_driver **d, int *handle,
		       struct ks_error *e)
{
	int rc = ks_cuda_driver(d, e), count = 0;
	if (rc)
		return rc;
	(*d)->device_get_count(&count);
	if (device < 0 || device >= count)
		return ks_error_set(e, KS_EINVAL, "CUDA device %d does not exist (%d visible)", device,
				    count);
	if ((*d)->device_get(handle, device))
		return ks_error_set(e, KS_EIO, "cuDeviceGet(%d) failed", device);
	return 0;
}

int ks_cuda_device_cc(int device, int *cc, struct ks_error *e)
{
	const struct ks_cuda_driver *d;
	int h, major, minor, rc;
	if ((rc = open_device(device, &d, &h, e)) ||
	    (rc = get_attr(d, h, CU_ATTR_CC_MAJOR, &major, e)) ||
	    (rc = get_attr(d, h, CU_ATTR_CC_MINOR, &minor, e)))
		return rc;
	*cc = major * 10 + minor;
	return 0;
}

/* ---- measured ceilings ----------------------------------------------------------- */

/* build bench/cuda/ceilings.cu into the cache (once per source and arch) and run it */
static int run_ceilings(int device, json_t **out, struct ks_error *e)
{
	char src[PATH_MAX], nvcc[PATH_MAX], arch[32];
	snprintf(src, sizeof(src), "%s/bench/cuda/ceilings.cu", ks_data_root());
	struct ks_buf text = KS_BUF_INIT, log = KS_BUF_INIT;
	int rc;
	if ((rc = ks_file_read(src, 1 << 20, &text, e)) || (rc = ks_cuda_nvcc(nvcc, sizeof(nvcc), e)) ||
	    (rc = ks_cuda_arch(arch, sizeof(arch), e)))
		goto out;
	struct ks_sha256 h;
	char hex[65], dir[PATH_MAX], exe[PATH_MAX + 16], gencode[96], devarg[32];
	ks_sha256_init(&h);
	ks_sha256_update_str(&h, ks_buf_str(&text));
	ks_sha256_update_str(&h, arch);
	ks_sha256_hex(&h, hex);
	snprintf(dir, sizeof(dir), "%s/tools/ceilings-%.16s", ks_cache_root(), hex);
	snprintf(exe, sizeof(exe), "%s/ceilings", dir);
	struct ks_proc_result pr;
	ks_buf_init(&log, 64 << 10);
	if (!ks_path_exists(exe)) {
		if ((rc = ks_mkdir_p(dir, e)))
			goto out;
		snprintf(gencode, sizeof(gencode), "arch=compute_%s,code=sm_%s", arch, arch);
		char *argv[] = {nvcc, (char *)"-O3", (char *)"-gencode", gencode, src,
				(char *)"-o", exe, (char *)"-lcublas", NULL};
		if ((rc = ks_proc_run(argv, dir, 300, &log, &pr, e)))
			goto out;
		if (!pr.exited || pr.code) {
			rc = ks_error_set(e, KS_EIO, "compiling '%s' failed:\n%.1500s", src,
					  ks_buf_str(&log));
			goto out;
		}
	}
	snprintf(devarg, sizeof(devarg), "%d", device);
	char *argv[] = {exe, devarg, NULL};
	ks_buf_reset(&log);
	if ((rc = ks_proc_run(argv, NULL, 300, &log, &pr, e)))
		goto out;
	/* the JSON document is the last line that starts with '{' */
	const char *s = ks_buf_str(&log), *json = NULL;
	for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (*p == '{')
			json = p;
	json_error_t je;
	json_t *doc = json ? json_loadb(json, strcspn(json, "\n"), 0, &je) : NULL;
	if (!pr.exited || pr.code || !doc) {
		if (doc)
			json_decref(doc);
		rc = ks_error_set(e, KS_EIO, "'%s' failed:\n%.1500s", exe, s);
		goto out;
	}
	*out = doc;
out:
	ks_buf_release(&text);
	ks_buf_release(&log);
	return rc;
}

/* ---- the spec document ------------------------------------------------------------ */

static void field(struct ks_buf *y, const char *name, double v, const char *unit,
		  const char *basis, const char *note)
{
	ks_buf_addf(y, "  %s: {value: %.10g, unit: %s, source: device, basis: %s", name, v, unit,
		    basis);
	if (note)
		ks_buf_addf(y, ", note: \"%s\"", note);
	ks_buf_adds(y, "}\n");
}

/* dense fp16/bf16 tensor-core FLOP per SM per clock with fp32 accumulation, as an upper
 * bound from the datasheets: V100, Turing, GA10x, AD10x, GB20x 1024 (A10: 125 TFLOPS on 72
 * SMs at 1.7 GHz), A100 2048 (312 on 108 at 1.41), H100/H200 4096 (989 on 132 at 1.83),
 * B200 8192 (2250 on 148 at 1.96).  TF32 runs at half that rate (8.0 and later). */
static int tensor_flops_per_sm_clock(int major, int minor)
{
	if (major >= 10 && major < 12)
		return 8192;
	if (major == 9)
		return 4096;
	if (major == 8 && minor == 0)
		return 2048;
	return major >= 7 ? 1024 : 0;
}

/* what the driver says about one device, and the figures that follow from it */
struct cuda_props {
	int v[128];          /* attribute values, indexed by CU_ATTR_* */
	char name[256];
	size_t mem;          /* bytes */
	int major, minor;    /* compute capability */
	double clock_mhz;
	double bw_tbs;       /* theoretical memory bandwidth */
	double peak_f32;     /* TFLOPS */
	double peak_f16_mma; /* dense tensor-core TFLOPS (0: no tensor cores) */
};

static int props_read(const struct ks_cuda_driver *d, int h, struct cuda_props *p,
		      struct ks_error *e)
{
	static const int ids[] = {CU_ATTR_MAX_THREADS_PER_BLOCK, CU_ATTR_MAX_SMEM_PER_BLOCK,
				  CU_ATTR_WARP_SIZE, CU_ATTR_MAX_REGS_PER_BLOCK, CU_ATTR_CLOCK_RATE,
				  CU_ATTR_SM_COUNT, CU_ATTR_MEMORY_CLOCK_RATE, CU_ATTR_BUS_WIDTH,
				  CU_ATTR_L2_SIZE, CU_ATTR_MAX_THREADS_PER_SM, CU_ATTR_CC_MAJOR,
				  CU_ATTR_CC_MINOR, CU_ATTR_MAX_SMEM_PER_SM, CU_ATTR_MAX_REGS_PER_SM,
				  CU_ATTR_MAX_SMEM_PER_BLOCK_OPTIN, CU_ATTR_MAX_BLOCKS_PER_SM};
	int rc;
	int *v = p->v;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if ((rc = get_attr(d, h, ids[i], &v[ids[i]], e)))
			return rc;
	snprintf(p->name, sizeof(p->name), "NVIDIA GPU");
	d->device_get_name(p->name, sizeof(p->name), h);
	for (char *c = p->name; *c; c++)
		if (*c == '"' || *c == '\\')
			*c = ' ';
	p->mem = 0;
	d->device_total_mem(&p->mem, h);
	return 0;
}

static void props_derive(struct cuda_props *p)
{
	const int *v = p->v;
	p->major = v[CU_ATTR_CC_MAJOR];
	p->minor = v[CU_ATTR_CC_MINOR];
	p->clock_mhz = v[CU_ATTR_CLOCK_RATE] / 1e3;
	/* double data rate: two transfers per memory clock */
	p->bw_tbs = 2.0 * v[CU_ATTR_MEMORY_CLOCK_RATE] * 1e3 * (v[CU_ATTR_BUS_WIDTH] / 8.0) / 1e12;
	/* fp32 lanes per SM: 64 on GV100 (7.0) and GA100 (8.0), 128 on the others since */
	int lanes = (p->major == 7 || p->major == 8) && p->minor == 0 ? 64 : 128;
	p->peak_f32 = 2.0 * lanes * v[CU_ATTR_SM_COUNT] * p->clock_mhz * 1e6 / 1e12;
	p->peak_f16_mma = (double)tensor_flops_per_sm_clock(p->major, p->minor) *
			  v[CU_ATTR_SM_COUNT] * p->clock_mhz * 1e6 / 1e12;
}

/* the document's head and what the compute capability implies */
static void spec_head(struct ks_buf *y, int device, const struct cuda_props *p)
{
	int major = p->major, minor = p->minor;
	ks_buf_adds(y, "# detected by ksearch spec detect (ks_cuda_detect)\n");
	ks_buf_adds(y, "schema: ks-spec/1\n");
	ks_buf_addf(y, "name: detected-cuda%d\n", device);
	ks_buf_addf(y, "title: \"%s\"\n", p->name);
	ks_buf_adds(y, "kind: gpu\nvendor: nvidia\n");
	ks_buf_addf(y, "arch: \"sm_%d%d (compute capability %d.%d)\"\n", major, minor, major, minor);
	ks_buf_adds(y, "sources:\n");
	ks_buf_adds(y, "  device: {title: \"read from the CUDA driver (cuDeviceGetAttribute) and "
		       "measured by bench/cuda/ceilings.cu on this device\"}\n");
	ks_buf_adds(y, "fields:\n");
	field(y, "simd_width", p->v[CU_ATTR_WARP_SIZE], "threads", "detected", NULL);
	/* what the compute capability implies (CUDA C++ Programming Guide, compute
	 * capabilities table); the schema needs these for every GPU */
	int cc = major * 10 + minor;
	ks_buf_addf(y,
		    "  matrix_unit: {value: \"%s\", source: device, basis: derived, note: \"from "
		    "compute capability %d.%d\"}\n",
		    cc >= 90   ? "tensor cores: mma.sync per warp and wgmma per warpgroup (sm_90a), TMA"
		    : cc >= 80 ? "tensor cores: mma.sync per warp (fp16, bf16, tf32, int8)"
		    : cc >= 70 ? "tensor cores: mma.sync / WMMA per warp (fp16)"
			       : "none",
		    major, minor);
	ks_buf_addf(y, "  features: {value: [fp64, fp16, warp_shuffle, atomic_f32_add%s%s%s], "
		       "source: device, basis: derived, note: \"from the compute capability\"}\n",
		    cc >= 70 ? ", tensor_cores, mma_sync" : "",
		    cc >= 80 ? ", bf16, cp_async" : "", cc >= 90 ? ", fp8, wgmma, tma, clusters" : "");
}

/* the limits and sizes read from the driver as they are */
static void spec_detected(struct ks_buf *y, const struct cuda_props *p)
{
	const int *v = p->v;
	field(y, "max_threads_per_group", v[CU_ATTR_MAX_THREADS_PER_BLOCK], "threads", "detected",
	      NULL);
	field(y, "max_threads_per_core", v[CU_ATTR_MAX_THREADS_PER_SM], "threads", "detected", NULL);
	field(y, "smem_per_block", v[CU_ATTR_MAX_SMEM_PER_BLOCK] / 1024.0, "KiB", "detected",
	      "static __shared__ limit; more needs dynamic shared memory and cudaFuncSetAttribute");
	field(y, "smem_per_block_optin", v[CU_ATTR_MAX_SMEM_PER_BLOCK_OPTIN] / 1024.0, "KiB",
	      "detected", NULL);
	field(y, "smem_per_core", v[CU_ATTR_MAX_SMEM_PER_SM] / 1024.0, "KiB", "detected", NULL);
	field(y, "registers_per_core", v[CU_ATTR_MAX_REGS_PER_SM], "registers", "detected", NULL);
	field(y, "l2_bytes", v[CU_ATTR_L2_SIZE] / 1048576.0, "MiB", "detected", NULL);
	field(y, "llc_bytes", v[CU_ATTR_L2_SIZE] / 1048576.0, "MiB", "detected",
	      "the L2 is the last-level cache on NVIDIA GPUs");
	field(y, "mem_bytes", (double)p->mem, "B", "detected", NULL);
	field(y, "cores", v[CU_ATTR_SM_COUNT], "count", "detected", "streaming multiprocessors");
	field(y, "clock_mhz", p->clock_mhz, "MHz", "detected", "peak SM clock reported by the driver");
}

/* theoretical tensor-core peaks: upper bounds, as roofline floors must be */
static void spec_matrix_peaks(struct ks_buf *y, const struct cuda_props *p)
{
	if (p->peak_f16_mma > 0) {
		const char *mnote = "dense, fp32 accumulation: tensor FLOP per SM per clock for the "
				    "compute capability x SMs x clock";
		if (p->major >= 8)
			field(y, "peak_gflops_tf32_matrix", p->peak_f16_mma / 2, "TFLOPS", "derived",
			      mnote);
		field(y, "peak_gflops_f16_matrix", p->peak_f16_mma, "TFLOPS", "derived", mnote);
	}
}

/* bandwidth and fp32 peak from the measured ceilings where they came out, else from the
 * datasheet figures; bf16 GEMM as measured */
static int spec_ceilings(struct ks_buf *y, int device, const struct cuda_props *p,
			 const char *bwnote, struct ks_error *e)
{
	json_t *doc = NULL;
	int rc;
	if ((rc = run_ceilings(device, &doc, e))) {
		ks_error_wrap(e, "measuring the ceilings (set KSEARCH_CUDA_NO_CEILINGS=1 to skip)");
		return rc;
	}
	double copy = json_number_value(json_object_get(doc, "copy_tbs"));
	double sgemm = json_number_value(json_object_get(doc, "sgemm_tflops"));
	double bf16 = json_number_value(json_object_get(doc, "bf16_gemm_tflops"));
	char copynote[320];
	snprintf(copynote, sizeof(copynote),
		 "best device-to-device copy over 1 GiB, bytes read plus bytes written (%s)", bwnote);
	if (copy > 0)
		field(y, "mem_bandwidth_gbps", copy, "TB/s", "measured", copynote);
	else
		field(y, "mem_bandwidth_gbps", p->bw_tbs, "TB/s", "derived", bwnote);
	char f32note[200] = "2 x fp32 lanes per SM x SMs x clock";
	if (sgemm > 0)
		snprintf(f32note, sizeof(f32note),
			 "2 x fp32 lanes per SM x SMs x clock; measured cuBLAS sgemm 4096^3 (no TF32): "
			 "%.1f TFLOPS",
			 sgemm);
	field(y, "peak_gflops_f32", p->peak_f32, "TFLOPS", "derived", f32note);
	if (bf16 > 0)
		field(y, "peak_gflops_bf16_matrix", bf16, "TFLOPS", "measured",
		      "cuBLAS bf16 GEMM 8192^3 on random data, fp32 accumulation");
	json_decref(doc);
	return 0;
}

int ks_cuda_detect(int device, int measure, struct ks_buf *y, struct ks_error *e)
{
	const struct ks_cuda_driver *d;
	struct cuda_props p = {0};
	int h, rc;
	if ((rc = open_device(device, &d, &h, e)) || (rc = props_read(d, h, &p, e)))
		return rc;
	props_derive(&p);
	spec_head(y, device, &p);
	spec_detected(y, &p);
	/* only fields of the spec schema (knowledge/specs): the theoretical bandwidth goes
	 * into a note, and becomes the value when the ceilings are not measured */
	char bwnote[160];
	snprintf(bwnote, sizeof(bwnote),
		 "theoretical: 2 x %.0f MHz memory clock x %.0f-bit bus / 8 = %.2f TB/s",
		 p.v[CU_ATTR_MEMORY_CLOCK_RATE] / 1e3, (double)p.v[CU_ATTR_BUS_WIDTH], p.bw_tbs);
	spec_matrix_peaks(y, &p);
	if (!measure || ks_env_get()->cuda_no_ceilings) {
		field(y, "mem_bandwidth_gbps", p.bw_tbs, "TB/s", "derived", bwnote);
		field(y, "peak_gflops_f32", p.peak_f32, "TFLOPS", "derived",
		      "2 x fp32 lanes per SM x SMs x clock");
		return 0;
	}
	return spec_ceilings(y, device, &p, bwnote, e);
}
