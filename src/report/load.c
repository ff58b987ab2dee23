/* Reading a run for a report: everything comes from the run store, once. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "report/report_impl.h"
#include "util/fs.h"
#include "util/os.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median_of(double *v, int n)
{
	if (n <= 0)
		return NAN;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double max_finite(double a, double b)
{
	if (!isfinite(a))
		return b;
	if (!isfinite(b))
		return a;
	return a > b ? a : b;
}

/* the larger of a and b where NAN is unknown (an infinite share of the tolerance counts) */
static double max_known(double a, double b)
{
	return isnan(a) ? b : isnan(b) ? a : a > b ? a : b;
}

#define RP_MAX_SEEDS 64

/* fold the evaluations of one phase and workload over seeds */
void rp_wl_fold(const struct ks_store_eval *ev, size_t n, const char *phase, int index,
		struct rp_wl *w)
{
	double med[RP_MAX_SEEDS], base[RP_MAX_SEEDS], lib[RP_MAX_SEEDS];
	int nt = 0, nb = 0, nl = 0;
	memset(w, 0, sizeof(*w));
	w->max_abs_err = w->max_rel_err = w->median_us = w->spread_pct = NAN;
	w->gflops = w->gbps = w->roofline_pct = w->baseline_us = w->speedup = NAN;
	w->library_us = w->library_speedup = w->tol_elem = w->tol_l2 = NAN;
	const struct ks_store_eval *timed = NULL;
	const char *fail_log = NULL, *any_log = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct ks_store_eval *x = &ev[i];
		if (x->workload != index || strcmp(x->phase ? x->phase : "search", phase))
			continue;
		int pass = x->status && !strcmp(x->status, "PASSED");
		if (!w->present || (!strcmp(w->status, "PASSED") && !pass))
			w->status = x->status ? x->status : "?";
		w->present = 1;
		w->max_abs_err = max_finite(w->max_abs_err, x->max_abs_err);
		w->max_rel_err = max_finite(w->max_rel_err, x->max_rel_err);
		w->tol_elem = max_known(w->tol_elem, x->tol_elem);
		w->tol_l2 = max_known(w->tol_l2, x->tol_l2);
		if (x->log && x->log[0]) {
			if (!pass && !fail_log)
				fail_log = x->log;
			if (!any_log)
				any_log = x->log;
		}
		/* a check row is stored with zeros where nothing was timed: a time is never 0 */
		if (isfinite(x->median_us) && x->median_us > 0 && nt < RP_MAX_SEEDS) {
			med[nt++] = x->median_us;
			w->spread_pct = max_finite(w->spread_pct, x->spread_pct);
			if (!timed)
				timed = x;
		}
		if (isfinite(x->baseline_us) && x->baseline_us > 0 && nb < RP_MAX_SEEDS)
			base[nb++] = x->baseline_us;
		if (isfinite(x->library_us) && x->library_us > 0 && nl < RP_MAX_SEEDS)
			lib[nl++] = x->library_us;
	}
	if (!w->present)
		return;
	w->log = fail_log ? fail_log : any_log;
	w->median_us = median_of(med, nt);
	w->baseline_us = median_of(base, nb);
	w->library_us = median_of(lib, nl);
	if (timed) {
		/* throughput scales with 1/time: rescale the first timed seed's figures */
		double f = timed->median_us > 0 && w->median_us > 0 ? timed->median_us / w->median_us : 1;
		w->gflops = timed->gflops * f;
		w->gbps = timed->gbps * f;
		w->roofline_pct = timed->roofline_pct * f;
	}
	if (isfinite(w->median_us) && w->median_us > 0 && isfinite(w->baseline_us))
		w->speedup = w->baseline_us / w->median_us;
	if (isfinite(w->median_us) && w->median_us > 0 && isfinite(w->library_us))
		w->library_speedup = w->library_us / w->median_us;
}

static int is_passed(const char *s)
{
	return s && !strcmp(s, "PASSED");
}

