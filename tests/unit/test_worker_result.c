/* Results and options on the wire: struct -> JSON -> struct gives back every field the
 * store and the reports use, exactly (non-finite numbers included); malformed results
 * are refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/wire.h"
#include "ksearch/worker.h"
#include "tap.h"

static int same_d(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

static int same_s(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void fill_wl(struct ks_wl_result *w, int index, int is_check, int nsamples)
{
	char buf[128];
	w->index = index;
	w->is_check = is_check;
	snprintf(buf, sizeof(buf), is_check ? "check-%d" : "n=%d", index);
	w->label = strdup(buf);
	snprintf(buf, sizeof(buf), "{\"n\": %d}", 1000 + index);
	w->params_json = strdup(buf);
	w->status = is_check ? KS_STATUS_INCORRECT_NUMERICAL : KS_STATUS_PASSED;
	w->max_abs_err = 1.0 / 3.0;
	w->max_rel_err = is_check ? INFINITY : 2.5e-300;
	w->median_us = 123.456789012345678;
	w->spread_pct = NAN;
	w->gflops = 1e-17;
	w->gbps = -INFINITY;
	w->roofline_pct = 42;
	w->baseline_us = 0.1 + 0.2;
	w->speedup = 0.9999999999999999;
	w->nsamples = nsamples;
	w->samples_us = nsamples ? malloc((size_t)nsamples * sizeof(double)) : NULL;
	for (int i = 0; i < nsamples; i++)
		w->samples_us[i] = i * 0.1 + 1.0 / 7.0;
	w->nseeds = 3 + index;
	for (int s = 0; s < w->nseeds; s++) {
		w->seeds[s] = 18446744073709551615ull - (unsigned long long)s; /* > INT64_MAX */
		w->seed_abs_err[s] = s * 1e-7;
		w->seed_rel_err[s] = s == 1 ? NAN : s * 3e-9;
	}
	w->log = strdup(is_check ? "y[3] = 4.0999999, expected 4 \"quoted\"\nnew line \xc3\xa9" : "");
}

static int same_wl(const struct ks_wl_result *a, const struct ks_wl_result *b, const char *what)
{
	int okk = a->index == b->index && a->is_check == b->is_check && same_s(a->label, b->label) &&
		  same_s(a->params_json, b->params_json) && a->status == b->status &&
		  same_d(a->max_abs_err, b->max_abs_err) && same_d(a->max_rel_err, b->max_rel_err) &&
		  same_d(a->median_us, b->median_us) && same_d(a->spread_pct, b->spread_pct) &&
		  same_d(a->gflops, b->gflops) && same_d(a->gbps, b->gbps) &&
		  same_d(a->roofline_pct, b->roofline_pct) && same_d(a->baseline_us, b->baseline_us) &&
		  same_d(a->speedup, b->speedup) && a->nsamples == b->nsamples &&
		  a->nseeds == b->nseeds && same_s(a->log, b->log);
	for (int i = 0; okk && i < a->nsamples; i++)
		okk = same_d(a->samples_us[i], b->samples_us[i]);
	for (int s = 0; okk && s < a->nseeds; s++)
		okk = a->seeds[s] == b->seeds[s] && same_d(a->seed_abs_err[s], b->seed_abs_err[s]) &&
		      same_d(a->seed_rel_err[s], b->seed_rel_err[s]);
	return ok(okk, "%s round-trips field by field", what);
}

static int parse_fails(const char *json, const char *needle)
{
	struct ks_eval_result r;
	struct ks_error e = {0};
	int rc = ks_eval_result_from_wire(json, strlen(json), &r, &e);
	int good = rc == KS_EPROTO && strstr(e.msg, needle) && r.workloads == NULL &&
		   r.kernel_hash == NULL;
	if (!good)
		printf("# rc %d: %s\n", rc, e.msg);
	return good;
}

