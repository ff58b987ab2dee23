/* Run reports: what a run found, regenerated at any time from its database (DIR/run.db).
 *
 * A report reads the run store only (include/ksearch/store.h) and never changes it, so it
 * can be produced while a run is still writing.  Formats:
 *   MD    report.md: header, convergence chart (an image link to convergence.svg),
 *         leaderboard, per-workload table of the best candidate, the per-shape pick
 *         (the fastest candidate per workload beside the best), the world-model tree,
 *         failures, LLM usage and how the numbers were measured (docs/reports.md)
 *   HTML  report.html: the same sections in one self-contained file, chart inline
 *   JSON  one object for scripts: run metadata, "evaluated", "passed", "best" and
 *         "candidates" (every candidate with its per-workload results)
 *   SVG   the convergence chart alone (convergence.svg); the roofline chart is written
 *         beside it (roofline.svg) and inline in the HTML
 *
 * The best candidate is chosen on the final re-measurement when the run has one (phase
 * "final"), else on the search-phase speedup; text from kernels, logs and models is
 * escaped for the format it lands in; prompts, replies and keys are never shown. */
#ifndef KSEARCH_REPORT_H
#define KSEARCH_REPORT_H

#include "ksearch/buf.h"
#include "ksearch/error.h"

enum ks_report_format {
	KS_REPORT_MD,   /* Markdown */
	KS_REPORT_HTML, /* self-contained HTML */
	KS_REPORT_JSON, /* JSON object */
	KS_REPORT_SVG,  /* the convergence chart */
	KS_REPORT_FLASHINFER_TRACE, /* flashinfer-bench Trace JSONL: one line per candidate and workload */
};

struct ks_report_opts {
	int top;          /* leaderboard rows (default 10, at most 1000) */
	int fail_examples; /* example log lines per failing status (default 3, at most 50) */
	int tree_nodes;   /* world-model nodes drawn before the tree is folded (0: default) */
};

/* default tree_nodes: larger trees show their most visited nodes, the rest counted */
#define KS_REPORT_TREE_NODES 40

/* default options */
void ks_report_opts_init(struct ks_report_opts *o);

/* Append the report of the run in run_dir to out (default options).  KS_ENOTFOUND with
 * "no run database in 'DIR' (expected DIR/run.db)" when there is none; KS_ELIMIT when out's
 * cap is too small; store errors are passed on. */
int ks_report_write(const char *run_dir, enum ks_report_format fmt, struct ks_buf *out,
		    struct ks_error *e);
/* the same with options (o NULL: defaults) */
int ks_report_write_opts(const char *run_dir, enum ks_report_format fmt,
			 const struct ks_report_opts *o, struct ks_buf *out, struct ks_error *e);

/* Write DIR/report.md, DIR/report.html, DIR/convergence.svg and DIR/roofline.svg, each atomically (readers
 * never see half a file); the run is read once, so the three agree. */
int ks_report_write_files(const char *run_dir, struct ks_error *e);
/* the same with options (o NULL: defaults) */
int ks_report_write_files_opts(const char *run_dir, const struct ks_report_opts *o,
			       struct ks_error *e);

/* file names inside the run directory */
#define KS_REPORT_MD_FILE "report.md"
#define KS_REPORT_HTML_FILE "report.html"
#define KS_REPORT_SVG_FILE "convergence.svg"
#define KS_REPORT_ROOFLINE_FILE "roofline.svg"


/* ---- the per-shape pick ---------------------------------------------------------- */

struct ks_store;

/* Per timed workload, the passing candidate fastest there, beside the overall best (the
 * geometric mean over workloads).  A candidate is compared with the best in one phase:
 * the final re-measurement's figures where the candidate was re-measured, else the search
 * phase's for both; it wins the workload only when faster beyond the noise
 * (ks_run_faster_beyond_noise), else the best keeps it.  A run records its picks at its
 * end (the "per_shape" event); the report shows them and `ksearch export --per-shape`
 * dispatches on them. */
