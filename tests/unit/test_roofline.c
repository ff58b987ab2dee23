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
	ks_spec_release(&s);

	double plain = 0, amx = 0;
	ok(host_with("\"avx512\"", &s) == 0, "host spec without AMX");
	ks_roofline_from_spec(&s, &plain, &b);
	ks_spec_release(&s);
	ok(host_with("\"avx512\", \"amx\"", &s) == 0, "host spec with AMX");
	ks_roofline_from_spec(&s, &amx, &b);
	ks_spec_release(&s);
	ok(plain > 0 && b == 0, "cpu: an FMA ceiling (%g GFLOPS), no memory floor", plain);
	ok(amx >= 8 * plain, "cpu with AMX: the ceiling covers tile products (%g >= 8 x %g)", amx,
	   plain);
	return tap_done();
}
