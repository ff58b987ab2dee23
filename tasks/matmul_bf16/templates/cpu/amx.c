/* @ksearch
family: amx-tiles
summary: "Intel AMX: bf16 operands packed into zero-padded tiles (A row-major, B in the VNNI pair layout), TDPBF16PS accumulating fp32 C tiles in the tile registers over the whole k, blocks of BMT x BNT tiles of 16 x 16 per step, OpenMP over block rows, the result rounded to bf16 once"
rating: 9
difficulty: 5
knobs:
  BMT: {values: [1, 2], default: 2, summary: "16-row C tiles per block (A tiles loaded per k step)", impacts: {memory_bandwidth: 5, compute_hw_fit: 5}}
  BNT: {values: [1, 2, 3], default: 2, summary: "16-column C tiles per block (B tiles loaded per k step); BMT x BNT accumulators + BMT + BNT operand tiles fit the 8 tile registers", impacts: {memory_bandwidth: 5, compute_hw_fit: 5}}
  ORDER: {values: [0, 1], default: 0, summary: "0: block rows outer (A block reused across the row), 1: block columns outer (B block reused down the column)", impacts: {memory_bandwidth: 4}}
  THREADS: {values: [0, 1, 2], default: 0, summary: "OpenMP threads, 0 = all", impacts: {compute_hw_fit: 6}}
require:
  - "spec.has_amx == 1"
  - "THREADS <= spec.cores"
  - "BMT * BNT + BMT + BNT <= 8"
@end */
/* A TDPBF16PS multiplies a 16 x 32 bf16 tile of A by a 32 x 16 bf16 tile of B into a
 * 16 x 16 fp32 tile: 8192 multiply-adds in one instruction.  B must be in the VNNI layout
 * (row q holds B[2q][j], B[2q+1][j] side by side for the 16 columns j), so both operands
 * are packed once, zero-padded to whole tiles; the accumulators stay in tile registers for
 * the whole k loop and are stored once, as fp32, then rounded to bf16.  Linux hands out the
 * AMX register state only on request (arch_prctl ARCH_REQ_XCOMP_PERM); where that fails, or
 * the compiler has no AMX, the same packed data goes through a plain loop instead. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
#include <immintrin.h>
#define HAVE_AMX 1
#else
#define HAVE_AMX 0
#endif

#ifndef BMT
#define BMT 2
#endif
#ifndef BNT
#define BNT 2
#endif
#ifndef ORDER
#define ORDER 0
#endif
#ifndef THREADS
#define THREADS 0
#endif

#define T 16  /* tile rows; also fp32 columns of a C tile */
#define TK 32 /* bf16 k per A tile row (64 bytes) */

