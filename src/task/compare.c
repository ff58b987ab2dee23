/* Comparison of a candidate's output with the reference output (contract in task.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ksearch/task.h"

#define COMPARE_MAX_SHOWN 5

static void describe(char *buf, size_t n, enum ks_dtype t, const void *base, size_t i, double v)
{
	if (ks_dtype_is_poison(t, base, i))
		snprintf(buf, n, "poison (never written)");
	else if (isnan(v))
		snprintf(buf, n, "nan");
	else if (isinf(v))
		snprintf(buf, n, "%sinf", v < 0 ? "-" : "");
	else
		snprintf(buf, n, "%.9g", v);
}

static void append(struct ks_compare *c, const char *fmt, const char *a, const char *b,
		   const char *name, size_t i)
{
	size_t used = strlen(c->detail);
	if (used + 1 >= sizeof(c->detail))
		return;
	snprintf(c->detail + used, sizeof(c->detail) - used, fmt, used ? "; " : "", name, i, a, b);
}

void ks_compare_tensors(enum ks_dtype t, const void *got, const void *want, size_t n,
			const char *name, double atol, double rtol, double l2,
			struct ks_compare *out)
{
	struct ks_compare c;
	memset(&c, 0, sizeof(c));
	double sum_d2 = 0, sum_w2 = 0;
	size_t shown = 0;
	if (!name)
		name = "out";
	for (size_t i = 0; i < n; i++) {
		double g = ks_dtype_load(t, got, i), w = ks_dtype_load(t, want, i);
		int bad;
		if (!isfinite(w)) {
			/* a non-finite reference only matches the same non-finite value */
			bad = !(isnan(w) ? isnan(g) && !ks_dtype_is_poison(t, got, i) : g == w);
		} else if (!isfinite(g) || ks_dtype_is_poison(t, got, i)) {
			c.nonfinite += !isfinite(g);
			bad = 1;
		} else {
			double d = fabs(g - w), aw = fabs(w);
			if (d > c.max_abs_err)
				c.max_abs_err = d;
			if (aw > atol && aw > 0 && d / aw > c.max_rel_err)
				c.max_rel_err = d / aw;
			sum_d2 += d * d;
			sum_w2 += w * w;
			bad = d > atol + rtol * aw;
		}
		if (!bad)
			continue;
		c.nbad++;
		if (shown++ < COMPARE_MAX_SHOWN) {
			char a[48], b[48];
			describe(a, sizeof(a), t, got, i, g);
			describe(b, sizeof(b), t, want, i, w);
			append(&c, "%s%s[%zu] = %s, expected %s", a, b, name, i);
		}
	}
	/* the floor is the norm of an atol-sized error vector, so a (nearly) all-zero
	 * reference is judged by atol instead of dividing by almost nothing */
	double norm_w = sqrt(sum_w2), norm_d = sqrt(sum_d2);
	double tiny = atol * sqrt((double)n);
	if (tiny < 1e-300)
		tiny = 1e-300;
	c.rel_l2 = norm_d == 0 ? 0 : norm_d / (norm_w > tiny ? norm_w : tiny);
	c.passed = c.nbad == 0 && c.rel_l2 <= l2;
	size_t used = strlen(c.detail);
	if (c.nbad && used + 1 < sizeof(c.detail))
		snprintf(c.detail + used, sizeof(c.detail) - used,
			 "%s%zu of %zu elements of '%s' outside atol %g + rtol %g*|expected|%s",
			 used ? "; " : "", c.nbad, n, name, atol, rtol,
			 c.nonfinite ? " (some are nan or inf)" : "");
	else if (!c.passed && used + 1 < sizeof(c.detail))
		snprintf(c.detail + used, sizeof(c.detail) - used,
			 "relative L2 error of '%s' is %.3g, above %g", name, c.rel_l2, l2);
	*out = c;
}
