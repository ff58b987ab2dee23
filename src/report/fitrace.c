/* `ksearch report RUN --to flashinfer-trace`: the run's evaluations as flashinfer-bench
 * Traces, one JSON object per line for every evaluated candidate and timed workload (the
 * re-measurement when there is one, else the search's).  The definition is the task's name,
 * the solution "<task>_ksearch_<candidate id>"; integer params are the workload's axes,
 * other params scalar inputs; inputs ksearch draws are "random". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report/report_impl.h"

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* flashinfer-bench's statuses are fewer: what ksearch tells apart folds into them */
static const char *trace_status(const char *s)
{
	if (!s || !strcmp(s, "PASSED"))
		return "PASSED";
	if (!strcmp(s, "INCORRECT_NUMERICAL") || !strcmp(s, "SUSPICIOUS"))
		return "INCORRECT_NUMERICAL";
	if (!strcmp(s, "COMPILE_ERROR"))
		return "COMPILE_ERROR";
	return "RUNTIME_ERROR";
}

static json_t *workload_json(const struct rp_run *r, size_t i)
{
	json_t *axes = json_object(), *inputs = json_object();
	json_t *params = r->workloads[i].params ? json_loads(r->workloads[i].params, 0, NULL) : NULL;
	const char *key;
	json_t *v;
	json_object_foreach(params, key, v) {
		double x = json_number_value(v);
		if (json_is_integer(v) || (isfinite(x) && x == floor(x) && fabs(x) < 9e15))
			json_object_set_new(axes, key, json_integer((json_int_t)x));
		else
			json_object_set_new(inputs, key, json_pack("{s:s, s:f}", "type", "scalar", "value", x));
	}
	json_decref(params);
	char uuid[160];
	snprintf(uuid, sizeof(uuid), "%s-w%d", r->run && r->run->id ? r->run->id : "run",
		 r->workloads[i].index);
	return json_pack("{s:s, s:o, s:o}", "uuid", uuid, "axes", axes, "inputs", inputs);
}

static json_t *evaluation_json(const struct rp_run *r, const struct rp_cand *c,
			       const struct rp_wl *w)
{
	const char *st = trace_status(w->status);
	int passed = !strcmp(st, "PASSED"), numerical = passed || !strcmp(st, "INCORRECT_NUMERICAL");
	json_t *corr = numerical ? json_pack("{s:o, s:o}", "max_relative_error",
					     num_or_null(w->max_rel_err), "max_absolute_error",
					     num_or_null(w->max_abs_err))
				 : json_null();
	json_t *perf = passed ? json_pack("{s:o, s:o, s:o}", "latency_ms",
					  num_or_null(w->median_us / 1000), "reference_latency_ms",
					  num_or_null(w->baseline_us / 1000), "speedup_factor",
					  num_or_null(w->speedup))
			      : json_null();
	char log[96];
	snprintf(log, sizeof(log), "run.db#candidate-%lld", (long long)c->c->id);
	char hw[200];
	if (r->target[0] && !strcmp(r->target, "auto") && (r->spec_title[0] || r->spec_name[0]))
		snprintf(hw, sizeof(hw), "%s", r->spec_title[0] ? r->spec_title : r->spec_name);
	else if (r->target[0])
		snprintf(hw, sizeof(hw), "%s", r->target);
	else
		snprintf(hw, sizeof(hw), "%s", r->run && r->run->backend ? r->run->backend : "?");
	json_t *env = json_pack("{s:s, s:{s:s, s:s}}", "hardware", hw,
				"libs", "ksearch", r->run && r->run->version ? r->run->version : "?",
				"backend", r->run && r->run->backend ? r->run->backend : "?");
	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:s}", "status", st, "log_file", log,
			 "correctness", corr, "performance", perf, "environment", env, "timestamp",
			 c->c->created ? c->c->created : "");
}

int rp_render_fitrace(const struct rp_run *r, struct ks_buf *out, struct ks_error *e)
{
	const char *task = r->run && r->run->task ? r->run->task : "?";
	for (size_t k = 0; k < r->ncands; k++) {
		const struct rp_cand *c = &r->cands[k];
		for (size_t i = 0; i < r->nworkloads; i++) {
			if (r->workloads[i].is_check)
				continue;
			const struct rp_wl *w = c->final[i].present ? &c->final[i] : &c->search[i];
			if (!w->present)
				continue;
			char sol[192];
			snprintf(sol, sizeof(sol), "%s_ksearch_%lld", task, (long long)c->c->id);
			json_t *t = json_pack("{s:s, s:s, s:o, s:o}", "definition", task, "solution", sol,
					      "workload", workload_json(r, i), "evaluation",
					      evaluation_json(r, c, w));
			char *line = t ? json_dumps(t, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
			json_decref(t);
			if (!line)
				return ks_error_set(e, KS_ENOMEM, "out of memory writing traces");
			int rc = ks_buf_addf(out, "%s\n", line);
			free(line);
			if (rc)
				return ks_error_set(e, rc, "traces of '%s' larger than the buffer allows", r->dir);
		}
	}
	return 0;
}
