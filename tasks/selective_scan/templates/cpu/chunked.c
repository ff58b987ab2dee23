/* @ksearch
family: state-simd-chunked
summary: state dimension in SIMD lanes, one channel per task; optionally the sequence is cut into chunks scanned in parallel from a zero state, chunk carries combined with (a2,b2)o(a1,b1) = (a2*a1, a2*b1 + b2), then each chunk rescanned from its true start state
rating: 6
difficulty: 4
knobs:
  CHUNK: {values: [0, 64, 256, 1024], default: 0, summary: "time steps per chunk; 0 scans each channel sequentially in one piece", impacts: {compute_hw_fit: 6, memory_bandwidth: 3}}
  VEC: {values: [8, 16], default: 16, summary: "states per vector (AVX2 or AVX-512 width)", impacts: {compute_hw_fit: 6, register_pressure: 3}}
  EXP: {values: [0, 1], default: 1, summary: "0 libm expf per (state, step), 1 inline vector exp2 with log2(e) folded into A", impacts: {compute_hw_fit: 9}}
  THREADS: {values: [0, 1, 2], default: 0, summary: "OpenMP threads, 0 = all", impacts: {compute_hw_fit: 5}}
  SCHED: {values: [0, 1], default: 0, summary: "0 static, 1 dynamic OpenMP schedule over (channel, chunk) tasks"}
require:
  - "THREADS <= spec.cores"
  - "VEC * 4 <= spec.simd_bytes"
@end */
/* The recurrence h_t = a_t * h_{t-1} + b_t (per state, a_t = exp(dt_t A), b_t = dt_t u_t B_t)
 * is a composition of affine maps, which is associative. A chunk scanned from h = 0 yields
 * its end state S_c; its decay is prod_t a_t = exp(A * sum_t dt_t). Carrying
 * H_c = P_c H_{c-1} + S_c across chunks gives every chunk's start state, and a second scan
 * of each chunk produces y. This costs about 1.7x the work of one sequential scan but
 * exposes seqlen/CHUNK-fold more parallelism, which matters when batch*dim is small. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#ifndef CHUNK
#define CHUNK 0
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

/* 2^x: n = round(x), degree-6 polynomial for 2^f on |f| <= 1/2 (rel. error ~1e-7) */
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

/* log(1 + w), w in [0, 1]: 2 atanh(w / (2 + w)) by its odd series to the 11th power */
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
static inline vf vsoftplus(vf x)
{
	vf ax = vsel(x < 0.0f, -x, x);
	return vsel(x > 0.0f, x, vsplat(0.0f)) + vlog1p01(vexp(-ax));
}

/* decay factors exp(dt * A) for one step, A pre-scaled by log2(e) when EXP is 1 */
static inline vf vdecay(vf x)
{
#if EXP
	return vexp2(x);
#else
	vf a;
	for (int l = 0; l < VEC; l++)
		a[l] = expf(x[l]);
	return a;
#endif
}

/* aligned_alloc wants a size that is a multiple of the alignment */
static void *alloc64(size_t n) { return aligned_alloc(64, (n + 63) / 64 * 64); }

struct chan {
	const ss_t *u, *delta, *z;             /* channel rows (z: NULL without the gate) */
	const float *bt, *ct;                  /* the batch's B and C as [t][state] floats */
	ss_t *y;
	const float *A; /* dstate entries */
	float D, bias;
	int32_t seqlen, dstate, nv;
};

/* steps [t0, t0+nt): dt and dt*u per step; returns sum of dt */
static float prep(const struct chan *c, int32_t t0, int32_t nt, float *dt, float *du)
{
	int32_t t = 0;
	for (; t + VEC <= nt; t += VEC) {
		vf x, uu;
		for (int l = 0; l < VEC; l++) {
			x[l] = (float)c->delta[t0 + t + l];
			uu[l] = (float)c->u[t0 + t + l];
		}
		vf d = vsoftplus(x + c->bias);
		vstore(dt + t, d);
		vstore(du + t, d * uu);
	}
	for (; t < nt; t++) {
		float x = (float)c->delta[t0 + t] + c->bias;
		dt[t] = x <= 20.0f ? log1pf(expf(x)) : x;
		du[t] = dt[t] * (float)c->u[t0 + t];
	}
	float sdt = 0.0f;
	for (t = 0; t < nt; t++)
		sdt += dt[t];
	return sdt;
}

