/* The `ksearch eval --json` object. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "ksearch/backend.h"
#include "ksearch/eval.h"
#include "util/json.h"

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *wl_json(const struct ks_wl_result *w)
{
	json_t *o = json_object();
	json_t *params = json_loads(w->params_json ? w->params_json : "{}", 0, NULL);
	if (w->is_check)
		json_object_set_new(o, "name", json_string(w->label ? w->label : ""));
	json_object_set_new(o, "params", params ? params : json_object());
	json_object_set_new(o, "status", json_string(ks_status_name(w->status)));
	/* false: an earlier failure decided the status, this one was not run */
	json_object_set_new(o, "evaluated", json_boolean(!w->not_run));
	json_object_set_new(o, "max_abs_err", num(w->max_abs_err));
	json_object_set_new(o, "max_rel_err", num(w->max_rel_err));
	/* what the tolerance judged, as shares of it (PASSED: both at most 1) */
	json_object_set_new(o, "tolerance_used", json_pack("{s:o, s:o}", "elementwise",
			    num(w->tol_elem), "rel_l2", num(w->tol_l2)));
	if (!w->is_check) {
		json_object_set_new(o, "median_us", num(w->median_us));
		json_object_set_new(o, "spread_pct", num(w->spread_pct));
		json_object_set_new(o, "gflops", num(w->gflops));
		json_object_set_new(o, "gbps", num(w->gbps));
		json_object_set_new(o, "roofline_pct", num(w->roofline_pct));
		json_object_set_new(o, "baseline_us", num(w->baseline_us));
		json_object_set_new(o, "speedup_vs_baseline", num(w->speedup));
		/* the library's median and candidate speedup over it; null when not timed */
		json_object_set_new(o, "library_us", w->library_us > 0 ? num(w->library_us)
								      : json_null());
		json_object_set_new(o, "speedup_vs_library",
				    w->library_speedup > 0 ? num(w->library_speedup) : json_null());
		json_object_set_new(o, "samples", json_integer(w->nsamples));
		/* the involuntary context switches over those timed calls; null when not timed
		 * or not counted here (docs/evaluation.md, "Preempted calls") */
		json_object_set_new(o, "preempted", w->nsamples > 0 && w->preempted >= 0
							    ? json_integer(w->preempted)
							    : json_null());
	}
	json_object_set_new(o, "log", json_string(w->log ? w->log : ""));
	return o;
}

int ks_eval_result_json(const struct ks_task *t, const char *backend, const char *kernel_path,
			const struct ks_eval_result *r, struct ks_buf *out)
{
	json_t *o = json_object();
	json_object_set_new(o, "task", json_string(t->name));
	json_object_set_new(o, "backend", json_string(backend));
	json_object_set_new(o, "kernel", json_string(kernel_path ? kernel_path : ""));
	json_object_set_new(o, "status", json_string(ks_status_name(r->status)));
	json_object_set_new(o, "speedup_vs_baseline", num(r->speedup));
	/* what the baseline is: "baseline" (the task's baseline file), "MLX native" on mlx */
	json_object_set_new(o, "baseline",
			    json_string(ks_backend_baseline_label(ks_backend_find(backend))));
	/* the task's library kernel timed beside the baseline ("OpenBLAS"), null when none */
	json_object_set_new(o, "library", r->library ? json_string(r->library) : json_null());
	json_object_set_new(o, "speedup_vs_library",
			    r->library_speedup > 0 ? num(r->library_speedup) : json_null());
	json_object_set_new(o, "kernel_hash", json_string(r->kernel_hash ? r->kernel_hash : ""));
	json_object_set_new(o, "sandbox", json_string(r->sandbox ? r->sandbox : ""));
	json_object_set_new(o, "compile_log", json_string(r->compile_log ? r->compile_log : ""));
	json_t *wls = json_array(), *checks = json_array();
	for (int i = 0; i < r->nworkloads; i++)
		json_array_append_new(wls, wl_json(&r->workloads[i]));
	for (int i = 0; i < r->nchecks; i++)
		json_array_append_new(checks, wl_json(&r->checks[i]));
	json_object_set_new(o, "workloads", wls);
	json_object_set_new(o, "checks", checks);
	int rc = ks_json_to_buf(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER, out);
	json_decref(o);
	return rc;
}
