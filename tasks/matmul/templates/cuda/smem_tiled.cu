/* @ksearch
family: smem-register-tiled
summary: "each block computes a BM x BN tile of C from BK-deep slices of A (stored transposed) and B in shared memory; each thread accumulates a TM x TN register micro-tile with FFMA; the next slice is prefetched into registers while the current one is consumed (fp32 throughout: the task's tolerance rules out TF32)"
rating: 8
difficulty: 4
knobs:
  BM: {values: [64, 128, 256], default: 128, summary: "rows of C per block", impacts: {memory_bandwidth: 6, register_pressure: 3}}
  BN: {values: [64, 128, 256], default: 128, summary: "columns of C per block", impacts: {memory_bandwidth: 6, register_pressure: 3}}
  BK: {values: [8, 16, 32], default: 8, summary: "depth of the shared-memory slice", impacts: {memory_bandwidth: 3, register_pressure: 2}}
  TM: {values: [4, 8, 16], default: 8, summary: "rows of the per-thread register tile (groups of 4, spread across the block tile so shared-memory reads are conflict-free float4s)", impacts: {compute_hw_fit: 7, register_pressure: 7}}
  TN: {values: [4, 8], default: 8, summary: "columns of the per-thread register tile", impacts: {compute_hw_fit: 7, register_pressure: 7}}
  DBUF: {values: [0, 1], default: 1, summary: "two shared-memory buffers: one barrier per slice instead of two, and the global loads of the next slice overlap the math of this one", impacts: {memory_bandwidth: 4, compute_hw_fit: 3}}
  GROUP_M: {values: [1, 8, 16], default: 8, summary: "block rasterisation: GROUP_M block rows sweep the same columns of B together so its tiles stay in L2", impacts: {memory_bandwidth: 3}}
  MINB: {values: [1, 2], default: 2, summary: "blocks per SM promised to the register allocator (__launch_bounds__): 2 caps registers at 65536/(2*threads)", impacts: {register_pressure: 6}}
require:
  - "(BM / TM) * (BN / TN) >= 64"
  - "(BM / TM) * (BN / TN) <= 1024"
  - "(BM * BK) % (4 * (BM / TM) * (BN / TN)) == 0"
  - "(BN * BK) % (4 * (BM / TM) * (BN / TN)) == 0"
  - "(1 + DBUF) * BK * (BM + 4 + BN) * 4 <= 49152"
  - "BM * BN * MINB <= 32768"
@end */
#include <cuda_runtime.h>
#include <stdint.h>

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
#ifndef DBUF
#define DBUF 1
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef MINB
#define MINB 2
#endif

#define NT ((BM / TM) * (BN / TN)) /* threads per block */
#define TX (BN / TN)               /* threads along n */
#define APAD 4                     /* keeps the transposed stores of A off one bank */
#define LA (BM * BK / 4 / NT)      /* float4 loads of A per thread per slice */
#define LB (BN * BK / 4 / NT)
#define NBUF (1 + DBUF)

static_assert(TM % 4 == 0 && TN % 4 == 0, "TM and TN are multiples of 4");
static_assert(LA >= 1 && LA * 4 * NT == BM * BK, "A slice splits evenly into float4 loads");
static_assert(LB >= 1 && LB * 4 * NT == BN * BK, "B slice splits evenly into float4 loads");

struct tiles {
	float a[NBUF][BK][BM + APAD]; /* A transposed: a[k][m] */
	float b[NBUF][BK][BN];
};

/* VA/VB: rows of A/B are 16-byte aligned (k % 4 == 0, n % 4 == 0); CHECK: edges exist */
template <bool VA, bool VB, bool CHECK>
static __device__ __forceinline__ void load_slice(const float *__restrict__ a,
						  const float *__restrict__ b, int m, int n, int k,
						  int bm, int bn, int bk, float4 (&ra)[LA],
						  float4 (&rb)[LB])
{
	const int tid = threadIdx.x;
#pragma unroll
	for (int l = 0; l < LA; l++) {
		const int i = tid + l * NT, row = i / (BK / 4), kq = (i % (BK / 4)) * 4;
		const int gr = bm + row, gk = bk + kq;
		const float *p = a + (int64_t)gr * k + gk;
		if (VA && (!CHECK || (gr < m && gk < k))) {
			ra[l] = __ldg(reinterpret_cast<const float4 *>(p));
		} else {
			const bool rok = !CHECK || gr < m;
			ra[l].x = rok && gk + 0 < k ? __ldg(p + 0) : 0.0f;
			ra[l].y = rok && gk + 1 < k ? __ldg(p + 1) : 0.0f;
			ra[l].z = rok && gk + 2 < k ? __ldg(p + 2) : 0.0f;
			ra[l].w = rok && gk + 3 < k ? __ldg(p + 3) : 0.0f;
		}
	}
#pragma unroll
	for (int l = 0; l < LB; l++) {
		const int i = tid + l * NT, kr = i / (BN / 4), nq = (i % (BN / 4)) * 4;
		const int gk = bk + kr, gc = bn + nq;
		const float *p = b + (int64_t)gk * n + gc;
		if (VB && (!CHECK || (gk < k && gc < n))) {
			rb[l] = __ldg(reinterpret_cast<const float4 *>(p));
		} else {
			const bool kok = !CHECK || gk < k;
			rb[l].x = kok && gc + 0 < n ? __ldg(p + 0) : 0.0f;
			rb[l].y = kok && gc + 1 < n ? __ldg(p + 1) : 0.0f;
			rb[l].z = kok && gc + 2 < n ? __ldg(p + 2) : 0.0f;
			rb[l].w = kok && gc + 3 < n ? __ldg(p + 3) : 0.0f;
		}
	}
}

