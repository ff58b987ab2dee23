/* @ksearch
family: flash-wgmma
summary: "Hopper FlashAttention forward on wgmma (FA3's instruction route and, with WS, its warp-specialised CTA: a producer warpgroup and mbarriers, cp.async in place of TMA): one CTA of WG warpgroups, each owning 64 query rows; Q, K and V tiles in 128-byte-swizzled shared memory through a STAGES-deep cp.async pipeline; S = Q K^T by wgmma m64nBNk16 with both operands from shared-memory descriptors, online softmax on the accumulator registers (scale*log2(e) folded into one FFMA before ex2), O += P V by wgmma m64nDk16 with P from registers and V read transposed through the descriptor; causal blocks skip key tiles past each warpgroup's diagonal and run heaviest first; head_dim 64 and 128 only (other head_dims and builds without sm_90a take a plain warp-per-query kernel); OVL=1 pipelines each warpgroup's softmax of tile n+1 under its P V of tile n"
rating: 9
difficulty: 5
knobs:
  WG: {values: [1, 2, 3], default: 2, summary: "consumer warpgroups per CTA, 64 query rows each (CTA = 64*WG queries, 128*WG threads)", impacts: {memory_bandwidth: 6, register_pressure: 5, compute_hw_fit: 5}}
  BN: {values: [64, 128, 192], default: 128, summary: "keys per tile: the N of the S wgmma (BN/2 fp32 registers per thread for S). For head_dim 128 without the causal mask FA3 takes a 128 x 176 tile with P from registers and its intra-warpgroup overlap, names 128 x 192 without the overlap as nearly as good, and keeps 128 x 128 for causal; 192 fits STAGES 2 only", impacts: {register_pressure: 6, compute_hw_fit: 4}}
  STAGES: {values: [2, 3], default: 3, summary: "cp.async pipeline depth of K/V tiles", impacts: {memory_bandwidth: 5}}
  OVL: {values: [0, 1], default: 0, summary: "1: FA3's intra-warpgroup pipelining: S of tile n+1 and O += P V of tile n are in flight together, so the softmax of n+1 runs while the tensor cores do P V (needs S, P and O live at once; V loads trail K by a tile)", impacts: {compute_hw_fit: 6, register_pressure: 5}}
  WS: {values: [0, 1], default: 1, summary: "1: warp specialisation, FA3's CTA structure: one more warpgroup, a producer that only copies Q, K and V tiles (cp.async, each stage's arrival signalled on an mbarrier) while the WG consumer warpgroups only compute, with no CTA-wide barrier in the loop; setmaxnreg moves the producer's registers to the consumers", impacts: {memory_bandwidth: 5, compute_hw_fit: 6, register_pressure: 4}}
  PERSIST: {values: [0, 1], default: 1, summary: "1 (with WS, OVL 0): a persistent grid, one CTA an SM walking the (query block, head) work items; the producer's K/V ring runs on from one item into the next, and each consumer warpgroup copies its own 64 Q rows of the next item as soon as its last S = Q K^T has completed, so an item's start (Q and the first tiles) and end (the store of O) hide under its neighbours' work instead of costing every CTA", impacts: {compute_hw_fit: 5, memory_bandwidth: 4}}
  TMA: {values: [0, 1, 2], default: 1, summary: "1 (with PERSIST): the producer's K and V tiles by TMA (cp.async.bulk.tensor from host-encoded tensor maps, the 128-byte swizzle done by the copy engine, zero fill past kv_seqlen), one thread issuing a tile and the mbarrier counting bytes, instead of 128 threads' cp.async; the consumers need no proxy fence. 2: the same copies from tensor maps the kernel encodes itself (tensormap.replace on a zeroed map, copied to a slot of module memory per CTA), as the MLX build must, having no host code. Measured side by side on an H200 (docs/results/notes/cuda-attention-tma.md): 1 took the headline from 160.1 to 136.6 us and causal from 109.5 to 96.5, 2 at most 2.3% slower than 1 (0.1-2.3% on the six workloads)", impacts: {memory_bandwidth: 5, compute_hw_fit: 4}}
  QREG: {values: [0, 1], default: 0, summary: "1 (with PERSIST): S = Q K^T with Q from registers (wgmma's register A operand, loaded once an item by ldmatrix) instead of shared memory: a third less shared-memory reading a S, 32 more registers a consumer thread", impacts: {memory_bandwidth: 4, register_pressure: 5}}
  PP: {values: [0, 1], default: 0, summary: "1 (with WS, WG 2 and OVL): FA3's ping-pong: the two consumer warpgroups take turns issuing their wgmma (a named barrier each), so one's softmax runs while the other's matrix products do", impacts: {compute_hw_fit: 6}}
require:
  - "(64 * WG + 2 * STAGES * BN) * 128 * 2 + 1024 + 128 * WS + 256 * (TMA == 2) <= 232448"
  - "PP == 0 || (WS == 1 && WG == 2 && OVL == 1)"
  - "PERSIST == 0 || (WS == 1 && OVL == 0)"
  - "QREG == 0 || (PERSIST == 1 && BN <= 128)"
  - "TMA == 0 || PERSIST == 1"
  - "WG <= 2 || BN <= 64"
  - "BN < 192 || WG <= 2"
@end */
/* @cuda arch: 90a
 * (the search leaves this template out on other GPUs: there every candidate would run the
 * plain fallback kernel; src/backend/cuda.c, cuda_template_runs).  Rated above flash2.cu
 * (9 against 8), so the search tries it first where it runs: on an H200 the probe of
 * docs/cuda.md, "The wgmma attention template", timed its defaults at 177.7 us on the
 * headline workload, against flash2.cu's best 230.3 us by bench/cuda/attention.py. */
/* Layout: q and o are [batch, heads, seqlen, head_dim], k and v [batch, kv_heads, kv_seqlen,
 * head_dim], all fp16; query head h reads kv head h / (heads / kv_heads) (grouped-query
 * attention; heads % kv_heads == 0).  Causal is top-left aligned: query i sees key j iff
 * j <= i (and j < kv_seqlen), so rows at or past kv_seqlen see every key, and keys at or past
 * seqlen are seen by no row (their tiles are never loaded).  head_dim 64 and 128 take the
 * wgmma kernel; any other head_dim, or a build for an architecture without the sm_90a
 * features (wgmma needs compute_90a), takes a plain warp-per-query kernel at the end of this
 * file, so the entry point is total and the file compiles for sm_80 too.
 *
 * Shared memory: every tile (Q: 64*WG rows, K and V: BN rows per stage) is stored as D/64
 * panels of ROWS x 64 halves, a panel row being 128 bytes whose 16-byte chunk c sits at chunk
 * c ^ (row % 8): the 128-byte swizzle the wgmma descriptors name (swizzle mode 1).  Eight rows
 * (1024 bytes) are one swizzle atom, so panels start 1024-aligned.
 *   S = Q K^T: A = Q and B = K, both K-major (head_dim contiguous); a k16 step moves the start
 *     address 32 bytes inside a panel, the next panel after four; the stride byte offset
 *     (SBO) is 1024, the distance between 8-row groups; the leading byte offset is unused.
 *   O += P V: A = P from registers (the fp16 pack of S's accumulators is wgmma's register
 *     A-fragment layout), B = V, which is [keys, head_dim] with head_dim contiguous, i.e.
 *     MN-major for this operand: transpose bit set, the same swizzled panels, a k16 step
 *     (16 keys) moves the start 16 rows = 2048 bytes; SBO = 1024 (8 keys further along K),
 *     LBO = the panel size (64 head_dim columns further along N).
 * Accumulators (S: BN/2 floats, O: D/2 floats per thread): warp w of the warpgroup owns
 * rows 16w..16w+15; element 4j+e is row g + 8*(e/2), column 8j + 2t + e%2 (g = lane/4,
 * t = lane%4), the mma.sync m16n8 C layout repeated over n.
 * Per tile, with c = scale*log2(e): m' = max(m, c*max S), alpha = 2^(m - m'),
 * P = 2^(c*S - m'), l = l*alpha + sum P, O = O*alpha + P V; at the end o = O / l.  Masked
 * scores are -inf; every row sees key 0 in the first tile, so m is finite from then on.
 * Zero-filled K/V rows past kv_seqlen keep the products finite. */
/* The device functions wgmma_cta (the body an MLX template would call, on MLX's grid) and
 * generic_row compile under NVRTC too (__CUDACC_RTC__: no host code, no math.h, cuda_fp16.h
 * included already); everything host-side is skipped there. */
/* The element type of q, k, v, o.  tasks/attention_bf16's wrapper defines ATTN_BF16 1 and its
 * entry point's name before including this file.  The kernel is the same for both: cp.async
 * moves 16-bit elements whatever they are, wgmma takes the type in its name, and P is packed
 * into the register A operand in that type.  (The MLX template is fp16.) */
#ifndef ATTN_BF16
#define ATTN_BF16 0
#define ATTN_FN attention
#endif

#ifndef __CUDACC_RTC__
#include <cuda_fp16.h>
#if ATTN_BF16
#include <cuda_bf16.h>
#endif
#include <cuda.h>
#include <cudaTypedefs.h>
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
#define ATTN_WGMMA_TYPES ".f32.bf16.bf16"
#else
#define ATTN_T __half
#define ATTN_T2 __half2
#define ATTN_LOAD(x) __half2float(x)
#define ATTN_STORE(f) __float2half_rn(f)
#define ATTN_STORE2(lo, hi) __floats2half2_rn(lo, hi) /* lo in the low half */
#define ATTN_WGMMA_TYPES ".f32.f16.f16"
#endif
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

#ifndef WG
#define WG 2
#endif
#ifndef BN
#define BN 128
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef OVL
#define OVL 0
#endif

#define BM (64 * WG)
/* 0 when not given (a file that includes this one without the knob); the cuda backend and
 * the MLX template pass their knob's value, default 1 */
#ifndef WS
#define WS 0
#endif
#ifndef PP
#define PP 0
#endif
/* 0 when not given, as WS; the cuda backend passes the header's default, 1, the MLX template
 * its own knob's, also 1 (with CTAS, the size of its persistent grid) */
#ifndef PERSIST
#define PERSIST 0
#endif

