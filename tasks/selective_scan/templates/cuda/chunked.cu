/* @ksearch
family: chunked-two-level
summary: "the classic two-level parallel scan in three launches: (1) every chunk of CHUNK steps of every channel is scanned from h = 0 in parallel (state in registers, SPLIT lanes per channel, inputs staged in shared memory) and leaves its end state and sum of dt; (2) one thread per (channel, state) scans the chunk carries, decay exp(A * sum dt); (3) every chunk is rescanned from its true start state and writes y. Parallel over the sequence at any batch, at the cost of a second pass over the inputs and the exps"
rating: 6
difficulty: 3
knobs:
  CPB: {values: [8, 16, 32, 64], default: 16, summary: "channels per block (they share the staged B and C)", impacts: {memory_bandwidth: 6, compute_hw_fit: 4}}
  SPLIT: {values: [1, 2, 4, 8, 16], default: 4, summary: "lanes per channel, each owning dstate / SPLIT states", impacts: {compute_hw_fit: 8, register_pressure: 4}}
  CHUNK: {values: [32, 64, 128], default: 64, summary: "steps per chunk: more chunks, more parallelism and more carries", impacts: {compute_hw_fit: 7, memory_bandwidth: 3}}
  VEC: {values: [2, 4, 8], default: 8, summary: "values per staging load and output store (f16: 8 = 16 bytes; f32: 4 = 16 bytes, 8 = two such loads)", impacts: {memory_bandwidth: 6}}
require:
  - "CPB * SPLIT % 32 == 0"
  - "CPB * SPLIT <= 1024"
  - "CHUNK % VEC == 0"
  - "(4 * CPB * (CHUNK + 1) + 32 * CHUNK) * 4 <= 49152"
@end */
/* Math (tasks/selective_scan/README.md): per state the step is the affine map
 * h -> a_t h + b_t, a_t = exp(dt_t A), b_t = dt_t u_t B_t.  A chunk composes to
 * (exp(A * sum dt), end state from 0), so pass 1 needs to keep only the end state and one sum
 * per channel; pass 2 walks the chunks of each (channel, state) in order,
 * start_k+1 = exp(A S_k) start_k + end_k, overwriting the end states with the start states;
 * pass 3 is the sequential scan of each chunk from its start.  Passes 1 and 3 each take one
 * ex2 per (state, step): twice the exps of a one-pass scan, which the MUFU unit pays for.
 * Scratch (end states and sums, batch * dim * chunks * 17 floats) is allocated once and
 * grown when a call needs more; it holds no results between calls. */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

/* a variant's wrapper defines SS_GATE (0: no z input, y = C.h + D*u), SS_F32 (1: f32 u, delta,
 * B, C, z and y instead of f16; left undefined it is 0) and its entry's name SS_FN */
#ifndef SS_GATE
#define SS_GATE 1
#define SS_F32 0
#define SS_FN selective_scan
#endif
#if SS_F32
typedef float ss_t; /* the element type of u, delta, B, C, z and y */
static __device__ __forceinline__ float ss_load(float x) { return x; }
static __device__ __forceinline__ float ss_store(float x) { return x; }
#else
typedef __half ss_t;
static __device__ __forceinline__ float ss_load(__half x) { return __half2float(x); }
static __device__ __forceinline__ __half ss_store(float x) { return __float2half_rn(x); }
#endif

#ifndef CPB
#define CPB 16
#endif
#ifndef SPLIT
#define SPLIT 8
#endif
#ifndef CHUNK
#define CHUNK 64
#endif
#ifndef VEC
#define VEC 8
#endif

#define KS_LOG2E 1.4426950408889634f
#define NTHREADS (CPB * SPLIT)
#define MAXN 16	       /* states staged per step; larger dstate takes the fallback */
#define PAD (CHUNK + 1) /* rows of per-channel values: odd stride, no bank conflicts */

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

