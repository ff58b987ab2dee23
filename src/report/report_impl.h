/* Report internals: a run loaded once from its store, then rendered by one file per format
 * (markdown.c, html.c, json.c, svg.c); tree.c parses the world-model snapshot. */
#ifndef KS_REPORT_IMPL_H
#define KS_REPORT_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "ksearch/knowledge.h"
#include "ksearch/report.h"
#include "ksearch/store.h"

/* evaluations of one candidate on one workload in one phase, folded over seeds */
struct rp_wl {
	int present;        /* any evaluation at all */
	const char *status; /* first non-PASSED status over seeds, else PASSED */
	double max_abs_err, max_rel_err; /* worst over seeds */
	double tol_elem, tol_l2; /* what the tolerance judged, as shares of it (NAN: not
				    recorded; inf: a non-finite mismatch) */
	double median_us;   /* median over timed seeds (NAN: not timed) */
	double spread_pct;  /* largest spread over timed seeds */
	double gflops, gbps, roofline_pct, baseline_us, speedup;
	double library_us;  /* the task's library kernel timed beside it (NAN: none) */
	double library_speedup; /* library_us / median_us (NAN: no library timed) */
	const char *log;    /* first non-empty log of a failing seed, else of any seed */
};

/* one candidate with its results, in insertion order */
struct rp_cand {
	const struct ks_store_candidate *c;
	struct ks_store_eval *evals; /* every phase, store-owned array */
	size_t nevals;
	struct rp_wl *search;        /* per workload (nworkloads entries) */
	struct rp_wl *final;         /* per workload; final_any says whether any is present */
	int final_any;
	/* the figure the leaderboard ranks by */
	int rank_group;          /* 0 final PASSED, 1 search PASSED and not re-measured,
				  * 2 failed (in the search or in the re-measurement), 3 not evaluated */
	double speedup;          /* final when rank_group 0, else search (NAN when none) */
	double speedup_spread;   /* largest timing spread (%) behind that speedup */
	double library_speedup;  /* geometric mean of the same phase's library_speedup over the
				    workloads the library was timed on (NAN: none) */
	const char *phase;       /* "final" or "search" */
	double search_speedup;   /* the search phase's figure, whatever ranks it (NAN: none) */
	double search_spread;    /* the largest timing spread behind it (%) */
	char fail_line[200];     /* failed: the first line of the log that explains it */
};

/* one world-model node (from the latest snapshot); strings point into tree_json */
struct rp_node {
	char id[64], parent[64];
	const char *title, *description, *status;
	double rating, confidence, difficulty;
	long attempts, failures, visits; /* -1: not in the snapshot */
	int64_t candidate_id;    /* 0: none */
	double score;            /* the snapshot's own score (NAN: none) */
	char impacts[256];       /* "memory_bandwidth=high, ..." */
	int parent_index;        /* -1: a root */
	int first_child, next_sibling;
	int on_best_path, is_active;
	int shown;               /* drawn in the report (large trees are folded) */
	int subtree;             /* nodes in its subtree, itself included */
};

struct rp_tree {
	void *doc;               /* json_t * of the snapshot (owns the strings) */
	struct rp_node *nodes;
	int nnodes;
	int nshown;              /* nodes drawn (nnodes unless the tree is folded) */
	int root;                /* index of the root or -1 */
	const char *kernel_summary;
	const char **open_questions;
	int nquestions;
	int snapshot_round, snapshot_version, nsnapshots;
	char error[256];         /* why the snapshot could not be read ("" when fine) */
	int no_tree;             /* the snapshot has no decision_tree: a strategy without one */
	const char *strategy;    /* the snapshot's "strategy" (NULL: not given) */
};

struct rp_status_count {
	const char *status;
	int count;
};

#define RP_NTIMES 8
/* "compile", "reference", "start", "inputs", "check", "compare", "timing", "other" */
extern const char *const rp_time_names[RP_NTIMES];

