/* @ksearch
family: block-per-row
summary: one thread block per row with warp-shuffle plus shared-memory reductions; the row stays in registers when it fits (x read once), else an online (max, sum) pass and a write pass stream it twice
rating: 7
difficulty: 3
knobs:
  THREADS: {values: [128, 256, 512, 1024], default: 256, summary: "threads per block, one row per block", impacts: {memory_bandwidth: 5, register_pressure: 3}}
  VEC: {values: [1, 2, 4], default: 4, summary: "floats per load and store (4 = 16-byte float4 accesses); a row width that is not a multiple falls back to narrower accesses", impacts: {memory_bandwidth: 7}}
  CHUNKS: {values: [0, 1, 2, 4, 8, 16], default: 8, summary: "VEC-wide pieces of the row each thread keeps in registers; wider rows, or 0, take the streaming path", impacts: {memory_bandwidth: 8, register_pressure: 7}}
  ONLINE: {values: [0, 1], default: 1, summary: "streaming path: 1 = one online (max, rescaled sum) pass then the write pass; 0 = separate max, sum and write passes", impacts: {memory_bandwidth: 6}}
  EXP2: {values: [0, 1], default: 1, summary: "exp(x - m) as ex2.approx(x*log2e - m*log2e): one FFMA and one MUFU op instead of the accurate expf", impacts: {compute_hw_fit: 4}}
require:
  - "VEC * CHUNKS * THREADS <= 16384"
@end */
/* Memory-bound: the floor is 8 bytes per element (read x once, write y once).  Holding the
 * row in registers reaches it; the streaming path reads x twice (three times with
 * ONLINE=0), mostly from L2 for rows that fit there. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#ifndef THREADS
#define THREADS 256
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef CHUNKS
#define CHUNKS 8
#endif
#ifndef ONLINE
#define ONLINE 1
#endif
#ifndef EXP2
#define EXP2 1
#endif

#define KS_LOG2E 1.4426950408889634f

static __device__ __forceinline__ float ex2_approx(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}

/* exp(x - m); ms = m * log2(e), computed once per row */
static __device__ __forceinline__ float exp_shifted(float x, float m, float ms)
{
#if EXP2
	return ex2_approx(fmaf(x, KS_LOG2E, -ms));
#else
	return expf(x - m);
#endif
}

template <int V> static __device__ __forceinline__ void load_vec(const float *p, float (&v)[V])
{
	if constexpr (V == 4) {
		float4 t = __ldg(reinterpret_cast<const float4 *>(p));
		v[0] = t.x, v[1] = t.y, v[2] = t.z, v[3] = t.w;
	} else if constexpr (V == 2) {
		float2 t = __ldg(reinterpret_cast<const float2 *>(p));
		v[0] = t.x, v[1] = t.y;
	} else {
		v[0] = __ldg(p);
	}
}

template <int V> static __device__ __forceinline__ void store_vec(float *p, const float (&v)[V])
{
	if constexpr (V == 4)
		*reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
	else if constexpr (V == 2)
		*reinterpret_cast<float2 *>(p) = make_float2(v[0], v[1]);
	else
		*p = v[0];
}

