/* Ground truth for selective_scan: the recurrence of mamba_ssm's selective_scan_ref in
 * double, output rounded to f16 once. softplus uses PyTorch's threshold (x > 20: x).
 * PARALLEL_FOR parallelises over channels only when the file is built with OpenMP. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* a variant's wrapper defines SS_GATE 0 (no z input: y = C.h + D*u) and its entry's name */
#ifndef SS_GATE
#define SS_GATE 1
#define SS_FN selective_scan
#endif

/* rows / heads / channels in parallel when built with OpenMP, silently serial otherwise */
#ifdef _OPENMP
#define PARALLEL_FOR _Pragma("omp parallel for schedule(static)")
#else
#define PARALLEL_FOR
#endif

void SS_FN(const _Float16 *u, const _Float16 *delta, const float *A, const _Float16 *B,
		    const _Float16 *C, const float *D,
#if SS_GATE
		    const _Float16 *z,
#endif
		    const float *delta_bias,
		    _Float16 *y, int32_t batch, int32_t dim, int32_t seqlen, int32_t dstate)
{
	PARALLEL_FOR
	for (int64_t bd = 0; bd < (int64_t)batch * dim; bd++) {
		const int64_t b = bd / dim, d = bd % dim;
		const int64_t row = bd * seqlen;
		const _Float16 *Bb = B + b * dstate * seqlen, *Cb = C + b * dstate * seqlen;
		double *h = calloc((size_t)dstate, sizeof(double));
		if (!h)
			continue; /* y stays unwritten, so the comparison cannot pass */
		for (int64_t t = 0; t < seqlen; t++) {
			double dt = (double)delta[row + t] + (double)delta_bias[d];
			dt = dt <= 20.0 ? log1p(exp(dt)) : dt;
			const double ut = u[row + t];
			double acc = 0.0;
			for (int64_t n = 0; n < dstate; n++) {
				const double a = exp(dt * (double)A[d * dstate + n]);
				h[n] = a * h[n] + dt * (double)Bb[n * seqlen + t] * ut;
				acc += (double)Cb[n * seqlen + t] * h[n];
			}
			acc += (double)D[d] * ut;
#if SS_GATE
			const double zt = z[row + t];
			acc *= zt / (1.0 + exp(-zt));
#endif
			y[row + t] = (_Float16)acc;
		}
		free(h);
	}
}
