/* @ksearch
family: tensor-core-bf16
summary: "bf16 GEMM on the tensor cores: mma.sync m16n8k16 with fp32 accumulators, A and B tiles staged by a multi-stage cp.async pipeline in padded dynamic shared memory, fragments loaded with ldmatrix (B transposed on the fly), warp tiles of 16x8 MMA fragments, the result rounded to bf16 once"
rating: 7
difficulty: 5
knobs:
  BM: {values: [64, 128, 256], default: 128, summary: "rows of C per block", impacts: {memory_bandwidth: 6, register_pressure: 3}}
  BN: {values: [64, 128, 256], default: 256, summary: "columns of C per block", impacts: {memory_bandwidth: 6, register_pressure: 3}}
  BK: {values: [32, 64], default: 32, summary: "depth of one pipeline stage", impacts: {memory_bandwidth: 3}}
  WM: {values: [1, 2, 4], default: 2, summary: "warps along m (warp tile = BM/WM rows)", impacts: {register_pressure: 6, compute_hw_fit: 4}}
  WN: {values: [1, 2, 4], default: 4, summary: "warps along n (warp tile = BN/WN columns)", impacts: {register_pressure: 6, compute_hw_fit: 4}}
  STAGES: {values: [2, 3, 4, 5], default: 4, summary: "cp.async pipeline depth (tiles in flight)", impacts: {memory_bandwidth: 5}}
  GROUP_M: {values: [1, 8], default: 8, summary: "block rasterisation: GROUP_M block rows share B tiles in L2", impacts: {memory_bandwidth: 3}}
require:
  - "(BM / WM) % 16 == 0"
  - "(BN / WN) % 16 == 0"
  - "(BM / WM / 16) * (BN / WN / 8) * 4 <= 128"
  - "BM * BN <= 32768"
  - "(BM * BK / 8) % (32 * WM * WN) == 0"
  - "(BN * BK / 8) % (32 * WM * WN) == 0"
  - "STAGES * (BM * (BK + 8) + BK * (BN + 8)) * 2 <= 232448"
@end */
/* Accuracy: a product of two bf16 numbers is exact in fp32 and the tensor cores accumulate
 * in fp32, so the result differs from the exact sum far less than one bf16 unit.
 * Speed: mma.sync, not Hopper's wgmma; each warp loads its A fragments with ldmatrix and its
 * B fragments with ldmatrix.trans straight from the row-major B tile, so no transpose pass.
 * Rows in shared memory are padded by 16 bytes, which puts the eight 16-byte rows of every
 * ldmatrix on distinct banks.  BM * BN <= 32768 keeps the accumulators of a block within the
 * register file (128 per thread at 256 threads). */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 256
#endif
#ifndef BK
#define BK 32
#endif
#ifndef WM
#define WM 2
#endif
#ifndef WN
#define WN 4
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif

typedef __nv_bfloat16 bf16;

#define NTHREADS (32 * WM * WN)
#define WTM (BM / WM) /* warp tile rows */
#define WTN (BN / WN) /* warp tile columns */
#define MT (WTM / 16) /* MMA tiles per warp along m */
#define NT (WTN / 8)  /* MMA tiles per warp along n */
#define AS (BK + 8)   /* A row stride in shared memory, in elements */
#define BS (BN + 8)   /* B row stride */
#define LA (BM * BK / 8 / NTHREADS)
#define LB (BK * BN / 8 / NTHREADS)
#define STAGE_ELEMS (BM * AS + BK * BS)
#define SMEM_BYTES (STAGES * STAGE_ELEMS * 2)

static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tile is whole pairs of MMA tiles");
static_assert(LA >= 1 && LA * 8 * NTHREADS == BM * BK, "A tile splits into 16-byte copies");
static_assert(LB >= 1 && LB * 8 * NTHREADS == BN * BK, "B tile splits into 16-byte copies");
static_assert(STAGES >= 2, "at least double buffering");

static __device__ __forceinline__ unsigned smem_addr(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

/* four 8x8 matrices of 16-bit elements; lane l gives the address of one 16-byte row */
static __device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const bf16 *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(smem_addr(p)));
}

