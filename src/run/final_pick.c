/* The final's statistics and choice (final_pick.h). */
#include "run/final_pick.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/stats.h"

int ks_final_pool_add(double **dst, int *ndst, const double *src, int n)
{
	if (n <= 0)
		return 0;
	double *d = realloc(*dst, sizeof(double) * (size_t)(*ndst + n));
	if (!d)
		return -1;
	memcpy(d + *ndst, src, sizeof(double) * (size_t)n);
	*dst = d;
	*ndst += n;
	return 0;
}

void ks_final_cand_release(struct ks_final_cand *c)
{
	for (int i = 0; c->wl && i < c->nwl; i++) {
		free(c->wl[i].cand);
		free(c->wl[i].base);
		free(c->wl[i].lib);
	}
	free(c->wl);
	c->wl = NULL;
	c->nwl = 0;
}

void ks_final_cand_stats(struct ks_final_cand *c)
{
	double sum_log = 0, var = 0;
	int w = 0;
	c->speedup = NAN;
	c->rel_ci = INFINITY;
	c->spread_pct = 0;
	for (int i = 0; c->wl && i < c->nwl; i++) {
		const struct ks_final_pool *p = &c->wl[i];
		if (!p->ncand || !p->nbase)
			continue;
		struct ks_stats sc, sb;
		ks_stats_compute(p->cand, (size_t)p->ncand, &sc);
		ks_stats_compute(p->base, (size_t)p->nbase, &sb);
		if (!(sc.median > 0) || !(sb.median > 0))
			continue;
		double hc = ks_stats_median_rel_ci(p->cand, (size_t)p->ncand);
		double hb = ks_stats_median_rel_ci(p->base, (size_t)p->nbase);
		sum_log += log(sb.median / sc.median);
		var += hc * hc + hb * hb;
		if (sc.spread_pct > c->spread_pct)
			c->spread_pct = sc.spread_pct;
		w++;
	}
	if (w) {
		/* the log of a geometric mean is the mean of the logs; relative half-widths
		 * of medians are close to half-widths of their logs */
		c->speedup = exp(sum_log / w);
		c->rel_ci = sqrt(var) / w;
	} else if (c->known_speedup > 0) {
		c->speedup = c->known_speedup;
	}
}

static int usable(const struct ks_final_cand *c)
{
	return c->passed && isfinite(c->speedup) && c->speedup > 0;
}

static int search_leader(const struct ks_final_cand *c, int n)
{
	for (int i = 0; i < n; i++)
		if (usable(&c[i]))
			return i;
	return -1;
}

/* the fastest by the pooled speedup, skipping index skip */
static int fastest(const struct ks_final_cand *c, int n, int skip)
{
	int f = -1;
	for (int i = 0; i < n; i++)
		if (i != skip && usable(&c[i]) && (f < 0 || c[i].speedup > c[f].speedup))
			f = i;
	return f;
}

int ks_final_leaders(const struct ks_final_cand *c, int n, int *out, int max)
{
	int k = 0, l = search_leader(c, n);
	if (l < 0 || max < 1)
		return 0;
	out[k++] = l;
	int f = fastest(c, n, -1);
	if (f == l)
		f = fastest(c, n, l);
	if (f >= 0 && k < max)
		out[k++] = f;
	return k;
}

/* ln(a / b) and its 95% half-width */
static void compare(const struct ks_final_cand *a, const struct ks_final_cand *b, double *diff,
		    double *err)
{
	*diff = log(a->speedup / b->speedup);
	*err = sqrt(a->rel_ci * a->rel_ci + b->rel_ci * b->rel_ci);
}

/* the gap between the two leaders (log units) and its 95% half-width; 0 without two */
static int leaders_gap(const struct ks_final_cand *c, int n, double *diff, double *err)
{
	int lead[2];
	if (ks_final_leaders(c, n, lead, 2) < 2)
		return 0;
	compare(&c[lead[0]], &c[lead[1]], diff, err);
	return 1;
}

enum ks_final_stop ks_final_stop_rule(const struct ks_final_cand *c, int n,
				      const struct ks_final_progress *p, double *noise_pct)
{
	double diff, err;
	*noise_pct = NAN;
	if (!leaders_gap(c, n, &diff, &err))
		return KS_FINAL_ALONE;
	if (isfinite(err))
		*noise_pct = err * 100;
	if (p->rounds < KS_FINAL_MIN_ROUNDS)
		return KS_FINAL_GO_ON;
	if (fabs(diff) > err)
		return KS_FINAL_DECIDED;
	if (err * 100 <= KS_FINAL_MAX_NOISE_PCT)
		return KS_FINAL_QUIET;
	if (p->rounds >= KS_FINAL_MAX_ROUNDS)
		return KS_FINAL_ROUND_CAP;
	if (p->later_s + p->last_s > KS_FINAL_LATER_SHARE * p->round1_s)
		return KS_FINAL_TIME_CAP;
	return KS_FINAL_GO_ON;
}

#define STR_(x) #x
#define STR(x) STR_(x)

