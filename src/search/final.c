/* The end of a run: the top candidates of the search are measured again with more
 * repetitions, interleaved with the baseline, and the best is chosen on that
 * re-measurement (a single lucky measurement never wins: no winner's curse). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/log.h"
#include "ksearch/worker.h"
#include "search/run_internal.h"
#include "util/fs.h"

static int write_best(struct ks_run_state *st, const struct ks_store_candidate *c,
		      double speedup, struct ks_run_result *r, struct ks_error *e)
{
	struct ks_buf src = KS_BUF_INIT, out = KS_BUF_INIT;
	int rc = ks_store_get_source(st->store, c->id, &src, e);
	if (rc)
		goto done;
	ks_buf_addf(&out,
		    "/* ksearch: best kernel of run %s\n"
		    " * task %s, backend %s, candidate %lld: %s\n"
		    " * %.2fx the baseline (geometric mean over workloads, re-measured)\n"
		    " * knobs: %s\n"
		    " * check it again: ksearch eval %s %s/best.%s\n"
		    " */\n",
		    st->dir, st->task->name, st->be->name, (long long)c->id,
		    c->action ? c->action : "", speedup, c->knobs ? c->knobs : "{}",
		    st->task->name, st->dir, st->be->ext);
	/* bake the knob values in so the file stands alone */
	const char *d = c->defines ? c->defines : "";
	while (*d) {
		while (*d == ' ')
			d++;
		if (strncmp(d, "-D", 2))
			break;
		d += 2;
		const char *end = strchr(d, ' ');
		size_t len = end ? (size_t)(end - d) : strlen(d);
		const char *eq = memchr(d, '=', len);
		if (eq)
			ks_buf_addf(&out, "#define %.*s %.*s\n", (int)(eq - d), d,
				    (int)(len - (size_t)(eq - d) - 1), eq + 1);
		d += len;
	}
	ks_buf_addf(&out, "\n%s", ks_buf_str(&src));
	snprintf(r->best_source, sizeof(r->best_source), "%s/best.%s", st->dir, st->be->ext);
	rc = ks_file_write_atomic(r->best_source, out.data, out.len, e);
done:
	ks_buf_release(&src);
	ks_buf_release(&out);
	return rc;
}

/* a candidate to re-measure: its source and its defines as a compiler list */
struct pending {
	size_t index; /* in the store's list */
	struct ks_buf src;
	char defs[KS_TEMPLATE_MAX_KNOBS + 1][128];
	const char *list[KS_TEMPLATE_MAX_KNOBS + 1];
	struct ks_eval_result res;
	int have_res;
};

static void parse_defines(const char *defines, struct pending *p)
{
	char copy[4096];
	int nd = 0;
	snprintf(copy, sizeof(copy), "%s", defines ? defines : "");
	for (char *tok = strtok(copy, " "); tok && nd < KS_TEMPLATE_MAX_KNOBS;
	     tok = strtok(NULL, " "))
		if (!strncmp(tok, "-D", 2)) {
			snprintf(p->defs[nd], sizeof(p->defs[nd]), "%s", tok + 2);
			p->list[nd] = p->defs[nd];
			nd++;
		}
	p->list[nd] = NULL;
}

/* measure every pending candidate: on the workers when the run has them (all at once, one
 * per device), else here, one after the other */
