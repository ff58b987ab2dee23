/* Naive CUDA softmax: one thread per row, three passes over the row (max, exp and sum,
 * scale), plain expf.  Neighbouring threads read addresses a whole row apart, so no load
 * is coalesced: this is the starting point, not a fast kernel. */
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void softmax_row_per_thread(const float *x, float *y, int32_t rows, int32_t cols)
{
	int32_t r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	const float *xr = x + (int64_t)r * cols;
	float *yr = y + (int64_t)r * cols;
	float m = xr[0];
	for (int32_t j = 1; j < cols; j++)
		m = fmaxf(m, xr[j]);
	float s = 0.0f;
	for (int32_t j = 0; j < cols; j++) {
		float e = expf(xr[j] - m);
		yr[j] = e;
		s += e;
	}
	for (int32_t j = 0; j < cols; j++)
		yr[j] = yr[j] / s;
}

void softmax(const float *x, float *y, int32_t rows, int32_t cols, cudaStream_t stream)
{
	if (rows <= 0 || cols <= 0)
		return;
	const int threads = 128;
	softmax_row_per_thread<<<(rows + threads - 1) / threads, threads, 0, stream>>>(x, y, rows,
									     cols);
}
