/* @ksearch
family: channel-simd-sequential
summary: sequential scan over time with VEC channels per SIMD vector (state dstate x VEC in registers); time tiles of u, delta, z, B, C converted to float and transposed first; OpenMP over (batch, channel group)
rating: 7
difficulty: 3
knobs:
  VEC: {values: [8, 16], default: 16, summary: "channels per vector (AVX2 or AVX-512 width)", impacts: {compute_hw_fit: 7, register_pressure: 5}}
  TT: {values: [16, 64, 256], default: 64, summary: "time steps per converted tile", impacts: {memory_bandwidth: 5}}
  EXP: {values: [0, 1], default: 1, summary: "0 libm expf per (channel, state, step), 1 inline vector exp2 with log2(e) folded into A", impacts: {compute_hw_fit: 9}}
  THREADS: {values: [0, 1, 2], default: 0, summary: "OpenMP threads, 0 = all", impacts: {compute_hw_fit: 5}}
  SCHED: {values: [0, 1], default: 0, summary: "0 static, 1 dynamic OpenMP schedule over channel groups"}
require:
  - "THREADS <= spec.cores"
  - "VEC * 4 <= spec.simd_bytes"
@end */
/* The recurrence is sequential in t but independent across channels and states. Putting
 * channels in SIMD lanes makes every per-step quantity (dt, u, z, y) a vector and B[n,t],
 * C[n,t] broadcasts; the state h[n] (one vector per n) lives in registers for dstate <= 16.
 * Inputs are [.., seqlen]-contiguous per channel, so each tile is transposed to [t][lane]. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#ifndef VEC
#define VEC 16
#endif
#ifndef TT
#define TT 64
#endif
#ifndef EXP
#define EXP 1
#endif
#ifndef THREADS
#define THREADS 0
#endif
#ifndef SCHED
#define SCHED 0
#endif

/* a variant's wrapper defines SS_GATE (0: no z input, y = C.h + D*u), SS_F32 (1: f32 u, delta,
 * B, C, z and y instead of f16; left undefined it is 0) and its entry's name SS_FN */
#ifndef SS_GATE
#define SS_GATE 1
#define SS_F32 0
#define SS_FN selective_scan
#endif
#if SS_F32
typedef float ss_t; /* the element type of u, delta, B, C, z and y */
#else
typedef _Float16 ss_t;
#endif

typedef float vf __attribute__((vector_size(VEC * 4)));
typedef int32_t vi __attribute__((vector_size(VEC * 4)));
typedef float vfu __attribute__((vector_size(VEC * 4), aligned(4), may_alias));

static inline vf vload(const float *p) { return *(const vfu *)p; }
static inline void vstore(float *p, vf v) { *(vfu *)p = v; }
static inline vf vsplat(float s) { return (vf){0} + s; }
static inline vf vsel(vi m, vf a, vf b) { return (vf)((m & (vi)a) | (~m & (vi)b)); }

