/* The input cache (issue 12): generated input tensors kept as files, so that the runners of
 * every candidate read the inputs of a workload instead of generating them again.
 *
 * One file per tensor and seed, <cache root>/inputs/v<KS_INPUTS_VERSION>/<name>, holding
 * the raw bytes ks_init_fill writes.  The evaluator (trusted) writes them before it sends
 * a runner a fill (src/eval/inputs.c); the runner reads them and never writes them (the
 * sandbox gives it the directory read-only).  The helpers here are shared by both, so
 * they depend only on libc and src/util/sha256.c. */
#ifndef KS_TASK_INPUT_CACHE_H
#define KS_TASK_INPUT_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "ksearch/task.h"

/* tensors below this many bytes are not cached: generating them is cheaper than a file */
#define KS_INPUT_CACHE_MIN_BYTES ((size_t)1 << 20)
/* a file name: 24 hex digits of the key's sha256 and ".bin", with the terminator */
#define KS_INPUT_CACHE_NAME 32

/* The file name of (dtype, numel, init, key, seed): a sha256 of
 * "dtype numel kind a b key seed" (doubles as %.17g), so any change of what the generator
 * is asked for is another file. */
void ks_input_cache_name(enum ks_dtype t, size_t numel, const struct ks_init *init,
			 uint64_t key, uint64_t seed, char out[KS_INPUT_CACHE_NAME]);
/* Read dir/name into dst when it is a regular file of exactly bytes bytes: 0, else -1
 * (missing, truncated, too long, unreadable: the caller generates instead). */
int ks_input_cache_read(const char *dir, const char *name, void *dst, size_t bytes);

#endif
