/* The numerics of templates/cuda/flash2.cu on the CPU, for measuring the tolerance without a
 * GPU (measure.sh; not a candidate kernel): per query row, key tiles of BN; S in fp32 from
 * the widened inputs; m' = max(m, c*max S), P = 2^(c*S - m') in fp32, l = l*alpha + sum P
 * (P unrounded, as flash2 sums it), O = O*alpha + round16(P) V in fp32, o = round16(O / l).
 * round16 is the element type's rounding to nearest (f16 or bf16), as packing P into the
 * MMA's A operand does; PROUND=0 leaves P in fp32. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifndef ATTN_BF16
#define ATTN_BF16 0
#define ATTN_FN attention
#endif
#ifndef BN
#define BN 64
#endif
#ifndef PROUND
#define PROUND 1
#endif
#if ATTN_BF16
#define ATTN_T uint16_t
static inline float bf16_to_float(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static inline uint16_t float_to_bf16(float f) { uint32_t u; memcpy(&u, &f, 4); u += 0x7fffu + ((u >> 16) & 1u); return (uint16_t)(u >> 16); }
#define ATTN_LOAD(x) bf16_to_float(x)
#define ATTN_STORE(f) float_to_bf16(f)
#else
#define ATTN_T _Float16
#define ATTN_LOAD(x) ((float)(x))
#define ATTN_STORE(f) ((_Float16)(f))
#endif
#define ROUND16(f) (PROUND ? ATTN_LOAD(ATTN_STORE(f)) : (f))

void ATTN_FN(const ATTN_T *q, const ATTN_T *k, const ATTN_T *v, ATTN_T *o, int32_t batch,
	     int32_t heads, int32_t kv_heads, int32_t seqlen, int32_t kv_seqlen, int32_t hd,
	     int32_t causal)
{
	const float c = 1.0f / sqrtf((float)hd) * 1.4426950408889634f;
	const int32_t group = heads / kv_heads;
#pragma omp parallel for schedule(dynamic, 1)
	for (int64_t bh = 0; bh < (int64_t)batch * heads; bh++) {
		float *kf = malloc(sizeof(float) * (size_t)kv_seqlen * hd * 2), *vf = kf + (size_t)kv_seqlen * hd;
		float qf[512], acc[512], s[BN];
		const int64_t kvh = bh / heads * kv_heads + bh % heads / group;
		for (int64_t e = 0; e < (int64_t)kv_seqlen * hd; e++) {
			kf[e] = ATTN_LOAD(k[kvh * kv_seqlen * hd + e]);
			vf[e] = ATTN_LOAD(v[kvh * kv_seqlen * hd + e]);
		}
		for (int32_t i = 0; i < seqlen; i++) {
			const ATTN_T *qi = q + (bh * seqlen + i) * hd;
			for (int32_t d = 0; d < hd; d++) { qf[d] = ATTN_LOAD(qi[d]); acc[d] = 0.0f; }
			const int32_t nk = causal && i + 1 < kv_seqlen ? i + 1 : kv_seqlen;
			float m = -INFINITY, l = 0.0f;
			for (int32_t j0 = 0; j0 < nk; j0 += BN) {
				const int32_t n = nk - j0 < BN ? nk - j0 : BN;
				float mx = -INFINITY;
				for (int32_t j = 0; j < n; j++) {
					float dot = 0.0f;
					const float *kj = kf + (int64_t)(j0 + j) * hd;
					for (int32_t d = 0; d < hd; d++) dot = fmaf(qf[d], kj[d], dot);
					s[j] = dot;
					mx = fmaxf(mx, dot);
				}
				const float mn = fmaxf(m, mx * c);
				const float alpha = exp2f(m - mn);
				float sum = 0.0f;
				for (int32_t j = 0; j < n; j++) { s[j] = exp2f(fmaf(s[j], c, -mn)); sum += s[j]; }
				l = l * alpha + sum;
				m = mn;
				for (int32_t d = 0; d < hd; d++) acc[d] *= alpha;
				for (int32_t j = 0; j < n; j++) {
					const float p = ROUND16(s[j]);
					const float *vj = vf + (int64_t)(j0 + j) * hd;
					for (int32_t d = 0; d < hd; d++) acc[d] = fmaf(p, vj[d], acc[d]);
				}
			}
			const float inv = 1.0f / l;
			for (int32_t d = 0; d < hd; d++) o[(bh * seqlen + i) * hd + d] = ATTN_STORE(acc[d] * inv);
		}
		free(kf);
	}
}
