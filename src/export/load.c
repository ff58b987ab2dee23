/* What `ksearch export` exports: a run folder's best kernel and the candidates that won
 * workloads of their own (from the store's per-workload times), or one kernel file. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ksearch/backend.h"
#include "ksearch/export.h"
#include "ksearch/store.h"
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
	for (const char *d = c->defines ? c->defines : ""; *d;) {
		while (*d == ' ')
			d++;
		if (strncmp(d, "-D", 2))
			break;
		d += 2;
		size_t len = strcspn(d, " ");
		const char *eq = memchr(d, '=', len);
		if (eq)
			ks_buf_addf(out, "#define %.*s %.*s\n", (int)(eq - d), d,
				    (int)(len - (size_t)(eq - d) - 1), eq + 1);
		d += len;
	}
	ks_buf_adds(out, "\n");
	return ks_store_get_source(s, c->id, out, e);
}

/* the evaluation of candidate id on workload w in phase (NULL: none) */
static const struct ks_store_eval *find_eval(const struct ks_store_eval *ev, size_t n, int w)
{
	for (size_t i = 0; i < n; i++)
		if (ev[i].workload == w && ev[i].status && !strcmp(ev[i].status, "PASSED") &&
		    ev[i].median_us > 0)
			return &ev[i];
	return NULL;
}

struct timed {
	int64_t id;
	struct ks_store_eval *ev;
	size_t nev;
};

/* The routes: per timed workload, the candidate that beat the best by more than both
 * spreads (so noise never splits the dispatch); measured in the final re-measurement when
 * the best has one, else in the search. */
static int load_routes(struct ks_store *s, struct ks_export_loaded *l, int64_t best_id,
		       struct ks_error *e)
{
	struct ks_export_item *it = &l->item;
	struct ks_store_candidate *cands = NULL;
	struct ks_store_workload *wls = NULL;
	size_t nc = 0, nw = 0, nt = 0;
	struct timed t[64];
	int64_t ids[KS_EXPORT_MAX_VARIANTS] = {best_id};
	int rc;
	if ((rc = ks_store_list_candidates(s, KS_STORE_ORDER_BEST, &cands, &nc, e)) ||
	    (rc = ks_store_list_workloads(s, &wls, &nw, e)))
		goto out;
	const struct ks_store_candidate *best = NULL;
	for (size_t i = 0; i < nc; i++)
		if (cands[i].id == best_id)
			best = &cands[i];
	if (!best)
		goto out;
	const char *phase = best->has_final ? "final" : "search";
	for (size_t i = 0; i < nc && nt < 64; i++) {
		const struct ks_store_candidate *c = &cands[i];
		int passed = best->has_final ? c->has_final && !strcmp(c->final_status, "PASSED")
					     : c->has_result && !strcmp(c->status, "PASSED");
		if (!passed)
			continue;
		t[nt] = (struct timed){.id = c->id};
		if ((rc = ks_store_list_evals(s, c->id, phase, &t[nt].ev, &t[nt].nev, e)))
			goto out;
		nt++;
	}
	const struct timed *tb = NULL;
	for (size_t i = 0; i < nt; i++)
		if (t[i].id == best_id)
			tb = &t[i];
	for (size_t w = 0; w < nw && tb && it->nroutes < KS_EXPORT_MAX_ROUTES; w++) {
		int wi = wls[w].index;
		if (wls[w].is_check || wi < 0 || wi >= it->task->nworkloads)
			continue;
		const struct ks_store_eval *eb = find_eval(tb->ev, tb->nev, wi);
		if (!eb)
			continue;
		int64_t win = best_id;
		double win_us = eb->median_us;
		for (size_t i = 0; i < nt; i++) {
			const struct ks_store_eval *x = find_eval(t[i].ev, t[i].nev, wi);
			double noise = (eb->spread_pct + (x ? x->spread_pct : 0)) / 200.0;
			if (x && x->median_us < win_us && x->median_us < eb->median_us * (1 - noise)) {
				win = t[i].id;
				win_us = x->median_us;
			}
		}
		int v = 0;
		while (v < it->nvariants && ids[v] != win)
			v++;
		if (v == it->nvariants) {
			if (v == KS_EXPORT_MAX_VARIANTS)
				v = 0, win = best_id;
			else
				ids[it->nvariants++] = win;
		}
		struct ks_export_route *r = &it->routes[it->nroutes++];
		for (int p = 0; p < it->task->nparams && p < 16; p++)
			r->values[p] = it->task->workloads[wi].values[p];
		r->variant = v;
	}
	for (int v = 1; v < it->nvariants && !rc; v++) {
		struct ks_store_candidate *c = NULL;
		if ((rc = ks_store_get_candidate(s, ids[v], &c, e)))
			break;
		ks_buf_init(&l->mem[v], MAX_SOURCE);
		rc = bake(s, c, &l->mem[v], e);
		snprintf(l->labels[v], sizeof(l->labels[v]), "candidate %lld", (long long)c->id);
		l->knobs[v] = strdup(c->knobs ? c->knobs : "{}");
		it->variants[v] = (struct ks_export_variant){
			.source = ks_buf_str(&l->mem[v]), .label = l->labels[v], .knobs = l->knobs[v]};
		ks_store_free(c);
	}
	/* one winner everywhere: no dispatch */
	if (it->nvariants == 1)
		it->nroutes = 0;
out:
	for (size_t i = 0; i < nt; i++)
		ks_store_free(t[i].ev);
	ks_store_free(cands);
	ks_store_free(wls);
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

/* the task as the run was started on it (an imported task's folder outside tasks/, as the
 * run's config keeps it) while that folder is there, else the run's task name */
static void run_task_where(const struct ks_store_run *run, char *out, size_t n)
{
	json_t *cfg = run->config ? json_loads(run->config, 0, NULL) : NULL;
	const char *given = json_string_value(json_object_get(cfg, "task"));
	snprintf(out, n, "%s", given && ks_is_dir(given) ? given : run->task);
	json_decref(cfg);
}

static int load_run(const char *dir, struct ks_export_loaded *l, char *task, size_t tn,
		    struct ks_error *e)
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
	char where[4096];
	run_task_where(run, where, sizeof(where));
	if ((rc = ks_file_read(l->origin, MAX_SOURCE, &l->mem[0], e)) ||
	    (rc = ks_task_load(where, &l->task, e)))
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
		rc = load_routes(s, l, best_id, e);
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

int ks_export_load(const char *path, const char *task_name, struct ks_export_loaded *l,
		   struct ks_error *e)
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
		rc = load_run(path, l, task, sizeof(task), e);
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