/* WS adds the producer warpgroup (warpgroup 0); the consumers are warpgroups WS..WS+WG-1 */
#define NTHREADS (128 * (WG + WS))

static_assert(WG >= 1 && WG <= 4, "1 to 4 warpgroups");
static_assert(BN == 64 || BN == 128 || BN == 192, "the S wgmma is m64n64, m64n128 or m64n192");
static_assert(STAGES >= 2, "at least double buffering");
static_assert(OVL == 0 || OVL == 1, "OVL is 0 or 1");
static_assert(WS == 0 || WS == 1, "WS is 0 or 1");
static_assert(PP == 0 || (WS == 1 && WG == 2 && OVL == 1), "PP needs WS, two consumer warpgroups and OVL");
/* PERSIST applies to the WS, OVL 0 kernel only (the require: keeps the search's space to
 * those); elsewhere it is ignored, so that a configuration naming OVL or WS alone compiles
 * with the header's default PERSIST 1 */
#define PERSIST_ON (PERSIST && WS && !OVL)
#ifndef QREG
#define QREG 0
#endif
static_assert(QREG == 0 || (PERSIST && BN <= 128), "QREG is the persistent kernel's, BN 64 or 128");
#ifndef TMA
#define TMA 0
#endif
/* TMA: the persistent kernel's K/V copies by the tensor memory accelerator.  TMA_DEVMAP: the
 * kernel encodes its tensor maps itself (TMA 2, and any TMA through MLX, which launches the
 * kernel with no host code of ours); otherwise the cuda launcher encodes them on the host */
#define TMA_ON (TMA && PERSIST_ON)
#if defined(__CUDACC_RTC__)
#define TMA_DEVMAP TMA_ON
#else
#define TMA_DEVMAP (TMA_ON && TMA == 2)
#endif
/* a tensor map: 128 opaque bytes, 64-byte aligned (CUtensorMap's layout; NVRTC has no cuda.h) */
struct alignas(64) ks_tmap {
	unsigned long long raw[16];
};
/* TMA: the K and V tensor maps, [batch * kv_heads][kv_seqlen][head_dim] elements, boxes of BN
 * rows by 64 head_dim columns (one swizzle panel), 128-byte swizzle, zeros past kv_seqlen;
 * a kernel parameter (__grid_constant__), empty unless the host encodes them */
struct kv_maps {
#if TMA_ON && !TMA_DEVMAP
	ks_tmap k, v;
#endif
};
#define PERSIST_MAX 8 /* items an SM up to which the launcher takes the persistent grid */

/* bytes of dynamic shared memory: Q, then STAGES K tiles, then STAGES V tiles, and 1024
 * bytes of slack to align the base to a swizzle atom */
template <int D> static constexpr int smem_bytes()
{
	return (BM + 2 * STAGES * BN) * D * 2 + 1024;
}

/* The wgmma kernel's device code: compiled in the host pass and in a device pass for sm_90a;
 * a device pass without the sm_90a features (sm_80, plain sm_90) gets none of it. */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || !defined(__CUDA_ARCH__)
static __device__ __forceinline__ uint32_t smem_addr(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}

static __device__ __forceinline__ void cp_async16(uint32_t dst, const ATTN_T *src, int src_bytes)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
		     "r"(src_bytes));
}

static __device__ __forceinline__ void cp_async_commit()
{
	asm volatile("cp.async.commit_group;\n" ::);
}

template <int N> static __device__ __forceinline__ void cp_async_wait()
{
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* cp.async and plain stores are generic-proxy writes; wgmma reads shared memory through the
 * async proxy, which sees them only after this fence (then a barrier for other threads) */
static __device__ __forceinline__ void fence_proxy_async()
{
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

static __device__ __forceinline__ void wgmma_fence()
{
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

static __device__ __forceinline__ void wgmma_commit()
{
	asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* waits until at most N of this warpgroup's committed wgmma groups are pending */
template <int N> static __device__ __forceinline__ void wgmma_wait()
{
	asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* keeps the compiler from moving reads or writes of accumulator registers across the
 * asynchronous wgmma window (issue .. wait) */
template <int N> static __device__ __forceinline__ void reg_fence(float (&d)[N])
{
#pragma unroll
	for (int i = 0; i < N; i++)
		asm volatile("" : "+f"(d[i])::"memory");
}

template <int N> static __device__ __forceinline__ void reg_fence(uint32_t (&d)[N][4])
{
#pragma unroll
	for (int i = 0; i < N; i++)
#pragma unroll
		for (int j = 0; j < 4; j++)
			asm volatile("" : "+r"(d[i][j])::"memory");
}

/* a shared-memory matrix descriptor: start address, leading and stride byte offsets (all
 * in 16-byte units, 14 bits each), 128-byte swizzle (mode 1 in bits 62-63); base offset 0
 * because every swizzle atom starts 1024-aligned */
static __device__ __forceinline__ uint64_t make_desc(uint32_t saddr, uint32_t lbo, uint32_t sbo)
{
	uint64_t d = (uint64_t)((saddr & 0x3ffff) >> 4);
	d |= (uint64_t)((lbo >> 4) & 0x3fff) << 16;
	d |= (uint64_t)((sbo >> 4) & 0x3fff) << 32;
	d |= (uint64_t)1 << 62;
	return d;
}

/* only one of the n64 / n128 wrappers is used by a configuration */
[[maybe_unused]] static __device__ __forceinline__ void wgmma_ss_n64(float (&d)[32], uint64_t da, uint64_t db, int acc)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n64k16" ATTN_WGMMA_TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
		     : "l"(da), "l"(db), "r"(acc));
}

[[maybe_unused]] static __device__ __forceinline__ void wgmma_ss_n128(float (&d)[64], uint64_t da, uint64_t db, int acc)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n128k16" ATTN_WGMMA_TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
		     : "l"(da), "l"(db), "r"(acc));
}

[[maybe_unused]] static __device__ __forceinline__ void wgmma_ss_n192(float (&d)[96], uint64_t da, uint64_t db, int acc)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n192k16" ATTN_WGMMA_TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, %96, %97, p, 1, 1, 0, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
		     : "l"(da), "l"(db), "r"(acc));
}

template <int TB>
[[maybe_unused]] static __device__ __forceinline__ void wgmma_rs_n64(float (&d)[32], const uint32_t (&a)[4], uint64_t db, int acc)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n64k16" ATTN_WGMMA_TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(acc), "n"(TB));
}

template <int TB>
[[maybe_unused]] static __device__ __forceinline__ void wgmma_rs_n128(float (&d)[64], const uint32_t (&a)[4], uint64_t db, int acc)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n128k16" ATTN_WGMMA_TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(acc), "n"(TB));
}


template <int N>
static __device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], uint64_t da, uint64_t db, int acc)
{
	if constexpr (N == 64)
		wgmma_ss_n64(d, da, db, acc);
	else if constexpr (N == 128)
		wgmma_ss_n128(d, da, db, acc);
	else
		wgmma_ss_n192(d, da, db, acc);
}

/* A from registers; TB: B is MN-major (transposed: V in O += P V), else K-major (K in S) */
template <int N, int TB>
static __device__ __forceinline__ void wgmma_rs(float (&d)[N / 2], const uint32_t (&a)[4],
						uint64_t db, int acc)
{
	if constexpr (N == 64)
		wgmma_rs_n64<TB>(d, a, db, acc);
	else
		wgmma_rs_n128<TB>(d, a, db, acc);
}

static __device__ __forceinline__ float fast_exp2(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
	return y;
}

static __device__ __forceinline__ uint32_t pack_half2(float lo, float hi)
{
	ATTN_T2 h = ATTN_STORE2(lo, hi);
	return *reinterpret_cast<uint32_t *>(&h);
}

/* byte offset of (row, 16-byte chunk ch of the head_dim) in a swizzled tile of ROWS rows */
template <int ROWS>
static __device__ __forceinline__ uint32_t swz_offset(int row, int ch)
{
	return (uint32_t)((ch >> 3) * ROWS * 128 + row * 128 + (((ch & 7) ^ (row & 7)) << 4));
}

/* ROWS rows of D halves from row r0 of g into the swizzled tile at shared address s; rows at
 * or past len (seqlen for Q, kv_seqlen for K and V) are zero-filled by the copy itself
 * (source size 0) */
template <int ROWS, int D, int THREADS = NTHREADS, int UNROLL = 0, int PANEL = ROWS>
static __device__ __forceinline__ void load_tile(uint32_t s, const ATTN_T *g, int r0, int len,
						 int tid = threadIdx.x)
{
	/* PANEL: the rows of the tile the ROWS rows sit in (a warpgroup's 64 Q rows of BM) */
	constexpr int CH = D / 8, N = ROWS * CH, ITERS = (N + THREADS - 1) / THREADS;
#pragma unroll(UNROLL > 0 ? UNROLL : ITERS)
	for (int it = 0; it < ITERS; it++) {
		const int c = tid + it * THREADS;
		if (N % THREADS != 0 && c >= N)
			break;
		const int row = c / CH, ch = c % CH, gr = r0 + row;
		const bool in = gr < len;
		cp_async16(s + swz_offset<PANEL>(row, ch), in ? g + (int64_t)gr * D + ch * 8 : g,
			   in ? 16 : 0);
	}
}

/* the descriptor of the operand byte_off bytes past base's: the start address field (bits
 * 0-13, in 16-byte units) plus byte_off / 16, in 32-bit arithmetic: no carry leaves the field,
 * as every operand lies inside the CTA's shared memory (below 2^18 bytes).  One make_desc a
 * tile and operand, then an add per k-step, in place of a make_desc for each wgmma (ptxas
 * kept the masking and shifting of every one: ~6 instructions before each wgmma issue). */
static __device__ __forceinline__ uint64_t desc_at(uint64_t base, uint32_t byte_off)
{
	const uint32_t lo = (uint32_t)base + (byte_off >> 4), hi = (uint32_t)(base >> 32);
	return ((uint64_t)hi << 32) | lo;
}

/* where S's A operand (the warpgroup's 64 Q rows) comes from: shared memory at sq (its rows
 * in every panel), or registers (QREG: wgmma's register A fragments, one per 16 dims) */
struct q_smem {
	uint32_t sq;
};
template <int D> struct q_regs {
	uint32_t a[D / 16][4];
};

