/* @ksearch
family: online-softmax
summary: one pass computes the running max and rescaled sum per SIMD lane, a second pass writes y = exp(x - m) / s
rating: 7
difficulty: 3
knobs:
  VEC: {values: [4, 8, 16], default: 16, summary: "floats per vector (SSE, AVX2, AVX-512 width)", impacts: {compute_hw_fit: 6, register_pressure: 2}}
  UNROLL: {values: [1, 2, 4], default: 2, summary: "independent (max, sum) lane sets in the first pass", impacts: {compute_hw_fit: 4, register_pressure: 4}}
  ROWS: {values: [1, 2, 4], default: 1, summary: "rows processed together (interleaves independent dependency chains)", impacts: {register_pressure: 4, compute_hw_fit: 3}}
  STREAM: {values: [0, 1], default: 0, summary: "1 writes y with non-temporal (cache-bypassing) stores", impacts: {memory_bandwidth: 5}}
  THREADS: {values: [0, 1, 2], default: 0, summary: "OpenMP threads, 0 = all", impacts: {memory_bandwidth: 5}}
require:
  - "THREADS <= spec.cores"
  - "VEC * 4 <= spec.simd_bytes"
@end */
/* The online form reads x twice and writes y once (the three-pass form also re-reads and
 * re-writes y); it pays for that with a second exp per element and a rescale of the
 * running sum whenever the running max grows. */
#include <math.h>
#include <stdint.h>
#include <immintrin.h>
#include <omp.h>

#ifndef VEC
#define VEC 16
#endif
#ifndef UNROLL
#define UNROLL 2
#endif
#ifndef ROWS
#define ROWS 1
#endif
#ifndef STREAM
#define STREAM 0
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
static inline vf vmin(vf a, vf b)
{
	vi m = a < b;
	return (vf)((m & (vi)a) | (~m & (vi)b));
}

/* exp by Cody-Waite range reduction and a degree-6 polynomial (rel. error ~1e-7); the clamp
 * maps -inf (an empty lane's running max) to a harmless tiny value. */
static inline vf vexp(vf x)
{
	x = vmin(vmax(x, vsplat(-87.0f)), vsplat(88.0f));
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
static inline float sexp(float x)
{
	vf v = vexp(vsplat(x));
	return v[0];
}

#if STREAM
static inline void vstream(float *p, vf v)
{
#if VEC == 16
	_mm512_stream_ps(p, (__m512)v);
#elif VEC == 8
	_mm256_stream_ps(p, (__m256)v);
#else
	_mm_stream_ps(p, (__m128)v);
#endif
}
#endif

/* first pass for ROWS rows at once: per lane a running max m and a sum s of exp(x - m) */
static void rows_stats(const float *x, int64_t ld, int32_t n, float *mo, float *so)
{
	vf m[ROWS][UNROLL], s[ROWS][UNROLL];
	for (int r = 0; r < ROWS; r++)
		for (int u = 0; u < UNROLL; u++) {
			m[r][u] = vsplat(-INFINITY);
			s[r][u] = vsplat(0.0f);
		}
	int32_t j = 0;
	for (; j + UNROLL * VEC <= n; j += UNROLL * VEC)
		for (int r = 0; r < ROWS; r++)
			for (int u = 0; u < UNROLL; u++) {
				vf v = vload(x + r * ld + j + u * VEC);
				vf mn = vmax(m[r][u], v);
				/* rescale the old sum to the new max, then add this element */
				s[r][u] = s[r][u] * vexp(m[r][u] - mn) + vexp(v - mn);
				m[r][u] = mn;
			}
	for (int r = 0; r < ROWS; r++) {
		float mm = -INFINITY;
		for (int u = 0; u < UNROLL; u++)
			for (int l = 0; l < VEC; l++)
				mm = m[r][u][l] > mm ? m[r][u][l] : mm;
		for (int32_t t = j; t < n; t++)
			mm = x[r * ld + t] > mm ? x[r * ld + t] : mm;
		float ss = 0.0f;
		for (int u = 0; u < UNROLL; u++)
			for (int l = 0; l < VEC; l++)
				if (m[r][u][l] > -INFINITY)
					ss += s[r][u][l] * sexp(m[r][u][l] - mm);
		for (int32_t t = j; t < n; t++)
			ss += sexp(x[r * ld + t] - mm);
		mo[r] = mm;
		so[r] = ss;
	}
}

static void row_write(const float *x, float *y, int32_t n, float m, float s)
{
	const float inv = 1.0f / s;
	int32_t j = 0;
#if STREAM
	/* non-temporal stores bypass the cache (y is not read again here) but need addresses
	 * aligned to the vector size: peel scalars until aligned */
	for (; j < n && ((uintptr_t)(y + j) & (VEC * 4 - 1)) != 0; j++)
		y[j] = sexp(x[j] - m) * inv;
	for (; j + VEC <= n; j += VEC)
		vstream(y + j, vexp(vload(x + j) - m) * inv);
#endif
	for (; j + VEC <= n; j += VEC)
		vstore(y + j, vexp(vload(x + j) - m) * inv);
	for (; j < n; j++)
		y[j] = sexp(x[j] - m) * inv;
}

void softmax(const float *x, float *y, int32_t rows, int32_t cols)
{
	int nt = THREADS > 0 ? THREADS : omp_get_max_threads();
	int32_t groups = (rows + ROWS - 1) / ROWS;
#pragma omp parallel num_threads(nt)
	{
#pragma omp for schedule(static) nowait
		for (int32_t g = 0; g < groups; g++) {
			int32_t r0 = g * ROWS;
			float m[ROWS], s[ROWS];
			if (r0 + ROWS <= rows) {
				rows_stats(x + (int64_t)r0 * cols, cols, cols, m, s);
			} else {
				/* a full ROWS-wide group would read past the last row: take the leftover
				 * rows one by one with every slot pointing at the same row (stride 0) */
				for (int32_t r = r0; r < rows; r++) {
					float mm[ROWS], sm[ROWS];
					rows_stats(x + (int64_t)r * cols, 0, cols, mm, sm);
					m[r - r0] = mm[0];
					s[r - r0] = sm[0];
				}
			}
			for (int32_t r = r0; r < rows && r < r0 + ROWS; r++)
				row_write(x + (int64_t)r * cols, y + (int64_t)r * cols, cols, m[r - r0],
					  s[r - r0]);
		}
#if STREAM
		/* non-temporal stores are weakly ordered: each thread fences its own before the
		 * barrier that ends the region, so the caller sees all of y */
		_mm_sfence();
#endif
	}
}
