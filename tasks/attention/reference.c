/* Ground truth for attention: scores, softmax and the weighted sum of v all in double,
 * rounded to f16 once at the end. K is transposed to double per head so the score loop is
 * unit-stride (the GPU workloads' reference then takes seconds); PARALLEL_FOR parallelises
 * over (batch, head) only when the file is built with OpenMP. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* rows / heads / channels in parallel when built with OpenMP, silently serial otherwise */
#ifdef _OPENMP
#define PARALLEL_FOR _Pragma("omp parallel for schedule(dynamic, 1)")
#else
#define PARALLEL_FOR
#endif

static void head(const _Float16 *q, const _Float16 *k, const _Float16 *v, _Float16 *o,
		 int64_t seqlen, int64_t hd, int causal, double *kt, double *s, double *acc)
{
	const double scale = 1.0 / sqrt((double)hd);
	for (int64_t j = 0; j < seqlen; j++)
		for (int64_t d = 0; d < hd; d++)
			kt[d * seqlen + j] = (double)k[j * hd + d];
	for (int64_t i = 0; i < seqlen; i++) {
		/* query i sees keys 0..i under the causal mask, all keys otherwise */
		const int64_t nkeys = causal ? i + 1 : seqlen;
		for (int64_t j = 0; j < nkeys; j++)
			s[j] = 0.0;
		for (int64_t d = 0; d < hd; d++) {
			const double qd = (double)q[i * hd + d];
			const double *kd = kt + d * seqlen;
			for (int64_t j = 0; j < nkeys; j++)
				s[j] += qd * kd[j];
		}
		double m = -INFINITY;
		for (int64_t j = 0; j < nkeys; j++) {
			s[j] *= scale;
			if (s[j] > m)
				m = s[j];
		}
		double l = 0.0;
		for (int64_t d = 0; d < hd; d++)
			acc[d] = 0.0;
		for (int64_t j = 0; j < nkeys; j++) {
			const double p = exp(s[j] - m);
			l += p;
			for (int64_t d = 0; d < hd; d++)
				acc[d] += p * (double)v[j * hd + d];
		}
		for (int64_t d = 0; d < hd; d++)
			o[i * hd + d] = (_Float16)(acc[d] / l);
	}
}

void attention(const _Float16 *q, const _Float16 *k, const _Float16 *v, _Float16 *o,
	       int32_t batch, int32_t heads, int32_t seqlen, int32_t head_dim, int32_t causal)
{
	PARALLEL_FOR
	for (int64_t bh = 0; bh < (int64_t)batch * heads; bh++) {
		double *kt = malloc(sizeof(double) * ((size_t)seqlen * head_dim + seqlen + head_dim));
		if (!kt)
			continue; /* o stays unwritten, so the comparison cannot pass */
		const int64_t base = bh * seqlen * head_dim;
		head(q + base, k + base, v + base, o + base, seqlen, head_dim, causal, kt,
		     kt + (size_t)seqlen * head_dim, kt + (size_t)seqlen * head_dim + seqlen);
		free(kt);
	}
}
