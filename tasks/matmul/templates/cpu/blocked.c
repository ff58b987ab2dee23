/* @ksearch
family: packed-microkernel
summary: GotoBLAS-style blocking (NC, KC, MC) with B packed into NR-wide panels and an MR x NR register tile of SIMD accumulators, OpenMP over row blocks
rating: 8
difficulty: 4
knobs:
  VEC: {values: [8, 16], default: 16, summary: "floats per vector (AVX2 or AVX-512 width)", impacts: {compute_hw_fit: 7, register_pressure: 3}}
  MR: {values: [4, 6, 8, 12], default: 6, summary: "rows in the register tile", impacts: {register_pressure: 7, compute_hw_fit: 6}}
  NV: {values: [1, 2, 3, 4], default: 2, summary: "vectors per row in the register tile (NR = NV * VEC)", impacts: {register_pressure: 7, compute_hw_fit: 6}}
  KC: {values: [128, 256, 384, 512], default: 256, summary: "depth of a packed panel (B micro-panel KC x NR stays in L1)", impacts: {memory_bandwidth: 6}}
  MC: {values: [48, 96, 192, 384], default: 96, summary: "rows of A per block (A block MC x KC stays in L2)", impacts: {memory_bandwidth: 6}}
  PACK_A: {values: [0, 1], default: 1, summary: "copy the A block into MR-row panels so broadcasts are contiguous", impacts: {memory_bandwidth: 4}}
  THREADS: {values: [0, 1, 2], default: 0, summary: "OpenMP threads, 0 = all", impacts: {compute_hw_fit: 6}}
require:
  - "THREADS <= spec.cores"
  - "VEC * 4 <= spec.simd_bytes"
  - "MR * NV + NV + 1 <= 32"
  - "KC * NV * VEC * 4 <= spec.l1_bytes"
  - "MC * KC * 4 <= spec.l2_bytes"
@end */
/* C[MR x NR] accumulates in registers over a KC-deep panel: each step loads NV vectors of
 * packed B and broadcasts MR scalars of A, for MR * NV FMAs. The B micro-panel is reused by
 * every MR-row tile of the MC block (L1), the A block by every NR panel (L2). */
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

#define NR (NV * VEC)
/* columns of B packed per outer block; B block KC x NC stays in L3 */
#define NC 2048

typedef float vf __attribute__((vector_size(VEC * 4)));
typedef float vfu __attribute__((vector_size(VEC * 4), aligned(4), may_alias));

static inline vf vload(const float *p) { return *(const vfu *)p; }
static inline void vstore(float *p, vf v) { *(vfu *)p = v; }

/* pack B[k0:k0+kc, j0:j0+nc] as panels of NR columns, row p of a panel contiguous; columns
 * past n are zero so the micro-kernel never needs a column test */
static void pack_b(const float *b, int32_t n, int32_t k0, int32_t kc, int32_t j0, int32_t nc,
		   float *bp, int32_t panel)
{
	int32_t jj = j0 + panel * NR;
	float *dst = bp + (int64_t)panel * kc * NR;
	int32_t w = nc - panel * NR < NR ? nc - panel * NR : NR;
	for (int32_t p = 0; p < kc; p++) {
		const float *src = b + (int64_t)(k0 + p) * n + jj;
		float *d = dst + (int64_t)p * NR;
		if (w == NR) {
			memcpy(d, src, sizeof(float) * NR);
		} else {
			memcpy(d, src, sizeof(float) * (size_t)w);
			memset(d + w, 0, sizeof(float) * (size_t)(NR - w));
		}
	}
}

#if PACK_A
/* pack A[i0:i0+mc, k0:k0+kc] as MR-row panels, column p of a panel contiguous; rows past m
 * are zero */
static void pack_a(const float *a, int32_t m, int32_t k, int32_t i0, int32_t mc, int32_t k0,
		   int32_t kc, float *ap)
{
	for (int32_t ir = 0; ir < mc; ir += MR) {
		float *dst = ap + (int64_t)ir * kc;
		for (int32_t r = 0; r < MR; r++) {
			int32_t i = i0 + ir + r;
			if (ir + r < mc && i < m) {
				const float *src = a + (int64_t)i * k + k0;
				for (int32_t p = 0; p < kc; p++)
					dst[(int64_t)p * MR + r] = src[p];
			} else {
				for (int32_t p = 0; p < kc; p++)
					dst[(int64_t)p * MR + r] = 0.0f;
			}
		}
	}
}
#endif

