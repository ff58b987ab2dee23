/* The evaluator's half of the input cache (src/task/input_cache.h): it alone writes the
 * files, before any runner is asked for the inputs, so a runner only ever reads. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "eval/evaluator.h"
#include "util/units.h"
#include "ksearch/log.h"
#include "task/input_cache.h"
#include "util/fs.h"
#include "util/env.h"

int ks_eval_inputs_dir(char *out, size_t n)
{
	const char *off = ks_env_get()->no_input_cache;
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

/* Walks the input-cache files of workload ws (every input of at least
 * KS_INPUT_CACHE_MIN_BYTES, once per seed) that are missing or of the wrong size: with
 * write, generates and writes them; returns their bytes either way. */
static double inputs_walk(struct ks_evaluator *ev, struct ks_wl_state *ws, int write)
{
	const struct ks_task *t = ev->task;
	double missing = 0;
	if (!ev->inputs_dir[0])
		return 0;
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
		int slots[KS_SEED_SLOTS], nslots = ks_eval_seed_slots(ev, ws, 1, slots);
		for (int k = 0; k < nslots; k++) {
			int s = slots[k];
			char name[KS_INPUT_CACHE_NAME], path[PATH_MAX];
			ks_input_cache_name(dt, numel, &init, key, ev->seeds[s], name);
			snprintf(path, sizeof(path), "%s/%s", ev->inputs_dir, name);
			if (cached(path, bytes))
				continue;
			missing += (double)bytes;
			if (!write)
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
	return missing;
}

void ks_eval_inputs_ensure(struct ks_evaluator *ev, struct ks_wl_state *ws)
{
	inputs_walk(ev, ws, 1);
}

/* "workload 0 (rows=65536 cols=65536)", "check 'one' (n=1)" */
static void wl_name(const struct ks_evaluator *ev, const struct ks_wl_state *ws, char *out,
		    size_t n)
{
	struct ks_buf label = KS_BUF_INIT;
	ks_workload_label(ev->task, ws->wl, &label);
	if (ws->is_check)
		snprintf(out, n, "check '%s' (%s)", ws->wl->name ? ws->wl->name : "?",
			 ks_buf_str(&label));
	else
		snprintf(out, n, "workload %d (%s)", ws->index, ks_buf_str(&label));
	ks_buf_release(&label);
}

/* The bytes of one set of ws's inputs and outputs and of its outputs, in double: a
 * shape's bytes can pass SIZE_MAX, where setup_workloads' sums wrap. */
static void wl_bytes(const struct ks_task *t, const struct ks_wl_state *ws, double *set,
		     double *out)
{
	*set = *out = 0;
	for (int j = 0; j < t->ntensors; j++) {
		size_t numel;
		int64_t dims[KS_MAX_DIMS];
		if (ks_workload_shape(t, ws->wl, j, dims, &numel, NULL))
			continue; /* setup_workloads refused it already */
		double b = (double)numel * (double)ks_dtype_size(t->tensors[j].dtype);
		*set += b;
		if (t->tensors[j].is_output)
			*out += b;
	}
}

/* the reference's cache files of ws (every seed's expected outputs) still to be written */
static double reference_missing(const struct ks_evaluator *ev, const struct ks_wl_state *ws,
				double out)
{
	struct ks_buf label = KS_BUF_INIT;
	ks_workload_label(ev->task, ws->wl, &label);
	double missing = 0;
	int slots[KS_SEED_SLOTS], nslots = ks_eval_seed_slots(ev, ws, 0, slots);
	for (int k = 0; k < nslots; k++) {
		char path[PATH_MAX];
		ks_eval_ref_cache_path(ev->task_hash, ks_buf_str(&label), ev->seeds[slots[k]], NULL,
				       path, sizeof(path));
		if (!cached(path, (size_t)out))
			missing += out;
	}
	ks_buf_release(&label);
	return missing;
}

int ks_eval_inputs_fit(struct ks_evaluator *ev, struct ks_error *e)
{
	const struct ks_eval_opts *o = &ev->o;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
	double mem = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
	struct statvfs fs;
	double disk = statvfs(ks_cache_root(), &fs) ? -1 : (double)fs.f_bavail * (double)fs.f_frsize;
	double files = 0;
	char name[512], a[32], b[32], c[32];
	for (int i = 0; i < ev->nwl; i++) {
		struct ks_wl_state *ws = &ev->wl[i];
		double set, out;
		wl_bytes(ev->task, ws, &set, &out);
		/* at once: the candidate's runner (its rotating sets, whose outputs are its shared
		 * output file), the baseline's beside it while timed workloads are timed, and the
		 * expected outputs of every seed in ksearch */
		double sets = ws->is_check ? 1 : ceil((double)o->rotate_bytes / (set > 0 ? set : 1));
		sets = sets < 1 ? 1 : sets > KS_RUNNER_MAX_SETS ? KS_RUNNER_MAX_SETS : sets;
		int runners = !ws->is_check && !o->skip_baseline ? 2 : 1;
		int slots[KS_SEED_SLOTS], nseeds = ks_eval_seed_slots(ev, ws, 0, slots);
		double need = runners * set * sets + nseeds * out;
		wl_name(ev, ws, name, sizeof(name));
		if (mem > 0 && need > mem)
			return ks_error_set(e, KS_ELIMIT,
					    "%s needs %s for one set of its inputs and outputs, %s "
					    "while it is evaluated (%s, and the expected outputs of %d "
					    "seeds); this machine has %s of memory: reduce the shape",
					    name, ks_format_bytes(set, a, sizeof(a)), ks_format_bytes(need, b, sizeof(b)),
					    runners > 1 ? "the candidate's and the baseline's runners"
							: "the candidate's runner",
					    nseeds, ks_format_bytes(mem, c, sizeof(c)));
		double own = inputs_walk(ev, ws, 0) + reference_missing(ev, ws, out);
		files += own;
		if (disk >= 0 && files > disk) {
			char with[64] = "";
			if (files > own)
				snprintf(with, sizeof(with), " (%s with the workloads before it)",
					 ks_format_bytes(files, c, sizeof(c)));
			return ks_error_set(e, KS_ELIMIT,
					    "%s needs %s of input and reference files%s under '%s' "
					    "(the inputs of %d seeds, the expected outputs of %d), which "
					    "has %s free: reduce the shape, or make room there (or point "
					    "KSEARCH_CACHE elsewhere)",
					    name, ks_format_bytes(own, a, sizeof(a)), with, ks_cache_root(),
					    ks_eval_seed_slots(ev, ws, 1, slots), nseeds,
					    ks_format_bytes(disk, b, sizeof(b)));
		}
	}
	return 0;
}
