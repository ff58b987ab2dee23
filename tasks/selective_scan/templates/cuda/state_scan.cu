/* @ksearch
family: warp-scan-state-outer
summary: "one warp per channel walks the sequence in tiles of 32 * ITEMS steps; inside a tile each lane owns ITEMS consecutive steps and the states are visited one after another (UNR at a time): the lane's (decay, state) pairs get an in-register inclusive scan, the lanes' totals a warp-shuffle scan, the carry from the previous tile closes the chain, and y accumulates C.h at once, so nothing is scanned twice and only the carry per state lives across tiles; several channels per block share B and C through L1"
rating: 8
difficulty: 4
knobs:
  ITEMS: {values: [4, 8, 16, 32], default: 16, summary: "consecutive steps per lane; more items, fewer shuffle levels per step, more registers", impacts: {register_pressure: 8, compute_hw_fit: 7}}
  CPB: {values: [1, 2, 4, 8], default: 4, summary: "channels (warps) per block, sharing B and C tiles through L1", impacts: {memory_bandwidth: 5, compute_hw_fit: 3}}
  UNR: {values: [1, 2, 4], default: 2, summary: "states interleaved in one pass over the items: independent chains for the scheduler, more registers", impacts: {register_pressure: 7, compute_hw_fit: 6}}
  VEC: {values: [2, 4, 8], default: 8, summary: "f16 values per vector load and store (8 = 16 bytes); rows whose length is no multiple fall back to scalar accesses", impacts: {memory_bandwidth: 6}}
require:
  - "ITEMS % VEC == 0"
  - "ITEMS * UNR <= 64"
@end */
/* Per state n and step t: a_t = 2^(dt_t A_n log2e), b_t = dt_t u_t B_nt, h_t = a_t h_{t-1} + b_t.
 * A lane turns its ITEMS pairs into inclusive prefixes (P_k, Q_k) = composition of pairs 0..k
 * in registers (one FMA and one multiply per step), the warp combines the lanes' totals with
 * log2(32) = 5 shuffle levels, and the state entering the lane, h_in, gives
 * h_k = P_k h_in + Q_k and y_k += C_nk h_k directly: per (state, step) one ex2 and about six
 * FMA-pipe instructions, against two ex2 for a scan that reruns its segments.  y starts as
 * D u and is gated by silu(z) once all states are in.  The decay products can underflow to 0
 * (|A dt| large): then h_k = Q_k, which is the exact limit. */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#ifndef ITEMS
#define ITEMS 16
#endif
#ifndef CPB
#define CPB 4
#endif
#ifndef UNR
#define UNR 2
#endif
#ifndef VEC
#define VEC 8
#endif

#define KS_LOG2E 1.4426950408889634f
#define TILE (32 * ITEMS)
#define MAXN 16 /* states kept as carries in registers; larger dstate takes the fallback */

static __device__ __forceinline__ float ex2(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}

static __device__ __forceinline__ float softplus(float x)
{
	return x <= 20.0f ? log1pf(__expf(x)) : x;
}

/* ITEMS f16 values starting at step t0 of a row; steps past len read as 0 */
static __device__ __forceinline__ void load_items(const __half *__restrict__ row, int64_t t0,
						  int64_t len, bool vec_ok, float (&v)[ITEMS])
{
	if (vec_ok && t0 + ITEMS <= len) {
#pragma unroll
		for (int k = 0; k < ITEMS; k += VEC) {
			if constexpr (VEC == 8) {
				uint4 r = __ldg(reinterpret_cast<const uint4 *>(row + t0 + k));
				const __half2 *h = reinterpret_cast<const __half2 *>(&r);
#pragma unroll
				for (int j = 0; j < 4; j++) {
					float2 f = __half22float2(h[j]);
					v[k + 2 * j] = f.x, v[k + 2 * j + 1] = f.y;
				}
			} else if constexpr (VEC == 4) {
				uint2 r = __ldg(reinterpret_cast<const uint2 *>(row + t0 + k));
				const __half2 *h = reinterpret_cast<const __half2 *>(&r);
#pragma unroll
				for (int j = 0; j < 2; j++) {
					float2 f = __half22float2(h[j]);
					v[k + 2 * j] = f.x, v[k + 2 * j + 1] = f.y;
				}
			} else {
				float2 f = __half22float2(
					__ldg(reinterpret_cast<const __half2 *>(row + t0 + k)));
				v[k] = f.x, v[k + 1] = f.y;
			}
		}
	} else {
#pragma unroll
		for (int k = 0; k < ITEMS; k++)
			v[k] = t0 + k < len ? __half2float(row[t0 + k]) : 0.0f;
	}
}

