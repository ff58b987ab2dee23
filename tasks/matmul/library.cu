/* The library yardstick on CUDA: cuBLAS's cublasSgemm in full fp32 (no TF32: the task's l2
 * bound refuses it).  cuBLAS is column-major, so the row-major C = A B is computed as
 * C^T = B^T A^T.  One handle for the process, created on the first call and set to
 * ksearch's stream on every call. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>

static cublasHandle_t handle;

void matmul(const float *a, const float *b, float *c, int32_t m, int32_t n, int32_t k,
	    cudaStream_t stream)
{
	if (m <= 0 || n <= 0)
		return;
	if (!handle && (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS ||
			cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH) != CUBLAS_STATUS_SUCCESS))
		return; /* c keeps its poison: the reference check reports the library */
	const float one = 1.0f, zero = 0.0f;
	cublasSetStream(handle, stream);
	cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n);
}
