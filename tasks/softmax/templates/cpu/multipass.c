/* @ksearch
family: multipass-simd
summary: three passes per row (max, exp+sum into y, scale) with explicit SIMD vectors, OpenMP over rows
rating: 6
difficulty: 2
knobs:
  VEC: {values: [4, 8, 16], default: 16, summary: "floats per vector (SSE, AVX2, AVX-512 width)", impacts: {compute_hw_fit: 6, register_pressure: 2}}
  UNROLL: {values: [1, 2, 4], default: 2, summary: "independent accumulators per pass (hides FMA and max latency)", impacts: {compute_hw_fit: 4, register_pressure: 3}}
  EXP: {values: [0, 1, 2], default: 2, summary: "0 libm expf, 1 libm exp2f(x*log2e), 2 inline vector polynomial exp", impacts: {compute_hw_fit: 8}}
  THREADS: {values: [0, 1, 2], default: 0, summary: "OpenMP threads, 0 = all", impacts: {memory_bandwidth: 5}}
  SCHED: {values: [0, 1], default: 0, summary: "0 static, 1 dynamic OpenMP schedule over rows"}
require:
  - "THREADS <= spec.cores"
  - "VEC * 4 <= spec.simd_bytes"
@end */
/* Every pass touches one row; a row of a few thousand floats stays in L1/L2, so the three
 * passes cost little extra DRAM traffic and the work is dominated by exp. */
#include <math.h>
#include <stdint.h>
#include <omp.h>

#ifndef VEC
#define VEC 16
#endif
#ifndef UNROLL
#define UNROLL 2
#endif
#ifndef EXP
#define EXP 2
#endif
#ifndef THREADS
#define THREADS 0
#endif
#ifndef SCHED
#define SCHED 0
#endif

typedef float vf __attribute__((vector_size(VEC * 4)));
typedef int32_t vi __attribute__((vector_size(VEC * 4)));
/* unaligned, aliasing view used for loads and stores of rows at any offset */
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
static inline float hmax(vf v)
{
	float m = v[0];
	for (int i = 1; i < VEC; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}
static inline float hsum(vf v)
{
	float s = 0.0f;
	for (int i = 0; i < VEC; i++)
		s += v[i];
	return s;
}

/* exp(x) = 2^n * e^r with n = round(x*log2e) and r = x - n*ln2 split in two parts (Cody-Waite)
 * so that r is exact enough; e^r on |r| <= ln2/2 by a degree-6 Taylor polynomial (rel. error
 * ~1e-7). Inputs are clamped so 2^n stays a normal float. */
static inline vf vexp(vf x)
{
	x = vmin(vmax(x, vsplat(-87.0f)), vsplat(88.0f));
	vf n = x * 1.44269504f;
	n = (n + 12582912.0f) - 12582912.0f; /* round to nearest via 1.5*2^23 */
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
#if EXP == 0
	return expf(x);
#elif EXP == 1
	return exp2f(x * 1.44269504f);
#else
	vf v = vexp(vsplat(x));
	return v[0];
#endif
}

static void row_softmax(const float *x, float *y, int32_t n)
{
	int32_t j = 0;
	/* pass 1: row maximum */
	vf mv[UNROLL];
	for (int u = 0; u < UNROLL; u++)
		mv[u] = vsplat(-INFINITY);
	for (; j + UNROLL * VEC <= n; j += UNROLL * VEC)
		for (int u = 0; u < UNROLL; u++)
			mv[u] = vmax(mv[u], vload(x + j + u * VEC));
	for (int u = 1; u < UNROLL; u++)
		mv[0] = vmax(mv[0], mv[u]);
	float m = hmax(mv[0]);
	for (; j < n; j++)
		m = x[j] > m ? x[j] : m;

	/* pass 2: y = exp(x - m), summed on the way */
	float s = 0.0f;
	j = 0;
#if EXP == 2
	vf sv[UNROLL];
	for (int u = 0; u < UNROLL; u++)
		sv[u] = vsplat(0.0f);
	for (; j + UNROLL * VEC <= n; j += UNROLL * VEC)
		for (int u = 0; u < UNROLL; u++) {
			vf e = vexp(vload(x + j + u * VEC) - m);
			vstore(y + j + u * VEC, e);
			sv[u] += e;
		}
	for (int u = 1; u < UNROLL; u++)
		sv[0] += sv[u];
	s = hsum(sv[0]);
#endif
	for (; j < n; j++) {
		y[j] = sexp(x[j] - m);
		s += y[j];
	}

	/* pass 3: scale by the reciprocal (one division per row) */
	const float inv = 1.0f / s;
	j = 0;
	for (; j + UNROLL * VEC <= n; j += UNROLL * VEC)
		for (int u = 0; u < UNROLL; u++)
			vstore(y + j + u * VEC, vload(y + j + u * VEC) * inv);
	for (; j < n; j++)
		y[j] *= inv;
}

void softmax(const float *x, float *y, int32_t rows, int32_t cols)
{
	int nt = THREADS > 0 ? THREADS : omp_get_max_threads();
#if SCHED == 0
#pragma omp parallel for schedule(static) num_threads(nt)
#else
#pragma omp parallel for schedule(dynamic, 4) num_threads(nt)
#endif
	for (int32_t r = 0; r < rows; r++)
		row_softmax(x + (int64_t)r * cols, y + (int64_t)r * cols, cols);
}
