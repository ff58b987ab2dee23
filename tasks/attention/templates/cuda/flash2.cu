/* @ksearch
family: flash2-mma
summary: "FlashAttention-2 style forward on the tensor cores: one CTA per block of BM queries of one head, each warp owns 16*MT query rows; Q fragments loaded once (kept in registers or re-read from shared memory), K and V tiles of BN keys streamed through a cp.async multi-stage pipeline in padded shared memory; S = Q K^T and O += P V with mma.sync m16n8k16 (fp16 or bf16 in, the task's dtype; fp32 accumulate), fragments by ldmatrix (V transposed on the fly); online softmax in registers with the scale and log2(e) folded into one FFMA before ex2; causal blocks skip key tiles past the diagonal, mask only the diagonal and tail tiles, and start heaviest first"
rating: 8
difficulty: 5
knobs:
  BM: {values: [64, 128], default: 64, summary: "queries per CTA", impacts: {memory_bandwidth: 6, register_pressure: 2}}
  BN: {values: [32, 64, 128], default: 64, summary: "keys per pipeline tile (S tile of a warp: 16*MT x BN floats in registers)", impacts: {register_pressure: 6, memory_bandwidth: 3}}
  WARPS: {values: [4, 8], default: 4, summary: "warps per CTA; each owns BM/WARPS query rows (16 or 32)", impacts: {register_pressure: 6, compute_hw_fit: 5}}
  STAGES: {values: [2, 3], default: 2, summary: "cp.async pipeline depth of K/V tiles", impacts: {memory_bandwidth: 5}}
  QREG: {values: [0, 1], default: 1, summary: "1 keeps the Q fragments in registers for the whole key loop; 0 re-reads them from shared memory each tile (fewer registers, more ldmatrix)", impacts: {register_pressure: 7}}
  EXP2: {values: [0, 1], default: 1, summary: "1 folds scale*log2(e) into one FFMA and calls ex2.approx; 0 scales, subtracts and calls __expf (an extra multiply per score)", impacts: {compute_hw_fit: 5}}
require:
  - "BM % (16 * WARPS) == 0"
  - "BM / (16 * WARPS) <= 2"
  - "BM / (16 * WARPS) * BN <= 128"
  - "(BM + 2 * STAGES * BN) * 136 * 2 <= 232448"
@end */
/* Layout: q and o are [batch, heads, seqlen, head_dim], k and v [batch, kv_heads, kv_seqlen,
 * head_dim], all fp16 (bf16 in attention_bf16); query head h reads kv head h / (heads / kv_heads) (grouped-query
 * attention; heads % kv_heads == 0).  Causal is top-left aligned: query i sees key j iff
 * j <= i (and j < kv_seqlen), so rows at or past kv_seqlen see every key, and keys at or past
 * seqlen are seen by no row (their tiles are never loaded).  head_dim 32, 64 and 128 take
 * the tensor-core kernel (a template per head_dim); any other head_dim takes a plain
 * warp-per-query kernel at the end of this file, so the entry point is total.
 *
 * Per key tile of one warp (16*MT query rows, BN keys), with c = scale*log2(e):
 *   S = Q K^T (fp32);  m' = max(m, c*max_j S);  alpha = 2^(m - m');  P = 2^(c*S - m')
 *   l = l*alpha + sum_j P;  O = O*alpha + P V (P rounded to fp16 / bf16 as the MMA's A operand)
 * and at the end o = O / l.  The C fragment of S is reused as the A fragment of P V without
 * going through shared memory (the m16n8 accumulator layout of two adjacent key tiles is the
 * m16k16 operand layout).  Each thread holds 2 rows per 16-row tile and keeps its partial
 * row sum l unreduced until the end; the row max is reduced over the 4 threads of a quad.
 * Masked scores are -inf; every row sees key 0 in the first tile, so m is finite from then
 * on, and 2^(-inf) = 0 removes masked keys.  Zero-filled K/V rows past kv_seqlen keep the
 * products finite. */