static __device__ __forceinline__ void store_items(__half *__restrict__ row, int64_t t0,
						   int64_t len, bool vec_ok, const float (&v)[ITEMS])
{
	if (vec_ok && t0 + ITEMS <= len) {
#pragma unroll
		for (int k = 0; k < ITEMS; k += VEC) {
			__half2 h[VEC / 2];
#pragma unroll
			for (int j = 0; j < VEC / 2; j++)
				h[j] = __floats2half2_rn(v[k + 2 * j], v[k + 2 * j + 1]);
			if constexpr (VEC == 8)
				*reinterpret_cast<uint4 *>(row + t0 + k) = *reinterpret_cast<uint4 *>(h);
			else if constexpr (VEC == 4)
				*reinterpret_cast<uint2 *>(row + t0 + k) = *reinterpret_cast<uint2 *>(h);
			else
				*reinterpret_cast<__half2 *>(row + t0 + k) = h[0];
		}
	} else {
#pragma unroll
		for (int k = 0; k < ITEMS; k++)
			if (t0 + k < len)
				row[t0 + k] = __float2half_rn(v[k]);
	}
}

__global__ void __launch_bounds__(32 * CPB)
	scan_state_outer(const __half *__restrict__ u, const __half *__restrict__ delta,
			 const float *__restrict__ A, const __half *__restrict__ B,
			 const __half *__restrict__ C, const float *__restrict__ D,
			 const __half *__restrict__ z, const float *__restrict__ delta_bias,
			 __half *__restrict__ y, int32_t batch, int32_t dim, int32_t seqlen,
			 int32_t dstate)
{
	const int lane = threadIdx.x & 31;
	const int64_t bd = (int64_t)blockIdx.x * CPB + (threadIdx.x >> 5);
	if (bd >= (int64_t)batch * dim)
		return; /* whole warps leave; no barrier follows */
	const int64_t b = bd / dim, d = bd % dim, L = seqlen;
	const __half *ur = u + bd * L, *dr = delta + bd * L;
	const __half *Bb = B + b * dstate * L, *Cb = C + b * dstate * L;
	const bool vec_ok = L % VEC == 0;
	const float bias = delta_bias[d], Dd = D[d];
	/* per warp: A log2e and the carry of each state; in shared memory because the state loop
	 * is not unrolled (unrolled, the compiler hoists every state's loads and runs out of
	 * registers) and registers cannot be indexed at run time */
	__shared__ float s_A2[CPB][MAXN], s_carry[CPB][MAXN];
	float *A2 = s_A2[threadIdx.x >> 5], *carry = s_carry[threadIdx.x >> 5];
	if (lane < MAXN) {
		A2[lane] = lane < dstate ? A[d * dstate + lane] * KS_LOG2E : 0.0f;
		carry[lane] = 0.0f;
	}
	__syncwarp();
	for (int64_t t0 = 0; t0 < L; t0 += TILE) {
		const int64_t base = t0 + (int64_t)lane * ITEMS;
		float dt[ITEMS], dtu[ITEMS], acc[ITEMS];
		load_items(ur, base, L, vec_ok, dtu); /* u, for now */
		load_items(dr, base, L, vec_ok, dt);
#pragma unroll
		for (int k = 0; k < ITEMS; k++) {
			dt[k] = base + k < L ? softplus(dt[k] + bias) : 0.0f;
			acc[k] = Dd * dtu[k];
			dtu[k] *= dt[k];
		}
#pragma unroll 1
		for (int n0 = 0; n0 < MAXN; n0 += UNR) {
			if (n0 >= dstate)
				break; /* uniform across the warp */
			float P[UNR][ITEMS], Q[UNR][ITEMS];
#pragma unroll
			for (int j = 0; j < UNR; j++) {
				const int n = n0 + j < dstate ? n0 + j : n0; /* past dstate: B = C = 0 below */
				float bv[ITEMS];
				load_items(Bb + (int64_t)n * L, base, L, vec_ok, bv);
				const float live = n0 + j < dstate ? 1.0f : 0.0f;
#pragma unroll
				for (int k = 0; k < ITEMS; k++) {
					const float e = ex2(dt[k] * A2[n0 + j]);
					const float q = dtu[k] * bv[k] * live;
					/* inclusive prefix inside the lane */
					P[j][k] = k == 0 ? e : P[j][k - 1] * e;
					Q[j][k] = k == 0 ? q : fmaf(e, Q[j][k - 1], q);
				}
			}
			/* warp scan of the lanes' totals, then the exclusive prefix applied to carry */
#pragma unroll
			for (int j = 0; j < UNR; j++) {
				float ta = P[j][ITEMS - 1], tb = Q[j][ITEMS - 1];
#pragma unroll
				for (int o = 1; o < 32; o <<= 1) {
					const float qa = __shfl_up_sync(0xffffffffu, ta, o);
					const float qb = __shfl_up_sync(0xffffffffu, tb, o);
					if (lane >= o) {
						tb = fmaf(ta, qb, tb);
						ta *= qa;
					}
				}
				float ea = __shfl_up_sync(0xffffffffu, ta, 1);
				float eb = __shfl_up_sync(0xffffffffu, tb, 1);
				const float cin = carry[n0 + j];
				const float h_in = lane == 0 ? cin : fmaf(ea, cin, eb);
				/* the next tile's carry: the warp's total applied to this tile's carry */
				ea = __shfl_sync(0xffffffffu, ta, 31);
				eb = __shfl_sync(0xffffffffu, tb, 31);
				__syncwarp(); /* every lane has read cin */
				if (lane == 0)
					carry[n0 + j] = fmaf(ea, cin, eb);
				__syncwarp();
				const int n = n0 + j < dstate ? n0 + j : n0;
				const float live = n0 + j < dstate ? 1.0f : 0.0f;
				float cv[ITEMS];
				load_items(Cb + (int64_t)n * L, base, L, vec_ok, cv);
#pragma unroll
				for (int k = 0; k < ITEMS; k++)
					acc[k] = fmaf(cv[k] * live, fmaf(P[j][k], h_in, Q[j][k]), acc[k]);
			}
		}
		float zv[ITEMS];
		load_items(z + bd * L, base, L, vec_ok, zv);
#pragma unroll
		for (int k = 0; k < ITEMS; k++)
			acc[k] *= zv[k] / (1.0f + __expf(-zv[k]));
		store_items(y + bd * L, base, L, vec_ok, acc);
	}
}