static void cand_rank(struct rp_cand *rc, size_t nw)
{
	const struct ks_store_candidate *c = rc->c;
	const struct rp_wl *w = NULL;
	rc->speedup = NAN;
	rc->speedup_spread = NAN;
	rc->phase = "search";
	if (c->has_final && is_passed(c->final_status)) {
		rc->rank_group = 0;
		rc->speedup = c->final_speedup;
		rc->phase = "final";
		w = rc->final;
	} else if (c->has_result && is_passed(c->status) && !c->has_final) {
		rc->rank_group = 1;
		rc->speedup = c->speedup;
		w = rc->search;
	} else {
		rc->rank_group = c->has_result ? 2 : 3;
	}
	double sum_log = 0;
	int nl = 0;
	rc->library_speedup = NAN;
	for (size_t i = 0; w && i < nw; i++) {
		if (w[i].present)
			rc->speedup_spread = max_finite(rc->speedup_spread, w[i].spread_pct);
		if (w[i].present && isfinite(w[i].library_speedup) && w[i].library_speedup > 0) {
			sum_log += log(w[i].library_speedup);
			nl++;
		}
	}
	if (nl)
		rc->library_speedup = exp(sum_log / nl);
	/* the search phase's own figure, shown beside a final one */
	rc->search_speedup = c->has_result && is_passed(c->status) ? c->speedup : NAN;
	rc->search_spread = NAN;
	for (size_t i = 0; i < nw; i++)
		if (rc->search[i].present)
			rc->search_spread = max_finite(rc->search_spread, rc->search[i].spread_pct);
}

static int cmp_rank(const void *a, const void *b, void *arg)
{
	const struct rp_cand *cands = arg;
	const struct rp_cand *x = &cands[*(const int *)a];
	const struct rp_cand *y = &cands[*(const int *)b];
	if (x->rank_group != y->rank_group)
		return x->rank_group - y->rank_group;
	double sx = isfinite(x->speedup) ? x->speedup : -1, sy = isfinite(y->speedup) ? y->speedup : -1;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x->c->id < y->c->id ? -1 : x->c->id > y->c->id;
}

static void fmt_gap(char *dst, size_t n, double pct)
{
	snprintf(dst, n, "%+.*f%%", fabs(pct) < 10 ? 1 : 0, pct);
}

/* A verdict from before the interval was given in the gap's own units ("by 403.8% ± 7.4%":
 * a gap exp(d) - 1 beside a half-width of d, in log units) is rewritten from the event's
 * diff_pct and ci_pct to "by 403.8% (95% interval +366% to +443%)". */
static void verdict_upgrade(char *text, size_t n, json_t *d)
{
	char *pm = strstr(text, "\xc2\xb1 ");
	json_t *dp = json_object_get(d, "diff_pct"), *cp = json_object_get(d, "ci_pct");
	if (!pm || pm == text || json_object_get(d, "lo_pct") || !json_is_number(dp) ||
	    !json_is_number(cp))
		return;
	/* diff_pct is the chosen over the other; a "kept" verdict states the other's gap */
	double diff = log(1 + json_number_value(dp) / 100), err = json_number_value(cp) / 100;
	if (strstr(text, " kept ("))
		diff = -diff;
	char rest[256], ci[96], lo[24], hi[24];
	const char *after = pm + 3; /* the old half-width: "7.4%" or "? (no samples)" */
	if (!strncmp(after, "? (no samples)", 14))
		after += 14;
	else
		while (*after && *after != ' ' && *after != ',' && *after != ')')
			after++;
	snprintf(rest, sizeof(rest), "%s", after);
	fmt_gap(lo, sizeof(lo), (exp(diff - err) - 1) * 100);
	fmt_gap(hi, sizeof(hi), (exp(diff + err) - 1) * 100);
	if (isfinite(diff) && err > 0)
		snprintf(ci, sizeof(ci), "95%% interval %s to %s", lo, hi);
	else
		snprintf(ci, sizeof(ci), "95%% interval unknown, no samples");
	size_t at = (size_t)(pm - text) - 1;
	if (text[at] == '(') /* "inside the noise (± 3.1%)" */
		snprintf(text + at, n - at, "(%s%s", ci, rest);
	else /* "by 8.0% ± 3.1%[, inside the noise]" */
		snprintf(text + at, n - at, " (%s%s)", ci, rest);
}

/* The final's verdict (src/run/final.c): which candidate it crowned, how sure, and
 * whether the measurements were noisy.  The latest event wins (a resumed run). */
