/* @ksearch
family: warp-scan-state-outer
summary: "one warp per channel walks the sequence in tiles of 32 * ITEMS steps; inside a tile each lane owns ITEMS consecutive steps and the states are visited one after another (UNR at a time): the lane's (decay, state) pairs get an in-register inclusive scan, the lanes' totals a warp-shuffle scan, the carry from the previous tile closes the chain, and y accumulates C.h at once, so nothing is scanned twice and only the carry per state lives across tiles; several channels per block share B and C through L1"
rating: 8
difficulty: 4
knobs:
  ITEMS: {values: [4, 8, 16, 32], default: 16, summary: "consecutive steps per lane; more items, fewer shuffle levels per step, more registers", impacts: {register_pressure: 8, compute_hw_fit: 7}}
  CPB: {values: [1, 2, 4, 8, 16, 32], default: 16, summary: "channels per block, sharing B and C tiles (through L1 for PF 0, shared memory otherwise); 16 and 32 only with PF 2, whose shared memory does not grow with CPB", impacts: {memory_bandwidth: 5, compute_hw_fit: 3}}
  UNR: {values: [1, 2, 4], default: 2, summary: "states interleaved in one pass over the items: independent chains for the scheduler, more registers", impacts: {register_pressure: 7, compute_hw_fit: 6}}
  VEC: {values: [2, 4, 8], default: 8, summary: "values per vector load and store (f16: 8 = 16 bytes; f32: 4 = 16 bytes, 8 = two such loads); rows whose length is no multiple fall back to scalar accesses", impacts: {memory_bandwidth: 6}}
  PF: {values: [0, 1, 2], default: 2, summary: "1 stages the next tile's B, C (shared by the block's channels) and u, delta, z in shared memory with cp.async while the current tile is computed (two buffers, one barrier per tile); 2 stages only B and C there and keeps each lane's next u, delta, z in registers (pairs, loaded one tile ahead), so a block needs 64 * sizeof.u * TILE bytes whatever CPB and several blocks fit on one SM; 0 loads each state's rows when it is needed", impacts: {memory_bandwidth: 7, compute_hw_fit: 5}}
  MINB: {values: [1, 2, 3, 4], default: 1, summary: "blocks per SM the PF >= 1 kernel is compiled for (the second __launch_bounds__ argument): caps registers at 64K / (MINB * 32 * CPB * SPLIT) so that many blocks fit, at the price of spills when the cap is low", impacts: {register_pressure: 8, compute_hw_fit: 6}}
  FAST: {values: [0, 1], default: 1, summary: "f16 only (the f32 variant compiles it out and its require: line keeps the search at 0): softplus as __logf(1 + __expf(x)) and the gate's division as __fdividef (MUFU approximations, well inside the f16 tolerance) instead of log1pf and an IEEE division, which cost tens of instructions per step", impacts: {compute_hw_fit: 4}}
  CPW: {values: [1, 2, 4], default: 1, summary: "channels per warp (PF 2): the warp's lanes split into CPW groups of 32 / CPW, each scanning one channel's tile of (32 / CPW) * ITEMS steps, so the CPW channels read the same B and C values; those are widened to f32 once per block and tile into a lane-interleaved shared buffer (no per-lane f16 conversion, broadcast reads) and the shuffle scan has log2(32 / CPW) levels; 1 warp per CPW channels, so fewer warps at small batch", impacts: {compute_hw_fit: 6, register_pressure: 5}}
  SPLIT: {values: [1, 2, 4], default: 1, summary: "warps per channel (PF >= 1), each scanning 16 / SPLIT of the states; parts 1.. write their C.h sums to their own shared rows once per tile (conflict-free, no atomics) and part 0 adds them. Measured on an H200 at b1 L2048 (docs/results/notes/cuda-selective_scan-occupancy.md): the float shared-memory atomics this replaced made ITEMS 16 CPB 4 SPLIT 2 3.2x slower (414 against 130 us); it is still about 2x slower than CPB 8 SPLIT 1, which has the same warps per block and twice the channels", impacts: {compute_hw_fit: 3, register_pressure: 2}}
require:
  - "ITEMS % VEC == 0"
  - "ITEMS * UNR <= 64"
  - "(16 / SPLIT) % UNR == 0"
  - "PF >= 1 || SPLIT == 1"
  # CPW > 1: the PF 2 kernel alone, states not split, 8-step runs for the f32 widening
  - "CPW == 1 || (PF == 2 && SPLIT == 1 && ITEMS % 8 == 0 && CPB % CPW == 0)"
  # the f32 variant's tolerance (l2 5e-6) is tighter than the approximations
  - "FAST == 0 || sizeof.u == 2"
  - "PF >= 1 || MINB == 1"
  # MINB blocks must fit in 64 warps per SM and leave at least 32 registers a thread
  - "MINB * CPB / CPW * SPLIT <= 64"
  - "CPB / CPW * SPLIT <= (PF == 2 ? 32 : 8)"
  # two buffers of (32 + 3 CPB for PF 1) rows of TILE elements, the partial sums, s_A2 and
  # s_carry (without the gate, selective_scan_nogate, PF 1 stages 2 CPB rows: the bound
  # over-counts)
  # (tiles of 32 / CPW * ITEMS steps; CPW > 1: the f32 copy of B and C, 32 rows)
  - "PF == 0 || 2 * (32 + (PF == 1) * 3 * CPB) * 32 / CPW * ITEMS * sizeof.u + (SPLIT - 1) * CPB * 32 * ITEMS * 4 + (CPW > 1) * 32 * 32 / CPW * ITEMS * 4 + 2 * CPB * 16 * 4 <= 227 * 1024"
@end */
/* Per state n and step t: a_t = 2^(dt_t A_n log2e), b_t = dt_t u_t B_nt, h_t = a_t h_{t-1} + b_t.
 * A lane turns its ITEMS pairs into inclusive prefixes (P_k, Q_k) = composition of pairs 0..k
 * in registers, the warp combines the lanes' totals with log2(32) = 5 shuffle levels, and the
 * state entering the lane, h_in, gives h_k and y_k += C_nk h_k directly, with no rescan: one
 * ex2 per (state, step).  The PF 0 kernel keeps P_k and uses h_k = P_k h_in + Q_k; the PF >= 1
 * kernel keeps the decays instead, takes the lane's total decay from one ex2 of its dt sum and
 * walks its steps again from h_in (h = e h + q): one instruction less per (state, step),
 * measured 46.6 against 49.5 us at b1 L2048 (docs/results/notes/cuda-selective_scan-fast.md).  y
 * starts as D u and is gated by silu(z) once all states are in.  The decay products can
 * underflow to 0 (|A dt| large): then h_k = Q_k, which is the exact limit.
 * Measured on an H200 (docs/results/cuda-selective_scan.md): without PF the kernel waits on
 * each state's B and C loads and is latency-bound; staging the next tile in shared memory
 * (PF = 1) halved its time at every size.  PF = 2 (B and C staged, u, delta, z in registers)
 * lets 16 warps of ITEMS 16 share an SM whatever CPB: at b1 d2048 L2048, ITEMS 16 CPB 16 PF 2
 * took 55 us against 61 us for CPB 8 PF 1 (docs/results/notes/cuda-selective_scan-occupancy.md), and
 * FAST 1 (MUFU softplus and gate) 52 us: those are the defaults.  Measured and dropped
 * (docs/results/notes/cuda-selective_scan-fast.md): lane-interleaved shared rows (no gain), a
 * two-state software pipeline (no gain, more registers), B and C widened to f32 once per
 * block for one channel per warp (no gain: the f32 rows double the shared-memory reads).
 * CPW > 1 (docs/results/notes/cuda-selective_scan-cpw.md): a warp scans CPW channels, so its lanes
 * read each B and C value CPW at a time (a broadcast) and the f32 widening pays; 8.3-8.6
 * instructions per (state, step) in the state loop against 10.8, and at b8 (channels to
 * spare) CPW 4 is the fastest setting measured, 321 against 345 us; at b1 it leaves too few
 * warps (2048 / CPW), so CPW 1 stays the default.  Warps taking turns over tiles of the same
 * channels, the carry handed over through shared memory per state, were measured too and
 * dropped: at 16 warps an SM the registers spill in the state loop. */
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
typedef float2 ss_t2; /* two of them (PF = 2 keeps the next tile's u, delta, z so) */
static __device__ __forceinline__ float2 ss_load2(float2 x) { return x; }
static __device__ __forceinline__ float ss_load(float x) { return x; }
static __device__ __forceinline__ float ss_store(float x) { return x; }
#else
typedef __half ss_t;
typedef __half2 ss_t2;
static __device__ __forceinline__ float2 ss_load2(__half2 x) { return __half22float2(x); }
static __device__ __forceinline__ float ss_load(__half x) { return __half2float(x); }
static __device__ __forceinline__ __half ss_store(float x) { return __float2half_rn(x); }
#endif

