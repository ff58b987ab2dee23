/* The C face of mlx_shim.cpp, the only C++ in ksearch: what ksearch-runner-mlx needs from
 * MLX's C++ API (arrays from host memory and back, MLX's native ops, custom kernels through
 * mlx::core::fast::metal_kernel / cuda_kernel, eval).  Every MLX exception is caught at
 * this boundary and becomes a return code with MLX's message in err; nothing here exits. */
#ifndef KS_RUNNER_MLX_SHIM_H
#define KS_RUNNER_MLX_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ks_mlx_rc {
	KS_MLX_OK = 0,
	KS_MLX_ERUNTIME = -1,     /* MLX threw while building or evaluating */
	KS_MLX_ECOMPILE = -2,     /* a custom kernel failed to compile (NVRTC / Metal log) */
	KS_MLX_EUNSUPPORTED = -3, /* this MLX cannot do it (no GPU backend, unknown op) */
};

struct ks_mlx_info {
	char version[32];  /* "0.32.4" */
	int metal, cuda;   /* the GPU backends this MLX has and can use here */
	char device[160];  /* the GPU's name when one is usable, else "cpu" */
};

int ks_mlx_shim_info(struct ks_mlx_info *out, char *err, size_t n);
/* directory of the loaded libmlx.so ("" when unknown) */
void ks_mlx_shim_lib_dir(char *out, size_t n);
/* the default device for everything after: the GPU when use_gpu, else the CPU */
int ks_mlx_shim_init(int use_gpu, char *err, size_t n);

struct ks_mlx_arr; /* one mx::array */

/* a new array of the given task dtype (enum ks_dtype) and shape holding a copy of data,
 * evaluated (materialised on the device) before it returns */
int ks_mlx_arr_from_host(const void *data, int dtype, const int *shape, int ndim,
			 struct ks_mlx_arr **out, char *err, size_t n);
/* copy an (evaluated) array to host memory of exactly bytes */
int ks_mlx_arr_to_host(struct ks_mlx_arr *a, void *dst, size_t bytes, char *err, size_t n);
void ks_mlx_arr_free(struct ks_mlx_arr *a);

struct ks_mlx_prog; /* a native op or a custom kernel */

struct ks_mlx_prog_desc {
	int flavour;            /* enum ks_mlx_flavour: 0 native, 1 cuda, 2 metal */
	const char *native;     /* native: the op name */
	const char *name;       /* custom kernels: the kernel's name */
	const char *header, *body;
	int ninputs, noutputs;
	const char *const *input_names, *const *output_names;
};

int ks_mlx_prog_new(const struct ks_mlx_prog_desc *d, struct ks_mlx_prog **out, char *err,
		    size_t n);
void ks_mlx_prog_free(struct ks_mlx_prog *p);

/* one call's values (ks_mlx_launch evaluated for a workload) */
struct ks_mlx_call {
	int grid[3], threadgroup[3];
	int ntargs;
	const char *const *targ_names;
	const int *targ_kinds;  /* enum ks_mlx_targ_kind */
	const int *targ_values;
	int has_init;
	float init;
	int shared_memory;
	const int *const *out_shapes; /* per output */
	const int *out_ndims;
	const int *out_dtypes;        /* enum ks_dtype */
	int nparams;                  /* for native ops: the task's params by name */
	const char *const *param_names;
	const double *params;
};

/* Record one call lazily (nothing runs yet): outputs get new arrays, which the caller
 * frees.  Native ops check shapes here (KS_MLX_EUNSUPPORTED for an unknown op). */
int ks_mlx_prog_call(struct ks_mlx_prog *p, struct ks_mlx_arr *const *in,
		     const struct ks_mlx_call *c, struct ks_mlx_arr **out, char *err, size_t n);
/* Evaluate arrays together (a chain of calls is one eval).  On MLX's CUDA backend the
 * eval ends with an event on MLX's stream that is waited for and checked (a kernel's
 * illegal address is an error here), and *gpu_ns is the GPU time between an event before
 * and that one; 0 elsewhere. */
int ks_mlx_eval(struct ks_mlx_arr *const *arrs, int count, uint64_t *gpu_ns, char *err,
		size_t n);

#ifdef __cplusplus
}
#endif

#endif
