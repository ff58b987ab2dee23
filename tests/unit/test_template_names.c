/* The names a task's templates may use besides their knobs (ks_template_task_name): the task's
 * params in a workload, "sizeof.TENSOR" from the tensor's dtype, "spec.FIELD" only with a
 * spec; anything else is not found.  And one template's require: through sizeof.u, shared by
 * an f16 and an f32 task (state_scan.cu's FAST knob, f16 only), and the CPW knob's bounds. */
#include <string.h>

#include "ksearch/knowledge.h"
#include "ksearch/task.h"
#include "ksearch/template.h"
#include "search/space.h"
#include "tap.h"

static int name(const struct ks_task *t, const struct ks_workload *wl, const char *n, double *v)
{
	return ks_template_task_name(t, wl, NULL, n, strlen(n), v);
}

/* the value (as written) of knob `knob` in feasible configuration c of template i, or NULL */
static const char *knob_value(const struct ks_search_space *sp, int i, int c, const char *knob)
{
	const struct ks_template *tp = sp->tpl[i];
	const struct ks_config_set *fs = &sp->feasible[i];
	for (int k = 0; k < tp->nknobs; k++)
		if (!strcmp(tp->knobs[k].name, knob))
			return tp->knobs[k].values[fs->cfg[c * fs->nknobs + k]];
	return NULL;
}

/* how many feasible configurations of the task's cuda template `file` set knob `knob` to
 * `value` and, when `knob2` is given, knob2 to anything but `value2`; in *all how many there
 * are; -1 without that template or knob */
static long count_knob2(const struct ks_task *t, const struct ks_spec *spec, const char *file,
			const char *knob, const char *value, const char *knob2, const char *value2,
			long *all)
{
	struct ks_search_space sp;
	struct ks_error e = {0};
	memset(&sp, 0, sizeof(sp));
	if (ks_search_space_load(&sp, t, "cuda", "cu", spec, &e))
		return -1;
	long hits = -1;
	for (int i = 0; i < sp.n && hits < 0; i++) {
		const char *base = strrchr(sp.tpl[i]->path, '/');
		if (strcmp(base ? base + 1 : sp.tpl[i]->path, file))
			continue;
		*all = sp.feasible[i].n;
		for (int c = 0; c < sp.feasible[i].n; c++) {
			const char *v = knob_value(&sp, i, c, knob);
			const char *v2 = knob2 ? knob_value(&sp, i, c, knob2) : NULL;
			if (!v || (knob2 && !v2))
				break;
			hits = hits < 0 ? 0 : hits;
			hits += !strcmp(v, value) && (!knob2 || strcmp(v2, value2));
		}
	}
	ks_search_space_release(&sp);
	return hits;
}

static long count_knob(const struct ks_task *t, const struct ks_spec *spec, const char *file,
		       const char *knob, const char *value, long *all)
{
	return count_knob2(t, spec, file, knob, value, NULL, NULL, all);
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
	struct ks_spec h200;
	if (ok(ks_spec_load("h200", &h200, &e) == 0, "h200 spec (%s)", e.msg)) {
		long all16 = 0, all32 = 0;
		const long fast16 = count_knob(f16, &h200, "state_scan.cu", "FAST", "1", &all16);
		const long fast32 = count_knob(f32, &h200, "state_scan.cu", "FAST", "1", &all32);
		ok(fast16 > 0 && fast16 < all16, "f16 state_scan.cu: FAST 1 in %ld of %ld", fast16,
		   all16);
		ok(fast32 == 0 && all32 > 0, "f32 state_scan.cu: FAST 1 in none of %ld (%ld)", all32,
		   fast32);
		/* CPW > 1 only with PF 2 and SPLIT 1 (the require: the kernel's static_assert) */
		long n = 0;
		const long cpw2 = count_knob(f16, &h200, "state_scan.cu", "CPW", "2", &n);
		const long cpw4 = count_knob(f16, &h200, "state_scan.cu", "CPW", "4", &n);
		ok(cpw2 > 0 && cpw4 > 0 && cpw2 + cpw4 < n,
		   "f16 state_scan.cu: CPW 2 in %ld, CPW 4 in %ld of %ld", cpw2, cpw4, n);
		ok(count_knob2(f16, &h200, "state_scan.cu", "CPW", "2", "PF", "2", &n) == 0 &&
			   count_knob2(f16, &h200, "state_scan.cu", "CPW", "4", "SPLIT", "1", &n) == 0,
		   "f16 state_scan.cu: no CPW > 1 configuration without PF 2 or with SPLIT > 1");
		ks_spec_release(&h200);
	}
	ks_task_free(f16);
	ks_task_free(f32);
	return tap_done();
}
