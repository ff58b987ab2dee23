/* The run's options (ksearch/run_opts.h) and their defaults: the policies read them, so they
 * live at the policies' layer, below the driver. */
#include "ksearch/run_opts.h"

#include <string.h>

void ks_run_opts_init(struct ks_run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = "cpu";
	o->strategy = "wm";
	o->policy = "builtin";
	o->budget = 40;
	o->seed = 1;
	o->final_top = 3;
	/* proposals per round: resolved by ks_run_default_jobs once the backend is known */
	o->jobs = 0;
	ks_eval_opts_init(&o->eval);
	/* search-phase timing: one block, a short floor, the baseline timed once */
	o->eval.min_time_s = 0.1;
	o->eval.blocks = 1;
	o->eval.reuse_baseline = 1;
	/* ...ended early once the median is known to +-1% (the final keeps its fixed floor) */
	o->eval.rep_ci_rel = 0.01;
	o->llm_temperature = -1;
	o->context = "full";
}
