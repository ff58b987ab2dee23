/* The evaluator's half of the input cache (src/task/input_cache.h): it alone writes the
 * files, before any runner is asked for the inputs, so a runner only ever reads. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eval/evaluator.h"
#include "ksearch/log.h"
#include "task/input_cache.h"
#include "util/fs.h"

int ks_eval_inputs_dir(char *out, size_t n)
{
	const char *off = getenv("KSEARCH_NO_INPUT_CACHE");
	if (off && *off && strcmp(off, "0"))
		return -1;
	if (snprintf(out, n, "%s/inputs/v%d", ks_cache_root(), KS_INPUTS_VERSION) >= (int)n)
		return -1;
	return ks_mkdir_p(out, NULL) ? -1 : 0;
}

/* 1 when path is a regular file of exactly bytes bytes */
static int cached(const char *path, size_t bytes)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == bytes;
}

void ks_eval_inputs_ensure(struct ks_evaluator *ev, struct ks_wl_state *ws)
{
	const struct ks_task *t = ev->task;
	if (!ev->inputs_dir[0])
		return;
	void *data = NULL;
	size_t cap = 0;
	for (int j = 0; j < t->ntensors; j++) {
		if (t->tensors[j].is_output)
			continue;
		size_t numel;
		int64_t dims[KS_MAX_DIMS];
		struct ks_init init;
		enum ks_dtype dt = t->tensors[j].dtype;
		/* a bad shape or initialiser: the runner's setup reports it */
		if (ks_workload_shape(t, ws->wl, j, dims, &numel, NULL) ||
		    ks_init_parse(ks_workload_init(t, ws->wl, j), &init, NULL, NULL))
			continue;
		size_t bytes = numel * ks_dtype_size(dt);
		if (bytes < KS_INPUT_CACHE_MIN_BYTES)
			continue;
		uint64_t key = ks_tensor_key(t, ws->wl, j);
		for (int s = 0; s < ev->o.nseeds; s++) {
			char name[KS_INPUT_CACHE_NAME], path[PATH_MAX];
			ks_input_cache_name(dt, numel, &init, key, ev->seeds[s], name);
			snprintf(path, sizeof(path), "%s/%s", ev->inputs_dir, name);
			if (cached(path, bytes))
				continue;
			if (bytes > cap) {
				free(data);
				cap = 0;
				if (!(data = malloc(bytes)))
					goto out;
				cap = bytes;
			}
			ks_init_fill_parallel(&init, dt, data, numel, key, ev->seeds[s]);
			struct ks_error e = {0};
			if (ks_file_write_atomic(path, data, bytes, &e))
				ks_debug("input cache: %s", e.msg);
		}
	}
out:
	free(data);
}
