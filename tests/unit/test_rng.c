/* Counter-based RNG: known-answer vectors, determinism, independence of order and
 * distribution sanity. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "tap.h"
#include "util/rng.h"

static void kat(const uint32_t ctr[4], const uint32_t key[2], const uint32_t want[4],
		const char *name)
{
	uint32_t got[4];
	ks_rng_philox(ctr, key, got);
	ok(got[0] == want[0] && got[1] == want[1] && got[2] == want[2] && got[3] == want[3],
	   "philox4x32-10 %s: %08x %08x %08x %08x", name, got[0], got[1], got[2], got[3]);
}

int main(void)
{
	/* Random123's published known-answer vectors for philox4x32-10 */
	{
		const uint32_t c0[4] = {0, 0, 0, 0}, k0[2] = {0, 0};
		const uint32_t w0[4] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
		kat(c0, k0, w0, "zero");
		const uint32_t c1[4] = {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff};
		const uint32_t k1[2] = {0xffffffff, 0xffffffff};
		const uint32_t w1[4] = {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd};
		kat(c1, k1, w1, "ones");
		const uint32_t c2[4] = {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344};
		const uint32_t k2[2] = {0xa4093822, 0x299f31d0};
		const uint32_t w2[4] = {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1};
		kat(c2, k2, w2, "pi");
	}
	/* stream layout is part of the contract: pin a few values */
	{
		uint64_t v = ks_rng_u64(0, 0, 0);
		ok(v == 0xe169c58d6627e8d5ull, "u64(0,0,0) is words 0,1 of block 0 (%016" PRIx64 ")", v);
		uint32_t b[4];
		ks_rng_block(0x299f31d0a4093822ull, 0x0370734413198a2eull, 0x85a308d3243f6a88ull, b);
		ok(b[0] == 0xd16cfe09 && b[3] == 0x24126ea1, "block maps (key, seed, i) onto philox");
	}
	/* normals: Box-Muller of block 0 (checked independently in Python from the KAT words) */
	{
		double z0 = ks_rng_normal(0, 0, 0), z1 = ks_rng_normal(0, 0, 1), z[2];
		ok(fabs(z0 - -0.39766753844418223) < 1e-14, "normal #0 pinned (%.17g)", z0);
		ok(fabs(z1 - -0.31039547880173801) < 1e-14, "normal #1 pinned (%.17g)", z1);
		ks_rng_normal2(0, 0, 0, z);
		ok(z[0] == z0 && z[1] == z1, "normal2 gives the pair");
		ks_rng_normal2(5, 6, 21, z);
		ok(z[1] == ks_rng_normal(5, 6, 43), "pair j holds numbers 2j and 2j+1");
		double u = ks_rng_uniform(0, 0, 0);
		ok(u == (double)(0xe169c58d6627e8d5ull >> 11) * 0x1.0p-53, "uniform = top 53 bits");
	}
	/* determinism and independence of order */
	{
		double fwd[64], bwd[64];
		for (int i = 0; i < 64; i++)
			fwd[i] = ks_rng_normal(123, 7, (uint64_t)i);
		for (int i = 63; i >= 0; i--)
			bwd[i] = ks_rng_normal(123, 7, (uint64_t)i);
		int same = 1;
		for (int i = 0; i < 64; i++)
			same &= fwd[i] == bwd[i];
		ok(same, "values do not depend on evaluation order");
		ok(ks_rng_u64(1, 0, 5) != ks_rng_u64(2, 0, 5), "key changes the stream");
		ok(ks_rng_u64(1, 0, 5) != ks_rng_u64(1, 1, 5), "seed changes the stream");
		ok(ks_rng_u64(1, 0, 5) != ks_rng_u64(1, 0, 6), "index changes the value");
		ok(ks_rng_u64(1, 0, (uint64_t)1 << 32) != ks_rng_u64(1, 0, 0),
		   "high bits of the index matter");
		ok(ks_rng_u64(1, (uint64_t)1 << 32, 0) != ks_rng_u64(1, 0, 0),
		   "high bits of the seed matter");
	}
	/* distribution sanity */
	{
		const int n = 200000;
		double su = 0, su2 = 0, lo = 1, hi = 0, sn = 0, sn2 = 0, sn4 = 0;
		int bins[10] = {0}, tail = 0;
		for (int i = 0; i < n; i++) {
			double u = ks_rng_uniform(42, 3, (uint64_t)i);
			su += u;
			su2 += u * u;
			lo = u < lo ? u : lo;
			hi = u > hi ? u : hi;
			bins[(int)(u * 10)]++;
			double z = ks_rng_normal(42, 3, (uint64_t)i);
			sn += z;
			sn2 += z * z;
			sn4 += z * z * z * z;
			tail += fabs(z) > 3;
		}
		double mu = su / n, vu = su2 / n - mu * mu;
		ok(lo >= 0 && hi < 1, "uniform in [0, 1) (%g .. %g)", lo, hi);
		ok(fabs(mu - 0.5) < 0.005, "uniform mean %.4f ~ 0.5", mu);
		ok(fabs(vu - 1.0 / 12) < 0.002, "uniform variance %.4f ~ 1/12", vu);
		double chi2 = 0;
		for (int b = 0; b < 10; b++)
			chi2 += (bins[b] - n / 10.0) * (bins[b] - n / 10.0) / (n / 10.0);
		ok(chi2 < 30, "uniform histogram chi^2 %.1f < 30 (9 dof)", chi2);
		double mn = sn / n, vn = sn2 / n - mn * mn, kurt = sn4 / n / (vn * vn);
		ok(fabs(mn) < 0.01, "normal mean %.4f ~ 0", mn);
		ok(fabs(vn - 1) < 0.02, "normal variance %.4f ~ 1", vn);
		ok(fabs(kurt - 3) < 0.1, "normal kurtosis %.3f ~ 3", kurt);
		ok(tail > 0.002 * n && tail < 0.0035 * n, "normal |z|>3 fraction %.5f ~ 0.0027",
		   (double)tail / n);
	}
	{
		uint64_t a = ks_rng_mix64(1), b = ks_rng_mix64(2);
		ok(a != b && a != 1, "mix64 mixes");
	}
	return tap_done();
}