/* QREG: the fragments of rows row..row+15 (the warp's, row = its first) of the Q tile at sq,
 * by ldmatrix: lanes 0-15 address rows row..row+15 at the k-step's first 8 dims, lanes 16-31
 * at its second 8, which gives a[kk] in the mma/wgmma A order (rows g and g+8, dims 2t and
 * 2t+8 of the step) */
template <int D>
static __device__ __forceinline__ void load_q_regs(q_regs<D> &q, uint32_t sq, int row)
{
	const int lane = threadIdx.x & 31, r = row + (lane & 15);
#pragma unroll
	for (int kk = 0; kk < D / 16; kk++)
		asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
			     : "=r"(q.a[kk][0]), "=r"(q.a[kk][1]), "=r"(q.a[kk][2]), "=r"(q.a[kk][3])
			     : "r"(sq + swz_offset<BM>(r, 2 * kk + (lane >> 4))));
}

/* S = Q K^T over D/16 k-steps into s, issued, not waited for; the first step overwrites
 * (scale-d 0).  The caller fences (wgmma_fence) and commits. */
template <int D>
static __device__ __forceinline__ void issue_s(float (&s)[BN / 2], const q_regs<D> &q, uint32_t sk)
{
	const uint64_t db = make_desc(sk, 16, 1024);
#pragma unroll
	for (int kk = 0; kk < D / 16; kk++)
		wgmma_rs<BN, 0>(s, q.a[kk], desc_at(db, (kk >> 2) * (BN * 128) + (kk & 3) * 32),
				kk > 0);
}

template <int D>
static __device__ __forceinline__ void issue_s(float (&s)[BN / 2], q_smem q, uint32_t sk)
{
	const uint32_t sq = q.sq;
	const uint64_t da = make_desc(sq, 16, 1024), db = make_desc(sk, 16, 1024);
#pragma unroll
	for (int kk = 0; kk < D / 16; kk++) {
		const uint32_t off = (kk & 3) * 32;
		wgmma_ss<BN>(s, desc_at(da, (kk >> 2) * (BM * 128) + off),
			     desc_at(db, (kk >> 2) * (BN * 128) + off), kk > 0);
	}
}

/* O += P V over BN/16 k-steps of 16 keys, issued, not waited for; P's fragment for keys
 * 16kk..16kk+15 is the accumulators of the 8-column groups 2kk and 2kk+1 */
template <int D>
static __device__ __forceinline__ void issue_pv(float (&o)[D / 2], const uint32_t (&pa)[BN / 16][4],
						uint32_t sv)
{
	const uint64_t dv = make_desc(sv, BN * 128, 1024);
#pragma unroll
	for (int kk = 0; kk < BN / 16; kk++)
		wgmma_rs<D, 1>(o, pa[kk], desc_at(dv, kk * 16 * 128), 1);
}

/* the online softmax of one tile's scores s (rows row0 + g and row0 + g + 8 of this
 * thread): masks them when MASK (the tile crosses the diagonal or kv_seqlen), turns them
 * into P in place, updates m and l, and gives the factor alpha[h] by which O must be
 * rescaled; O itself is left alone (with OVL it is still being accumulated) */
template <bool CAUSAL, bool MASK>
static __device__ __forceinline__ void softmax_tile(float (&s)[BN / 2], float (&m)[2], float (&l)[2],
						    float (&alpha)[2], int row0, int key0,
						    int kv_seqlen, float c)
{
	const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
	for (int h = 0; h < 2; h++) {
		const int row = row0 + g + h * 8;
		float mx = -INFINITY;
#pragma unroll
		for (int j = 0; j < BN / 8; j++)
#pragma unroll
			for (int e = 0; e < 2; e++) {
				if (MASK) {
					const int col = key0 + j * 8 + 2 * t + e;
					if (col >= kv_seqlen || (CAUSAL && col > row))
						s[4 * j + 2 * h + e] = -INFINITY;
				}
				mx = fmaxf(mx, s[4 * j + 2 * h + e]);
			}
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
		/* c > 0, so the max of the scaled scores is c times the max */
		const float m_new = fmaxf(m[h], mx * c);
		const float m_use = m_new == -INFINITY ? 0.0f : m_new;
		alpha[h] = fast_exp2(m[h] - m_use);
		float sum = 0.0f;
#pragma unroll
		for (int j = 0; j < BN / 8; j++)
#pragma unroll
			for (int e = 0; e < 2; e++) {
				const float p = fast_exp2(fmaf(s[4 * j + 2 * h + e], c, -m_use));
				s[4 * j + 2 * h + e] = p;
				sum += p;
			}
		m[h] = m_new;
		l[h] = l[h] * alpha[h] + sum;
	}
}

template <int D>
static __device__ __forceinline__ void rescale_o(float (&o)[D / 2], const float (&alpha)[2])
{
#pragma unroll
	for (int h = 0; h < 2; h++)
#pragma unroll
		for (int jd = 0; jd < D / 8; jd++) {
			o[4 * jd + 2 * h] *= alpha[h];
			o[4 * jd + 2 * h + 1] *= alpha[h];
		}
}

/* P (fp32, in s) as wgmma's fp16 register A fragments, one per 16 keys */
static __device__ __forceinline__ void pack_p(uint32_t (&pa)[BN / 16][4], const float (&s)[BN / 2])
{
#pragma unroll
	for (int kk = 0; kk < BN / 16; kk++) {
		pa[kk][0] = pack_half2(s[8 * kk + 0], s[8 * kk + 1]);
		pa[kk][1] = pack_half2(s[8 * kk + 2], s[8 * kk + 3]);
		pa[kk][2] = pack_half2(s[8 * kk + 4], s[8 * kk + 5]);
		pa[kk][3] = pack_half2(s[8 * kk + 6], s[8 * kk + 7]);
	}
}

struct no_hook {
	__device__ void operator()() const {}
};

/* KS_TRACE=CTA: a diagnostic of bench/probes/attention_trace.sh, never a knob.  The first
 * thread of each consumer warpgroup of CTA number KS_TRACE (persistent kernel) stamps
 * clock64() at the phases of its first KS_TRACE_N tiles, ks_trace[wg][tile][phase]: 0 the
 * tile's top, 1 its K and V have landed (mbarrier waits), 2 S about to be issued (after the
 * proxy fence), 3 S completed, 4 softmax, rescale and pack done, 5 P V completed.  The stamps
 * are global stores of one thread a warpgroup, which the next proxy fence waits for: the
 * traced kernel is slower than the plain one (the script prints both). */
#ifdef KS_TRACE
#define KS_TRACE_N 64
#define KS_TRACE_PHASES 6
__device__ long long ks_trace[2][KS_TRACE_N][KS_TRACE_PHASES];
__shared__ int ks_trace_tile[2];
#define TRACE(k)                                                                           \
	do {                                                                               \
		if (blockIdx.x == KS_TRACE && (threadIdx.x & 127) == 0) {                  \
			const int w_ = (threadIdx.x >> 7) - 1, t_ = ks_trace_tile[w_];      \
			if ((unsigned)t_ < KS_TRACE_N)                                     \
				ks_trace[w_][t_][k] = clock64();                           \
			if ((k) == KS_TRACE_PHASES - 1)                                    \
				ks_trace_tile[w_] = t_ + 1;                                \
		}                                                                          \
	} while (0)
#define TRACE_START(first)                                                                 \
	do {                                                                               \
		if ((first) && blockIdx.x == KS_TRACE && (threadIdx.x & 127) == 0)         \
			ks_trace_tile[(threadIdx.x >> 7) - 1] = 0;                         \
		TRACE(0);                                                                  \
	} while (0)
#else
#define TRACE(k) do {} while (0)
#define TRACE_START(first) do {} while (0)
#endif

/* one key tile of one warpgroup in order (OVL 0): S = Q K^T, wait, online softmax, O += P V,
 * wait; q is the warpgroup's Q rows (q_smem, or q_regs with QREG).  after_s runs once S has
 * completed (PERSIST: the next item's Q copy). */
template <int D, bool CAUSAL, bool MASK, typename QA, typename Hook = no_hook>
static __device__ __forceinline__ void tile_step(float (&o)[D / 2], float (&m)[2], float (&l)[2],
						 const QA &q, uint32_t sk, uint32_t sv, int row0,
						 int key0, int kv_seqlen, float c,
						 const Hook &after_s = Hook())
{
	float s[BN / 2], alpha[2];
	TRACE(2);
	wgmma_fence();
	issue_s<D>(s, q, sk);
	wgmma_commit();
	wgmma_wait<0>();
	reg_fence(s);
	TRACE(3);
	after_s();
	softmax_tile<CAUSAL, MASK>(s, m, l, alpha, row0, key0, kv_seqlen, c);
	rescale_o<D>(o, alpha);
	uint32_t pa[BN / 16][4];
	pack_p(pa, s);
	reg_fence(o);
	TRACE(4);
	wgmma_fence();
	issue_pv<D>(o, pa, sv);
	wgmma_commit();
	wgmma_wait<0>();
	reg_fence(o);
	TRACE(5);
}

/* PP: the two consumer warpgroups take turns on the tensor cores (FA3's ping-pong).  A
 * warpgroup issues its S and P V wgmma only holding the turn (named barrier 1 + its index,
 * 256 threads: its own 128 waiting and the other's 128 arriving) and passes the turn right
 * after issuing, so its softmax runs while the other's wgmma do.  turn or pass < 0: no
 * ping-pong (the non-WS kernel, or a pass the other warpgroup will not wait for). */
static __device__ __forceinline__ void pp_turn(int turn)
{
	if (turn >= 0)
		asm volatile("bar.sync %0, 256;\n" ::"r"(1 + turn) : "memory");
}

static __device__ __forceinline__ void pp_pass(int pass)
{
	if (pass >= 0)
		asm volatile("bar.arrive %0, 256;\n" ::"r"(1 + (pass ^ 1)) : "memory");
}

