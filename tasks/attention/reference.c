/* Ground truth for attention: scores, softmax and the weighted sum of v all in double,
 * rounded to f16 (bf16 for attention_bf16) once at the end. K is transposed to double per
 * head so the score loop is unit-stride (the GPU workloads' reference then takes seconds);
 * PARALLEL_FOR parallelises over (batch, head) only when the file is built with OpenMP.
 * The semantics (README.md): query head h reads kv head h / (heads / kv_heads); the causal
 * mask is top-left aligned. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The element type of q, k, v, o.  A variant's wrapper (tasks/attention_bf16/reference.c)
 * defines ATTN_BF16 1 and its entry point's name before including this file. */
#ifndef ATTN_BF16
#define ATTN_BF16 0
#define ATTN_FN attention
#endif

#if ATTN_BF16
/* bf16 is its bit pattern in C (docs/abi.md); widening is exact */
#define ATTN_T uint16_t
static float bf16_to_float(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

/* double -> bf16 rounded to nearest even ONCE.  (float)x then float -> bf16 would round
 * twice, one bf16 unit off where the first rounding lands on a tie the exact value is not
 * at; so an inexact float is made round-to-odd (truncated, lowest bit set: 24 bits keep
 * the sticky information for the 8-bit rounding that follows). */
static uint16_t double_to_bf16(double x)
{
	const float f = (float)x;
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	if (isfinite(f) && (double)f != x) {
		if (fabs((double)f) > fabs(x))
			u--; /* rounded away from zero: the float below it in magnitude */
		u |= 1u;
	}
	if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu))
		return (uint16_t)((u >> 16) | 0x40); /* NaN stays NaN */
	u += 0x7fffu + ((u >> 16) & 1u);     /* round to nearest, ties to even */
	return (uint16_t)(u >> 16);
}
#define ATTN_LOAD(x) bf16_to_float(x)
#define ATTN_STORE(d) double_to_bf16(d)
#else
#define ATTN_T _Float16
#define ATTN_LOAD(x) ((float)(x)) /* exact, as is the float -> double that follows */
#define ATTN_STORE(d) ((_Float16)(d)) /* one rounding, double -> f16 */
#endif

/* rows / heads / channels in parallel when built with OpenMP, silently serial otherwise */
#ifdef _OPENMP
#define PARALLEL_FOR _Pragma("omp parallel for schedule(dynamic, 1)")
#else
#define PARALLEL_FOR
#endif

/* Keys query i sees: all kv_seqlen without the mask; with it (top-left aligned, torch's
 * is_causal) keys 0..i, which is all of them for rows i >= kv_seqlen. Never zero. */
static int64_t visible(int64_t i, int64_t kv_seqlen, int causal)
{
	return causal && i + 1 < kv_seqlen ? i + 1 : kv_seqlen;
}

/* The rows of query head h (q, o: seqlen x hd) against its kv head (k, v: kv_seqlen x hd). */
static void head(const ATTN_T *q, const ATTN_T *k, const ATTN_T *v, ATTN_T *o,
		 int64_t seqlen, int64_t kv_seqlen, int64_t hd, int causal, double *kt, double *s,
		 double *acc)
{
	const double scale = 1.0 / sqrt((double)hd);
	for (int64_t j = 0; j < kv_seqlen; j++)
		for (int64_t d = 0; d < hd; d++)
			kt[d * kv_seqlen + j] = (double)ATTN_LOAD(k[j * hd + d]);
	for (int64_t i = 0; i < seqlen; i++) {
		const int64_t nkeys = visible(i, kv_seqlen, causal);
		for (int64_t j = 0; j < nkeys; j++)
			s[j] = 0.0;
		for (int64_t d = 0; d < hd; d++) {
			const double qd = (double)ATTN_LOAD(q[i * hd + d]);
			const double *kd = kt + d * kv_seqlen;
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
				acc[d] += p * (double)ATTN_LOAD(v[j * hd + d]);
		}
		for (int64_t d = 0; d < hd; d++)
			o[i * hd + d] = ATTN_STORE(acc[d] / l);
	}
}

/* Grouped-query heads: query head h of a batch reads kv head h / (heads / kv_heads). */
void ATTN_FN(const ATTN_T *q, const ATTN_T *k, const ATTN_T *v, ATTN_T *o, int32_t batch,
	     int32_t heads, int32_t kv_heads, int32_t seqlen, int32_t kv_seqlen, int32_t head_dim,
	     int32_t causal)
{
	if (kv_heads <= 0 || heads % kv_heads || kv_seqlen <= 0)
		return; /* o stays unwritten, so the comparison cannot pass */
	const int32_t group = heads / kv_heads;
	PARALLEL_FOR
	for (int64_t bh = 0; bh < (int64_t)batch * heads; bh++) {
		const int64_t b = bh / heads, h = bh % heads;
		const int64_t kvh = b * kv_heads + h / group;
		double *kt = malloc(sizeof(double) *
				    ((size_t)kv_seqlen * head_dim + kv_seqlen + head_dim));
		if (!kt)
			continue; /* o stays unwritten, so the comparison cannot pass */
		const int64_t qbase = bh * seqlen * head_dim, kvbase = kvh * kv_seqlen * head_dim;
		head(q + qbase, k + kvbase, v + kvbase, o + qbase, seqlen, kv_seqlen, head_dim,
		     causal, kt, kt + (size_t)kv_seqlen * head_dim,
		     kt + (size_t)kv_seqlen * head_dim + kv_seqlen);
		free(kt);
	}
}
