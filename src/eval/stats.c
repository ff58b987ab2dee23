#include "eval/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double quantile(const double *sorted, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)pos;
	double frac = pos - (double)lo;
	return lo + 1 < n ? sorted[lo] * (1 - frac) + sorted[lo + 1] * frac : sorted[lo];
}

void ks_stats_compute(const double *samples, size_t n, struct ks_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!n)
		return;
	double *s = malloc(n * sizeof(double));
	if (!s)
		return;
	memcpy(s, samples, n * sizeof(double));
	qsort(s, n, sizeof(double), cmp_double);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	out->n = n;
	out->min = s[0];
	out->mean = sum / (double)n;
	out->median = quantile(s, n, 0.5);
	out->p25 = quantile(s, n, 0.25);
	out->p75 = quantile(s, n, 0.75);
	out->spread_pct = out->median > 0 ? (out->p75 - out->p25) / out->median * 100 : 0;
	free(s);
}

double ks_geomean(const double *v, size_t n)
{
	double acc = 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i] > 0) {
			acc += log(v[i]);
			k++;
		}
	return k ? exp(acc / (double)k) : 0;
}

void ks_stats_median_ci(const double *samples, size_t n, double *lo, double *hi)
{
	*lo = *hi = NAN;
	if (!n)
		return;
	double *s = malloc(n * sizeof(double));
	if (!s)
		return;
	memcpy(s, samples, n * sizeof(double));
	qsort(s, n, sizeof(double), cmp_double);
	if (n < 6) {
		*lo = s[0];
		*hi = s[n - 1];
	} else {
		/* ranks n/2 -+ 1.96 sqrt(n)/2, 1-based, widened to whole ranks */
		double half = 0.98 * sqrt((double)n);
		long j = (long)floor((double)n / 2 - half), k = (long)ceil((double)n / 2 + 1 + half);
		if (j < 1)
			j = 1;
		if (k > (long)n)
			k = (long)n;
		*lo = s[j - 1];
		*hi = s[k - 1];
	}
	free(s);
}

double ks_stats_median_rel_ci(const double *samples, size_t n)
{
	struct ks_stats st;
	double lo, hi;
	ks_stats_compute(samples, n, &st);
	ks_stats_median_ci(samples, n, &lo, &hi);
	if (!n || !(st.median > 0) || !isfinite(lo) || !isfinite(hi))
		return INFINITY;
	return (hi - lo) / 2 / st.median;
}

int ks_stats_enough(const double *samples, size_t n, double rel, size_t min_n, size_t max_n)
{
	if (max_n && n >= max_n)
		return 1;
	if (n < min_n)
		return 0;
	return rel <= 0 || ks_stats_median_rel_ci(samples, n) <= rel;
}