static void final_event(struct rp_run *r, const char *data)
{
	json_t *d = json_loads(data ? data : "", 0, NULL);
	if (!json_is_object(d)) {
		json_decref(d);
		return;
	}
	json_t *c = json_object_get(d, "chosen"), *v = json_object_get(d, "verdict"),
	       *n = json_object_get(d, "noise");
	r->final_chosen = json_is_integer(c) ? (int64_t)json_integer_value(c) : -1;
	snprintf(r->final_verdict, sizeof(r->final_verdict), "%s",
		 json_is_string(v) ? json_string_value(v) : "");
	verdict_upgrade(r->final_verdict, sizeof(r->final_verdict), d);
	r->final_noisy = json_is_true(json_object_get(d, "noisy"));
	snprintf(r->final_noise, sizeof(r->final_noise), "%s",
		 json_is_string(n) ? json_string_value(n) : "");
	r->has_final_event = 1;
	json_t *secs = json_object_get(d, "seconds"), *rounds = json_object_get(d, "rounds");
	r->final_s = json_is_number(secs) ? json_number_value(secs) : NAN;
	r->final_rounds = json_is_integer(rounds) ? (int)json_integer_value(rounds) : 0;
	json_t *stop = json_object_get(d, "stop"), *why = json_object_get(d, "stop_reason");
	snprintf(r->final_stop, sizeof(r->final_stop), "%s",
		 json_is_string(stop) ? json_string_value(stop) : "");
	snprintf(r->final_stop_reason, sizeof(r->final_stop_reason), "%s",
		 json_is_string(why) ? json_string_value(why) : "");
	json_decref(d);
}

/* the roofs the run's "% of roofline" used */
const char *const rp_time_names[RP_NTIMES] = {"compile", "reference", "start", "inputs",
					       "check", "compare", "timing", "other"};

/* one candidate's breakdown of its wall time */
static void times_event(struct rp_run *r, const char *data)
{
	json_t *d = json_loads(data ? data : "", 0, NULL);
	if (!d)
		return;
	for (int k = 0; k < RP_NTIMES; k++) {
		char key[32];
		snprintf(key, sizeof(key), "%s_s", rp_time_names[k]);
		json_t *v = json_object_get(d, key);
		r->times[k] += json_is_number(v) ? json_number_value(v) : 0;
	}
	r->ntimes++;
	json_decref(d);
}

/* a roof's provenance from the event (all zero when the run recorded none) */
static void roof_measure(json_t *o, struct ks_spec_measure *m)
{
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	if (ks_spec_measure_parse_json(text, m))
		memset(m, 0, sizeof(*m));
	free(text);
}

static void roofline_event(struct rp_run *r, const char *data)
{
	json_t *d = json_loads(data ? data : "", 0, NULL);
	json_t *g = json_object_get(d, "compute_gflops"), *b = json_object_get(d, "memory_gbps");
	json_t *t = json_object_get(d, "dtype");
	r->roof_gflops = json_is_number(g) ? json_number_value(g) : 0;
	r->roof_gbps = json_is_number(b) ? json_number_value(b) : 0;
	snprintf(r->roof_dtype, sizeof(r->roof_dtype), "%s", json_is_string(t) ? json_string_value(t) : "");
	json_t *sn = json_object_get(d, "spec"), *st = json_object_get(d, "spec_title");
	snprintf(r->spec_name, sizeof(r->spec_name), "%s", json_is_string(sn) ? json_string_value(sn) : "");
	snprintf(r->spec_title, sizeof(r->spec_title), "%s",
		 json_is_string(st) ? json_string_value(st) : "");
	r->peaks_measured = json_is_true(json_object_get(d, "peaks_measured"));
	roof_measure(json_object_get(d, "memory_measured"), &r->roof_gbps_measure);
	roof_measure(json_object_get(d, "compute_measured"), &r->roof_gflops_measure);
	json_decref(d);
}

/* The best: the candidate the final crowned when it is ranked with a passing final,
 * else the top of the ranking (runs from before the verdict was recorded) */