struct rp_run {
	char dir[4096];
	struct ks_report_opts opts;
	struct ks_store_run *run;
	struct ks_store_workload *workloads;
	size_t nworkloads;
	struct ks_store_candidate *cands_raw;
	struct rp_cand *cands;
	size_t ncands;
	int *ranked;             /* candidate indexes, best first */
	struct ks_store_point *conv;
	size_t nconv;
	struct ks_store_llm *llm;
	size_t nllm;
	struct rp_tree tree;
	/* derived */
	int evaluated, passed, failed;
	struct rp_status_count fails[16];
	int nfails;
	int best;                /* index into cands or -1 */
	int any_final;
	double wall_s;           /* NAN when unknown */
	char best_file[4200];    /* DIR/best.<ext> ("" when there is no best) */
	int best_file_exists;
	char target[128];        /* spec / device from the run config ("" when unknown) */
	/* the spec the roofs came from (the "roofline" event; "" in older runs), and whether
	 * its peaks were measured at the start of this run (auto on the host) */
	char spec_name[64], spec_title[128];
	int peaks_measured;
	char selection[64];      /* --workloads from the run config ("" when all) */
	/* the final's verdict event (has_final_event 0: none recorded) */
	int has_final_event;
	int64_t final_chosen;    /* candidate id the final crowned, -1: none */
	char final_verdict[320]; /* "#30 beats #35 by 8.0% ± 3.0%" */
	double final_s;          /* the final's wall time (NAN: not recorded) */
	int final_rounds;
	char final_stop[32];     /* why its rounds ended ("decided"; "" in older runs) */
	char final_stop_reason[256];
	int final_noisy;
	char final_noise[1024];  /* why the measurements are not to be trusted */
	char stopped[256];       /* why the search phase ended ("budget"; "" when not recorded) */
	/* what the run could not use from the model, one "llm_rejected" event each (the
	 * model was told in its next prompt): messages, NUL-separated */
	struct ks_buf model_rejects;
	int nmodel_rejects;
	/* where the candidates' wall time went (the driver's "eval_times" events): sums in
	 * seconds over ntimes candidates, in the order of rp_time_names */
	double times[RP_NTIMES];
	int ntimes;
	/* the roofs "% of roofline" used (the run's "roofline" event; 0: not recorded) */
	double roof_gflops, roof_gbps;
	char roof_dtype[16];
	/* where the measured figures behind them came from (probe "" when the spec's were
	 * not measured, or the run is older than the record): the copy bandwidth and the
	 * f32 FMA rate */
	struct ks_spec_measure roof_gbps_measure, roof_gflops_measure;
	double started;          /* the run's start, unix time (0: unknown) */
	/* the task's library kernel (OpenBLAS, cuBLAS): its name from the run's "library"
	 * event ("library" when not recorded); has_library: any candidate was timed with it */
	char library[64];
	int has_library;
	/* the per-shape pick beside the best: as the run recorded it, else computed */
	struct ks_shape_picks picks;
};

int rp_load(const char *dir, const struct ks_report_opts *o, struct rp_run *r,
	    struct ks_error *e);
/* fold the evaluations ev[0..n) of one phase ("search", "final") on the workload of this
 * index over the input seeds: worst error, median of the timed seeds' medians */
void rp_wl_fold(const struct ks_store_eval *ev, size_t n, const char *phase, int index,
		struct rp_wl *w);
void rp_release(struct rp_run *r);

/* the target row's text: the run's spec, "auto" naming the hardware it detected */
void rp_fmt_target(const struct rp_run *r, char *dst, size_t n);
/* fill the tree from a snapshot JSON text (never fails: problems land in t->error) */
void rp_tree_parse(struct rp_tree *t, const char *json, const struct rp_run *r);
void rp_tree_release(struct rp_tree *t);

/* the shared sections (body.c); html 0: Markdown */
int rp_render_body(const struct rp_run *r, int html, struct ks_buf *out);
int rp_render_md(const struct rp_run *r, struct ks_buf *out);
int rp_render_html(const struct rp_run *r, struct ks_buf *out);
int rp_render_json(const struct rp_run *r, struct ks_buf *out, struct ks_error *e);
int rp_render_svg(const struct rp_run *r, struct ks_buf *out);
int rp_render_fitrace(const struct rp_run *r, struct ks_buf *out, struct ks_error *e);
int rp_render_roofline(const struct rp_run *r, struct ks_buf *out);

/* ---- helpers (format.c) ---- */
/* length of the valid UTF-8 sequence at s (1-4), 0 when invalid */
size_t rp_utf8_valid(const char *s);
/* s with invalid UTF-8 bytes replaced by U+FFFD */
int rp_utf8_clean(struct ks_buf *b, const char *s);
/* escaped text for HTML / SVG (invalid UTF-8 becomes U+FFFD) (& < > " '), control characters become spaces */
int rp_html_esc(struct ks_buf *b, const char *s);
/* escaped inline Markdown text (backslash escapes; newlines become spaces) */
int rp_md_esc(struct ks_buf *b, const char *s);
/* a Markdown code span safe inside a table cell */
int rp_md_code(struct ks_buf *b, const char *s);
/* first non-empty line of text, at most max bytes, into dst */
void rp_first_line(const char *text, char *dst, size_t max);
/* "12.3 s", "4 min 05 s", "1 h 02 min" */
void rp_fmt_duration(double s, char *dst, size_t n);
/* the candidate's knobs as "BM=64 BN=32" ("" when none), into dst */
void rp_fmt_knobs(const char *knobs_json, char *dst, size_t n);
/* status of a candidate in plain words ("PASSED", "PASSED, final TIMEOUT", "not evaluated") */
void rp_fmt_status(const struct rp_cand *c, char *dst, size_t n);
/* colour of an evaluation status in charts and tables */
const char *rp_status_color(const char *status);
/* index of the candidate with this id or -1 */
int rp_find_cand(const struct rp_run *r, int64_t id);
/* the timed (not check) workload indexes in order; returns how many */
int rp_timed_workloads(const struct rp_run *r, int *idx, int max);

#define RP_NA "\xe2\x80\x94" /* em dash for a missing number */

#endif