/* The same device code runs through MLX (tasks/attention/templates/mlx/flash2.cuda.mlx
 * includes this file): NVRTC, which MLX compiles with, defines __CUDACC_RTC__, has no host
 * code, no math.h and cuda_fp16.h included already; everything host-side is skipped there. */

/* The element type of q, k, v, o.  A variant's wrapper
 * (tasks/attention_bf16/templates/cuda/flash2.cu) defines ATTN_BF16 1 and its entry point's
 * name before including this file.  The kernel is the same for both: ldmatrix and cp.async
 * move 16-bit elements whatever they are, the MMA takes the type in its name, and P is
 * packed into the A operand in that type.  (bf16 is cuda only: the MLX template is fp16.) */
#ifndef ATTN_BF16
#define ATTN_BF16 0
#define ATTN_FN attention
#endif

#ifndef __CUDACC_RTC__
#include <cuda_fp16.h>
#if ATTN_BF16
#include <cuda_bf16.h>
#endif
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#endif

#if ATTN_BF16
#define ATTN_T __nv_bfloat16
#define ATTN_T2 __nv_bfloat162
#define ATTN_LOAD(x) __bfloat162float(x)
#define ATTN_STORE(f) __float2bfloat16_rn(f)
#define ATTN_STORE2(lo, hi) __floats2bfloat162_rn(lo, hi) /* lo in the low half */
#define ATTN_MMA "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
#else
#define ATTN_T __half
#define ATTN_T2 __half2
#define ATTN_LOAD(x) __half2float(x)
#define ATTN_STORE(f) __float2half_rn(f)
#define ATTN_STORE2(lo, hi) __floats2half2_rn(lo, hi) /* lo in the low half */
#define ATTN_MMA "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
#endif
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef WARPS
#define WARPS 4
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef QREG
#define QREG 1
#endif
#ifndef EXP2
#define EXP2 1
#endif

#define NTHREADS (32 * WARPS)
#define MT (BM / (16 * WARPS)) /* 16-row MMA tiles per warp */

static_assert(MT >= 1 && MT * 16 * WARPS == BM, "each warp owns whole 16-row tiles");
static_assert(BN % 16 == 0, "key tiles are whole k16 steps of P V");
static_assert(STAGES >= 2, "at least double buffering");

static __device__ __forceinline__ unsigned smem_addr(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

static __device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const ATTN_T *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(smem_addr(p)));
}

static __device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], const ATTN_T *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(smem_addr(p)));
}

