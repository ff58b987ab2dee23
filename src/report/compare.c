/* ksearch compare: the best kernel of one run against the best of another, per timed
 * workload (contract in include/ksearch/report.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_impl.h"

/* the best candidate's figures on workload i: the re-measurement when there is one;
 * *phase says which */
static const struct rp_wl *best_wl(const struct rp_run *r, size_t i, const char **phase)
{
	if (r->best < 0)
		return NULL;
	const struct rp_cand *c = &r->cands[r->best];
	const struct rp_wl *w = c->final[i].present ? &c->final[i] : &c->search[i];
	*phase = c->final[i].present ? "final" : "search";
	return w->present && w->status && !strcmp(w->status, "PASSED") && isfinite(w->median_us) &&
			       w->median_us > 0
		       ? w
		       : NULL;
}

int ks_run_faster_beyond_noise(double a_us, double a_spread, double b_us, double b_spread)
{
	double sa = isfinite(a_spread) ? a_spread : 0, sb = isfinite(b_spread) ? b_spread : 0;
	return a_us * (1 + sa / 200) * (1 + KS_RUN_COMPARE_MIN_PCT / 100.0) < b_us * (1 - sb / 200);
}

static void verdict(struct ks_run_compare_row *row)
{
	/* each median is uncertain by half its interquartile range; a difference counts when
	 * it is larger than both halves together plus KS_RUN_COMPARE_MIN_PCT */
	double sa = isfinite(row->a_spread) ? row->a_spread : 0, sb = isfinite(row->b_spread) ? row->b_spread : 0;
	double margin = KS_RUN_COMPARE_MIN_PCT / 100.0;
	row->ratio = row->b_us / row->a_us;
	row->verdict = ks_run_faster_beyond_noise(row->b_us, sb, row->a_us, sa)   ? KS_RUN_COMPARE_FAST
		       : ks_run_faster_beyond_noise(row->a_us, sa, row->b_us, sb) ? KS_RUN_COMPARE_SLOW
										    : KS_RUN_COMPARE_SAME;
	/* the baselines were timed beside the kernels: same margin, the kernels' spreads */
	double ba = row->a_base_us, bb = row->b_base_us;
	row->base_differs = ba > 0 && bb > 0 &&
			    (bb * (1 + sb / 200) * (1 + margin) < ba * (1 - sa / 200) ||
			     bb * (1 - sb / 200) > ba * (1 + sa / 200) * (1 + margin));
}

/* one side of a row: the best's median, spread and baseline on a workload, and its phase */
static void row_side(const struct rp_wl *w, const char *phase, double *us, double *spread,
		     double *base_us, char *ph, size_t n)
{
	*us = w->median_us;
	*spread = w->spread_pct;
	*base_us = w->baseline_us > 0 ? w->baseline_us : NAN;
	snprintf(ph, n, "%s", phase);
}

/* the row of A's timed workload i against B's of the same label; 1 when both have a time */
static int compare_row(const struct rp_run *a, const struct rp_run *b, size_t i,
		       struct ks_run_compare_row *row)
{
	snprintf(row->label, sizeof(row->label), "%s", a->workloads[i].label ? a->workloads[i].label : "?");
	row->verdict = KS_RUN_COMPARE_MISSING;
	row->a_us = row->b_us = row->a_spread = row->b_spread = row->ratio = NAN;
	row->a_base_us = row->b_base_us = NAN;
	const char *pa = "", *pb = "";
	const struct rp_wl *wa = best_wl(a, i, &pa), *wb = NULL;
	for (size_t j = 0; j < b->nworkloads; j++)
		if (!b->workloads[j].is_check && b->workloads[j].label && a->workloads[i].label &&
		    !strcmp(b->workloads[j].label, a->workloads[i].label))
			wb = best_wl(b, j, &pb);
	if (wa)
		row_side(wa, pa, &row->a_us, &row->a_spread, &row->a_base_us, row->a_phase,
			 sizeof(row->a_phase));
	if (wb)
		row_side(wb, pb, &row->b_us, &row->b_spread, &row->b_base_us, row->b_phase,
			 sizeof(row->b_phase));
	if (!wa || !wb)
		return 0;
	verdict(row);
	return 1;
}

int ks_report_compare(const char *dir_a, const char *dir_b, struct ks_run_compare *out,
		      struct ks_error *e)
{
	memset(out, 0, sizeof(*out));
	struct rp_run a, b;
	int rc = rp_load(dir_a, NULL, &a, e);
	if (rc)
		return rc;
	if ((rc = rp_load(dir_b, NULL, &b, e))) {
		rp_release(&a);
		return rc;
	}
	const char *ta = a.run && a.run->task ? a.run->task : "?";
	const char *tb = b.run && b.run->task ? b.run->task : "?";
	snprintf(out->task, sizeof(out->task), "%s", ta);
	out->cand_a = a.best >= 0 ? (long)a.cands[a.best].c->id : -1;
	out->cand_b = b.best >= 0 ? (long)b.cands[b.best].c->id : -1;
	out->a_noisy = a.final_noisy;
	out->b_noisy = b.final_noisy;
	snprintf(out->a_noise, sizeof(out->a_noise), "%s", a.final_noisy ? a.final_noise : "");
	snprintf(out->b_noise, sizeof(out->b_noise), "%s", b.final_noisy ? b.final_noise : "");
	if (strcmp(ta, tb))
		rc = ks_error_set(e, KS_EINVAL, "runs '%s' and '%s' are of different tasks ('%s', '%s')",
				  dir_a, dir_b, ta, tb);
	else if (a.best < 0 || b.best < 0)
		rc = ks_error_set(e, KS_EINVAL, "run '%s' has no passing candidate to compare",
				  a.best < 0 ? dir_a : dir_b);
	if (!rc && !(out->rows = calloc(a.nworkloads + 1, sizeof(*out->rows))))
		rc = ks_error_set(e, KS_ENOMEM, "out of memory");
	double logsum = 0;
	int nlog = 0;
	for (size_t i = 0; !rc && i < a.nworkloads; i++) {
		if (a.workloads[i].is_check)
			continue;
		struct ks_run_compare_row *row = &out->rows[out->nrows++];
		if (!compare_row(&a, &b, i, row))
			continue;
		out->base_differs |= row->base_differs;
		logsum += log(row->ratio);
		nlog++;
	}
	out->geomean = nlog ? exp(logsum / nlog) : NAN;
	rp_release(&a);
	rp_release(&b);
	if (rc)
		ks_run_compare_release(out);
	return rc;
}

void ks_run_compare_release(struct ks_run_compare *c)
{
	free(c->rows);
	c->rows = NULL;
	c->nrows = 0;
}