static __device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
	for (int o = 16; o; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

static __device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
	for (int o = 16; o; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

/* every thread gets the block's result; red holds one value per warp */
static __device__ __forceinline__ float block_max(float v, float *red)
{
	v = warp_max(v);
	if constexpr (THREADS > 32) {
		const int w = threadIdx.x >> 5, l = threadIdx.x & 31;
		__syncthreads(); /* red may still be read by the previous reduction */
		if (l == 0)
			red[w] = v;
		__syncthreads();
		v = warp_max(l < THREADS / 32 ? red[l] : -INFINITY);
	}
	return v;
}

static __device__ __forceinline__ float block_sum(float v, float *red)
{
	v = warp_sum(v);
	if constexpr (THREADS > 32) {
		const int w = threadIdx.x >> 5, l = threadIdx.x & 31;
		__syncthreads();
		if (l == 0)
			red[w] = v;
		__syncthreads();
		v = warp_sum(l < THREADS / 32 ? red[l] : 0.0f);
	}
	return v;
}

/* the row (cols/V vectors, at most THREADS*C) lives in registers: x is read once */
template <int V, int C>
__global__ void __launch_bounds__(THREADS)
	softmax_block_cached(const float *__restrict__ x, float *__restrict__ y, int32_t cols)
{
	__shared__ float red[32];
	const int64_t off = (int64_t)blockIdx.x * cols;
	const int nv = cols / V;
	float v[C][V];
	float m = -INFINITY;
#pragma unroll
	for (int c = 0; c < C; c++) {
		const int i = c * THREADS + threadIdx.x;
		if (i < nv) {
			load_vec<V>(x + off + (int64_t)i * V, v[c]);
#pragma unroll
			for (int k = 0; k < V; k++)
				m = fmaxf(m, v[c][k]);
		}
	}
	m = block_max(m, red);
	const float ms = m * KS_LOG2E;
	float s = 0.0f;
#pragma unroll
	for (int c = 0; c < C; c++) {
		const int i = c * THREADS + threadIdx.x;
		if (i < nv)
#pragma unroll
			for (int k = 0; k < V; k++) {
				v[c][k] = exp_shifted(v[c][k], m, ms);
				s += v[c][k];
			}
	}
	s = block_sum(s, red);
	const float inv = 1.0f / s;
#pragma unroll
	for (int c = 0; c < C; c++) {
		const int i = c * THREADS + threadIdx.x;
		if (i < nv) {
#pragma unroll
			for (int k = 0; k < V; k++)
				v[c][k] *= inv;
			store_vec<V>(y + off + (int64_t)i * V, v[c]);
		}
	}
}

/* rows of any width: (max, sum) from memory, then the write pass reads x again */
template <int V>
__global__ void __launch_bounds__(THREADS)
	softmax_block_stream(const float *__restrict__ x, float *__restrict__ y, int32_t cols)
{
	__shared__ float red[32];
	const int64_t off = (int64_t)blockIdx.x * cols;
	const float *xr = x + off;
	const int nv = cols / V;
	float m = -INFINITY, s = 0.0f, t[V];
#if ONLINE
	for (int i = threadIdx.x; i < nv; i += THREADS) {
		load_vec<V>(xr + (int64_t)i * V, t);
		float tm = t[0];
#pragma unroll
		for (int k = 1; k < V; k++)
			tm = fmaxf(tm, t[k]);
		if (tm > m) {
			s *= exp_shifted(m, tm, tm * KS_LOG2E); /* exp(-inf) = 0 on the first */
			m = tm;
		}
		const float ms = m * KS_LOG2E;
#pragma unroll
		for (int k = 0; k < V; k++)
			s += exp_shifted(t[k], m, ms);
	}
	const float bm = block_max(m, red);
	/* threads that saw nothing have s = 0 and m = -inf: exp gives 0, 0 * 0 = 0 */
	s = block_sum(s == 0.0f ? 0.0f : s * exp_shifted(m, bm, bm * KS_LOG2E), red);
	m = bm;
#else
	for (int i = threadIdx.x; i < nv; i += THREADS) {
		load_vec<V>(xr + (int64_t)i * V, t);
#pragma unroll
		for (int k = 0; k < V; k++)
			m = fmaxf(m, t[k]);
	}
	m = block_max(m, red);
	{
		const float ms = m * KS_LOG2E;
		for (int i = threadIdx.x; i < nv; i += THREADS) {
			load_vec<V>(xr + (int64_t)i * V, t);
#pragma unroll
			for (int k = 0; k < V; k++)
				s += exp_shifted(t[k], m, ms);
		}
	}
	s = block_sum(s, red);
#endif
	const float ms = m * KS_LOG2E, inv = 1.0f / s;
	for (int i = threadIdx.x; i < nv; i += THREADS) {
		load_vec<V>(xr + (int64_t)i * V, t);
#pragma unroll
		for (int k = 0; k < V; k++)
			t[k] = exp_shifted(t[k], m, ms) * inv;
		store_vec<V>(y + off + (int64_t)i * V, t);
	}
}

/* the smallest power-of-two chunk count that holds the row, up to C */
template <int V, int C>
static void launch_cached(int need, const float *x, float *y, int32_t rows, int32_t cols,
			  cudaStream_t stream)
{
	if constexpr (C > 1) {
		if (need <= C / 2) {
			launch_cached<V, C / 2>(need, x, y, rows, cols, stream);
			return;
		}
	}
	softmax_block_cached<V, C><<<rows, THREADS, 0, stream>>>(x, y, cols);
}

template <int V>
static void launch(const float *x, float *y, int32_t rows, int32_t cols, cudaStream_t stream)
{
	const int nv = cols / V, need = (nv + THREADS - 1) / THREADS;
	if constexpr (CHUNKS > 0) {
		if (need <= CHUNKS) {
			launch_cached<V, CHUNKS>(need, x, y, rows, cols, stream);
			return;
		}
	}
	softmax_block_stream<V><<<rows, THREADS, 0, stream>>>(x, y, cols);
}

void softmax(const float *x, float *y, int32_t rows, int32_t cols, cudaStream_t stream)
{
	if (rows <= 0 || cols <= 0)
		return;
	/* a row starts 16-byte aligned only when cols is a multiple of 4 */
	if (VEC >= 4 && cols % 4 == 0)
		launch<VEC >= 4 ? 4 : 1>(x, y, rows, cols, stream);
	else if (VEC >= 2 && cols % 2 == 0)
		launch<VEC >= 2 ? 2 : 1>(x, y, rows, cols, stream);
	else
		launch<1>(x, y, rows, cols, stream);
}
