/* The final re-measurement: the median's confidence interval and the stopping rule
 * (src/eval/stats.c), the choice and its verdict on synthetic samples
 * (src/run/final_pick.c), then a real run on a tiny task with a noisy clock injected
 * through the timing seam (src/eval/workload.c): it must be flagged noisy, and the crown
 * must not move to a candidate whose advantage is inside the noise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* mkdtemp on macOS */

#include "eval/evaluator.h"
#include "eval/stats.h"
#include "ksearch/report.h"
#include "ksearch/run.h"
#include "ksearch/store.h"
#include "run/final_pick.h"
#include "tap.h"

static unsigned long long rng = 88172645463325252ull;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* n samples around m: +-jitter uniformly, plus, with probability p_slow, a slowdown of up
 * to slow_max times (interrupts and other processes only ever make a rep slower) */
static double *samples(int n, double m, double jitter, double p_slow, double slow_max)
{
	double *s = malloc(sizeof(double) * (size_t)n);
	for (int i = 0; i < n; i++) {
		s[i] = m * (1 + jitter * (2 * uniform() - 1));
		if (uniform() < p_slow)
			s[i] *= 1 + (slow_max - 1) * uniform();
	}
	return s;
}

static void cand(struct ks_final_cand *c, long id, double search, double base_us,
		 double cand_us, double jitter, double p_slow, double slow_max)
{
	memset(c, 0, sizeof(*c));
	c->id = id;
	c->search_speedup = search;
	c->passed = 1;
	c->nwl = 2;
	c->wl = calloc(2, sizeof(*c->wl));
	for (int w = 0; w < 2; w++) {
		c->wl[w].ncand = c->wl[w].nbase = 60;
		c->wl[w].cand = samples(60, cand_us * (w + 1), jitter, p_slow, slow_max);
		c->wl[w].base = samples(60, base_us * (w + 1), 0.01, 0, 1);
	}
	ks_final_cand_stats(c);
}

static void test_stats(void)
{
	double lo, hi;
	double *s = samples(200, 100, 0.05, 0, 1);
	ks_stats_median_ci(s, 200, &lo, &hi);
	ok(lo < 100.5 && hi > 99.5 && lo > 97 && hi < 103, "median CI of 200 samples +-5%%: [%.2f, %.2f]", lo, hi);
	double rel = ks_stats_median_rel_ci(s, 200);
	ok(rel > 0 && rel < 0.02, "relative half-width %.4f below 2%%", rel);
	ok(ks_stats_enough(s, 200, 0.02, 10, 1000), "200 tight samples are enough for +-2%%");
	ok(!ks_stats_enough(s, 5, 0.02, 10, 1000), "below the count floor: not enough");
	free(s);
	s = samples(30, 100, 0.05, 0.5, 8);
	ok(ks_stats_median_rel_ci(s, 30) > 0.05, "half of the reps slowed up to 8x: a wide CI (%.3f)",
	   ks_stats_median_rel_ci(s, 30));
	ok(!ks_stats_enough(s, 30, 0.02, 10, 1000), "noisy samples: not enough yet");
	ok(ks_stats_enough(s, 30, 0.02, 10, 30), "the cap on samples stops it anyway");
	free(s);
	ks_stats_median_ci(NULL, 0, &lo, &hi);
	ok(isnan(lo) && isnan(hi), "no samples: no interval");
	double three[] = {3, 1, 2};
	ks_stats_median_ci(three, 3, &lo, &hi);
	ok(lo == 1 && hi == 3, "few samples: [min, max]");
	ok(isinf(ks_stats_median_rel_ci(NULL, 0)), "no samples: unknown width");
}