static int measure(struct ks_run_state *st, const struct ks_eval_opts *fo,
		   const struct ks_store_candidate *list, struct pending *pd, int np,
		   struct ks_error *e)
{
	int rc = 0;
	if (st->pool) {
		struct ks_pool_job jobs[16];
		struct ks_eval_result res[16];
		for (int k = 0; k < np; k++)
			jobs[k] = (struct ks_pool_job){.task = st->o.task, .opts = fo,
						       .source = ks_buf_str(&pd[k].src),
						       .defines = pd[k].list,
						       .units = st->task->nworkloads + st->task->nchecks};
		char what[128];
		snprintf(what, sizeof(what), "re-measuring %d candidates on the workers", np);
		ks_run_progress_tick(st, "final", what, 0);
		rc = ks_pool_evaluate_batch(st->pool, jobs, np, res, e);
		for (int k = 0; k < np; k++) {
			pd[k].res = res[k];
			pd[k].have_res = jobs[k].rc == 0;
		}
		return rc;
	}
	struct ks_evaluator *ev = NULL;
	if ((rc = ks_evaluator_new(st->task, fo, &ev, e)))
		return rc;
	for (int k = 0; k < np && !rc; k++) {
		const struct ks_store_candidate *c = &list[pd[k].index];
		char what[320];
		snprintf(what, sizeof(what), "%d/%d candidate #%lld: %s", k + 1, np, (long long)c->id,
			 c->action ? c->action : "");
		ks_run_progress_tick(st, "final", what, 0);
		rc = ks_evaluator_run(ev, ks_buf_str(&pd[k].src), NULL, pd[k].list, &pd[k].res, e);
		pd[k].have_res = rc == 0;
	}
	ks_evaluator_free(ev);
	return rc;
}

int ks_run_final(struct ks_run_state *st, struct ks_run_result *r, struct ks_error *e)
{
	struct ks_store_candidate *list = NULL;
	size_t n = 0;
	int rc = ks_store_list_candidates(st->store, KS_STORE_ORDER_BEST, &list, &n, e);
	if (rc)
		return rc;
	struct ks_eval_opts fo = st->o.eval;
	fo.min_time_s = st->o.eval.min_time_s * 3 > 0.3 ? st->o.eval.min_time_s * 3 : 0.3;
	fo.blocks = 3;
	fo.reuse_baseline = 0;
	int top = st->o.final_top > 0 ? st->o.final_top : 3, chosen = -1, seen = 0, np = 0;
	if (top > 16)
		top = 16;
	double best = 0;
	struct pending pd[16];
	for (size_t i = 0; i < n && seen < top && !rc; i++) {
		const struct ks_store_candidate *c = &list[i];
		if (!c->has_result || !c->status || strcmp(c->status, "PASSED"))
			continue;
		seen++;
		if (c->has_final) { /* a resumed run that already re-measured it */
			if (!strcmp(c->final_status, "PASSED") && c->final_speedup > best) {
				best = c->final_speedup;
				chosen = (int)i;
			}
			continue;
		}
		struct pending *p = &pd[np++];
		memset(p, 0, sizeof(*p));
		p->index = i;
		parse_defines(c->defines, p);
		rc = ks_store_get_source(st->store, c->id, &p->src, e);
	}
	if (!rc && np)
		rc = measure(st, &fo, list, pd, np, e);
	/* record in ranking order whatever was measured, even after a failure */
	for (int k = 0; k < np; k++) {
		const struct ks_store_candidate *c = &list[pd[k].index];
		if (pd[k].have_res) {
			const struct ks_eval_result *res = &pd[k].res;
			int wrc = ks_run_record(st, c->id, "final", res, rc ? NULL : e);
			rc = rc ? rc : wrc;
			ks_info("final: candidate %lld %s %.2fx (search phase %.2fx)", (long long)c->id,
				ks_status_name(res->status), res->speedup, c->speedup);
			if (res->status == KS_STATUS_PASSED && res->speedup > best) {
				best = res->speedup;
				chosen = (int)pd[k].index;
			}
			ks_eval_result_release(&pd[k].res);
		}
		ks_buf_release(&pd[k].src);
	}
	if (!rc && chosen >= 0) {
		r->best_candidate = (long)list[chosen].id;
		r->best_speedup = best;
		snprintf(r->best_action, sizeof(r->best_action), "%s",
			 list[chosen].action ? list[chosen].action : "");
		rc = write_best(st, &list[chosen], best, r, e);
	}
	ks_store_free(list);
	return rc;
}
