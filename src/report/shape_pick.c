/* The per-shape pick (include/ksearch/report.h): per timed workload, the passing candidate
 * fastest there beyond the noise, each compared with the overall best in the phase its own
 * figures come from.  Computed from the store's evaluations (folded over seeds as the
 * report folds them) and kept by a run as its "per_shape" event. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report/report_impl.h"

static int passed(const char *s)
{
	return s && !strcmp(s, "PASSED");
}

/* the phase a candidate's figures come from: "final" when re-measured and passed, "search"
 * when passed and never re-measured, NULL when it is out of the running */
static const char *cand_phase(const struct ks_store_candidate *c)
{
	if (c->has_final)
		return passed(c->final_status) ? "final" : NULL;
	return c->has_result && passed(c->status) ? "search" : NULL;
}

/* one candidate's folded times in one phase, per timed workload (wls order) */
static int fold_phase(struct ks_store *s, long long id, const char *phase,
		      const struct ks_store_workload *wls, size_t nw, struct rp_wl *out,
		      struct ks_error *e)
{
	struct ks_store_eval *ev = NULL;
	size_t n = 0;
	int rc = ks_store_list_evals(s, id, phase, &ev, &n, e);
	for (size_t w = 0; !rc && w < nw; w++) {
		rp_wl_fold(ev, n, phase, wls[w].index, &out[w]);
		/* the folded strings point into ev, freed below: keep the verdict alone */
		out[w].status = passed(out[w].status) ? "PASSED" : "FAILED";
		out[w].log = NULL;
	}
	ks_store_free(ev);
	return rc;
}

static int timed(const struct rp_wl *w)
{
	return w->present && passed(w->status) && isfinite(w->median_us) && w->median_us > 0;
}

/* the best's own figure as every workload's first pick, in its ranking phase */
static void picks_init(struct ks_shape_picks *p, const struct ks_store_workload *wls, size_t nw,
		       const struct rp_wl *bw, const char *phase)
{
	for (size_t w = 0; w < nw && p->n < KS_SHAPE_PICK_MAX; w++) {
		if (wls[w].is_check || !timed(&bw[w]))
			continue;
		p->w[p->n++] = (struct ks_shape_pick){
			.workload = wls[w].index, .candidate = p->best, .phase = phase,
			.median_us = bw[w].median_us, .spread_pct = bw[w].spread_pct,
			.best_us = bw[w].median_us, .best_spread_pct = bw[w].spread_pct,
			.speedup_vs_best = 1};
	}
}

/* candidate id's times (x, in phase) against the best's in the same phase (b) */
static void picks_offer(struct ks_shape_picks *p, long long id, const char *phase,
			const struct ks_store_workload *wls, size_t nw, const struct rp_wl *x,
			const struct rp_wl *b)
{
	for (int k = 0; k < p->n; k++) {
		struct ks_shape_pick *pk = &p->w[k];
		size_t w = 0;
		while (w < nw && wls[w].index != pk->workload)
			w++;
		if (w == nw || !timed(&x[w]) || !timed(&b[w]))
			continue;
		double sp = b[w].median_us / x[w].median_us;
		if (!ks_run_faster_beyond_noise(x[w].median_us, x[w].spread_pct, b[w].median_us,
						b[w].spread_pct) ||
		    sp <= pk->speedup_vs_best)
			continue;
		*pk = (struct ks_shape_pick){
			.workload = pk->workload, .candidate = id, .phase = phase,
			.median_us = x[w].median_us, .spread_pct = x[w].spread_pct,
			.best_us = b[w].median_us, .best_spread_pct = b[w].spread_pct,
			.speedup_vs_best = sp};
	}
}

static void picks_count(struct ks_shape_picks *p)
{
	p->others = 0;
	for (int k = 0; k < p->n; k++)
		p->others += p->w[k].candidate != p->best;
}

/* the best's figures in both phases, then every other candidate offered */
static int picks_run(struct ks_store *s, struct ks_shape_picks *p,
		     const struct ks_store_candidate *cands, size_t nc,
		     const struct ks_store_workload *wls, size_t nw, struct rp_wl *buf,
		     struct ks_error *e)
{
	struct rp_wl *bs = buf, *bf = buf + nw, *x = buf + 2 * nw;
	const struct ks_store_candidate *best = NULL;
	for (size_t i = 0; i < nc; i++)
		if (cands[i].id == p->best)
			best = &cands[i];
	const char *bphase = best ? cand_phase(best) : NULL;
	if (!bphase)
		return 0; /* the best did not pass: nothing to pick against */
	int rc = fold_phase(s, p->best, "search", wls, nw, bs, e);
	if (!rc && !strcmp(bphase, "final"))
		rc = fold_phase(s, p->best, "final", wls, nw, bf, e);
	if (rc)
		return rc;
	picks_init(p, wls, nw, !strcmp(bphase, "final") ? bf : bs, bphase);
	for (size_t i = 0; i < nc && !rc; i++) {
		const char *ph = cand_phase(&cands[i]);
		if (!ph || cands[i].id == p->best || (!strcmp(ph, "final") && strcmp(bphase, "final")))
			continue;
		if (!(rc = fold_phase(s, cands[i].id, ph, wls, nw, x, e)))
			picks_offer(p, cands[i].id, !strcmp(ph, "final") ? "final" : "search", wls,
				    nw, x, !strcmp(ph, "final") ? bf : bs);
	}
	return rc;
}

