/* @ksearch
family: materialized-scores
summary: per block of BQ queries the full score rows S = Q K^T (BQ x seqlen) are materialised, softmaxed in three passes, then multiplied by V; K and V of the head are converted to float once per block
rating: 5
difficulty: 2
knobs:
  BQ: {values: [1, 4, 16, 64], default: 16, summary: "queries per block (the converted K^T and V are reused BQ times)", impacts: {memory_bandwidth: 7}}
  RQ: {values: [1, 2, 4], default: 2, summary: "query rows computed together in QK^T and PV", impacts: {register_pressure: 6, compute_hw_fit: 5}}
  VEC: {values: [8, 16], default: 16, summary: "floats per vector (AVX2 or AVX-512 width)", impacts: {compute_hw_fit: 6}}
  EXP: {values: [0, 1], default: 1, summary: "0 libm expf per score, 1 inline vector exp", impacts: {compute_hw_fit: 7}}
  THREADS: {values: [0, 1, 2], default: 0, summary: "OpenMP threads, 0 = all", impacts: {compute_hw_fit: 5}}
  SCHED: {values: [0, 1], default: 1, summary: "0 static, 1 dynamic OpenMP schedule over (head, query block)"}
require:
  - "THREADS <= spec.cores"
  - "VEC * 4 <= spec.simd_bytes"
  - "BQ % RQ == 0"
@end */
/* The textbook formulation: memory O(BQ * kv_seqlen) per thread for the scores, two sweeps
 * over them. It has no online rescaling; its cost is converting all of K and V for every query
 * block, which a large BQ amortises. Query head h reads kv head h / (heads / kv_heads); the
 * causal mask is top-left aligned (query i sees keys 0..i). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

/* The element type of q, k, v, o.  A variant's wrapper
 * (tasks/attention_bf16/templates/cpu/materialized.c) defines ATTN_BF16 1 and its entry point's name
 * before including this file. */
#ifndef ATTN_BF16
#define ATTN_BF16 0
#define ATTN_FN attention
#endif

#if ATTN_BF16
/* bf16 is its bit pattern in C (docs/abi.md): widen exactly (a shift: it vectorises),
 * round to nearest even */
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

#ifndef BQ
#define BQ 16
#endif
#ifndef RQ
#define RQ 2
#endif
#ifndef VEC
#define VEC 16
#endif
#ifndef EXP
#define EXP 1
#endif
#ifndef THREADS
#define THREADS 0
#endif
#ifndef SCHED
#define SCHED 1
#endif

typedef float vf __attribute__((vector_size(VEC * 4)));
typedef int32_t vi __attribute__((vector_size(VEC * 4)));
typedef float vfu __attribute__((vector_size(VEC * 4), aligned(4), may_alias));

static inline vf vload(const float *p) { return *(const vfu *)p; }
static inline void vstore(float *p, vf v) { *(vfu *)p = v; }
static inline vf vsplat(float s) { return (vf){0} + s; }
static inline vf vclamp(vf x, float lo, float hi)
{
	vi a = x < lo, b = x > hi;
	x = (vf)((a & (vi)vsplat(lo)) | (~a & (vi)x));
	return (vf)((b & (vi)vsplat(hi)) | (~b & (vi)x));
}

/* exp(x) = 2^n e^r, Cody-Waite reduction, degree-6 polynomial (rel. error ~1e-7) */
static inline vf vexp(vf x)
{
	x = vclamp(x, -87.0f, 88.0f);
	vf n = x * 1.44269504f;
	n = (n + 12582912.0f) - 12582912.0f;
	vf r = x - n * 0.693145752f;
	r = r - n * 1.42860677e-6f;
	vf p = vsplat(1.0f / 720);
	p = p * r + 1.0f / 120;
	p = p * r + 1.0f / 24;
	p = p * r + 1.0f / 6;
	p = p * r + 0.5f;
	p = p * r + 1.0f;
	p = p * r + 1.0f;
	vi e = (__builtin_convertvector(n, vi) + 127) << 23;
	return p * (vf)e;
}

