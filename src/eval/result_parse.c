/* Evaluation options and results as JSON for the worker protocol: every field, exactly
 * (reals at 17 significant digits, non-finite values as strings), and back again with
 * every count and string checked, because a worker's reply is untrusted input. */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/wire.h"
#include "ksearch/worker.h"
#include "util/json.h"

#define MAX_ENTRIES 4096        /* workloads or checks in one result */
#define MAX_SAMPLES (1 << 20)   /* timed repetitions of one workload */
#define MAX_SEEDS 16

/* ---- numbers ------------------------------------------------------------------------ */

static json_t *real(double v)
{
	if (isnan(v))
		return json_string("nan");
	if (isinf(v))
		return json_string(v > 0 ? "inf" : "-inf");
	return json_real(v);
}

/* a number, "nan", "inf", "-inf" or null (nan); -1 for anything else */
static int real_value(json_t *v, double *out)
{
	const char *s = json_string_value(v);
	if (!v || json_is_null(v))
		*out = NAN;
	else if (json_is_number(v))
		*out = json_number_value(v);
	else if (s && !strcmp(s, "nan"))
		*out = NAN;
	else if (s && !strcmp(s, "inf"))
		*out = INFINITY;
	else if (s && !strcmp(s, "-inf"))
		*out = -INFINITY;
	else
		return -1;
	return 0;
}

static int get_real(json_t *o, const char *key, double *out, struct ks_error *e)
{
	if (real_value(json_object_get(o, key), out))
		return ks_error_set(e, KS_EPROTO, "'%s' is not a number", key);
	return 0;
}

static int get_int(json_t *o, const char *key, long long lo, long long hi, long long *out,
		   struct ks_error *e)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_integer(v))
		return ks_error_set(e, KS_EPROTO, "'%s' is missing or not an integer", key);
	long long x = json_integer_value(v);
	if (x < lo || x > hi)
		return ks_error_set(e, KS_EPROTO, "'%s' = %lld is out of range", key, x);
	*out = x;
	return 0;
}

