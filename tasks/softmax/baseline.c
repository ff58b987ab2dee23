/* Naive softmax: three passes per row (max, exp and sum, scale), scalar, one thread. */
#include <math.h>
#include <stdint.h>

void softmax(const float *x, float *y, int32_t rows, int32_t cols)
{
	for (int32_t r = 0; r < rows; r++) {
		const float *xr = x + (int64_t)r * cols;
		float *yr = y + (int64_t)r * cols;
		float m = xr[0];
		for (int32_t j = 1; j < cols; j++)
			if (xr[j] > m)
				m = xr[j];
		float s = 0.0f;
		for (int32_t j = 0; j < cols; j++) {
			yr[j] = expf(xr[j] - m);
			s += yr[j];
		}
		for (int32_t j = 0; j < cols; j++)
			yr[j] = yr[j] / s;
	}
}
