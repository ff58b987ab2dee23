/* @ksearch
family: ikj-simd
summary: i-k-j loops blocked over k and j, the j loop vectorised by the compiler (omp simd), several rows of C updated per pass over a row of B, OpenMP over row blocks
rating: 5
difficulty: 2
knobs:
  BJ: {values: [64, 128, 256, 512], default: 256, summary: "columns of C and B per block (C strip stays in L1)", impacts: {memory_bandwidth: 6}}
  BK: {values: [32, 64, 128, 256], default: 128, summary: "depth per block (B block BK x BJ stays in L2)", impacts: {memory_bandwidth: 6}}
  UI: {values: [1, 2, 4, 8], default: 4, summary: "rows of C updated together, reusing each loaded vector of B", impacts: {register_pressure: 5, compute_hw_fit: 5}}
  THREADS: {values: [0, 1, 2], default: 0, summary: "OpenMP threads, 0 = all", impacts: {compute_hw_fit: 6}}
  SCHED: {values: [0, 1], default: 0, summary: "0 static, 1 dynamic OpenMP schedule over row blocks"}
require:
  - "THREADS <= spec.cores"
  - "BK * BJ * 4 <= spec.l2_bytes"
@end */
/* No packing: the inner loop streams a row of B and a row of C with unit stride, which the
 * compiler vectorises. Each element of B loaded into a register is used UI times (once per
 * row), so UI sets the FMA-to-load ratio. */
#include <stdint.h>
#include <string.h>
#include <omp.h>

#ifndef BJ
#define BJ 256
#endif
#ifndef BK
#define BK 128
#endif
#ifndef UI
#define UI 4
#endif
#ifndef THREADS
#define THREADS 0
#endif
#ifndef SCHED
#define SCHED 0
#endif

/* rows [i0, i0+nr) of C += A[i0.., k0..k1) * B[k0..k1, j0..j1) for nr <= UI rows */
static inline void rows_update(const float *restrict a, const float *restrict b, float *restrict c,
			       int32_t n, int32_t k, int32_t i0, int32_t nr, int32_t k0, int32_t k1,
			       int32_t j0, int32_t j1)
{
	if (nr == UI) {
		for (int32_t p = k0; p < k1; p++) {
			float ar[UI];
			for (int r = 0; r < UI; r++)
				ar[r] = a[(int64_t)(i0 + r) * k + p];
			const float *restrict bp = b + (int64_t)p * n;
#pragma omp simd
			for (int32_t j = j0; j < j1; j++) {
				float bv = bp[j];
				for (int r = 0; r < UI; r++)
					c[(int64_t)(i0 + r) * n + j] += ar[r] * bv;
			}
		}
	} else {
		for (int32_t r = 0; r < nr; r++)
			for (int32_t p = k0; p < k1; p++) {
				float ar = a[(int64_t)(i0 + r) * k + p];
				const float *restrict bp = b + (int64_t)p * n;
				float *restrict cr = c + (int64_t)(i0 + r) * n;
#pragma omp simd
				for (int32_t j = j0; j < j1; j++)
					cr[j] += ar * bp[j];
			}
	}
}

void matmul(const float *a, const float *b, float *c, int32_t m, int32_t n, int32_t k)
{
	int nt = THREADS > 0 ? THREADS : omp_get_max_threads();
	int32_t nblk = (m + UI - 1) / UI;
#pragma omp parallel num_threads(nt)
	{
#pragma omp for schedule(static)
		for (int32_t i = 0; i < m; i++)
			memset(c + (int64_t)i * n, 0, sizeof(float) * (size_t)n);
		/* block loops outside the row loop: one BK x BJ block of B is reused by every row
		 * block before the next one is touched */
		for (int32_t j0 = 0; j0 < n; j0 += BJ) {
			int32_t j1 = j0 + BJ < n ? j0 + BJ : n;
			for (int32_t k0 = 0; k0 < k; k0 += BK) {
				int32_t k1 = k0 + BK < k ? k0 + BK : k;
#if SCHED == 0
#pragma omp for schedule(static)
#else
#pragma omp for schedule(dynamic, 1)
#endif
				for (int32_t ib = 0; ib < nblk; ib++) {
					int32_t i0 = ib * UI;
					int32_t nr = m - i0 < UI ? m - i0 : UI;
					rows_update(a, b, c, n, k, i0, nr, k0, k1, j0, j1);
				}
			}
		}
	}
}
