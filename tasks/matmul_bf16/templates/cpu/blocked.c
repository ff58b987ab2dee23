/* @ksearch
family: packed-microkernel-bf16
summary: GotoBLAS-style blocking (NC, KC, MC) with packed A and B panels (widened to fp32, or with DOT kept as bf16 pairs for the AVX512-BF16 dot-product instruction), an MR x NR register tile of fp32 SIMD accumulators, partial sums across KC panels kept in an fp32 scratch and rounded to bf16 (nearest even) once, OpenMP over row blocks
rating: 8
difficulty: 4
knobs:
  VEC: {values: [8, 16], default: 16, summary: "floats per vector (AVX2 or AVX-512 width)", impacts: {compute_hw_fit: 7, register_pressure: 3}}
  MR: {values: [4, 6, 8, 12], default: 6, summary: "rows in the register tile", impacts: {register_pressure: 7, compute_hw_fit: 6}}
  NV: {values: [1, 2, 3, 4], default: 2, summary: "vectors per row in the register tile (NR = NV * VEC)", impacts: {register_pressure: 7, compute_hw_fit: 6}}
  KC: {values: [128, 256, 384, 512], default: 256, summary: "depth of a packed panel (fp32 B micro-panel KC x NR stays in L1)", impacts: {memory_bandwidth: 6}}
  MC: {values: [48, 96, 192, 384], default: 96, summary: "rows of A per block (fp32 A block MC x KC stays in L2)", impacts: {memory_bandwidth: 6}}
  PACK_A: {values: [0, 1], default: 1, summary: "widen the A block into MR-row panels so broadcasts are contiguous (1) or row by row, broadcasts strided by KC (0)", impacts: {memory_bandwidth: 4}}
  THREADS: {values: [0, 1, 2], default: 0, summary: "OpenMP threads, 0 = all", impacts: {compute_hw_fit: 6}}
  DOT: {values: [0, 1], default: 0, summary: "1: pack A and B as pairs of bf16 along k and multiply with vdpbf16ps (AVX512-BF16: two k steps per instruction into fp32 lanes, half the packed bytes of widening to fp32; faster only where the instruction issues as often as FMA); 0: widen to fp32 and use FMA", impacts: {compute_hw_fit: 8, memory_bandwidth: 4}}
require:
  - "THREADS <= spec.cores"
  - "VEC * 4 <= spec.simd_bytes"
  - "MR * NV + NV + 1 <= 32"
  - "KC * NV * VEC * 4 <= spec.l1_bytes"
  - "MC * KC * 4 <= spec.l2_bytes"
  - "DOT == 0 || spec.has_avx512_bf16 == 1"
@end */
/* The fp32 packed micro-kernel with bf16 at the edges only. Packing already copies every
 * element of A and B, so widening bf16 to fp32 there costs one shift per element and the
 * kernel stays a plain fp32 FMA loop (products of bf16 values are exact in fp32). The
 * packed panels are fp32, hence the * 4 in the cache constraints. C cannot carry partial
 * sums between KC panels in bf16 (2^-8 per rounding), so panels before the last add into
 * an fp32 scratch and the last one rounds the tile to bf16 as it stores it. */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#ifndef VEC
#define VEC 16
#endif
#ifndef MR
#define MR 6
#endif
#ifndef NV
#define NV 2
#endif
#ifndef KC
#define KC 256
#endif
#ifndef MC
#define MC 96
#endif
#ifndef PACK_A
#define PACK_A 1
#endif
#ifndef THREADS
#define THREADS 0
#endif
#ifndef DOT
#define DOT 0
#endif
#if DOT && !defined(__AVX512BF16__)
#error "DOT=1 needs AVX512-BF16 (the template requires spec.has_avx512_bf16)"
#endif

#define NR (NV * VEC)
/* columns of B packed per outer block; B block KC x NC stays in L3 */
#define NC 2048

