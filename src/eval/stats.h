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

#endif
