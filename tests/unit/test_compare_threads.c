/* ks_compare_tensors over threads: every field bit-identical to one thread, on tensors of
 * many chunks with errors, poison, NaN and mismatches spread over chunk boundaries. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/task.h"
#include "tap.h"

/* the same comparison on 1 and on `threads` threads; 1 when every field matches */
static int same(enum ks_dtype t, const void *g, const void *w, size_t n, double atol,
		double rtol, double l2, int threads, struct ks_compare *one)
{
	struct ks_compare many;
	ks_compare_tensors_n(t, g, w, n, "y", atol, rtol, l2, 1, one);
	ks_compare_tensors_n(t, g, w, n, "y", atol, rtol, l2, threads, &many);
	return !memcmp(&one->max_abs_err, &many.max_abs_err, sizeof(double)) &&
	       !memcmp(&one->max_rel_err, &many.max_rel_err, sizeof(double)) &&
	       !memcmp(&one->rel_l2, &many.rel_l2, sizeof(double)) && one->nbad == many.nbad &&
	       one->nonfinite == many.nonfinite && one->passed == many.passed &&
	       !strcmp(one->detail, many.detail);
}

int main(void)
{
	size_t n = KS_COMPARE_CHUNK * 9 + 12345; /* ten chunks, the last one short */
	float *w = malloc(n * sizeof(float)), *g = malloc(n * sizeof(float));
	if (!w || !g)
		return tap_skip_all("out of memory");
	uint64_t x = 88172645463325252ull;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		w[i] = (float)((double)(x >> 11) / 9007199254740992.0 - 0.5);
		/* small errors of every size: the sums differ in their last bits between an
		 * order of summation and another, which is what the chunks pin down */
		g[i] = w[i] + (float)((double)(x & 0xffff) * 1e-12);
	}
	struct ks_compare c;
	memset(&c, 0, sizeof(c));
	int eq = same(KS_DT_F32, g, w, n, 1e-6, 1e-4, 1e-3, 4, &c);
	ok(eq && c.passed && c.rel_l2 > 0, "passing tensor: identical on 1 and 4 threads (rel_l2 %.17g)", c.rel_l2);
	ok(same(KS_DT_F32, g, w, n, 1e-6, 1e-4, 1e-3, 7, &c), "identical on 7 threads");

	/* mismatches: two in the last chunk, one at a chunk boundary, poison, a NaN; the
	 * first five in index order must be listed whatever thread found them */
	size_t at[] = {n - 1, n - 3, KS_COMPARE_CHUNK * 3, KS_COMPARE_CHUNK * 3 - 1, 17,
		       KS_COMPARE_CHUNK * 5 + 2};
	for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++)
		g[at[k]] = w[at[k]] + 0.5f;
	ks_dtype_poison(KS_DT_F32, g + KS_COMPARE_CHUNK * 7, 3);
	g[KS_COMPARE_CHUNK * 8 + 1] = NAN;
	eq = same(KS_DT_F32, g, w, n, 1e-6, 1e-4, 1e-3, 4, &c);
	ok(eq && !c.passed && c.nbad == 10 && c.nonfinite == 4,
	   "failing tensor: identical on 1 and 4 threads (%zu bad, %zu non-finite)", c.nbad,
	   c.nonfinite);
	char want[64];
	snprintf(want, sizeof(want), "y[17] = ");
	ok(strstr(c.detail, want) == c.detail, "first mismatch first (%s)", c.detail);
	snprintf(want, sizeof(want), "y[%zu] = ", KS_COMPARE_CHUNK * 5 + 2);
	ok(strstr(c.detail, want) != NULL, "the fifth listed mismatch is the fifth in order");
	snprintf(want, sizeof(want), "y[%zu] = ", n - 1);
	ok(strstr(c.detail, want) == NULL, "later mismatches are counted, not listed");

	/* the default entry point is the threaded one */
	struct ks_compare d;
	ks_compare_tensors(KS_DT_F32, g, w, n, "y", 1e-6, 1e-4, 1e-3, &d);
	ok(!memcmp(&d.rel_l2, &c.rel_l2, sizeof(double)) && !strcmp(d.detail, c.detail),
	   "ks_compare_tensors gives the same bits");

	free(w);
	free(g);
	return tap_done();
}
