/* Naive attention: for every query a full row of scores in float, a three-pass softmax with
 * libm expf, then the weighted sum of v; scalar, one thread. Query head h reads kv head
 * h / (heads / kv_heads); the causal mask is top-left aligned (query i sees keys 0..i). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The element type of q, k, v, o.  A variant's wrapper (tasks/attention_bf16/baseline.c)
 * defines ATTN_BF16 1 and its entry point's name before including this file. */
#ifndef ATTN_BF16
#define ATTN_BF16 0
#define ATTN_FN attention
#endif

#if ATTN_BF16
/* bf16 is its bit pattern in C (docs/abi.md): widen exactly, round to nearest even */
#define ATTN_T uint16_t
static inline float bf16_to_float(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

static inline uint16_t float_to_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu))
		return (uint16_t)((u >> 16) | 0x40); /* NaN stays NaN */
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}
#define ATTN_LOAD(x) bf16_to_float(x)
#define ATTN_STORE(f) float_to_bf16(f)
#else
#define ATTN_T _Float16
#define ATTN_LOAD(x) ((float)(x))
#define ATTN_STORE(f) ((_Float16)(f))
#endif

void ATTN_FN(const ATTN_T *q, const ATTN_T *k, const ATTN_T *v, ATTN_T *o, int32_t batch,
	     int32_t heads, int32_t kv_heads, int32_t seqlen, int32_t kv_seqlen, int32_t head_dim,
	     int32_t causal)
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
			const ATTN_T *qi = q + base + (int64_t)i * head_dim;
			const int32_t nkeys = causal && i + 1 < kv_seqlen ? i + 1 : kv_seqlen;
			float m = -INFINITY;
			for (int32_t j = 0; j < nkeys; j++) {
				const ATTN_T *kj = k + kvbase + (int64_t)j * head_dim;
				float dot = 0.0f;
				for (int32_t d = 0; d < head_dim; d++)
					dot += ATTN_LOAD(qi[d]) * ATTN_LOAD(kj[d]);
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
				const ATTN_T *vj = v + kvbase + (int64_t)j * head_dim;
				for (int32_t d = 0; d < head_dim; d++)
					acc[d] += s[j] * ATTN_LOAD(vj[d]);
			}
			for (int32_t d = 0; d < head_dim; d++)
				o[base + (int64_t)i * head_dim + d] = ATTN_STORE(acc[d] / l);
		}
	}
out:
	free(s);
	free(acc);
}
