// MLX's CUDA stream seen from the shim (mlx_shim.cpp): an eval that ends with an event on
// the stream MLX launches on, so an illegal address or a launch failure is an error here
// (MLX's own wait ignores cudaEventSynchronize's result) and the GPU time between two
// events is known.  mlx_cuda.cpp where CUDA's headers were found at build time (it reaches
// MLX's command encoder through the symbol the CUDA build exports, so the runner still
// links against the CPU build); mlx_cuda_none.cpp elsewhere.
#ifndef KS_RUNNER_MLX_CUDA_H
#define KS_RUNNER_MLX_CUDA_H

#include <string>
#include <vector>

#include "mlx/mlx.h"

// 1: not possible here (no CUDA backend, the default device is not a CUDA GPU, no CUDA
// headers at build time): the caller evaluates as usual.  0: evaluated, *gpu_ms the
// events' elapsed time.  -1: a CUDA error, err says which.
int ks_mlx_cuda_eval(const std::vector<mlx::core::array> &arrs, float *gpu_ms,
		     std::string &err);

#endif
