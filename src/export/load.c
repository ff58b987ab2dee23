/* What `ksearch export` exports: a run folder's best kernel and, --per-shape, the
 * candidates that won workloads of their own (the run's per-shape pick), or one kernel
 * file. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ksearch/backend.h"
#include "ksearch/export.h"
#include "ksearch/report.h"
#include "ksearch/store.h"
#include "util/defines.h"
#include "util/fs.h"

#ifndef KS_VERSION
#define KS_VERSION "0"
#endif

#define MAX_SOURCE ((size_t)4 << 20)

/* " * task softmax, backend cpu, candidate 8: ..." in the first lines of a run's best file */
static void parse_header(const char *src, char *task, size_t tn, char *be, size_t bn,
			 long long *cand)
{
	const char *p = strstr(src, " * task ");
	char t[128], b[32];
	*cand = 0;
	if (!p || p > src + 4096)
		return;
	int got = sscanf(p, " * task %127[^,], backend %31[^,], candidate %lld", t, b, cand);
	if (got >= 2) {
		snprintf(task, tn, "%s", t);
		snprintf(be, bn, "%s", b);
	}
}

/* a candidate's source with its defines ("-DVEC=16 -DUNROLL=4") as #define lines first,
 * as the run's best file has them */
static int bake(struct ks_store *s, const struct ks_store_candidate *c, struct ks_buf *out,
		struct ks_error *e)
{
	ks_buf_addf(out, "/* candidate %lld: %s\n * knobs: %s\n */\n", (long long)c->id,
		    c->action ? c->action : "", c->knobs ? c->knobs : "{}");
	int rc = ks_defines_bake(c->defines, out, e);
	if (!rc)
		ks_buf_adds(out, "\n");
	return rc ? rc : ks_store_get_source(s, c->id, out, e);
}

/* variant v of the item: candidate id's source with its knob values baked in */
static int add_variant(struct ks_store *s, struct ks_export_loaded *l, int v, long long id,
		       struct ks_error *e)
{
	struct ks_store_candidate *c = NULL;
	int rc = ks_store_get_candidate(s, id, &c, e);
	if (rc)
		return rc;
	ks_buf_init(&l->mem[v], MAX_SOURCE);
	rc = bake(s, c, &l->mem[v], e);
	snprintf(l->labels[v], sizeof(l->labels[v]), "candidate %lld", (long long)c->id);
	l->knobs[v] = strdup(c->knobs ? c->knobs : "{}");
	l->item.variants[v] = (struct ks_export_variant){
		.source = ks_buf_str(&l->mem[v]), .label = l->labels[v], .knobs = l->knobs[v]};
	ks_store_free(c);
	return rc;
}

/* the variant that holds candidate id, added when new; 0 (the best) past the cap */
static int variant_of(struct ks_export_loaded *l, long long *ids, long long id)
{
	struct ks_export_item *it = &l->item;
	for (int v = 0; v < it->nvariants; v++)
		if (ids[v] == id)
			return v;
	if (it->nvariants == KS_EXPORT_MAX_VARIANTS)
		return 0;
	ids[it->nvariants] = id;
	return it->nvariants++;
}

/* The routes of a dispatch by shape: the run's per-shape pick (include/ksearch/report.h),
 * each measured workload to the candidate that won it beyond the noise.  Only with
 * KS_EXPORT_PER_SHAPE, and only when another candidate than the best won a workload. */
static int load_routes(struct ks_store *s, struct ks_export_loaded *l, long long best_id,
		       unsigned flags, struct ks_error *e)
{
	struct ks_export_item *it = &l->item;
	struct ks_shape_picks *p = calloc(1, sizeof(*p));
	long long ids[KS_EXPORT_MAX_VARIANTS] = {best_id};
	if (!p)
		return ks_error_set(e, KS_ENOMEM, "export: out of memory");
	int rc = ks_shape_picks_load(s, best_id, p, e);
	l->shape_wins = rc ? 0 : p->others;
	for (int k = 0; !rc && p->others && (flags & KS_EXPORT_PER_SHAPE) && k < p->n &&
			it->nroutes < KS_EXPORT_MAX_ROUTES;
	     k++) {
		int wi = p->w[k].workload;
		if (wi < 0 || wi >= it->task->nworkloads)
			continue;
		struct ks_export_route *r = &it->routes[it->nroutes++];
		for (int q = 0; q < it->task->nparams && q < 16; q++)
			r->values[q] = it->task->workloads[wi].values[q];
		r->variant = variant_of(l, ids, p->w[k].candidate);
	}
	for (int v = 1; v < it->nvariants && !rc; v++)
		rc = add_variant(s, l, v, ids[v], e);
	if (it->nvariants == 1) /* one winner everywhere: no dispatch */
		it->nroutes = 0;
	free(p);
	return rc;
}

/* text of a path safe in a C comment, a Python docstring and a JSON string: no quotes,
 * backslashes, control characters or comment ends */
