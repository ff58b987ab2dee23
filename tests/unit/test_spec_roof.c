/* The roofs' provenance: a measured spec field's probe, time and load, in spec files and
 * JSON; the cached best figure that a lower measurement never replaces; the text reports
 * and prompts print; "% of roofline" above 100 never shown as a share. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ksearch/knowledge.h"
#include "tap.h"

/* a CPU spec whose bandwidth and FMA rate were measured at the given values and times */
static int spec_with(double gbps, const char *bw_at, double bw_load, double gflops,
		     struct ks_spec *out, struct ks_error *e)
{
	char doc[2048];
	snprintf(doc, sizeof(doc),
		 "schema: ks-spec/1\nname: probe\ntitle: \"a test CPU\"\nkind: cpu\nvendor: generic\n"
		 "arch: x86_64\nsources:\n  b: {title: \"bench\"}\nfields:\n"
		 "  simd_width: {value: 8, unit: threads, source: b, basis: detected}\n"
		 "  max_threads_per_group: {value: 2, unit: threads, source: b, basis: detected}\n"
		 "  cores: {value: 2, source: b, basis: detected}\n"
		 "  mem_bandwidth_gbps: {value: %g, unit: GB/s, source: b, basis: measured, "
		 "measured: {at: \"%s\", probe: memcpy, load: %g, loadavg: 3.5, cores: 2}}\n"
		 "  peak_gflops_f32: {value: %g, unit: GFLOPS, source: b, basis: measured, "
		 "measured: {at: \"2026-12-01T00:00:00Z\", probe: fma, load: 0.5, cores: 2}}\n"
		 "  features: {value: [fp64], source: b, basis: detected}\n",
		 gbps, bw_at, bw_load, gflops);
	return ks_spec_load_text(doc, out, e);
}

static void test_file_forms(void)
{
	struct ks_spec s, back;
	struct ks_error e = {0};
	struct ks_buf y = KS_BUF_INIT, j = KS_BUF_INIT;
	ok(spec_with(20, "2026-12-01T10:00:00Z", 4.5, 300, &s, &e) == 0, "load: %s", e.msg);
	const struct ks_spec_measure *m = ks_spec_measure_of(&s, "mem_bandwidth_gbps");
	ok(m && !strcmp(m->probe, "memcpy") && m->at == 1796119200.0 && m->load == 4.5 &&
		   m->loadavg == 3.5 && m->cores == 2,
	   "the bandwidth's probe, time, load, load average and cores are read");
	ok(ks_spec_measure_of(&s, "cores") == NULL, "a detected field has no measure");
	ok(ks_spec_measure_loaded(m), "load 4.5 on 2 cores is loaded");
	ok(!ks_spec_measure_loaded(ks_spec_measure_of(&s, "peak_gflops_f32")), "load 0.5 is not");
	ok(ks_spec_to_yaml(&s, &y, &e) == 0 && ks_spec_load_text(ks_buf_str(&y), &back, &e) == 0,
	   "YAML round trip: %s", e.msg);
	const struct ks_spec_measure *mb = ks_spec_measure_of(&back, "mem_bandwidth_gbps");
	ok(mb && mb->at == m->at && mb->load == m->load && !strcmp(mb->probe, "memcpy"),
	   "the measure survives --save");
	ks_spec_release(&back);
	ok(ks_spec_to_json(&s, &j, &e) == 0 &&
		   strstr(ks_buf_str(&j), "\"at\": \"2026-12-01T10:00:00Z\"") &&
		   strstr(ks_buf_str(&j), "\"loaded\": true"),
	   "spec show --json carries it");
	ks_buf_reset(&j);
	struct ks_spec_measure rt;
	ok(ks_spec_measure_json(m, &j) == 0 && ks_spec_measure_parse_json(ks_buf_str(&j), &rt) == 0 &&
		   rt.at == m->at && rt.load == m->load && rt.cores == 2,
	   "the run's roofline event form round-trips");
	ks_spec_release(&s);
	ks_buf_release(&y);
	ks_buf_release(&j);

	ok(spec_with(20, "yesterday", 1, 300, &s, &e) != 0 &&
		   strstr(e.msg, "probe.yaml:13:") && strstr(e.msg, "UTC time"),
	   "a malformed time names file:line:col (%s)", e.msg);
	ok(spec_with(20, "2026-12-01T10:00:00Z", -1, 300, &s, &e) != 0 &&
		   strstr(e.msg, "not negative"),
	   "a negative load is refused (%s)", e.msg);
}