#ifndef ITEMS
#define ITEMS 16
#endif
#ifndef CPB
#define CPB 16
#endif
#ifndef UNR
#define UNR 2
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef PF
#define PF 2
#endif
#ifndef SPLIT
#define SPLIT 1
#endif
#ifndef MINB
#define MINB 1
#endif
#ifndef FAST
#define FAST 1
#endif
#ifndef CPW
#define CPW 1
#endif

/* the f32 variant keeps the exact softplus and gate: its l2 bound (5e-6) is tighter than the
 * MUFU approximations */
#define FAST_MATH (FAST && !SS_F32)

#define KS_LOG2E 1.4426950408889634f
#define PARTS (32 / CPW)     /* lanes per channel in the PF kernel */
#define TILE (PARTS * ITEMS) /* steps per tile of the PF kernel */
#define WTILE (32 * ITEMS)   /* steps per tile of the PF 0 kernel (one channel per warp) */
static_assert(CPW == 1 || (PF == 2 && SPLIT == 1 && ITEMS % 8 == 0 && CPB % CPW == 0),
	      "CPW > 1: PF 2, SPLIT 1, ITEMS a multiple of 8, CPB a multiple of CPW");
#define MAXN 16 /* states kept as carries in registers; larger dstate takes the fallback */

static __device__ __forceinline__ float ex2(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}

#if FAST_MATH
static __device__ __forceinline__ float lg2(float x)
{
	float y;
	asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}

static __device__ __forceinline__ float rcp(float x)
{
	float y;
	asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}
#endif

static __device__ __forceinline__ float softplus(float x)
{
#if FAST_MATH
	/* both sides computed and one selected: no branch per step; ex2 and lg2 with ftz, as
	 * __expf and __logf without their range fix-ups (4 instructions each in SASS); past
	 * x = 88 ex2 gives inf and so does sp, which the select leaves */
	const float sp = lg2(1.0f + ex2(x * KS_LOG2E)) * 0.6931471805599453f;
	return x <= 20.0f ? sp : x;
#else
	return x <= 20.0f ? log1pf(__expf(x)) : x;
#endif
}

/* the gate z silu(z) = z / (1 + e^-z); e^-z = inf (z < -88) gives 0 either way */
static __device__ __forceinline__ float silu(float z)
{
#if FAST_MATH
	return z * rcp(1.0f + ex2(z * -KS_LOG2E));
#else
	return z / (1.0f + __expf(-z));
#endif
}

