/* @ksearch
family: flash-tiled
summary: "flash-style tiling, a block of BQ queries streams K/V tiles of BK keys (K tile transposed to float), online softmax with running max and sum, OpenMP over (batch, head, query block)"
rating: 8
difficulty: 4
knobs:
  BQ: {values: [8, 16, 32, 64], default: 32, summary: "queries per block (each K/V tile is converted once and reused BQ times)", impacts: {memory_bandwidth: 6, register_pressure: 2}}
  BK: {values: [16, 32, 64, 128], default: 64, summary: "keys per tile (K^T tile of head_dim x BK floats stays in L1)", impacts: {memory_bandwidth: 5, register_pressure: 3}}
  RQ: {values: [1, 2, 4], default: 2, summary: "query rows computed together in QK^T and PV, sharing each loaded K/V vector", impacts: {register_pressure: 6, compute_hw_fit: 5}}
  VEC: {values: [8, 16], default: 16, summary: "floats per vector (AVX2 or AVX-512 width)", impacts: {compute_hw_fit: 6}}
  EXP2: {values: [0, 1], default: 1, summary: "1 folds log2(e) into the scale and uses an inline vector exp2; 0 calls libm expf per score", impacts: {compute_hw_fit: 7}}
  THREADS: {values: [0, 1, 2], default: 0, summary: "OpenMP threads, 0 = all", impacts: {compute_hw_fit: 5}}
require:
  - "THREADS <= spec.cores"
  - "VEC * 4 <= spec.simd_bytes"
  - "BK % VEC == 0"
  - "BQ % RQ == 0"
@end */
/* Scores never leave the tile: per tile S = Q K^T (BQ x BK), then for each query row
 * m' = max(m, max_j S), P = exp(S - m'), l = l*exp(m - m') + sum P, O = O*exp(m - m') + P V.
 * Under the causal mask (top-left aligned: query i sees keys 0..i) a query block stops at its
 * last query's key, or at kv_seqlen, and the mask is applied only inside the diagonal tiles.
 * Dynamic scheduling balances the triangular work. Query head h reads kv head
 * h / (heads / kv_heads) (grouped-query attention). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

/* The element type of q, k, v, o.  A variant's wrapper
 * (tasks/attention_bf16/templates/cpu/flash.c) defines ATTN_BF16 1 and its entry point's name
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
#define BQ 32
#endif
#ifndef BK
#define BK 64
#endif
#ifndef RQ
#define RQ 2
#endif
#ifndef VEC
#define VEC 16
#endif
#ifndef EXP2
#define EXP2 1
#endif
#ifndef THREADS
#define THREADS 0
#endif

typedef float vf __attribute__((vector_size(VEC * 4)));
typedef int32_t vi __attribute__((vector_size(VEC * 4)));
typedef float vfu __attribute__((vector_size(VEC * 4), aligned(4), may_alias));

static inline vf vload(const float *p) { return *(const vfu *)p; }
static inline void vstore(float *p, vf v) { *(vfu *)p = v; }
static inline vf vsplat(float s) { return (vf){0} + s; }
static inline vf vmax(vf a, vf b)
{
	vi m = a > b;
	return (vf)((m & (vi)a) | (~m & (vi)b));
}

/* 2^x: n = round(x), 2^f on |f| <= 1/2 by a degree-6 polynomial in f*ln2 (rel. error ~1e-7);
 * x is clamped so 2^n is a normal float, which maps -inf to ~1e-38 (callers zero masked lanes) */