struct ks_shape_pick {
	int workload;           /* the workload's index in the task */
	long long candidate;    /* the winner (the overall best unless beaten beyond the noise) */
	const char *phase;      /* "final" or "search": where both figures below come from */
	double median_us, spread_pct;    /* the winner's median and spread */
	double best_us, best_spread_pct; /* the overall best's, in the same phase */
	double speedup_vs_best; /* best_us / median_us (1: the best wins) */
};

#define KS_SHAPE_PICK_MAX 64 /* timed workloads picked for, at most */

struct ks_shape_picks {
	long long best;         /* the overall best; 0: none */
	int n;                  /* timed workloads the best has a time on */
	struct ks_shape_pick w[KS_SHAPE_PICK_MAX];
	int others;             /* workloads another candidate wins */
	int recorded;           /* 1: as the run recorded them; 0: computed now (older runs) */
};

/* the picks from the store's evaluations, for the overall best candidate `best` */
int ks_shape_picks_compute(struct ks_store *s, long long best, struct ks_shape_picks *p,
			   struct ks_error *e);
/* the picks the run recorded for `best` (its latest "per_shape" event), else computed */
int ks_shape_picks_load(struct ks_store *s, long long best, struct ks_shape_picks *p,
			struct ks_error *e);
/* the picks as JSON: {"best": 27, "others": 1, "workloads": [{"workload", "candidate",
 * "phase", "median_us", "spread_pct", "best_us", "best_spread_pct", "speedup_vs_best"}]} */
int ks_shape_picks_json(const struct ks_shape_picks *p, struct ks_buf *out);

/* ---- ksearch compare ------------------------------------------------------------- */

/* how much beyond the two runs' spreads a difference must be to count (percent) */
#define KS_RUN_COMPARE_MIN_PCT 1.0
/* 1 when a median of a_us (interquartile spread a_spread %) is faster than one of b_us
 * (b_spread %) beyond the noise: a_us plus half its spread, plus KS_RUN_COMPARE_MIN_PCT, still
 * below b_us minus half its spread; compare's FAST and the report's "faster" use it */
int ks_run_faster_beyond_noise(double a_us, double a_spread, double b_us, double b_spread);

enum ks_run_compare_verdict {
	KS_RUN_COMPARE_SAME,    /* within the spreads */
	KS_RUN_COMPARE_FAST,    /* run B's best is faster */
	KS_RUN_COMPARE_SLOW,    /* run B's best is slower */
	KS_RUN_COMPARE_MISSING, /* one of the runs has no passing time for the workload */
};

struct ks_run_compare_row {
	char label[256];           /* the workload ("rows=2048 cols=2048") */
	double a_us, a_spread;     /* median (us) and interquartile spread (%) of A's best */
	double b_us, b_spread;     /* the same for B's best */
	double ratio;              /* b_us / a_us (NAN when missing) */
	enum ks_run_compare_verdict verdict;
	char a_phase[8], b_phase[8]; /* where each median comes from: "final" (the
				      * re-measurement) or "search" ("" when missing) */
	double a_base_us, b_base_us; /* each run's baseline median on the workload (NAN: none) */
	int base_differs;          /* the baselines differ by more than the verdict's margin:
				    * the machine was not as fast in both runs */
};

struct ks_run_compare {
	char task[128];
	long cand_a, cand_b;       /* the best candidate of each run */
	int nrows;
	struct ks_run_compare_row *rows; /* A's timed workloads, in order */
	double geomean;            /* geometric mean of the ratios (NAN: none) */
	/* each run's noise as its report judges it (the final re-measurement's verdict) */
	int a_noisy, b_noisy;
	char a_noise[1024], b_noise[1024]; /* why ("" when not noisy) */
	int base_differs;          /* any row's base_differs */
};

/* The best kernel of run B against that of run A, per timed workload (the final
 * re-measurement where there is one).  A difference is significant, FAST or SLOW, when the
 * medians differ by more than half of each interquartile range plus KS_RUN_COMPARE_MIN_PCT;
 * the baselines measured beside them are held to the same margin (base_differs).
 * KS_EINVAL when the runs are of different tasks or one has no passing candidate. */
int ks_report_compare(const char *dir_a, const char *dir_b, struct ks_run_compare *out,
		      struct ks_error *e);
void ks_run_compare_release(struct ks_run_compare *c);

#endif
