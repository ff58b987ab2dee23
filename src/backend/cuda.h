/* The cuda backend's internals shared by cuda.c and cuda_detect.c, and the entry points
 * other parts of ksearch call (`ksearch spec detect`, compile-only checks).
 *
 * Nothing here links libcuda or libcudart: the driver is dlopen'ed ("libcuda.so.1", or
 * $KSEARCH_LIBCUDA, which tests point at a missing file to simulate a machine without a
 * GPU), so ksearch builds and runs where neither exists. */
#ifndef KS_BACKEND_CUDA_H
#define KS_BACKEND_CUDA_H

#include <stddef.h>

#include "ksearch/backend.h"
#include "ksearch/buf.h"
#include "ksearch/error.h"

/* the driver entry points ksearch uses (CUresult = int, CUdevice = int) */
struct ks_cuda_driver {
	int (*init)(unsigned flags);
	int (*device_get_count)(int *count);
	int (*device_get)(int *dev, int ordinal);
	int (*device_get_attribute)(int *value, int attrib, int dev);
	int (*device_get_name)(char *name, int len, int dev);
	int (*device_total_mem)(size_t *bytes, int dev);
	int (*get_error_string)(int rc, const char **text);
};

/* Load libcuda and initialise it, once per process.  0 and *drv, or KS_EUNAVAILABLE with
 * "no NVIDIA GPU found (libcuda.so.1: ...)" and the like in e. */
int ks_cuda_driver(const struct ks_cuda_driver **drv, struct ks_error *e);

/* compute capability of device as major*10+minor (90 for Hopper), or an error */
int ks_cuda_device_cc(int device, int *cc, struct ks_error *e);

/* the nvcc to run: $KSEARCH_NVCC, else nvcc on PATH, else /usr/local/cuda/bin/nvcc;
 * KS_EUNAVAILABLE when none is executable */
int ks_cuda_nvcc(char *out, size_t n, struct ks_error *e);

/* The architecture suffix for -gencode ("90a"): $KSEARCH_CUDA_ARCH when set ("90a",
 * "sm_90a" and "9.0" all read as 90a), else from the compute capability of $KSEARCH_DEVICE
 * (default 0); 9.x and 10.x get the arch-specific "a" targets wgmma/tcgen05 need. */
int ks_cuda_arch(char *out, size_t n, struct ks_error *e);

/* 0 (and why) when source has a line "@cuda arch: 90a 100a ..." that does not name this GPU's
 * target (ks_cuda_arch), so that a template whose fast path is arch-specific is left out of
 * the search; 1 otherwise, and when the target is unknown */
int ks_cuda_arch_line_runs(const char *source, char *why, size_t n);

/* Compile a .cu kernel for task t with knob defines (and link flags libs, or NULL: a
 * library.cu links its library), exactly as the backend does, without needing a device:
 * set $KSEARCH_CUDA_ARCH (or have one).  The artifact's resources hold the ptxas report. */
int ks_cuda_compile_only(const struct ks_task *t, const char *source,
			 const char *const *defines, const char *libs, struct ks_artifact *a,
			 struct ks_error *e);

/* "kernel regs=64 smem=49152 spill_stores=0 spill_loads=0; ..." from an nvcc -Xptxas -v
 * log, at most n-1 characters (entries that do not fit are dropped whole) */
void ks_cuda_parse_ptxas(const char *log, char *out, size_t n);

/* Describe device as a ks-spec/1 YAML document in yaml: properties read from the driver
 * (basis: detected), theoretical peaks (basis: derived) and, with measure set and
 * KSEARCH_CUDA_NO_CEILINGS unset, the two ceilings measured by bench/cuda/ceilings.cu
 * (compiled into the cache with nvcc; basis: measured).  Without measuring it takes well
 * under a second. */
int ks_cuda_detect(int device, int measure, struct ks_buf *yaml, struct ks_error *e);

#endif