typedef float vf __attribute__((vector_size(VEC * 4)));
typedef float vfu __attribute__((vector_size(VEC * 4), aligned(4), may_alias));
typedef uint32_t vu __attribute__((vector_size(VEC * 4)));
typedef uint16_t vh __attribute__((vector_size(VEC * 2)));
typedef uint16_t vhu __attribute__((vector_size(VEC * 2), aligned(2), may_alias));

typedef uint32_t vuu __attribute__((vector_size(VEC * 4), aligned(4), may_alias));

static inline vf vload(const float *p) { return *(const vfu *)p; }
static inline void vstore(float *p, vf v) { *(vfu *)p = v; }

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
	u += 0x7fffu + ((u >> 16) & 1u);     /* round to nearest, ties to even */
	return (uint16_t)(u >> 16);
}

/* float_to_bf16 on a whole vector: a full tile's epilogue would otherwise cost more
 * scalar work than a short KC panel of FMAs */
static inline void vstore_bf16(uint16_t *p, vf v)
{
	vu u = (vu)v;
	vu rne = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
	vu quiet = (u >> 16) | 0x40u;
	vu nan = (vu)((u & 0x7fffffffu) > 0x7f800000u);
	*(vhu *)p = __builtin_convertvector((rne & ~nan) | (quiet & nan), vh);
}

/* DOT: one 32-bit unit holds the bf16 elements k = 2q (low half) and 2q + 1 (high half) of
 * a row of A or a column of B, the pairing vdpbf16ps multiplies; k past kc reads as 0 */
static inline uint32_t pair(const uint16_t *x, int64_t stride, int32_t q, int32_t kc)
{
	uint32_t lo = x[2 * q * stride];
	return 2 * q + 1 < kc ? lo | (uint32_t)x[(2 * q + 1) * stride] << 16 : lo;
}

/* pack B[k0:k0+kc, j0:j0+nc] as panels of NR columns, row p of a panel contiguous: fp32,
 * or with DOT (kc+1)/2 rows of bf16 pairs; columns past n are zero so the micro-kernel
 * never needs a column test */
static void pack_b(const uint16_t *b, int32_t n, int32_t k0, int32_t kc, int32_t j0,
		   int32_t nc, float *bp, int32_t panel)
{
	int32_t jj = j0 + panel * NR;
	float *dst = bp + (int64_t)panel * kc * NR;
	int32_t w = nc - panel * NR < NR ? nc - panel * NR : NR;
#if DOT
	uint32_t *d32 = (uint32_t *)dst;
	for (int32_t q = 0; q < (kc + 1) / 2; q++)
		for (int32_t j = 0; j < NR; j++)
			d32[(int64_t)q * NR + j] =
				j < w ? pair(b + (int64_t)k0 * n + jj + j, n, q, kc) : 0;
	return;
#endif
	for (int32_t p = 0; p < kc; p++) {
		const uint16_t *src = b + (int64_t)(k0 + p) * n + jj;
		float *d = dst + (int64_t)p * NR;
		if (w == NR) {
			for (int32_t j = 0; j < NR; j++)
				d[j] = bf16_to_float(src[j]);
		} else {
			for (int32_t j = 0; j < w; j++)
				d[j] = bf16_to_float(src[j]);
			memset(d + w, 0, sizeof(float) * (size_t)(NR - w));
		}
	}
}

/* widen A[i0:i0+mc, k0:k0+kc] to fp32, rows padded with zeros up to a multiple of MR so
 * every tile is a full MR rows: PACK_A 1 as MR-row panels with column p of a panel
 * contiguous (tile strides 1 row, MR per p), PACK_A 0 row-major (strides kc, 1) */