/* a string field, copied; missing or null gives NULL */
static int get_str(json_t *o, const char *key, char **out, struct ks_error *e)
{
	json_t *v = json_object_get(o, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return ks_error_set(e, KS_EPROTO, "'%s' is not a string", key);
	*out = strdup(json_string_value(v));
	return *out ? 0 : ks_error_set(e, KS_ENOMEM, "out of memory");
}

static int get_status(json_t *o, enum ks_status *out, struct ks_error *e)
{
	const char *s = json_string_value(json_object_get(o, "status"));
	int st = s ? ks_status_parse(s) : -1;
	if (st < 0)
		return ks_error_set(e, KS_EPROTO, "unknown status '%.40s'", s ? s : "(none)");
	*out = (enum ks_status)st;
	return 0;
}

/* ---- options ------------------------------------------------------------------------ */

json_t *ks_wire_opts(const struct ks_eval_opts *o)
{
	json_t *j = json_object();
	json_object_set_new(j, "backend", json_string(o->backend ? o->backend : "cpu"));
	json_object_set_new(j, "nseeds", json_integer(o->nseeds));
	json_object_set_new(j, "timeout_s", real(o->timeout_s));
	json_object_set_new(j, "memory_limit", json_integer((json_int_t)o->memory_limit));
	json_object_set_new(j, "min_time_s", real(o->min_time_s));
	json_object_set_new(j, "min_reps", json_integer(o->min_reps));
	json_object_set_new(j, "max_reps", json_integer(o->max_reps));
	json_object_set_new(j, "rep_ci_rel", real(o->rep_ci_rel));
	json_object_set_new(j, "rep_ci_min_reps", json_integer(o->rep_ci_min_reps));
	json_object_set_new(j, "warmup", json_integer(o->warmup));
	json_object_set_new(j, "yard_reps", json_integer(o->yard_reps));
	json_object_set_new(j, "blocks", json_integer(o->blocks));
	json_object_set_new(j, "rotate_bytes", json_integer((json_int_t)o->rotate_bytes));
	json_object_set_new(j, "workloads", o->workloads ? json_string(o->workloads) : json_null());
	json_object_set_new(j, "skip_checks", json_boolean(o->skip_checks));
	json_object_set_new(j, "skip_baseline", json_boolean(o->skip_baseline));
	json_object_set_new(j, "skip_library", json_boolean(o->skip_library));
	json_object_set_new(j, "threads", json_integer(o->threads));
	json_object_set_new(j, "cflags", o->cflags ? json_string(o->cflags) : json_null());
	json_t *defs = json_array();
	for (int i = 0; o->defines && o->defines[i]; i++)
		json_array_append_new(defs, json_string(o->defines[i]));
	json_object_set_new(j, "defines", defs);
	json_object_set_new(j, "peak_gflops", real(o->peak_gflops));
	json_object_set_new(j, "peak_gbps", real(o->peak_gbps));
	json_object_set_new(j, "roof_gflops_f32", real(o->roof_gflops_f32));
	json_object_set_new(j, "roof_gflops_f16", real(o->roof_gflops_f16));
	json_object_set_new(j, "roof_gflops_bf16", real(o->roof_gflops_bf16));
	json_object_set_new(j, "roof_gbps", real(o->roof_gbps));
	json_object_set_new(j, "ci_rel", real(o->ci_rel));
	json_object_set_new(j, "max_blocks", json_integer(o->max_blocks));
	json_object_set_new(j, "suspicious_factor", real(o->suspicious_factor));
	json_object_set_new(j, "reuse_baseline", json_boolean(o->reuse_baseline));
	json_object_set_new(j, "seed", json_integer((json_int_t)o->seed));
	json_object_set_new(j, "no_sandbox", json_boolean(o->no_sandbox));
	return j;
}

int ks_wire_strings(json_t *arr, const char **defs, int max, const char *what,
		    struct ks_error *e)
{
	int n = 0;
	defs[0] = NULL;
	if (!arr || json_is_null(arr))
		return 0;
	if (!json_is_array(arr))
		return ks_error_set(e, KS_EPROTO, "'%s' is not an array", what);
	if ((int)json_array_size(arr) > max)
		return ks_error_set(e, KS_EPROTO, "'%s' has more than %d entries", what, max);
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v))
			return ks_error_set(e, KS_EPROTO, "'%s' holds a non-string", what);
		defs[n++] = json_string_value(v);
	}
	defs[n] = NULL;
	return 0;
}