static void crown(struct rp_run *r)
{
	r->best = -1;
	if (r->has_final_event && r->final_chosen > 0)
		for (size_t k = 0; k < r->ncands; k++) {
			int i = r->ranked[k];
			if (r->cands[i].c->id != r->final_chosen || r->cands[i].rank_group != 0)
				continue;
			memmove(r->ranked + 1, r->ranked, k * sizeof(*r->ranked));
			r->ranked[0] = i;
			r->best = i;
			return;
		}
	if (r->ncands && r->cands[r->ranked[0]].rank_group <= 1)
		r->best = r->ranked[0];
}

/* "2026-11-29T17:30:00.123Z" -> seconds since the epoch (NAN when malformed) */
static double iso_seconds(const char *s)
{
	struct tm tm;
	double frac = 0;
	if (!s)
		return NAN;
	memset(&tm, 0, sizeof(tm));
	const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return NAN;
	if (*p == '.')
		frac = strtod(p, NULL);
	return (double)timegm(&tm) + frac;
}

static void span_add(double *lo, double *hi, const char *ts)
{
	double t = iso_seconds(ts);
	if (!isfinite(t))
		return;
	if (!isfinite(*lo) || t < *lo)
		*lo = t;
	if (!isfinite(*hi) || t > *hi)
		*hi = t;
}

static void status_count(struct rp_run *r, const char *status)
{
	for (int i = 0; i < r->nfails; i++)
		if (!strcmp(r->fails[i].status, status)) {
			r->fails[i].count++;
			return;
		}
	if (r->nfails < (int)(sizeof(r->fails) / sizeof(r->fails[0])))
		r->fails[r->nfails++] = (struct rp_status_count){status, 1};
}

static const char *lang_ext(const char *lang)
{
	static const struct {
		const char *lang, *ext;
	} map[] = {{"c", "c"}, {"cuda", "cu"}, {"metal", "metal"}, {"opencl", "cl"}};
	for (size_t i = 0; lang && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(lang, map[i].lang))
			return map[i].ext;
	return lang && lang[0] ? lang : "txt";
}

#define RP_MAX_COMPILE_FETCH 200 /* compile logs read for failure examples */

/* the first log line that explains a failed candidate: the compiler's output for a compile
 * error, else the log of a failing evaluation */
static int fail_line_load(struct ks_store *s, const struct rp_run *r, struct rp_cand *c,
			  int *fetches, struct ks_error *e)
{
	const struct ks_store_candidate *sc = c->c;
	if (!sc->has_result || is_passed(sc->status))
		return 0;
	if (sc->compile_status && !strcmp(sc->compile_status, "failed") &&
	    *fetches < RP_MAX_COMPILE_FETCH) {
		struct ks_store_candidate *full = NULL;
		int rc = ks_store_get_candidate(s, sc->id, &full, e);
		if (rc)
			return rc;
		(*fetches)++;
		rp_first_line(full->compile_log, c->fail_line, sizeof(c->fail_line));
		ks_store_free(full);
	}
	for (size_t w = 0; w < r->nworkloads && !c->fail_line[0]; w++)
		if (c->search[w].present && !is_passed(c->search[w].status) && c->search[w].log)
			rp_first_line(c->search[w].log, c->fail_line, sizeof(c->fail_line));
	for (size_t w = 0; w < r->nworkloads && !c->fail_line[0]; w++)
		if (c->search[w].log)
			rp_first_line(c->search[w].log, c->fail_line, sizeof(c->fail_line));
	return 0;
}

static void target_from_config(struct rp_run *r)
{
	static const char *const keys[] = {"target", "spec", "device"};
	json_t *cfg = r->run->config ? json_loads(r->run->config, 0, NULL) : NULL;
	if (!json_is_object(cfg))
		goto out;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = json_string_value(json_object_get(cfg, keys[i]));
		if (v && v[0]) {
			snprintf(r->target, sizeof(r->target), "%s", v);
			break;
		}
	}
	const char *w = json_string_value(json_object_get(cfg, "workloads"));
	if (w && w[0] && strcmp(w, "all"))
		snprintf(r->selection, sizeof(r->selection), "%s", w);
out:
	json_decref(cfg);
}