/* one key tile n of one warpgroup, overlapped (OVL 1): S_n = Q K_n^T and then, with PV (n is
 * not the first tile), O += P_{n-1} V_{n-1} are issued as two commit groups; waiting for all
 * but the newest group waits for S_n alone, so the softmax of n runs while the tensor cores
 * do P_{n-1} V_{n-1}.  Only after the second wait may O be rescaled by alpha_n (PV writes O)
 * and pa take P_n (PV reads pa until it completes).  On return pa holds P_n, for the next
 * call or overlap_last_pv; sv is V_{n-1}'s stage.  PV is a template argument, not a runtime
 * flag: with the PV wgmma under a branch, ptxas inserts its own warpgroup.arrive and, in the
 * causal kernel, serializes every wgmma (its C7520 "Potential Performance Loss"). */
template <int D, bool CAUSAL, bool MASK, bool PV>
static __device__ __forceinline__ void overlap_step(float (&o)[D / 2], float (&m)[2], float (&l)[2],
						    uint32_t (&pa)[BN / 16][4], q_smem q,
						    uint32_t sk, uint32_t sv, int row0, int key0,
						    int kv_seqlen, float c, int turn = -1, int pass = -1)
{
	float s[BN / 2], alpha[2];
	reg_fence(o);
	pp_turn(turn);
	wgmma_fence();
	issue_s<D>(s, q, sk);
	wgmma_commit();
	if constexpr (PV) {
		issue_pv<D>(o, pa, sv);
		wgmma_commit();
		pp_pass(pass);
		wgmma_wait<1>();
	} else {
		pp_pass(pass);
		wgmma_wait<0>();
	}
	reg_fence(s);
	softmax_tile<CAUSAL, MASK>(s, m, l, alpha, row0, key0, kv_seqlen, c);
	wgmma_wait<0>();
	/* O and pa may be touched again only now; the fences keep the compiler from moving
	 * the rescale or P_n's pack above the wait (and pa's registers live until here) */
	reg_fence(o);
	reg_fence(pa);
	rescale_o<D>(o, alpha);
	pack_p(pa, s);
}

/* the last tile's O += P V of an overlapped warpgroup, waited for */
template <int D>
static __device__ __forceinline__ void overlap_last_pv(float (&o)[D / 2],
						       const uint32_t (&pa)[BN / 16][4], uint32_t sv,
						       int turn = -1, int pass = -1)
{
	reg_fence(o);
	pp_turn(turn);
	wgmma_fence();
	issue_pv<D>(o, pa, sv);
	wgmma_commit();
	pp_pass(pass);
	wgmma_wait<0>();
	reg_fence(o);
}

/* o = O / l for this thread's rows row0 + g and row0 + g + 8 (those below seqlen) of the head
 * at o; l is the thread's partial row sum, completed across the quad here */
template <int D>
static __device__ __forceinline__ void store_o(ATTN_T *o, const float (&acc)[D / 2],
					       const float (&l)[2], int row0, int seqlen)
{
	const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
	for (int h = 0; h < 2; h++) {
		float sum = l[h];
		sum += __shfl_xor_sync(0xffffffffu, sum, 1);
		sum += __shfl_xor_sync(0xffffffffu, sum, 2);
		const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
		const int row = row0 + g + h * 8;
		if (row >= seqlen)
			continue;
		ATTN_T *orow = o + (int64_t)row * D + 2 * t;
#pragma unroll
		for (int jd = 0; jd < D / 8; jd++)
			*reinterpret_cast<ATTN_T2 *>(orow + jd * 8) =
				ATTN_STORE2(acc[4 * jd + 2 * h] * inv, acc[4 * jd + 2 * h + 1] * inv);
	}
}

/* the key tiles of the query block at q0: causal, its queries (those below seqlen) see no
 * key past the last of them */
template <bool CAUSAL>
static __device__ __forceinline__ int block_tiles(int q0, int seqlen, int kv_seqlen)
{
	const int kv_end = CAUSAL ? min(kv_seqlen, min(seqlen, q0 + BM)) : kv_seqlen;
	return (kv_end + BN - 1) / BN;
}

/* a warpgroup's rows before their first tile: O = 0, running max -inf, running sum 0 */
template <int D>
static __device__ __forceinline__ void start_rows(float (&acc)[D / 2], float (&m)[2], float (&l)[2])
{
#pragma unroll
	for (int i = 0; i < D / 2; i++)
		acc[i] = 0.0f;
	m[0] = m[1] = -INFINITY;
	l[0] = l[1] = 0.0f;
}

/* a warpgroup's rows row_wg..row_wg+63: the tiles it needs (causal rows see no key past
 * row_wg + 63) and n_full, those before which need no mask (inside the keys and left of the
 * warpgroup's first query) */
template <bool CAUSAL>
static __device__ __forceinline__ void wg_tiles(int n_tiles, int row_wg, int kv_seqlen,
						int &n_mine, int &n_full)
{
	n_mine = CAUSAL ? min(n_tiles, (row_wg + 64 + BN - 1) / BN) : n_tiles;
	n_full = kv_seqlen / BN;
	if (CAUSAL)
		n_full = min(n_full, (row_wg + 1) / BN);
}

/* the work of one CTA on the tensor cores: query block blockIdx.x (reversed when causal) of
 * query head blockIdx.y = b * heads + h, which reads kv head h / (heads / kv_heads) of
 * batch b */
template <int D, bool CAUSAL>
static __device__ __forceinline__ void wgmma_cta_90a(const ATTN_T *__restrict__ q,
						     const ATTN_T *__restrict__ k,
						     const ATTN_T *__restrict__ v,
						     ATTN_T *__restrict__ o, int heads, int kv_heads,
						     int seqlen, int kv_seqlen, float c)
{
	extern __shared__ __align__(1024) unsigned char smem_raw[];
	constexpr uint32_t QB = BM * D * 2, KVB = BN * D * 2;
	const uint32_t base_s = (smem_addr(smem_raw) + 1023) & ~1023u;
	const uint32_t sq = base_s, sk0 = sq + QB, sv0 = sk0 + STAGES * KVB;
	/* causal: the last query blocks have the most key tiles (the count grows with the
	 * block index whatever seqlen and kv_seqlen are); launch them first */
	const int mb = CAUSAL ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
	/* b * kv_heads + h / group = (b * heads + h) / group, as heads = group * kv_heads */
	const int bh = blockIdx.y, kvh = bh / (heads / kv_heads);
	const int64_t base = (int64_t)bh * seqlen * D, kv_base = (int64_t)kvh * kv_seqlen * D;
	const ATTN_T *qg = q + base, *kg = k + kv_base, *vg = v + kv_base;
	const int q0 = mb * BM, wg = threadIdx.x >> 7, warp = (threadIdx.x >> 5) & 3;

	const int n_tiles = block_tiles<CAUSAL>(q0, seqlen, kv_seqlen);
	const int row_wg = q0 + wg * 64;
	int n_mine, n_full;
	wg_tiles<CAUSAL>(n_tiles, row_wg, kv_seqlen, n_mine, n_full);

	load_tile<BM, D>(sq, qg, q0, seqlen);
	cp_async_commit();
	/* cp.async group j holds K_j and V_j, or with OVL K_j and V_{j-1}: there tile n's step
	 * reads K_n and V_{n-1}, so V trails K by one tile and group n is again the one that
	 * iteration n waits for */
#pragma unroll
	for (int st = 0; st < STAGES - 1; st++) {
		if (st < n_tiles)
			load_tile<BN, D>(sk0 + st * KVB, kg, st * BN, kv_seqlen);
		const int vt = OVL ? st - 1 : st;
		if (vt >= 0 && vt < n_tiles)
			load_tile<BN, D>(sv0 + vt * KVB, vg, vt * BN, kv_seqlen);
		cp_async_commit(); /* empty groups keep the count uniform */
	}

	float acc[D / 2], m[2], l[2];
	start_rows<D>(acc, m, l);

	const q_smem qw{sq + wg * 64 * 128}; /* this warpgroup's 64 rows in every Q panel */
	const int row0 = row_wg + warp * 16;
#if OVL
	/* P of the warpgroup's previous tile, waiting for its P V in the next step */
	uint32_t pa[BN / 16][4];
#pragma unroll
	for (int kk = 0; kk < BN / 16; kk++)
		pa[kk][0] = pa[kk][1] = pa[kk][2] = pa[kk][3] = 0;
	/* one iteration more than tiles: the last P V needs V_{n_tiles-1}, in group n_tiles.  A
	 * stage is refilled (after the barrier of iteration n: K_{n+STAGES-1} over K_{n-1},
	 * V_{n+STAGES-2} over V_{n-2}) only when every warpgroup's wgmma reading it completed:
	 * S_{n-1} and P_{n-2} V_{n-2} are waited for within iteration n-1 */
	for (int n = 0; n <= n_tiles; n++) {
		cp_async_wait<STAGES - 2>();
		fence_proxy_async();
		__syncthreads(); /* K_n and V_{n-1} are in; the stages refilled next are free */
		const int pre = n + STAGES - 1;
		if (pre < n_tiles)
			load_tile<BN, D>(sk0 + (pre % STAGES) * KVB, kg, pre * BN, kv_seqlen);
		if (pre - 1 < n_tiles)
			load_tile<BN, D>(sv0 + ((pre - 1) % STAGES) * KVB, vg, (pre - 1) * BN,
					 kv_seqlen);
		cp_async_commit();
		const uint32_t sv_prev = sv0 + ((n + STAGES - 1) % STAGES) * KVB; /* V_{n-1} */
		if (n < n_mine) {
			const uint32_t sk = sk0 + (n % STAGES) * KVB;
			if (n == 0 && n_full == 0)
				overlap_step<D, CAUSAL, true, false>(acc, m, l, pa, qw, sk, sv_prev,
								     row0, 0, kv_seqlen, c);
			else if (n == 0)
				overlap_step<D, CAUSAL, false, false>(acc, m, l, pa, qw, sk, sv_prev,
								      row0, 0, kv_seqlen, c);
			else if (n < n_full)
				overlap_step<D, CAUSAL, false, true>(acc, m, l, pa, qw, sk, sv_prev,
								     row0, n * BN, kv_seqlen, c);
			else
				overlap_step<D, CAUSAL, true, true>(acc, m, l, pa, qw, sk, sv_prev,
								    row0, n * BN, kv_seqlen, c);
		} else if (n == n_mine) {
			/* the warpgroup's last tile (n_mine >= 1): its P V, before the stage of
			 * V_{n-1} is refilled in iteration n + 1 */
			overlap_last_pv<D>(acc, pa, sv_prev);
		}
		/* past n_mine: past this warpgroup's diagonal, every score masked */
	}
#else
	for (int n = 0; n < n_tiles; n++) {
		cp_async_wait<STAGES - 2>();
		fence_proxy_async();
		__syncthreads(); /* tile n is in; everyone is done with the stage refilled next */
		const int pre = n + STAGES - 1;
		if (pre < n_tiles) {
			load_tile<BN, D>(sk0 + (pre % STAGES) * KVB, kg, pre * BN, kv_seqlen);
			load_tile<BN, D>(sv0 + (pre % STAGES) * KVB, vg, pre * BN, kv_seqlen);
		}
		cp_async_commit();
		if (n >= n_mine)
			continue; /* past this warpgroup's diagonal: every score masked */
		const uint32_t sk = sk0 + (n % STAGES) * KVB, sv = sv0 + (n % STAGES) * KVB;
		if (n < n_full)
			tile_step<D, CAUSAL, false>(acc, m, l, qw, sk, sv, row0, n * BN,
						    kv_seqlen, c);
		else
			tile_step<D, CAUSAL, true>(acc, m, l, qw, sk, sv, row0, n * BN,
						   kv_seqlen, c);
	}
#endif
	cp_async_wait<0>();
	store_o<D>(o + base, acc, l, row0, seqlen);
}