int ks_shape_picks_compute(struct ks_store *s, long long best, struct ks_shape_picks *p,
			   struct ks_error *e)
{
	struct ks_store_candidate *cands = NULL;
	struct ks_store_workload *wls = NULL;
	size_t nc = 0, nw = 0;
	memset(p, 0, sizeof(*p));
	p->best = best;
	int rc = ks_store_list_candidates(s, KS_STORE_ORDER_ID, &cands, &nc, e);
	if (!rc)
		rc = ks_store_list_workloads(s, &wls, &nw, e);
	struct rp_wl *buf = rc ? NULL : calloc(3 * nw + 1, sizeof(*buf));
	if (!rc && !buf)
		rc = ks_error_set(e, KS_ENOMEM, "per-shape pick: out of memory");
	if (!rc)
		rc = picks_run(s, p, cands, nc, wls, nw, buf, e);
	picks_count(p);
	free(buf);
	ks_store_free(cands);
	ks_store_free(wls);
	return rc;
}

static double jnum(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* the picks of a "per_shape" event's data; 0 when it is for another best or malformed */
static int picks_parse(const char *data, long long best, struct ks_shape_picks *p)
{
	json_t *d = json_loads(data ? data : "", 0, NULL), *a = json_object_get(d, "workloads");
	size_t i;
	json_t *x;
	int ok = json_is_array(a) && json_integer_value(json_object_get(d, "best")) == best;
	memset(p, 0, sizeof(*p));
	p->best = best;
	json_array_foreach(ok ? a : NULL, i, x) {
		const char *ph = json_string_value(json_object_get(x, "phase"));
		if (p->n == KS_SHAPE_PICK_MAX || !ph)
			break;
		p->w[p->n++] = (struct ks_shape_pick){
			.workload = (int)json_integer_value(json_object_get(x, "workload")),
			.candidate = json_integer_value(json_object_get(x, "candidate")),
			.phase = !strcmp(ph, "final") ? "final" : "search",
			.median_us = jnum(x, "median_us"), .spread_pct = jnum(x, "spread_pct"),
			.best_us = jnum(x, "best_us"), .best_spread_pct = jnum(x, "best_spread_pct"),
			.speedup_vs_best = jnum(x, "speedup_vs_best")};
	}
	json_decref(d);
	picks_count(p);
	p->recorded = ok;
	return ok;
}

int ks_shape_picks_load(struct ks_store *s, long long best, struct ks_shape_picks *p,
			struct ks_error *e)
{
	struct ks_store_event *ev = NULL;
	size_t n = 0;
	const char *data = NULL;
	int rc = ks_store_list_events(s, &ev, &n, e);
	if (rc)
		return rc;
	/* the latest wins: a resumed run that ended again */
	for (size_t i = 0; i < n; i++)
		if (ev[i].kind && !strcmp(ev[i].kind, "per_shape"))
			data = ev[i].data;
	int got = data && picks_parse(data, best, p);
	ks_store_free(ev);
	return got ? 0 : ks_shape_picks_compute(s, best, p, e);
}

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

int ks_shape_picks_json(const struct ks_shape_picks *p, struct ks_buf *out)
{
	json_t *a = json_array();
	for (int k = 0; a && k < p->n; k++) {
		const struct ks_shape_pick *x = &p->w[k];
		json_array_append_new(
			a, json_pack("{s:i, s:I, s:s, s:o, s:o, s:o, s:o, s:o}", "workload",
				     x->workload, "candidate", (json_int_t)x->candidate, "phase",
				     x->phase, "median_us", num(x->median_us), "spread_pct",
				     num(x->spread_pct), "best_us", num(x->best_us),
				     "best_spread_pct", num(x->best_spread_pct), "speedup_vs_best",
				     num(x->speedup_vs_best)));
	}
	json_t *d = a ? json_pack("{s:I, s:i, s:o}", "best", (json_int_t)p->best, "others",
				  p->others, "workloads", a)
		      : NULL;
	char *text = d ? json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	int rc = text ? ks_buf_adds(out, text) : KS_ENOMEM;
	free(text);
	json_decref(d);
	return rc;
}
