/* ks_compare_tensors: allclose, relative L2, non-finite values, poison, detail text. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ksearch/task.h"
#include "tap.h"

int main(void)
{
	struct ks_compare c;
	float want[8] = {1, 2, 3, 4, -5, 0, 0.5f, 100};
	float got[8];

	memcpy(got, want, sizeof(got));
	ks_compare_tensors(KS_DT_F32, got, want, 8, "y", 1e-5, 1e-5, 1e-5, &c);
	ok(c.passed && c.nbad == 0 && c.max_abs_err == 0 && c.rel_l2 == 0 && !c.detail[0],
	   "identical tensors pass");

	got[3] = 4.00001f; /* within atol + rtol*4 */
	ks_compare_tensors(KS_DT_F32, got, want, 8, "y", 1e-5, 1e-5, 1e-3, &c);
	ok(c.passed && c.max_abs_err > 0 && c.max_abs_err < 2e-5, "within tolerance passes");
	ok(fabs(c.max_rel_err - c.max_abs_err / 4) < 1e-9, "max_rel_err relative to |want|");

	got[3] = 4.1f;
	got[6] = 0.75f;
	ks_compare_tensors(KS_DT_F32, got, want, 8, "y", 1e-5, 1e-5, 1, &c);
	ok(!c.passed && c.nbad == 2, "two elements out of tolerance");
	ok(strstr(c.detail, "y[3] = 4.0999999, expected 4") == c.detail, "detail names the first (%s)",
	   c.detail);
	ok(strstr(c.detail, "; y[6] = 0.75, expected 0.5") != NULL, "then the second");
	ok(strstr(c.detail, "2 of 8 elements of 'y' outside atol") != NULL, "and a count");
	ok(fabs(c.max_abs_err - 0.25) < 1e-6 && fabs(c.max_rel_err - 0.5) < 1e-6,
	   "max abs and rel errors");

	/* rtol scales with |want| */
	ks_compare_tensors(KS_DT_F32, got, want, 8, "y", 0, 0.6, 1, &c);
	ok(c.passed, "large rtol accepts both");

	/* relative L2 alone can fail */
	memcpy(got, want, sizeof(got));
	got[7] = 100.5f;
	ks_compare_tensors(KS_DT_F32, got, want, 8, "y", 1, 0, 1e-3, &c);
	ok(!c.passed && c.nbad == 0 && c.rel_l2 > 1e-3 && strstr(c.detail, "relative L2 error"),
	   "rel_l2 bound enforced (%s)", c.detail);
	ks_compare_tensors(KS_DT_F32, got, want, 8, "y", 1, 0, 1e-2, &c);
	ok(c.passed, "and met with a looser bound (rel_l2 %g)", c.rel_l2);

	/* NaN, Inf, poison */
	memcpy(got, want, sizeof(got));
	got[0] = NAN;
	got[1] = INFINITY;
	ks_dtype_poison(KS_DT_F32, got + 2, 1);
	ks_compare_tensors(KS_DT_F32, got, want, 8, "out", 1e3, 1e3, 1e9, &c);
	ok(!c.passed && c.nbad == 3 && c.nonfinite == 3, "NaN, Inf and poison never pass");
	ok(strstr(c.detail, "out[0] = nan, expected 1") && strstr(c.detail, "out[1] = inf") &&
		   strstr(c.detail, "out[2] = poison (never written), expected 3"),
	   "detail names nan, inf and poison (%s)", c.detail);
	ok(ks_dtype_is_poison(KS_DT_F32, got, 2) && !ks_dtype_is_poison(KS_DT_F32, got, 0),
	   "poison is not any NaN");

	/* a non-finite reference matches only the same value */
	float w2[3] = {NAN, INFINITY, -INFINITY}, g2[3] = {NAN, INFINITY, -INFINITY};
	ks_compare_tensors(KS_DT_F32, g2, w2, 3, "y", 0, 0, 0, &c);
	ok(c.passed, "same non-finite values pass");
	g2[1] = -INFINITY;
	ks_compare_tensors(KS_DT_F32, g2, w2, 3, "y", 0, 0, 0, &c);
	ok(!c.passed && c.nbad == 1 && strstr(c.detail, "y[1] = -inf, expected inf"),
	   "inf sign matters (%s)", c.detail);

	/* only the first 5 are listed; the detail never overflows */
	float big_w[1000], big_g[1000];
	for (int i = 0; i < 1000; i++)
		big_w[i] = (float)i, big_g[i] = (float)i + 1000.123f;
	ks_compare_tensors(KS_DT_F32, big_g, big_w, 1000, "a_rather_long_tensor_name", 0, 0, 0, &c);
	int listed = 0;
	for (const char *p = c.detail; (p = strchr(p, '[')); p++)
		listed++;
	ok(!c.passed && c.nbad == 1000 && listed == 5 && strlen(c.detail) < sizeof(c.detail),
	   "five mismatches listed of 1000 (%d)", listed);
	ok(strstr(c.detail, "1000 of 1000 elements") != NULL, "count of all mismatches");

	/* other dtypes go through ks_dtype_load */
	uint16_t hw[2], hg[2];
	ks_dtype_store(KS_DT_F16, hw, 0, 1.0);
	ks_dtype_store(KS_DT_F16, hw, 1, 2.0);
	ks_dtype_store(KS_DT_F16, hg, 0, 1.0);
	ks_dtype_store(KS_DT_F16, hg, 1, 2.001953125); /* next f16 after 2 */
	ks_compare_tensors(KS_DT_F16, hg, hw, 2, "h", 1e-3, 0, 1, &c);
	ok(!c.passed && c.nbad == 1, "f16 one ulp at 2 exceeds atol 1e-3");
	ks_compare_tensors(KS_DT_F16, hg, hw, 2, "h", 1e-3, 1e-3, 1, &c);
	ok(c.passed, "f16 within rtol 1e-3");
	ks_dtype_poison(KS_DT_BF16, hg, 1);
	ks_dtype_poison(KS_DT_I32, hw, 1);
	ok(ks_dtype_is_poison(KS_DT_BF16, hg, 0) && isnan(ks_dtype_load(KS_DT_BF16, hg, 0)),
	   "bf16 poison is a NaN");
	int32_t iw[3] = {1, 2, 3}, ig[3] = {1, 2, 4};
	ks_compare_tensors(KS_DT_I32, ig, iw, 3, "idx", 0, 0, 0, &c);
	ok(!c.passed && strstr(c.detail, "idx[2] = 4, expected 3"), "i32 compare (%s)", c.detail);
	ks_dtype_poison(KS_DT_I32, ig, 3);
	ks_compare_tensors(KS_DT_I32, ig, iw, 3, "idx", 0, 0, 0, &c);
	ok(!c.passed && c.nbad == 3 && strstr(c.detail, "idx[0] = poison"),
	   "integer poison is reported (%s)", c.detail);

	/* zero-size and all-zero references */
	ks_compare_tensors(KS_DT_F32, got, want, 0, "y", 0, 0, 0, &c);
	ok(c.passed, "empty tensors pass");
	float zw[2] = {0, 0}, zg[2] = {0, 1e-7f};
	ks_compare_tensors(KS_DT_F32, zg, zw, 2, "y", 1e-6, 0, 1e9, &c);
	ok(c.passed && c.max_rel_err == 0, "zero reference: atol governs, no infinite rel error");
	/* what the tolerance judged: a PASSED fp32 matmul showed "max rel err 1.3e-02" against
	 * rtol 1e-3; the check allowed atol + rtol*|want| per element, so the error to show is
	 * the share of that it used */
	float tw[2] = {0.0015f, 1.0f}, tg[2] = {0.0015f + 9e-4f, 1.0f};
	ks_compare_tensors(KS_DT_F32, tg, tw, 2, "c", 1e-3, 1e-3, 1, &c);
	ok(c.passed && c.max_rel_err > 0.5, "passes with a max rel err of %.2g, far above rtol",
	   c.max_rel_err);
	ok(fabs(c.tol_elem - 9e-4 / (1e-3 + 1e-3 * 0.0015)) < 1e-4,
	   "tol_elem is the worst element's share of atol + rtol|want| (%.4g)", c.tol_elem);
	ok(fabs(c.tol_l2 - c.rel_l2 / 1) < 1e-12, "tol_l2 is rel L2 over its bound");
	tg[1] = 1.01f;
	ks_compare_tensors(KS_DT_F32, tg, tw, 2, "c", 1e-3, 1e-3, 1, &c);
	ok(!c.passed && c.tol_elem > 1, "a failing element uses more than its tolerance (%.3g)",
	   c.tol_elem);
	tg[1] = NAN;
	ks_compare_tensors(KS_DT_F32, tg, tw, 2, "c", 1e-3, 1e-3, 1, &c);
	ok(isinf(c.tol_elem), "a NaN where a number was expected uses an infinite share");
	double elem = NAN, l2 = 0.5;
	ks_compare_tol_fold(&c, &elem, &l2);
	ok(isinf(elem) && l2 >= 0.5, "the fold keeps the worst over outputs and seeds");

	return tap_done();
}
