/* The pool: jobs spread over two real workers come back in job order with the right
 * statuses; a worker that hangs past the job deadline is killed, restarted, and a job
 * that outlives two workers is reported, not dropped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/worker.h"
#include "tap.h"
#include "util/fs.h"

static char *read_kernel(const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "tests/fixtures/hostile/%s.c", name);
	struct ks_buf b = KS_BUF_INIT;
	if (ks_file_read(path, 1 << 20, &b, NULL))
		return NULL;
	return ks_buf_detach(&b, NULL);
}

int main(void)
{
	struct ks_error e = {0};
	struct ks_eval_opts o;
	ks_eval_opts_init(&o);
	o.min_time_s = 0.02;
	o.blocks = 1;
	o.timeout_s = 5;
	o.memory_limit = (size_t)512 << 20;
	o.reuse_baseline = 1;

	int devs[] = {0, 1};
	struct ks_pool_opts po;
	ks_pool_opts_init(&po);
	po.devices = devs;
	po.ndevices = 2;
	struct ks_pool *pool = NULL;
	int rc = ks_pool_new(&po, &pool, &e);
	ok(rc == 0 && ks_pool_size(pool) == 2, "a pool of two workers starts (%s)", rc ? e.msg : "");
	if (rc)
		return tap_done();
	const char *names[] = {"plain", "segfault", "compile_error", "partial_write", "plain"};
	const int want[] = {KS_STATUS_PASSED, KS_STATUS_RUNTIME_ERROR, KS_STATUS_COMPILE_ERROR,
			    KS_STATUS_INCORRECT_NUMERICAL, KS_STATUS_PASSED};
	enum { N = 5 };
	struct ks_pool_job jobs[N];
	struct ks_eval_result res[N];
	char *src[N];
	for (int i = 0; i < N; i++) {
		src[i] = read_kernel(names[i]);
		jobs[i] = (struct ks_pool_job){.task = "tests/fixtures/eval/scale", .opts = &o,
					       .source = src[i], .path = names[i], .units = 3};
	}
	rc = ks_pool_evaluate_batch(pool, jobs, N, res, &e);
	ok(rc == 0, "a batch of %d jobs over two workers (%s)", N, rc ? e.msg : "");
	for (int i = 0; i < N; i++) {
		ok(jobs[i].rc == 0 && (int)res[i].status == want[i] && jobs[i].attempts == 1,
		   "job %d (%s) comes back in its place: %s", i, names[i],
		   ks_status_name(res[i].status));
		ks_eval_result_release(&res[i]);
	}
	/* the same pool serves a second batch (evaluators are kept) */
	rc = ks_pool_evaluate_batch(pool, jobs, 1, res, &e);
	ok(rc == 0 && res[0].status == KS_STATUS_PASSED && res[0].nworkloads == 1 &&
		   res[0].workloads[0].baseline_us > 0,
	   "a second batch on the same workers");
	ks_eval_result_release(&res[0]);
	ks_pool_free(pool);

	/* a worker that says hello, then hangs on every job */
	ks_pool_opts_init(&po);
	po.worker_cmd =
		"exec python3 -c 'import json,struct,sys,time\n"
		"r=sys.stdin.buffer\n"
		"def recv():\n"
		"  return json.loads(r.read(struct.unpack(\">I\", r.read(4))[0]))\n"
		"recv()\n"
		"b=json.dumps({\"type\":\"hello\",\"protocol\":1,\"role\":\"worker\",\"backend\":\"cpu\"}).encode()\n"
		"sys.stdout.buffer.write(struct.pack(\">I\",len(b))+b); sys.stdout.buffer.flush()\n"
		"recv(); time.sleep(60)'";
	po.job_timeout_s = 1;
	rc = ks_pool_new(&po, &pool, &e);
	ok(rc == 0, "a hanging worker still says hello (%s)", rc ? e.msg : "");
	if (rc)
		return tap_done();
	rc = ks_pool_evaluate_batch(pool, jobs, 2, res, &e);
	ok(rc == KS_EIO && jobs[0].rc == KS_EIO && jobs[1].rc == KS_EIO,
	   "jobs that outlive two workers fail as infrastructure errors");
	ok(strstr(jobs[0].err.msg, "2 workers died") && strstr(jobs[0].err.msg, "in time") &&
		   jobs[0].attempts == 2,
	   "after two attempts, each killed at the deadline (%s)", jobs[0].err.msg);
	ok(!strcmp(e.msg, jobs[0].err.msg), "the batch reports the first failed job");
	ok(res[0].workloads == NULL && res[1].kernel_hash == NULL, "failed jobs leave no result");
	ks_pool_free(pool);

	/* a command that never speaks */
	ks_pool_opts_init(&po);
	po.worker_cmd = "exec sleep 30";
	po.start_timeout_s = 0.5;
	rc = ks_pool_new(&po, &pool, &e);
	ok(rc == KS_ETIMEOUT && strstr(e.msg, "did not say hello") && pool == NULL,
	   "a silent command times out at hello (%s)", e.msg);
	for (int i = 0; i < N; i++)
		free(src[i]);
	return tap_done();
}
