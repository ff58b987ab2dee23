/* Ground truth for matmul: every dot product accumulated in double, rounded once. */
#include <stdint.h>

void matmul(const float *a, const float *b, float *c, int32_t m, int32_t n, int32_t k)
{
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double s = 0.0;
			for (int64_t p = 0; p < k; p++)
				s += (double)a[i * k + p] * (double)b[p * n + j];
			c[i * n + j] = (float)s;
		}
}