/* one level of the shuffle scan over groups of W lanes: a lane whose group has a lane o
 * places before it composes that lane's total into its own (tb = ta qb + tb, ta = ta qa).
 * In PTX with shfl's own in-range predicate: written in C, the conditional update cost ptxas
 * two moves a level */
template <int O, int W>
static __device__ __forceinline__ void scan_level(float &ta, float &tb)
{
	asm("{\n.reg .pred in;\n.reg .f32 qa, qb;\n"
	    "shfl.sync.up.b32 qa|in, %0, %2, %3, -1;\n"
	    "shfl.sync.up.b32 qb, %1, %2, %3, -1;\n"
	    "@in fma.rn.f32 %1, %0, qb, %1;\n"
	    "@in mul.rn.f32 %0, %0, qa;\n}"
	    : "+f"(ta), "+f"(tb)
	    : "n"(O), "n"((32 - W) << 8));
}

/* one state: the shuffle scan of the totals (ta, tb) = (decay product, state from 0) of the W
 * lanes of one channel (lane = lane p of its group of W) over their ITEMS steps gives the state
 * entering this lane (the tile's carry for p 0); the carry moves on to the tile's end */
template <int W>
static __device__ __forceinline__ float lane_entry(float ta, float tb, int lane, float *carry)
{
	if constexpr (W > 1)
		scan_level<1, W>(ta, tb);
	if constexpr (W > 2)
		scan_level<2, W>(ta, tb);
	if constexpr (W > 4)
		scan_level<4, W>(ta, tb);
	if constexpr (W > 8)
		scan_level<8, W>(ta, tb);
	if constexpr (W > 16)
		scan_level<16, W>(ta, tb);
	const float ea = __shfl_up_sync(0xffffffffu, ta, 1, W);
	const float eb = __shfl_up_sync(0xffffffffu, tb, 1, W);
	const float cin = *carry;
	const float h_in = lane == 0 ? cin : fmaf(ea, cin, eb);
	__syncwarp(); /* every lane has read cin */
	/* the next tile's carry: the group's total applied to this tile's carry */
	if (lane == W - 1)
		*carry = fmaf(ta, cin, tb);
	__syncwarp();
	return h_in;
}

/* ITEMS values starting at step t0 of a row, to floats; steps past len read as 0 */
static __device__ __forceinline__ void load_items(const ss_t *__restrict__ row, int64_t t0,
						  int64_t len, bool vec_ok, float (&v)[ITEMS])
{
	if (vec_ok && t0 + ITEMS <= len) {
#pragma unroll
		for (int k = 0; k < ITEMS; k += VEC) {
#if SS_F32
			/* f32: 16-byte loads of 4 floats (two for VEC 8), an 8-byte one for VEC 2 */
			if constexpr (VEC >= 4) {
#pragma unroll
				for (int i = 0; i < VEC; i += 4) {
					const float4 f =
						__ldg(reinterpret_cast<const float4 *>(row + t0 + k + i));
					v[k + i] = f.x, v[k + i + 1] = f.y;
					v[k + i + 2] = f.z, v[k + i + 3] = f.w;
				}
			} else {
				const float2 f = __ldg(reinterpret_cast<const float2 *>(row + t0 + k));
				v[k] = f.x, v[k + 1] = f.y;
			}
#else
			if constexpr (VEC == 8) {
				uint4 r = __ldg(reinterpret_cast<const uint4 *>(row + t0 + k));
				const __half2 *h = reinterpret_cast<const __half2 *>(&r);
#pragma unroll
				for (int j = 0; j < 4; j++) {
					float2 f = __half22float2(h[j]);
					v[k + 2 * j] = f.x, v[k + 2 * j + 1] = f.y;
				}
			} else if constexpr (VEC == 4) {
				uint2 r = __ldg(reinterpret_cast<const uint2 *>(row + t0 + k));
				const __half2 *h = reinterpret_cast<const __half2 *>(&r);
#pragma unroll
				for (int j = 0; j < 2; j++) {
					float2 f = __half22float2(h[j]);
					v[k + 2 * j] = f.x, v[k + 2 * j + 1] = f.y;
				}
			} else {
				float2 f = __half22float2(
					__ldg(reinterpret_cast<const __half2 *>(row + t0 + k)));
				v[k] = f.x, v[k + 1] = f.y;
			}
#endif
		}
	} else {
#pragma unroll
		for (int k = 0; k < ITEMS; k++)
			v[k] = t0 + k < len ? ss_load(row[t0 + k]) : 0.0f;
	}
}

static __device__ __forceinline__ void store_items(ss_t *__restrict__ row, int64_t t0,
						   int64_t len, bool vec_ok, const float (&v)[ITEMS])
{
	if (vec_ok && t0 + ITEMS <= len) {
#pragma unroll
		for (int k = 0; k < ITEMS; k += VEC) {
#if SS_F32
			if constexpr (VEC >= 4) {
#pragma unroll
				for (int i = 0; i < VEC; i += 4)
					*reinterpret_cast<float4 *>(row + t0 + k + i) =
						make_float4(v[k + i], v[k + i + 1], v[k + i + 2], v[k + i + 3]);
			} else {
				*reinterpret_cast<float2 *>(row + t0 + k) = make_float2(v[k], v[k + 1]);
			}
#else
			__half2 h[VEC / 2];
#pragma unroll
			for (int j = 0; j < VEC / 2; j++)
				h[j] = __floats2half2_rn(v[k + 2 * j], v[k + 2 * j + 1]);
			if constexpr (VEC == 8)
				*reinterpret_cast<uint4 *>(row + t0 + k) = *reinterpret_cast<uint4 *>(h);
			else if constexpr (VEC == 4)
				*reinterpret_cast<uint2 *>(row + t0 + k) = *reinterpret_cast<uint2 *>(h);
			else
				*reinterpret_cast<__half2 *>(row + t0 + k) = h[0];
#endif
		}
	} else {
#pragma unroll
		for (int k = 0; k < ITEMS; k++)
			if (t0 + k < len)
				row[t0 + k] = ss_store(v[k]);
	}
}

