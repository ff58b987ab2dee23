// ks_mlx_cuda_eval where the runner was built without CUDA's headers (mlx_cuda.h)
#include "runner/mlx_cuda.h"

int ks_mlx_cuda_eval(const std::vector<mlx::core::array> &, float *, std::string &)
{
	return 1;
}