int ks_wire_opts_parse(json_t *j, struct ks_eval_opts *o, const char **defs,
		       struct ks_error *e)
{
	ks_eval_opts_init(o);
	if (!json_is_object(j))
		return ks_error_set(e, KS_EPROTO, "'options' is not an object");
	json_t *v;
	double d;
	long long x = 0;
	int rc;
#define STR(key, field)                                                                  \
	if ((v = json_object_get(j, key)) && !json_is_null(v)) {                        \
		if (!json_is_string(v))                                                  \
			return ks_error_set(e, KS_EPROTO, "option '%s' is not a string", key); \
		o->field = json_string_value(v);                                         \
	}
#define INT(key, field, lo, hi)                                                          \
	if (json_object_get(j, key)) {                                                   \
		if ((rc = get_int(j, key, lo, hi, &x, e)))                               \
			return rc;                                                       \
		o->field = x;                                                            \
	}
#define REAL(key, field)                                                                 \
	if (json_object_get(j, key)) {                                                   \
		if ((rc = get_real(j, key, &d, e)))                                      \
			return rc;                                                       \
		o->field = d;                                                            \
	}
#define BOOL(key, field)                                                                 \
	if ((v = json_object_get(j, key)))                                               \
		o->field = json_is_true(v) || (json_is_integer(v) && json_integer_value(v));
	STR("backend", backend);
	STR("workloads", workloads);
	STR("cflags", cflags);
	INT("nseeds", nseeds, 0, 16);
	INT("memory_limit", memory_limit, 0, (long long)1 << 50);
	INT("min_reps", min_reps, 0, 1000000);
	INT("max_reps", max_reps, 0, 1000000);
	INT("rep_ci_min_reps", rep_ci_min_reps, 0, 1000000);
	REAL("rep_ci_rel", rep_ci_rel);
	INT("warmup", warmup, 0, 1000000);
	INT("yard_reps", yard_reps, 0, 1000000);
	INT("blocks", blocks, 0, 1000);
	INT("rotate_bytes", rotate_bytes, 0, (long long)1 << 50);
	INT("threads", threads, 0, 1 << 16);
	INT("seed", seed, 0, INT64_MAX);
	REAL("timeout_s", timeout_s);
	REAL("min_time_s", min_time_s);
	REAL("peak_gflops", peak_gflops);
	REAL("peak_gbps", peak_gbps);
	REAL("roof_gflops_f32", roof_gflops_f32);
	REAL("roof_gflops_f16", roof_gflops_f16);
	REAL("roof_gflops_bf16", roof_gflops_bf16);
	REAL("roof_gbps", roof_gbps);
	REAL("ci_rel", ci_rel);
	INT("max_blocks", max_blocks, 0, 1000);
	REAL("suspicious_factor", suspicious_factor);
	BOOL("skip_checks", skip_checks);
	BOOL("skip_baseline", skip_baseline);
	BOOL("skip_library", skip_library);
	BOOL("reuse_baseline", reuse_baseline);
	BOOL("no_sandbox", no_sandbox);
#undef STR
#undef INT
#undef REAL
#undef BOOL
	if ((rc = ks_wire_strings(json_object_get(j, "defines"), defs, KS_WIRE_MAX_DEFINES,
				  "defines", e)))
		return rc;
	o->defines = defs[0] ? defs : NULL;
	if (!isfinite(o->timeout_s) || !isfinite(o->min_time_s))
		return ks_error_set(e, KS_EPROTO, "timeout_s and min_time_s must be finite");
	return 0;
}

/* ---- results ------------------------------------------------------------------------ */

/* a workload's numbers on the wire, one list for both directions */
static const struct {
	const char *key;
	size_t off;
} wl_reals[] = {
#define WL_REAL(field) {#field, offsetof(struct ks_wl_result, field)}
	WL_REAL(max_abs_err), WL_REAL(max_rel_err), WL_REAL(tol_elem), WL_REAL(tol_l2),
	WL_REAL(median_us), WL_REAL(spread_pct), WL_REAL(gflops), WL_REAL(gbps),
	WL_REAL(roofline_pct), WL_REAL(baseline_us), WL_REAL(speedup), WL_REAL(library_us),
	WL_REAL(library_speedup),
#undef WL_REAL
};
#define WL_NREALS (sizeof(wl_reals) / sizeof(wl_reals[0]))

static double *wl_real(struct ks_wl_result *w, size_t i)
{
	return (double *)((char *)w + wl_reals[i].off);
}

static json_t *wl_wire(const struct ks_wl_result *w)
{
	json_t *o = json_object();
	json_object_set_new(o, "index", json_integer(w->index));
	json_object_set_new(o, "is_check", json_boolean(w->is_check));
	json_object_set_new(o, "label", w->label ? json_string(w->label) : json_null());
	json_object_set_new(o, "params_json",
			    w->params_json ? json_string(w->params_json) : json_null());
	json_object_set_new(o, "status", json_string(ks_status_name(w->status)));
	json_object_set_new(o, "not_run", json_boolean(w->not_run));
	for (size_t i = 0; i < WL_NREALS; i++)
		json_object_set_new(o, wl_reals[i].key, real(*wl_real((struct ks_wl_result *)w, i)));
	json_t *s = json_array();
	for (int i = 0; i < w->nsamples && w->samples_us; i++)
		json_array_append_new(s, real(w->samples_us[i]));
	json_object_set_new(o, "samples_us", s);
	json_object_set_new(o, "preempted", json_integer(w->preempted));
	json_t *seeds = json_array(), *abs = json_array(), *rel = json_array();
	int ns = w->nseeds < 0 ? 0 : w->nseeds > MAX_SEEDS ? MAX_SEEDS : w->nseeds;
	for (int i = 0; i < ns; i++) {
		json_array_append_new(seeds, json_integer((json_int_t)w->seeds[i]));
		json_array_append_new(abs, real(w->seed_abs_err[i]));
		json_array_append_new(rel, real(w->seed_rel_err[i]));
	}
	json_object_set_new(o, "seeds", seeds);
	json_object_set_new(o, "seed_abs_err", abs);
	json_object_set_new(o, "seed_rel_err", rel);
	json_object_set_new(o, "log", w->log ? json_string(w->log) : json_null());
	return o;
}