/* 2^x with n = round(x) and a degree-6 polynomial for 2^f, |f| <= 1/2 (rel. error ~1e-7) */
static inline vf vexp2(vf x)
{
	x = vsel(x < -126.0f, vsplat(-126.0f), x);
	x = vsel(x > 127.0f, vsplat(127.0f), x);
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
static inline vf vexp(vf x) { return vexp2(x * 1.44269504f); }

/* log(1 + w) for w in [0, 1]: 2 atanh(s), s = w / (2 + w) <= 1/3, odd series to s^11 */
static inline vf vlog1p01(vf w)
{
	vf s = w / (w + 2.0f);
	vf s2 = s * s;
	vf p = vsplat(1.0f / 11);
	p = p * s2 + 1.0f / 9;
	p = p * s2 + 1.0f / 7;
	p = p * s2 + 1.0f / 5;
	p = p * s2 + 1.0f / 3;
	p = p * s2 + 1.0f;
	return 2.0f * s * p;
}

/* softplus(x) = max(x, 0) + log1p(exp(-|x|)); equals x to float precision above 20 */
static inline vf vsoftplus(vf x)
{
	vf ax = vsel(x < 0.0f, -x, x);
	vf pos = vsel(x > 0.0f, x, vsplat(0.0f));
	return pos + vlog1p01(vexp(-ax));
}

/* one group of VEC channels [d0, d0+nc) of batch b */
static void group_scan(const ss_t *u, const ss_t *delta, const float *A,
		       const ss_t *Bb, const ss_t *Cb, const float *D, const ss_t *z,
		       const float *delta_bias, ss_t *y, int32_t dim, int32_t seqlen,
		       int32_t dstate, int64_t rowbase, int32_t d0, int32_t nc, float *w)
{
	float *tu = w, *tdt = tu + TT * VEC, *tz = tdt + TT * VEC, *ty = tz + TT * VEC;
	float *tb = ty + TT * VEC, *tc = tb + (size_t)TT * dstate;
	vf *h = (vf *)(tc + (size_t)TT * dstate);
	vf *av = h + dstate;
	(void)dim;
	/* A per state as a vector over channels; padded lanes get A = 0 (h stays finite) */
	for (int32_t n = 0; n < dstate; n++) {
		vf a = vsplat(0.0f);
		for (int32_t l = 0; l < nc; l++)
			a[l] = A[(int64_t)(d0 + l) * dstate + n];
#if EXP
		a *= 1.44269504f;
#endif
		av[n] = a;
		h[n] = vsplat(0.0f);
	}
	vf dv = vsplat(0.0f), bias = vsplat(0.0f);
	for (int32_t l = 0; l < nc; l++) {
		dv[l] = D[d0 + l];
		bias[l] = delta_bias[d0 + l];
	}
	for (int32_t t0 = 0; t0 < seqlen; t0 += TT) {
		const int32_t nt = seqlen - t0 < TT ? seqlen - t0 : TT;
		/* transpose the tile to [t][lane]; padded lanes read as 0 */
		for (int32_t l = 0; l < VEC; l++) {
			const int64_t off = rowbase + (int64_t)l * seqlen + t0;
			for (int32_t t = 0; t < nt; t++) {
				const int ok = l < nc;
				tu[t * VEC + l] = ok ? (float)u[off + t] : 0.0f;
				tdt[t * VEC + l] = ok ? (float)delta[off + t] : 0.0f;
#if SS_GATE
				tz[t * VEC + l] = ok ? (float)z[off + t] : 0.0f;
#endif
			}
		}
		for (int32_t n = 0; n < dstate; n++)
			for (int32_t t = 0; t < nt; t++) {
				tb[t * dstate + n] = (float)Bb[(int64_t)n * seqlen + t0 + t];
				tc[t * dstate + n] = (float)Cb[(int64_t)n * seqlen + t0 + t];
			}
		for (int32_t t = 0; t < nt; t++) {
			const vf dt = vsoftplus(vload(tdt + t * VEC) + bias);
			const vf ut = vload(tu + t * VEC);
			const vf du = dt * ut;
			vf acc = dv * ut;
			const float *bt = tb + t * dstate, *ct = tc + t * dstate;
			for (int32_t n = 0; n < dstate; n++) {
#if EXP
				const vf a = vexp2(dt * av[n]);
#else
				vf a, x = dt * av[n];
				for (int l = 0; l < VEC; l++)
					a[l] = expf(x[l]);
#endif
				h[n] = a * h[n] + du * bt[n];
				acc += ct[n] * h[n];
			}
#if SS_GATE
			const vf zt = vload(tz + t * VEC);
			/* silu(z) = z * sigmoid(z) */
			acc *= zt / (1.0f + vexp(-zt));
#endif
			vstore(ty + t * VEC, acc);
		}
		for (int32_t l = 0; l < nc; l++) {
			const int64_t off = rowbase + (int64_t)l * seqlen + t0;
			for (int32_t t = 0; t < nt; t++)
				y[off + t] = (ss_t)ty[t * VEC + l];
		}
	}
}

void SS_FN(const ss_t *u, const ss_t *delta, const float *A, const ss_t *B, const ss_t *C,
	   const float *D,
#if SS_GATE
	   const ss_t *z,
#endif
	   const float *delta_bias, ss_t *y, int32_t batch, int32_t dim, int32_t seqlen,
	   int32_t dstate)
{
#if !SS_GATE
	const ss_t *z = NULL; /* never read */
#endif
	int nt = THREADS > 0 ? THREADS : omp_get_max_threads();
	const int32_t ng = (dim + VEC - 1) / VEC;
	const int64_t tasks = (int64_t)batch * ng;
#pragma omp parallel num_threads(nt)
	{
		size_t fl = (size_t)4 * TT * VEC + (size_t)2 * TT * dstate + (size_t)2 * dstate * VEC;
		float *w = aligned_alloc(64, (fl * sizeof(float) + 63) / 64 * 64);
#if SCHED == 0
#pragma omp for schedule(static)
#else
#pragma omp for schedule(dynamic, 1)
#endif
		for (int64_t t = 0; t < tasks; t++) {
			const int32_t b = (int32_t)(t / ng), g = (int32_t)(t % ng);
			const int32_t d0 = g * VEC;
			const int32_t nc = dim - d0 < VEC ? dim - d0 : VEC;
			const int64_t rowbase = ((int64_t)b * dim + d0) * seqlen;
			group_scan(u, delta, A, B + (int64_t)b * dstate * seqlen,
				   C + (int64_t)b * dstate * seqlen, D, z, delta_bias, y, dim, seqlen,
				   dstate, rowbase, d0, nc, w);
		}
		free(w);
	}
}