static inline float bf16_to_float(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

/* fp32 results read as bits for the rounding */
typedef uint32_t u32_alias __attribute__((may_alias));

static int amx_permitted(void)
{
#if HAVE_AMX
	/* ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA: once per process */
	return syscall(SYS_arch_prctl, 0x1023, 18) == 0;
#else
	return 0;
#endif
}

#if HAVE_AMX
struct tilecfg {
	uint8_t palette, start_row, reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
};

static void tile_config(void)
{
	struct tilecfg c;
	memset(&c, 0, sizeof(c));
	c.palette = 1;
	for (int i = 0; i < BMT * BNT + BMT + BNT; i++) {
		c.rows[i] = T;
		c.colsb[i] = 64;
	}
	_tile_loadconfig(&c);
}

/* tile numbers: accumulators C<i><j> first, then the A tiles A<i>, then the B tiles B<j>.
 * The tile intrinsics paste their tile argument into the instruction text, so each must
 * reach them as a literal digit: these tables, and one macro level (T_ZERO, ...) that
 * expands them first. */
#if BMT == 1 && BNT == 1
#define C00 0
#define A0 1
#define B0 2
#elif BMT == 1 && BNT == 2
#define C00 0
#define C01 1
#define A0 2
#define B0 3
#define B1 4
#elif BMT == 1 && BNT == 3
#define C00 0
#define C01 1
#define C02 2
#define A0 3
#define B0 4
#define B1 5
#define B2 6
#elif BMT == 2 && BNT == 1
#define C00 0
#define C10 1
#define A0 2
#define A1 3
#define B0 4
#elif BMT == 2 && BNT == 2
#define C00 0
#define C01 1
#define C10 2
#define C11 3
#define A0 4
#define A1 5
#define B0 6
#define B1 7
#else
#error "BMT x BNT accumulators + BMT + BNT operand tiles must fit the 8 tile registers"
#endif
#define ACC(i, j) C##i##j
#define ATILE(i) A##i
#define BTILE(j) B##j
#define T_ZERO(t) _tile_zero(t)
#define T_LOAD(t, p, s) _tile_loadd(t, p, s)
#define T_STORE(t, p, s) _tile_stored(t, p, s)
#define T_DP(c, a, b) _tile_dpbf16ps(c, a, b)

/* one block: C[m0 : m0 + 16 BMT, n0 : n0 + 16 BNT] of the padded fp32 result.  The tile
 * numbers must be constants, hence the unrolled cases below. */
static void block_amx(const uint16_t *ap, const uint16_t *bv, float *cf, int64_t kp,
		      int64_t lda, int64_t ldb, int64_t ldc, int64_t m0, int64_t n0)
{
#define ZERO(i, j) T_ZERO(ACC(i, j))
#define LOADA(i) T_LOAD(ATILE(i), ap + (m0 + (i) * T) * lda + k0, lda * 2)
#define LOADB(j) T_LOAD(BTILE(j), bv + (k0 / 2) * ldb * 2 + (n0 + (j) * T) * 2, ldb * 4)
#define DP(i, j) T_DP(ACC(i, j), ATILE(i), BTILE(j))
#define STORE(i, j) T_STORE(ACC(i, j), cf + (m0 + (i) * T) * ldc + n0 + (j) * T, ldc * 4)
#if BMT == 1
#define FOR_I(X, j) X(0, j)
#define FOR_IA(X) X(0)
#else
#define FOR_I(X, j) X(0, j); X(1, j)
#define FOR_IA(X) X(0); X(1)
#endif
#if BNT == 1
#define FOR_ALL(X) FOR_I(X, 0)
#define FOR_JB(X) X(0)
#elif BNT == 2
#define FOR_ALL(X) FOR_I(X, 0); FOR_I(X, 1)
#define FOR_JB(X) X(0); X(1)
#else
#define FOR_ALL(X) FOR_I(X, 0); FOR_I(X, 1); FOR_I(X, 2)
#define FOR_JB(X) X(0); X(1); X(2)
#endif
	FOR_ALL(ZERO);
	for (int64_t k0 = 0; k0 < kp; k0 += TK) {
		FOR_IA(LOADA);
		FOR_JB(LOADB);
		FOR_ALL(DP);
	}
	FOR_ALL(STORE);
}
#endif

/* the same block from the same packed operands, without AMX */
static void block_plain(const uint16_t *ap, const uint16_t *bv, float *cf, int64_t kp,
			int64_t lda, int64_t ldb, int64_t ldc, int64_t m0, int64_t n0)
{
	for (int64_t i = m0; i < m0 + BMT * T; i++)
		for (int64_t j = n0; j < n0 + BNT * T; j++) {
			float s = 0.0f;
			for (int64_t p = 0; p < kp; p++)
				s += bf16_to_float(ap[i * lda + p]) *
				     bf16_to_float(bv[((p / 2) * ldb + j) * 2 + p % 2]);
			cf[i * ldc + j] = s;
		}
}

void matmul_bf16(const uint16_t *a, const uint16_t *b, uint16_t *c, int32_t m, int32_t n,
		 int32_t k)
{
	const int64_t mp = (m + BMT * T - 1) / (BMT * T) * (BMT * T);
	const int64_t np = (n + BNT * T - 1) / (BNT * T) * (BNT * T);
	const int64_t kp = (k + TK - 1) / TK * TK;
	/* row strides off powers of two, so the 16 rows of a tile load do not share cache sets */
	const int64_t lda = kp + 32, ldb = np + 16, ldc = np + 16;
	uint16_t *ap = aligned_alloc(64, (size_t)(mp * lda * 2));
	uint16_t *bv = aligned_alloc(64, (size_t)(kp / 2 * ldb * 4));
	float *cf = aligned_alloc(64, (size_t)(mp * ldc * 4));
	int nt = THREADS > 0 ? THREADS : omp_get_max_threads();
	if (!ap || !bv || !cf)
		goto out;
	const int amx = amx_permitted();
	(void)amx; /* unused without AMX in the compiler */
	const int64_t mb = mp / (BMT * T), nb = np / (BNT * T);
#pragma omp parallel num_threads(nt)
	{
		/* A row-major, zero-padded to mp x kp */
#pragma omp for schedule(static)
		for (int64_t i = 0; i < mp; i++) {
			uint16_t *d = ap + i * lda;
			int64_t w = i < m ? k : 0;
			if (w)
				memcpy(d, a + i * k, (size_t)w * 2);
			memset(d + w, 0, (size_t)(kp - w) * 2);
		}
		/* B in pairs along k: bv[q][j][0..1] = B[2q][j], B[2q+1][j], zero-padded */
#pragma omp for schedule(static)
		for (int64_t q = 0; q < kp / 2; q++) {
			uint32_t *d = (uint32_t *)(bv + q * ldb * 2);
			const uint16_t *r0 = 2 * q < k ? b + 2 * q * n : NULL;
			const uint16_t *r1 = 2 * q + 1 < k ? b + (2 * q + 1) * n : NULL;
			if (r0 && r1)
				for (int64_t j = 0; j < n; j++)
					d[j] = r0[j] | (uint32_t)r1[j] << 16;
			else
				for (int64_t j = 0; j < n; j++)
					d[j] = r0 ? r0[j] : 0;
			memset(d + n, 0, (size_t)(np - n) * 4);
		}
#if HAVE_AMX
		if (amx)
			tile_config(); /* tile state is per thread */
#endif
#pragma omp for schedule(dynamic, 1)
		for (int64_t t = 0; t < mb * nb; t++) {
			const int64_t bi = ORDER ? t % mb : t / nb, bj = ORDER ? t / mb : t % nb;
			const int64_t m0 = bi * BMT * T, n0 = bj * BNT * T;
#if HAVE_AMX
			if (amx) {
				block_amx(ap, bv, cf, kp, lda, ldb, ldc, m0, n0);
				continue;
			}
#endif
			block_plain(ap, bv, cf, kp, lda, ldb, ldc, m0, n0);
		}
#if HAVE_AMX
		if (amx)
			_tile_release();
#endif
		/* round the valid part to bf16, nearest even (NaN stays NaN), without branches so
		 * that it vectorises */
#pragma omp for schedule(static)
		for (int64_t i = 0; i < m; i++) {
			const u32_alias *src = (const u32_alias *)(cf + i * ldc);
			uint16_t *dst = c + i * n;
			for (int64_t j = 0; j < n; j++) {
				uint32_t u = src[j], rne = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
				dst[j] = (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : rne);
			}
		}
	}
out:
	free(cf);
	free(bv);
	free(ap);
}
