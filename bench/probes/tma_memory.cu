// Does a TMA load (cp.async.bulk.tensor) complete on every kind of memory a framework may hand a
// kernel?  MLX's CUDA build keeps arrays made from host data in managed memory (pinned host
// memory where the GPU lacks concurrent managed access); a TMA load whose bytes never arrive
// leaves its mbarrier waiting forever, which is a hang, not an error.
//
//   nvcc -O2 -gencode arch=compute_90a,code=sm_90a -o tma_memory bench/probes/tma_memory.cu -lcuda
//   ./tma_memory MODE [MAP]
//
// MODE: device (cudaMalloc), managed (cudaMallocManaged, written by the host last), prefetched
// (managed, then cudaMemPrefetchAsync to the GPU), touched (managed, read once by an ordinary
// kernel first), pinned (cudaMallocHost).  MAP: host (cuTensorMapEncodeTiled, a
// __grid_constant__ parameter; default) or device (the map encoded by the kernel with
// tensormap.replace and copied to global memory, as MLX kernels must).
// Prints one line: MODE MAP ok|WRONG|STUCK and the time; the kernel's wait gives up after about
// two seconds (STUCK) instead of hanging.  Exit status 0 only for ok.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROWS 8192
#define COLS 64 /* one 128-byte row of halves: the box's inner size */
#define BOX_ROWS 64

struct alignas(64) tmap {
	unsigned char b[128];
};

__device__ __align__(128) tmap dev_maps[ROWS / BOX_ROWS];

static __device__ uint32_t smem_u32(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}

static __device__ void encode_map(tmap *dst, const __half *src)
{
	__shared__ __align__(128) tmap staged;
	unsigned *w = reinterpret_cast<unsigned *>(&staged);
	w[threadIdx.x] = 0;
	__syncwarp();
	if (threadIdx.x == 0) {
		uint32_t m = smem_u32(&staged);
		unsigned long long a = (unsigned long long)src, stride = COLS * 2;
		asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;\n"
			     "tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], 1;\n"
			     "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 0, %2;\n"
			     "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 1, %3;\n"
			     "tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 0, %2;\n"
			     "tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, %4;\n"
			     "tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %5;\n"
			     "tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 0, 1;\n"
			     "tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 1, 1;\n"
			     "tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%0], 6;\n"
			     "tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%0], 0;\n"
			     "tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], 0;\n"
			     "tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%0], 0;\n" ::"r"(m),
			     "l"(a), "r"(COLS), "r"(BOX_ROWS), "r"(ROWS), "l"(stride)
			     : "memory");
	}
	__syncwarp();
	asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu"
		     ".sync.aligned [%0], [%1], 128;\n" ::"l"(dst),
		     "r"(smem_u32(&staged))
		     : "memory");
	asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;\n" ::"l"(dst) : "memory");
}

/* one warp a block: box b of the tensor into shared memory by TMA, then its sum to out[b];
 * out[b] = NAN when the bytes did not arrive within ~2 s of spinning */
__global__ void tma_sum(const __grid_constant__ CUtensorMap host_map, const __half *src,
			int use_dev_map, float *out)
{
	__shared__ __align__(128) __half tile[BOX_ROWS * COLS];
	__shared__ __align__(8) uint64_t bar;
	const void *map = &host_map;
	if (use_dev_map) {
		encode_map(&dev_maps[blockIdx.x], src);
		map = &dev_maps[blockIdx.x];
	}
	if (threadIdx.x == 0) {
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_u32(&bar)));
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	__syncwarp();
	if (threadIdx.x == 0) {
		asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
				     smem_u32(&bar)),
			     "r"((unsigned)sizeof(tile))
			     : "memory");
		asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx"
			     "::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_u32(tile)),
			     "l"((uint64_t)map), "r"(0), "r"((int)blockIdx.x * BOX_ROWS),
			     "r"(smem_u32(&bar))
			     : "memory");
	}
	unsigned done = 0;
	long long start = clock64();
	while (!done) {
		asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
			     " selp.u32 %0, 1, 0, p;\n}\n"
			     : "=r"(done)
			     : "r"(smem_u32(&bar))
			     : "memory");
		if (!done && clock64() - start > 4000000000LL) {
			if (threadIdx.x == 0)
				out[blockIdx.x] = __int_as_float(0x7fc00000);
			return;
		}
	}
	float s = 0.f;
	for (int i = threadIdx.x; i < BOX_ROWS * COLS; i += 32)
		s += __half2float(tile[i]);
	for (int o = 16; o; o >>= 1)
		s += __shfl_xor_sync(0xffffffffu, s, o);
	if (threadIdx.x == 0)
		out[blockIdx.x] = s;
}