json_t *ks_wire_result(const struct ks_eval_result *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "status", json_string(ks_status_name(r->status)));
	json_object_set_new(o, "speedup", real(r->speedup));
	json_object_set_new(o, "library_speedup", real(r->library_speedup));
	json_object_set_new(o, "library", r->library ? json_string(r->library) : json_null());
	json_object_set_new(o, "kernel_hash", r->kernel_hash ? json_string(r->kernel_hash) : json_null());
	json_object_set_new(o, "compile_log", r->compile_log ? json_string(r->compile_log) : json_null());
	json_object_set_new(o, "sandbox", r->sandbox ? json_string(r->sandbox) : json_null());
	json_t *wls = json_array(), *checks = json_array();
	for (int i = 0; i < r->nworkloads; i++)
		json_array_append_new(wls, wl_wire(&r->workloads[i]));
	for (int i = 0; i < r->nchecks; i++)
		json_array_append_new(checks, wl_wire(&r->checks[i]));
	json_object_set_new(o, "workloads", wls);
	json_object_set_new(o, "checks", checks);
	return o;
}

/* a JSON array of reals -> a malloc'ed array (n entries, at most max) */
static int get_reals(json_t *o, const char *key, int max, double **out, int *n,
		     struct ks_error *e)
{
	json_t *arr = json_object_get(o, key);
	*out = NULL;
	*n = 0;
	if (!arr || json_is_null(arr))
		return 0;
	if (!json_is_array(arr) || (int)json_array_size(arr) > max)
		return ks_error_set(e, KS_EPROTO, "'%s' is not an array of at most %d numbers",
				    key, max);
	size_t len = json_array_size(arr);
	if (!len)
		return 0;
	double *v = malloc(len * sizeof(*v));
	if (!v)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	for (size_t i = 0; i < len; i++) {
		if (real_value(json_array_get(arr, i), &v[i])) {
			free(v);
			return ks_error_set(e, KS_EPROTO, "'%s'[%zu] is not a number", key, i);
		}
	}
	*out = v;
	*n = (int)len;
	return 0;
}

static int wl_parse(json_t *o, struct ks_wl_result *w, struct ks_error *e)
{
	if (!json_is_object(o))
		return ks_error_set(e, KS_EPROTO, "a workload entry is not an object");
	long long x = 0;
	int rc;
	if ((rc = get_int(o, "index", 0, 1 << 20, &x, e)))
		return rc;
	w->index = (int)x;
	w->is_check = json_is_true(json_object_get(o, "is_check"));
	w->not_run = json_is_true(json_object_get(o, "not_run"));
	if ((rc = get_str(o, "label", &w->label, e)) ||
	    (rc = get_str(o, "params_json", &w->params_json, e)) ||
	    (rc = get_str(o, "log", &w->log, e)) || (rc = get_status(o, &w->status, e)))
		return rc;
	for (size_t i = 0; i < WL_NREALS; i++)
		if ((rc = get_real(o, wl_reals[i].key, wl_real(w, i), e)))
			return rc;
	if ((rc = get_reals(o, "samples_us", MAX_SAMPLES, &w->samples_us, &w->nsamples, e)))
		return rc;
	/* a worker that does not send it did not count it */
	w->preempted = -1;
	if (json_object_get(o, "preempted") &&
	    (rc = get_int(o, "preempted", -1, 1LL << 50, &w->preempted, e)))
		return rc;
	json_t *seeds = json_object_get(o, "seeds");
	double *abs = NULL, *rel = NULL;
	int na = 0, nr = 0;
	if (seeds && !json_is_array(seeds))
		return ks_error_set(e, KS_EPROTO, "'seeds' is not an array");
	int ns = seeds ? (int)json_array_size(seeds) : 0;
	if (ns > MAX_SEEDS)
		return ks_error_set(e, KS_EPROTO, "more than %d seeds", MAX_SEEDS);
	if ((rc = get_reals(o, "seed_abs_err", MAX_SEEDS, &abs, &na, e)) ||
	    (rc = get_reals(o, "seed_rel_err", MAX_SEEDS, &rel, &nr, e)))
		goto out;
	if (na != ns || nr != ns) {
		rc = ks_error_set(e, KS_EPROTO, "%d seeds but %d and %d seed errors", ns, na, nr);
		goto out;
	}
	for (int i = 0; i < ns; i++) {
		json_t *s = json_array_get(seeds, (size_t)i);
		if (!json_is_integer(s)) {
			rc = ks_error_set(e, KS_EPROTO, "seed %d is not an integer", i);
			goto out;
		}
		w->seeds[i] = (unsigned long long)json_integer_value(s);
		w->seed_abs_err[i] = abs[i];
		w->seed_rel_err[i] = rel[i];
	}
	w->nseeds = ns;
out:
	free(abs);
	free(rel);
	return rc;
}