static void safe_path(const char *path, char *out, size_t n)
{
	size_t k = 0;
	for (const char *p = path; *p && k + 1 < n; p++) {
		char c = *p;
		if (c == '"' || c == '\\' || (unsigned char)c < 0x20 || c == 0x7f)
			c = '_';
		else if (c == '/' && k && out[k - 1] == '*')
			out[k - 1] = '_';
		out[k++] = c;
	}
	out[k] = 0;
}

/* l->provenance for candidate c of the run in dir: its speedup from the final
 * re-measurement when it has one (else the search phase) and the largest timing spread
 * behind it */
static void provenance_run(struct ks_store *s, struct ks_export_loaded *l, const char *dir,
			   const char *task, const struct ks_store_candidate *c)
{
	char d[1024];
	safe_path(dir, d, sizeof(d));
	size_t n = 0;
	int len = snprintf(l->provenance, sizeof(l->provenance),
			   "run %s, candidate %lld: task %s, backend %s\n", d, (long long)c->id, task,
			   l->backend);
	const char *phase = c->has_final ? "final" : "search";
	double sp = c->has_final ? c->final_speedup : c->speedup, spread = -1;
	struct ks_store_eval *ev = NULL;
	struct ks_error e = {0};
	if (!ks_store_list_evals(s, c->id, phase, &ev, &n, &e))
		for (size_t i = 0; i < n; i++)
			if (ev[i].status && !strcmp(ev[i].status, "PASSED") && ev[i].median_us > 0 &&
			    isfinite(ev[i].spread_pct) && ev[i].spread_pct > spread)
				spread = ev[i].spread_pct;
	ks_store_free(ev);
	char sp_text[64] = "";
	if (spread >= 0)
		snprintf(sp_text, sizeof(sp_text), " (timing spread up to %.0f%%)", spread);
	if (isfinite(sp) && sp > 0)
		len += snprintf(l->provenance + len, sizeof(l->provenance) - (size_t)len,
				"speedup %.2fx over the task's baseline, %s%s\n", sp,
				c->has_final ? "re-measured by the final" : "search phase (not re-measured)",
				sp_text);
	else
		len += snprintf(l->provenance + len, sizeof(l->provenance) - (size_t)len,
				"speedup not measured\n");
	snprintf(l->provenance + len, sizeof(l->provenance) - (size_t)len, "exported by ksearch %s",
		 KS_VERSION);
}

/* Why a run folder has no best file: the run is still going (or was stopped), or it
 * finished and no candidate passed; the store's run status and results say which. */
static int no_best(struct ks_store *s, const struct ks_store_run *run, const char *dir,
		   const char *ext, struct ks_error *e)
{
	struct ks_store_candidate *cands = NULL;
	size_t n = 0, evaluated = 0, passed = 0;
	if (ks_store_list_candidates(s, KS_STORE_ORDER_BEST, &cands, &n, e) == 0)
		for (size_t i = 0; i < n; i++) {
			evaluated += cands[i].has_result;
			passed += cands[i].has_result && cands[i].status &&
				  !strcmp(cands[i].status, "PASSED");
		}
	ks_store_free(cands);
	const char *status = run->status ? run->status : "running";
	if (!strcmp(status, "finished") && passed == 0)
		return ks_error_set(e, KS_ENOTFOUND,
				    "'%s' has no best.%s: the run finished and none of its %zu evaluated "
				    "candidates passed",
				    dir, ext, evaluated);
	if (!strcmp(status, "finished"))
		return ks_error_set(e, KS_ENOTFOUND,
				    "'%s' has no best.%s although %zu of its candidates passed: the file "
				    "was removed",
				    dir, ext, passed);
	return ks_error_set(e, KS_ENOTFOUND,
			    "'%s' has no best.%s: the run has not finished (%s, %zu candidates "
			    "evaluated, %zu passed); 'ksearch run --resume %s' continues it",
			    dir, ext, status, evaluated, passed, dir);
}

/* The run's task: --task when given, else the folder the run was given (its config, when
 * that folder is still there from here), else the task of that name */
static int run_task(const struct ks_store_run *run, const char *task_name, struct ks_task **t,
		    struct ks_error *e)
{
	json_t *cfg = run->config ? json_loads(run->config, 0, NULL) : NULL;
	const char *given = json_string_value(json_object_get(cfg, "task"));
	const char *use = task_name ? task_name : given && ks_is_dir(given) ? given : run->task;
	int rc = ks_task_load(use, t, e);
	if (rc && !task_name && given && strcmp(given, run->task))
		ks_error_wrap(e, "the run's task '%s' (run as '%s'; --task FOLDER names it from here)",
			      run->task, given);
	json_decref(cfg);
	return rc;
}