static inline vf vexp2(vf x)
{
	vi lo = x < -126.0f, hi = x > 127.0f;
	x = (vf)((lo & (vi)vsplat(-126.0f)) | (~lo & (vi)x));
	x = (vf)((hi & (vi)vsplat(127.0f)) | (~hi & (vi)x));
	vf n = (x + 12582912.0f) - 12582912.0f;
	vf r = (x - n) * 0.693147181f;
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

#if EXP2
/* scores are pre-multiplied by log2(e), so exp(s - m) = 2^(s' - m') */
#define LOGE 1.44269504088896341f
static inline float sexp(float x) { return vexp2(vsplat(x))[0]; }
#else
#define LOGE 1.0f
static inline float sexp(float x) { return expf(x); }
#endif

struct scratch {
	float *qs; /* BQ x dp: queries, scaled */
	float *kt; /* dp x BK: K tile transposed, zero-padded */
	float *vt; /* BK x dp: V tile, zero-padded */
	float *s;  /* BQ x BK: scores, then probabilities */
	float *acc; /* BQ x dp: unnormalised output */
	float m[BQ], l[BQ];
};

static void query_block(const ATTN_T *q, const ATTN_T *k, const ATTN_T *v, ATTN_T *o,
			int32_t seqlen, int32_t kv_seqlen, int32_t hd, int32_t dp, int32_t causal,
			int32_t i0, struct scratch *w)
{
	const int32_t nq = seqlen - i0 < BQ ? seqlen - i0 : BQ;
	const float scale = LOGE / sqrtf((float)hd);
	memset(w->qs, 0, sizeof(float) * BQ * (size_t)dp);
	memset(w->acc, 0, sizeof(float) * BQ * (size_t)dp);
	for (int32_t r = 0; r < nq; r++)
		for (int32_t d = 0; d < hd; d++)
			w->qs[r * dp + d] = ATTN_LOAD(q[(int64_t)(i0 + r) * hd + d]) * scale;
	for (int32_t r = 0; r < BQ; r++) {
		w->m[r] = -INFINITY;
		w->l[r] = 0.0f;
	}
	/* head_dim padding: K^T rows and V columns past hd stay zero for the whole block */
	memset(w->kt + (size_t)hd * BK, 0, sizeof(float) * (size_t)(dp - hd) * BK);
	for (int32_t c = 0; c < BK; c++)
		for (int32_t d = hd; d < dp; d++)
			w->vt[c * dp + d] = 0.0f;
	/* keys beyond the block's last query are masked for every row of a causal block */
	const int32_t kend = causal && i0 + nq < kv_seqlen ? i0 + nq : kv_seqlen;
	for (int32_t j0 = 0; j0 < kend; j0 += BK) {
		const int32_t nk = kend - j0 < BK ? kend - j0 : BK;
		/* branch-free conversion loops (they vectorise); padding is zeroed separately, and
		 * only in a short last tile: rows d >= hd of kt and columns d >= hd of vt are
		 * zeroed once per block below */
		for (int32_t c = 0; c < nk; c++) {
			const ATTN_T *kr = k + (int64_t)(j0 + c) * hd;
			const ATTN_T *vr = v + (int64_t)(j0 + c) * hd;
			float *vo = w->vt + c * dp;
			for (int32_t d = 0; d < hd; d++)
				w->kt[d * BK + c] = ATTN_LOAD(kr[d]);
			for (int32_t d = 0; d < hd; d++)
				vo[d] = ATTN_LOAD(vr[d]);
		}
		if (nk < BK) {
			for (int32_t d = 0; d < hd; d++)
				for (int32_t c = nk; c < BK; c++)
					w->kt[d * BK + c] = 0.0f;
			memset(w->vt + nk * dp, 0, sizeof(float) * (size_t)(BK - nk) * dp);
		}
		/* the tile needs a mask if it has padding or crosses the diagonal */
		const int diag = causal && j0 + BK - 1 > i0;
		for (int32_t r0 = 0; r0 < nq; r0 += RQ) {
			/* S[r0..r0+RQ, :] = Q K^T, RQ rows share each K^T vector */
			for (int32_t c = 0; c < BK; c += VEC) {
				vf a[RQ];
				for (int rr = 0; rr < RQ; rr++)
					a[rr] = vsplat(0.0f);
				for (int32_t d = 0; d < hd; d++) {
					vf kv = vload(w->kt + d * BK + c);
					for (int rr = 0; rr < RQ; rr++)
						a[rr] += w->qs[(r0 + rr) * dp + d] * kv;
				}
				for (int rr = 0; rr < RQ; rr++)
					vstore(w->s + (r0 + rr) * BK + c, a[rr]);
			}
			for (int rr = 0; rr < RQ && r0 + rr < nq; rr++) {
				const int32_t r = r0 + rr;
				float *sr = w->s + r * BK;
				/* number of visible keys in this tile for query i0 + r (rows past
				 * kv_seqlen keep all nk) */
				int32_t vis = nk;
				if (diag && i0 + r - j0 + 1 < vis)
					vis = i0 + r - j0 + 1;
				if (vis <= 0) {
					/* the whole tile lies past this query's diagonal */
					memset(sr, 0, sizeof(float) * BK);
					continue;
				}
				float mt = -INFINITY;
				for (int32_t c = 0; c < vis; c++)
					mt = sr[c] > mt ? sr[c] : mt;
				const float mn = w->m[r] > mt ? w->m[r] : mt;
				const float corr = w->m[r] == -INFINITY ? 0.0f : sexp(w->m[r] - mn);
				float sum = 0.0f;
#if EXP2
				int32_t c = 0;
				vf sv = vsplat(0.0f);
				for (; c + VEC <= vis; c += VEC) {
					vf p = vexp2(vload(sr + c) - mn);
					vstore(sr + c, p);
					sv += p;
				}
				for (int i = 0; i < VEC; i++)
					sum += sv[i];
				for (; c < vis; c++) {
					sr[c] = sexp(sr[c] - mn);
					sum += sr[c];
				}
#else
				for (int32_t c = 0; c < vis; c++) {
					sr[c] = sexp(sr[c] - mn);
					sum += sr[c];
				}
#endif
				/* masked and padded keys get probability 0 */
				for (int32_t c = vis; c < BK; c++)
					sr[c] = 0.0f;
				w->l[r] = w->l[r] * corr + sum;
				w->m[r] = mn;
				float *ar = w->acc + r * dp;
				for (int32_t d = 0; d < dp; d += VEC)
					vstore(ar + d, vload(ar + d) * corr);
			}
			/* O[r0..r0+RQ, :] += P V; rows past nq or fully masked have P = 0 */
			const int32_t rows = nq - r0 < RQ ? nq - r0 : RQ;
			for (int32_t d = 0; d < dp; d += VEC) {
				vf a[RQ];
				for (int rr = 0; rr < RQ; rr++)
					a[rr] = rr < rows ? vload(w->acc + (r0 + rr) * dp + d) : vsplat(0.0f);
				for (int32_t c = 0; c < nk; c++) {
					vf vv = vload(w->vt + c * dp + d);
					for (int rr = 0; rr < RQ; rr++)
						a[rr] += w->s[(r0 + rr) * BK + c] * vv;
				}
				for (int rr = 0; rr < rows; rr++)
					vstore(w->acc + (r0 + rr) * dp + d, a[rr]);
			}
		}
	}
	for (int32_t r = 0; r < nq; r++) {
		const float inv = 1.0f / w->l[r];
		for (int32_t d = 0; d < hd; d++)
			o[(int64_t)(i0 + r) * hd + d] = ATTN_STORE(w->acc[r * dp + d] * inv);
	}
}

void ATTN_FN(const ATTN_T *q, const ATTN_T *k, const ATTN_T *v, ATTN_T *o, int32_t batch,
	     int32_t heads, int32_t kv_heads, int32_t seqlen, int32_t kv_seqlen, int32_t head_dim,
	     int32_t causal)
{
	int nt = THREADS > 0 ? THREADS : omp_get_max_threads();
	const int32_t dp = (head_dim + VEC - 1) / VEC * VEC;
	const int32_t nqb = (seqlen + BQ - 1) / BQ;
	const int64_t tasks = (int64_t)batch * heads * nqb;
	const int32_t group = heads / kv_heads;
#pragma omp parallel num_threads(nt)
	{
		struct scratch w;
		float *mem = aligned_alloc(64, sizeof(float) * ((size_t)BQ * dp * 2 + (size_t)dp * BK * 2 + (size_t)BQ * BK));
		w.qs = mem;
		w.acc = w.qs + (size_t)BQ * dp;
		w.kt = w.acc + (size_t)BQ * dp;
		w.vt = w.kt + (size_t)dp * BK;
		w.s = w.vt + (size_t)dp * BK;
		/* largest causal blocks (last query blocks) first: dynamic schedule then balances */
#pragma omp for schedule(dynamic, 1)
		for (int64_t t = 0; t < tasks; t++) {
			const int64_t bh = t / nqb;
			const int32_t qb = causal ? nqb - 1 - (int32_t)(t % nqb) : (int32_t)(t % nqb);
			const int64_t kvh = bh / heads * kv_heads + bh % heads / group;
			const int64_t base = bh * seqlen * head_dim, kvbase = kvh * kv_seqlen * head_dim;
			query_block(q + base, k + kvbase, v + kvbase, o + base, seqlen, kv_seqlen,
				    head_dim, dp, causal, qb * BQ, &w);
		}
		free(mem);
	}
}
