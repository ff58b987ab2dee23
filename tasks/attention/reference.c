/* Ground truth for attention: scores, softmax and the weighted sum of v all in double,
 * rounded to f16 once at the end. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void attention(const _Float16 *q, const _Float16 *k, const _Float16 *v, _Float16 *o,
	       int32_t batch, int32_t heads, int32_t seqlen, int32_t head_dim, int32_t causal)
{
	const double scale = 1.0 / sqrt((double)head_dim);
	double *s = malloc(sizeof(double) * (size_t)seqlen);
	double *acc = malloc(sizeof(double) * (size_t)head_dim);
	if (!s || !acc)
		goto out;
	for (int64_t bh = 0; bh < (int64_t)batch * heads; bh++) {
		const int64_t base = bh * seqlen * head_dim;
		for (int64_t i = 0; i < seqlen; i++) {
			const _Float16 *qi = q + base + i * head_dim;
			/* query i sees keys 0..i under the causal mask, all keys otherwise */
			const int64_t nkeys = causal ? i + 1 : seqlen;
			double m = -INFINITY;
			for (int64_t j = 0; j < nkeys; j++) {
				const _Float16 *kj = k + base + j * head_dim;
				double dot = 0.0;
				for (int64_t d = 0; d < head_dim; d++)
					dot += (double)qi[d] * (double)kj[d];
				s[j] = dot * scale;
				if (s[j] > m)
					m = s[j];
			}
			double l = 0.0;
			for (int64_t d = 0; d < head_dim; d++)
				acc[d] = 0.0;
			for (int64_t j = 0; j < nkeys; j++) {
				const double p = exp(s[j] - m);
				const _Float16 *vj = v + base + j * head_dim;
				l += p;
				for (int64_t d = 0; d < head_dim; d++)
					acc[d] += p * (double)vj[d];
			}
			for (int64_t d = 0; d < head_dim; d++)
				o[base + i * head_dim + d] = (_Float16)(acc[d] / l);
		}
	}
out:
	free(s);
	free(acc);
}