__global__ void __launch_bounds__(32 * CPB)
	scan_state_outer(const ss_t *__restrict__ u, const ss_t *__restrict__ delta,
			 const float *__restrict__ A, const ss_t *__restrict__ B,
			 const ss_t *__restrict__ C, const float *__restrict__ D,
			 const ss_t *__restrict__ z, const float *__restrict__ delta_bias,
			 ss_t *__restrict__ y, int32_t batch, int32_t dim, int32_t seqlen,
			 int32_t dstate)
{
	const int lane = threadIdx.x & 31;
	const int64_t bd = (int64_t)blockIdx.x * CPB + (threadIdx.x >> 5);
	if (bd >= (int64_t)batch * dim)
		return; /* whole warps leave; no barrier follows */
	const int64_t b = bd / dim, d = bd % dim, L = seqlen;
	const ss_t *ur = u + bd * L, *dr = delta + bd * L;
	const ss_t *Bb = B + b * dstate * L, *Cb = C + b * dstate * L;
	const bool vec_ok = L % VEC == 0;
	const float bias = delta_bias[d], Dd = D[d];
	/* per warp: A log2e and the carry of each state; in shared memory because the state loop
	 * is not unrolled (unrolled, the compiler hoists every state's loads and runs out of
	 * registers) and registers cannot be indexed at run time */
	__shared__ float s_A2[CPB][MAXN], s_carry[CPB][MAXN];
	float *A2 = s_A2[threadIdx.x >> 5], *carry = s_carry[threadIdx.x >> 5];
	if (lane < MAXN) {
		A2[lane] = lane < dstate ? A[d * dstate + lane] * KS_LOG2E : 0.0f;
		carry[lane] = 0.0f;
	}
	__syncwarp();
	for (int64_t t0 = 0; t0 < L; t0 += WTILE) {
		const int64_t base = t0 + (int64_t)lane * ITEMS;
		float dt[ITEMS], dtu[ITEMS], acc[ITEMS];
		load_items(ur, base, L, vec_ok, dtu); /* u, for now */
		load_items(dr, base, L, vec_ok, dt);
#pragma unroll
		for (int k = 0; k < ITEMS; k++) {
			dt[k] = base + k < L ? softplus(dt[k] + bias) : 0.0f;
			acc[k] = Dd * dtu[k];
			dtu[k] *= dt[k];
		}
#pragma unroll 1
		for (int n0 = 0; n0 < MAXN; n0 += UNR) {
			if (n0 >= dstate)
				break; /* uniform across the warp */
			float P[UNR][ITEMS], Q[UNR][ITEMS];
#pragma unroll
			for (int j = 0; j < UNR; j++) {
				const int n = n0 + j < dstate ? n0 + j : n0; /* past dstate: B = C = 0 below */
				float bv[ITEMS];
				load_items(Bb + (int64_t)n * L, base, L, vec_ok, bv);
				const float live = n0 + j < dstate ? 1.0f : 0.0f;
#pragma unroll
				for (int k = 0; k < ITEMS; k++) {
					const float e = ex2(dt[k] * A2[n0 + j]);
					const float q = dtu[k] * bv[k] * live;
					/* inclusive prefix inside the lane */
					P[j][k] = k == 0 ? e : P[j][k - 1] * e;
					Q[j][k] = k == 0 ? q : fmaf(e, Q[j][k - 1], q);
				}
			}
			/* warp scan of the lanes' totals, then the exclusive prefix applied to carry */
#pragma unroll
			for (int j = 0; j < UNR; j++) {
				const float h_in =
					lane_entry<32>(P[j][ITEMS - 1], Q[j][ITEMS - 1], lane, carry + n0 + j);
				const int n = n0 + j < dstate ? n0 + j : n0;
				const float live = n0 + j < dstate ? 1.0f : 0.0f;
				float cv[ITEMS];
				load_items(Cb + (int64_t)n * L, base, L, vec_ok, cv);
#pragma unroll
				for (int k = 0; k < ITEMS; k++)
					acc[k] = fmaf(cv[k] * live, fmaf(P[j][k], h_in, Q[j][k]), acc[k]);
			}
		}
		float zv[ITEMS];
		if constexpr (SS_GATE) {
			load_items(z + bd * L, base, L, vec_ok, zv);
#pragma unroll
			for (int k = 0; k < ITEMS; k++)
				acc[k] *= silu(zv[k]);
		}
		store_items(y + bd * L, base, L, vec_ok, acc);
	}
}

/* PF >= 1: the same scan, fed from shared memory.  Per block and tile, one buffer holds B and
 * C of all MAXN states (shared by the CPB channels) and, for PF = 1, u, delta, z of each
 * channel; the next tile's buffer is filled by cp.async while this one is computed.  Rows
 * whose length is no multiple of 8, and the last partial tile, are filled by plain loads with
 * zeros past L.  PF = 2 keeps u, delta, z out of shared memory: each lane loads its own ITEMS
 * steps of the next tile into registers (as f16 pairs) one tile ahead, so a block's shared
 * memory no longer grows with CPB and several blocks fit on one SM.
 * SPLIT > 1: SPLIT warps per channel, warp s scanning states [s NS, (s + 1) NS) with
 * NS = MAXN / SPLIT (each state's carry has one owner); parts 1.. write their C.h sums to
 * their own shared rows (step k of lane l at k * 32 + l: no bank conflicts), and part 0 adds
 * them, gates and stores. */