/* ---- WS = 1: warp specialisation ----
 * Warpgroup 0 is the producer: its 128 threads only copy (cp.async) Q once and the K and V
 * tiles into a STAGES-deep ring; each copy signals a "full" mbarrier of its stage when it
 * lands (cp.async.mbarrier.arrive.noinc: one arrival per producer thread, counted in the
 * barrier's 128).  Warpgroups 1..WG are the consumers: they wait on "full", compute as with
 * WS = 0, and when their wgmma reading a stage has completed one thread per warpgroup
 * arrives on its "empty" mbarrier (count WG), which the producer waits on before refilling
 * the stage.  K and V have barriers of their own, so S = Q K^T starts before V lands, and
 * with OVL V_{n-1} and K_n are released as the step that read them completes.  There is no
 * CTA-wide barrier in the loop: the consumer warpgroups drift apart, so one's softmax tends
 * to run under the other's wgmma.  setmaxnreg gives the producer's registers to them. */
struct ws_bars {
	uint64_t q, full_k[STAGES], full_v[STAGES], empty_k[STAGES], empty_v[STAGES];
};

static __device__ __forceinline__ void mbar_init(uint64_t *b, unsigned count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(b)), "r"(count));
}

static __device__ __forceinline__ void mbar_arrive(uint64_t *b)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(b)) : "memory");
}

/* the arrival fires when every cp.async this thread issued so far has landed */
static __device__ __forceinline__ void mbar_arrive_cp_async(uint64_t *b)
{
	asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_addr(b))
		     : "memory");
}

/* waits until the phase of parity `parity` has completed (phase k has parity k & 1; a
 * waiter is never more than one phase behind, the producer/consumer protocol sees to it) */
static __device__ __forceinline__ void mbar_wait(uint64_t *b, unsigned parity)
{
	asm volatile("{\n.reg .pred done;\n"
		     "WAIT_%=:\n"
		     "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
		     "@!done bra WAIT_%=;\n}\n" ::"r"(smem_addr(b)),
		     "r"(parity)
		     : "memory");
}

/* registers per thread after the hand-over: the producer keeps WS_PRODUCER_REGS (ptxas
 * allocates each side's code within its count; the producer's copy loops, unrolled only twice,
 * fit in 24 without spilling, fully unrolled they needed ~72), the consumers share the rest of
 * what the CTA was given at launch, in steps of 8 (240 each for WG 2, as FA3).  The rest is
 * the CTA's launch allocation (WS_LAUNCH_REGS a thread: 65536 / NTHREADS, as the launch bounds
 * make ptxas budget it), not the whole 64K-register file: setmaxnreg.inc takes registers from
 * the CTA's pool and spins until they are there, so asking for more than the producer gave
 * back hangs the CTA whenever the SM's spare registers are taken (through MLX's CUDA build on
 * an H100, every launch: producer 32 and consumers 240 ask 1024 registers more than the 168 x
 * 384 the CTA holds).  WS_PRODUCER_REGS_TRY overrides the producer's count (a multiple of 8,
 * 24 to 256) to try others. */
#ifdef WS_PRODUCER_REGS_TRY
#define WS_PRODUCER_REGS WS_PRODUCER_REGS_TRY
#else
#define WS_PRODUCER_REGS 24
#endif
#define WS_LAUNCH_REGS_RAW (65536 / (128 * (WG + 1)) / 8 * 8)
#define WS_LAUNCH_REGS (WS_LAUNCH_REGS_RAW > 248 ? 248 : WS_LAUNCH_REGS_RAW)
#define WS_CONSUMER_REGS_RAW ((WS_LAUNCH_REGS * (WG + 1) - WS_PRODUCER_REGS) / WG / 8 * 8)
#define WS_CONSUMER_REGS (WS_CONSUMER_REGS_RAW > 256 ? 256 : WS_CONSUMER_REGS_RAW)
static_assert(WS_PRODUCER_REGS + WG * WS_CONSUMER_REGS <= (WG + 1) * WS_LAUNCH_REGS,
	      "the registers handed over fit in the CTA's launch allocation");

/* the ring's mbarriers: full_* count the producer's fillers (its 128 copying threads; with
 * TMA its one issuing thread, and the bytes), empty_* the WG consumer warpgroups' releases */
static __device__ __forceinline__ void init_ring(ws_bars &bars, unsigned fillers = 128)
{
	for (int st = 0; st < STAGES; st++) {
		mbar_init(&bars.full_k[st], fillers);
		mbar_init(&bars.full_v[st], fillers);
		mbar_init(&bars.empty_k[st], WG);
		mbar_init(&bars.empty_v[st], WG);
	}
}

/* the producer's copy of key tile n (K, then V) into ring slot g % STAGES, g counting the
 * tiles the CTA has walked, each half once the consumers released the slot's previous tile
 * (g - STAGES) */
template <int D>
static __device__ __forceinline__ void produce_tile(ws_bars &bars, int g, int n, uint32_t sk0,
						    uint32_t sv0, const ATTN_T *kg,
						    const ATTN_T *vg, int kv_seqlen, int tid)
{
	constexpr uint32_t KVB = BN * D * 2;
	const int st = g % STAGES;
	const unsigned parity = ((g / STAGES) - 1) & 1;
	if (g >= STAGES)
		mbar_wait(&bars.empty_k[st], parity);
	load_tile<BN, D, 128, 2>(sk0 + st * KVB, kg, n * BN, kv_seqlen, tid);
	mbar_arrive_cp_async(&bars.full_k[st]);
	if (g >= STAGES)
		mbar_wait(&bars.empty_v[st], parity);
	load_tile<BN, D, 128, 2>(sv0 + st * KVB, vg, n * BN, kv_seqlen, tid);
	mbar_arrive_cp_async(&bars.full_v[st]);
}

#if TMA_ON
static __device__ __forceinline__ void mbar_expect_tx(uint64_t *b, uint32_t bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(b)),
		     "r"(bytes)
		     : "memory");
}

/* one box of map at (column c0, row c1, head c2) into shared memory at dst, its bytes
 * counted on bar */
static __device__ __forceinline__ void tma_load_3d(uint32_t dst, const ks_tmap *map, int c0,
						   int c1, int c2, uint64_t *bar)
{
	asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
		     " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
		     "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2),
		     "r"(smem_addr(bar))
		     : "memory");
}

#if TMA_DEVMAP
/* TMA_DEVMAP: the maps of k and v, one pair per CTA of the persistent grid (at most one CTA an
 * SM), in the module's own memory: TMA reads a map from global, constant or parameter memory,
 * and the kernel can write only the first.  Two launches of this module running at once on
 * two streams would share the slots. */
#define TMA_SLOTS 256 /* more CTAs than this (more SMs) share slots, with equal maps */
__device__ __align__(128) ks_tmap ks_kv_maps[2 * TMA_SLOTS];

/* One warp encodes this CTA's two maps (the fields cuTensorMapEncodeTiled takes, with no L2
 * promotion: the field has no replace form) into zeroed shared memory, then copies them to
 * dst[0..1] with the release that orders the copy before the async proxy's reads; every
 * lane acquires them. */
template <int D>
static __device__ __forceinline__ void encode_kv_maps_dev(ks_tmap *dst, const ATTN_T *k,
							  const ATTN_T *v, int kv_rows,
							  int kv_seqlen, int lane)
{
	__shared__ __align__(128) ks_tmap staged[2]; /* each map on its own size (the host needs 64) */
	unsigned *words = reinterpret_cast<unsigned *>(staged);
	words[lane] = 0;
	words[lane + 32] = 0;
	__syncwarp();
	/* the fields as the PTX ISA counts them: rank less one (2: three dimensions, innermost
	 * first: head_dim, keys, kv heads), sizes in elements, the two outer strides in bytes,
	 * elemtype and swizzle by their codes (128-byte swizzle: 3), fill 0 (zeros past the
	 * end) */
	if (lane == 0) {
		for (int i = 0; i < 2; i++) {
			const uint32_t m = smem_addr(&staged[i]);
			const unsigned long long a = reinterpret_cast<unsigned long long>(i ? v : k);
			const unsigned long long row = (unsigned long long)D * 2,
						 head = (unsigned long long)kv_seqlen * D * 2;
			asm volatile(
				"tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;\n"
				"tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], 2;\n"
				"tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 0, %9;\n"
				"tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 1, %2;\n"
				"tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 2, %10;\n"
				"tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 0, %3;\n"
				"tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, %4;\n"
				"tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 2, %5;\n"
				"tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %6;\n"
				"tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 1, %7;\n"
				"tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 0, %10;\n"
				"tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 1, %10;\n"
				"tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 2, %10;\n"
				"tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%0], %8;\n"
				"tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%0], 0;\n"
				"tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], 3;\n"
				"tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%0], 0;\n" ::"r"(m),
				"l"(a), "r"(BN), "r"(D), "r"(kv_seqlen), "r"(kv_rows), "l"(row), "l"(head),
				"n"(ATTN_BF16 ? 10 : 6) /* the elemtype codes: f16 6, bf16 10 */, "r"(64),
				"r"(1)
				: "memory");
		}
	}
	__syncwarp();
	for (int i = 0; i < 2; i++) {
		asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu"
			     ".sync.aligned [%0], [%1], 128;\n" ::"l"(dst + i),
			     "r"(smem_addr(&staged[i]))
			     : "memory");
		asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;\n" ::"l"(dst + i)
			     : "memory");
	}
}
#endif