/* each reason's key for JSON and its phrase; noise: the leaders' gap follows */
static const struct {
	const char *key, *text;
	int noise;
} stops[] = {
	[KS_FINAL_GO_ON] = {"", "still measuring", 0},
	[KS_FINAL_DECIDED] = {"decided", "the leaders' order was decided beyond the noise", 1},
	[KS_FINAL_QUIET] = {"noise_below_threshold",
			    "the noise fell below the " STR(KS_FINAL_MAX_NOISE_PCT)
			    "% threshold: the leaders tie within it", 1},
	[KS_FINAL_ALONE] = {"one_candidate", "one candidate in the final (--top 1, or one "
					     "passed): nothing to order", 0},
	[KS_FINAL_ROUND_CAP] = {"round_cap", "the cap of " STR(KS_FINAL_MAX_ROUNDS)
					     " rounds, the leaders still inside the noise", 1},
	[KS_FINAL_TIME_CAP] = {"time_cap", "the time cap (the later rounds take at most "
					   STR(KS_FINAL_LATER_SHARE) "x round 1's time), the leaders "
					   "still inside the noise", 1},
	[KS_FINAL_MEASURED_EARLIER] = {"measured_earlier", "the leaders were re-measured before "
							   "the run was resumed", 0},
	[KS_FINAL_INTERRUPTED] = {"interrupted", "interrupted (Ctrl-C)", 0},
	[KS_FINAL_SKIPPED] = {"skipped", "--top 0: no re-measurement", 0},
	[KS_FINAL_FAILED] = {"failed", "a measurement failed", 0},
};

const char *ks_final_stop_key(enum ks_final_stop s)
{
	return (unsigned)s < sizeof(stops) / sizeof(stops[0]) ? stops[s].key : "";
}

void ks_final_stop_text(enum ks_final_stop s, double noise_pct, char *dst, size_t n)
{
	if ((unsigned)s >= sizeof(stops) / sizeof(stops[0]))
		s = KS_FINAL_GO_ON;
	if (stops[s].noise && isfinite(noise_pct))
		snprintf(dst, n, "%s (their gap known to +-%.1f%%)", stops[s].text, noise_pct);
	else
		snprintf(dst, n, "%s", stops[s].text);
}

/* a gap in % with enough digits: "+366%", "-3.1%" */
static void fmt_gap(char *dst, size_t n, double pct)
{
	snprintf(dst, n, "%+.*f%%", fabs(pct) < 10 ? 1 : 0, pct);
}

/* The 95% interval of a gap, in the gap's own units: the half-width err is in log space,
 * so the bounds are exp(diff -+ err) - 1, not the gap plus or minus err. */
static void gap_bounds(double diff, double err, double *lo_pct, double *hi_pct)
{
	*lo_pct = isfinite(err) ? (exp(diff - err) - 1) * 100 : NAN;
	*hi_pct = isfinite(err) ? (exp(diff + err) - 1) * 100 : NAN;
}

static void fmt_ci(char *dst, size_t n, double lo_pct, double hi_pct)
{
	char lo[24], hi[24];
	if (isfinite(lo_pct) && isfinite(hi_pct)) {
		fmt_gap(lo, sizeof(lo), lo_pct);
		fmt_gap(hi, sizeof(hi), hi_pct);
		snprintf(dst, n, "95%% interval %s to %s", lo, hi);
	} else {
		snprintf(dst, n, "95%% interval unknown, no samples");
	}
}

void ks_final_choose(const struct ks_final_cand *c, int n, struct ks_final_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->chosen = v->versus = -1;
	v->lo_pct = v->hi_pct = NAN;
	int l = search_leader(c, n);
	if (l < 0) {
		snprintf(v->text, sizeof(v->text), "no candidate passed the re-measurement");
		return;
	}
	int f = fastest(c, n, -1);
	double diff, err, lo, hi;
	char ci[64];
	if (f != l) {
		compare(&c[f], &c[l], &diff, &err);
		v->significant = diff > err;
		v->chosen = v->significant ? f : l;
		v->versus = v->significant ? l : f;
		/* diff_pct and its bounds are the chosen over versus; the text gives the gap of
		 * the faster one, with its interval in the same units */
		double d = v->significant ? diff : -diff;
		v->diff_pct = (exp(d) - 1) * 100;
		v->ci_pct = err * 100;
		gap_bounds(d, err, &v->lo_pct, &v->hi_pct);
		gap_bounds(diff, err, &lo, &hi);
		fmt_ci(ci, sizeof(ci), lo, hi);
		if (v->significant)
			snprintf(v->text, sizeof(v->text),
				 "#%ld beats #%ld (the search phase's leader) by %.1f%% (%s)", c[f].id,
				 c[l].id, v->diff_pct, ci);
		else
			snprintf(v->text, sizeof(v->text),
				 "#%ld kept (the search phase's leader): #%ld measured %.1f%% faster, "
				 "inside the noise (%s)",
				 c[l].id, c[f].id, (exp(diff) - 1) * 100, ci);
		return;
	}
	v->chosen = l;
	int r = fastest(c, n, l);
	if (r < 0) {
		snprintf(v->text, sizeof(v->text), "#%ld, the only candidate that passed the "
						   "re-measurement", c[l].id);
		return;
	}
	compare(&c[l], &c[r], &diff, &err);
	v->versus = r;
	v->significant = diff > err;
	v->diff_pct = (exp(diff) - 1) * 100;
	v->ci_pct = err * 100;
	gap_bounds(diff, err, &v->lo_pct, &v->hi_pct);
	fmt_ci(ci, sizeof(ci), v->lo_pct, v->hi_pct);
	snprintf(v->text, sizeof(v->text), "#%ld %s #%ld by %.1f%% (%s%s)", c[l].id,
		 v->significant ? "beats" : "leads", c[r].id, v->diff_pct, ci,
		 v->significant ? "" : ", inside the noise");
}
