// ceilings [DEVICE]: the two ceilings of a CUDA device, measured, as one JSON line.
//   copy_tbs          best device-to-device cudaMemcpy of 1 GiB, bytes read + written
//   copy_kernel_tbs   the same through a float4 grid-stride copy kernel
//   sgemm_tflops      cuBLAS SGEMM 4096^3, fp32 math (TF32 off)
//   bf16_gemm_tflops  cuBLAS GEMM 8192^3, bf16 inputs and output, fp32 accumulation
// Random inputs (never zeros), warm-up first, best of N timed with events.
// Build: nvcc -O3 -gencode arch=compute_90a,code=sm_90a ceilings.cu -o ceilings -lcublas
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(call)                                                                          \
	do {                                                                              \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,     \
				cudaGetErrorString(e_));                                  \
			exit(1);                                                          \
		}                                                                         \
	} while (0)
#define CB(call)                                                                          \
	do {                                                                              \
		cublasStatus_t s_ = (call);                                               \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                        \
			fprintf(stderr, "%s:%d: %s: cublas status %d\n", __FILE__, __LINE__,  \
				#call, (int)s_);                                          \
			exit(1);                                                          \
		}                                                                         \
	} while (0)

static __device__ __forceinline__ float hash_uniform(uint64_t i, uint32_t seed)
{
	uint64_t z = i * 0x9e3779b97f4a7c15ull + seed;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (float)(z >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f; /* [-1, 1) */
}

__global__ void fill_f32(float *p, size_t n, uint32_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = hash_uniform(i, seed);
}

__global__ void fill_bf16(__nv_bfloat16 *p, size_t n, uint32_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = __float2bfloat16(hash_uniform(i, seed));
}

__global__ void copy_f4(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		dst[i] = src[i];
}

struct timer {
	cudaEvent_t a, b;
	timer() { CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b)); }
	void start() { CK(cudaEventRecord(a)); }
	float stop_ms()
	{
		float ms;
		CK(cudaEventRecord(b));
		CK(cudaEventSynchronize(b));
		CK(cudaEventElapsedTime(&ms, a, b));
		return ms;
	}
};

int main(int argc, char **argv)
{
	int dev = argc > 1 ? atoi(argv[1]) : 0;
	CK(cudaSetDevice(dev));
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, dev));
	int sms = prop.multiProcessorCount;
	timer t;

	/* copy: 1 GiB each way */
	const size_t bytes = (size_t)1 << 30, n4 = bytes / 16;
	float *src, *dst;
	CK(cudaMalloc(&src, bytes));
	CK(cudaMalloc(&dst, bytes));
	fill_f32<<<sms * 8, 256>>>(src, bytes / 4, 1);
	CK(cudaGetLastError());
	float best_memcpy = 1e30f, best_kernel = 1e30f;
	for (int i = 0; i < 12; i++) {
		t.start();
		CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice));
		float ms = t.stop_ms();
		if (i >= 2 && ms < best_memcpy)
			best_memcpy = ms;
		t.start();
		copy_f4<<<sms * 16, 512>>>((const float4 *)src, (float4 *)dst, n4);
		CK(cudaGetLastError());
		ms = t.stop_ms();
		if (i >= 2 && ms < best_kernel)
			best_kernel = ms;
	}
	CK(cudaFree(src));
	CK(cudaFree(dst));
	double copy_tbs = 2.0 * bytes / (best_memcpy * 1e-3) / 1e12;
	double copy_kernel_tbs = 2.0 * bytes / (best_kernel * 1e-3) / 1e12;

	cublasHandle_t h;
	CB(cublasCreate(&h));
	CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH)); /* fp32 stays fp32: no TF32 */

	/* sgemm 4096^3 */
	const int s = 4096;
	float *a, *b, *c;
	CK(cudaMalloc(&a, (size_t)s * s * 4));
	CK(cudaMalloc(&b, (size_t)s * s * 4));
	CK(cudaMalloc(&c, (size_t)s * s * 4));
	fill_f32<<<sms * 8, 256>>>(a, (size_t)s * s, 2);
	fill_f32<<<sms * 8, 256>>>(b, (size_t)s * s, 3);
	CK(cudaGetLastError());
	const float one = 1.0f, zero = 0.0f;
	float best_sgemm = 1e30f;
	for (int i = 0; i < 12; i++) {
		t.start();
		CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, s, s, s, &one, b, s, a, s, &zero, c, s));
		float ms = t.stop_ms();
		if (i >= 2 && ms < best_sgemm)
			best_sgemm = ms;
	}
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(c));
	double sgemm_tflops = 2.0 * s * s * s / (best_sgemm * 1e-3) / 1e12;

	/* bf16 gemm 8192^3, fp32 accumulation */
	const int g = 8192;
	__nv_bfloat16 *ga, *gb, *gc;
	CK(cudaMalloc(&ga, (size_t)g * g * 2));
	CK(cudaMalloc(&gb, (size_t)g * g * 2));
	CK(cudaMalloc(&gc, (size_t)g * g * 2));
	fill_bf16<<<sms * 8, 256>>>(ga, (size_t)g * g, 4);
	fill_bf16<<<sms * 8, 256>>>(gb, (size_t)g * g, 5);
	CK(cudaGetLastError());
	float best_bf16 = 1e30f;
	for (int i = 0; i < 13; i++) {
		t.start();
		CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, g, g, g, &one, gb, CUDA_R_16BF, g, ga,
				CUDA_R_16BF, g, &zero, gc, CUDA_R_16BF, g, CUBLAS_COMPUTE_32F,
				CUBLAS_GEMM_DEFAULT));
		float ms = t.stop_ms();
		if (i >= 3 && ms < best_bf16)
			best_bf16 = ms;
	}
	CK(cudaFree(ga));
	CK(cudaFree(gb));
	CK(cudaFree(gc));
	double bf16_tflops = 2.0 * g * g * (double)g / (best_bf16 * 1e-3) / 1e12;
	CB(cublasDestroy(h));

	printf("{\"device\": \"%s\", \"sms\": %d, \"copy_tbs\": %.4f, \"copy_kernel_tbs\": %.4f, "
	       "\"sgemm_tflops\": %.3f, \"bf16_gemm_tflops\": %.2f}\n",
	       prop.name, sms, copy_tbs > copy_kernel_tbs ? copy_tbs : copy_kernel_tbs,
	       copy_kernel_tbs, sgemm_tflops, bf16_tflops);
	return 0;
}