/* scan steps [t0, t0+nt) from state h (updated in place); writes y when emit is set;
 * returns the chunk's sum of dt */
static float scan(const struct chan *c, int32_t t0, int32_t nt, vf *h, const vf *a2, int emit,
		  float *w)
{
	const int32_t dsp = c->nv * VEC;
	float *dt = w, *du = dt + nt;
	const float sdt = prep(c, t0, nt, dt, du);
	const float *bt = c->bt + (int64_t)t0 * dsp, *ct = c->ct + (int64_t)t0 * dsp;
	for (int32_t t = 0; t < nt; t++) {
		vf acc = vsplat(0.0f);
		for (int32_t v = 0; v < c->nv; v++) {
			const vf a = vdecay(dt[t] * a2[v]);
			h[v] = a * h[v] + du[t] * vload(bt + (int64_t)t * dsp + v * VEC);
			acc += vload(ct + (int64_t)t * dsp + v * VEC) * h[v];
		}
		if (emit) {
			float yt = 0.0f;
			for (int l = 0; l < VEC; l++)
				yt += acc[l];
			const float ut = (float)c->u[t0 + t];
#if SS_GATE
			const float zt = (float)c->z[t0 + t];
			yt += c->D * ut;
			c->y[t0 + t] = (ss_t)(yt * (zt / (1.0f + expf(-zt))));
#else
			yt += c->D * ut;
			c->y[t0 + t] = (ss_t)yt;
#endif
		}
	}
	return sdt;
}