/* the options with their defaults, and the store's path checked */
static int load_open(const char *dir, const struct ks_report_opts *o, struct rp_run *r,
		     struct ks_store **s, struct ks_error *e)
{
	char db[4200];
	memset(r, 0, sizeof(*r));
	r->best = -1;
	r->tree.root = -1;
	r->wall_s = NAN;
	r->final_s = NAN;
	ks_report_opts_init(&r->opts);
	if (o) {
		r->opts = *o;
		if (r->opts.top <= 0 || r->opts.top > 1000)
			r->opts.top = 10;
		if (r->opts.fail_examples < 0 || r->opts.fail_examples > 50)
			r->opts.fail_examples = 3;
	}
	if (!dir || !dir[0])
		return ks_error_set(e, KS_EINVAL, "no run directory given");
	if (snprintf(r->dir, sizeof(r->dir), "%s", dir) >= (int)sizeof(r->dir))
		return ks_error_set(e, KS_ELIMIT, "run directory path too long '%.64s...'", dir);
	if (ks_path_join(db, sizeof(db), dir, "run.db") || !ks_path_exists(db))
		return ks_error_set(e, KS_ENOTFOUND, "no run database in '%s' (expected %s/run.db)",
				    dir, dir);
	return ks_store_open(dir, 0, s, e);
}

/* one candidate: its evaluations folded per workload and phase, its rank, its counts */
static int load_cand(struct ks_store *s, struct rp_run *r, size_t i, int *fetches,
		     double *lo, double *hi, struct ks_error *e)
{
	struct rp_cand *c = &r->cands[i];
	c->c = &r->cands_raw[i];
	r->ranked[i] = (int)i;
	int rc = ks_store_list_evals(s, c->c->id, NULL, &c->evals, &c->nevals, e);
	if (rc)
		return rc;
	c->search = calloc(r->nworkloads + 1, sizeof(*c->search));
	c->final = calloc(r->nworkloads + 1, sizeof(*c->final));
	if (!c->search || !c->final)
		return ks_error_set(e, KS_ENOMEM, "report: out of memory");
	for (size_t w = 0; w < r->nworkloads; w++) {
		rp_wl_fold(c->evals, c->nevals, "search", r->workloads[w].index, &c->search[w]);
		rp_wl_fold(c->evals, c->nevals, "final", r->workloads[w].index, &c->final[w]);
		c->final_any |= c->final[w].present;
	}
	for (size_t k = 0; k < c->nevals; k++)
		span_add(lo, hi, c->evals[k].created);
	span_add(lo, hi, c->c->created);
	cand_rank(c, r->nworkloads);
	r->has_library |= isfinite(c->library_speedup);
	if ((rc = fail_line_load(s, r, c, fetches, e)))
		return rc;
	if (c->c->has_result) {
		r->evaluated++;
		if (is_passed(c->c->status))
			r->passed++;
		else {
			r->failed++;
			status_count(r, c->c->status ? c->c->status : "?");
		}
	}
	r->any_final |= c->c->has_final;
	return 0;
}

static int load_cands(struct ks_store *s, struct rp_run *r, double *lo, double *hi,
		      struct ks_error *e)
{
	int fetches = 0, rc = 0;
	r->cands = calloc(r->ncands ? r->ncands : 1, sizeof(*r->cands));
	r->ranked = calloc(r->ncands ? r->ncands : 1, sizeof(*r->ranked));
	if (!r->cands || !r->ranked)
		return ks_error_set(e, KS_ENOMEM, "report: out of memory for %zu candidates",
				    r->ncands);
	for (size_t i = 0; i < r->ncands && !rc; i++)
		rc = load_cand(s, r, i, &fetches, lo, hi, e);
	if (!rc)
		ks_os_qsort_r(r->ranked, r->ncands, sizeof(*r->ranked), cmp_rank, r->cands);
	return rc;
}

/* the events the report shows: the final's verdict, the library's name, the roofs, the
 * candidates' time breakdowns, why the search stopped, what the model's replies lacked */
static void load_event(struct rp_run *r, const struct ks_store_event *ev)
{
	const char *k = ev->kind ? ev->kind : "";
	if (!strcmp(k, "final"))
		final_event(r, ev->data);
	if (!strcmp(k, "library") && ev->message)
		snprintf(r->library, sizeof(r->library), "%s", ev->message);
	if (!strcmp(k, "roofline"))
		roofline_event(r, ev->data);
	if (!strcmp(k, "eval_times"))
		times_event(r, ev->data);
	/* the search driver's reason for ending; the latest wins (a resumed run) */
	if (!strcmp(k, "stopped") && ev->message)
		snprintf(r->stopped, sizeof(r->stopped), "%s", ev->message);
	if (!strcmp(k, "llm_rejected") && ev->message &&
	    !ks_buf_add(&r->model_rejects, ev->message, strlen(ev->message) + 1))
		r->nmodel_rejects++;
}

