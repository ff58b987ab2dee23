/* Naive CUDA matmul: one thread per element of C, a dot product over k straight from
 * global memory (no shared-memory reuse, no register blocking). */
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void matmul_naive(const float *a, const float *b, float *c, int32_t m, int32_t n,
			     int32_t k)
{
	int32_t col = blockIdx.x * blockDim.x + threadIdx.x;
	int32_t row = blockIdx.y * blockDim.y + threadIdx.y;
	if (row >= m || col >= n)
		return;
	const float *ar = a + (int64_t)row * k;
	float acc = 0.0f;
	for (int32_t p = 0; p < k; p++)
		acc += ar[p] * b[(int64_t)p * n + col];
	c[(int64_t)row * n + col] = acc;
}

void matmul(const float *a, const float *b, float *c, int32_t m, int32_t n, int32_t k,
	    cudaStream_t stream)
{
	if (m <= 0 || n <= 0)
		return;
	dim3 block(16, 16), grid((n + 15) / 16, (m + 15) / 16);
	matmul_naive<<<grid, block, 0, stream>>>(a, b, c, m, n, k);
}