static void test_choose(void)
{
	struct ks_final_cand c[3];
	struct ks_final_verdict v;
	/* the search's leader #30 at 2x; #35 measures 4% faster but half its reps are slowed:
	 * inside the noise, #30 keeps the crown */
	cand(&c[0], 30, 2.0, 200, 100, 0.02, 0, 1);
	cand(&c[1], 35, 1.9, 200, 96, 0.3, 0.5, 6);
	cand(&c[2], 36, 1.5, 200, 140, 0.02, 0, 1);
	ok(fabs(c[0].speedup - 2.0) < 0.05, "pooled speedup of a tight candidate %.3f", c[0].speedup);
	ok(c[1].spread_pct > 10, "the noisy one is spread (%.0f%%)", c[1].spread_pct);
	ks_final_choose(c, 3, &v);
	is_int(v.chosen, 0, "advantage inside the noise: the search's leader keeps the crown");
	ok(!v.significant && strstr(v.text, "#30 ") && strstr(v.text, "inside the noise"),
	   "the verdict says so: %s", v.text);
	struct ks_final_progress two = {.rounds = 2, .round1_s = 10, .later_s = 1, .last_s = 1};
	double noise;
	ok(ks_final_stop_rule(c, 3, &two, &noise) == KS_FINAL_GO_ON,
	   "leaders inside the noise (gap known to +-%.1f%%): another round", noise);
	int lead[2];
	is_int(ks_final_leaders(c, 3, lead, 2), 2, "two leaders");
	ok(lead[0] == 0 && lead[1] == 1, "the search's leader and the fastest by the final");
	for (int i = 0; i < 3; i++)
		ks_final_cand_release(&c[i]);

	/* #35 clearly faster (25%) with tight timings: it takes the crown, with a margin */
	cand(&c[0], 30, 2.0, 200, 100, 0.02, 0, 1);
	cand(&c[1], 35, 1.9, 200, 80, 0.02, 0, 1);
	ks_final_choose(c, 2, &v);
	is_int(v.chosen, 1, "a clear win moves the crown");
	ok(v.significant && v.diff_pct > 20 && v.diff_pct < 30 && v.ci_pct < 5,
	   "by %.1f%% +- %.1f%%", v.diff_pct, v.ci_pct);
	ok(strstr(v.text, "#35 beats #30 (the search phase's leader) by 2") != NULL, "verdict: %s",
	   v.text);
	is_int(ks_final_stop_rule(c, 2, &two, &noise), KS_FINAL_DECIDED,
	       "tight and apart: decided after 2 rounds");
	/* the leader also leads the final: compared with the runner-up */
	c[1].passed = 0;
	ks_final_choose(c, 2, &v);
	ok(v.chosen == 0 && strstr(v.text, "the only candidate"), "one passing: %s", v.text);
	c[1].passed = 1;
	struct ks_final_cand sw[2] = {c[1], c[0]};
	ks_final_choose(sw, 2, &v);
	ok(v.chosen == 0 && strstr(v.text, "#35 beats #30 by 2"), "leader confirmed: %s", v.text);
	for (int i = 0; i < 2; i++)
		ks_final_cand_release(&c[i]);
	/* nothing passed */
	memset(c, 0, sizeof(c));
	ks_final_choose(c, 1, &v);
	is_int(v.chosen, -1, "nothing passed: nothing crowned");
}

/* The stop rule (final_pick.h) on synthetic leaders: at least 2 rounds; then stop as soon
 * as the order is decided or the noise is below the threshold; else at the caps */
static void test_stop_rule(void)
{
	struct ks_final_cand c[3];
	struct ks_final_progress p = {.rounds = 1, .round1_s = 10, .later_s = 0, .last_s = 10};
	double noise;
	char why[256];
	memset(c, 0, sizeof(c));
	/* #1 leads the search; #2 measures 25% faster, each known to +-1%: decided */
	c[0] = (struct ks_final_cand){.id = 1, .passed = 1, .speedup = 2.0, .rel_ci = 0.01};
	c[1] = (struct ks_final_cand){.id = 2, .passed = 1, .speedup = 2.5, .rel_ci = 0.01};
	c[2] = (struct ks_final_cand){.id = 3, .passed = 1, .speedup = 1.0, .rel_ci = 0.01};
	is_int(ks_final_stop_rule(c, 3, &p, &noise), KS_FINAL_GO_ON,
	       "decided after round 1: a second round all the same (the floor of 2)");
	ok(fabs(noise - 100 * sqrt(2) * 0.01) < 1e-9, "the noise is the gap's half-width: %.3f%%", noise);
	p = (struct ks_final_progress){.rounds = 2, .round1_s = 10, .later_s = 2, .last_s = 2};
	is_int(ks_final_stop_rule(c, 3, &p, &noise), KS_FINAL_DECIDED,
	       "decided after round 2: stops early, before the cap");
	ks_final_stop_text(KS_FINAL_DECIDED, noise, why, sizeof(why));
	ok(strstr(why, "decided beyond the noise (their gap known to +-1.4%)") != NULL, "%s", why);
	is_str(ks_final_stop_key(KS_FINAL_DECIDED), "decided", "its key");
	/* the leader confirmed ahead of the runner-up is decided too */
	c[1].speedup = 1.5;
	is_int(ks_final_stop_rule(c, 3, &p, &noise), KS_FINAL_DECIDED, "the leader ahead: decided");
	/* 3% apart, each known to +-4%: the intervals overlap, go on */
	c[1].speedup = 2.06;
	c[0].rel_ci = c[1].rel_ci = 0.04;
	is_int(ks_final_stop_rule(c, 3, &p, &noise), KS_FINAL_GO_ON, "overlapping: another round");
	/* the same, at the cap of rounds, then past the time cap */
	p.rounds = KS_FINAL_MAX_ROUNDS;
	is_int(ks_final_stop_rule(c, 3, &p, &noise), KS_FINAL_ROUND_CAP, "overlapping at the round cap");
	p = (struct ks_final_progress){.rounds = 3, .round1_s = 10, .later_s = 9, .last_s = 2};
	is_int(ks_final_stop_rule(c, 3, &p, &noise), KS_FINAL_TIME_CAP,
	       "overlapping, another round would pass round 1's time: the time cap");
	ks_final_stop_text(KS_FINAL_TIME_CAP, noise, why, sizeof(why));
	ok(strstr(why, "time cap") && strstr(why, "still inside the noise"), "%s", why);
	/* 0.5% apart, each known to +-1%: noise below the threshold, a tie */
	c[1].speedup = 2.01;
	c[0].rel_ci = c[1].rel_ci = 0.01;
	p = (struct ks_final_progress){.rounds = 2, .round1_s = 10, .later_s = 2, .last_s = 2};
	is_int(ks_final_stop_rule(c, 3, &p, &noise), KS_FINAL_QUIET,
	       "inside a noise below the threshold: a tie, stop");
	is_str(ks_final_stop_key(KS_FINAL_QUIET), "noise_below_threshold", "its key");
	/* one candidate passed: nothing to order */
	c[1].passed = c[2].passed = 0;
	p.rounds = 1;
	is_int(ks_final_stop_rule(c, 3, &p, &noise), KS_FINAL_ALONE, "one passing: nothing to order");
	ok(isnan(noise), "and no gap to know");
}