static void pack_a(const uint16_t *a, int32_t m, int32_t k, int32_t i0, int32_t mc, int32_t k0,
		   int32_t kc, float *ap)
{
	for (int32_t ir = 0; ir < mc; ir += MR) {
		float *dst = ap + (int64_t)ir * kc;
		for (int32_t r = 0; r < MR; r++) {
			int32_t i = i0 + ir + r;
			int valid = ir + r < mc && i < m;
			const uint16_t *src = valid ? a + (int64_t)i * k + k0 : NULL;
#if DOT
			uint32_t *d32 = (uint32_t *)dst;
			for (int32_t q = 0; q < (kc + 1) / 2; q++)
				d32[PACK_A ? (int64_t)q * MR + r : (int64_t)r * kc + q] =
					valid ? pair(src, 1, q, kc) : 0;
			continue;
#endif
#if PACK_A
			for (int32_t p = 0; p < kc; p++)
				dst[(int64_t)p * MR + r] = valid ? bf16_to_float(src[p]) : 0.0f;
#else
			float *d = dst + (int64_t)r * kc;
			if (valid)
				for (int32_t p = 0; p < kc; p++)
					d[p] = bf16_to_float(src[p]);
			else
				memset(d, 0, sizeof(float) * (size_t)kc);
#endif
		}
	}
}

#if DOT
/* acc + the dot products of the bf16 pairs in a and b, lane by lane (vdpbf16ps) */
static inline vf dot2(vf acc, vu a, vu b)
{
#if VEC == 16
	return (vf)_mm512_dpbf16_ps((__m512)acc, (__m512bh)a, (__m512bh)b);
#else
	return (vf)_mm256_dpbf16_ps((__m256)acc, (__m256bh)a, (__m256bh)b);
#endif
}
#endif

/* acc = A_tile * B_panel over kc; then, for the valid rows < mr and cols < nr, acc plus
 * the fp32 partial sum f (unless first) goes to f, or rounded to bf16 into c (if last) */
static inline void micro(const float *restrict ap, int64_t as_p, int64_t as_r,
			 const float *restrict bp, int32_t kc, float *restrict f, int64_t ldf,
			 uint16_t *restrict c, int64_t ldc, int32_t mr, int32_t nr, int first,
			 int last)
{
	vf acc[MR][NV];
	for (int r = 0; r < MR; r++)
		for (int v = 0; v < NV; v++)
			acc[r][v] = (vf){0};
#if DOT
	/* each step: NR columns x two k; pairs are bit patterns, never touched as floats */
	const uint32_t *a32 = (const uint32_t *)ap, *b32 = (const uint32_t *)bp;
	for (int32_t q = 0; q < (kc + 1) / 2; q++) {
		vu bv[NV];
		for (int v = 0; v < NV; v++)
			bv[v] = *(const vuu *)(b32 + (int64_t)q * NR + v * VEC);
#pragma GCC unroll 12
		for (int r = 0; r < MR; r++) {
			vu s = (vu){} + a32[q * as_p + r * as_r];
			for (int v = 0; v < NV; v++)
				acc[r][v] = dot2(acc[r][v], s, bv[v]);
		}
	}
#else
	for (int32_t p = 0; p < kc; p++) {
		vf bv[NV];
		for (int v = 0; v < NV; v++)
			bv[v] = vload(bp + (int64_t)p * NR + v * VEC);
#pragma GCC unroll 12
		for (int r = 0; r < MR; r++) {
			float s = ap[p * as_p + r * as_r];
			for (int v = 0; v < NV; v++)
				acc[r][v] += s * bv[v];
		}
	}
#endif
	if (mr == MR && nr == NR) {
		for (int r = 0; r < MR; r++)
			for (int v = 0; v < NV; v++) {
				vf x = acc[r][v];
				if (!first)
					x += vload(f + r * ldf + v * VEC);
				if (last)
					vstore_bf16(c + r * ldc + v * VEC, x);
				else
					vstore(f + r * ldf + v * VEC, x);
			}
	} else {
		float t[MR][NR];
		for (int r = 0; r < MR; r++)
			for (int v = 0; v < NV; v++)
				vstore(&t[r][v * VEC], acc[r][v]);
		for (int r = 0; r < mr; r++)
			for (int j = 0; j < nr; j++) {
				float x = first ? t[r][j] : t[r][j] + f[r * ldf + j];
				if (last)
					c[r * ldc + j] = float_to_bf16(x);
				else
					f[r * ldf + j] = x;
			}
	}
}

