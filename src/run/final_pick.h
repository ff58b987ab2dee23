/* The final re-measurement's statistics: pooled samples per candidate and workload, the
 * speedup with its confidence interval, whether another round is worth it, which candidate
 * to crown and how sure that choice is.  Pure functions on samples (no processes), so tests
 * can feed them any noise they like. */
#ifndef KS_SEARCH_FINAL_PICK_H
#define KS_SEARCH_FINAL_PICK_H

#include <stddef.h>

/* Rounds of re-measurement at most (the first measures every candidate, later ones only the
 * leaders), the leaders' timing spread (IQR % of the median) above which another round is
 * taken, and above which, after the last round, the final is flagged noisy. */
#define KS_FINAL_MAX_ROUNDS 3
#define KS_FINAL_SPREAD_PCT 10.0
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
/* 1 when the leaders deserve another round: a spread above KS_FINAL_SPREAD_PCT, or two
 * leaders the measurements cannot yet tell apart while the interval is wider than 2% */
int ks_final_need_round(const struct ks_final_cand *c, int n);
/* Crown a candidate.  The search phase's leader keeps the crown unless another candidate
 * beats it by more than the noise (the lower end of the difference's 95% interval above
 * zero); a candidate whose advantage is inside the noise is never crowned.  c is in search
 * order; stats must be filled. */
void ks_final_choose(const struct ks_final_cand *c, int n, struct ks_final_verdict *v);

#endif
