/* Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11).
 * Linked into the sandboxed runner too: libc and libm only. */
#include "util/rng.h"

#include <math.h>

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

void ks_rng_philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
	uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
	uint32_t k0 = key[0], k1 = key[1];
	for (int r = 0; r < 10; r++) {
		uint64_t p0 = (uint64_t)PHILOX_M0 * c0;
		uint64_t p1 = (uint64_t)PHILOX_M1 * c2;
		uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
		uint32_t n1 = (uint32_t)p1;
		uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
		uint32_t n3 = (uint32_t)p0;
		c0 = n0;
		c1 = n1;
		c2 = n2;
		c3 = n3;
		k0 += PHILOX_W0;
		k1 += PHILOX_W1;
	}
	out[0] = c0;
	out[1] = c1;
	out[2] = c2;
	out[3] = c3;
}

void ks_rng_block(uint64_t key, uint64_t seed, uint64_t i, uint32_t out[4])
{
	const uint32_t ctr[4] = {(uint32_t)i, (uint32_t)(i >> 32), (uint32_t)seed,
				 (uint32_t)(seed >> 32)};
	const uint32_t k[2] = {(uint32_t)key, (uint32_t)(key >> 32)};
	ks_rng_philox(ctr, k, out);
}

uint64_t ks_rng_u64(uint64_t key, uint64_t seed, uint64_t i)
{
	uint32_t b[4];
	ks_rng_block(key, seed, i, b);
	return (uint64_t)b[0] | (uint64_t)b[1] << 32;
}

static double unit53(uint64_t x)
{
	return (double)(x >> 11) * 0x1.0p-53;
}

double ks_rng_uniform(uint64_t key, uint64_t seed, uint64_t i)
{
	return unit53(ks_rng_u64(key, seed, i));
}

void ks_rng_normal2(uint64_t key, uint64_t seed, uint64_t j, double out[2])
{
	uint32_t b[4];
	ks_rng_block(key, seed, j, b);
	/* u1 in (0, 1] so the logarithm is finite */
	double u1 = ((double)(((uint64_t)b[0] | (uint64_t)b[1] << 32) >> 11) + 1.0) * 0x1.0p-53;
	double u2 = unit53((uint64_t)b[2] | (uint64_t)b[3] << 32);
	double r = sqrt(-2.0 * log(u1)), t = 6.283185307179586476925 * u2;
	out[0] = r * cos(t);
	out[1] = r * sin(t);
}

double ks_rng_normal(uint64_t key, uint64_t seed, uint64_t i)
{
	double z[2];
	ks_rng_normal2(key, seed, i >> 1, z);
	return z[i & 1];
}

uint64_t ks_rng_mix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}