static int load_run(const char *dir, struct ks_export_loaded *l, char *task, size_t tn,
		    const char *task_name, unsigned flags, struct ks_error *e)
{
	struct ks_store *s = NULL;
	struct ks_store_run *run = NULL;
	int rc = ks_store_open(dir, 0, &s, e);
	if (rc)
		return ks_error_wrap(e, "'%s' is not a run folder", dir);
	if ((rc = ks_store_get_run(s, &run, e)))
		goto out;
	snprintf(task, tn, "%s", run->task);
	snprintf(l->backend, sizeof(l->backend), "%s", run->backend);
	const struct ks_backend_i *be = ks_backend_find(run->backend);
	snprintf(l->origin, sizeof(l->origin), "%s/best.%s", dir, be ? be->ext : "?");
	if (!ks_path_exists(l->origin)) {
		rc = no_best(s, run, dir, be ? be->ext : "?", e);
		goto out;
	}
	if ((rc = ks_file_read(l->origin, MAX_SOURCE, &l->mem[0], e)) ||
	    (rc = run_task(run, task_name, &l->task, e)))
		goto out;
	char t2[128], b2[32];
	long long best_id = 0;
	parse_header(ks_buf_str(&l->mem[0]), t2, sizeof(t2), b2, sizeof(b2), &best_id);
	l->item.task = l->task;
	struct ks_store_candidate *c = NULL;
	if (best_id > 0 && !ks_store_get_candidate(s, best_id, &c, e)) {
		l->knobs[0] = strdup(c->knobs ? c->knobs : "{}");
		provenance_run(s, l, dir, task, c);
		ks_store_free(c);
		snprintf(l->labels[0], sizeof(l->labels[0]), "candidate %lld", best_id);
		rc = load_routes(s, l, best_id, flags, e);
	}
out:
	ks_store_free(run);
	ks_store_close(s);
	return rc;
}

/* the backend whose kernel files end in path's extension */
static const char *backend_of_ext(const char *path)
{
	const char *dot = strrchr(path, '.');
	for (const struct ks_backend_i *const *b = ks_backend_list(); dot && *b; b++)
		if (!strcmp((*b)->ext, dot + 1))
			return (*b)->name;
	return NULL;
}

int ks_export_load(const char *path, const char *task_name, unsigned flags,
		   struct ks_export_loaded *l, struct ks_error *e)
{
	char task[128] = "";
	int rc;
	memset(l, 0, sizeof(*l));
	ks_buf_init(&l->mem[0], MAX_SOURCE);
	l->item.nvariants = 1;
	char db[4096], best[4096] = "";
	snprintf(db, sizeof(db), "%s/run.db", path);
	/* a folder with a best file but no store (copied without run.db): the best file alone */
	for (const struct ks_backend_i *const *b = ks_backend_list();
	     ks_is_dir(path) && !ks_path_exists(db) && *b && !best[0]; b++) {
		snprintf(best, sizeof(best), "%s/best.%s", path, (*b)->ext);
		if (!ks_path_exists(best))
			best[0] = 0;
	}
	if (best[0])
		path = best;
	if (ks_is_dir(path)) {
		rc = load_run(path, l, task, sizeof(task), task_name, flags, e);
	} else {
		snprintf(l->origin, sizeof(l->origin), "%s", path);
		if ((rc = ks_kernel_source_read(path, MAX_SOURCE, &l->mem[0], e)))
			return rc;
		long long cand;
		parse_header(ks_buf_str(&l->mem[0]), task, sizeof(task), l->backend,
			     sizeof(l->backend), &cand);
		if (!l->backend[0] && backend_of_ext(path))
			snprintf(l->backend, sizeof(l->backend), "%s", backend_of_ext(path));
		if (task_name)
			snprintf(task, sizeof(task), "%s", task_name);
		if (!task[0])
			return ks_error_set(e, KS_EINVAL, "'%s' does not say its task: give --task TASK",
					    path);
		if (!l->backend[0])
			return ks_error_set(e, KS_EINVAL, "'%s': no backend takes this extension", path);
		rc = ks_task_load(task, &l->task, e);
		l->item.task = l->task;
	}
	if (rc)
		return rc;
	if (!l->provenance[0]) {
		char d[1024];
		safe_path(l->origin, d, sizeof(d));
		snprintf(l->provenance, sizeof(l->provenance),
			 "%s %s: task %s, backend %s\nspeedup not known (not read from a run's store)\n"
			 "exported by ksearch %s",
			 ks_is_dir(path) ? "run" : "kernel file", d, l->task->name, l->backend,
			 KS_VERSION);
	}
	l->item.provenance = l->provenance;
	if (!l->labels[0][0])
		snprintf(l->labels[0], sizeof(l->labels[0]), "%s", ks_is_dir(path) ? "best" : "kernel file");
	l->item.backend = l->backend;
	l->item.origin = l->origin;
	l->item.variants[0] = (struct ks_export_variant){
		.source = ks_buf_str(&l->mem[0]), .label = l->labels[0],
		.knobs = l->knobs[0] ? l->knobs[0] : "{}"};
	return 0;
}

void ks_export_loaded_release(struct ks_export_loaded *l)
{
	for (int i = 0; i < KS_EXPORT_MAX_VARIANTS; i++) {
		ks_buf_release(&l->mem[i]);
		free(l->knobs[i]);
	}
	ks_task_free(l->task);
	memset(l, 0, sizeof(*l));
}