#define UDZ (SS_GATE ? 3 : 2)             /* staged rows per channel: u, delta (and z) */
#define UDZ_ROWS (PF == 1 ? UDZ * CPB : 0) /* staged u, delta, z rows per buffer */
#define ROWS (2 * MAXN + UDZ_ROWS)        /* B rows, C rows, then u, delta, z per channel */
#define NS (MAXN / SPLIT)                 /* states per warp */
#define EPC (16 / (int)sizeof(ss_t))      /* elements per 16-byte cp.async: 8 f16, 4 f32 */
#define NTHR (32 * CPB / CPW * SPLIT)      /* threads per block of the PF kernel */
#define CPR (TILE / EPC)                   /* 16-byte chunks per staged row */

static __device__ __forceinline__ void cp_async16(void *dst, const void *src)
{
	const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src));
}

/* fill one buffer with tile t0 */
static __device__ __forceinline__ void stage_tile(ss_t *buf, const ss_t *Bb, const ss_t *Cb,
						  const ss_t *u, const ss_t *delta,
						  const ss_t *z, int64_t bd0, int64_t nch,
						  int64_t t0, int64_t L, int dstate, bool async_ok)
{
	const bool full = async_ok && t0 + TILE <= L;
	/* the common case, PF 2 with every state and a whole tile: a thread's chunks sit NTHR / CPR
	 * rows apart in the same column, so their addresses are a base and fixed steps (the loop
	 * below spends ~40 instructions a chunk on divisions and bounds) */
	if constexpr (PF == 2 && NTHR % CPR == 0 && (ROWS * CPR) % NTHR == 0) {
		if (full && dstate == MAXN) {
			const int r0 = threadIdx.x / CPR, j = (threadIdx.x % CPR) * EPC;
#pragma unroll
			for (int i = 0; i < ROWS * CPR / NTHR; i++) {
				const int r = r0 + i * (NTHR / CPR);
				const ss_t *src = (r < MAXN ? Bb + (int64_t)r * L : Cb + (int64_t)(r - MAXN) * L);
				cp_async16(buf + (threadIdx.x + i * NTHR) * EPC, src + t0 + j);
			}
			asm volatile("cp.async.commit_group;\n" ::);
			return;
		}
	}
	for (int idx = threadIdx.x; idx < ROWS * CPR; idx += NTHR) {
		const int r = idx / CPR, j = (idx % CPR) * EPC;
		const ss_t *src;
		bool zero = false;
		if (r < 2 * MAXN) {
			const int n = r % MAXN;
			zero = n >= dstate;
			src = (r < MAXN ? Bb : Cb) + (int64_t)(zero ? 0 : n) * L;
		} else { /* PF = 1 only: ROWS stops at 2 * MAXN otherwise */
			const int q = r - 2 * MAXN, c = q / UDZ;
			int64_t bd = bd0 + c;
			bd = bd < nch ? bd : nch - 1; /* channels past the end read a real row */
#if SS_GATE
			src = (q % UDZ == 0 ? u : q % UDZ == 1 ? delta : z) + bd * L;
#else
			src = (q % UDZ == 0 ? u : delta) + bd * L;
#endif
		}
		ss_t *dst = buf + r * TILE + j;
		if (full && !zero) {
			cp_async16(dst, src + t0 + j);
		} else {
#pragma unroll
			for (int k = 0; k < EPC; k++)
				dst[k] = !zero && t0 + j + k < L ? src[t0 + j + k] : ss_store(0.0f);
		}
	}
	asm volatile("cp.async.commit_group;\n" ::);
}

/* a lane's ITEMS values of a staged row from shared memory: 16-byte reads (f16: 8-byte ones
 * for ITEMS = 4) */
static __device__ __forceinline__ void lds_items(const ss_t *row, int lane, float (&v)[ITEMS])
{
	const ss_t *p = row + lane * ITEMS;
#if SS_F32
#pragma unroll
	for (int k = 0; k < ITEMS; k += 4) {
		const float4 f = *reinterpret_cast<const float4 *>(p + k);
		v[k] = f.x, v[k + 1] = f.y, v[k + 2] = f.z, v[k + 3] = f.w;
	}
#else
	constexpr int W = ITEMS % 8 == 0 ? 8 : 4;
#pragma unroll
	for (int k = 0; k < ITEMS; k += W) {
		__half2 h[W / 2];
		if constexpr (W == 8)
			*reinterpret_cast<uint4 *>(h) = *reinterpret_cast<const uint4 *>(p + k);
		else
			*reinterpret_cast<uint2 *>(h) = *reinterpret_cast<const uint2 *>(p + k);
#pragma unroll
		for (int j = 0; j < W / 2; j++) {
			float2 f = __half22float2(h[j]);
			v[k + 2 * j] = f.x, v[k + 2 * j + 1] = f.y;
		}
	}
#endif
}

/* CPW > 1: B and C widened to f32 once per block and tile, in a lane-interleaved layout: the
 * 4-float chunk c of part p's ITEMS steps sits at chunk c * PARTS + p, so the PARTS lanes of a
 * channel read 16 * PARTS contiguous bytes per 16-byte read (no bank conflicts) and the CPW
 * channels of a warp read the same bytes (a broadcast) */
static __device__ __forceinline__ void widen_bc(float *f, const ss_t *buf)
{
	/* 8 consecutive elements per item: two float4 chunks of one part (ITEMS % 8 == 0) */
	for (int idx = threadIdx.x; idx < 2 * MAXN * TILE / 8; idx += NTHR) {
		const int r = idx / (TILE / 8), s0 = (idx % (TILE / 8)) * 8;
		const ss_t *src = buf + r * TILE + s0;
		float v[8];
#if SS_F32
		*reinterpret_cast<float4 *>(v) = *reinterpret_cast<const float4 *>(src);
		*reinterpret_cast<float4 *>(v + 4) = *reinterpret_cast<const float4 *>(src + 4);
#else
		__half2 h[4];
		*reinterpret_cast<uint4 *>(h) = *reinterpret_cast<const uint4 *>(src);
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const float2 x = __half22float2(h[j]);
			v[2 * j] = x.x, v[2 * j + 1] = x.y;
		}
#endif
		const int part = s0 / ITEMS, c = s0 % ITEMS / 4;
		float *dst = f + r * TILE + (c * PARTS + part) * 4;
		*reinterpret_cast<float4 *>(dst) = *reinterpret_cast<const float4 *>(v);
		*reinterpret_cast<float4 *>(dst + PARTS * 4) = *reinterpret_cast<const float4 *>(v + 4);
	}
}

