/* Naive selective scan: one channel at a time, the dstate recurrence in float with libm
 * expf, reading B and C straight from their [batch, dstate, seqlen] layout; one thread. */
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

void SS_FN(const ss_t *u, const ss_t *delta, const float *A, const ss_t *B,
		    const ss_t *C, const float *D,
#if SS_GATE
		    const ss_t *z,
#endif
		    const float *delta_bias,
		    ss_t *y, int32_t batch, int32_t dim, int32_t seqlen, int32_t dstate)
{
	float *h = malloc(sizeof(float) * (size_t)dstate);
	if (!h)
		return;
	for (int32_t b = 0; b < batch; b++)
		for (int32_t d = 0; d < dim; d++) {
			const int64_t row = ((int64_t)b * dim + d) * seqlen;
			const ss_t *Bb = B + (int64_t)b * dstate * seqlen;
			const ss_t *Cb = C + (int64_t)b * dstate * seqlen;
			for (int32_t n = 0; n < dstate; n++)
				h[n] = 0.0f;
			for (int32_t t = 0; t < seqlen; t++) {
				float dt = (float)delta[row + t] + delta_bias[d];
				if (dt <= 20.0f)
					dt = log1pf(expf(dt));
				const float ut = (float)u[row + t];
				float acc = 0.0f;
				for (int32_t n = 0; n < dstate; n++) {
					h[n] = expf(dt * A[(int64_t)d * dstate + n]) * h[n] +
					       dt * (float)Bb[(int64_t)n * seqlen + t] * ut;
					acc += (float)Cb[(int64_t)n * seqlen + t] * h[n];
				}
				acc += D[d] * ut;
#if SS_GATE
				const float zt = (float)z[row + t];
				acc *= zt / (1.0f + expf(-zt));
#endif
				y[row + t] = (ss_t)acc;
			}
		}
	free(h);
}
