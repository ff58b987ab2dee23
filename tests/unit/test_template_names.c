/* The names a task's templates may use besides their knobs (ks_template_task_name): the task's
 * params in a workload, "sizeof.TENSOR" from the tensor's dtype, "spec.FIELD" only with a
 * spec; anything else is not found. */
#include <string.h>

#include "ksearch/task.h"
#include "ksearch/template.h"
#include "tap.h"

static int name(const struct ks_task *t, const struct ks_workload *wl, const char *n, double *v)
{
	return ks_template_task_name(t, wl, NULL, n, strlen(n), v);
}

int main(void)
{
	struct ks_error e = {0};
	struct ks_task *f16 = NULL, *f32 = NULL;
	if (!ok(ks_task_load("tasks/selective_scan", &f16, &e) == 0 &&
			ks_task_load("tasks/selective_scan_f32", &f32, &e) == 0,
		"load selective_scan and selective_scan_f32 (%s)", e.msg))
		return tap_done();
	double v = 0;
	ok(name(f16, NULL, "sizeof.u", &v) == 0 && v == 2, "sizeof.u of the f16 task is 2 (%g)", v);
	ok(name(f32, NULL, "sizeof.u", &v) == 0 && v == 4, "sizeof.u of the f32 task is 4 (%g)", v);
	ok(name(f16, NULL, "sizeof.A", &v) == 0 && v == 4, "sizeof.A (f32 in both) is 4 (%g)", v);
	ok(name(f16, NULL, "sizeof.y", &v) == 0 && v == 2, "an output's size too (%g)", v);
	ok(name(f16, NULL, "sizeof.w", &v) == KS_ENOTFOUND, "sizeof of no tensor: not found");
	ok(name(f16, &f16->workloads[0], "seqlen", &v) == 0 && v == f16->workloads[0].values[2],
	   "a param in a workload (%g)", v);
	ok(name(f16, NULL, "seqlen", &v) == KS_ENOTFOUND, "a param without a workload: not found");
	ok(name(f16, NULL, "spec.smem_per_block", &v) == KS_ENOTFOUND,
	   "spec.X without a spec: not found");
	ks_task_free(f16);
	ks_task_free(f32);
	return tap_done();
}