static __device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const bf16 *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(smem_addr(p)));
}

static __device__ __forceinline__ void mma_bf16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
						uint32_t b1)
{
	/* registers only, so not volatile: the compiler may interleave the MMAs with the next
	 * fragments' ldmatrix (which stays volatile: barriers order its shared-memory reads) */
	asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
	    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
	    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
	    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

static __device__ __forceinline__ void cp_async16(bf16 *dst, const bf16 *src, int src_bytes)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)),
		     "l"(src), "r"(src_bytes));
}

static __device__ __forceinline__ void cp_async_commit()
{
	asm volatile("cp.async.commit_group;\n" ::);
}

template <int N> static __device__ __forceinline__ void cp_async_wait()
{
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* one BM x BK tile of A and one BK x BN tile of B into stage buffers; VA/VB: rows of A/B
 * are 16-byte aligned (k % 8 == 0, n % 8 == 0) so whole 16-byte copies work; otherwise
 * element loads with bounds checks and ordinary shared stores.  Out of range: zeros. */
template <bool VA, bool VB, bool CHECK>
static __device__ __forceinline__ void load_tile(bf16 *sa, bf16 *sb, const bf16 *a, const bf16 *b,
						 int m, int n, int k, int bm, int bn, int bk)
{
	const int tid = threadIdx.x;
	const bf16 zero = __ushort_as_bfloat16(0);
#pragma unroll
	for (int l = 0; l < LA; l++) {
		const int i = tid + l * NTHREADS, row = i / (BK / 8), c8 = (i % (BK / 8)) * 8;
		const int gr = bm + row, gk = bk + c8;
		bf16 *dst = sa + row * AS + c8;
		if (VA) {
			const bool in = !CHECK || (gr < m && gk < k);
			cp_async16(dst, in ? a + (int64_t)gr * k + gk : a, in ? 16 : 0);
		} else {
#pragma unroll
			for (int j = 0; j < 8; j++)
				dst[j] = gr < m && gk + j < k ? a[(int64_t)gr * k + gk + j] : zero;
		}
	}
#pragma unroll
	for (int l = 0; l < LB; l++) {
		const int i = tid + l * NTHREADS, kr = i / (BN / 8), c8 = (i % (BN / 8)) * 8;
		const int gk = bk + kr, gc = bn + c8;
		bf16 *dst = sb + kr * BS + c8;
		if (VB) {
			const bool in = !CHECK || (gk < k && gc < n);
			cp_async16(dst, in ? b + (int64_t)gk * n + gc : b, in ? 16 : 0);
		} else {
#pragma unroll
			for (int j = 0; j < 8; j++)
				dst[j] = gk < k && gc + j < n ? b[(int64_t)gk * n + gc + j] : zero;
		}
	}
}

template <bool VA, bool VB, bool CHECK>
__global__ void __launch_bounds__(NTHREADS, 1)
	matmul_bf16_mma(const bf16 *__restrict__ a, const bf16 *__restrict__ b, bf16 *__restrict__ c,
			int m, int n, int k)
{
	extern __shared__ __align__(16) bf16 smem[];
	const int grid_m = (m + BM - 1) / BM, grid_n = (n + BN - 1) / BN;
	const int pid = blockIdx.x, group = GROUP_M * grid_n, first_m = (pid / group) * GROUP_M;
	const int gsz = min(grid_m - first_m, GROUP_M);
	const int bm = (first_m + (pid % group) % gsz) * BM, bn = ((pid % group) / gsz) * BN;
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	const int wm0 = (warp / WN) * WTM, wn0 = (warp % WN) * WTN;

	float acc[MT][NT][4];
#pragma unroll
	for (int i = 0; i < MT; i++)
#pragma unroll
		for (int j = 0; j < NT; j++)
#pragma unroll
			for (int q = 0; q < 4; q++)
				acc[i][j][q] = 0.0f;

	const int ktiles = (k + BK - 1) / BK;
#pragma unroll
	for (int s = 0; s < STAGES - 1; s++) {
		if (s < ktiles)
			load_tile<VA, VB, CHECK>(smem + s * STAGE_ELEMS, smem + s * STAGE_ELEMS + BM * AS,
						 a, b, m, n, k, bm, bn, s * BK);
		cp_async_commit(); /* empty groups keep the count uniform */
	}

	for (int kt = 0; kt < ktiles; kt++) {
		cp_async_wait<STAGES - 2>();
		__syncthreads(); /* tile kt is in; everyone is done with the stage refilled next */
		const int pre = kt + STAGES - 1;
		if (pre < ktiles) {
			bf16 *st = smem + (pre % STAGES) * STAGE_ELEMS;
			load_tile<VA, VB, CHECK>(st, st + BM * AS, a, b, m, n, k, bm, bn, pre * BK);
		}
		cp_async_commit();

		const bf16 *sa = smem + (kt % STAGES) * STAGE_ELEMS, *sb = sa + BM * AS;
#pragma unroll
		for (int kk = 0; kk < BK; kk += 16) {
			/* A fragment (16x16): matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15), lane l
			 * addresses row l % 16 at k offset 8 * (l / 16) */
			uint32_t af[MT][4], bfr[NT][2];
#pragma unroll
			for (int i = 0; i < MT; i++)
				ldmatrix_x4(af[i], sa + (wm0 + i * 16 + (lane & 15)) * AS + kk +
							   (lane >> 4) * 8);
			/* B fragments of two 8-column tiles: k rows 0-7 and 8-15 of each, transposed
			 * so each thread holds (k = 2t, 2t+1; n = g) pairs */
#pragma unroll
			for (int j = 0; j < NT; j += 2) {
				uint32_t r[4];
				ldmatrix_x4_trans(r, sb + (kk + (lane & 15)) * BS + wn0 + j * 8 +
							     (lane >> 4) * 8);
				bfr[j][0] = r[0];
				bfr[j][1] = r[1];
				bfr[j + 1][0] = r[2];
				bfr[j + 1][1] = r[3];
			}
#pragma unroll
			for (int i = 0; i < MT; i++)
#pragma unroll
				for (int j = 0; j < NT; j++)
					mma_bf16(acc[i][j], af[i], bfr[j][0], bfr[j][1]);
		}
	}
	cp_async_wait<0>();

	/* C fragment: c0,c1 at (g, 2t..2t+1), c2,c3 at (g+8, 2t..2t+1) */
	const int g = lane >> 2, t = lane & 3;
#pragma unroll
	for (int i = 0; i < MT; i++)
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int r = bm + wm0 + i * 16 + g + h * 8;
			if (CHECK && r >= m)
				continue;
			bf16 *crow = c + (int64_t)r * n;
#pragma unroll
			for (int j = 0; j < NT; j++) {
				const int col = bn + wn0 + j * 8 + t * 2;
				const float v0 = acc[i][j][h * 2], v1 = acc[i][j][h * 2 + 1];
				if (VB && (!CHECK || col < n)) {
					*reinterpret_cast<__nv_bfloat162 *>(crow + col) =
						__floats2bfloat162_rn(v0, v1);
				} else {
					if (!CHECK || col < n)
						crow[col] = __float2bfloat16_rn(v0);
					if (!CHECK || col + 1 < n)
						crow[col + 1] = __float2bfloat16_rn(v1);
				}
			}
		}
}

template <bool VA, bool VB, bool CHECK>
static void launch(const bf16 *a, const bf16 *b, bf16 *c, int m, int n, int k,
		   cudaStream_t stream)
{
	static bool ready;
	if (!ready) {
		/* more than 48 KiB of dynamic shared memory needs the opt-in */
		cudaFuncSetAttribute(matmul_bf16_mma<VA, VB, CHECK>,
				     cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
		ready = true;
	}
	const int blocks = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
	matmul_bf16_mma<VA, VB, CHECK><<<blocks, NTHREADS, SMEM_BYTES, stream>>>(a, b, c, m, n, k);
}

void matmul_bf16(const bf16 *a, const bf16 *b, bf16 *c, int32_t m, int32_t n, int32_t k,
		 cudaStream_t stream)
{
	if (m <= 0 || n <= 0)
		return;
	const bool va = k % 8 == 0, vb = n % 8 == 0;
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
