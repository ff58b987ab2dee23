/* What the final re-measurement leaves behind (final_impl.h): each re-measured candidate's
 * pooled result in the store, the verdict with how sure it is and why the rounds stopped,
 * whether to trust it (a final taken on a loaded machine, or one that disagrees with the
 * search by more than 2x, is flagged noisy), and DIR/best.<ext>. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <unistd.h>

#include "eval/stats.h"
#include "ksearch/backend.h"
#include "ksearch/log.h"
#include "ksearch/report.h"
#include "run/final_impl.h"
#include "util/defines.h"
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
	if ((rc = ks_defines_bake(c->defines, &out, e)))
		goto done;
	ks_buf_addf(&out, "\n%s", ks_buf_str(&src));
	snprintf(r->best_source, sizeof(r->best_source), "%s/best.%s", st->dir, st->be->ext);
	rc = ks_file_write_buf(r->best_source, &out, e);
done:
	ks_buf_release(&src);
	ks_buf_release(&out);
	return rc;
}

/* one workload's pooled medians into its result: time, throughput, the yardsticks */
static void pool_workload(struct ks_wl_result *x, struct ks_final_pool *pl)
{
	struct ks_stats sc, sb;
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
}

/* the recorded result carries the pooled figures: medians over every round */
static void pool_into_result(struct ks_final_pending *p)
{
	struct ks_eval_result *res = &p->res;
	double sp[64], lsp[64];
	int nsp = 0, nlsp = 0;
	if (!p->fc.wl || res->status != KS_STATUS_PASSED)
		return;
	for (int w = 0; w < res->nworkloads && w < p->fc.nwl; w++) {
		struct ks_wl_result *x = &res->workloads[w];
		if (!p->fc.wl[w].ncand)
			continue;
		pool_workload(x, &p->fc.wl[w]);
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

/* other ksearch processes than this one and its children (each times kernels of its own) */
static int other_ksearch(void)
{
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
	return others;
}

int ks_final_machine_busy(char *why, size_t n)
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
	int others = other_ksearch();
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

/* the hardware the roofs came from: the report names it where the run said "auto", and
 * says whether its peaks were measured here (detected on the host) */
static void roofs_spec(const struct ks_run_state *st, json_t *d)
{
	int detected = !st->o.spec || !st->o.spec[0] || !strcmp(st->o.spec, "auto");
	if (st->spec.name)
		json_object_set_new(d, "spec", json_string(st->spec.name));
	if (st->spec.title)
		json_object_set_new(d, "spec_title", json_string(st->spec.title));
	json_object_set_new(d, "spec_detected", json_boolean(detected));
	json_object_set_new(d, "peaks_measured", json_boolean(detected && ks_backend_on_host(st->be)));
	roof_provenance(d, "memory_measured", &st->spec, "mem_bandwidth_gbps");
	roof_provenance(d, "compute_measured", &st->spec, "peak_gflops_f32");
}

int ks_final_record_roofs(struct ks_run_state *st, struct ks_error *e)
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
	if (d && st->have_spec)
		roofs_spec(st, d);
	char *text = d ? json_dumps(d, JSON_COMPACT) : NULL;
	int rc = text ? ks_store_add_event(st->store, "info", "roofline",
					   "the roofs of % of roofline", text, e)
		      : 0;
	free(text);
	json_decref(d);
	return rc;
}

int ks_final_record_results(struct ks_final_run *f, int rc, struct ks_error *e)
{
	for (int k = 0; k < f->np; k++) {
		struct ks_final_pending *p = &f->pd[k];
		const struct ks_store_candidate *c = &f->list[p->index];
		if (!p->have_res)
			continue;
		struct ks_eval_result *res = &p->res;
		pool_into_result(p);
		/* the crowned candidate against the library, where one was timed */
		if (k == f->v.chosen && res->library && res->library_speedup > 0) {
			f->r->best_library_speedup = res->library_speedup;
			snprintf(f->r->library, sizeof(f->r->library), "%s", res->library);
		}
		int wrc = ks_run_record(f->st, c->id, "final", res, rc ? NULL : e);
		rc = rc ? rc : wrc;
		ks_info("final: candidate %lld %s %.2fx (search phase %.2fx)", (long long)c->id,
			ks_status_name(res->status), res->speedup, c->speedup);
		ks_eval_result_release(res);
		p->have_res = 0;
	}
	return rc;
}

/* appends "; what" to the noise text */
static void noise_add(struct ks_final_run *f, const char *what)
{
	size_t len = strlen(f->noise);
	snprintf(f->noise + len, sizeof(f->noise) - len, "%s%s", len ? "; " : "", what);
	f->noisy = 1;
}

void ks_final_judge_noise(struct ks_final_run *f)
{
	char busy_end[512] = "", t[320];
	/* nothing to judge when the final was skipped */
	if (f->skipped)
		f->was_busy = 0;
	else if (ks_final_machine_busy(busy_end, sizeof(busy_end)) && !f->was_busy) {
		snprintf(f->busy, sizeof(f->busy), "%s", busy_end);
		f->was_busy = 1;
	}
	if (f->v.chosen >= 0) {
		const struct ks_final_cand *b = &f->fc[f->v.chosen];
		double ratio = b->search_speedup > 0 ? b->search_speedup / b->speedup : 1;
		if (ratio > KS_FINAL_DISAGREE || ratio < 1 / KS_FINAL_DISAGREE) {
			snprintf(t, sizeof(t), "the search phase measured #%ld at %.2fx, the "
					       "re-measurement at %.2fx",
				 b->id, b->search_speedup, b->speedup);
			noise_add(f, t);
		}
		int lead[2], nl = ks_final_leaders(f->fc, f->np, lead, 2);
		double spread = 0;
		for (int j = 0; j < nl; j++)
			spread = f->fc[lead[j]].spread_pct > spread ? f->fc[lead[j]].spread_pct : spread;
		if (spread > KS_FINAL_NOISY_SPREAD_PCT) {
			int n = f->prog.rounds;
			snprintf(t, sizeof(t), "the leaders' timings still spread %.0f%% after %d round%s",
				 spread, n, n == 1 ? "" : "s");
			noise_add(f, t);
		}
	}
	if (f->was_busy)
		noise_add(f, f->busy);
}

int ks_final_record_verdict(struct ks_final_run *f, struct ks_error *e)
{
	const struct ks_final_verdict *v = &f->v;
	json_t *data = json_pack("{s:I, s:s, s:b, s:s, s:i, s:f, s:f, s:b, s:f}", "chosen",
				 (json_int_t)(v->chosen >= 0 ? f->fc[v->chosen].id : -1), "verdict",
				 v->text, "noisy", f->noisy, "noise", f->noise, "rounds",
				 f->prog.rounds, "diff_pct", isfinite(v->diff_pct) ? v->diff_pct : 0.0,
				 "ci_pct", isfinite(v->ci_pct) ? v->ci_pct : 0.0, "significant",
				 v->significant, "seconds", ks_run_now() - f->t_start);
	if (!data)
		return 0;
	/* ci_pct is the half-width in log units (kept for older readers); lo_pct and hi_pct
	 * bound diff_pct in its own units */
	json_object_set_new(data, "lo_pct", isfinite(v->lo_pct) ? json_real(v->lo_pct) : json_null());
	json_object_set_new(data, "hi_pct", isfinite(v->hi_pct) ? json_real(v->hi_pct) : json_null());
	/* why the rounds stopped, and how closely the leaders' gap was known then */
	json_object_set_new(data, "stop", json_string(f->r->final_stop));
	json_object_set_new(data, "stop_reason", json_string(f->r->final_stop_reason));
	json_object_set_new(data, "noise_pct",
			    isfinite(f->noise_pct) ? json_real(f->noise_pct) : json_null());
	char *text = json_dumps(data, JSON_COMPACT);
	int rc = text ? ks_store_add_event(f->st->store, f->noisy ? "warn" : "info", "final",
					   v->text, text, e)
		      : 0;
	free(text);
	json_decref(data);
	return rc;
}

/* the report names the library's column after it */
static int record_library(struct ks_final_run *f, struct ks_error *e)
{
	json_t *d = json_pack("{s:s, s:f}", "name", f->r->library, "speedup",
			      f->r->best_library_speedup);
	char *text = d ? json_dumps(d, JSON_COMPACT) : NULL;
	int rc = text ? ks_store_add_event(f->st->store, "info", "library", f->r->library, text, e)
		      : 0;
	free(text);
	json_decref(d);
	return rc;
}

/* the candidate that stands without a verdict: the search phase's leader (the first
 * passing candidate in the list's order) when the final was skipped, else -1 */
static int fallback(const struct ks_final_run *f)
{
	for (int k = 0; f->skipped && k < f->np; k++)
		if (!f->list[f->pd[k].index].has_final)
			return k;
	return -1;
}

int ks_final_crown(struct ks_final_run *f, struct ks_error *e)
{
	struct ks_run_result *r = f->r;
	int best = f->v.chosen >= 0 ? f->v.chosen : fallback(f), rc = 0;
	if (best < 0)
		return 0;
	const struct ks_store_candidate *c = &f->list[f->pd[best].index];
	r->best_candidate = (long)c->id;
	r->best_remeasured = f->v.chosen >= 0;
	r->best_speedup = r->best_remeasured ? f->fc[best].speedup : c->speedup;
	if (r->library[0])
		rc = record_library(f, e);
	snprintf(r->best_action, sizeof(r->best_action), "%s", c->action ? c->action : "");
	if (!rc)
		rc = write_best(f->st, c, r->best_speedup, r->best_remeasured, r, e);
	return rc;
}

int ks_final_record_shapes(struct ks_final_run *f, struct ks_error *e)
{
	struct ks_run_result *r = f->r;
	struct ks_shape_picks *p = calloc(1, sizeof(*p));
	struct ks_buf b = KS_BUF_INIT;
	if (!p)
		return ks_error_set(e, KS_ENOMEM, "per-shape pick: out of memory");
	int rc = ks_shape_picks_compute(f->st->store, r->best_candidate, p, e);
	if (!rc && ks_shape_picks_json(p, &b))
		rc = ks_error_set(e, KS_ENOMEM, "per-shape pick: out of memory");
	if (!rc)
		rc = ks_store_add_event(f->st->store, "info", "per_shape",
					"the fastest candidate per timed workload", ks_buf_str(&b), e);
	if (!rc) {
		r->shape_wins = p->others;
		r->shape_timed = p->n;
	}
	if (!rc && p->others)
		ks_info("per-shape pick: on %d of %d timed workloads another candidate is faster "
			"than #%ld beyond the noise (ksearch export --per-shape dispatches by shape)",
			p->others, p->n, r->best_candidate);
	ks_buf_release(&b);
	free(p);
	return rc;
}
