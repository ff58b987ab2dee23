/* Counter-based random numbers (Philox-4x32-10).
 *
 * Value i of a stream is a pure function of (key, seed, i): no state, no order, so any
 * process (the harness, a sandboxed runner, a worker on another machine) regenerates the
 * same tensor element by element, in parallel or in any order.  The key names the stream
 * (ks_tensor_key(): task, workload, tensor), the seed picks one of many draws of it. */
#ifndef KS_UTIL_RNG_H
#define KS_UTIL_RNG_H

#include <stdint.h>

/* one Philox-4x32-10 block: ctr and key in, 128 random bits out */
void ks_rng_philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
/* 128 bits for counter i of stream (key, seed): words 0..3 of the block */
void ks_rng_block(uint64_t key, uint64_t seed, uint64_t i, uint32_t out[4]);
/* the first 64 bits of block i */
uint64_t ks_rng_u64(uint64_t key, uint64_t seed, uint64_t i);
/* uniform in [0, 1) with 53 random bits (from the first 64 bits of block i) */
double ks_rng_uniform(uint64_t key, uint64_t seed, uint64_t i);
/* standard normal number i: Box-Muller on the two 64-bit halves of block i/2 gives the
 * pair (2j, 2j+1) as r*cos and r*sin of the same angle */
double ks_rng_normal(uint64_t key, uint64_t seed, uint64_t i);
/* both normals of block j at once: numbers 2j and 2j+1 of the stream */
void ks_rng_normal2(uint64_t key, uint64_t seed, uint64_t j, double out[2]);
/* 64-bit finaliser (SplitMix64's); handy for deriving keys from hashes */
uint64_t ks_rng_mix64(uint64_t x);

#endif