/* the best's file, and the newest world-model snapshot (the list is oldest first) */
static void load_best_and_tree(struct rp_run *r, const char *dir,
			       const struct ks_store_snapshot *snaps, size_t nsnaps)
{
	if (r->best >= 0) {
		char name[64];
		snprintf(name, sizeof(name), "best.%s", lang_ext(r->cands[r->best].c->language));
		if (ks_path_join(r->best_file, sizeof(r->best_file), dir, name) == 0)
			r->best_file_exists = ks_path_exists(r->best_file);
	}
	r->tree.nsnapshots = (int)nsnaps;
	if (nsnaps) {
		const struct ks_store_snapshot *snap = &snaps[nsnaps - 1];
		r->tree.snapshot_round = snap->round;
		r->tree.snapshot_version = snap->version;
		rp_tree_parse(&r->tree, snap->json, r);
	}
}

int rp_load(const char *dir, const struct ks_report_opts *o, struct rp_run *r,
	    struct ks_error *e)
{
	struct ks_store *s = NULL;
	struct ks_store_snapshot *snaps = NULL;
	struct ks_store_event *events = NULL;
	size_t nsnaps = 0, nevents = 0;
	int rc = load_open(dir, o, r, &s, e);
	if (rc)
		return rc;
	if ((rc = ks_store_get_run(s, &r->run, e)) ||
	    (rc = ks_store_list_workloads(s, &r->workloads, &r->nworkloads, e)) ||
	    (rc = ks_store_list_candidates(s, KS_STORE_ORDER_ID, &r->cands_raw, &r->ncands, e)) ||
	    (rc = ks_store_convergence(s, &r->conv, &r->nconv, e)) ||
	    (rc = ks_store_list_llm(s, &r->llm, &r->nllm, e)) ||
	    (rc = ks_store_list_snapshots(s, &snaps, &nsnaps, e)) ||
	    (rc = ks_store_list_events(s, &events, &nevents, e)))
		goto out;
	double lo = iso_seconds(r->run->created), hi = NAN;
	r->started = isfinite(lo) ? lo : 0;
	if ((rc = load_cands(s, r, &lo, &hi, e)))
		goto out;
	for (size_t i = 0; i < nevents; i++) {
		span_add(&lo, &hi, events[i].ts);
		load_event(r, &events[i]);
	}
	crown(r);
	if (!r->library[0])
		snprintf(r->library, sizeof(r->library), "library");
	for (size_t i = 0; i < r->nllm; i++)
		span_add(&lo, &hi, r->llm[i].created);
	for (size_t i = 0; i < nsnaps; i++)
		span_add(&lo, &hi, snaps[i].created);
	if (isfinite(lo) && isfinite(hi) && hi >= lo)
		r->wall_s = hi - lo;
	target_from_config(r);
	load_best_and_tree(r, dir, snaps, nsnaps);
	if (r->best >= 0)
		rc = ks_shape_picks_load(s, r->cands[r->best].c->id, &r->picks, e);
out:
	ks_store_free(snaps);
	ks_store_free(events);
	ks_store_close(s);
	if (rc)
		rp_release(r);
	return rc;
}

void rp_release(struct rp_run *r)
{
	for (size_t i = 0; r->cands && i < r->ncands; i++) {
		ks_store_free(r->cands[i].evals);
		free(r->cands[i].search);
		free(r->cands[i].final);
	}
	free(r->cands);
	free(r->ranked);
	ks_store_free(r->run);
	ks_store_free(r->workloads);
	ks_store_free(r->cands_raw);
	ks_store_free(r->conv);
	ks_store_free(r->llm);
	ks_buf_release(&r->model_rejects);
	rp_tree_release(&r->tree);
	memset(r, 0, sizeof(*r));
	r->best = -1;
	r->tree.root = -1;
}
