/* Roofline ceilings from specs: upper bounds for SUSPICIOUS, GPU peaks across the matrix
 * units, CPU peaks that grow with AMX (a CPU with AMX multiplies bf16 tiles far faster than
 * its FMA units, and a correct AMX kernel must not look impossible). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/eval.h"
#include "ksearch/knowledge.h"
#include "tap.h"

/* the detected host spec with its features line replaced */
static int host_with(const char *features, struct ks_spec *out)
{
	struct ks_spec h;
	struct ks_error e = {0};
	struct ks_buf y = KS_BUF_INIT, doc = KS_BUF_INIT;
	int rc = ks_spec_detect_host(&h, &e);
	if (!rc)
		rc = ks_spec_to_yaml(&h, &y, &e);
	ks_spec_release(&h);
	const char *s = ks_buf_str(&y), *f = rc ? NULL : strstr(s, "\n  features:");
	if (!f) {
		ks_buf_release(&y);
		return -1;
	}
	const char *eol = strchr(f + 1, '\n');
	ks_buf_add(&doc, s, (size_t)(f - s));
	ks_buf_addf(&doc, "\n  features: {value: [%s], source: src1, basis: detected}", features);
	ks_buf_adds(&doc, eol ? eol : "\n");
	rc = ks_spec_load_text(ks_buf_str(&doc), out, &e);
	if (rc)
		printf("# load: %s\n", e.msg);
	ks_buf_release(&y);
	ks_buf_release(&doc);
	return rc;
}

int main(void)
{
	struct ks_spec s;
	struct ks_error e = {0};
	double g, b;

	ok(ks_spec_load("h200", &s, &e) == 0, "load h200: %s", e.msg);
	ks_roofline_from_spec(&s, &g, &b);
	ok(g == 989500, "h200: the compute ceiling is the largest dense matrix peak (%g GFLOPS)", g);
	ok(b == 4800, "h200: the memory ceiling is the datasheet bandwidth (%g GB/s)", b);
	struct ks_eval_opts o;
	ks_eval_opts_init(&o);
	ks_roofline_fill(&s, &o);
	ok(o.peak_gflops == 989500, "h200: SUSPICIOUS keeps the physical ceiling");
	ok(o.roof_gflops_f32 == 67000, "h200: fp32 %% roof is the FP32 FMA peak (%g), not bf16 tensor "
				       "cores", o.roof_gflops_f32);
	ok(o.roof_gflops_bf16 == 989500, "h200: bf16 %% roof is the tensor-core peak");
	ok(o.roof_gbps == 4800, "h200: memory roof");
	/* softmax 4096x4096 f32: 5 flops and 8 bytes per element, memory bound */
	double att = ks_roofline_attainable(&o, KS_DT_F32, 5.0 * 4096 * 4096, 8.0 * 4096 * 4096);
	ok(att > 2999 && att < 3001, "memory-bound: attainable = intensity x bandwidth (%g)", att);
	/* matmul 4096^3 f32: compute bound at the fp32 roof; bf16 at the tensor-core roof */
	double mf = 2.0 * 4096 * 4096 * 4096, mb = 3.0 * 4 * 4096 * 4096;
	ok(ks_roofline_attainable(&o, KS_DT_F32, mf, mb) == 67000, "compute-bound fp32");
	ok(ks_roofline_attainable(&o, KS_DT_BF16, mf, mb / 2) == 989500, "compute-bound bf16");
	ks_spec_release(&s);

	double plain = 0, amx = 0;
	ok(host_with("\"avx512\"", &s) == 0, "host spec without AMX");
	ks_roofline_from_spec(&s, &plain, &b);
	ks_spec_release(&s);
	ok(host_with("\"avx512\", \"amx\"", &s) == 0, "host spec with AMX");
	ks_roofline_from_spec(&s, &amx, &b);
	ks_spec_release(&s);
	ok(plain > 0 && b == 0, "cpu: an FMA ceiling (%g GFLOPS), no memory floor", plain);
	ok(host_with("\"avx512\"", &s) == 0, "host spec again");
	ks_eval_opts_init(&o);
	ks_roofline_fill(&s, &o);
	ok(o.peak_gbps == 0 && o.roof_gbps > 0, "cpu: no memory floor for SUSPICIOUS, but a "
						"measured memory roof for %% of roofline (%g GB/s)",
	   o.roof_gbps);
	ok(o.roof_gflops_f32 > 0 && o.roof_gflops_f32 <= o.peak_gflops,
	   "cpu: the fp32 roof (%g) is under the ceiling (%g)", o.roof_gflops_f32, o.peak_gflops);
	ks_spec_release(&s);
	ok(amx >= 8 * plain, "cpu with AMX: the ceiling covers tile products (%g >= 8 x %g)", amx,
	   plain);
	return tap_done();
}