/* c += a b on 16-bit ATTN_T operands with fp32 accumulation */
static __device__ __forceinline__ void mma_16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
					      uint32_t b1)
{
	asm(ATTN_MMA
	    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
	    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
	    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

static __device__ __forceinline__ void cp_async16(ATTN_T *dst, const ATTN_T *src, int src_bytes)
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

static __device__ __forceinline__ float fast_exp2(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
	return y;
}

/* two floats rounded to nearest into the 16-bit pair of an MMA operand register */
static __device__ __forceinline__ uint32_t pack2(float lo, float hi)
{
	ATTN_T2 h = ATTN_STORE2(lo, hi);
	return *reinterpret_cast<uint32_t *>(&h);
}

/* ROWS rows of D halves starting at row r0 of g into s (row stride D + 8); rows at or past
 * seqlen are zero-filled by the copy itself (source size 0) */
template <int ROWS, int D>
static __device__ __forceinline__ void load_rows(ATTN_T *s, const ATTN_T *g, int r0, int seqlen)
{
	constexpr int CH = D / 8, N = ROWS * CH, ITERS = (N + NTHREADS - 1) / NTHREADS;
#pragma unroll
	for (int it = 0; it < ITERS; it++) {
		const int c = threadIdx.x + it * NTHREADS;
		if (N % NTHREADS != 0 && c >= N)
			break;
		const int row = c / CH, col = (c % CH) * 8, gr = r0 + row;
		const bool in = gr < seqlen;
		cp_async16(s + row * (D + 8) + col, in ? g + (int64_t)gr * D + col : g, in ? 16 : 0);
	}
}

template <int D> struct frags {
	uint32_t q[QREG ? MT : 1][QREG ? D / 16 : 1][4];
	float o[MT][D / 8][4];
	float m[MT][2], l[MT][2];
};

/* one key tile: S = Q K^T, online softmax, O += P V.  MASK: the tile crosses the diagonal
 * or the end of the keys (kv_seqlen), so scores get the -inf mask. */
template <int D, bool CAUSAL, bool MASK>
static __device__ __forceinline__ void tile_step(frags<D> &f, const ATTN_T *sq, const ATTN_T *sk,
						 const ATTN_T *sv, int row0, int key0,
						 int kv_seqlen, float c)
{
	const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
	constexpr int DS = D + 8;
	float s[MT][BN / 8][4];
#pragma unroll
	for (int i = 0; i < MT; i++)
#pragma unroll
		for (int j = 0; j < BN / 8; j++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				s[i][j][e] = 0.0f;
#pragma unroll
	for (int kk = 0; kk < D / 16; kk++) {
		uint32_t qa[MT][4];
#pragma unroll
		for (int i = 0; i < MT; i++) {
			if (QREG) {
#pragma unroll
				for (int e = 0; e < 4; e++)
					qa[i][e] = f.q[QREG ? i : 0][QREG ? kk : 0][e];
			} else {
				ldsm_x4(qa[i], sq + (i * 16 + (lane & 15)) * DS + kk * 16 + (lane >> 4) * 8);
			}
		}
		/* matrices: (keys 0-7, d 0-7), (keys 0-7, d 8-15), (keys 8-15, d 0-7), (keys 8-15,
		 * d 8-15): the B operands of two adjacent 8-key tiles */
#pragma unroll
		for (int j = 0; j < BN / 8; j += 2) {
			uint32_t b[4];
			ldsm_x4(b, sk + (j * 8 + (lane & 7) + (lane >> 4) * 8) * DS + kk * 16 +
					   ((lane >> 3) & 1) * 8);
#pragma unroll
			for (int i = 0; i < MT; i++) {
				mma_16(s[i][j], qa[i], b[0], b[1]);
				mma_16(s[i][j + 1], qa[i], b[2], b[3]);
			}
		}
	}

#pragma unroll
	for (int i = 0; i < MT; i++) {
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int row = row0 + i * 16 + g + h * 8;
			float mx = -INFINITY;
#pragma unroll
			for (int j = 0; j < BN / 8; j++)
#pragma unroll
				for (int e = 0; e < 2; e++) {
					if (MASK) {
						const int col = key0 + j * 8 + 2 * t + e;
						if (col >= kv_seqlen || (CAUSAL && col > row))
							s[i][j][h * 2 + e] = -INFINITY;
					}
					mx = fmaxf(mx, s[i][j][h * 2 + e]);
				}
			mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
			mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
			/* c > 0, so the max of the scaled scores is c times the max */
			const float m_new = fmaxf(f.m[i][h], mx * c);
			const float m_use = m_new == -INFINITY ? 0.0f : m_new;
			float alpha, sum = 0.0f;
			if (EXP2) {
				alpha = fast_exp2(f.m[i][h] - m_use);
#pragma unroll
				for (int j = 0; j < BN / 8; j++)
#pragma unroll
					for (int e = 0; e < 2; e++) {
						const float p = fast_exp2(fmaf(s[i][j][h * 2 + e], c, -m_use));
						s[i][j][h * 2 + e] = p;
						sum += p;
					}
			} else {
				alpha = __expf(f.m[i][h] - m_use);
#pragma unroll
				for (int j = 0; j < BN / 8; j++)
#pragma unroll
					for (int e = 0; e < 2; e++) {
						const float p = __expf(s[i][j][h * 2 + e] * c - m_use);
						s[i][j][h * 2 + e] = p;
						sum += p;
					}
			}
			f.m[i][h] = m_new;
			f.l[i][h] = f.l[i][h] * alpha + sum;
#pragma unroll
			for (int jd = 0; jd < D / 8; jd++) {
				f.o[i][jd][h * 2] *= alpha;
				f.o[i][jd][h * 2 + 1] *= alpha;
			}
		}
	}

#pragma unroll
	for (int kk = 0; kk < BN / 16; kk++) {
		uint32_t pa[MT][4];
#pragma unroll
		for (int i = 0; i < MT; i++) {
			pa[i][0] = pack2(s[i][2 * kk][0], s[i][2 * kk][1]);
			pa[i][1] = pack2(s[i][2 * kk][2], s[i][2 * kk][3]);
			pa[i][2] = pack2(s[i][2 * kk + 1][0], s[i][2 * kk + 1][1]);
			pa[i][3] = pack2(s[i][2 * kk + 1][2], s[i][2 * kk + 1][3]);
		}
		/* V rows are keys (k), columns d (n): transposed loads give the col operand */
#pragma unroll
		for (int jd = 0; jd < D / 8; jd += 2) {
			uint32_t b[4];
			ldsm_x4_t(b, sv + (kk * 16 + (lane & 15)) * DS + jd * 8 + (lane >> 4) * 8);
#pragma unroll
			for (int i = 0; i < MT; i++) {
				mma_16(f.o[i][jd], pa[i], b[0], b[1]);
				mma_16(f.o[i][jd + 1], pa[i], b[2], b[3]);
			}
		}
	}
}

/* the work of one CTA: query block blockIdx.x (reversed when causal) of query head
 * blockIdx.y = b * heads + h, which reads kv head h / (heads / kv_heads) of batch b */
template <int D, bool CAUSAL>
static __device__ __forceinline__ void fa2_cta(const ATTN_T *__restrict__ q,
					       const ATTN_T *__restrict__ k,
					       const ATTN_T *__restrict__ v, ATTN_T *__restrict__ o,
					       int heads, int kv_heads, int seqlen, int kv_seqlen,
					       float c)
{
	extern __shared__ __align__(16) ATTN_T smem[];
	constexpr int DS = D + 8, KV = 2 * BN * DS;
	ATTN_T *sq = smem, *skv = smem + BM * DS;
	/* causal: the last query blocks have the most key tiles (the count grows with the
	 * block index whatever seqlen and kv_seqlen are); launch them first */
	const int mb = CAUSAL ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
	/* b * kv_heads + h / group = (b * heads + h) / group, as heads = group * kv_heads */
	const int bh = blockIdx.y, kvh = bh / (heads / kv_heads);
	const int64_t base = (int64_t)bh * seqlen * D, kv_base = (int64_t)kvh * kv_seqlen * D;
	const ATTN_T *qg = q + base, *kg = k + kv_base, *vg = v + kv_base;
	const int q0 = mb * BM, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;

	/* causal: the block's queries (those below seqlen) see no key past the last of them */
	const int kv_end = CAUSAL ? min(kv_seqlen, min(seqlen, q0 + BM)) : kv_seqlen;
	const int n_tiles = (kv_end + BN - 1) / BN;
	/* this warp's rows row0..row0+16*MT-1.  Causal: they need the tiles before n_mine (the
	 * warp skips the rest of the block's, every score of them masked), and the tiles before
	 * n_full need no mask: inside the keys and left of the warp's first query */
	const int row0 = q0 + warp * MT * 16;
	const int n_mine =
		CAUSAL ? min(n_tiles, (min(seqlen, row0 + MT * 16) + BN - 1) / BN) : n_tiles;
	int n_full = kv_seqlen / BN;
	if (CAUSAL)
		n_full = min(n_full, (row0 + 1) / BN);

	load_rows<BM, D>(sq, qg, q0, seqlen);
	cp_async_commit();
#pragma unroll
	for (int s = 0; s < STAGES - 1; s++) {
		if (s < n_tiles) {
			load_rows<BN, D>(skv + s * KV, kg, s * BN, kv_seqlen);
			load_rows<BN, D>(skv + s * KV + BN * DS, vg, s * BN, kv_seqlen);
		}
		cp_async_commit(); /* empty groups keep the count uniform */
	}
	cp_async_wait<STAGES - 1>(); /* the Q group, the oldest, is in */
	__syncthreads();

	frags<D> f;
	const ATTN_T *sqw = sq + warp * MT * 16 * DS;
	if (QREG) {
#pragma unroll
		for (int i = 0; i < MT; i++)
#pragma unroll
			for (int kk = 0; kk < D / 16; kk++)
				ldsm_x4(f.q[QREG ? i : 0][QREG ? kk : 0],
					sqw + (i * 16 + (lane & 15)) * DS + kk * 16 + (lane >> 4) * 8);
	}
#pragma unroll
	for (int i = 0; i < MT; i++) {
#pragma unroll
		for (int jd = 0; jd < D / 8; jd++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				f.o[i][jd][e] = 0.0f;
		f.m[i][0] = f.m[i][1] = -INFINITY;
		f.l[i][0] = f.l[i][1] = 0.0f;
	}

	for (int n = 0; n < n_tiles; n++) {
		cp_async_wait<STAGES - 2>();
		__syncthreads(); /* tile n is in; everyone is done with the stage refilled next */
		const int pre = n + STAGES - 1;
		if (pre < n_tiles) {
			ATTN_T *st = skv + (pre % STAGES) * KV;
			load_rows<BN, D>(st, kg, pre * BN, kv_seqlen);
			load_rows<BN, D>(st + BN * DS, vg, pre * BN, kv_seqlen);
		}
		cp_async_commit();
		if (n >= n_mine)
			continue; /* past this warp's diagonal (whole warps agree: no divergence) */
		const ATTN_T *sk = skv + (n % STAGES) * KV;
		if (n < n_full)
			tile_step<D, CAUSAL, false>(f, sqw, sk, sk + BN * DS, row0, n * BN, kv_seqlen,
						    c);
		else
			tile_step<D, CAUSAL, true>(f, sqw, sk, sk + BN * DS, row0, n * BN, kv_seqlen,
						   c);
	}
	cp_async_wait<0>();

	const int g = lane >> 2, t = lane & 3;
#pragma unroll
	for (int i = 0; i < MT; i++)
#pragma unroll
		for (int h = 0; h < 2; h++) {
			float l = f.l[i][h];
			l += __shfl_xor_sync(0xffffffffu, l, 1);
			l += __shfl_xor_sync(0xffffffffu, l, 2);
			const float inv = l > 0.0f ? 1.0f / l : 0.0f;
			const int row = row0 + i * 16 + g + h * 8;
			if (row >= seqlen)
				continue;
			ATTN_T *orow = o + base + (int64_t)row * D + 2 * t;
#pragma unroll
			for (int jd = 0; jd < D / 8; jd++)
				*reinterpret_cast<ATTN_T2 *>(orow + jd * 8) = ATTN_STORE2(
					f.o[i][jd][h * 2] * inv, f.o[i][jd][h * 2 + 1] * inv);
		}
}

template <int D, bool CAUSAL>
__global__ void __launch_bounds__(NTHREADS, 1)
	attention_fa2(const ATTN_T *__restrict__ q, const ATTN_T *__restrict__ k,
		      const ATTN_T *__restrict__ v, ATTN_T *__restrict__ o, int heads, int kv_heads,
		      int seqlen, int kv_seqlen, float c)
{
	fa2_cta<D, CAUSAL>(q, k, v, o, heads, kv_heads, seqlen, kv_seqlen, c);
}

#ifndef __CUDACC_RTC__
template <int D, bool CAUSAL>
static void launch(const ATTN_T *q, const ATTN_T *k, const ATTN_T *v, ATTN_T *o, int batch,
		   int heads, int kv_heads, int seqlen, int kv_seqlen, cudaStream_t stream)
{
	constexpr int smem = (BM + 2 * STAGES * BN) * (D + 8) * 2;
	static bool ready;
	if (!ready) {
		/* more than 48 KiB of dynamic shared memory needs the opt-in */
		cudaFuncSetAttribute(attention_fa2<D, CAUSAL>,
				     cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
		ready = true;
	}
	const float scale = 1.0f / sqrtf((float)D);
	const float c = EXP2 ? scale * 1.4426950408889634f : scale;
	/* the grid of the MLX template: x query blocks, y = b * heads + h */
	dim3 grid((seqlen + BM - 1) / BM, batch * heads);
	attention_fa2<D, CAUSAL><<<grid, NTHREADS, smem, stream>>>(q, k, v, o, heads, kv_heads,
								     seqlen, kv_seqlen, c);
}

#endif /* !__CUDACC_RTC__ */

/* Any other head_dim (up to 512): one warp per query, each lane owns every 32nd channel;
 * plain online softmax in fp32.  Correct, not fast.  Query row r of all batch*heads*seqlen. */
#define GEN_MAXC 16
static __device__ __forceinline__ void generic_row(const ATTN_T *__restrict__ q,
						   const ATTN_T *__restrict__ k,
						   const ATTN_T *__restrict__ v,
						   ATTN_T *__restrict__ o, int64_t r, int heads,
						   int kv_heads, int seqlen, int kv_seqlen, int hd,
						   int causal, float scale)
{
	const int lane = threadIdx.x & 31;
	const int i = (int)(r % seqlen);
	/* query head b * heads + h reads kv head b * kv_heads + h / group, group = heads /
	 * kv_heads, which is (b * heads + h) / group */
	const int64_t kv_head = (int)(r / seqlen) / (heads / kv_heads);
	const ATTN_T *qi = q + r * hd, *kh = k + kv_head * kv_seqlen * hd,
		     *vh = v + kv_head * kv_seqlen * hd;
	float qv[GEN_MAXC], acc[GEN_MAXC];
#pragma unroll
	for (int c = 0; c < GEN_MAXC; c++) {
		const int d = lane + 32 * c;
		qv[c] = d < hd ? ATTN_LOAD(qi[d]) : 0.0f;
		acc[c] = 0.0f;
	}
	float m = -INFINITY, l = 0.0f;
	/* top-left causal: keys 0..i, all of them once i reaches kv_seqlen */
	const int nkeys = causal ? min(i + 1, kv_seqlen) : kv_seqlen;
	for (int j = 0; j < nkeys; j++) {
		const ATTN_T *kj = kh + (int64_t)j * hd, *vj = vh + (int64_t)j * hd;
		float dot = 0.0f;
#pragma unroll
		for (int c = 0; c < GEN_MAXC; c++) {
			const int d = lane + 32 * c;
			if (d < hd)
				dot += qv[c] * ATTN_LOAD(kj[d]);
		}
#pragma unroll
		for (int off = 16; off > 0; off >>= 1)
			dot += __shfl_xor_sync(0xffffffffu, dot, off);
		const float s = dot * scale, m_new = fmaxf(m, s);
		const float alpha = __expf(m - m_new), p = __expf(s - m_new);
		l = l * alpha + p;
#pragma unroll
		for (int c = 0; c < GEN_MAXC; c++) {
			const int d = lane + 32 * c;
			acc[c] = acc[c] * alpha + (d < hd ? p * ATTN_LOAD(vj[d]) : 0.0f);
		}
		m = m_new;
	}
#pragma unroll
	for (int c = 0; c < GEN_MAXC; c++) {
		const int d = lane + 32 * c;
		if (d < hd)
			o[r * hd + d] = ATTN_STORE(acc[c] / l);
	}
}

/* One CTA of NTHREADS threads on the grid (ceil(seqlen / BM), batch * heads) with
 * (BM + 2 * STAGES * BN) * (D + 8) * 2 bytes of dynamic shared memory: the body of the MLX
 * template, where the launch is MLX's and D and CAUSAL are template args.  Other head_dims
 * run the plain kernel on the block's queries, a warp per query. */
template <int D, bool CAUSAL>
static __device__ __forceinline__ void attention_cta(const ATTN_T *q, const ATTN_T *k,
						     const ATTN_T *v, ATTN_T *o, int heads,
						     int kv_heads, int seqlen, int kv_seqlen)
{
	if constexpr (D == 32 || D == 64 || D == 128) {
		const float scale = 1.0f / sqrtf((float)D);
		fa2_cta<D, CAUSAL>(q, k, v, o, heads, kv_heads, seqlen, kv_seqlen,
				   EXP2 ? scale * 1.4426950408889634f : scale);
	} else {
		static_assert(D <= 32 * GEN_MAXC, "head_dim up to 512");
		const int64_t head = (int64_t)blockIdx.y * seqlen;
		const int end = min(seqlen, (int)(blockIdx.x + 1) * BM);
		for (int i = blockIdx.x * BM + (threadIdx.x >> 5); i < end; i += WARPS)
			generic_row(q, k, v, o, head + i, heads, kv_heads, seqlen, kv_seqlen, D,
				    CAUSAL, 1.0f / sqrtf((float)D));
	}
}

#ifndef __CUDACC_RTC__
__global__ void attention_generic(const ATTN_T *__restrict__ q, const ATTN_T *__restrict__ k,
				  const ATTN_T *__restrict__ v, ATTN_T *__restrict__ o, int64_t rows,
				  int heads, int kv_heads, int seqlen, int kv_seqlen, int hd,
				  int causal, float scale)
{
	const int64_t r = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	if (r < rows)
		generic_row(q, k, v, o, r, heads, kv_heads, seqlen, kv_seqlen, hd, causal, scale);
}

void ATTN_FN(const ATTN_T *q, const ATTN_T *k, const ATTN_T *v, ATTN_T *o, int32_t batch,
	     int32_t heads, int32_t kv_heads, int32_t seqlen, int32_t kv_seqlen, int32_t head_dim,
	     int32_t causal, cudaStream_t stream)
{
	if (batch <= 0 || heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0 || seqlen <= 0 ||
	    kv_seqlen <= 0 || head_dim <= 0)
		return; /* nothing to do, or a shape outside the task: o stays as it is */
#define KS_ATTN_CASE(DIM)                                                              \
	case DIM:                                                                      \
		if (causal)                                                            \
			launch<DIM, true>(q, k, v, o, batch, heads, kv_heads, seqlen,  \
					  kv_seqlen, stream);                          \
		else                                                                   \
			launch<DIM, false>(q, k, v, o, batch, heads, kv_heads, seqlen, \
					   kv_seqlen, stream);                         \
		return;
	switch (head_dim) {
		KS_ATTN_CASE(32)
		KS_ATTN_CASE(64)
		KS_ATTN_CASE(128)
	default:
		break;
	}
#undef KS_ATTN_CASE
	if (head_dim > 32 * GEN_MAXC)
		return; /* unsupported: o stays poisoned and the check reports it */
	const int64_t rows = (int64_t)batch * heads * seqlen;
	attention_generic<<<(unsigned)((rows + 3) / 4), 128, 0, stream>>>(
		q, k, v, o, rows, heads, kv_heads, seqlen, kv_seqlen, head_dim, causal,
		1.0f / sqrtf((float)head_dim));
}
#endif /* !__CUDACC_RTC__ */
