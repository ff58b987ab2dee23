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