/* acc = A_tile * B_panel over kc; then C tile (rows < mr, cols < nr valid) = or += acc */
static inline void micro(const float *restrict ap, int64_t as_p, int64_t as_r,
			 const float *restrict bp, int32_t kc, float *restrict c, int64_t ldc,
			 int32_t mr, int32_t nr, int accumulate)
{
	vf acc[MR][NV];
	for (int r = 0; r < MR; r++)
		for (int v = 0; v < NV; v++)
			acc[r][v] = (vf){0};
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
	if (mr == MR && nr == NR) {
		for (int r = 0; r < MR; r++)
			for (int v = 0; v < NV; v++) {
				float *cp = c + r * ldc + v * VEC;
				vstore(cp, accumulate ? vload(cp) + acc[r][v] : acc[r][v]);
			}
	} else {
		float t[MR][NR];
		for (int r = 0; r < MR; r++)
			for (int v = 0; v < NV; v++)
				vstore(&t[r][v * VEC], acc[r][v]);
		for (int r = 0; r < mr; r++)
			for (int j = 0; j < nr; j++)
				c[r * ldc + j] = accumulate ? c[r * ldc + j] + t[r][j] : t[r][j];
	}
}

void matmul(const float *a, const float *b, float *c, int32_t m, int32_t n, int32_t k)
{
	int nt = THREADS > 0 ? THREADS : omp_get_max_threads();
	if (k == 0) {
		memset(c, 0, sizeof(float) * (size_t)m * (size_t)n);
		return;
	}
	int32_t ncmax = n < NC ? n : NC;
	int32_t kcmax = k < KC ? k : KC;
	int32_t npan_max = (ncmax + NR - 1) / NR;
	float *bp = aligned_alloc(64, ((size_t)npan_max * NR * kcmax * sizeof(float) + 63) / 64 * 64);
	if (!bp)
		return;
#pragma omp parallel num_threads(nt)
	{
		/* packed A block, or (PACK_A 0) a zero-padded copy of a tile with fewer than MR rows */
		size_t asz = ((size_t)(PACK_A ? MC + MR : MR) * kcmax * sizeof(float) + 63) / 64 * 64;
		float *ap = aligned_alloc(64, asz);
		for (int32_t j0 = 0; j0 < n; j0 += NC) {
			int32_t nc = n - j0 < NC ? n - j0 : NC;
			int32_t npan = (nc + NR - 1) / NR;
			for (int32_t k0 = 0; k0 < k; k0 += KC) {
				int32_t kc = k - k0 < KC ? k - k0 : KC;
				/* all threads pack B together; the implicit barrier publishes it */
#pragma omp for schedule(static)
				for (int32_t pn = 0; pn < npan; pn++)
					pack_b(b, n, k0, kc, j0, nc, bp, pn);
#pragma omp for schedule(dynamic, 1)
				for (int32_t i0 = 0; i0 < m; i0 += MC) {
					int32_t mc = m - i0 < MC ? m - i0 : MC;
#if PACK_A
					pack_a(a, m, k, i0, mc, k0, kc, ap);
#endif
					for (int32_t pn = 0; pn < npan; pn++) {
						int32_t nr = nc - pn * NR < NR ? nc - pn * NR : NR;
						const float *bpan = bp + (int64_t)pn * kc * NR;
						for (int32_t ir = 0; ir < mc; ir += MR) {
							int32_t mr = mc - ir < MR ? mc - ir : MR;
							float *ct = c + (int64_t)(i0 + ir) * n + j0 + pn * NR;
#if PACK_A
							micro(ap + (int64_t)ir * kc, MR, 1, bpan, kc, ct, n, mr,
							      nr, k0 > 0);
#else
							const float *at = a + (int64_t)(i0 + ir) * k + k0;
							if (mr == MR) {
								micro(at, 1, k, bpan, kc, ct, n, mr, nr, k0 > 0);
							} else {
								/* rows past m do not exist: copy the valid ones
								 * into a zero-padded MR-row tile */
								memset(ap, 0, sizeof(float) * (size_t)MR * kc);
								for (int32_t r = 0; r < mr; r++)
									memcpy(ap + (int64_t)r * kc,
									       at + (int64_t)r * k,
									       sizeof(float) * (size_t)kc);
								micro(ap, 1, kc, bpan, kc, ct, n, mr, nr, k0 > 0);
							}
#endif
						}
					}
				}
			}
		}
		free(ap);
	}
	free(bp);
}
