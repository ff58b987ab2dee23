/* The final re-measurement's phases and the state they share: final.c measures the top
 * candidates in rounds until the stop rule (final_pick.h) ends them; final_record.c judges
 * and writes what was found (the store's records, the verdict, DIR/best.<ext>). */
#ifndef KS_RUN_FINAL_IMPL_H
#define KS_RUN_FINAL_IMPL_H

#include "ksearch/template.h"
#include "run/final_pick.h"
#include "run/run_internal.h"
#include "util/defines.h"

/* a candidate to re-measure: its source and its defines as a compiler list */
struct ks_final_pending {
	size_t index; /* in the store's list */
	struct ks_buf src;
	struct ks_defines defs; /* defs.list: what the compiler is given */
	struct ks_eval_result res; /* the result recorded: the first round's, or a failure */
	int have_res;
	struct ks_final_cand fc;
};

/* one final in progress */
struct ks_final_run {
	struct ks_run_state *st;
	struct ks_run_result *r;
	double t_start;
	struct ks_store_candidate *list; /* the store's candidates, best first */
	size_t n;
	struct ks_eval_opts fo, lo;      /* round 1's timing; the later rounds' (leaders only) */
	struct ks_final_pending pd[KS_RUN_MAX_TOP]; /* the candidates, in search order */
	int np;
	int no_final;                    /* --top 0 */
	struct ks_final_progress prog;
	enum ks_final_stop stop;         /* why the rounds ended */
	double noise_pct;                /* the leaders' gap's 95% half-width, % (NAN: none) */
	struct ks_final_cand fc[KS_RUN_MAX_TOP]; /* the candidates' stats after the rounds */
	struct ks_final_verdict v;
	int skipped;                     /* nothing measured: --top 0, or Ctrl-C before round 1 */
	char busy[512];                  /* the machine's other work, at the start or the end */
	int was_busy;
	char noise[1024];                /* why not to trust the figures ("": trust them) */
	int noisy;
};

/* the roofs "% of roofline" used, as the run's "roofline" event */
int ks_final_record_roofs(struct ks_run_state *st, struct ks_error *e);
/* other work on the machine (load, other ksearch processes): appends why; 1 when busy */
int ks_final_machine_busy(char *why, size_t n);
/* is the crowned figure to be trusted?  fills f->noise and f->noisy */
void ks_final_judge_noise(struct ks_final_run *f);
/* record, in ranking order, whatever was measured (also after a failure: rc is the
 * measurement's, e NULL then) */
int ks_final_record_results(struct ks_final_run *f, int rc, struct ks_error *e);
/* the run's "final" event: the verdict, how sure, why the rounds stopped */
int ks_final_record_verdict(struct ks_final_run *f, struct ks_error *e);
/* the best into r, the "library" event and DIR/best.<ext> */
int ks_final_crown(struct ks_final_run *f, struct ks_error *e);
/* the per-shape pick beside the best (include/ksearch/report.h), as the "per_shape" event */
int ks_final_record_shapes(struct ks_final_run *f, struct ks_error *e);

#endif