static void test_keep_best(void)
{
	struct ks_spec fresh, cached;
	struct ks_error e = {0};
	/* this detection: 3.9 GB/s under load 12; the cache: 37 GB/s from a quiet hour */
	ok(spec_with(3.9, "2026-12-08T12:00:00Z", 12, 310, &fresh, &e) == 0, "fresh: %s", e.msg);
	ok(spec_with(37, "2026-12-01T03:00:00Z", 0.2, 290, &cached, &e) == 0, "cached: %s", e.msg);
	is_int(ks_spec_keep_best(&fresh, &cached), 1, "one figure taken from the cache");
	const struct ks_spec_measure *m = ks_spec_measure_of(&fresh, "mem_bandwidth_gbps");
	ok(fresh.mem_bandwidth_gbps == 37 && m && m->from_cache && m->load == 0.2 &&
		   m->at == 1796094000.0,
	   "a lower measurement does not replace the cached higher one (%g GB/s, its provenance "
	   "kept)", fresh.mem_bandwidth_gbps);
	double v;
	ok(ks_spec_field(&fresh, "mem_bandwidth_gbps", &v) == 0 && v == 37, "and the field reads it");
	m = ks_spec_measure_of(&fresh, "peak_gflops_f32");
	ok(fresh.peak_gflops_f32 == 310 && m && !m->from_cache,
	   "a higher new figure stands over a lower cached one");
	is_int(ks_spec_keep_best(&fresh, &cached), 0, "merging again changes nothing");
	ks_spec_release(&fresh);
	ks_spec_release(&cached);
}

static void test_text(void)
{
	struct ks_spec_measure m = {.probe = "memcpy", .at = 1796119200.0, .load = 12.0,
				    .loadavg = 11.5, .cores = 2, .from_cache = 0};
	char t[512];
	ks_spec_measure_text(&m, m.at + 2 * 86400, t, sizeof(t));
	ok(strstr(t, "measured 2026-12-01 10:00 UTC (age 2.0 days) by the memcpy probe at load "
		     "12.0 on 2 cores") != NULL,
	   "when, age, probe, load and cores (%s)", t);
	ok(strstr(t, "above the core count") != NULL, "a loaded probe says so");
	ks_spec_measure_text(&m, 0, t, sizeof(t));
	ok(!strstr(t, "(age"), "no age without a reference time (prompts)");
	m.load = 0.3;
	m.from_cache = 1;
	ks_spec_measure_text(&m, 0, t, sizeof(t));
	ok(!strstr(t, "above the core count") && strstr(t, "earlier detection"),
	   "a quiet, cached figure says where it came from (%s)", t);
	ks_spec_measure_text(NULL, 0, t, sizeof(t));
	ok(!t[0], "nothing for an unmeasured figure");

	ks_roof_pct_text(42.4, 0, t, sizeof(t));
	ok(!strcmp(t, "42%"), "a share under the roof (%s)", t);
	ks_roof_pct_text(542, 0, t, sizeof(t));
	ok(!strcmp(t, "above the roof (5.4x)"), "above 100 is never a share (%s)", t);
	ks_roof_pct_text(542, 1, t, sizeof(t));
	ok(strstr(t, "5.4x the roofline") && strstr(t, "underestimate") && strstr(t, "cache"),
	   "in prose it says why (%s)", t);
	ks_roof_pct_text(0, 1, t, sizeof(t));
	ok(!t[0], "no figure, no text");
}

int main(void)
{
	test_file_forms();
	test_keep_best();
	test_text();
	return tap_done();
}