/* VEC values at p (all in range and aligned) or the in-range ones, to floats */
static __device__ __forceinline__ void load_vec(const ss_t *p, int valid, bool vec_ok,
						float (&v)[VEC])
{
	if (vec_ok && valid >= VEC) {
#if SS_F32
		/* f32: 16-byte loads of 4 floats (two for VEC 8), one 8-byte load for VEC 2 */
		if constexpr (VEC >= 4) {
#pragma unroll
			for (int k = 0; k < VEC; k += 4) {
				const float4 f = __ldg(reinterpret_cast<const float4 *>(p + k));
				v[k] = f.x, v[k + 1] = f.y, v[k + 2] = f.z, v[k + 3] = f.w;
			}
		} else {
			const float2 f = __ldg(reinterpret_cast<const float2 *>(p));
			v[0] = f.x, v[1] = f.y;
		}
#else
		if constexpr (VEC == 8) {
			uint4 r = __ldg(reinterpret_cast<const uint4 *>(p));
			const __half2 *h = reinterpret_cast<const __half2 *>(&r);
#pragma unroll
			for (int j = 0; j < 4; j++) {
				float2 f = __half22float2(h[j]);
				v[2 * j] = f.x, v[2 * j + 1] = f.y;
			}
		} else if constexpr (VEC == 4) {
			uint2 r = __ldg(reinterpret_cast<const uint2 *>(p));
			const __half2 *h = reinterpret_cast<const __half2 *>(&r);
#pragma unroll
			for (int j = 0; j < 2; j++) {
				float2 f = __half22float2(h[j]);
				v[2 * j] = f.x, v[2 * j + 1] = f.y;
			}
		} else {
			float2 f = __half22float2(__ldg(reinterpret_cast<const __half2 *>(p)));
			v[0] = f.x, v[1] = f.y;
		}
#endif
	} else {
#pragma unroll
		for (int k = 0; k < VEC; k++)
			v[k] = k < valid ? ss_load(p[k]) : 0.0f;
	}
}

/* MODE 0: the chunk from h = 0, end state and sum of dt to scratch; MODE 1: the chunk from
 * its start state (scratch, after pass 2), y to memory.  blockIdx.y is the chunk. */
