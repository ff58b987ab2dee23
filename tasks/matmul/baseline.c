/* Naive matmul: one float dot product per output element, i-j-p loop order, one thread. */
#include <stdint.h>

void matmul(const float *a, const float *b, float *c, int32_t m, int32_t n, int32_t k)
{
	for (int32_t i = 0; i < m; i++)
		for (int32_t j = 0; j < n; j++) {
			float s = 0.0f;
			for (int32_t p = 0; p < k; p++)
				s += a[(int64_t)i * k + p] * b[(int64_t)p * n + j];
			c[(int64_t)i * n + j] = s;
		}
}
