/* The input cache (issue 12), on the real cpu runner and the scale task (one 4 MiB input):
 * the evaluator writes exactly what ks_init_fill generates, the runner reads it instead of
 * generating (its fill reply says how many bytes), a truncated file is ignored by the runner
 * and rewritten by the evaluator, and the verdicts and errors are the same with the cache
 * off (KSEARCH_NO_INPUT_CACHE=1).  Runs from the source root (ctest's working directory). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/evaluator.h"
#include "ksearch/task.h"
#include "tap.h"
#include "task/input_cache.h"
#include "util/fs.h"
#include "util/env.h"

static struct ks_task *task;
static char source[1 << 16];

static struct ks_wl_state *timed_workload(struct ks_evaluator *ev)
{
	for (int i = 0; i < ev->nwl; i++)
		if (!ev->wl[i].is_check)
			return &ev->wl[i];
	return NULL;
}

/* the cache file of input x of ws for seed index s */
static void cache_file(struct ks_evaluator *ev, struct ks_wl_state *ws, int s, char *out,
		       size_t n, size_t *bytes)
{
	size_t numel;
	int64_t dims[KS_MAX_DIMS];
	struct ks_init init;
	ks_workload_shape(task, ws->wl, 0, dims, &numel, NULL);
	ks_init_parse(ks_workload_init(task, ws->wl, 0), &init, NULL, NULL);
	char name[KS_INPUT_CACHE_NAME];
	ks_input_cache_name(KS_DT_F32, numel, &init, ks_tensor_key(task, ws->wl, 0), ev->seeds[s],
			    name);
	snprintf(out, n, "%s/%s", ev->inputs_dir, name);
	*bytes = numel * 4;
}

static int evaluate(struct ks_evaluator *ev, struct ks_eval_result *r, const char *what)
{
	struct ks_error e = {0};
	memset(r, 0, sizeof(*r));
	int rc = ks_evaluator_run(ev, source, "baseline.c", NULL, r, &e);
	return ok(rc == 0 && r->status == KS_STATUS_PASSED && r->nworkloads == 1, "%s: %s %s",
		  what, ks_status_name(r->status), rc ? e.msg : "");
}

/* the file holds exactly the bytes ks_init_fill writes */
static void test_file_content(struct ks_evaluator *ev, struct ks_wl_state *ws)
{
	char path[PATH_MAX];
	size_t bytes;
	cache_file(ev, ws, 0, path, sizeof(path), &bytes);
	struct ks_buf got = KS_BUF_INIT;
	ok(ks_file_read(path, bytes + 1, &got, NULL) == 0 && got.len == bytes,
	   "the cache file of seed 0 has %zu bytes", bytes);
	float *want = malloc(bytes);
	struct ks_init init;
	ks_init_parse(ks_workload_init(task, ws->wl, 0), &init, NULL, NULL);
	ks_init_fill(&init, KS_DT_F32, want, bytes / 4, ks_tensor_key(task, ws->wl, 0),
		     ev->seeds[0]);
	ok(got.len == bytes && !memcmp(got.data, want, bytes), "...with what ks_init_fill writes");
	free(want);
	ks_buf_release(&got);
}

/* a truncated file: the runner generates (0 bytes from the cache) the same inputs, and the
 * next evaluation writes the file again */
static void test_truncated(struct ks_evaluator *ev, struct ks_wl_state *ws)
{
	char path[PATH_MAX];
	size_t bytes;
	cache_file(ev, ws, 0, path, sizeof(path), &bytes);
	ok(truncate(path, (off_t)(bytes / 2)) == 0, "truncate the cache file of seed 0");
	struct ks_runner *r = NULL;
	struct ks_error e = {0};
	const char *reply;
	unsigned long long cached = 99;
	int rc = ks_eval_open_runner(ev, ws, ev->yard[KS_YARD_BASELINE].art.path, 1, 0,
				     ev->o.memory_limit, &r, &e);
	if (!rc)
		rc = ks_runner_cmd(r, 30, &reply, &e, "fill 0 %llu", ev->seeds[0]);
	if (!rc && sscanf(reply, "ok %*u %*u %*u %llu", &cached) != 1)
		cached = 99;
	ok(rc == 0 && cached == 0,
	   "the runner ignores the truncated file (%llu bytes from the cache; %s)", cached,
	   rc ? e.msg : reply);
	if (!rc)
		rc = ks_runner_cmd(r, 30, &reply, &e, "call 0");
	ok(rc == 0 && ws->ref[0] && !memcmp(r->out, ws->ref[0], ws->out_bytes),
	   "...generates the inputs instead: the outputs are the reference's (%s)", e.msg);
	ks_runner_free(r);
	struct ks_eval_result res;
	evaluate(ev, &res, "an evaluation after the truncation");
	struct stat st;
	ok(stat(path, &st) == 0 && (size_t)st.st_size == bytes,
	   "...writes the file again at its full size");
	ks_eval_result_release(&res);
}

