/* The end of a run: the top candidates of the search are measured again with more
 * repetitions, interleaved with the baseline, and the best is chosen on that
 * re-measurement (a single lucky measurement never wins: no winner's curse). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/log.h"
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
	struct ks_evaluator *ev = NULL;
	int top = st->o.final_top > 0 ? st->o.final_top : 3, chosen = -1, measured = 0;
	double best = 0;
	for (size_t i = 0; i < n && measured < top && !rc; i++) {
		const struct ks_store_candidate *c = &list[i];
		if (!c->has_result || !c->status || strcmp(c->status, "PASSED"))
			continue;
		if (c->has_final) { /* a resumed run that already re-measured it */
			measured++;
			if (!strcmp(c->final_status, "PASSED") && c->final_speedup > best) {
				best = c->final_speedup;
				chosen = (int)i;
			}
			continue;
		}
		if (!ev && (rc = ks_evaluator_new(st->task, &fo, &ev, e)))
			break;
		struct ks_buf src = KS_BUF_INIT;
		if ((rc = ks_store_get_source(st->store, c->id, &src, e)))
			break;
		char defs[KS_TEMPLATE_MAX_KNOBS + 1][128];
		const char *list_d[KS_TEMPLATE_MAX_KNOBS + 1];
		int nd = 0;
		char copy[4096];
		snprintf(copy, sizeof(copy), "%s", c->defines ? c->defines : "");
		for (char *tok = strtok(copy, " "); tok && nd < KS_TEMPLATE_MAX_KNOBS; tok = strtok(NULL, " "))
			if (!strncmp(tok, "-D", 2))
				snprintf(defs[nd], sizeof(defs[nd]), "%s", tok + 2), list_d[nd] = defs[nd], nd++;
		list_d[nd] = NULL;
		ks_run_progress_tick(st, "final", c->action, 0);
		struct ks_eval_result res;
		rc = ks_evaluator_run(ev, ks_buf_str(&src), NULL, list_d, &res, e);
		ks_buf_release(&src);
		if (rc)
			break;
		rc = ks_run_record(st, c->id, "final", &res, e);
		measured++;
		ks_info("final: candidate %lld %s %.2fx (search phase %.2fx)", (long long)c->id,
			ks_status_name(res.status), res.speedup, c->speedup);
		if (res.status == KS_STATUS_PASSED && res.speedup > best) {
			best = res.speedup;
			chosen = (int)i;
		}
		ks_eval_result_release(&res);
	}
	if (ev)
		ks_evaluator_free(ev);
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
