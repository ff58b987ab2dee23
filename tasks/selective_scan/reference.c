/* Ground truth for selective_scan: the recurrence of mamba_ssm's selective_scan_ref in
 * double, output rounded to f16 (f32 with SS_F32) once. softplus uses PyTorch's threshold
 * (x > 20: x).
 * PARALLEL_FOR parallelises over channels only when the file is built with OpenMP. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* a variant's wrapper defines SS_GATE (0: no z input, y = C.h + D*u), SS_F32 (1: f32 u, delta,
 * B, C, z and y instead of f16; left undefined it is 0) and its entry's name SS_FN */
#ifndef SS_GATE
#define SS_GATE 1
#define SS_F32 0
#define SS_FN selective_scan
#endif
#if SS_F32
typedef float ss_t; /* the element type of u, delta, B, C, z and y */
#else
typedef _Float16 ss_t;
#endif

/* rows / heads / channels in parallel when built with OpenMP, silently serial otherwise */
#ifdef _OPENMP
#define PARALLEL_FOR _Pragma("omp parallel for schedule(static)")
#else
#define PARALLEL_FOR
#endif

void SS_FN(const ss_t *u, const ss_t *delta, const float *A, const ss_t *B,
		    const ss_t *C, const float *D,
#if SS_GATE
		    const ss_t *z,
#endif
		    const float *delta_bias,
		    ss_t *y, int32_t batch, int32_t dim, int32_t seqlen, int32_t dstate)
{
	PARALLEL_FOR
	for (int64_t bd = 0; bd < (int64_t)batch * dim; bd++) {
		const int64_t b = bd / dim, d = bd % dim;
		const int64_t row = bd * seqlen;
		const ss_t *Bb = B + b * dstate * seqlen, *Cb = C + b * dstate * seqlen;
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
			y[row + t] = (ss_t)acc;
		}
		free(h);
	}
}