static __device__ __forceinline__ void lds_f32(const float *row, int part, float (&v)[ITEMS])
{
#pragma unroll
	for (int c = 0; c < ITEMS / 4; c++)
		*reinterpret_cast<float4 *>(v + 4 * c) =
			*reinterpret_cast<const float4 *>(row + (c * PARTS + part) * 4);
}

/* a lane's ITEMS values of row r of the staged tile: f16 (or f32) staged rows for CPW 1, the
 * widened f32 rows for CPW > 1 */
static __device__ __forceinline__ void row_items(const ss_t *cur, const float *bcf, int r,
						 int lane, int part, float (&v)[ITEMS])
{
	if constexpr (CPW > 1)
		lds_f32(bcf + r * TILE, part, v);
	else
		lds_items(cur + r * TILE, lane, v);
}

/* PF = 2: ITEMS values of a row from step t0 into registers, kept as pairs (f16: half the
 * registers of floats) until the tile that uses them; steps past len read as 0 */
static __device__ __forceinline__ void ldg_pairs(const ss_t *__restrict__ row, int64_t t0,
						 int64_t len, bool vec_ok, ss_t2 (&r)[ITEMS / 2])
{
#if SS_F32
	if (vec_ok && t0 + ITEMS <= len) {
#pragma unroll
		for (int k = 0; k < ITEMS; k += VEC) {
			if constexpr (VEC >= 4) {
#pragma unroll
				for (int i = 0; i < VEC; i += 4) {
					const float4 v =
						__ldg(reinterpret_cast<const float4 *>(row + t0 + k + i));
					r[(k + i) / 2] = make_float2(v.x, v.y);
					r[(k + i) / 2 + 1] = make_float2(v.z, v.w);
				}
			} else {
				r[k / 2] = __ldg(reinterpret_cast<const float2 *>(row + t0 + k));
			}
		}
	} else {
#pragma unroll
		for (int k = 0; k < ITEMS; k += 2)
			r[k / 2] = make_float2(t0 + k < len ? row[t0 + k] : 0.0f,
					       t0 + k + 1 < len ? row[t0 + k + 1] : 0.0f);
	}
#else
	if (vec_ok && t0 + ITEMS <= len) {
#pragma unroll
		for (int k = 0; k < ITEMS; k += VEC) {
			if constexpr (VEC == 8) {
				const uint4 v = __ldg(reinterpret_cast<const uint4 *>(row + t0 + k));
				const __half2 *h = reinterpret_cast<const __half2 *>(&v);
#pragma unroll
				for (int j = 0; j < 4; j++)
					r[k / 2 + j] = h[j];
			} else if constexpr (VEC == 4) {
				const uint2 v = __ldg(reinterpret_cast<const uint2 *>(row + t0 + k));
				const __half2 *h = reinterpret_cast<const __half2 *>(&v);
#pragma unroll
				for (int j = 0; j < 2; j++)
					r[k / 2 + j] = h[j];
			} else {
				r[k / 2] = __ldg(reinterpret_cast<const __half2 *>(row + t0 + k));
			}
		}
	} else {
		const __half zero = __float2half(0.0f);
#pragma unroll
		for (int k = 0; k < ITEMS; k += 2)
			r[k / 2] = __halves2half2(t0 + k < len ? row[t0 + k] : zero,
						  t0 + k + 1 < len ? row[t0 + k + 1] : zero);
	}
#endif
}

static __device__ __forceinline__ void pairs_to_float(const ss_t2 (&r)[ITEMS / 2],
						      float (&v)[ITEMS])
{
#pragma unroll
	for (int k = 0; k < ITEMS; k += 2) {
		const float2 f = ss_load2(r[k / 2]);
		v[k] = f.x, v[k + 1] = f.y;
	}
}

/* pass 1 of one state over a lane's ITEMS steps of a tile: keeps the decays e_k and inputs
 * q_k = dt_k u_k B_k and gives the lane's total (ta, tb): tb the state after its steps from 0,
 * ta = 2^(a2 * the lane's dt sum), one ex2 instead of a chain of ITEMS products */
static __device__ __forceinline__ void lane_pass1(const float (&bv)[ITEMS],
						  const float (&dt)[ITEMS], const float (&dtu)[ITEMS],
						  float dsum, float a2, float (&E)[ITEMS],
						  float (&Qv)[ITEMS], float &ta, float &tb)
{
#pragma unroll
	for (int k = 0; k < ITEMS; k++) {
		E[k] = ex2(dt[k] * a2);
		Qv[k] = dtu[k] * bv[k];
		tb = k == 0 ? Qv[k] : fmaf(E[k], tb, Qv[k]);
	}
	ta = ex2(dsum * a2);
}

/* pass 2, once lane_entry gave the state entering the lane: h = e h + q, y += C h */
static __device__ __forceinline__ void lane_pass2(const float (&cv)[ITEMS], float h,
						  const float (&E)[ITEMS], const float (&Qv)[ITEMS],
						  float (&acc)[ITEMS])
{
#pragma unroll
	for (int k = 0; k < ITEMS; k++) {
		h = fmaf(E[k], h, Qv[k]);
		acc[k] = fmaf(cv[k], h, acc[k]);
	}
}