/* one half (K or V) of key tile n of kv head kvh by TMA into the ring slot at dst, once the
 * slot is free: D/64 boxes (panels), the bytes counted on full */
template <int D>
static __device__ __forceinline__ void tma_fill(uint64_t *empty, uint64_t *full, bool reuse,
						unsigned parity, uint32_t dst, const ks_tmap *map,
						int n, int kvh)
{
	if (reuse)
		mbar_wait(empty, parity);
	mbar_expect_tx(full, BN * D * 2);
#pragma unroll
	for (int p = 0; p < D / 64; p++)
		tma_load_3d(dst + p * BN * 128, map, p * 64, n * BN, kvh, full);
}

/* produce_tile by TMA, by one thread: K then V of key tile n */
template <int D>
static __device__ __forceinline__ void produce_tile_tma(ws_bars &bars, int g, int n, uint32_t sk0,
							uint32_t sv0, const ks_tmap *mk,
							const ks_tmap *mv, int kvh)
{
	constexpr uint32_t KVB = BN * D * 2;
	const int st = g % STAGES;
	const unsigned parity = ((g / STAGES) - 1) & 1;
	tma_fill<D>(&bars.empty_k[st], &bars.full_k[st], g >= STAGES, parity, sk0 + st * KVB, mk, n,
		    kvh);
	tma_fill<D>(&bars.empty_v[st], &bars.full_v[st], g >= STAGES, parity, sv0 + st * KVB, mv, n,
		    kvh);
}
#endif

template <int D, bool CAUSAL>
static __device__ __forceinline__ void wgmma_ws_cta_90a(const ATTN_T *__restrict__ q,
							const ATTN_T *__restrict__ k,
							const ATTN_T *__restrict__ v,
							ATTN_T *__restrict__ o, int heads, int kv_heads,
							int seqlen, int kv_seqlen, float c)
{
	extern __shared__ __align__(1024) unsigned char smem_raw[];
	__shared__ ws_bars bars;
	constexpr uint32_t QB = BM * D * 2, KVB = BN * D * 2;
	const uint32_t base_s = (smem_addr(smem_raw) + 1023) & ~1023u;
	const uint32_t sq = base_s, sk0 = sq + QB, sv0 = sk0 + STAGES * KVB;
	const int mb = CAUSAL ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
	const int bh = blockIdx.y, kvh = bh / (heads / kv_heads);
	const int64_t base = (int64_t)bh * seqlen * D, kv_base = (int64_t)kvh * kv_seqlen * D;
	const int q0 = mb * BM, wgi = threadIdx.x >> 7, tid = threadIdx.x & 127;
	const int n_tiles = block_tiles<CAUSAL>(q0, seqlen, kv_seqlen);

	if (threadIdx.x == 0) {
		mbar_init(&bars.q, 128);
		init_ring(bars);
	}
	__syncthreads(); /* the only CTA-wide barrier: the mbarriers exist */

	if (wgi == 0) { /* the producer */
		asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(WS_PRODUCER_REGS));
		const ATTN_T *kg = k + kv_base, *vg = v + kv_base;
		load_tile<BM, D, 128, 2>(sq, q + base, q0, seqlen, tid);
		mbar_arrive_cp_async(&bars.q);
		for (int n = 0; n < n_tiles; n++)
			produce_tile<D>(bars, n, n, sk0, sv0, kg, vg, kv_seqlen, tid);
		/* a thread may exit with its copies in flight: they still land and arrive */
		return;
	}

	asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(WS_CONSUMER_REGS));
	const int wg = wgi - 1, warp = (threadIdx.x >> 5) & 3;
	const bool signals = tid == 0; /* the thread that releases stages for its warpgroup */
	const int row_wg = q0 + wg * 64;
	int n_mine, n_full;
	wg_tiles<CAUSAL>(n_tiles, row_wg, kv_seqlen, n_mine, n_full);

	float acc[D / 2], m[2], l[2];
	start_rows<D>(acc, m, l);
	const q_smem qw{sq + wg * 64 * 128};
	const int row0 = row_wg + warp * 16;
	/* wgmma reads shared memory through the async proxy; the cp.async data came through
	 * the generic one: each waiter fences after its wait */
	auto wait_full = [&](uint64_t *full, int n) {
		mbar_wait(&full[n % STAGES], (n / STAGES) & 1);
		fence_proxy_async();
	};
	auto release = [&](uint64_t *empty, int n) {
		if (signals)
			mbar_arrive(&empty[n % STAGES]);
	};
	mbar_wait(&bars.q, 0);
	fence_proxy_async();
#if OVL
	uint32_t pa[BN / 16][4];
#pragma unroll
	for (int kk = 0; kk < BN / 16; kk++)
		pa[kk][0] = pa[kk][1] = pa[kk][2] = pa[kk][3] = 0;
	/* iteration n reads K_n and V_{n-1} (see the WS = 0 loop) and releases both once the
	 * step's wgmma have completed; past n_mine the tiles are only waited for and released,
	 * so every warpgroup releases every stage once per fill */
	/* PP: every iteration takes and passes the turn, with wgmma or without, so the two
	 * warpgroups' counts match; the second goes first's way once before the loop, and does
	 * not pass after its last iteration, which the first no longer waits for */
	const int turn = PP ? wg : -1;
	if (PP && wg == 1)
		pp_pass(1);
	for (int n = 0; n <= n_tiles; n++) {
		const bool kn = n < n_tiles, vp = n >= 1;
		const int pass = PP && !(wg == 1 && n == n_tiles) ? wg : -1;
		if (kn)
			wait_full(bars.full_k, n);
		if (vp)
			wait_full(bars.full_v, n - 1);
		const uint32_t sv_prev = sv0 + ((n + STAGES - 1) % STAGES) * KVB;
		if (n < n_mine) {
			const uint32_t sk = sk0 + (n % STAGES) * KVB;
			if (n == 0 && n_full == 0)
				overlap_step<D, CAUSAL, true, false>(acc, m, l, pa, qw, sk, sv_prev,
								     row0, 0, kv_seqlen, c, turn, pass);
			else if (n == 0)
				overlap_step<D, CAUSAL, false, false>(acc, m, l, pa, qw, sk, sv_prev,
								      row0, 0, kv_seqlen, c, turn, pass);
			else if (n < n_full)
				overlap_step<D, CAUSAL, false, true>(acc, m, l, pa, qw, sk, sv_prev,
								     row0, n * BN, kv_seqlen, c, turn, pass);
			else
				overlap_step<D, CAUSAL, true, true>(acc, m, l, pa, qw, sk, sv_prev,
								    row0, n * BN, kv_seqlen, c, turn, pass);
		} else if (n == n_mine) {
			overlap_last_pv<D>(acc, pa, sv_prev, turn, pass);
		} else {
			pp_turn(turn);
			pp_pass(pass);
		}
		if (kn)
			release(bars.empty_k, n);
		if (vp)
			release(bars.empty_v, n - 1);
	}
#else
	for (int n = 0; n < n_tiles; n++) {
		wait_full(bars.full_k, n);
		wait_full(bars.full_v, n);
		if (n < n_mine) {
			const uint32_t sk = sk0 + (n % STAGES) * KVB, sv = sv0 + (n % STAGES) * KVB;
			if (n < n_full)
				tile_step<D, CAUSAL, false>(acc, m, l, qw, sk, sv, row0, n * BN,
							    kv_seqlen, c);
			else
				tile_step<D, CAUSAL, true>(acc, m, l, qw, sk, sv, row0, n * BN,
							   kv_seqlen, c);
		}
		release(bars.empty_k, n);
		release(bars.empty_v, n);
	}
#endif
	store_o<D>(o + base, acc, l, row0, seqlen);
}

/* ---- PERSIST = 1 (with WS, OVL 0): a persistent grid ----
 * gridDim.x CTAs (one an SM: the launcher's grid) walk the work items item = blockIdx.x,
 * blockIdx.x + gridDim.x, ... of nqb query blocks times nbh heads (item / nqb the head,
 * item % nqb the query block, reversed when causal), in the grid order of the WS = 0 kernel.
 * The producer's ring and its phases run on across items (g counts the tiles this CTA has
 * walked), so the next item's first K and V tiles land while this item ends.  Q has one
 * buffer: each consumer warpgroup copies its own 64 rows of the next item itself, once its
 * last S = Q K^T of this item has completed, under the last softmax, P V and the store of
 * O; it waits for the copy (and makes it visible to the async proxy) before its first S of
 * the next item.  Named barrier 3 + wg holds the warpgroup's 128 threads together around
 * the copy: no warp overwrites Q rows another warp's wgmma may still read. */
[[maybe_unused]] static __device__ __forceinline__ void wg_sync(int wg)
{
	asm volatile("bar.sync %0, 128;\n" ::"r"(3 + wg) : "memory");
}

