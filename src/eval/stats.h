/* Robust statistics for timing samples. */
#ifndef KS_EVAL_STATS_H
#define KS_EVAL_STATS_H

#include <stddef.h>

struct ks_stats {
	double median, p25, p75, min, mean;
	double spread_pct; /* (p75 - p25) / median * 100 */
	size_t n;
};

/* samples are not modified */
void ks_stats_compute(const double *samples, size_t n, struct ks_stats *out);
/* geometric mean of the positive values (0 when none) */
double ks_geomean(const double *v, size_t n);

/* A 95% confidence interval of the median without assuming a distribution: the order
 * statistics the binomial(n, 1/2) puts around the middle (normal approximation).  Fewer than
 * 6 samples give [min, max].  lo = hi = NAN when n is 0. */
void ks_stats_median_ci(const double *samples, size_t n, double *lo, double *hi);
/* half the width of that interval over the median (0.03: the median is known to +-3%);
 * INFINITY when n is 0 or the median is not positive */
double ks_stats_median_rel_ci(const double *samples, size_t n);
/* The stopping rule for repetitions: 1 when n reached max_n, or n reached min_n and the
 * median's relative half-width is at most rel (rel <= 0: the count floor alone decides). */
int ks_stats_enough(const double *samples, size_t n, double rel, size_t min_n, size_t max_n);

#endif
