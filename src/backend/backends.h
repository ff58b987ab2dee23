/* The backends compiled into this build (registered in registry.c). */
#ifndef KS_BACKEND_BACKENDS_H
#define KS_BACKEND_BACKENDS_H

#include "ksearch/backend.h"

extern const struct ks_backend_i ks_backend_cpu;
extern const struct ks_backend_i ks_backend_cuda;
extern const struct ks_backend_i ks_backend_mlx;

/* kernel ABIs: the backends' (cpu.c, cuda.c) and those of languages that have no backend
 * yet (languages.c), found by name with ks_abi_find() */
extern const struct ks_abi ks_abi_c;
extern const struct ks_abi ks_abi_cuda;
extern const struct ks_abi ks_abi_metal;

/* what the cuda runner's sandbox must allow (cuda_sandbox.c, linked into
 * ksearch-runner-cuda too) */
extern const struct ks_sandbox_needs ks_sandbox_cuda;
/* the system calls a GPU driver's runtime makes beyond the common allow-list (derived) */
extern const char *const ks_sandbox_gpu_syscalls[];
/* MLX's (mlx_sandbox.c, linked into ksearch-runner-mlx too): the CUDA driver's needs plus
 * trees only the runner knows, added before it enters the sandbox (path must outlive it;
 * -1 when the list is full) */
extern const struct ks_sandbox_needs ks_sandbox_mlx;
int ks_sandbox_mlx_add_read(const char *path);

/* What an MLX kernel file is, in words (mlx_describe.c): the format for task t in one flavour
 * (NULL: both; the example then in flavour here), one timed call with chain launches per
 * eval, what a model's reply holds and how its knobs get their values */
int ks_mlx_describe_abi(const struct ks_task *t, const char *flavour, const char *here,
			struct ks_buf *out);
void ks_mlx_describe_timing(int chain, struct ks_buf *out);
extern const char ks_mlx_reply_file[];
extern const char ks_mlx_knob_use[];

/* The shipped spec name of an Apple chip as MLX names it ("Apple M3 Max" -> "m3-max",
 * "Apple M1" -> "m1"); KS_ENOTFOUND for any other name (mlx.c) */
int ks_mlx_spec_name(const char *device, char *out, size_t n);

/* what every program in ksearch-cc-jail reads: system binaries, libraries, headers and
 * the dynamic linker's configuration (NULL-terminated) */
extern const char *const ks_jail_system_ro[];

/* shared by the C-compiling backends: compile source + be's shim into a cached shared
 * library named by be's extension, with compiler argv built from compiler, flags, defines
 * and the include directory */
int ks_compile_shared(const struct ks_backend_i *be, const char *compiler, const char *flags,
		      const struct ks_compile_req *req, struct ks_artifact *a,
		      struct ks_error *e);

#endif
