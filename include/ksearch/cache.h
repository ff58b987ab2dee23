/* ksearch's cache ($KSEARCH_CACHE, docs/evaluation.md "The cache"): what it holds, how big
 * it is, and clearing it.  Every entry of the cache root is listed, whatever wrote it
 * (compiled kernels, generated inputs, expected outputs, runners' scratch folders, an
 * evaluation cache); clearing one that a running ksearch is using can fail that run. */
#ifndef KS_CACHE_H
#define KS_CACHE_H

#include <stddef.h>

#include "ksearch/error.h"

/* a compiled kernel's library larger than this is a COMPILE_ERROR (src/backend/compile.c) */
#define KS_ARTIFACT_MAX_BYTES (64ull << 20)
/* the compiled kernels' cap: beyond it the least recently used go (ks_cache_trim_kernels),
 * only those unused for KS_KERNEL_CACHE_MIN_AGE_S, which no running search still loads */
#define KS_KERNEL_CACHE_CAP_BYTES (1ull << 30)
#define KS_KERNEL_CACHE_MIN_AGE_S 3600

struct ks_cache_entry {
	char name[256];          /* its name in the cache root: "kernels", "inputs", ... */
	const char *what;        /* what ksearch keeps there, "" for a name it does not know */
	int is_dir;
	unsigned long long bytes; /* the sizes of its files, summed */
	unsigned long long files;
	int in_use;              /* scratch of a live process (a runner now), never cleared */
};

/* Every entry of the cache root, sorted by name, into *out (malloc'd, *n of them); an
 * absent cache is no entry.  0 or an error. */
int ks_cache_list(struct ks_cache_entry **out, int *n, struct ks_error *e);
/* Remove the entry named name from the cache root (a name from ks_cache_list; no slash, not
 * "." or ".."); scratch keeps the folders of live processes.  *freed gets the bytes. */
int ks_cache_clear(const char *name, unsigned long long *freed, struct ks_error *e);
/* The LRU cap of the compiled kernels: while they hold more than cap bytes, the kernel
 * folder used least recently (compiled or found in the cache) goes, if it was not used
 * for min_age_s.  Returns the folders removed. */
int ks_cache_trim_kernels(unsigned long long cap, long min_age_s);

#endif
