/* Ground truth for matmul: every output accumulated in double, rounded to float once.
 * The i-p-j order (a row of double accumulators updated with rows of b) keeps every access
 * unit-stride, so the 8192^3 GPU workloads' reference finishes in seconds, not hours; the
 * pragma only parallelises rows when the file is built with OpenMP. */
#include <stdint.h>
#include <stdlib.h>

void matmul(const float *a, const float *b, float *c, int32_t m, int32_t n, int32_t k)
{
#pragma omp parallel for schedule(dynamic, 1)
	for (int64_t i = 0; i < m; i++) {
		double *acc = calloc((size_t)n, sizeof(double));
		if (!acc)
			continue; /* c keeps its poison (NaN), so the failure cannot pass */
		for (int64_t p = 0; p < k; p++) {
			const double ai = a[i * k + p];
			const float *bp = b + p * n;
			for (int64_t j = 0; j < n; j++)
				acc[j] += ai * (double)bp[j];
		}
		for (int64_t j = 0; j < n; j++)
			c[i * n + j] = (float)acc[j];
		free(acc);
	}
}
