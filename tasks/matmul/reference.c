/* Ground truth for matmul: every output accumulated in double, rounded to float once.
 * Rows are processed in groups of 8 with i-p-j order (rows of double accumulators updated
 * with rows of b): every access is unit-stride and b is streamed once per 8 rows, so the
 * reference for the 8192^3 GPU workload takes seconds, not hours. PARALLEL_FOR parallelises
 * row groups only when the file is built with OpenMP. */
#include <stdint.h>
#include <stdlib.h>

/* rows / heads / channels in parallel when built with OpenMP, silently serial otherwise */
#ifdef _OPENMP
#define PARALLEL_FOR _Pragma("omp parallel for schedule(dynamic, 1)")
#else
#define PARALLEL_FOR
#endif

#define RB 8

void matmul(const float *a, const float *b, float *c, int32_t m, int32_t n, int32_t k)
{
	const int64_t groups = ((int64_t)m + RB - 1) / RB;
	PARALLEL_FOR
	for (int64_t g = 0; g < groups; g++) {
		const int64_t i0 = g * RB;
		const int64_t rows = m - i0 < RB ? m - i0 : RB;
		double *acc = calloc((size_t)(rows * n), sizeof(double));
		if (!acc)
			continue; /* c rows stay unwritten, so the comparison cannot pass */
		for (int64_t p = 0; p < k; p++) {
			const float *bp = b + p * n;
			for (int64_t r = 0; r < rows; r++) {
				const double air = a[(i0 + r) * k + p];
				double *ar = acc + r * n;
				for (int64_t j = 0; j < n; j++)
					ar[j] += air * (double)bp[j];
			}
		}
		for (int64_t r = 0; r < rows; r++)
			for (int64_t j = 0; j < n; j++)
				c[(i0 + r) * n + j] = (float)acc[r * n + j];
		free(acc);
	}
}