static void chan_init(struct chan *c, const ss_t *u, const ss_t *delta, const float *A,
		      const float *B, const float *C, const float *D, const ss_t *z,
		      const float *delta_bias, ss_t *y, int32_t dim, int32_t seqlen,
		      int32_t dstate, int64_t bd, vf *a2)
{
	const int32_t b = (int32_t)(bd / dim), d = (int32_t)(bd % dim);
	const int64_t row = bd * seqlen;
	c->u = u + row;
	c->delta = delta + row;
	c->z = SS_GATE ? z + row : NULL;
	c->y = y + row;
	c->nv = (dstate + VEC - 1) / VEC;
	c->bt = B + (int64_t)b * seqlen * c->nv * VEC;
	c->ct = C + (int64_t)b * seqlen * c->nv * VEC;
	c->A = A + (int64_t)d * dstate;
	c->D = D[d];
	c->bias = delta_bias[d];
	c->seqlen = seqlen;
	c->dstate = dstate;
	for (int32_t v = 0; v < c->nv; v++)
		for (int l = 0; l < VEC; l++) {
			const int32_t n = v * VEC + l;
			/* padded states get A = 0 and B = C = 0, so they stay 0 */
			a2[v][l] = n < dstate ? c->A[n] * (EXP ? 1.44269504f : 1.0f) : 0.0f;
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
	int nthr = THREADS > 0 ? THREADS : omp_get_max_threads();
	const int32_t clen = CHUNK > 0 && CHUNK < seqlen ? CHUNK : seqlen;
	const int32_t nch = (seqlen + clen - 1) / clen;
	const int32_t nv = (dstate + VEC - 1) / VEC;
	const int64_t nbd = (int64_t)batch * dim;
	/* per (channel, chunk): end state from zero (then start state), and sum of dt */
	vf *st = NULL;
	float *sdt = NULL;
	/* B and C of every batch transposed once to [t][state] floats, states zero padded:
	 * every channel of the batch reads them, so per-channel transposes would dominate */
	const int32_t dsp = nv * VEC;
	float *bt = alloc64(sizeof(float) * (size_t)2 * batch * seqlen * dsp);
	if (!bt)
		goto out;
	float *ct = bt + (size_t)batch * seqlen * dsp;
	if (nch > 1) {
		st = alloc64(sizeof(vf) * (size_t)nbd * nch * nv);
		sdt = malloc(sizeof(float) * (size_t)nbd * nch);
		if (!st || !sdt)
			goto out;
	}
#pragma omp parallel num_threads(nthr)
	{
		const size_t fl = (size_t)2 * clen + 2 * VEC;
		float *w = alloc64(fl * sizeof(float));
		vf *h = alloc64(sizeof(vf) * 2 * (size_t)nv);
		vf *a2 = h + nv;
		struct chan c;
#pragma omp for schedule(static)
		for (int64_t bt_row = 0; bt_row < (int64_t)batch * seqlen; bt_row++) {
			const int64_t b = bt_row / seqlen, t = bt_row % seqlen;
			for (int32_t n = 0; n < dsp; n++) {
				const int ok = n < dstate;
				bt[bt_row * dsp + n] = ok ? (float)B[(b * dstate + n) * seqlen + t] : 0.0f;
				ct[bt_row * dsp + n] = ok ? (float)C[(b * dstate + n) * seqlen + t] : 0.0f;
			}
		}
		if (nch > 1) {
			/* pass 1: every chunk but the last from a zero state */
#if SCHED == 0
#pragma omp for schedule(static)
#else
#pragma omp for schedule(dynamic, 1)
#endif
			for (int64_t task = 0; task < nbd * (nch - 1); task++) {
				const int64_t bd = task / (nch - 1);
				const int32_t ci = (int32_t)(task % (nch - 1));
				chan_init(&c, u, delta, A, bt, ct, D, z, delta_bias, y, dim, seqlen, dstate,
					  bd, a2);
				const int32_t t0 = ci * clen;
				const int32_t nt = seqlen - t0 < clen ? seqlen - t0 : clen;
				for (int32_t v = 0; v < nv; v++)
					h[v] = vsplat(0.0f);
				sdt[bd * nch + ci] = scan(&c, t0, nt, h, a2, 0, w);
				for (int32_t v = 0; v < nv; v++)
					st[(bd * nch + ci) * nv + v] = h[v];
			}
			/* pass 2: carry H_c = P_c H_{c-1} + S_c; slot c then holds chunk c's start */
#pragma omp for schedule(static)
			for (int64_t bd = 0; bd < nbd; bd++) {
				chan_init(&c, u, delta, A, bt, ct, D, z, delta_bias, y, dim, seqlen, dstate,
					  bd, a2);
				for (int32_t v = 0; v < nv; v++)
					h[v] = vsplat(0.0f);
				for (int32_t ci = 0; ci < nch; ci++) {
					vf *slot = st + (bd * nch + ci) * nv;
					const float s = ci < nch - 1 ? sdt[bd * nch + ci] : 0.0f;
					for (int32_t v = 0; v < nv; v++) {
						const vf end = ci < nch - 1 ? slot[v] : vsplat(0.0f);
						const vf start = h[v];
						h[v] = vdecay(s * a2[v]) * start + end;
						slot[v] = start;
					}
				}
			}
		}
		/* pass 3: scan every chunk from its start state and write y */
#if SCHED == 0
#pragma omp for schedule(static)
#else
#pragma omp for schedule(dynamic, 1)
#endif
		for (int64_t task = 0; task < nbd * nch; task++) {
			const int64_t bd = task / nch;
			const int32_t ci = (int32_t)(task % nch);
			chan_init(&c, u, delta, A, bt, ct, D, z, delta_bias, y, dim, seqlen, dstate, bd,
				  a2);
			const int32_t t0 = ci * clen;
			const int32_t nt = seqlen - t0 < clen ? seqlen - t0 : clen;
			for (int32_t v = 0; v < nv; v++)
				h[v] = nch > 1 ? st[(bd * nch + ci) * nv + v] : vsplat(0.0f);
			scan(&c, t0, nt, h, a2, 1, w);
		}
		free(h);
		free(w);
	}
out:
	free(bt);
	free(st);
	free(sdt);
}
