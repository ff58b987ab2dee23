/* What MLX needs inside the runner's sandbox: the CUDA driver's allowances
 * (cuda_sandbox.c), plus the trees of the MLX package and of the CUDA libraries it loads,
 * which a wheel unpacks anywhere (site-packages, a folder in /tmp).  Those are known only in
 * the runner, once libmlx.so is mapped: ksearch-runner-mlx adds them with
 * ks_sandbox_mlx_add_read before it enters the sandbox (src/runner/device_mlx.c).  Linked
 * into ksearch (which reads the address-space and environment fields) and the runner. */
#include <string.h>

#include "backend/backends.h"

#define MLX_READS 96

/* the CUDA driver's read list first (copied in by the runner), then MLX's trees */
static const char *mlx_read[MLX_READS + 1];
static int mlx_nread;

static const char *const mlx_devices[] = {"nvidia", NULL};
static const char *const mlx_rw[] = {"/dev/shm", NULL};

/* where the runner finds libmlx.so when MLX is not installed where it was built
 * (LD_LIBRARY_PATH); whether MLX batches kernels into CUDA graphs and how many; TF32 for
 * float32 matmuls (the runner turns it off unless set: device_mlx.c); the shim's trace
 * (mlx_shim.cpp) */
static const char *const mlx_env[] = {"LD_LIBRARY_PATH", "MLX_USE_CUDA_GRAPHS",
				      "MLX_MAX_OPS_PER_BUFFER", "MLX_MAX_MB_PER_BUFFER",
				      "MLX_ENABLE_TF32", "KSEARCH_MLX_TRACE", NULL};

/* macOS (Seatbelt): what Metal reaches outside the process, by the names Apple's frameworks
 * use: the compiler service that builds a custom kernel's source, and the user clients of
 * the GPU's driver and of IOSurface.  Written from those names, not measured: no Mac has run
 * the runner in its sandbox yet (docs/macos.md says how a denial shows and where to add). */
static const char *const mlx_mach[] = {"com.apple.MTLCompilerService", NULL};
static const char *const mlx_iokit[] = {"AGXDeviceUserClient", "AGXSharedUserClient",
					"IOSurfaceRootUserClient", NULL};

const struct ks_sandbox_needs ks_sandbox_mlx = {
	.unlimited_address_space = 1,
	.read_paths = mlx_read,
	.device_prefixes = mlx_devices,
	.rw_paths = mlx_rw,
	.unix_sockets = 1,
	.syscalls = ks_sandbox_gpu_syscalls, /* MLX on a GPU drives the CUDA driver */
	.artifact_folder = 1, /* KSEARCH_MLX_HEADER=file: header.cuh beside the artifact */
	.env = mlx_env,
	.wx_memory = 1, /* as CUDA's: not measured with the driver */
	.mach_services = mlx_mach,
	.iokit_classes = mlx_iokit,
};

int ks_sandbox_mlx_add_read(const char *path)
{
	for (int i = 0; i < mlx_nread; i++)
		if (!strcmp(mlx_read[i], path))
			return 0;
	if (mlx_nread == MLX_READS)
		return -1;
	mlx_read[mlx_nread++] = path;
	mlx_read[mlx_nread] = NULL;
	return 0;
}