template <int NS, int MODE>
__global__ void __launch_bounds__(NTHREADS)
	scan_chunk(const ss_t *__restrict__ u, const ss_t *__restrict__ delta,
		   const float *__restrict__ A, const ss_t *__restrict__ B,
		   const ss_t *__restrict__ C, const float *__restrict__ D,
		   const ss_t *__restrict__ z, const float *__restrict__ delta_bias,
		   ss_t *__restrict__ y, int32_t batch, int32_t dim, int32_t seqlen,
		   int32_t dstate, float *__restrict__ states, float *__restrict__ sums)
{
	__shared__ float s_dt[CPB][PAD], s_dtu[CPB][PAD], s_u[CPB][PAD], s_y[CPB][PAD];
	__shared__ float s_B[MAXN][CHUNK], s_C[MAXN][CHUNK];
	const int tid = threadIdx.x, c = tid / SPLIT, sg = tid % SPLIT;
	const int64_t L = seqlen;
	/* a block's channels lie in one batch: blocks are (batch, channel group) */
	const int groups = (dim + CPB - 1) / CPB;
	const int64_t b = blockIdx.x / groups, d0 = (int64_t)(blockIdx.x % groups) * CPB;
	const int64_t d = d0 + c;
	const bool active = d < dim;
	const bool vec_ok = L % VEC == 0;
	const ss_t *Bb = B + b * dstate * L, *Cb = C + b * dstate * L;
	const int64_t nchunks = gridDim.y, k = blockIdx.y;
	/* scratch index of (channel, chunk) */
	const int64_t slot = ((b * dim + (active ? d : 0)) * nchunks + k);
	float A2[NS], h[NS];
#pragma unroll
	for (int i = 0; i < NS; i++) {
		const int n = sg * NS + i;
		A2[i] = active && n < dstate ? A[d * dstate + n] * KS_LOG2E : 0.0f;
		h[i] = MODE == 1 && active ? states[slot * MAXN + n] : 0.0f;
	}
	float S = 0.0f;
	{
		const int64_t t0 = k * CHUNK;
		const int valid_t = L - t0 < CHUNK ? (int)(L - t0) : CHUNK;
		/* stage dt, dt*u, u of the block's channels and B, C of the chunk */
		for (int idx = tid; idx < CPB * (CHUNK / VEC); idx += NTHREADS) {
			const int cc = idx / (CHUNK / VEC), j = (idx % (CHUNK / VEC)) * VEC;
			const int64_t dd = d0 + cc;
			float uv[VEC], dv[VEC];
			if (dd < dim) {
				const int64_t off = (b * dim + dd) * L + t0 + j;
				load_vec(u + off, valid_t - j, vec_ok, uv);
				load_vec(delta + off, valid_t - j, vec_ok, dv);
			}
			const float bias = dd < dim ? delta_bias[dd] : 0.0f;
#pragma unroll
			for (int q = 0; q < VEC; q++) {
				const bool in = dd < dim && j + q < valid_t;
				const float dt = in ? softplus(dv[q] + bias) : 0.0f;
				s_dt[cc][j + q] = dt;
				s_dtu[cc][j + q] = in ? dt * uv[q] : 0.0f;
				s_u[cc][j + q] = in ? uv[q] : 0.0f;
			}
		}
		for (int idx = tid; idx < MAXN * (CHUNK / VEC); idx += NTHREADS) {
			const int n = idx / (CHUNK / VEC), j = (idx % (CHUNK / VEC)) * VEC;
			float bv[VEC], cv[VEC];
			if (n < dstate) {
				load_vec(Bb + n * L + t0 + j, valid_t - j, vec_ok, bv);
				load_vec(Cb + n * L + t0 + j, valid_t - j, vec_ok, cv);
			}
#pragma unroll
			for (int q = 0; q < VEC; q++) {
				s_B[n][j + q] = n < dstate ? bv[q] : 0.0f;
				s_C[n][j + q] = n < dstate ? cv[q] : 0.0f;
			}
		}
		__syncthreads();
		/* the scan: each lane its states, step by step */
#pragma unroll 4
		for (int t = 0; t < CHUNK; t++) {
			const float dt = s_dt[c][t], dtu = s_dtu[c][t];
			float acc = 0.0f;
			S += dt;
#pragma unroll
			for (int i = 0; i < NS; i++) {
				const int n = sg * NS + i;
				h[i] = fmaf(ex2(dt * A2[i]), h[i], dtu * s_B[n][t]);
				if (MODE == 1)
					acc = fmaf(s_C[n][t], h[i], acc);
			}
			if (MODE == 1) {
#pragma unroll
				for (int o = 1; o < SPLIT; o <<= 1)
					acc += __shfl_xor_sync(0xffffffffu, acc, o);
				if (sg == 0)
					s_y[c][t] = acc;
			}
		}
		if (MODE == 0) {
			if (active) {
#pragma unroll
				for (int i = 0; i < NS; i++)
					states[slot * MAXN + sg * NS + i] = h[i];
				if (sg == 0)
					sums[slot] = S;
			}
			return;
		}
		__syncthreads();
		/* y = (C.h + D u) silu(z), stored coalesced */
		for (int idx = tid; idx < CPB * (CHUNK / VEC); idx += NTHREADS) {
			const int cc = idx / (CHUNK / VEC), j = (idx % (CHUNK / VEC)) * VEC;
			const int64_t dd = d0 + cc;
			if (dd >= dim || j >= valid_t)
				continue;
			const int64_t off = (b * dim + dd) * L + t0 + j;
			float zv[VEC];
			if constexpr (SS_GATE)
				load_vec(z + off, valid_t - j, vec_ok, zv);
			const float Dd = D[dd];
			ss_t out[VEC];
#pragma unroll
			for (int q = 0; q < VEC; q++) {
				float o = fmaf(Dd, s_u[cc][j + q], s_y[cc][j + q]);
				if constexpr (SS_GATE)
					o = o * zv[q] / (1.0f + __expf(-zv[q]));
				out[q] = ss_store(o);
			}
			if (vec_ok && valid_t - j >= VEC) {
#if SS_F32
				if constexpr (VEC >= 4) {
#pragma unroll
					for (int k4 = 0; k4 < VEC; k4 += 4)
						*reinterpret_cast<float4 *>(y + off + k4) = make_float4(
							out[k4], out[k4 + 1], out[k4 + 2], out[k4 + 3]);
				} else {
					*reinterpret_cast<float2 *>(y + off) = make_float2(out[0], out[1]);
				}
#else
				if constexpr (VEC == 8)
					*reinterpret_cast<uint4 *>(y + off) = *reinterpret_cast<uint4 *>(out);
				else if constexpr (VEC == 4)
					*reinterpret_cast<uint2 *>(y + off) = *reinterpret_cast<uint2 *>(out);
				else
					*reinterpret_cast<__half2 *>(y + off) = *reinterpret_cast<__half2 *>(out);
#endif
			} else {
				for (int q = 0; q < VEC && j + q < valid_t; q++)
					y[off + q] = out[q];
			}
		}
	}
}

