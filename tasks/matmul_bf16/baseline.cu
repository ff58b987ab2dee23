/* Naive CUDA matmul_bf16: one thread per element of C, a float dot product over k straight
 * from global memory (no shared memory, no tensor cores), rounded to bf16 once. */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void matmul_bf16_naive(const __nv_bfloat16 *a, const __nv_bfloat16 *b,
				  __nv_bfloat16 *c, int32_t m, int32_t n, int32_t k)
{
	int32_t col = blockIdx.x * blockDim.x + threadIdx.x;
	int32_t row = blockIdx.y * blockDim.y + threadIdx.y;
	if (row >= m || col >= n)
		return;
	const __nv_bfloat16 *ar = a + (int64_t)row * k;
	float acc = 0.0f;
	for (int32_t p = 0; p < k; p++)
		acc += __bfloat162float(ar[p]) * __bfloat162float(b[(int64_t)p * n + col]);
	c[(int64_t)row * n + col] = __float2bfloat16_rn(acc);
}

void matmul_bf16(const __nv_bfloat16 *a, const __nv_bfloat16 *b, __nv_bfloat16 *c, int32_t m,
		 int32_t n, int32_t k, cudaStream_t stream)
{
	if (m <= 0 || n <= 0)
		return;
	dim3 block(16, 16), grid((n + 15) / 16, (m + 15) / 16);
	matmul_bf16_naive<<<grid, block, 0, stream>>>(a, b, c, m, n, k);
}