/* dstate beyond 16: one thread per channel, the state in a local array */
__global__ void scan_wide(const __half *u, const __half *delta, const float *A, const __half *B,
			  const __half *C, const float *D, const __half *z, const float *delta_bias,
			  __half *y, int32_t batch, int32_t dim, int32_t seqlen, int32_t dstate)
{
	const int64_t bd = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (bd >= (int64_t)batch * dim)
		return;
	const int64_t b = bd / dim, d = bd % dim, L = seqlen;
	float h[1024];
	for (int n = 0; n < dstate; n++)
		h[n] = 0.0f;
	for (int64_t t = 0; t < L; t++) {
		const float dt = softplus(__half2float(delta[bd * L + t]) + delta_bias[d]);
		const float ut = __half2float(u[bd * L + t]);
		float acc = 0.0f;
		for (int n = 0; n < dstate; n++) {
			const int64_t o = (b * dstate + n) * L + t;
			h[n] = expf(dt * A[d * dstate + n]) * h[n] + dt * ut * __half2float(B[o]);
			acc += __half2float(C[o]) * h[n];
		}
		const float zt = __half2float(z[bd * L + t]);
		y[bd * L + t] = __float2half_rn((acc + D[d] * ut) * zt / (1.0f + expf(-zt)));
	}
}

void selective_scan(const __half *u, const __half *delta, const float *A, const __half *B,
		    const __half *C, const float *D, const __half *z, const float *delta_bias,
		    __half *y, int32_t batch, int32_t dim, int32_t seqlen, int32_t dstate,
		    cudaStream_t stream)
{
	if (batch <= 0 || dim <= 0 || seqlen <= 0)
		return;
	const int64_t ch = (int64_t)batch * dim;
	if (dstate <= MAXN)
		scan_state_outer<<<(unsigned)((ch + CPB - 1) / CPB), 32 * CPB, 0, stream>>>(
			u, delta, A, B, C, D, z, delta_bias, y, batch, dim, seqlen, dstate);
	else if (dstate <= 1024)
		scan_wide<<<(unsigned)((ch + 127) / 128), 128, 0, stream>>>(
			u, delta, A, B, C, D, z, delta_bias, y, batch, dim, seqlen, dstate);
}
