/* The end of a run: the top candidates of the search are measured again with more
 * repetitions, interleaved with the baseline, and the best is chosen on that
 * re-measurement (a single lucky measurement never wins: no winner's curse).  Repetitions
 * stop when each median is known to +-2% (or at a cap); while the leaders' timings stay
 * spread, they are measured again in more rounds, alternating (the candidates alone: the
 * baseline's figure is the first round's, interleaved with each); the crown goes to another
 * candidate than the search's leader only when it wins by more than the noise, and the
 * verdict says by how much, with the 95% interval of that gap in the same units ("#30
 * beats #35 by 8.0% (95% interval +4.8% to +11.3%)").  A final taken on a loaded
 * machine, or one that disagrees with the search by more than 2x, is flagged noisy. */
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <unistd.h>

#include "eval/stats.h"
#include "ksearch/backend.h"
#include "ksearch/log.h"
#include "ksearch/worker.h"
#include "ksearch/template.h"
#include "run/run_internal.h"
#include "run/final_pick.h"
#include "util/fs.h"

static int write_best(struct ks_run_state *st, const struct ks_store_candidate *c,
		      double speedup, int remeasured, struct ks_run_result *r, struct ks_error *e)
{
	struct ks_buf src = KS_BUF_INIT, out = KS_BUF_INIT;
	int rc = ks_store_get_source(st->store, c->id, &src, e);
	if (rc)
		goto done;
	ks_buf_addf(&out,
		    "/* ksearch: best kernel of run %s\n"
		    " * task %s, backend %s, candidate %lld: %s\n"
		    " * %.2fx the baseline (geometric mean over workloads, %s)\n"
		    " * knobs: %s\n"
		    " * check it again: ksearch eval %s %s/best.%s\n"
		    " */\n",
		    st->dir, st->task->name, st->be->name, (long long)c->id,
		    c->action ? c->action : "", speedup,
		    remeasured ? "re-measured" : "search phase, not re-measured",
		    c->knobs ? c->knobs : "{}",
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
	struct ks_eval_result res; /* the result recorded: the first round's, or a failure */
	int have_res;
	struct ks_final_cand fc;
};

static void parse_defines(const char *defines, struct pending *p)
{
	char copy[4096];
	int nd = 0;
	snprintf(copy, sizeof(copy), "%s", defines ? defines : "");
	char *save = NULL;
	for (char *tok = strtok_r(copy, " ", &save); tok && nd < KS_TEMPLATE_MAX_KNOBS;
	     tok = strtok_r(NULL, " ", &save))
		if (!strncmp(tok, "-D", 2)) {
			snprintf(p->defs[nd], sizeof(p->defs[nd]), "%s", tok + 2);
			p->list[nd] = p->defs[nd];
			nd++;
		}
	p->list[nd] = NULL;
}

/* measure every pending candidate: on the workers when the run has them (all at once, one
 * per device), else here, one after the other */
/* pool one round's samples into the candidate; a failing round ends its candidacy and
 * becomes the result recorded */
static void take_round(struct pending *p, struct ks_eval_result *res, int ok)
{
	if (!ok) {
		p->fc.passed = 0;
		ks_eval_result_release(res);
		return;
	}
	if (!p->have_res || res->status != KS_STATUS_PASSED) {
		if (p->have_res)
			ks_eval_result_release(&p->res);
		p->res = *res;
		memset(res, 0, sizeof(*res));
		p->have_res = 1;
		p->fc.passed = p->res.status == KS_STATUS_PASSED;
		if (!p->fc.passed)
			return;
		free(p->fc.wl);
		p->fc.nwl = p->res.nworkloads;
		p->fc.wl = calloc(p->fc.nwl ? (size_t)p->fc.nwl : 1, sizeof(*p->fc.wl));
		if (!p->fc.wl)
			p->fc.passed = 0;
		res = &p->res;
	}
	for (int w = 0; p->fc.wl && w < p->fc.nwl && w < res->nworkloads; w++) {
		const struct ks_wl_result *x = &res->workloads[w];
		/* a worker's result carries the baseline's median only: pool that */
		int nb = x->nbaseline_samples;
		const double *bs = nb ? x->baseline_samples_us : &x->baseline_us;
		if (!nb && x->baseline_us > 0)
			nb = 1;
		int nl = x->nlibrary_samples;
		const double *ls = nl ? x->library_samples_us : &x->library_us;
		if (!nl && x->library_us > 0)
			nl = 1;
		if (ks_final_pool_add(&p->fc.wl[w].cand, &p->fc.wl[w].ncand, x->samples_us,
				      x->nsamples) ||
		    ks_final_pool_add(&p->fc.wl[w].base, &p->fc.wl[w].nbase, bs, nb) ||
		    ks_final_pool_add(&p->fc.wl[w].lib, &p->fc.wl[w].nlib, ls, nl))
			p->fc.passed = 0; /* out of memory: no figure to trust */
	}
	if (res != &p->res)
		ks_eval_result_release(res);
}

/* measure the pending candidates named in which[]: on the workers when the run has them
 * (all at once, one per device), else here, one after the other */
static int measure(struct ks_run_state *st, const struct ks_eval_opts *fo,
		   const struct ks_store_candidate *list, struct pending *pd, const int *which,
		   int nw, int round, struct ks_error *e)
{
	int rc = 0;
	struct ks_eval_result res[16];
	memset(res, 0, sizeof(res));
	if (st->pool) {
		struct ks_pool_job jobs[16];
		for (int k = 0; k < nw; k++) {
			struct pending *p = &pd[which[k]];
			jobs[k] = (struct ks_pool_job){.task = st->o.task, .opts = fo,
						       .source = ks_buf_str(&p->src),
						       .defines = p->list,
						       .units = st->task->nworkloads + st->task->nchecks};
		}
		char what[128];
		snprintf(what, sizeof(what), "round %d: re-measuring %d candidates on the workers",
			 round, nw);
		ks_run_progress_tick(st, "final", what, 0);
		rc = ks_pool_evaluate_batch(st->pool, jobs, nw, res, e);
		for (int k = 0; k < nw; k++)
			take_round(&pd[which[k]], &res[k], jobs[k].rc == 0);
		return rc;
	}
	struct ks_evaluator *ev = NULL;
	if ((rc = ks_evaluator_new(st->task, fo, &ev, e)))
		return rc;
	for (int k = 0; k < nw && !rc; k++) {
		struct pending *p = &pd[which[k]];
		const struct ks_store_candidate *c = &list[p->index];
		char what[320];
		snprintf(what, sizeof(what), "round %d, %d/%d candidate #%lld: %s", round, k + 1, nw,
			 (long long)c->id, c->action ? c->action : "");
		ks_run_progress_tick(st, "final", what, 0);
		rc = ks_evaluator_run(ev, ks_buf_str(&p->src), NULL, p->list, &res[k], e);
		take_round(p, &res[k], rc == 0);
	}
	ks_evaluator_free(ev);
	return rc;
}

/* the recorded result carries the pooled figures: medians over every round */
static void pool_into_result(struct pending *p)
{
	struct ks_eval_result *res = &p->res;
	double sp[64], lsp[64];
	int nsp = 0, nlsp = 0;
	if (!p->fc.wl || res->status != KS_STATUS_PASSED)
		return;
	for (int w = 0; w < res->nworkloads && w < p->fc.nwl; w++) {
		struct ks_wl_result *x = &res->workloads[w];
		struct ks_final_pool *pl = &p->fc.wl[w];
		struct ks_stats sc, sb;
		if (!pl->ncand)
			continue;
		ks_stats_compute(pl->cand, (size_t)pl->ncand, &sc);
		double f = x->median_us > 0 && sc.median > 0 ? x->median_us / sc.median : 1;
		x->gflops *= f;
		x->gbps *= f;
		x->roofline_pct *= f;
		x->median_us = sc.median;
		x->spread_pct = sc.spread_pct;
		free(x->samples_us);
		x->samples_us = pl->cand;
		x->nsamples = pl->ncand;
		pl->cand = NULL;
		pl->ncand = 0;
		if (pl->nbase) {
			ks_stats_compute(pl->base, (size_t)pl->nbase, &sb);
			x->baseline_us = sb.median;
			x->speedup = sc.median > 0 ? sb.median / sc.median : 0;
		}
		if (pl->nlib) {
			ks_stats_compute(pl->lib, (size_t)pl->nlib, &sb);
			x->library_us = sb.median;
			x->library_speedup = sc.median > 0 ? sb.median / sc.median : 0;
		}
		if (x->speedup > 0 && nsp < 64)
			sp[nsp++] = x->speedup;
		if (x->library_speedup > 0 && nlsp < 64)
			lsp[nlsp++] = x->library_speedup;
	}
	if (nsp)
		res->speedup = ks_geomean(sp, (size_t)nsp);
	if (nlsp)
		res->library_speedup = ks_geomean(lsp, (size_t)nlsp);
}

/* Other work on the machine: the load average against the CPUs, other ksearch processes
 * (each times kernels of its own).  Appends a reason to why; returns 1 when busy. */
static int machine_busy(char *why, size_t n)
{
	int busy = 0;
	double load[1];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t len = strlen(why);
	if (getloadavg(load, 1) == 1 && ncpu > 0 && load[0] > (double)ncpu) {
		snprintf(why + len, n - len, "%sload average %.1f on %ld CPUs", len ? "; " : "",
			 load[0], ncpu);
		busy = 1;
		len = strlen(why);
	}
	DIR *d = opendir("/proc");
	int others = 0;
	pid_t self = getpid();
	for (struct dirent *de; d && (de = readdir(d));) {
		char path[300], comm[64] = "";
		long pid = strtol(de->d_name, NULL, 10);
		if (pid <= 0 || pid == (long)self)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		FILE *f = fopen(path, "r");
		long ppid = 0;
		if (!f)
			continue;
		/* "pid (comm) state ppid": our own workers and runners are not competition */
		if (fscanf(f, "%*d (%63[^)]) %*c %ld", comm, &ppid) == 2 && !strcmp(comm, "ksearch") &&
		    ppid != (long)self)
			others++;
		fclose(f);
	}
	if (d)
		closedir(d);
	if (others) {
		snprintf(why + len, n - len, "%s%d other ksearch process%s running", len ? "; " : "",
			 others, others == 1 ? "" : "es");
		busy = 1;
	}
	return busy;
}



/* where a measured roof came from (spec detect's probe, time, load), under key */
static void roof_provenance(json_t *d, const char *key, const struct ks_spec *s,
			    const char *field)
{
	struct ks_buf b = KS_BUF_INIT;
	json_t *m = ks_spec_measure_json(ks_spec_measure_of(s, field), &b) || !b.len
			    ? NULL
			    : json_loads(ks_buf_str(&b), 0, NULL);
	if (m)
		json_object_set_new(d, key, m);
	ks_buf_release(&b);
}

/* the roofs "% of roofline" used, for the report's roofline chart */
static int record_roofs(struct ks_run_state *st, struct ks_error *e)
{
	const struct ks_eval_opts *o = &st->o.eval;
	enum ks_dtype dt = KS_DT_F32;
	for (int j = 0; j < st->task->ntensors; j++)
		if (!st->task->tensors[j].is_output && st->task->tensors[j].dtype != KS_DT_I32 &&
		    st->task->tensors[j].dtype != KS_DT_I64) {
			dt = st->task->tensors[j].dtype;
			break;
		}
	/* the attainable rate without bytes to move is the compute roof of dt */
	double compute = ks_roofline_attainable(o, dt, 1, 0);
	double memory = o->roof_gbps > 0 ? o->roof_gbps : o->peak_gbps;
	if (!(compute > 0) && !(memory > 0))
		return 0;
	json_t *d = json_pack("{s:s, s:f, s:f, s:f, s:f}", "dtype", ks_dtype_name(dt),
			      "compute_gflops", compute, "memory_gbps", memory, "ceiling_gflops",
			      o->peak_gflops, "ceiling_gbps", o->peak_gbps);
	/* the hardware the roofs came from: the report names it where the run said "auto",
	 * and says whether its peaks were measured here (detected on the host) */
	if (d && st->have_spec) {
		int detected = !st->o.spec || !st->o.spec[0] || !strcmp(st->o.spec, "auto");
		if (st->spec.name)
			json_object_set_new(d, "spec", json_string(st->spec.name));
		if (st->spec.title)
			json_object_set_new(d, "spec_title", json_string(st->spec.title));
		json_object_set_new(d, "spec_detected", json_boolean(detected));
		json_object_set_new(d, "peaks_measured",
				    json_boolean(detected && ks_backend_on_host(st->be)));
		roof_provenance(d, "memory_measured", &st->spec, "mem_bandwidth_gbps");
		roof_provenance(d, "compute_measured", &st->spec, "peak_gflops_f32");
	}
	char *text = d ? json_dumps(d, JSON_COMPACT) : NULL;
	int rc = text ? ks_store_add_event(st->store, "info", "roofline",
					   "the roofs of % of roofline", text, e)
		      : 0;
	free(text);
	json_decref(d);
	return rc;
}

int ks_run_final(struct ks_run_state *st, struct ks_run_result *r, struct ks_error *e)
{
	struct ks_store_candidate *list = NULL;
	size_t n = 0;
	double t_start = ks_run_now();
	int rc = ks_store_list_candidates(st->store, KS_STORE_ORDER_BEST, &list, &n, e);
	if (rc)
		return rc;
	struct ks_eval_opts fo = st->o.eval;
	fo.min_time_s = st->o.eval.min_time_s * 3 > 0.3 ? st->o.eval.min_time_s * 3 : 0.3;
	fo.blocks = 3;
	fo.ci_rel = 0.02;
	fo.max_blocks = 6;
	fo.reuse_baseline = 0;
	fo.rep_ci_rel = 0; /* the fixed time floor per block, as before */
	/* the yardsticks keep a block beside each of the candidate's, with a count floor of 3
	 * (pooled over the blocks and the round's candidates): a naive baseline of 0.17 s a
	 * call took 12 calls a block and most of the final's time */
	fo.yard_reps = 3;
	/* --top 0: no re-measurement; the search phase's leader stands on its own figure */
	int no_final = st->o.final_top <= 0, np = 0;
	int top = no_final ? 1 : st->o.final_top < KS_RUN_MAX_TOP ? st->o.final_top : KS_RUN_MAX_TOP;
	struct pending pd[KS_RUN_MAX_TOP];
	char busy[512] = "";
	int was_busy = machine_busy(busy, sizeof(busy));
	if ((rc = record_roofs(st, e))) {
		ks_store_free(list);
		return rc;
	}
	/* the candidates in search order; those re-measured by an earlier process of a
	 * resumed run keep their figure */
	for (size_t i = 0; i < n && np < top && !rc; i++) {
		const struct ks_store_candidate *c = &list[i];
		if (!c->has_result || !c->status || strcmp(c->status, "PASSED"))
			continue;
		struct pending *p = &pd[np++];
		memset(p, 0, sizeof(*p));
		p->index = i;
		p->fc.id = (long)c->id;
		p->fc.search_speedup = c->speedup;
		p->fc.passed = 1;
		if (c->has_final) {
			p->fc.passed = c->final_status && !strcmp(c->final_status, "PASSED");
			p->fc.known_speedup = c->final_speedup;
			continue;
		}
		parse_defines(c->defines, p);
		rc = ks_store_get_source(st->store, c->id, &p->src, e);
	}
	/* round 1: every candidate; then the leaders again, in alternating order, while
	 * their timings stay spread or they cannot be told apart */
	int which[16], nw = 0, rounds = 0;
	for (int k = 0; k < np && !no_final; k++)
		if (!list[pd[k].index].has_final)
			which[nw++] = k;
	/* the rounds after the first only tell the leaders apart: the candidates alone, the
	 * same binaries whose checks passed in round 1.  The yardsticks keep round 1's samples,
	 * taken in blocks interleaved with every candidate's; timing them again (a naive
	 * baseline of 0.17 s a call) was half of a round */
	struct ks_eval_opts lo = fo;
	lo.skip_baseline = lo.skip_library = lo.skip_checks = 1;
	while (!rc && nw && rounds < KS_FINAL_MAX_ROUNDS && !ks_run_stop_requested()) {
		rc = measure(st, rounds ? &lo : &fo, list, pd, which, nw, rounds + 1, e);
		rounds++;
		struct ks_final_cand fc[16];
		for (int k = 0; k < np; k++) {
			ks_final_cand_stats(&pd[k].fc);
			fc[k] = pd[k].fc;
		}
		if (rc || !ks_final_need_round(fc, np))
			break;
		int lead[2], nl = ks_final_leaders(fc, np, lead, 2), re[2], nre = 0;
		for (int j = 0; j < nl; j++)
			if (!list[pd[lead[j]].index].has_final) /* re-measured by an earlier process */
				re[nre++] = lead[j];
		nw = 0;
		for (int j = 0; j < nre; j++) /* alternate the order, against drift */
			which[nw++] = re[(j + rounds) % nre];
	}
	struct ks_final_cand fc[16];
	for (int k = 0; k < np; k++) {
		ks_final_cand_stats(&pd[k].fc);
		fc[k] = pd[k].fc;
	}
	struct ks_final_verdict v;
	ks_final_choose(fc, np, &v);
	/* Ctrl-C before the final measured anything: no verdict, but the search phase's leader
	 * (the first passing candidate in the list's order) still stands, on its search-phase
	 * figure and said to be one; --resume re-measures it */
	int skipped = v.chosen < 0 && rounds == 0 && (ks_run_stop_requested() || no_final);
	int fallback = -1;
	r->final_rounds = rounds;
	for (int k = 0; skipped && k < np && fallback < 0; k++)
		if (!list[pd[k].index].has_final)
			fallback = k;
	/* record in ranking order whatever was measured, even after a failure */
	for (int k = 0; k < np; k++) {
		const struct ks_store_candidate *c = &list[pd[k].index];
		if (pd[k].have_res) {
			struct ks_eval_result *res = &pd[k].res;
			pool_into_result(&pd[k]);
			/* the crowned candidate against the library, where one was timed */
			if (k == v.chosen && res->library && res->library_speedup > 0) {
				r->best_library_speedup = res->library_speedup;
				snprintf(r->library, sizeof(r->library), "%s", res->library);
			}
			int wrc = ks_run_record(st, c->id, "final", res, rc ? NULL : e);
			rc = rc ? rc : wrc;
			ks_info("final: candidate %lld %s %.2fx (search phase %.2fx)", (long long)c->id,
				ks_status_name(res->status), res->speedup, c->speedup);
			ks_eval_result_release(&pd[k].res);
		}
		ks_buf_release(&pd[k].src);
	}
	/* is the crowned figure to be trusted? (nothing to judge when the final was skipped) */
	char noise[1024] = "";
	int noisy = 0;
	char busy_end[512] = "";
	if (skipped)
		was_busy = 0;
	else if (machine_busy(busy_end, sizeof(busy_end)) && !was_busy) {
		snprintf(busy, sizeof(busy), "%s", busy_end);
		was_busy = 1;
	}
	if (v.chosen >= 0) {
		const struct ks_final_cand *b = &fc[v.chosen];
		double ratio = b->search_speedup > 0 ? b->search_speedup / b->speedup : 1;
		if (ratio > KS_FINAL_DISAGREE || ratio < 1 / KS_FINAL_DISAGREE) {
			snprintf(noise, sizeof(noise), "the search phase measured #%ld at %.2fx, the "
						      "re-measurement at %.2fx",
				 b->id, b->search_speedup, b->speedup);
			noisy = 1;
		}
		int lead[2], nl = ks_final_leaders(fc, np, lead, 2);
		double spread = 0;
		for (int j = 0; j < nl; j++)
			spread = fc[lead[j]].spread_pct > spread ? fc[lead[j]].spread_pct : spread;
		if (spread > KS_FINAL_NOISY_SPREAD_PCT) {
			size_t len = strlen(noise);
			snprintf(noise + len, sizeof(noise) - len,
				 "%sthe leaders' timings still spread %.0f%% after %d round%s",
				 len ? "; " : "", spread, rounds, rounds == 1 ? "" : "s");
			noisy = 1;
		}
	}
	if (was_busy) {
		size_t len = strlen(noise);
		snprintf(noise + len, sizeof(noise) - len, "%s%s", len ? "; " : "", busy);
		noisy = 1;
	}
	if (skipped && no_final)
		ks_info("final: skipped (--top 0): the search phase's figures stand");
	else if (skipped)
		ks_info("final: skipped, the run was interrupted (--resume %s re-measures)", st->dir);
	else
		ks_info("final: %s; %d round%s", v.text, rounds, rounds == 1 ? "" : "s");
	if (noisy)
		ks_warn("noisy measurements: %s; rerun on a quiet machine to trust the ranking", noise);
	r->final_noisy = noisy;
	snprintf(r->final_noise, sizeof(r->final_noise), "%s", noise);
	snprintf(r->final_verdict, sizeof(r->final_verdict), "%s", skipped ? "" : v.text);
	/* a skipped final records no verdict: the report then reads the search phase's figures */
	if (!rc && !skipped) {
		json_t *data = json_pack("{s:I, s:s, s:b, s:s, s:i, s:f, s:f, s:b, s:f}", "chosen",
					 (json_int_t)(v.chosen >= 0 ? fc[v.chosen].id : -1), "verdict",
					 v.text, "noisy", noisy, "noise", noise, "rounds", rounds,
					 "diff_pct", isfinite(v.diff_pct) ? v.diff_pct : 0.0, "ci_pct",
					 isfinite(v.ci_pct) ? v.ci_pct : 0.0, "significant",
					 v.significant, "seconds", ks_run_now() - t_start);
		/* ci_pct is the half-width in log units (kept for older readers); lo_pct and
		 * hi_pct bound diff_pct in its own units */
		if (data) {
			json_object_set_new(data, "lo_pct", isfinite(v.lo_pct) ? json_real(v.lo_pct)
									 : json_null());
			json_object_set_new(data, "hi_pct", isfinite(v.hi_pct) ? json_real(v.hi_pct)
									 : json_null());
		}
		char *text = data ? json_dumps(data, JSON_COMPACT) : NULL;
		if (text)
			rc = ks_store_add_event(st->store, noisy ? "warn" : "info", "final", v.text,
						text, e);
		free(text);
		json_decref(data);
	}
	int best = v.chosen >= 0 ? v.chosen : fallback;
	if (!rc && best >= 0) {
		const struct ks_store_candidate *c = &list[pd[best].index];
		r->best_candidate = (long)c->id;
		r->best_remeasured = v.chosen >= 0;
		r->best_speedup = r->best_remeasured ? fc[best].speedup : c->speedup;
		if (r->library[0]) {
			/* the report names the library's column after it */
			json_t *d = json_pack("{s:s, s:f}", "name", r->library, "speedup",
					      r->best_library_speedup);
			char *text = d ? json_dumps(d, JSON_COMPACT) : NULL;
			if (text)
				rc = ks_store_add_event(st->store, "info", "library", r->library,
							text, e);
			free(text);
			json_decref(d);
		}
		snprintf(r->best_action, sizeof(r->best_action), "%s", c->action ? c->action : "");
		if (!rc)
			rc = write_best(st, c, r->best_speedup, r->best_remeasured, r, e);
	}
	for (int k = 0; k < np; k++)
		ks_final_cand_release(&pd[k].fc);
	ks_store_free(list);
	return rc;
}