static void query_block(const ATTN_T *q, const ATTN_T *k, const ATTN_T *v, ATTN_T *o,
			int32_t seqlen, int32_t kv_seqlen, int32_t hd, int32_t dp, int32_t lp,
			int32_t causal, int32_t i0, float *qs, float *kt, float *vf32, float *s,
			float *acc)
{
	const int32_t nq = seqlen - i0 < BQ ? seqlen - i0 : BQ;
	/* keys any row of the block can see */
	const int32_t nk = causal && i0 + nq < kv_seqlen ? i0 + nq : kv_seqlen;
	const int32_t nkp = (nk + VEC - 1) / VEC * VEC;
	const float scale = 1.0f / sqrtf((float)hd);
	memset(qs, 0, sizeof(float) * BQ * (size_t)dp);
	for (int32_t r = 0; r < nq; r++)
		for (int32_t d = 0; d < hd; d++)
			qs[r * dp + d] = ATTN_LOAD(q[(int64_t)(i0 + r) * hd + d]) * scale;
	/* K^T as hd x lp (keys contiguous, zero padded), V as nk x dp */
	for (int32_t d = 0; d < hd; d++) {
		for (int32_t j = 0; j < nk; j++)
			kt[(int64_t)d * lp + j] = ATTN_LOAD(k[(int64_t)j * hd + d]);
		for (int32_t j = nk; j < nkp; j++)
			kt[(int64_t)d * lp + j] = 0.0f;
	}
	for (int32_t j = 0; j < nk; j++) {
		for (int32_t d = 0; d < hd; d++)
			vf32[(int64_t)j * dp + d] = ATTN_LOAD(v[(int64_t)j * hd + d]);
		for (int32_t d = hd; d < dp; d++)
			vf32[(int64_t)j * dp + d] = 0.0f;
	}
	for (int32_t r0 = 0; r0 < BQ; r0 += RQ) {
		/* scores for RQ rows, sharing each K^T vector */
		for (int32_t c = 0; c < nkp; c += VEC) {
			vf a[RQ];
			for (int rr = 0; rr < RQ; rr++)
				a[rr] = vsplat(0.0f);
			for (int32_t d = 0; d < hd; d++) {
				vf kv = vload(kt + (int64_t)d * lp + c);
				for (int rr = 0; rr < RQ; rr++)
					a[rr] += qs[(r0 + rr) * dp + d] * kv;
			}
			for (int rr = 0; rr < RQ; rr++)
				vstore(s + (int64_t)(r0 + rr) * lp + c, a[rr]);
		}
	}
	for (int32_t r = 0; r < nq; r++) {
		float *sr = s + (int64_t)r * lp;
		const int32_t vis = causal && i0 + r + 1 < nk ? i0 + r + 1 : nk;
		float m = -INFINITY;
		for (int32_t j = 0; j < vis; j++)
			m = sr[j] > m ? sr[j] : m;
		float l = 0.0f;
		int32_t j = 0;
#if EXP
		vf lv = vsplat(0.0f);
		for (; j + VEC <= vis; j += VEC) {
			vf p = vexp(vload(sr + j) - m);
			vstore(sr + j, p);
			lv += p;
		}
		for (int i = 0; i < VEC; i++)
			l += lv[i];
		for (; j < vis; j++) {
			sr[j] = vexp(vsplat(sr[j] - m))[0];
			l += sr[j];
		}
#else
		for (; j < vis; j++) {
			sr[j] = expf(sr[j] - m);
			l += sr[j];
		}
#endif
		/* normalise P now so PV needs no per-row division; masked keys get 0 */
		const float inv = 1.0f / l;
		for (j = 0; j < vis; j++)
			sr[j] *= inv;
		for (; j < nk; j++)
			sr[j] = 0.0f;
	}
	for (int32_t r0 = 0; r0 < nq; r0 += RQ) {
		const int32_t rows = nq - r0 < RQ ? nq - r0 : RQ;
		for (int32_t d = 0; d < dp; d += VEC) {
			vf a[RQ];
			for (int rr = 0; rr < RQ; rr++)
				a[rr] = vsplat(0.0f);
			for (int32_t j = 0; j < nk; j++) {
				vf vv = vload(vf32 + (int64_t)j * dp + d);
				for (int rr = 0; rr < RQ; rr++)
					a[rr] += s[(int64_t)(r0 + rr) * lp + j] * vv;
			}
			for (int rr = 0; rr < rows; rr++)
				vstore(acc + (r0 + rr) * dp + d, a[rr]);
		}
	}
	for (int32_t r = 0; r < nq; r++)
		for (int32_t d = 0; d < hd; d++)
			o[(int64_t)(i0 + r) * hd + d] = ATTN_STORE(acc[r * dp + d]);
}

void ATTN_FN(const ATTN_T *q, const ATTN_T *k, const ATTN_T *v, ATTN_T *o, int32_t batch,
	     int32_t heads, int32_t kv_heads, int32_t seqlen, int32_t kv_seqlen, int32_t head_dim,
	     int32_t causal)
{
	int nt = THREADS > 0 ? THREADS : omp_get_max_threads();
	const int32_t dp = (head_dim + VEC - 1) / VEC * VEC;
	const int32_t lp = (kv_seqlen + VEC - 1) / VEC * VEC;
	const int32_t nqb = (seqlen + BQ - 1) / BQ;
	const int64_t tasks = (int64_t)batch * heads * nqb;
	const int32_t group = heads / kv_heads;
#pragma omp parallel num_threads(nt)
	{
		/* per thread: queries, K^T, V, scores (rows past nq are read by the RQ-wide
		 * PV loop, so the score block is allocated and zeroed for all BQ rows) */
		size_t fl = (size_t)BQ * dp * 2 + (size_t)dp * lp + (size_t)lp * dp + (size_t)BQ * lp;
		float *mem = aligned_alloc(64, (fl * sizeof(float) + 63) / 64 * 64);
		float *qs = mem, *acc = qs + (size_t)BQ * dp, *kt = acc + (size_t)BQ * dp;
		float *vv = kt + (size_t)dp * lp, *s = vv + (size_t)lp * dp;
		memset(s, 0, sizeof(float) * (size_t)BQ * lp);
#if SCHED == 0
#pragma omp for schedule(static)
#else
#pragma omp for schedule(dynamic, 1)
#endif
		for (int64_t t = 0; t < tasks; t++) {
			const int64_t bh = t / nqb;
			const int32_t qb = causal ? nqb - 1 - (int32_t)(t % nqb) : (int32_t)(t % nqb);
			const int64_t kvh = bh / heads * kv_heads + bh % heads / group;
			const int64_t base = bh * seqlen * head_dim, kvbase = kvh * kv_seqlen * head_dim;
			query_block(q + base, k + kvbase, v + kvbase, o + base, seqlen, kv_seqlen,
				    head_dim, dp, lp, causal, qb * BQ, qs, kt, vv, s, acc);
		}
		free(mem);
	}
}