static __device__ __forceinline__ void store_slice(tiles &s, int buf, const float4 (&ra)[LA],
						   const float4 (&rb)[LB])
{
	const int tid = threadIdx.x;
#pragma unroll
	for (int l = 0; l < LA; l++) {
		const int i = tid + l * NT, row = i / (BK / 4), kq = (i % (BK / 4)) * 4;
		s.a[buf][kq + 0][row] = ra[l].x;
		s.a[buf][kq + 1][row] = ra[l].y;
		s.a[buf][kq + 2][row] = ra[l].z;
		s.a[buf][kq + 3][row] = ra[l].w;
	}
#pragma unroll
	for (int l = 0; l < LB; l++) {
		const int i = tid + l * NT, kr = i / (BN / 4), nq = (i % (BN / 4)) * 4;
		*reinterpret_cast<float4 *>(&s.b[buf][kr][nq]) = rb[l];
	}
}

template <bool VA, bool VB, bool CHECK>
__global__ void __launch_bounds__(NT, MINB)
	matmul_tiled(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c,
		     int m, int n, int k)
{
	__shared__ __align__(16) tiles s;
	/* grouped rasterisation of the 1-D grid */
	const int grid_m = (m + BM - 1) / BM, grid_n = (n + BN - 1) / BN;
	const int pid = blockIdx.x, group = GROUP_M * grid_n, first_m = (pid / group) * GROUP_M;
	const int gsz = min(grid_m - first_m, GROUP_M);
	const int bm = (first_m + (pid % group) % gsz) * BM, bn = ((pid % group) / gsz) * BN;
	const int tx = threadIdx.x % TX, ty = threadIdx.x / TX;

	float acc[TM][TN];
#pragma unroll
	for (int i = 0; i < TM; i++)
#pragma unroll
		for (int j = 0; j < TN; j++)
			acc[i][j] = 0.0f;

	float4 ra[LA], rb[LB];
	const int nslices = (k + BK - 1) / BK;
	load_slice<VA, VB, CHECK>(a, b, m, n, k, bm, bn, 0, ra, rb);
	store_slice(s, 0, ra, rb);
	__syncthreads();
	for (int t = 0; t < nslices; t++) {
		const int cur = DBUF ? t & 1 : 0;
		const bool more = t + 1 < nslices;
		if (more)
			load_slice<VA, VB, CHECK>(a, b, m, n, k, bm, bn, (t + 1) * BK, ra, rb);
#pragma unroll
		for (int kk = 0; kk < BK; kk++) {
			float af[TM], bf[TN];
#pragma unroll
			for (int g = 0; g < TM / 4; g++) {
				const float4 v = *reinterpret_cast<const float4 *>(
					&s.a[cur][kk][g * (BM / TM) * 4 + ty * 4]);
				af[g * 4 + 0] = v.x, af[g * 4 + 1] = v.y, af[g * 4 + 2] = v.z,
					   af[g * 4 + 3] = v.w;
			}
#pragma unroll
			for (int g = 0; g < TN / 4; g++) {
				const float4 v = *reinterpret_cast<const float4 *>(
					&s.b[cur][kk][g * TX * 4 + tx * 4]);
				bf[g * 4 + 0] = v.x, bf[g * 4 + 1] = v.y, bf[g * 4 + 2] = v.z,
					   bf[g * 4 + 3] = v.w;
			}
#pragma unroll
			for (int i = 0; i < TM; i++)
#pragma unroll
				for (int j = 0; j < TN; j++)
					acc[i][j] = fmaf(af[i], bf[j], acc[i][j]);
		}
		if (more) {
			if (!DBUF)
				__syncthreads(); /* everyone is done reading the only buffer */
			store_slice(s, DBUF ? cur ^ 1 : 0, ra, rb);
			__syncthreads();
		}
	}

#pragma unroll
	for (int gi = 0; gi < TM / 4; gi++)
#pragma unroll
		for (int i = 0; i < 4; i++) {
			const int r = bm + gi * (BM / TM) * 4 + ty * 4 + i;
			if (CHECK && r >= m)
				continue;
			float *crow = c + (int64_t)r * n;
#pragma unroll
			for (int gj = 0; gj < TN / 4; gj++) {
				const int c0 = bn + gj * TX * 4 + tx * 4;
				const float *v = &acc[gi * 4 + i][gj * 4];
				if (VB && (!CHECK || c0 < n)) {
					*reinterpret_cast<float4 *>(crow + c0) =
						make_float4(v[0], v[1], v[2], v[3]);
				} else {
#pragma unroll
					for (int j = 0; j < 4; j++)
						if (!CHECK || c0 + j < n)
							crow[c0 + j] = v[j];
				}
			}
		}
}

template <bool VA, bool VB, bool CHECK>
static void launch(const float *a, const float *b, float *c, int m, int n, int k,
		   cudaStream_t stream)
{
	const int blocks = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
	matmul_tiled<VA, VB, CHECK><<<blocks, NT, 0, stream>>>(a, b, c, m, n, k);
}

void matmul(const float *a, const float *b, float *c, int32_t m, int32_t n, int32_t k,
	    cudaStream_t stream)
{
	if (m <= 0 || n <= 0)
		return;
	const bool va = k % 4 == 0, vb = n % 4 == 0;
	if (m % BM == 0 && n % BN == 0 && k % BK == 0)
		launch<true, true, false>(a, b, c, m, n, k, stream);
	else if (va && vb)
		launch<true, true, true>(a, b, c, m, n, k, stream);
	else if (va)
		launch<true, false, true>(a, b, c, m, n, k, stream);
	else if (vb)
		launch<false, true, true>(a, b, c, m, n, k, stream);
	else
		launch<false, false, true>(a, b, c, m, n, k, stream);
}