/* is_str on an array trips -Waddress */
static void text_is(const char *got, const char *want)
{
	is_str(got, want, "verdict text");
}

/* The margin's interval is in the margin's own units: a 403.8% gap with a log-space
 * half-width of 0.074 is +368% to +442% (exp(d -+ 0.074) - 1), not "403.8% +- 7.4%". */
static void test_interval_units(void)
{
	struct ks_final_cand c[2];
	struct ks_final_verdict v;
	memset(c, 0, sizeof(c));
	c[0] = (struct ks_final_cand){.id = 7, .passed = 1, .speedup = 1.0, .rel_ci = 0};
	c[1] = (struct ks_final_cand){.id = 8, .passed = 1, .speedup = 5.038, .rel_ci = 0.074};
	ks_final_choose(c, 2, &v);
	is_int(v.chosen, 1, "#8 takes the crown");
	ok(fabs(v.diff_pct - 403.8) < 0.05, "gap %.2f%%", v.diff_pct);
	ok(fabs(v.lo_pct - 367.86) < 0.05 && fabs(v.hi_pct - 442.50) < 0.05,
	   "bounds in the gap's units: %.2f%% to %.2f%%", v.lo_pct, v.hi_pct);
	text_is(v.text, "#8 beats #7 (the search phase's leader) by 403.8% "
		       "(95% interval +368% to +442%)");
	ok(strstr(v.text, "\xc2\xb1") == NULL, "no +- of log units beside a linear gap");
	/* inside the noise: the interval of the faster one's gap reaches below zero */
	c[0] = (struct ks_final_cand){.id = 7, .passed = 1, .speedup = 1.0, .rel_ci = 0.02};
	c[1] = (struct ks_final_cand){.id = 8, .passed = 1, .speedup = 1.02, .rel_ci = 0.02};
	ks_final_choose(c, 2, &v);
	text_is(v.text, "#7 kept (the search phase's leader): #8 measured 2.0% faster, inside the "
		       "noise (95% interval -0.8% to +4.9%)");
	ok(fabs(v.diff_pct + 1.96) < 0.01 && fabs(v.lo_pct + 4.69) < 0.01 &&
	       fabs(v.hi_pct - 0.85) < 0.01,
	   "chosen over versus %.2f%% in [%.2f%%, %.2f%%]", v.diff_pct, v.lo_pct, v.hi_pct);
	/* the leader confirmed against the runner-up, inside the noise */
	struct ks_final_cand sw[2] = {c[1], c[0]};
	ks_final_choose(sw, 2, &v);
	text_is(v.text, "#8 leads #7 by 2.0% (95% interval -0.8% to +4.9%, inside the noise)");
	/* no samples: the width is unknown, and said so */
	sw[0].rel_ci = INFINITY;
	ks_final_choose(sw, 2, &v);
	ok(strstr(v.text, "(95% interval unknown, no samples, inside the noise)") != NULL &&
	       isnan(v.lo_pct),
	   "unknown width: %s", v.text);
}

/* the injected clock: every kernel takes the same 100 us, and 40% of the candidates' reps
 * are slowed 1.5-9x, the baseline's by up to 2x.  The candidates are equal by construction,
 * so any advantage the final sees is noise (the real timings of a loaded test machine
 * would otherwise decide the ranking) */
struct seen {
	int calls, baseline; /* timing blocks, and those of the baseline */
};

