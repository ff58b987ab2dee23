/* The library yardstick on CUDA: cuBLAS's cublasGemmEx with bf16 inputs and output and fp32
 * compute (the tensor cores).  cuBLAS is column-major, so the row-major C = A B is computed
 * as C^T = B^T A^T.  One handle for the process, created on the first call and set to
 * ksearch's stream on every call. */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

static cublasHandle_t handle;

void matmul_bf16(const __nv_bfloat16 *a, const __nv_bfloat16 *b, __nv_bfloat16 *c, int32_t m,
		 int32_t n, int32_t k, cudaStream_t stream)
{
	if (m <= 0 || n <= 0)
		return;
	if (!handle && cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS)
		return; /* c keeps its poison: the reference check reports the library */
	const float one = 1.0f, zero = 0.0f;
	cublasSetStream(handle, stream);
	cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_16BF, n, a,
		     CUDA_R_16BF, k, &zero, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
		     CUBLAS_GEMM_DEFAULT);
}
