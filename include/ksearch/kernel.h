/* Helpers for kernels: f16 and bf16 conversions usable from C and from CUDA.
 *
 * A kernel may `#include "ksearch/kernel.h"` (the harness puts it on the include path).
 * dtype mapping (docs/abi.md):  f16 is _Float16 in C and __half in CUDA;  bf16 is a
 * uint16_t bit pattern in C (convert with the helpers below) and __nv_bfloat16 in CUDA. */
#ifndef KSEARCH_KERNEL_H
#define KSEARCH_KERNEL_H

#include <stdint.h>

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define KS_KERNEL_INLINE static __host__ __device__ __forceinline__
#else
#define KS_KERNEL_INLINE static inline
#endif

/* bf16 bit pattern -> float (exact) */
KS_KERNEL_INLINE float ks_bf16_to_f32(uint16_t b)
{
	union {
		uint32_t u;
		float f;
	} v;
	v.u = (uint32_t)b << 16;
	return v.f;
}

/* float -> bf16 bit pattern, rounding to nearest even; NaN stays a (quiet) NaN */
KS_KERNEL_INLINE uint16_t ks_f32_to_bf16(float f)
{
	union {
		uint32_t u;
		float f;
	} v;
	v.f = f;
	if ((v.u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((v.u >> 16) | 0x40u);
	return (uint16_t)((v.u + 0x7fffu + ((v.u >> 16) & 1u)) >> 16);
}

#ifdef __CUDACC__
/* CUDA: f16 is __half */
KS_KERNEL_INLINE float ks_f16_to_f32(__half h)
{
	return __half2float(h);
}

KS_KERNEL_INLINE __half ks_f32_to_f16(float f)
{
	return __float2half_rn(f);
}
#else
/* C: f16 is _Float16; the casts round to nearest even */
KS_KERNEL_INLINE float ks_f16_to_f32(_Float16 h)
{
	return (float)h;
}

KS_KERNEL_INLINE _Float16 ks_f32_to_f16(float f)
{
	return (_Float16)f;
}
#endif

#endif