static int list_parse(json_t *o, const char *key, struct ks_wl_result **out, int *n,
		      struct ks_error *e)
{
	json_t *arr = json_object_get(o, key);
	if (!json_is_array(arr) || json_array_size(arr) > MAX_ENTRIES)
		return ks_error_set(e, KS_EPROTO, "'%s' is not an array of at most %d entries",
				    key, MAX_ENTRIES);
	/* one spare entry, as the evaluator allocates, so an empty list is not NULL */
	*out = calloc(json_array_size(arr) + 1, sizeof(**out));
	if (!*out)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v) {
		(*n)++;
		int rc = wl_parse(v, &(*out)[i], e);
		if (rc)
			return ks_error_wrap(e, "%s[%zu]", key, i);
	}
	return 0;
}

int ks_wire_result_parse(json_t *j, struct ks_eval_result *r, struct ks_error *e)
{
	memset(r, 0, sizeof(*r));
	int rc;
	if (!json_is_object(j)) {
		rc = ks_error_set(e, KS_EPROTO, "the result is not an object");
		goto fail;
	}
	if ((rc = get_status(j, &r->status, e)) || (rc = get_real(j, "speedup", &r->speedup, e)) ||
	    (rc = get_real(j, "library_speedup", &r->library_speedup, e)) ||
	    (rc = get_str(j, "library", &r->library, e)) ||
	    (rc = get_str(j, "kernel_hash", &r->kernel_hash, e)) ||
	    (rc = get_str(j, "compile_log", &r->compile_log, e)) ||
	    (rc = get_str(j, "sandbox", &r->sandbox, e)) ||
	    (rc = list_parse(j, "workloads", &r->workloads, &r->nworkloads, e)) ||
	    (rc = list_parse(j, "checks", &r->checks, &r->nchecks, e)))
		goto fail;
	return 0;
fail:
	ks_eval_result_release(r);
	return rc;
}

/* ---- public text forms ---------------------------------------------------------------- */

int ks_eval_result_to_wire(const struct ks_eval_result *r, struct ks_buf *out)
{
	json_t *j = ks_wire_result(r);
	int rc = ks_json_to_buf(j, JSON_COMPACT | JSON_PRESERVE_ORDER, out);
	json_decref(j);
	return rc;
}

int ks_eval_result_from_wire(const char *json, size_t len, struct ks_eval_result *r,
			     struct ks_error *e)
{
	memset(r, 0, sizeof(*r));
	json_error_t je;
	json_t *j = json_loadb(json, len, 0, &je);
	if (!j)
		return ks_error_set(e, KS_EPROTO, "result is not JSON: %s", je.text);
	int rc = ks_wire_result_parse(j, r, e);
	json_decref(j);
	return rc;
}
