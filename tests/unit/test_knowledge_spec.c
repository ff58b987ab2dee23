/* Hardware specs: loading, field access, renderings, listing and host detection. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksearch/knowledge.h"
#include "tap.h"

static void field_is(const struct ks_spec *s, const char *name, double want)
{
	double v = NAN;
	int rc = ks_spec_field(s, name, &v);
	ok(rc == 0 && v == want, "%s.%s = %g (got %g, rc %d)", s->name, name, want, v, rc);
}

int main(void)
{
	struct ks_spec s;
	struct ks_error e = {0};

	ok(ks_spec_load("m3-max", &s, &e) == 0, "load m3-max: %s", e.msg);
	is_str(s.kind, "gpu", "m3-max kind");
	is_str(s.vendor, "apple", "m3-max vendor");
	field_is(&s, "simd_width", 32);
	field_is(&s, "max_threads_per_group", 1024);
	field_is(&s, "smem_per_block", 32768);
	field_is(&s, "spec.smem_per_block", 32768);
	field_is(&s, "smem_per_block_optin", 32768);
	field_is(&s, "mem_bandwidth_gbps", 400);
	field_is(&s, "cores", 40);
	double v;
	is_int(ks_spec_field(&s, "nonsense", &v), KS_ENOTFOUND, "unknown field");
	is_int(ks_spec_field(&s, "peak_gflops_fp8_matrix", &v), KS_ENOTFOUND,
	       "m3-max lists no fp8 rate");
	is_int(ks_spec_field(&s, "matrix_unit", &v), KS_ENOTFOUND, "text fields are not numbers");
	ok(!ks_spec_has_feature(&s, "fp64"), "m3-max has no fp64");
	ok(ks_spec_field(&s, "spec.has_simdgroup_matrix", &v) == 0 && v == 1,
	   "spec.has_simdgroup_matrix is 1");
	ok(ks_spec_field(&s, "has_fp64", &v) == 0 && v == 0, "has_fp64 is 0, not unknown");
	ok(ks_spec_has_feature(&s, "simdgroup_matrix"), "m3-max has simdgroup_matrix");
	ok(s.matrix_unit && strstr(s.matrix_unit, "8x8"), "matrix unit mentions 8x8");
	int sourced = 1, honest = 1;
	for (int i = 0; i < s.nvalues; i++) {
		sourced &= s.values[i].source && s.values[i].source[0];
		if (!strcmp(s.values[i].basis, "estimated") || !strcmp(s.values[i].basis, "derived"))
			honest &= s.values[i].note != NULL;
	}
	ok(sourced, "every m3-max field has a source");
	ok(honest, "every derived/estimated m3-max field explains itself");

	struct ks_buf b = KS_BUF_INIT;
	ok(ks_spec_to_json(&s, &b, &e) == 0, "m3-max to json");
	json_error_t je;
	json_t *j = json_loads(ks_buf_str(&b), 0, &je);
	ok(j != NULL, "json parses");
	json_t *f = json_object_get(json_object_get(j, "fields"), "smem_per_block");
	is_int(json_integer_value(json_object_get(f, "value")), 32768, "json smem_per_block value");
	is_str(json_string_value(json_object_get(f, "unit")), "B", "json unit is the base unit");
	is_str(json_string_value(json_object_get(f, "basis")), "documented", "json basis");
	ok(strstr(json_string_value(json_object_get(f, "source")), "Metal Feature Set") != NULL,
	   "json source names the Metal feature set tables");
	json_decref(j);
	ks_buf_reset(&b);
	ks_spec_to_text(&s, &b);
	ok(strstr(ks_buf_str(&b), "smem_per_block: 32 KiB") != NULL, "text shows 32 KiB");
	ok(strstr(ks_buf_str(&b), "machine balance") != NULL, "text shows machine balance");
	ks_buf_release(&b);

	/* YAML round trip */
	char path[] = "/tmp/ks-spec-XXXXXX";
	char *dir = mkdtemp(path);
	ok(dir != NULL, "temp dir");
	char file[256];
	snprintf(file, sizeof(file), "%s/m3-max.yaml", dir);
	struct ks_buf y = KS_BUF_INIT;
	ok(ks_spec_to_yaml(&s, &y, &e) == 0, "m3-max to yaml");
	FILE *fp = fopen(file, "w");
	fputs(ks_buf_str(&y), fp);
	fclose(fp);
	struct ks_spec r;
	ok(ks_spec_load(file, &r, &e) == 0, "yaml round trip loads: %s", e.msg);
	is_int(r.nvalues, s.nvalues, "round trip keeps every field");
	ok(r.smem_per_block == s.smem_per_block && r.peak_gflops_f32 == s.peak_gflops_f32 &&
		   r.features && !strcmp(r.features[0], s.features[0]),
	   "round trip keeps values");
	ks_spec_release(&r);
	unlink(file);
	rmdir(dir);
	ks_buf_release(&y);
	ks_spec_release(&s);

	ok(ks_spec_load("h100", &s, &e) == 0, "load h100");
	field_is(&s, "smem_per_block", 48 * 1024);
	field_is(&s, "smem_per_block_optin", 227 * 1024);
	field_is(&s, "mem_bandwidth_gbps", 3350);
	field_is(&s, "cores", 132);
	ok(ks_spec_has_feature(&s, "wgmma") && ks_spec_has_feature(&s, "tma"), "h100 wgmma, tma");
	ks_spec_release(&s);
	ok(ks_spec_load("b200", &s, &e) == 0, "load b200");
	ok(!ks_spec_has_feature(&s, "wgmma") && ks_spec_has_feature(&s, "tcgen05"),
	   "b200: tcgen05, no wgmma");
	ks_spec_release(&s);
	ok(ks_spec_load("a100", &s, &e) == 0, "load a100");
	field_is(&s, "smem_per_block_optin", 163 * 1024);
	ks_spec_release(&s);

	is_int(ks_spec_load("no-such-chip", &s, &e), KS_ENOTFOUND, "unknown spec");
	ok(strstr(e.msg, "spec list") != NULL, "unknown spec error points to spec list");

	ok(ks_spec_load("x86-64", &s, &e) == 0, "x86-64 template loads");
	ok(s.is_template && isnan(s.mem_bandwidth_gbps), "template values are placeholders");
	ks_spec_release(&s);

	char **names;
	int n;
	ok(ks_spec_list(&names, &n, &e) == 0, "list specs");
	const char *want[] = {"a100", "b200", "h100", "h200", "l4", "l40s", "rtx-4090",
			      "m1", "m1-pro", "m1-max", "m2", "m2-pro", "m2-max", "m3",
			      "m3-pro", "m3-max", "m4", "m4-pro", "m4-max", "x86-64"};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int found = 0;
		for (int k = 0; k < n; k++)
			found |= !strcmp(names[k], want[i]);
		ok(found, "spec list has %s", want[i]);
	}
	for (int k = 1; k < n; k++)
		ok(strcmp(names[k - 1], names[k]) < 0, "list sorted at %d", k);
	ks_spec_list_free(names, n);

	/* a document in memory (what a GPU backend detects) loads through the same checks */
	struct ks_buf doc = KS_BUF_INIT;
	ok(ks_spec_load("h200", &s, &e) == 0 && ks_spec_to_yaml(&s, &doc, &e) == 0,
	   "h200 to yaml: %s", e.msg);
	ks_spec_release(&s);
	ok(ks_spec_load_text(ks_buf_str(&doc), &s, &e) == 0, "load_text h200: %s", e.msg);
	is_str(s.name, "h200", "load_text keeps the document's name");
	field_is(&s, "cores", 132);
	ks_spec_release(&s);
	char *bad = strdup(ks_buf_str(&doc)), *nm = strstr(bad, "\nname: ");
	ok(nm != NULL, "the document has a name line");
	if (nm)
		memcpy(nm + 7, "H2", 2); /* not a spec name: upper case */
	ok(ks_spec_load_text(bad, &s, &e) != 0 && strstr(e.msg, "'name' may hold only"),
	   "load_text rejects a bad name: %s", e.msg);
	ok(ks_spec_load_text("schema: ks-spec/1\n", &s, &e) == KS_EINVAL, "no name: %s", e.msg);
	free(bad);
	ks_buf_release(&doc);

	/* host detection: sane, labelled numbers */
	ok(ks_spec_detect_host(&s, &e) == 0, "detect host: %s", e.msg);
	ok(s.simd_width == 4 || s.simd_width == 8 || s.simd_width == 16, "host simd width %g",
	   s.simd_width);
	ok(s.cores >= 1 && s.cores <= 4096, "host cores %g", s.cores);
	ok(s.mem_bandwidth_gbps > 0.1 && s.mem_bandwidth_gbps < 10000, "host bandwidth %g GB/s",
	   s.mem_bandwidth_gbps);
	ok(s.peak_gflops_f32 > 0.1 && s.peak_gflops_f32 < 1e6, "host fma rate %g GFLOPS",
	   s.peak_gflops_f32);
	/* at least one vector FMA per core per cycle at half the clock, even on a loaded
	 * machine: the old benchmark measured a stack round trip, about a tenth of the peak,
	 * and a real GEMM beat it; the rate is per thread CPU time, so load does not lower it */
	double clock_ghz = s.clock_mhz > 0 ? s.clock_mhz * 1e-3 : 1;
	double floor_gf = 0.5 * s.cores * clock_ghz * 2 * s.simd_width;
	ok(s.peak_gflops_f32 >= floor_gf, "fma rate %g GFLOPS >= %g (one FMA/cycle/core at half "
					   "clock)",
	   s.peak_gflops_f32, floor_gf);
	int measured = 0;
	for (int i = 0; i < s.nvalues; i++)
		if (!strcmp(s.values[i].name, "mem_bandwidth_gbps") ||
		    !strcmp(s.values[i].name, "peak_gflops_f32"))
			measured += !strcmp(s.values[i].basis, "measured");
	is_int(measured, 2, "bandwidth and fma rate are labelled measured");
	ok(ks_spec_has_feature(&s, "fp64"), "host has fp64");
	ks_spec_release(&s);
	return tap_done();
}
