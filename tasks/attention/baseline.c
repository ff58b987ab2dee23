/* Naive attention: for every query a full row of scores in float, a three-pass softmax with
 * libm expf, then the weighted sum of v; scalar, one thread. Query head h reads kv head
 * h / (heads / kv_heads); the causal mask is top-left aligned (query i sees keys 0..i). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void attention(const _Float16 *q, const _Float16 *k, const _Float16 *v, _Float16 *o,
	       int32_t batch, int32_t heads, int32_t kv_heads, int32_t seqlen, int32_t kv_seqlen,
	       int32_t head_dim, int32_t causal)
{
	const float scale = 1.0f / sqrtf((float)head_dim);
	const int32_t group = heads / kv_heads;
	float *s = malloc(sizeof(float) * (size_t)kv_seqlen);
	float *acc = malloc(sizeof(float) * (size_t)head_dim);
	if (!s || !acc)
		goto out;
	for (int32_t bh = 0; bh < batch * heads; bh++) {
		const int64_t base = (int64_t)bh * seqlen * head_dim;
		const int64_t kvh = (int64_t)(bh / heads) * kv_heads + bh % heads / group;
		const int64_t kvbase = kvh * kv_seqlen * head_dim;
		for (int32_t i = 0; i < seqlen; i++) {
			const _Float16 *qi = q + base + (int64_t)i * head_dim;
			const int32_t nkeys = causal && i + 1 < kv_seqlen ? i + 1 : kv_seqlen;
			float m = -INFINITY;
			for (int32_t j = 0; j < nkeys; j++) {
				const _Float16 *kj = k + kvbase + (int64_t)j * head_dim;
				float dot = 0.0f;
				for (int32_t d = 0; d < head_dim; d++)
					dot += (float)qi[d] * (float)kj[d];
				s[j] = dot * scale;
				if (s[j] > m)
					m = s[j];
			}
			float l = 0.0f;
			for (int32_t j = 0; j < nkeys; j++) {
				s[j] = expf(s[j] - m);
				l += s[j];
			}
			for (int32_t d = 0; d < head_dim; d++)
				acc[d] = 0.0f;
			for (int32_t j = 0; j < nkeys; j++) {
				const _Float16 *vj = v + kvbase + (int64_t)j * head_dim;
				for (int32_t d = 0; d < head_dim; d++)
					acc[d] += s[j] * (float)vj[d];
			}
			for (int32_t d = 0; d < head_dim; d++)
				o[base + (int64_t)i * head_dim + d] = (_Float16)(acc[d] / l);
		}
	}
out:
	free(s);
	free(acc);
}
