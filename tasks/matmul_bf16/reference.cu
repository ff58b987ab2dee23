/* Trusted GPU reference for matmul_bf16: what reference.c computes, on the device. ksearch
 * takes the expected outputs of the large workloads (4096^3, 8192^3) from this file, run in
 * a runner process of its own (docs/evaluation.md).
 *
 * Why it can be trusted: each element of c is one double accumulator, summed over
 * p = 0, 1, ..., k-1 in that order with fma() of the bf16 inputs widened to double, then
 * rounded to float and to bf16 (nearest even), exactly as reference.c does. A product of two
 * bf16 numbers is exact in double, so fma and reference.c's multiply-then-add round the same
 * sums the same way: the outputs are reference.c's, bit for bit. 16 x 16 tiles of a and b
 * are staged in shared memory (as doubles); loads past the matrices are bounds-checked and
 * the last tile adds only the terms below k.
 *
 * What validates it: tests/cli/t0400-cuda.sh evaluates this file as a candidate on a GPU,
 * against reference.c on the small workloads and every check, and requires zero error. */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#define T 16

__global__ void matmul_bf16_reference(const __nv_bfloat16 *a, const __nv_bfloat16 *b,
				      __nv_bfloat16 *c, int32_t m, int32_t n, int32_t k,
				      int64_t row0)
{
	__shared__ double as[T][T], bs[T][T];
	const int tx = threadIdx.x, ty = threadIdx.y;
	const int64_t row = row0 + (int64_t)blockIdx.y * T + ty;
	const int64_t col = (int64_t)blockIdx.x * T + tx;
	double acc = 0.0;
	for (int64_t p0 = 0; p0 < k; p0 += T) {
		as[ty][tx] = row < m && p0 + tx < k ? (double)__bfloat162float(a[row * k + p0 + tx])
						    : 0.0;
		bs[ty][tx] = p0 + ty < k && col < n
				     ? (double)__bfloat162float(b[(p0 + ty) * n + col])
				     : 0.0;
		__syncthreads();
		const int steps = k - p0 < T ? (int)(k - p0) : T;
		for (int q = 0; q < steps; q++)
			acc = fma(as[ty][q], bs[q][tx], acc);
		__syncthreads();
	}
	if (row < m && col < n)
		c[row * n + col] = __float2bfloat16_rn((float)acc);
}

void matmul_bf16(const __nv_bfloat16 *a, const __nv_bfloat16 *b, __nv_bfloat16 *c, int32_t m,
		 int32_t n, int32_t k, cudaStream_t stream)
{
	if (m <= 0 || n <= 0)
		return;
	/* gridDim.y is at most 65535: very tall matrices take several launches */
	const int64_t rows_per_launch = (int64_t)65535 * T;
	for (int64_t r0 = 0; r0 < m; r0 += rows_per_launch) {
		const int64_t rows = m - r0 < rows_per_launch ? m - r0 : rows_per_launch;
		dim3 block(T, T), grid((unsigned)(((int64_t)n + T - 1) / T),
				       (unsigned)((rows + T - 1) / T));
		matmul_bf16_reference<<<grid, block, 0, stream>>>(a, b, c, m, n, k, r0);
	}
}
