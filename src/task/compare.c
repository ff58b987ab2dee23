/* Comparison of a candidate's output with the reference output (contract in task.h).
 * Large outputs (a 8192x8192 softmax: 64M elements) are compared on every core: fixed
 * chunks of KS_COMPARE_CHUNK elements, each summarised on its own, then combined in chunk
 * order, so the sums, maxima and the first mismatches shown are the same bits whatever the
 * thread count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/task.h"
#include "util/chunks.h"

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

/* what one chunk of the elements found; combined in chunk order by ks_compare_tensors_n */
struct compare_part {
	double max_abs_err, max_rel_err, sum_d2, sum_w2, tol_elem;
	size_t nbad, nonfinite;
	int nshown;
	size_t shown_i[COMPARE_MAX_SHOWN];
	char shown_got[COMPARE_MAX_SHOWN][48], shown_want[COMPARE_MAX_SHOWN][48];
};

struct compare_job {
	enum ks_dtype t;
	const void *got, *want;
	double atol, rtol;
	struct compare_part *parts;
};

static void compare_chunk(void *ctx, size_t ci, size_t begin, size_t end)
{
	const struct compare_job *j = ctx;
	struct compare_part *p = &j->parts[ci];
	enum ks_dtype t = j->t;
	memset(p, 0, sizeof(*p));
	for (size_t i = begin; i < end; i++) {
		double g = ks_dtype_load(t, j->got, i), w = ks_dtype_load(t, j->want, i);
		int bad;
		if (!isfinite(w)) {
			/* a non-finite reference only matches the same non-finite value */
			bad = !(isnan(w) ? isnan(g) && !ks_dtype_is_poison(t, j->got, i) : g == w);
		} else if (!isfinite(g) || ks_dtype_is_poison(t, j->got, i)) {
			p->nonfinite += !isfinite(g);
			bad = 1;
		} else {
			double d = fabs(g - w), aw = fabs(w);
			if (d > p->max_abs_err)
				p->max_abs_err = d;
			if (aw > j->atol && aw > 0 && d / aw > p->max_rel_err)
				p->max_rel_err = d / aw;
			p->sum_d2 += d * d;
			p->sum_w2 += w * w;
			double tol = j->atol + j->rtol * aw;
			bad = d > tol;
			double share = tol > 0 ? d / tol : d > 0 ? INFINITY : 0;
			if (share > p->tol_elem)
				p->tol_elem = share;
		}
		if (!bad)
			continue;
		if (!isfinite(w) || !isfinite(g) || ks_dtype_is_poison(t, j->got, i))
			p->tol_elem = INFINITY; /* no share of any tolerance covers it */
		p->nbad++;
		if (p->nshown < COMPARE_MAX_SHOWN) {
			int k = p->nshown++;
			p->shown_i[k] = i;
			describe(p->shown_got[k], sizeof(p->shown_got[k]), t, j->got, i, g);
			describe(p->shown_want[k], sizeof(p->shown_want[k]), t, j->want, i, w);
		}
	}
}

void ks_compare_tol_fold(const struct ks_compare *c, double *elem, double *l2)
{
	if (!(c->tol_elem <= *elem))
		*elem = c->tol_elem;
	if (!(c->tol_l2 <= *l2))
		*l2 = c->tol_l2;
}

void ks_compare_tensors(enum ks_dtype t, const void *got, const void *want, size_t n,
			const char *name, double atol, double rtol, double l2,
			struct ks_compare *out)
{
	ks_compare_tensors_n(t, got, want, n, name, atol, rtol, l2, 0, out);
}

/* fold chunk p into c and the running sums, chunks in order */
static void compare_combine(struct ks_compare *c, const struct compare_part *p, const char *name,
			    double *sum_d2, double *sum_w2, size_t *shown)
{
	if (p->max_abs_err > c->max_abs_err)
		c->max_abs_err = p->max_abs_err;
	if (p->max_rel_err > c->max_rel_err)
		c->max_rel_err = p->max_rel_err;
	if (p->tol_elem > c->tol_elem)
		c->tol_elem = p->tol_elem;
	*sum_d2 += p->sum_d2;
	*sum_w2 += p->sum_w2;
	c->nbad += p->nbad;
	c->nonfinite += p->nonfinite;
	for (int m = 0; m < p->nshown && *shown < COMPARE_MAX_SHOWN; m++, (*shown)++)
		append(c, "%s%s[%zu] = %s, expected %s", p->shown_got[m], p->shown_want[m], name,
		       p->shown_i[m]);
}

void ks_compare_tensors_n(enum ks_dtype t, const void *got, const void *want, size_t n,
			  const char *name, double atol, double rtol, double l2, int threads,
			  struct ks_compare *out)
{
	struct ks_compare c;
	memset(&c, 0, sizeof(c));
	if (!name)
		name = "out";
	size_t nparts = ks_chunks_count(n, KS_COMPARE_CHUNK), shown = 0;
	double sum_d2 = 0, sum_w2 = 0;
	struct compare_part one;
	struct compare_part *parts = nparts > 1 ? malloc(nparts * sizeof(*parts)) : NULL;
	struct compare_job job = {t, got, want, atol, rtol, parts};
	if (parts) {
		ks_chunks_run(n, KS_COMPARE_CHUNK, threads, compare_chunk, &job);
		for (size_t k = 0; k < nparts; k++)
			compare_combine(&c, &parts[k], name, &sum_d2, &sum_w2, &shown);
		free(parts);
	} else {
		/* one chunk, or no memory for the partials: the same chunks in this thread */
		job.parts = &one;
		for (size_t k = 0; k < nparts; k++) {
			size_t begin = k * KS_COMPARE_CHUNK;
			size_t end = begin + KS_COMPARE_CHUNK < n ? begin + KS_COMPARE_CHUNK : n;
			compare_chunk(&job, 0, begin, end);
			compare_combine(&c, &one, name, &sum_d2, &sum_w2, &shown);
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
	c.tol_l2 = l2 > 0 ? c.rel_l2 / l2 : c.rel_l2 > 0 ? INFINITY : 0;
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
