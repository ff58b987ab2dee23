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

#include "ksearch/store.h"
#include "ksearch/task.h"
#include "report/report_impl.h"

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* an error figure as flashinfer-bench writes one: its Correctness refuses null (and so
 * would its TraceSet the whole file) and reads NaN and infinity as these strings */
static json_t *error_json(double v)
{
	if (isnan(v))
		return json_string("NaN");
	if (isinf(v))
		return json_string(v > 0 ? "Infinity" : "-Infinity");
	return json_real(v);
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

/* the names a task imported from flashinfer-bench keeps (its flashinfer.json), or for
 * another task its own: axes, inputs, each workload's uuids */
struct fit_names {
	json_t *side;   /* flashinfer.json, NULL: none */
	json_t *inputs; /* the task's tensor inputs' names (array), NULL: unknown */
};

static void names_load(const struct rp_run *r, struct fit_names *n)
{
	memset(n, 0, sizeof(*n));
	json_t *cfg = r->run && r->run->config ? json_loads(r->run->config, 0, NULL) : NULL;
	const char *task = json_string_value(json_object_get(cfg, "task"));
	struct ks_task *t = NULL;
	struct ks_error e = {0};
	if (task && !ks_task_load(task, &t, &e)) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/flashinfer.json", t->dir);
		n->side = json_load_file(path, 0, NULL);
		n->inputs = json_array();
		for (int i = 0; i < t->ninputs; i++)
			json_array_append_new(n->inputs, json_string(t->tensors[i].name));
		ks_task_free(t);
	}
	json_decref(cfg);
}

static const char *orig_name(const struct fit_names *n, const char *map, const char *name)
{
	const char *o = json_string_value(json_object_get(json_object_get(n->side, map), name));
	return o ? o : name;
}

/* the uuids the definition's workloads gave these params (NULL: none recorded) */
static json_t *uuids_of(const struct fit_names *n, json_t *params)
{
	size_t i;
	json_t *w;
	json_array_foreach(json_object_get(n->side, "workloads"), i, w) {
		json_t *vals = json_object_get(w, "values"), *scal = json_object_get(n->side, "scalars");
		size_t k = 0, same = 1;
		const char *key;
		json_t *v;
		json_object_foreach(params, key, v) {
			(void)key;
			same &= json_number_value(json_array_get(vals, k++)) == json_number_value(v);
		}
		(void)scal;
		if (same && k == json_array_size(vals) && json_array_size(json_object_get(w, "uuids")))
			return json_object_get(w, "uuids");
	}
	return NULL;
}

static json_t *workload_json(const struct rp_run *r, const struct fit_names *n, size_t i,
			     json_t *params, const char *uuid)
{
	json_t *axes = json_object(), *inputs = json_object();
	const char *key;
	json_t *v;
	json_t *var = json_object_get(n->side, "axes"), *scal = json_object_get(n->side, "scalars");
	json_object_foreach(params, key, v) {
		double x = json_number_value(v);
		int is_scalar = 0;
		size_t k;
		json_t *s;
		json_array_foreach(scal, k, s)
			is_scalar |= !strcmp(json_string_value(s), key);
		if (n->side && !is_scalar && !json_object_get(var, key))
			continue; /* a const axis: the definition's, not the workload's */
		if (!is_scalar && (json_is_integer(v) || (isfinite(x) && x == floor(x) && fabs(x) < 9e15)))
			json_object_set_new(axes, orig_name(n, "axes", key), json_integer((json_int_t)x));
		else
			json_object_set_new(inputs, orig_name(n, "inputs", key),
					    json_pack("{s:s, s:f}", "type", "scalar", "value", x));
	}
	size_t k;
	json_array_foreach(n->inputs, k, v)
		json_object_set_new(inputs, orig_name(n, "inputs", json_string_value(v)),
				    json_pack("{s:s}", "type", "random"));
	char gen[160];
	snprintf(gen, sizeof(gen), "%s-w%d", r->run && r->run->id ? r->run->id : "run",
		 r->workloads[i].index);
	return json_pack("{s:s, s:o, s:o}", "uuid", uuid ? uuid : gen, "axes", axes, "inputs", inputs);
}