template <int D, bool CAUSAL>
static __device__ __forceinline__ void wgmma_persist_cta_90a(const ATTN_T *__restrict__ q,
							     const ATTN_T *__restrict__ k,
							     const ATTN_T *__restrict__ v,
							     ATTN_T *__restrict__ o, int heads,
							     int kv_heads, int seqlen, int kv_seqlen,
							     float c, int nbh,
							     [[maybe_unused]] const kv_maps &maps)
{
	extern __shared__ __align__(1024) unsigned char smem_raw[];
	__shared__ ws_bars bars;
	constexpr uint32_t QB = BM * D * 2, KVB = BN * D * 2;
	const uint32_t base_s = (smem_addr(smem_raw) + 1023) & ~1023u;
	const uint32_t sq = base_s, sk0 = sq + QB, sv0 = sk0 + STAGES * KVB;
	const int nqb = (seqlen + BM - 1) / BM, items = nqb * nbh;
	const int wgi = threadIdx.x >> 7, tid = threadIdx.x & 127;
	/* item -> its head bh, first query q0 and key tiles */
	auto decode = [&](int item, int &bh, int &q0, int &n_tiles) {
		bh = item / nqb;
		const int x = item % nqb;
		q0 = (CAUSAL ? nqb - 1 - x : x) * BM;
		n_tiles = block_tiles<CAUSAL>(q0, seqlen, kv_seqlen);
	};

	if (threadIdx.x == 0)
		init_ring(bars, TMA_ON ? 1 : 128);
	__syncthreads(); /* the only CTA-wide barrier: the mbarriers exist */

	if (wgi == 0) { /* the producer: K and V of every item, one ring */
		asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(WS_PRODUCER_REGS));
#if TMA_DEVMAP
		ks_tmap *const mk = ks_kv_maps + 2 * (blockIdx.x % TMA_SLOTS), *const mv = mk + 1;
		if (tid < 32)
			encode_kv_maps_dev<D>(mk, k, v, nbh / heads * kv_heads, kv_seqlen, tid);
#elif TMA_ON
		const ks_tmap *const mk = &maps.k, *const mv = &maps.v;
#endif
		if (TMA_ON && tid != 0)
			return; /* one thread issues every copy */
		int g = 0;
		for (int item = blockIdx.x; item < items; item += gridDim.x) {
			int bh, q0, n_tiles;
			decode(item, bh, q0, n_tiles);
			const int kvh = bh / (heads / kv_heads);
			for (int n = 0; n < n_tiles; n++, g++) {
#if TMA_ON
				produce_tile_tma<D>(bars, g, n, sk0, sv0, mk, mv, kvh);
#else
				const int64_t kv_base = (int64_t)kvh * kv_seqlen * D;
				produce_tile<D>(bars, g, n, sk0, sv0, k + kv_base, v + kv_base,
						kv_seqlen, tid);
#endif
			}
		}
		return;
	}

	asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(WS_CONSUMER_REGS));
	const int wg = wgi - 1, warp = (threadIdx.x >> 5) & 3;
	const bool signals = tid == 0;
	const uint32_t sqw = sq + wg * 64 * 128; /* this warpgroup's 64 rows in every Q panel */
	/* this warpgroup's 64 Q rows of an item, copied by its 128 threads */
	auto load_q = [&](int item) {
		int bh, q0, n_tiles;
		decode(item, bh, q0, n_tiles);
		load_tile<64, D, 128, 0, BM>(sqw, q + (int64_t)bh * seqlen * D, q0 + wg * 64, seqlen,
					     tid);
		cp_async_commit();
	};
	load_q(blockIdx.x); /* the launcher's grid has no more CTAs than items */
	int g = 0;
	for (int item = blockIdx.x; item < items; item += gridDim.x) {
		int bh, q0, n_tiles;
		decode(item, bh, q0, n_tiles);
		const int next = item + gridDim.x, row_wg = q0 + wg * 64;
		int n_mine, n_full;
		wg_tiles<CAUSAL>(n_tiles, row_wg, kv_seqlen, n_mine, n_full);
		float acc[D / 2], m[2], l[2];
		start_rows<D>(acc, m, l);
		const int row0 = row_wg + warp * 16;
		cp_async_wait<0>(); /* this thread's Q copies */
		fence_proxy_async();
		wg_sync(wg); /* every thread's */
#if QREG
		q_regs<D> qw; /* the item's Q rows of this warp, for every S */
		load_q_regs<D>(qw, sq, wg * 64 + warp * 16);
#else
		const q_smem qw{sqw};
#endif
		/* after the last S of the item: the next item's Q rows, once no warp reads them */
		auto next_q = [&]() {
			if (next < items) {
				wg_sync(wg);
				load_q(next);
			}
		};
		for (int n = 0; n < n_tiles; n++) {
			const int t = g + n;
			TRACE_START(g == 0 && n == 0);
			mbar_wait(&bars.full_k[t % STAGES], (t / STAGES) & 1);
			mbar_wait(&bars.full_v[t % STAGES], (t / STAGES) & 1);
			TRACE(1);
			if (!TMA_ON) /* TMA writes through the async proxy already */
				fence_proxy_async();
			if (n < n_mine) {
				const uint32_t sk = sk0 + (t % STAGES) * KVB, sv = sv0 + (t % STAGES) * KVB;
				const bool last = n == n_mine - 1;
				if (n < n_full && !last)
					tile_step<D, CAUSAL, false>(acc, m, l, qw, sk, sv, row0, n * BN,
								    kv_seqlen, c);
				else if (!last)
					tile_step<D, CAUSAL, true>(acc, m, l, qw, sk, sv, row0, n * BN,
								   kv_seqlen, c);
				else if (n < n_full)
					tile_step<D, CAUSAL, false>(acc, m, l, qw, sk, sv, row0, n * BN,
								    kv_seqlen, c, next_q);
				else
					tile_step<D, CAUSAL, true>(acc, m, l, qw, sk, sv, row0, n * BN,
								   kv_seqlen, c, next_q);
			}
			if (signals) {
				mbar_arrive(&bars.empty_k[t % STAGES]);
				mbar_arrive(&bars.empty_v[t % STAGES]);
			}
		}
		g += n_tiles;
		store_o<D>(o + (int64_t)bh * seqlen * D, acc, l, row0, seqlen);
	}
}

#endif /* sm_90a or host */

/* Any head_dim up to 512 and any architecture: one warp per query, each lane owns every
 * 32nd channel; plain online softmax in fp32.  Correct, not fast.  Query r of all
 * batch*heads*seqlen rows. */
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
	const ATTN_T *kh = k + kv_head * kv_seqlen * hd, *vh = v + kv_head * kv_seqlen * hd;
	float qv[GEN_MAXC], acc[GEN_MAXC];
#pragma unroll
	for (int ch = 0; ch < GEN_MAXC; ch++) {
		const int d = lane + 32 * ch;
		qv[ch] = d < hd ? ATTN_LOAD(q[r * hd + d]) : 0.0f;
		acc[ch] = 0.0f;
	}
	float m = -INFINITY, l = 0.0f;
	/* top-left causal: keys 0..i, all of them once i reaches kv_seqlen */
	const int nkeys = causal ? min(i + 1, kv_seqlen) : kv_seqlen;
	for (int j = 0; j < nkeys; j++) {
		const ATTN_T *kj = kh + (int64_t)j * hd, *vj = vh + (int64_t)j * hd;
		float dot = 0.0f;
#pragma unroll
		for (int ch = 0; ch < GEN_MAXC; ch++) {
			const int d = lane + 32 * ch;
			if (d < hd)
				dot += qv[ch] * ATTN_LOAD(kj[d]);
		}
#pragma unroll
		for (int off = 16; off > 0; off >>= 1)
			dot += __shfl_xor_sync(0xffffffffu, dot, off);
		const float s = dot * scale, m_new = fmaxf(m, s);
		const float alpha = __expf(m - m_new), p = __expf(s - m_new);
		l = l * alpha + p;
#pragma unroll
		for (int ch = 0; ch < GEN_MAXC; ch++) {
			const int d = lane + 32 * ch;
			acc[ch] = acc[ch] * alpha + (d < hd ? p * ATTN_LOAD(vj[d]) : 0.0f);
		}
		m = m_new;
	}
#pragma unroll
	for (int ch = 0; ch < GEN_MAXC; ch++) {
		const int d = lane + 32 * ch;
		if (d < hd)
			o[r * hd + d] = ATTN_STORE(acc[ch] / l);
	}
}

/* The rows of query block qb (BM queries) of head bh (= b * heads + h), a warp per query */
template <int D, bool CAUSAL>
static __device__ __forceinline__ void generic_block(const ATTN_T *q, const ATTN_T *k,
						     const ATTN_T *v, ATTN_T *o, int bh, int qb,
						     int heads, int kv_heads, int seqlen,
						     int kv_seqlen)
{
	static_assert(D <= 32 * GEN_MAXC, "head_dim up to 512");
	const int64_t head = (int64_t)bh * seqlen;
	const int end = min(seqlen, (qb + 1) * BM);
	for (int i = qb * BM + (threadIdx.x >> 5); i < end; i += NTHREADS / 32)
		generic_row(q, k, v, o, head + i, heads, kv_heads, seqlen, kv_seqlen, D, CAUSAL,
			    1.0f / sqrtf((float)D));
}

/* One CTA of NTHREADS threads on the grid (ceil(seqlen / BM), batch * heads) with
 * smem_bytes<D>() of dynamic shared memory, c = scale * log2(e): the body an MLX template
 * calls, where the launch is MLX's.  Device code with the sm_90a features runs head_dim 64
 * and 128 on wgmma; any other head_dim, or device code built without those features (NVRTC
 * or nvcc for sm_80, plain sm_90), runs the plain kernel on the block's queries, a warp per
 * query. */
template <int D, bool CAUSAL>
static __device__ __forceinline__ void wgmma_cta(const ATTN_T *q, const ATTN_T *k,
						 const ATTN_T *v, ATTN_T *o, int heads,
						 int kv_heads, int seqlen, int kv_seqlen, float c)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
	if constexpr ((D == 64 || D == 128) && WS)
		wgmma_ws_cta_90a<D, CAUSAL>(q, k, v, o, heads, kv_heads, seqlen, kv_seqlen, c);
	else if constexpr (D == 64 || D == 128)
		wgmma_cta_90a<D, CAUSAL>(q, k, v, o, heads, kv_heads, seqlen, kv_seqlen, c);
	else
#endif
		generic_block<D, CAUSAL>(q, k, v, o, blockIdx.y, blockIdx.x, heads, kv_heads,
					 seqlen, kv_seqlen);
}

/* The persistent body an MLX template calls where its grid is the launcher's persistent one
 * (PERSIST: min(items, CTAS) CTAs of NTHREADS threads, y = 1; nbh = batch * heads): the
 * persistent kernel, or, in device code without the sm_90a features, the plain rows of every
 * item the CTA owns, in the same order. */