int main(void)
{
	struct ks_eval_result a;
	memset(&a, 0, sizeof(a));
	a.status = KS_STATUS_INCORRECT_NUMERICAL;
	a.speedup = 1.2345678901234567;
	a.kernel_hash = strdup("c1008fb51a51d301ed5f05a1824e78f7da3bd0c1549d6868e222ffe243a434a7");
	a.compile_log = strdup("warning: unused variable 'x'\n\ttab");
	a.sandbox = strdup("seccomp + landlock abi 7");
	a.nworkloads = 2;
	a.workloads = calloc(3, sizeof(*a.workloads));
	fill_wl(&a.workloads[0], 0, 0, 1000);
	fill_wl(&a.workloads[1], 2, 0, 0);
	a.nchecks = 1;
	a.checks = calloc(2, sizeof(*a.checks));
	fill_wl(&a.checks[0], 1, 1, 0);

	struct ks_buf wire = KS_BUF_INIT;
	ok(ks_eval_result_to_wire(&a, &wire) == 0 && wire.len > 100, "result to wire (%zu bytes)",
	   wire.len);
	struct ks_eval_result b;
	struct ks_error e = {0};
	int rc = ks_eval_result_from_wire(wire.data, wire.len, &b, &e);
	ok(rc == 0, "and back (%s)", rc ? e.msg : "");
	ok(b.status == a.status && same_d(b.speedup, a.speedup), "status and speedup");
	ok(same_s(b.kernel_hash, a.kernel_hash) && same_s(b.compile_log, a.compile_log) &&
		   same_s(b.sandbox, a.sandbox),
	   "hash, compile log, sandbox");
	ok(b.nworkloads == 2 && b.nchecks == 1, "counts");
	if (b.nworkloads == 2 && b.nchecks == 1) {
		same_wl(&a.workloads[0], &b.workloads[0], "workload 0 (1000 samples, NaN, -Inf)");
		same_wl(&a.workloads[1], &b.workloads[1], "workload 1 (no samples)");
		same_wl(&a.checks[0], &b.checks[0], "check 0 (Inf, quotes, UTF-8)");
	}
	/* a second trip gives the same text */
	struct ks_buf wire2 = KS_BUF_INIT;
	ks_eval_result_to_wire(&b, &wire2);
	ok(!strcmp(ks_buf_str(&wire2), ks_buf_str(&wire)), "re-encoding is identical");
	ks_buf_release(&wire2);
	ks_eval_result_release(&b);

	/* an empty result (a compile error) */
	struct ks_eval_result c;
	memset(&c, 0, sizeof(c));
	c.status = KS_STATUS_COMPILE_ERROR;
	ks_buf_reset(&wire);
	ks_eval_result_to_wire(&c, &wire);
	rc = ks_eval_result_from_wire(wire.data, wire.len, &b, &e);
	ok(rc == 0 && b.status == KS_STATUS_COMPILE_ERROR && b.nworkloads == 0 && !b.kernel_hash &&
		   b.workloads != NULL,
	   "an empty result round-trips (lists allocated as the evaluator does)");
	ks_eval_result_release(&b);

	/* malformed results are refused with a reason, leaving nothing to release */
	ok(parse_fails("[1,2]", "not an object"), "an array is refused");
	ok(parse_fails("{\"status\":\"GREAT\",\"workloads\":[],\"checks\":[]}", "unknown status"),
	   "an unknown status is refused");
	ok(parse_fails("{\"status\":\"PASSED\",\"checks\":[]}", "'workloads'"),
	   "missing workloads are refused");
	ok(parse_fails("{\"status\":\"PASSED\",\"workloads\":[{\"index\":0,\"status\":\"PASSED\","
		       "\"seeds\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}],\"checks\":[]}",
		       "seeds"),
	   "more than 16 seeds are refused");
	ok(parse_fails("{\"status\":\"PASSED\",\"workloads\":[{\"index\":0,\"status\":\"PASSED\","
		       "\"seeds\":[1,2],\"seed_abs_err\":[0],\"seed_rel_err\":[0,0]}],\"checks\":[]}",
		       "seed errors"),
	   "seed and error counts must agree");
	ok(parse_fails("{\"status\":\"PASSED\",\"workloads\":[{\"index\":0,\"status\":\"PASSED\","
		       "\"median_us\":\"fast\"}],\"checks\":[]}",
		       "median_us"),
	   "a number that is not is refused");
	ok(parse_fails("{\"status\":\"PASSED\",\"workloads\":[],\"checks\":[{\"index\":-4,"
		       "\"status\":\"PASSED\"}]}",
		       "index"),
	   "a negative index is refused");
	ok(parse_fails("{\"status\":\"PASSED\",\"kernel_hash\":5,\"workloads\":[],\"checks\":[]}",
		       "kernel_hash"),
	   "a hash that is not a string is refused");
	ok(parse_fails("{\"status\":", "not JSON"), "truncated JSON is refused");

	/* options: every field survives */
	struct ks_eval_opts o, p;
	ks_eval_opts_init(&o);
	const char *defs[] = {"BLOCK=128", "VEC=4", NULL};
	o.backend = "cuda";
	o.nseeds = 5;
	o.timeout_s = 7.5;
	o.memory_limit = (size_t)3 << 30;
	o.min_time_s = 0.05;
	o.min_reps = 3;
	o.max_reps = 77;
	o.warmup = 4;
	o.blocks = 3;
	o.rotate_bytes = 12345678;
	o.workloads = "0,2";
	o.skip_checks = 1;
	o.skip_baseline = 1;
	o.threads = 6;
	o.cflags = "-O2 -g";
	o.defines = defs;
	o.peak_gflops = 989.5;
	o.peak_gbps = 4800.25;
	o.suspicious_factor = 2.5;
	o.reuse_baseline = 1;
	o.seed = 9007199254740993ull;
	o.no_sandbox = 1;
	json_t *oj = ks_wire_opts(&o);
	const char *pdefs[KS_WIRE_MAX_DEFINES + 1];
	rc = ks_wire_opts_parse(oj, &p, pdefs, &e);
	ok(rc == 0, "options parse (%s)", rc ? e.msg : "");
	ok(!strcmp(p.backend, o.backend) && p.nseeds == o.nseeds && p.timeout_s == o.timeout_s &&
		   p.memory_limit == o.memory_limit && p.min_time_s == o.min_time_s &&
		   p.min_reps == o.min_reps && p.max_reps == o.max_reps && p.warmup == o.warmup &&
		   p.blocks == o.blocks && p.rotate_bytes == o.rotate_bytes,
	   "numeric options survive");
	ok(!strcmp(p.workloads, o.workloads) && p.skip_checks && p.skip_baseline &&
		   p.threads == 6 && !strcmp(p.cflags, o.cflags) && p.peak_gflops == o.peak_gflops &&
		   p.peak_gbps == o.peak_gbps && p.suspicious_factor == o.suspicious_factor &&
		   p.reuse_baseline && p.seed == o.seed && p.no_sandbox,
	   "the rest survive");
	ok(p.defines && !strcmp(p.defines[0], "BLOCK=128") && !strcmp(p.defines[1], "VEC=4") &&
		   !p.defines[2],
	   "defines survive");
	json_decref(oj);
	/* defaults stay defaults */
	ks_eval_opts_init(&o);
	oj = ks_wire_opts(&o);
	ks_wire_opts_parse(oj, &p, pdefs, &e);
	ok(p.defines == NULL && p.workloads == NULL && p.cflags == NULL && p.rotate_bytes == 0 &&
		   p.min_time_s == o.min_time_s,
	   "default options stay default (rotate_bytes 0: the worker's own cache size)");
	json_decref(oj);
	oj = json_loads("{\"nseeds\": 99}", 0, NULL);
	ok(ks_wire_opts_parse(oj, &p, pdefs, &e) == KS_EPROTO, "nseeds out of range is refused");
	json_decref(oj);

	ks_buf_release(&wire);
	ks_eval_result_release(&a);
	return tap_done();
}
