/* Ground truth for selective_scan: the recurrence of mamba_ssm's selective_scan_ref in
 * double, output rounded to f16 once. softplus uses PyTorch's threshold (x > 20: x). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void selective_scan(const _Float16 *u, const _Float16 *delta, const float *A, const _Float16 *B,
		    const _Float16 *C, const float *D, const _Float16 *z, const float *delta_bias,
		    _Float16 *y, int32_t batch, int32_t dim, int32_t seqlen, int32_t dstate)
{
	double *h = malloc(sizeof(double) * (size_t)dstate);
	if (!h)
		return;
	for (int64_t b = 0; b < batch; b++)
		for (int64_t d = 0; d < dim; d++) {
			const int64_t row = (b * dim + d) * seqlen;
			const _Float16 *Bb = B + b * dstate * seqlen, *Cb = C + b * dstate * seqlen;
			for (int64_t n = 0; n < dstate; n++)
				h[n] = 0.0;
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
				const double zt = z[row + t];
				acc *= zt / (1.0 + exp(-zt));
				y[row + t] = (_Float16)acc;
			}
		}
	free(h);
}