/* MINB = 1 keeps the one-argument form: measured, (256, 1) made ptxas take 160 registers
 * instead of 128 at ITEMS 16 CPB 8 PF 1 and the kernel 30% slower */
#if MINB > 1
#define PF_BOUNDS __launch_bounds__(NTHR, MINB)
#else
#define PF_BOUNDS __launch_bounds__(NTHR)
#endif

__global__ void PF_BOUNDS
	scan_state_outer_pf(const ss_t *__restrict__ u, const ss_t *__restrict__ delta,
			    const float *__restrict__ A, const ss_t *__restrict__ B,
			    const ss_t *__restrict__ C, const float *__restrict__ D,
			    const ss_t *__restrict__ z, const float *__restrict__ delta_bias,
			    ss_t *__restrict__ y, int32_t batch, int32_t dim, int32_t seqlen,
			    int32_t dstate)
{
	/* 2 buffers of ROWS x TILE halves, then (SPLIT - 1) x CPB x TILE floats of partial sums,
	 * then for CPW > 1 the widened f32 B and C rows (2 MAXN x TILE floats) */
	extern __shared__ __align__(16) ss_t smem[];
	__shared__ float s_A2[CPB][MAXN], s_carry[CPB][MAXN];
	/* warp wl = group * SPLIT + part: group g has the block's channels g CPW .. g CPW + CPW - 1,
	 * lanes [c PARTS, (c + 1) PARTS) channel g CPW + c; p: the lane's place among its
	 * channel's PARTS lanes */
	const int lane = threadIdx.x & 31, p = lane % PARTS, wl = threadIdx.x >> 5;
	const int part = wl % SPLIT, w = wl / SPLIT * CPW + lane / PARTS;
	const int64_t nch = (int64_t)batch * dim, L = seqlen;
	/* a block's channels share one batch index, so they share B and C: blocks never straddle
	 * two batches (dim is padded up to CPB channels per batch) */
	const int64_t groups = (dim + CPB - 1) / CPB;
	const int64_t b = blockIdx.x / groups, d0 = (blockIdx.x % groups) * CPB, d = d0 + w;
	const bool active = d < dim;
	const int64_t bd0 = b * dim + d0, bd = b * dim + (active ? d : 0);
	const ss_t *Bb = B + b * dstate * L, *Cb = C + b * dstate * L;
	const ss_t *ur = u + bd * L, *dr = delta + bd * L;
	const ss_t *zr = SS_GATE ? z + bd * L : nullptr;
	const float bias = delta_bias[active ? d : 0], Dd = D[active ? d : 0];
	float *A2 = s_A2[w], *carry = s_carry[w];
	/* part p > 0 of channel w: its row of partial sums */
	float *psum = reinterpret_cast<float *>(smem + 2 * ROWS * TILE) +
		      ((int64_t)(part > 0 ? part - 1 : 0) * CPB + w) * TILE;
	float *bcf = reinterpret_cast<float *>(smem + 2 * ROWS * TILE) + (SPLIT - 1) * CPB * TILE;
	if (part == 0)
		for (int n = p; n < MAXN; n += PARTS) {
			A2[n] = n < dstate ? A[(active ? d : 0) * dstate + n] * KS_LOG2E : 0.0f;
			carry[n] = 0.0f;
		}
	/* rows of other blocks' channels are never staged: u, delta, z rows are this block's */
	const bool async_ok = L % EPC == 0, vec_ok = L % VEC == 0;
	const int64_t ntiles = (L + TILE - 1) / TILE;
	stage_tile(smem, Bb, Cb, u, delta, z, bd0, nch, 0, L, dstate, async_ok);
	ss_t2 ru[ITEMS / 2], rd[ITEMS / 2], rz[ITEMS / 2]; /* PF = 2: this tile's u, delta, z */
	if constexpr (PF == 2) {
		ldg_pairs(ur, p * ITEMS, L, vec_ok, ru);
		ldg_pairs(dr, p * ITEMS, L, vec_ok, rd);
		if (SS_GATE && part == 0)
			ldg_pairs(zr, p * ITEMS, L, vec_ok, rz);
	}
	for (int64_t it = 0; it < ntiles; it++) {
		const int64_t t0 = it * TILE;
		const bool more = it + 1 < ntiles;
		ss_t *cur = smem + (it & 1) * ROWS * TILE;
		if (more) {
			stage_tile(smem + ((it + 1) & 1) * ROWS * TILE, Bb, Cb, u, delta, z, bd0, nch,
				   t0 + TILE, L, dstate, async_ok);
			asm volatile("cp.async.wait_group 1;\n" ::);
		} else {
			asm volatile("cp.async.wait_group 0;\n" ::);
		}
		__syncthreads();
		if constexpr (CPW > 1) {
			/* the f32 rows of the last tile are no longer read: every thread has passed
			 * the barrier above after its last tile */
			widen_bc(bcf, cur);
			__syncthreads();
		}
		const int64_t base = t0 + (int64_t)p * ITEMS;
		const ss_t *mine = cur + (2 * MAXN + UDZ * w) * TILE; /* PF = 1: u, delta, z rows */
		float dt[ITEMS], dtu[ITEMS], acc[ITEMS];
		if constexpr (PF == 2) {
			pairs_to_float(ru, dtu); /* u, for now */
			pairs_to_float(rd, dt);
			if (more) { /* the next tile's loads fly while this tile is computed */
				ldg_pairs(ur, base + TILE, L, vec_ok, ru);
				ldg_pairs(dr, base + TILE, L, vec_ok, rd);
			}
		} else {
			lds_items(mine, lane, dtu);
			lds_items(mine + TILE, lane, dt);
		}
		/* steps past L are not masked: u, B and C read 0 there, and a step only feeds the
		 * steps after it, none of which is stored */
#pragma unroll
		for (int k = 0; k < ITEMS; k++) {
			dt[k] = softplus(dt[k] + bias);
			acc[k] = part == 0 ? Dd * dtu[k] : 0.0f;
			dtu[k] *= dt[k];
		}
		float dsum = 0.0f; /* the lane's dt sum */
#pragma unroll
		for (int k = 0; k < ITEMS; k++)
			dsum += dt[k];
#pragma unroll 1
		for (int n0 = part * NS; n0 < part * NS + NS; n0 += UNR) {
			if (n0 >= dstate)
				break;
			float E[UNR][ITEMS], Qv[UNR][ITEMS], ta[UNR], tb[UNR];
#pragma unroll
			for (int j = 0; j < UNR; j++) { /* rows past dstate are 0 */
				float bv[ITEMS];
				row_items(cur, bcf, n0 + j, lane, p, bv);
				lane_pass1(bv, dt, dtu, dsum, A2[n0 + j], E[j], Qv[j], ta[j], tb[j]);
			}
#pragma unroll
			for (int j = 0; j < UNR; j++) {
				float cv[ITEMS];
				row_items(cur, bcf, MAXN + n0 + j, lane, p, cv);
				lane_pass2(cv, lane_entry<PARTS>(ta[j], tb[j], p, carry + n0 + j), E[j],
					   Qv[j], acc);
			}
		}
		if constexpr (SPLIT > 1) {
			if (part > 0)
#pragma unroll
				for (int k = 0; k < ITEMS; k++)
					psum[k * 32 + lane] = acc[k];
			__syncthreads(); /* every part is in */
			/* the rows are rewritten only after the next tile's first barrier */
			if (part == 0)
#pragma unroll
				for (int q = 1; q < SPLIT; q++)
#pragma unroll
					for (int k = 0; k < ITEMS; k++)
						acc[k] += psum[(int64_t)(q - 1) * CPB * TILE + k * 32 + lane];
		}
		float zv[ITEMS];
		if constexpr (SS_GATE) {
			if constexpr (PF == 2) {
				pairs_to_float(rz, zv);
				if (more && part == 0)
					ldg_pairs(zr, base + TILE, L, vec_ok, rz);
			} else {
				lds_items(mine + 2 * TILE, lane, zv);
			}
#pragma unroll
			for (int k = 0; k < ITEMS; k++)
				acc[k] *= silu(zv[k]);
		}
		if (active && part == 0)
			store_items(y + bd * L, base, L, vec_ok, acc);
		__syncthreads(); /* this buffer is refilled by the next iteration's stage */
	}
}