static json_t *evaluation_json(const struct rp_run *r, const struct rp_cand *c,
			       const struct rp_wl *w)
{
	const char *st = trace_status(w->status);
	/* a workload not run after an earlier failure has the candidate's status and no errors
	 * of its own: "NaN", not the 0 its row holds */
	int not_run = w->log && !strcmp(w->log, KS_STORE_NOT_RUN_LOG);
	double abs_err = not_run ? NAN : w->max_abs_err, rel_err = not_run ? NAN : w->max_rel_err;
	int passed = !strcmp(st, "PASSED"), numerical = passed || !strcmp(st, "INCORRECT_NUMERICAL");
	json_t *corr = numerical ? json_pack("{s:o, s:o}", "max_relative_error",
					     error_json(rel_err), "max_absolute_error",
					     error_json(abs_err))
				 : json_null();
	json_t *perf = passed ? json_pack("{s:o, s:o, s:o}", "latency_ms",
					  num_or_null(w->median_us / 1000), "reference_latency_ms",
					  num_or_null(w->baseline_us / 1000), "speedup_factor",
					  num_or_null(w->speedup))
			      : json_null();
	/* flashinfer-bench's Evaluation keeps the run's output in `log` (it drops keys it does
	 * not know): ours says where the candidate's logs are */
	char log[160];
	snprintf(log, sizeof(log), "%s%sksearch run.db, candidate %lld",
		 not_run ? KS_STORE_NOT_RUN_LOG : "", not_run ? "; " : "", (long long)c->c->id);
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
	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:s}", "status", st, "log", log,
			 "correctness", corr, "performance", perf, "environment", env, "timestamp",
			 c->c->created ? c->c->created : "");
}

static int trace_line(struct ks_buf *out, json_t *t, const struct rp_run *r, struct ks_error *e)
{
	char *line = t ? json_dumps(t, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(t);
	if (!line)
		return ks_error_set(e, KS_ENOMEM, "out of memory writing traces");
	int rc = ks_buf_addf(out, "%s\n", line);
	free(line);
	if (rc)
		return ks_error_set(e, rc, "traces of '%s' larger than the buffer allows", r->dir);
	return 0;
}

int rp_render_fitrace(const struct rp_run *r, struct ks_buf *out, struct ks_error *e)
{
	struct fit_names n;
	names_load(r, &n);
	const char *task = r->run && r->run->task ? r->run->task : "?";
	const char *def = json_string_value(json_object_get(n.side, "definition"));
	int rc = 0;
	for (size_t k = 0; k < r->ncands && !rc; k++) {
		const struct rp_cand *c = &r->cands[k];
		for (size_t i = 0; i < r->nworkloads && !rc; i++) {
			if (r->workloads[i].is_check)
				continue;
			const struct rp_wl *w = c->final[i].present ? &c->final[i] : &c->search[i];
			if (!w->present)
				continue;
			char sol[192];
			snprintf(sol, sizeof(sol), "%s_ksearch_%lld", task, (long long)c->c->id);
			json_t *params = r->workloads[i].params ? json_loads(r->workloads[i].params, 0, NULL) : NULL;
			json_t *uuids = uuids_of(&n, params);
			/* one trace per uuid: equal shapes of the definition were timed once */
			for (size_t u = 0; u < (uuids ? json_array_size(uuids) : 1) && !rc; u++) {
				const char *id = uuids ? json_string_value(json_array_get(uuids, u)) : NULL;
				json_t *t = json_pack("{s:s, s:s, s:o, s:o}", "definition", def ? def : task,
						      "solution", sol, "workload",
						      workload_json(r, &n, i, params, id), "evaluation",
						      evaluation_json(r, c, w));
				rc = trace_line(out, t, r, e);
			}
			json_decref(params);
		}
	}
	json_decref(n.side);
	json_decref(n.inputs);
	return rc;
}
