/* Ground truth for softmax: max, sum and quotient in double, rounded to float once.
 * PARALLEL_FOR parallelises over rows only when the file is built with OpenMP. */
#include <math.h>
#include <stdint.h>

/* rows / heads / channels in parallel when built with OpenMP, silently serial otherwise */
#ifdef _OPENMP
#define PARALLEL_FOR _Pragma("omp parallel for schedule(static)")
#else
#define PARALLEL_FOR
#endif

void softmax(const float *x, float *y, int32_t rows, int32_t cols)
{
	PARALLEL_FOR
	for (int64_t r = 0; r < rows; r++) {
		const float *xr = x + r * (int64_t)cols;
		float *yr = y + r * (int64_t)cols;
		double m = -INFINITY;
		for (int32_t j = 0; j < cols; j++)
			if (xr[j] > m)
				m = xr[j];
		/* subtracting the maximum keeps exp() finite; the largest term is exactly 1 */
		double s = 0.0;
		for (int32_t j = 0; j < cols; j++)
			s += exp((double)xr[j] - m);
		for (int32_t j = 0; j < cols; j++)
			yr[j] = (float)(exp((double)xr[j] - m) / s);
	}
}
