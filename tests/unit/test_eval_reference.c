/* Which reference gives a workload's expected outputs (reference.c or the task's trusted
 * device reference), on made-up cases and on the shipped matmul task, and the cache files
 * that keep their outputs apart.  Runs from the source root (ctest's working directory). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eval/evaluator.h"
#include "ksearch/task.h"
#include "tap.h"
#include "util/fs.h"

static void test_rule(void)
{
	const double big = 1e12, t = KS_REF_DEVICE_MIN_FLOPS;
	is_int(ks_eval_ref_source(1, 0, big), KS_REF_DEVICE, "large workload: device reference");
	is_int(ks_eval_ref_source(0, 0, big), KS_REF_HOST, "no device reference: reference.c");
	is_int(ks_eval_ref_source(1, 1, big), KS_REF_HOST, "a check always uses reference.c");
	is_int(ks_eval_ref_source(1, 0, t), KS_REF_DEVICE, "the threshold itself: device");
	is_int(ks_eval_ref_source(1, 0, t * 0.999), KS_REF_HOST, "just below it: reference.c");
	is_int(ks_eval_ref_source(1, 0, 0), KS_REF_HOST, "no flops expression (0): reference.c");
	is_int(ks_eval_ref_source(1, 0, NAN), KS_REF_HOST, "unknown flops (NaN): reference.c");
}

/* on the shipped task: exactly the cuda-only shapes (4096^3, 8192^3) take reference.cu */
static void test_matmul(void)
{
	struct ks_task *t = NULL;
	struct ks_error e = {0};
	if (!ok(ks_task_load("tasks/matmul", &t, &e) == 0, "load tasks/matmul (%s)", e.msg))
		return;
	ok(ks_path_exists("tasks/matmul/reference.cu"), "matmul ships reference.cu");
	int ndev = 0;
	for (int pass = 0; pass < 2; pass++) {
		int n = pass ? t->nchecks : t->nworkloads;
		for (int i = 0; i < n; i++) {
			const struct ks_workload *w = pass ? &t->checks[i] : &t->workloads[i];
			double flops = 0;
			if (ks_workload_expr(t, w, t->flops, &flops, &e)) {
				ok(0, "flops of entry %d: %s", i, e.msg);
				continue;
			}
			int cuda_only = w->backends && !strcmp(w->backends[0], "cuda") &&
					!w->backends[1];
			enum ks_ref_source want = !pass && cuda_only ? KS_REF_DEVICE : KS_REF_HOST;
			enum ks_ref_source got = ks_eval_ref_source(1, pass, flops);
			ndev += got == KS_REF_DEVICE;
			ok(got == want, "%s %d (%.3g flops): %s", pass ? "check" : "workload", i,
			   flops, want == KS_REF_DEVICE ? "reference.cu" : "reference.c");
		}
	}
	is_int(ndev, 2, "two matmul workloads use reference.cu");
	ks_task_free(t);
}

static void test_cache_paths(void)
{
	char host[4096], dev[4096], other[4096];
	const char *hash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	ks_eval_ref_cache_path(hash, "m=8192 n=8192 k=8192", 42, NULL, host, sizeof(host));
	ks_eval_ref_cache_path(hash, "m=8192 n=8192 k=8192", 42, "cu", dev, sizeof(dev));
	ok(strcmp(host, dev) != 0, "reference.cu's outputs have their own file (%s, %s)", host,
	   dev);
	ok(strstr(host, "/reference/v") && strstr(host, "-42.bin"), "reference.c's file (%s)",
	   host);
	ok(strstr(dev, "-42-cu.bin") != NULL, "reference.cu's file is tagged (%s)", dev);
	ks_eval_ref_cache_path(hash, "m=8192 n=8192 k=8192", 43, "cu", other, sizeof(other));
	ok(strcmp(dev, other) != 0, "the seed is in the key");
	ks_eval_ref_cache_path(hash, "m=4096 n=4096 k=4096", 42, "cu", other, sizeof(other));
	ok(strcmp(dev, other) != 0, "the workload is in the key");
	ks_eval_ref_cache_path("fedcba9876543210", "m=8192 n=8192 k=8192", 42, "cu", other,
			       sizeof(other));
	ok(strcmp(dev, other) != 0, "the task hash is in the key");
}

int main(void)
{
	test_rule();
	test_matmul();
	test_cache_paths();
	return tap_done();
}