/* dstate beyond 16: one thread per channel, the state in a local array */
__global__ void scan_wide(const ss_t *u, const ss_t *delta, const float *A, const ss_t *B,
			  const ss_t *C, const float *D, const ss_t *z, const float *delta_bias,
			  ss_t *y, int32_t batch, int32_t dim, int32_t seqlen, int32_t dstate)
{
	const int64_t bd = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (bd >= (int64_t)batch * dim)
		return;
	const int64_t b = bd / dim, d = bd % dim, L = seqlen;
	float h[1024];
	for (int n = 0; n < dstate; n++)
		h[n] = 0.0f;
	for (int64_t t = 0; t < L; t++) {
		const float dt = softplus(ss_load(delta[bd * L + t]) + delta_bias[d]);
		const float ut = ss_load(u[bd * L + t]);
		float acc = 0.0f;
		for (int n = 0; n < dstate; n++) {
			const int64_t o = (b * dstate + n) * L + t;
			h[n] = expf(dt * A[d * dstate + n]) * h[n] + dt * ut * ss_load(B[o]);
			acc += ss_load(C[o]) * h[n];
		}
		if constexpr (SS_GATE) {
			const float zt = ss_load(z[bd * L + t]);
			y[bd * L + t] = ss_store((acc + D[d] * ut) * zt / (1.0f + expf(-zt)));
		} else {
			y[bd * L + t] = ss_store(acc + D[d] * ut);
		}
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
	if (batch <= 0 || dim <= 0 || seqlen <= 0)
		return;
	const int64_t ch = (int64_t)batch * dim;
	if (dstate <= MAXN && PF) {
		const size_t smem = (size_t)2 * ROWS * TILE * sizeof(ss_t) +
				    (size_t)(SPLIT - 1) * CPB * TILE * sizeof(float) +
				    (size_t)(CPW > 1) * 2 * MAXN * TILE * sizeof(float);
		/* the 48 KB default limit counts the static arrays too (s_A2, s_carry): measured,
		 * ITEMS 8 CPB 4 SPLIT 2 (45 KB dynamic) failed to launch without this */
		const size_t fixed = 2 * CPB * MAXN * sizeof(float);
		if (smem + fixed > 48 * 1024)
			cudaFuncSetAttribute(scan_state_outer_pf,
					     cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
		const int64_t blocks = (int64_t)batch * ((dim + CPB - 1) / CPB);
		scan_state_outer_pf<<<(unsigned)blocks, NTHR, smem, stream>>>(
			u, delta, A, B, C, D, z, delta_bias, y, batch, dim, seqlen, dstate);
	} else if (dstate <= MAXN)
		scan_state_outer<<<(unsigned)((ch + CPB - 1) / CPB), 32 * CPB, 0, stream>>>(
			u, delta, A, B, C, D, z, delta_bias, y, batch, dim, seqlen, dstate);
	else if (dstate <= 1024)
		scan_wide<<<(unsigned)((ch + 127) / 128), 128, 0, stream>>>(
			u, delta, A, B, C, D, z, delta_bias, y, batch, dim, seqlen, dstate);
}
