/* The final re-measurement's statistics: pooled samples per candidate and workload, the
 * speedup with its confidence interval, whether another round is worth it, which candidate
 * to crown and how sure that choice is.  Pure functions on samples (no processes), so tests
 * can feed them any noise they like. */
#ifndef KS_SEARCH_FINAL_PICK_H
#define KS_SEARCH_FINAL_PICK_H

#include <stddef.h>

/* When the final stops re-measuring the leaders: nvbench's stop rule for one measurement
 * (a floor of samples, then stop once the relative noise is below --max-noise, else at
 * --timeout), turned to the order of two candidates.  At least KS_FINAL_MIN_ROUNDS rounds
 * (the leaders measured in both orders, against drift); then stop as soon as the order is
 * decided (the gap beyond its 95% interval, the rule ks_final_choose crowns by) or the
 * noise is below KS_FINAL_MAX_NOISE_PCT (the gap known that closely and still inside it: a
 * tie at a resolution that matters); else at KS_FINAL_MAX_ROUNDS, or when another round
 * would take the later rounds past KS_FINAL_LATER_SHARE times round 1's wall time (round 1
 * measures every candidate with the baseline: the cap scales with the task and machine). */
#define KS_FINAL_MIN_ROUNDS 2
#define KS_FINAL_MAX_ROUNDS 6
#define KS_FINAL_MAX_NOISE_PCT 2.0
#define KS_FINAL_LATER_SHARE 1.0
/* the leaders' timing spread (IQR % of the median) above which, after the last round, the
 * final is flagged noisy */
#define KS_FINAL_NOISY_SPREAD_PCT 25.0
/* the search phase and the final disagree when their speedups differ by more than this */
#define KS_FINAL_DISAGREE 2.0

struct ks_final_pool {
	double *cand, *base; /* repetitions (us) pooled over rounds */
	int ncand, nbase;
	double *lib;         /* the library's (OpenBLAS, cuBLAS) where it was timed */
	int nlib;
};

struct ks_final_cand {
	long id;
	double search_speedup;  /* the search phase's figure */
	int passed;             /* every re-measurement PASSED so far */
	int nwl;                /* timed workloads */
	struct ks_final_pool *wl;
	double known_speedup;   /* > 0: re-measured earlier, no samples (a resumed run) */
	/* from ks_final_cand_stats */
	double speedup;         /* geometric mean of the pooled per-workload median ratios */
	double rel_ci;          /* 95% half-width of that speedup, relative (0.03: +-3%) */
	double spread_pct;      /* largest IQR % of the pooled candidate samples */
};

struct ks_final_verdict {
	int chosen;             /* index into the candidates or -1 */
	int versus;             /* the candidate it was compared with, or -1 */
	double diff_pct;        /* chosen over versus, % (negative: versus measured faster) */
	double ci_pct;          /* 95% half-width of ln(chosen / versus), x 100: log units, not
				 * those of diff_pct (kept for old readers; use lo_pct, hi_pct) */
	double lo_pct, hi_pct;  /* diff_pct's 95% interval in its own units, exp(d -+ hw) - 1,
				 * % (NAN: no samples) */
	int significant;        /* the difference is outside the noise */
	char text[320];         /* "#30 beats #35 by 8.0% (95% interval +4.8% to +11.3%)" */
};

/* append n samples to a pool; -1 when out of memory */
int ks_final_pool_add(double **dst, int *ndst, const double *src, int n);
void ks_final_cand_release(struct ks_final_cand *c);
/* fill speedup, rel_ci and spread_pct from the pools */
void ks_final_cand_stats(struct ks_final_cand *c);
/* the indexes of up to max leaders: the search phase's leader (the first passing candidate,
 * candidates being in search order) and the fastest by the pooled speedup; returns how many */
int ks_final_leaders(const struct ks_final_cand *c, int n, int *out, int max);
/* why the final stopped (or goes on) */
enum ks_final_stop {
	KS_FINAL_GO_ON,            /* measure the leaders again */
	KS_FINAL_DECIDED,          /* the leaders' order lies beyond the noise */
	KS_FINAL_QUIET,            /* the noise is below KS_FINAL_MAX_NOISE_PCT: a tie inside it */
	KS_FINAL_ALONE,            /* one candidate in the final (--top 1, or one passed) */
	KS_FINAL_ROUND_CAP,        /* KS_FINAL_MAX_ROUNDS measured, still inside the noise */
	KS_FINAL_TIME_CAP,         /* another round would pass the time cap */
	KS_FINAL_MEASURED_EARLIER, /* the leaders were re-measured before a --resume */
	KS_FINAL_INTERRUPTED,      /* a stop was requested (Ctrl-C) */
	KS_FINAL_SKIPPED,          /* --top 0: no re-measurement */
	KS_FINAL_FAILED,           /* a measurement failed (an infrastructure error) */
};

/* the rounds so far, for the caps */
struct ks_final_progress {
	int rounds;      /* rounds measured */
	double round1_s; /* round 1's wall time */
	double later_s;  /* the later rounds' wall time, together */
	double last_s;   /* the last round's wall time: the estimate of the next one */
};

/* Whether to measure the leaders (ks_final_leaders) again, on their stats; *noise_pct gets
 * the 95% half-width of their gap in % (NAN without two leaders or samples). */
enum ks_final_stop ks_final_stop_rule(const struct ks_final_cand *c, int n,
				      const struct ks_final_progress *p, double *noise_pct);
/* a stable key for JSON: "decided", "noise_below_threshold", "one_candidate", "round_cap",
 * "time_cap", "measured_earlier", "interrupted", "skipped", "failed" ("" for GO_ON) */
const char *ks_final_stop_key(enum ks_final_stop s);
/* the reason as a phrase: "the leaders' order was decided beyond the noise" */
void ks_final_stop_text(enum ks_final_stop s, double noise_pct, char *dst, size_t n);
/* Crown a candidate.  The search phase's leader keeps the crown unless another candidate
 * beats it by more than the noise (the lower end of the difference's 95% interval above
 * zero); a candidate whose advantage is inside the noise is never crowned.  c is in search
 * order; stats must be filled. */
void ks_final_choose(const struct ks_final_cand *c, int n, struct ks_final_verdict *v);

#endif
