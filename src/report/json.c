/* `ksearch report --json`: the run for scripts.  Unknown numbers are null. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report/report_impl.h"

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *text(const char *s)
{
	if (!s)
		return json_null();
	json_t *v = json_string(s);
	if (!v) {
		/* invalid UTF-8 in stored text (a kernel's log): replace the bad bytes */
		struct ks_buf b;
		ks_buf_init(&b, 0);
		if (!rp_utf8_clean(&b, s))
			v = json_string(ks_buf_str(&b));
		ks_buf_release(&b);
	}
	return v ? v : json_null();
}

static json_t *object_or_raw(const char *s)
{
	json_t *v = s && s[0] ? json_loads(s, 0, NULL) : NULL;
	if (json_is_object(v))
		return v;
	json_decref(v);
	return json_object();
}

static json_t *wl_json(const struct rp_run *r, size_t i, const char *phase, const struct rp_wl *w)
{
	return json_pack("{s:i, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
			 "s:o, s:o}",
			 "workload", r->workloads[i].index, "label", text(r->workloads[i].label),
			 "phase", phase, "status", text(w->status), "max_abs_err",
			 num(w->max_abs_err), "max_rel_err", num(w->max_rel_err), "tolerance_used",
			 json_pack("{s:o, s:o}", "elementwise", num(w->tol_elem), "rel_l2",
				   num(w->tol_l2)),
			 "median_us",
			 num(w->median_us), "spread_pct", num(w->spread_pct), "baseline_us",
			 num(w->baseline_us), "speedup", num(w->speedup), "library_us",
			 num(w->library_us), "speedup_vs_library", num(w->library_speedup), "gflops",
			 num(w->gflops), "gbps", num(w->gbps), "roofline_pct", num(w->roofline_pct));
}

static json_t *cand_json(const struct rp_run *r, const struct rp_cand *c)
{
	const struct ks_store_candidate *s = c->c;
	json_t *wls = json_array();
	for (size_t i = 0; wls && i < r->nworkloads; i++) {
		if (c->search[i].present)
			json_array_append_new(wls, wl_json(r, i, "search", &c->search[i]));
		if (c->final[i].present)
			json_array_append_new(wls, wl_json(r, i, "final", &c->final[i]));
	}
	json_t *o = json_pack("{s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:i, s:o, s:o, s:o, s:o, s:o, "
			      "s:o, s:o}",
			      "id", (json_int_t)s->id, "parent", (json_int_t)s->parent_id, "node",
			      (json_int_t)s->node_id, "action", text(s->action), "policy",
			      text(s->policy), "family", text(s->family), "knobs",
			      object_or_raw(s->knobs), "round", s->round, "compile_status",
			      text(s->compile_status), "status",
			      s->has_result ? text(s->status) : json_null(), "speedup",
			      s->has_result ? num(s->speedup) : json_null(), "final_status",
			      s->has_final ? text(s->final_status) : json_null(), "final_speedup",
			      s->has_final ? num(s->final_speedup) : json_null(), "log_first_line",
			      c->fail_line[0] ? text(c->fail_line) : json_null(), "workloads",
			      wls ? wls : json_array());
	return o;
}

/* the latest snapshot in brief: node count and the path to the best (root first) */
static json_t *tree_json(const struct rp_tree *t)
{
	if (!t->nnodes)
		return json_null();
	json_t *path = json_array();
	int leaf = -1;
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].on_best_path && (leaf < 0 || t->nodes[i].parent_index >= 0)) {
			int deeper = 1;
			for (int c = t->nodes[i].first_child; c >= 0; c = t->nodes[c].next_sibling)
				deeper = deeper && !t->nodes[c].on_best_path;
			if (deeper)
				leaf = i;
		}
	int ids[64], n = 0;
	for (int a = leaf; a >= 0 && n < 64; a = t->nodes[a].parent_index)
		ids[n++] = a;
	while (n > 0) {
		const struct rp_node *x = &t->nodes[ids[--n]];
		json_array_append_new(path, json_pack("{s:s, s:s}", "node", x->id, "title",
						      x->title ? x->title : ""));
	}
	return json_pack("{s:i, s:i, s:o}", "nodes", t->nnodes, "shown", t->nshown, "best_path",
			 path);
}