static struct ks_evaluator *evaluator(void)
{
	struct ks_eval_opts o;
	ks_eval_opts_init(&o);
	o.min_time_s = 0.02;
	o.blocks = 1;
	struct ks_evaluator *ev = NULL;
	struct ks_error e = {0};
	if (ks_evaluator_new(task, &o, &ev, &e))
		printf("# no evaluator: %s\n", e.msg);
	return ev;
}

int main(void)
{
	char cache[] = "/tmp/ks-test-input-cache-XXXXXX";
	struct ks_error e = {0};
	struct ks_buf src = KS_BUF_INIT;
	if (!mkdtemp(cache))
		return tap_skip_all("no temporary directory");
	setenv("KSEARCH_CACHE", cache, 1); /* a cold cache of its own */
	ks_env_reload();
	unsetenv("KSEARCH_NO_INPUT_CACHE");
	ks_env_reload();
	if (ks_task_load("tests/fixtures/eval/scale", &task, &e) ||
	    ks_file_read("tests/fixtures/eval/scale/baseline.c", sizeof(source) - 1, &src, &e)) {
		ok(0, "load the scale task: %s", e.msg);
		return tap_done();
	}
	snprintf(source, sizeof(source), "%s", ks_buf_str(&src));
	ks_buf_release(&src);
	struct ks_evaluator *ev = evaluator();
	if (!ev) {
		ks_task_free(task);
		ks_rm_rf(cache);
		return tap_skip_all("no compiler or runner here");
	}
	ok(ev->inputs_dir[0] && ks_is_dir(ev->inputs_dir), "the input cache is %s",
	   ev->inputs_dir);
	struct ks_wl_state *ws = timed_workload(ev);
	struct ks_eval_result a, b, off;
	int a_ok = evaluate(ev, &a, "first evaluation");
	int b_ok = evaluate(ev, &b, "second evaluation");
	/* the workload's every fill reads its 4 MiB input: at least the seeds' three */
	ok(a.inputs_cached_bytes >= 3 * 4194304.0, "the first reads %.0f bytes from the cache",
	   a.inputs_cached_bytes);
	ok(b.inputs_cached_bytes >= 3 * 4194304.0, "the second reads %.0f bytes from the cache",
	   b.inputs_cached_bytes);
	test_file_content(ev, ws);
	test_truncated(ev, ws);
	ks_evaluator_free(ev);

	setenv("KSEARCH_NO_INPUT_CACHE", "1", 1);
	ks_env_reload();
	ev = evaluator();
	ok(ev && !ev->inputs_dir[0], "KSEARCH_NO_INPUT_CACHE=1 turns the cache off");
	if (ev && evaluate(ev, &off, "evaluation without the cache")) {
		ok(off.inputs_cached_bytes == 0, "...reads nothing from it (%.0f bytes)",
		   off.inputs_cached_bytes);
		ok(a_ok && b_ok && off.status == a.status && off.status == b.status,
		   "the same verdict with and without the cache");
		int same = off.nworkloads == a.nworkloads && off.nchecks == a.nchecks;
		for (int i = 0; same && i < a.nworkloads; i++)
			same = off.workloads[i].max_abs_err == a.workloads[i].max_abs_err &&
			       off.workloads[i].max_abs_err == b.workloads[i].max_abs_err;
		for (int i = 0; same && i < a.nchecks; i++)
			same = off.checks[i].max_abs_err == a.checks[i].max_abs_err;
		ok(same, "...and the same max_abs_err on every workload and check");
		ks_eval_result_release(&off);
	}
	ks_evaluator_free(ev);
	ks_eval_result_release(&a);
	ks_eval_result_release(&b);
	ks_task_free(task);
	ks_rm_rf(cache);
	return tap_done();
}
