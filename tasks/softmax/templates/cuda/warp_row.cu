/* @ksearch
family: warp-per-row
summary: one warp per row, several rows per block; reductions are warp shuffles only (no shared memory, no barriers), the row stays in registers when it fits; suits narrow and medium rows
rating: 7
difficulty: 2
knobs:
  WARPS: {values: [1, 2, 4, 8, 16], default: 4, summary: "warps (rows) per block", impacts: {memory_bandwidth: 4}}
  VEC: {values: [1, 2, 4], default: 4, summary: "floats per load and store (4 = 16-byte float4 accesses); a row width that is not a multiple falls back to narrower accesses", impacts: {memory_bandwidth: 7}}
  CHUNKS: {values: [0, 1, 2, 4, 8, 16, 32], default: 16, summary: "VEC-wide pieces of the row each lane keeps in registers (rows up to 32*VEC*CHUNKS floats are read once); wider rows, or 0, stream twice", impacts: {memory_bandwidth: 8, register_pressure: 8}}
  EXP2: {values: [0, 1], default: 1, summary: "exp(x - m) as ex2.approx(x*log2e - m*log2e) instead of the accurate expf", impacts: {compute_hw_fit: 4}}
require:
  - "VEC * CHUNKS <= 64"
@end */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#ifndef WARPS
#define WARPS 4
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef CHUNKS
#define CHUNKS 16
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

template <int V, int C>
__global__ void __launch_bounds__(WARPS * 32)
	softmax_warp_cached(const float *__restrict__ x, float *__restrict__ y, int32_t rows,
			    int32_t cols)
{
	const int row = blockIdx.x * WARPS + (threadIdx.x >> 5), lane = threadIdx.x & 31;
	if (row >= rows)
		return; /* the whole warp leaves together: no barrier follows */
	const int64_t off = (int64_t)row * cols;
	const int nv = cols / V;
	float v[C][V];
	float m = -INFINITY;
#pragma unroll
	for (int c = 0; c < C; c++) {
		const int i = c * 32 + lane;
		if (i < nv) {
			load_vec<V>(x + off + (int64_t)i * V, v[c]);
#pragma unroll
			for (int k = 0; k < V; k++)
				m = fmaxf(m, v[c][k]);
		}
	}
	m = warp_max(m);
	const float ms = m * KS_LOG2E;
	float s = 0.0f;
#pragma unroll
	for (int c = 0; c < C; c++) {
		const int i = c * 32 + lane;
		if (i < nv)
#pragma unroll
			for (int k = 0; k < V; k++) {
				v[c][k] = exp_shifted(v[c][k], m, ms);
				s += v[c][k];
			}
	}
	const float inv = 1.0f / warp_sum(s);
#pragma unroll
	for (int c = 0; c < C; c++) {
		const int i = c * 32 + lane;
		if (i < nv) {
#pragma unroll
			for (int k = 0; k < V; k++)
				v[c][k] *= inv;
			store_vec<V>(y + off + (int64_t)i * V, v[c]);
		}
	}
}

/* rows wider than the registers hold: online (max, sum) pass, then the write pass */
template <int V>
__global__ void __launch_bounds__(WARPS * 32)
	softmax_warp_stream(const float *__restrict__ x, float *__restrict__ y, int32_t rows,
			    int32_t cols)
{
	const int row = blockIdx.x * WARPS + (threadIdx.x >> 5), lane = threadIdx.x & 31;
	if (row >= rows)
		return;
	const int64_t off = (int64_t)row * cols;
	const int nv = cols / V;
	float m = -INFINITY, s = 0.0f, t[V];
	for (int i = lane; i < nv; i += 32) {
		load_vec<V>(x + off + (int64_t)i * V, t);
		float tm = t[0];
#pragma unroll
		for (int k = 1; k < V; k++)
			tm = fmaxf(tm, t[k]);
		if (tm > m) {
			s *= exp_shifted(m, tm, tm * KS_LOG2E);
			m = tm;
		}
		const float ms = m * KS_LOG2E;
#pragma unroll
		for (int k = 0; k < V; k++)
			s += exp_shifted(t[k], m, ms);
	}
	const float wm = warp_max(m);
	s = warp_sum(s == 0.0f ? 0.0f : s * exp_shifted(m, wm, wm * KS_LOG2E));
	const float ms = wm * KS_LOG2E, inv = 1.0f / s;
	for (int i = lane; i < nv; i += 32) {
		load_vec<V>(x + off + (int64_t)i * V, t);
#pragma unroll
		for (int k = 0; k < V; k++)
			t[k] = exp_shifted(t[k], wm, ms) * inv;
		store_vec<V>(y + off + (int64_t)i * V, t);
	}
}

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
	softmax_warp_cached<V, C>
		<<<(rows + WARPS - 1) / WARPS, WARPS * 32, 0, stream>>>(x, y, rows, cols);
}

template <int V>
static void launch(const float *x, float *y, int32_t rows, int32_t cols, cudaStream_t stream)
{
	const int need = (cols / V + 31) / 32;
	if constexpr (CHUNKS > 0) {
		if (need <= CHUNKS) {
			launch_cached<V, CHUNKS>(need, x, y, rows, cols, stream);
			return;
		}
	}
	softmax_warp_stream<V>
		<<<(rows + WARPS - 1) / WARPS, WARPS * 32, 0, stream>>>(x, y, rows, cols);
}

void softmax(const float *x, float *y, int32_t rows, int32_t cols, cudaStream_t stream)
{
	if (rows <= 0 || cols <= 0)
		return;
	if (VEC >= 4 && cols % 4 == 0)
		launch<VEC >= 4 ? 4 : 1>(x, y, rows, cols, stream);
	else if (VEC >= 2 && cols % 2 == 0)
		launch<VEC >= 2 ? 2 : 1>(x, y, rows, cols, stream);
	else
		launch<1>(x, y, rows, cols, stream);
}