__global__ void touch(const __half *src, float *sink)
{
	float s = 0.f;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < ROWS * COLS; i += gridDim.x * blockDim.x)
		s += __half2float(src[i]);
	if (s == 12345.f)
		*sink = s;
}

#define CK(x)                                                                              \
	do {                                                                               \
		cudaError_t e_ = (x);                                                      \
		if (e_ != cudaSuccess) {                                                   \
			printf("%s %s ERROR %s at %s\n", mode, mapkind, cudaGetErrorString(e_), #x); \
			return 2;                                                          \
		}                                                                          \
	} while (0)

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "device", *mapkind = argc > 2 ? argv[2] : "host";
	const size_t bytes = (size_t)ROWS * COLS * sizeof(__half);
	const int nb = ROWS / BOX_ROWS;
	__half *src = NULL;
	float *out, *sink;
	int dev = 0, cma = 0, pma = 0;
	CK(cudaDeviceGetAttribute(&cma, cudaDevAttrConcurrentManagedAccess, dev));
	CK(cudaDeviceGetAttribute(&pma, cudaDevAttrPageableMemoryAccess, dev));
	__half *host = (__half *)malloc(bytes);
	double want = 0;
	for (int i = 0; i < ROWS * COLS; i++) {
		host[i] = __float2half((float)(i % 7) - 3.f);
		want += (double)((i % 7) - 3);
	}
	if (!strcmp(mode, "device")) {
		CK(cudaMalloc(&src, bytes));
		CK(cudaMemcpy(src, host, bytes, cudaMemcpyHostToDevice));
	} else if (!strcmp(mode, "pinned")) {
		CK(cudaMallocHost(&src, bytes));
		memcpy(src, host, bytes);
	} else {
		CK(cudaMallocManaged(&src, bytes));
		memcpy(src, host, bytes); /* the host writes last: the pages are on the host */
	}
	CK(cudaMalloc(&out, nb * sizeof(float)));
	CK(cudaMalloc(&sink, sizeof(float)));
	if (!strcmp(mode, "prefetched")) {
#if CUDART_VERSION >= 13000
		cudaMemLocation loc = {cudaMemLocationTypeDevice, dev};
		CK(cudaMemPrefetchAsync(src, bytes, loc, 0, 0));
#else
		CK(cudaMemPrefetchAsync(src, bytes, dev, 0));
#endif
		CK(cudaDeviceSynchronize());
	} else if (!strcmp(mode, "touched")) {
		touch<<<132, 256>>>(src, sink);
		CK(cudaDeviceSynchronize());
	}
	CUtensorMap hmap;
	memset(&hmap, 0, sizeof(hmap));
	cuuint64_t gdim[2] = {COLS, ROWS}, gstride[1] = {COLS * 2};
	cuuint32_t box[2] = {COLS, BOX_ROWS}, estr[2] = {1, 1};
	CUresult r = cuTensorMapEncodeTiled(&hmap, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, src, gdim,
					    gstride, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
					    CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
					    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	if (r != CUDA_SUCCESS) {
		printf("%s %s ERROR cuTensorMapEncodeTiled %d\n", mode, mapkind, (int)r);
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	tma_sum<<<nb, 32>>>(hmap, src, !strcmp(mapkind, "device"), out);
	CK(cudaDeviceSynchronize());
	clock_gettime(CLOCK_MONOTONIC, &t1);
	float got[ROWS / BOX_ROWS];
	CK(cudaMemcpy(got, out, sizeof(got), cudaMemcpyDeviceToHost));
	int stuck = 0;
	double sum = 0;
	for (int b = 0; b < nb; b++) {
		if (got[b] != got[b])
			stuck++;
		else
			sum += got[b];
	}
	const char *verdict = stuck ? "STUCK" : sum == want ? "ok" : "WRONG";
	printf("%s %s %s (%d of %d boxes stuck; sum %.0f want %.0f; %.1f ms; "
	       "concurrentManagedAccess %d pageableMemoryAccess %d)\n",
	       mode, mapkind, verdict, stuck, nb, sum, want,
	       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6, cma, pma);
	return stuck || sum != want;
}