static json_t *best_json(const struct rp_run *r)
{
	if (r->best < 0)
		return json_null();
	const struct rp_cand *b = &r->cands[r->best];
	return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:s, s:b}", "candidate",
			 (json_int_t)b->c->id, "speedup_vs_baseline", num(b->speedup),
			 /* null when no library was timed */
			 "library", r->has_library ? text(r->library) : json_null(),
			 "speedup_vs_library", num(b->library_speedup), "source_file",
			 text(r->best_file), "action", text(b->c->action), "phase", b->phase,
			 "source_file_exists", r->best_file_exists);
}

static json_t *llm_json(const struct rp_run *r)
{
	json_int_t pt = 0, ct = 0;
	double cost = 0;
	int ncost = 0, known = 0;
	if (!r->nllm)
		return json_null();
	for (size_t i = 0; i < r->nllm; i++) {
		known |= r->llm[i].prompt_tokens >= 0;
		pt += r->llm[i].prompt_tokens > 0 ? r->llm[i].prompt_tokens : 0;
		ct += r->llm[i].completion_tokens > 0 ? r->llm[i].completion_tokens : 0;
		if (isfinite(r->llm[i].cost)) {
			cost += r->llm[i].cost;
			ncost++;
		}
	}
	/* token counts no call reported (a command, a person) are unknown, not 0 */
	return json_pack("{s:I, s:o, s:o, s:o}", "calls", (json_int_t)r->nllm, "prompt_tokens",
			 known ? json_integer(pt) : json_null(), "completion_tokens",
			 known ? json_integer(ct) : json_null(), "cost",
			 ncost ? json_real(cost) : json_null());
}

static json_t *failures_json(const struct rp_run *r)
{
	json_t *fails = json_object();
	for (int i = 0; fails && i < r->nfails; i++)
		json_object_set_new(fails, r->fails[i].status, json_integer(r->fails[i].count));
	return fails;
}

static json_t *lists_json(const struct rp_run *r, const char *what)
{
	json_t *a = json_array();
	if (!strcmp(what, "candidates"))
		for (size_t i = 0; a && i < r->ncands; i++)
			json_array_append_new(a, cand_json(r, &r->cands[i]));
	else if (!strcmp(what, "convergence"))
		for (size_t i = 0; a && i < r->nconv; i++)
			json_array_append_new(a, json_pack("{s:I, s:o, s:o}", "candidate",
							   (json_int_t)r->conv[i].candidate_id,
							   "speedup", num(r->conv[i].speedup),
							   "best", num(r->conv[i].best)));
	else
		for (size_t i = 0; a && i < r->nworkloads; i++)
			json_array_append_new(a, json_pack("{s:i, s:o, s:b}", "index",
							   r->workloads[i].index, "label",
							   text(r->workloads[i].label), "is_check",
							   r->workloads[i].is_check));
	return a ? a : json_null();
}

/* the per-shape pick, each workload with its label (null without a best) */
static json_t *per_shape_json(const struct rp_run *r)
{
	struct ks_buf b = KS_BUF_INIT;
	json_t *p = r->best >= 0 && !ks_shape_picks_json(&r->picks, &b)
			    ? json_loads(ks_buf_str(&b), JSON_DECODE_ANY, NULL)
			    : NULL;
	ks_buf_release(&b);
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(p, "workloads"), i, x)
		for (size_t w = 0; w < r->nworkloads; w++)
			if (r->workloads[w].index == json_integer_value(json_object_get(x, "workload")))
				json_object_set_new(x, "label", text(r->workloads[w].label));
	if (p)
		json_object_set_new(p, "recorded", json_boolean(r->picks.recorded));
	return p ? p : json_null();
}