static void noisy_clock(void *ctx, int is_baseline, double *us, int n)
{
	struct seen *seen = ctx;
	seen->calls++;
	seen->baseline += is_baseline;
	for (int i = 0; i < n; i++)
		us[i] = 100.0 * (uniform() < 0.4 ? (is_baseline ? 1 + uniform() : 1.5 + 7.5 * uniform())
						 : 1.0);
}

static void test_noisy_run(void)
{
	char dir[] = "/tmp/ks_test_final_XXXXXX";
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	char out[300];
	snprintf(out, sizeof(out), "%s/run", dir);
	struct seen seen = {0};
	ks_eval_timing = (struct ks_eval_timing_seam){.version = 1, .adjust = noisy_clock,
						      .ctx = &seen};
	struct ks_run_opts o;
	ks_run_opts_init(&o);
	o.task = "tests/fixtures/eval/scale";
	o.budget = 4;
	o.seed = 2;
	o.out_dir = out;
	o.jobs = 2;
	o.final_top = 3;
	o.eval.min_time_s = 0.01;
	struct ks_run_result r;
	struct ks_error e = {0};
	int rc = ks_run(&o, NULL, NULL, &r, &e);
	ks_eval_timing = (struct ks_eval_timing_seam){.version = 1};
	is_int(rc, 0, "the run completes under a noisy clock");
	if (rc) {
		printf("# %s\n", e.msg);
		return;
	}
	ok(seen.calls > 10, "the seam saw the timing blocks (%d)", seen.calls);
	ok(r.final_noisy, "flagged noisy: %s", r.final_noise);
	/* the later rounds time the leaders alone: the baseline's blocks are the search's (one
	 * per round of 2 at most) and round 1's (3 candidates, at most 6 blocks each), 20 at
	 * most; timing it in the later rounds as well would add at least 2 x 3 per round */
	ok(r.final_rounds >= KS_FINAL_MIN_ROUNDS && r.final_rounds <= KS_FINAL_MAX_ROUNDS,
	   "rounds between the floor and the cap (%d)", r.final_rounds);
	/* equal candidates: their order is never decided, so the noise threshold or a cap ends
	 * the rounds, and the result says which */
	ok(!strcmp(r.final_stop, "round_cap") || !strcmp(r.final_stop, "time_cap") ||
		   !strcmp(r.final_stop, "noise_below_threshold"),
	   "stopped by a cap or the noise threshold: %s (%s)", r.final_stop, r.final_stop_reason);
	ok(seen.baseline > 0 && seen.baseline <= 2 + 3 * 6,
	   "the baseline timed in the search and round 1 only (%d blocks)", seen.baseline);
	ok(strstr(r.final_noise, "spread") != NULL, "the reason names the spread");
	ok(r.final_verdict[0] && !strstr(r.final_verdict, "beats"),
	   "no candidate crowned on an advantage inside the noise: %s", r.final_verdict);
	/* the crown stays with the search phase's leader: the best search speedup (the store's
	 * ranking now uses the final's figures) */
	struct ks_store *s = NULL;
	struct ks_store_candidate *list = NULL;
	size_t n = 0;
	long leader = -1;
	double lead_speedup = 0;
	if (ks_store_open(out, 0, &s, &e) == 0 &&
	    ks_store_list_candidates(s, KS_STORE_ORDER_ID, &list, &n, &e) == 0)
		for (size_t i = 0; i < n; i++)
			if (list[i].has_result && list[i].status && !strcmp(list[i].status, "PASSED") &&
			    list[i].speedup > lead_speedup) {
				leader = (long)list[i].id;
				lead_speedup = list[i].speedup;
			}
	ks_store_free(list);
	ks_store_close(s);
	is_int(r.best_candidate, leader, "best = the search phase's leader");
	struct ks_buf b = KS_BUF_INIT;
	if (ks_report_write(out, KS_REPORT_JSON, &b, &e) == 0) {
		ok(strstr(ks_buf_str(&b), "\"noisy\": true") != NULL, "report --json: noisy true");
		ok(strstr(ks_buf_str(&b), "\"noise_reason\": \"") != NULL, "report --json: the reason");
	} else {
		ok(0, "report: %s", e.msg);
	}
	ks_buf_reset(&b);
	if (ks_report_write(out, KS_REPORT_MD, &b, &e) == 0)
		ok(strstr(ks_buf_str(&b), "**Noisy measurements:**") &&
			   strstr(ks_buf_str(&b), "How sure: "),
		   "report.md: the verdict and the warning");
	ks_buf_release(&b);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ok(system(cmd) == 0, "temporary run removed");
}

int main(void)
{
	test_stats();
	test_choose();
	test_stop_rule();
	test_interval_units();
	test_noisy_run();
	return tap_done();
}
