/* Naive CUDA selective scan: one thread per (batch, channel) walks the sequence in order with
 * its dstate states in a local array, reading every input straight from global memory (B and
 * C strided by seqlen per state: uncoalesced), libm expf and log1pf. The starting point a
 * search improves on. */
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

#define MAXN 256 /* mamba_ssm's limit on dstate */

__global__ void selective_scan_naive(const ss_t *u, const ss_t *delta, const float *A,
				     const ss_t *B, const ss_t *C, const float *D,
				     const ss_t *z, const float *delta_bias, ss_t *y,
				     int32_t batch, int32_t dim, int32_t seqlen, int32_t dstate)
{
	const int64_t bd = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (bd >= (int64_t)batch * dim)
		return;
	const int64_t b = bd / dim, d = bd % dim, L = seqlen;
	float h[MAXN];
	for (int n = 0; n < dstate; n++)
		h[n] = 0.0f;
	for (int64_t t = 0; t < L; t++) {
		float dt = ss_load(delta[bd * L + t]) + delta_bias[d];
		if (dt <= 20.0f)
			dt = log1pf(expf(dt));
		const float ut = ss_load(u[bd * L + t]);
		float acc = 0.0f;
		for (int n = 0; n < dstate; n++) {
			const int64_t o = (b * dstate + n) * L + t;
			h[n] = expf(dt * A[d * dstate + n]) * h[n] + dt * ss_load(B[o]) * ut;
			acc += ss_load(C[o]) * h[n];
		}
		acc += D[d] * ut;
		if constexpr (SS_GATE) {
			const float zt = ss_load(z[bd * L + t]);
			acc *= zt / (1.0f + expf(-zt));
		}
		y[bd * L + t] = ss_store(acc);
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
	const int64_t ch = (int64_t)batch * dim;
	if (ch <= 0 || seqlen <= 0 || dstate > MAXN)
		return;
	selective_scan_naive<<<(unsigned)((ch + 127) / 128), 128, 0, stream>>>(
		u, delta, A, B, C, D, z, delta_bias, y, batch, dim, seqlen, dstate);
}