/* the run's identity and counts */
static void run_fields(json_t *root, const struct rp_run *r)
{
	const struct ks_store_run *run = r->run;
	json_object_set_new(root, "run_dir", text(r->dir));
	json_object_set_new(root, "run_id", text(run->id));
	json_object_set_new(root, "task", text(run->task));
	json_object_set_new(root, "backend", text(run->backend));
	json_object_set_new(root, "target", r->target[0] ? text(r->target) : json_null());
	/* the spec the roofs came from, named ("auto" does not say which hardware) */
	json_object_set_new(root, "spec", r->spec_name[0] ? json_pack("{s:s, s:s, s:b}", "name",
			    r->spec_name, "title", r->spec_title, "peaks_measured", r->peaks_measured)
			    : json_null());
	json_object_set_new(root, "strategy", text(run->strategy));
	json_object_set_new(root, "policy", text(run->policy));
	json_object_set_new(root, "seed", run->seed <= (uint64_t)INT64_MAX
						  ? json_integer((json_int_t)run->seed)
						  : json_real((double)run->seed));
	json_object_set_new(root, "budget", json_integer((json_int_t)run->budget));
	json_object_set_new(root, "status", text(run->status));
	json_object_set_new(root, "created", text(run->created));
	json_object_set_new(root, "version", text(run->version));
	json_object_set_new(root, "wall_time_s", num(r->wall_s));
	json_object_set_new(root, "proposed", json_integer((json_int_t)r->ncands));
	json_object_set_new(root, "evaluated", json_integer(r->evaluated));
	json_object_set_new(root, "passed", json_integer(r->passed));
	json_object_set_new(root, "failures", failures_json(r));
}

/* the best, how sure the final was and why its rounds stopped */
static void final_fields(json_t *root, const struct rp_run *r)
{
	json_object_set_new(root, "best", best_json(r));
	json_object_set_new(root, "stopped",
			    r->stopped[0] && strcmp(r->stopped, "budget") ? text(r->stopped)
									    : json_null());
	json_object_set_new(root, "noisy", json_boolean(r->final_noisy));
	json_object_set_new(root, "noise_reason",
			    r->final_noisy ? text(r->final_noise) : json_null());
	json_object_set_new(root, "final_verdict",
			    r->has_final_event ? text(r->final_verdict) : json_null());
	json_object_set_new(root, "final",
			    r->has_final_event
				    ? json_pack("{s:i, s:o, s:o, s:o}", "rounds", r->final_rounds,
						"seconds", num(r->final_s), "stop",
						r->final_stop[0] ? text(r->final_stop) : json_null(),
						"stop_reason",
						r->final_stop_reason[0] ? text(r->final_stop_reason)
									: json_null())
				    : json_null());
}

int rp_render_json(const struct rp_run *r, struct ks_buf *out, struct ks_error *e)
{
	json_t *root = json_object();
	char *s = NULL;
	int rc = 0;
	if (!root)
		return ks_error_set(e, KS_ENOMEM, "report: out of memory building JSON");
	run_fields(root, r);
	final_fields(root, r);
	json_object_set_new(root, "workloads", lists_json(r, "workloads"));
	json_object_set_new(root, "convergence", lists_json(r, "convergence"));
	json_object_set_new(root, "snapshots", json_integer(r->tree.nsnapshots));
	json_object_set_new(root, "tree", tree_json(&r->tree));
	json_object_set_new(root, "llm", llm_json(r));
	json_object_set_new(root, "per_shape", per_shape_json(r));
	json_object_set_new(root, "candidates", lists_json(r, "candidates"));
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	if (!s)
		rc = ks_error_set(e, KS_ENOMEM, "report: cannot serialise the JSON report");
	else if ((rc = ks_buf_adds(out, s)) || (rc = ks_buf_adds(out, "\n")))
		ks_error_set(e, rc, "report: JSON report larger than the output buffer allows");
	free(s);
	json_decref(root);
	return rc;
}