/* every MR x NR tile of the packed MC x NC block: c and f point at its top left corner in
 * C and in the scratch (NULL when k fits one panel) */
static void block(const float *ap, const float *bp, int32_t mc, int32_t nc, int32_t kc,
		  uint16_t *c, int64_t ldc, float *f, int64_t ldf, int first, int last)
{
	/* tile strides in the widened A block: per step of p, per row */
	int64_t as_p = PACK_A ? MR : 1, as_r = PACK_A ? 1 : kc;
	for (int32_t pn = 0; pn * NR < nc; pn++) {
		int32_t nr = nc - pn * NR < NR ? nc - pn * NR : NR;
		const float *bpan = bp + (int64_t)pn * kc * NR;
		for (int32_t ir = 0; ir < mc; ir += MR) {
			int32_t mr = mc - ir < MR ? mc - ir : MR;
			float *ft = f ? f + ir * ldf + pn * NR : NULL;
			micro(ap + (int64_t)ir * kc, as_p, as_r, bpan, kc, ft, ldf,
			      c + ir * ldc + pn * NR, ldc, mr, nr, first, last);
		}
	}
}

void matmul_bf16(const uint16_t *a, const uint16_t *b, uint16_t *c, int32_t m, int32_t n,
		 int32_t k)
{
	int nt = THREADS > 0 ? THREADS : omp_get_max_threads();
	if (k == 0) {
		memset(c, 0, sizeof(uint16_t) * (size_t)m * (size_t)n);
		return;
	}
	int32_t ncmax = n < NC ? n : NC;
	int32_t kcmax = k < KC ? k : KC;
	int32_t npan_max = (ncmax + NR - 1) / NR;
	size_t bsz = ((size_t)npan_max * NR * kcmax * sizeof(float) + 63) / 64 * 64;
	/* one A block per thread, rows rounded up to whole MR-row tiles */
	size_t asz = ((size_t)(MC + MR) * kcmax * sizeof(float) + 63) / 64 * 64;
	/* fp32 partial sums of the current NC column block, needed only with several panels */
	size_t fsz = k > KC ? ((size_t)m * ncmax * sizeof(float) + 63) / 64 * 64 : 0;
	float *bp = aligned_alloc(64, bsz);
	float *apall = aligned_alloc(64, asz * (size_t)nt);
	float *cf = fsz ? aligned_alloc(64, fsz) : NULL;
	if (!bp || !apall || (fsz && !cf))
		goto out;
#pragma omp parallel num_threads(nt)
	{
		float *ap = apall + asz / sizeof(float) * (size_t)omp_get_thread_num();
		for (int32_t j0 = 0; j0 < n; j0 += NC) {
			int32_t nc = n - j0 < NC ? n - j0 : NC;
			int32_t npan = (nc + NR - 1) / NR;
			for (int32_t k0 = 0; k0 < k; k0 += KC) {
				int32_t kc = k - k0 < KC ? k - k0 : KC;
				int first = k0 == 0, last = k0 + kc == k;
				/* all threads pack B together; the implicit barrier publishes it */
#pragma omp for schedule(static)
				for (int32_t pn = 0; pn < npan; pn++)
					pack_b(b, n, k0, kc, j0, nc, bp, pn);
#pragma omp for schedule(dynamic, 1)
				for (int32_t i0 = 0; i0 < m; i0 += MC) {
					int32_t mc = m - i0 < MC ? m - i0 : MC;
					pack_a(a, m, k, i0, mc, k0, kc, ap);
					float *f = cf ? cf + (int64_t)i0 * ncmax : NULL;
					block(ap, bp, mc, nc, kc, c + (int64_t)i0 * n + j0, n, f,
					      ncmax, first, last);
				}
			}
		}
	}
out:
	free(cf);
	free(apall);
	free(bp);
}