/* pass 2: one thread per (channel, state) walks the chunks; end states become start states */
__global__ void scan_carries(const float *__restrict__ A, float *__restrict__ states,
			     const float *__restrict__ sums, int32_t batch, int32_t dim,
			     int32_t dstate, int64_t nchunks)
{
	const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (int64_t)batch * dim * MAXN)
		return;
	const int64_t bd = idx / MAXN;
	const int n = (int)(idx % MAXN);
	if (n >= dstate)
		return;
	const float A2 = A[(bd % dim) * dstate + n] * KS_LOG2E;
	float h = 0.0f;
	for (int64_t k = 0; k < nchunks; k++) {
		const int64_t slot = bd * nchunks + k;
		const float end = states[slot * MAXN + n];
		states[slot * MAXN + n] = h;
		h = fmaf(ex2(A2 * sums[slot]), h, end);
	}
}

/* dstate beyond 16: one thread per channel, the state in a local array */
__global__ void scan_wide(const ss_t *u, const ss_t *delta, const float *A, const ss_t *B,
			  const ss_t *C, const float *D, const ss_t *z, const float *delta_bias,
			  ss_t *y, int32_t batch, int32_t dim, int32_t seqlen, int32_t dstate)
{
	const int64_t bd = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (bd >= (int64_t)batch * dim)
		return;
	const int64_t b = bd / dim, d = bd % dim, L = seqlen;
	float h[1024];
	for (int n = 0; n < dstate; n++)
		h[n] = 0.0f;
	for (int64_t t = 0; t < L; t++) {
		const float dt = softplus(ss_load(delta[bd * L + t]) + delta_bias[d]);
		const float ut = ss_load(u[bd * L + t]);
		float acc = 0.0f;
		for (int n = 0; n < dstate; n++) {
			const int64_t o = (b * dstate + n) * L + t;
			h[n] = expf(dt * A[d * dstate + n]) * h[n] + dt * ut * ss_load(B[o]);
			acc += ss_load(C[o]) * h[n];
		}
		if constexpr (SS_GATE) {
			const float zt = ss_load(z[bd * L + t]);
			y[bd * L + t] = ss_store((acc + D[d] * ut) * zt / (1.0f + expf(-zt)));
		} else {
			y[bd * L + t] = ss_store(acc + D[d] * ut);
		}
	}
}

void SS_FN(const ss_t *u, const ss_t *delta, const float *A, const ss_t *B, const ss_t *C,
	   const float *D,
#if SS_GATE
	   const ss_t *z,
#endif
	   const float *delta_bias, ss_t *y, int32_t batch, int32_t dim, int32_t seqlen,
	   int32_t dstate, cudaStream_t stream)
{
#if !SS_GATE
	const ss_t *z = nullptr; /* never read: the kernels compile the gate out */
#endif
	if (batch <= 0 || dim <= 0 || seqlen <= 0)
		return;
	const unsigned blocks = (unsigned)((int64_t)batch * ((dim + CPB - 1) / CPB));
	const int64_t nchunks = ((int64_t)seqlen + CHUNK - 1) / CHUNK;
	const size_t need = (size_t)batch * dim * nchunks * (MAXN + 1) * sizeof(float);
	static float *scratch;
	static size_t have;
	if (dstate <= MAXN && nchunks <= 65535 && need > have) {
		if (scratch)
			cudaFree(scratch);
		scratch = nullptr, have = 0;
		if (cudaMalloc(&scratch, need) != cudaSuccess)
			return; /* y stays unwritten: the evaluation reports it */
		have = need;
	}
	if (dstate <= MAXN && nchunks <= 65535) {
		float *states = scratch, *sums = scratch + (size_t)batch * dim * nchunks * MAXN;
		const dim3 grid(blocks, (unsigned)nchunks);
		constexpr int NS = (MAXN + SPLIT - 1) / SPLIT;
		scan_chunk<NS, 0><<<grid, NTHREADS, 0, stream>>>(u, delta, A, B, C, D, z, delta_bias,
								 y, batch, dim, seqlen, dstate,
								 states, sums);
		const int64_t threads = (int64_t)batch * dim * MAXN;
		scan_carries<<<(unsigned)((threads + 255) / 256), 256, 0, stream>>>(
			A, states, sums, batch, dim, dstate, nchunks);
		scan_chunk<NS, 1><<<grid, NTHREADS, 0, stream>>>(u, delta, A, B, C, D, z, delta_bias,
								 y, batch, dim, seqlen, dstate,
								 states, sums);
	} else if (dstate <= 1024)
		scan_wide<<<(unsigned)(((int64_t)batch * dim + 127) / 128), 128, 0, stream>>>(
			u, delta, A, B, C, D, z, delta_bias, y, batch, dim, seqlen, dstate);
}
