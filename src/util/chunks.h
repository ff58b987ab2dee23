/* A parallel loop over fixed chunks.  A job of n items is cut into chunks of `chunk` items
 * whose boundaries depend only on n and chunk, never on the number of threads; fn handles
 * one chunk and leaves its partial result in a slot of its own (index c), and the caller
 * combines the slots in chunk order.  So a reduction (a sum of doubles, a hash, the first
 * mismatches) gives bit-identical results on one thread and on sixteen.  Shared by the
 * library (output comparison) and the runner (input checksums). */
#ifndef KS_UTIL_CHUNKS_H
#define KS_UTIL_CHUNKS_H

#include <stddef.h>

/* chunks a job of n items has: ceil(n / chunk), at least 1 (an empty job is one chunk) */
size_t ks_chunks_count(size_t n, size_t chunk);

/* Call fn(ctx, c, begin, end) for every chunk c of [0, n), on up to `threads` threads
 * (<= 0: the cores this process may run on, at most 16); one thread, or a job of one chunk, runs in the
 * caller.  A thread that cannot be created leaves its chunks to the caller. */
void ks_chunks_run(size_t n, size_t chunk, int threads,
		   void (*fn)(void *ctx, size_t c, size_t begin, size_t end), void *ctx);

#endif