template <int D, bool CAUSAL>
static __device__ __forceinline__ void wgmma_persist_cta(const ATTN_T *q, const ATTN_T *k,
							 const ATTN_T *v, ATTN_T *o, int heads,
							 int kv_heads, int seqlen, int kv_seqlen,
							 float c, int nbh)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
	if constexpr ((D == 64 || D == 128) && PERSIST_ON)
		wgmma_persist_cta_90a<D, CAUSAL>(q, k, v, o, heads, kv_heads, seqlen, kv_seqlen, c,
						 nbh, kv_maps{});
	else
#endif
	{
		const int nqb = (seqlen + BM - 1) / BM;
		for (int item = blockIdx.x; item < nqb * nbh; item += gridDim.x)
			generic_block<D, CAUSAL>(q, k, v, o, item / nqb, item % nqb, heads,
						 kv_heads, seqlen, kv_seqlen);
	}
}

#if defined(__CUDACC_RTC__) && WS
/* Through MLX (NVRTC), WS needs the launch bounds the cuda launcher's kernel declares: with
 * them ptxas budgets 65536 / NTHREADS registers per thread at launch and lets setmaxnreg
 * move them between warpgroups; without them it budgets the consumers' 240 for every thread
 * and a CTA of 128 * (WG + 1) threads does not fit.  MLX generates the `__global__` function
 * itself, after this header, so the bounds come in through the `__global__` it spells (the
 * count as a constant: the knob macros are gone by then). */
static constexpr int ks_cta_threads = NTHREADS;
#undef __global__
#define __global__ __location__(global) __launch_bounds__(::ks_cta_threads, 1)
#endif

#ifndef __CUDACC_RTC__
/* The body is empty in a device pass without the sm_90a features; the launcher then never
 * starts this kernel (wgmma_available below). */
/* PG: the persistent grid (PERSIST, and the launcher chose it), a kernel of its own: one
 * kernel with both bodies behind a run-time branch was measured slower on the persistent path
 * (166.0 against 162.1 us on the headline, 120.7 against 111.4 causal) */
template <int D, bool CAUSAL, bool PG>
__global__ void __launch_bounds__(NTHREADS, 1)
	attention_wgmma(const ATTN_T *__restrict__ q, const ATTN_T *__restrict__ k,
			const ATTN_T *__restrict__ v, ATTN_T *__restrict__ o, int heads,
			int kv_heads, int seqlen, int kv_seqlen, float c, int nbh,
			const __grid_constant__ kv_maps maps)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
	if constexpr (PG)
		wgmma_persist_cta_90a<D, CAUSAL>(q, k, v, o, heads, kv_heads, seqlen, kv_seqlen, c,
						 nbh, maps);
	else if constexpr (WS)
		wgmma_ws_cta_90a<D, CAUSAL>(q, k, v, o, heads, kv_heads, seqlen, kv_seqlen, c);
	else
		wgmma_cta_90a<D, CAUSAL>(q, k, v, o, heads, kv_heads, seqlen, kv_seqlen, c);
#endif
}

__global__ void attention_generic(const ATTN_T *__restrict__ q, const ATTN_T *__restrict__ k,
				  const ATTN_T *__restrict__ v, ATTN_T *__restrict__ o, int64_t rows,
				  int heads, int kv_heads, int seqlen, int kv_seqlen, int hd,
				  int causal, float scale)
{
	const int64_t r = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	if (r < rows)
		generic_row(q, k, v, o, r, heads, kv_heads, seqlen, kv_seqlen, hd, causal, scale);
}

/* Which device code was loaded: a build for sm_90a has the wgmma kernel, any other build
 * (sm_80, plain sm_90, PTX JIT-compiled for this GPU) has its empty body.  The compute
 * capability cannot tell sm_90 from sm_90a code, so a one-thread probe compiled the same
 * way answers once, on the first call. */
__device__ int ks_has_wgmma;

__global__ void wgmma_probe()
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
	ks_has_wgmma = 1;
#else
	ks_has_wgmma = 0;
#endif
}

static bool wgmma_available(cudaStream_t stream)
{
	static int known = -1;
	if (known < 0) {
		int has = 0;
		wgmma_probe<<<1, 1, 0, stream>>>();
		const bool ok = cudaMemcpyFromSymbolAsync(&has, ks_has_wgmma, sizeof(int), 0,
							  cudaMemcpyDeviceToHost, stream) == cudaSuccess &&
				cudaStreamSynchronize(stream) == cudaSuccess;
		known = ok && has == 1;
	}
	return known == 1;
}

#if TMA_ON && !TMA_DEVMAP
/* the tensor maps of k and v for this call (the driver's cuTensorMapEncodeTiled, reached
 * through the runtime: no -lcuda); false when the driver lacks it */
template <int D>
static bool encode_kv_maps(kv_maps &maps, const ATTN_T *k, const ATTN_T *v, int kv_rows,
			   int kv_seqlen)
{
	static PFN_cuTensorMapEncodeTiled_v12000 encode;
	if (!encode) {
		cudaDriverEntryPointQueryResult found;
#if CUDART_VERSION >= 12050
		if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode, 12000,
						     cudaEnableDefault, &found) != cudaSuccess ||
		    found != cudaDriverEntryPointSuccess)
			return false;
#else /* toolkits 12.0-12.4 have only the unversioned query (TMA is the default) */
		if (cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", (void **)&encode,
					    cudaEnableDefault, &found) != cudaSuccess ||
		    found != cudaDriverEntryPointSuccess)
			return false;
#endif
	}
	const cuuint64_t dims[3] = {(cuuint64_t)D, (cuuint64_t)kv_seqlen, (cuuint64_t)kv_rows};
	const cuuint64_t strides[2] = {(cuuint64_t)D * 2, (cuuint64_t)kv_seqlen * D * 2};
	const cuuint32_t box[3] = {64, BN, 1}, elem[3] = {1, 1, 1};
	const CUtensorMapDataType type =
		ATTN_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
	for (int i = 0; i < 2; i++)
		if (encode(reinterpret_cast<CUtensorMap *>(i ? &maps.v : &maps.k), type, 3, (void *)(i ? v : k), dims, strides, box,
			   elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
			   CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
			   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
			return false;
	return true;
}
#endif

template <int D, bool CAUSAL>
static void launch(const ATTN_T *q, const ATTN_T *k, const ATTN_T *v, ATTN_T *o, int batch,
		   int heads, int kv_heads, int seqlen, int kv_seqlen, cudaStream_t stream)
{
	constexpr int smem = smem_bytes<D>();
	static bool ready;
	if (!ready) {
		/* more than 48 KiB of dynamic shared memory needs the opt-in */
		cudaFuncSetAttribute(attention_wgmma<D, CAUSAL, false>,
				     cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
		if (PERSIST_ON)
			cudaFuncSetAttribute(attention_wgmma<D, CAUSAL, PERSIST_ON != 0>,
					     cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
		ready = true;
	}
	const float c = 1.0f / sqrtf((float)D) * 1.4426950408889634f;
	/* the grid an MLX template would launch: x query blocks, y = b * heads + h; PERSIST: one
	 * CTA an SM (the shared memory allows no second), no more than there are items, up to
	 * PERSIST_MAX items an SM: past that the static split of the items costs more than the
	 * starts it hides (measured on an H200: B4 H32 L4096 causal, 31 items an SM, 1345.5 us
	 * with the grid against 1380.7 persistent; B1 H32 L2048, 3.9 an SM, 122.8 against 111.4
	 * causal), and the hardware's own scheduling of the grid wins */
	dim3 grid((seqlen + BM - 1) / BM, batch * heads);
	int nbh = 0; /* 0: the grid above */
	if (PERSIST_ON) {
		static int sms;
		if (!sms) {
			int dev = 0;
			cudaGetDevice(&dev);
			cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
		}
		const long items = (long)grid.x * grid.y;
		if (items <= (long)PERSIST_MAX * sms) {
			grid = dim3((unsigned)(items < sms ? items : sms), 1);
			nbh = batch * heads;
		}
	}
	kv_maps maps{};
#if TMA_ON && !TMA_DEVMAP
	if (nbh && !encode_kv_maps<D>(maps, k, v, batch * kv_heads, kv_seqlen))
		return; /* no driver entry point: o stays as it is, and the check reports it */
#endif
	if (nbh)
		attention_wgmma<D, CAUSAL, PERSIST_ON != 0><<<grid, NTHREADS, smem, stream>>>(
			q, k, v, o, heads, kv_heads, seqlen, kv_seqlen, c, nbh, maps);
	else
		attention_wgmma<D, CAUSAL, false><<<grid, NTHREADS, smem, stream>>>(
			q, k, v, o, heads, kv_heads, seqlen, kv_seqlen, c, 0, maps);
}

void ATTN_FN(const ATTN_T *q, const ATTN_T *k, const ATTN_T *v, ATTN_T *o, int32_t batch,
	       int32_t heads, int32_t kv_heads, int32_t seqlen, int32_t kv_seqlen,
	       int32_t head_dim, int32_t causal, cudaStream_t stream)
{
	if (batch <= 0 || heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0 || seqlen <= 0 ||
	    kv_seqlen <= 0 || head_dim <= 0)
		return; /* nothing to do, or a shape outside the task: o stays as it is */
	if ((head_dim == 64 || head_dim == 128) && wgmma_available(stream)) {
		if (head_dim == 64)
			causal ? launch<64, true>(q, k, v, o, batch, heads, kv_heads, seqlen,
						  kv_seqlen, stream)
			       : launch<64, false>(q, k, v, o, batch, heads, kv_heads, seqlen,
						   kv_seqlen, stream);
		else
			causal ? launch<128, true>(q, k, v, o, batch, heads, kv_heads, seqlen,
						   kv_seqlen, stream)
			       : launch<128, false>(q, k, v, o, batch, heads, kv_heads, seqlen,
						    kv_seqlen, stream);
		return;
	}
	if (head_dim > 32 * GEN_MAXC)
		return; /* unsupported: o stays poisoned and the check reports it */
	const int64_t rows = (int64_t)batch * heads * seqlen;
	attention_generic<<<(unsigned)((rows + 3) / 4), 128, 0, stream>>>(
		q, k, v, o, rows, heads, kv_heads, seqlen, kv_seqlen, head_dim, causal,
		1.0f / sqrtf((float)head_dim));
}
#endif /* !__CUDACC_RTC__ */
