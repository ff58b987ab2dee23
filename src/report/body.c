/* The report's sections, written once for Markdown and HTML through doc.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/doc.h"
#include "report/report_impl.h"

#define MAX_TIMED 64   /* workload columns in the leaderboard */
#define MAX_DEPTH 48   /* tree levels drawn */

static void fnum(char *dst, size_t n, const char *fmt, double v)
{
	if (isfinite(v))
		snprintf(dst, n, fmt, v);
	else
		snprintf(dst, n, "%s", RP_NA);
}

/* a table cell of one number, RP_NA when it is unknown */
static void num_cell(struct rp_doc *d, const char *fmt, double v)
{
	char t[64];
	fnum(t, sizeof(t), fmt, v);
	doc_cell(d, t);
}

/* a rate (GFLOP/s, GB/s) with three significant digits, never "0.0" for 0.04; whole
 * numbers from 1000 up */
static void frate(char *dst, size_t n, double v)
{
	if (!isfinite(v))
		snprintf(dst, n, "%s", RP_NA);
	else if (fabs(v) >= 1000)
		snprintf(dst, n, "%.0f", v);
	else
		snprintf(dst, n, "%.3g", v);
}

static void fspeed(char *dst, size_t n, double v, double spread)
{
	if (!isfinite(v))
		snprintf(dst, n, "%s", RP_NA);
	else if (isfinite(spread))
		snprintf(dst, n, "%.2fx \xc2\xb1%.1f%%", v, spread);
	else
		snprintf(dst, n, "%.2fx", v);
}

/* the answer first: the best speedup, over the library too, which candidate, where */
static void header_headline(struct rp_doc *d, const struct rp_run *r)
{
	char t[256];
	doc_para_begin(d);
	if (r->best < 0) {
		doc_strong_begin(d);
		doc_text(d, "No passing candidate yet.");
		doc_strong_end(d);
		doc_para_end(d);
		return;
	}
	const struct rp_cand *b = &r->cands[r->best];
	doc_strong_begin(d);
	fspeed(t, sizeof(t), b->speedup, NAN);
	doc_textf(d, "Best: %s the baseline", t);
	if (isfinite(b->library_speedup)) {
		fspeed(t, sizeof(t), b->library_speedup, NAN);
		doc_textf(d, ", %s %s", t, r->library);
	}
	doc_strong_end(d);
	doc_textf(d, " (%s), candidate #%lld ",
		  !strcmp(b->phase, "final") ? "final re-measurement" : "search phase, not re-measured",
		  (long long)b->c->id);
	doc_code(d, b->c->action && b->c->action[0] ? b->c->action : "(no action)");
	doc_text(d, ", source ");
	doc_code(d, r->best_file);
	if (!r->best_file_exists)
		doc_text(d, " (not written yet)");
	doc_para_end(d);
}

/* a paragraph opening with a bold label */
static void labelled_para(struct rp_doc *d, const char *label, const char *text,
			  const char *tail)
{
	doc_para_begin(d);
	doc_strong_begin(d);
	doc_text(d, label);
	doc_strong_end(d);
	doc_text(d, " ");
	doc_text(d, text);
	doc_text(d, tail);
	doc_para_end(d);
}

/* how sure the final's choice is and why its rounds stopped; an early stop of the search;
 * noisy measurements */
static void header_notes(struct rp_doc *d, const struct rp_run *r)
{
	if (r->has_final_event && r->final_verdict[0]) {
		doc_para_begin(d);
		doc_text(d, "How sure: ");
		doc_text(d, r->final_verdict);
		doc_text(d, ". The interval is the 95% interval of that difference, in the same "
			    "units; a candidate whose advantage is inside the noise (an interval that "
			    "reaches 0%) does not take the crown from the search phase's leader.");
		if (r->final_stop_reason[0])
			doc_textf(d, " The final measured %d round%s and stopped: %s.", r->final_rounds,
				  r->final_rounds == 1 ? "" : "s", r->final_stop_reason);
		doc_para_end(d);
	}
	if (r->stopped[0] && strcmp(r->stopped, "budget"))
		labelled_para(d, "The search stopped early:", r->stopped, ".");
	if (r->final_noisy)
		labelled_para(d, "Noisy measurements:",
			      r->final_noise[0] ? r->final_noise : "see the run's events",
			      ". Rerun on a quiet machine before trusting the ranking.");
}

static void row2(struct rp_doc *d, const char *k, const char *v)
{
	doc_row_begin(d, NULL);
	doc_cell(d, k);
	doc_cell(d, v);
	doc_row_end(d);
}

/* "COMPILE_ERROR 3, TIMEOUT 1" */
static void fmt_failures(const struct rp_run *r, char *t, size_t n)
{
	size_t len = 0;
	t[0] = 0;
	for (int i = 0; i < r->nfails; i++) {
		int w = snprintf(t + len, n - len, "%s%s %d", i ? ", " : "", r->fails[i].status,
				 r->fails[i].count);
		if (w < 0 || (size_t)w >= n - len)
			break;
		len += (size_t)w;
	}
}

/* the run table's rows about the best */
static void header_best_rows(struct rp_doc *d, const struct rp_run *r)
{
	char t[256], sp[48];
	if (r->best < 0) {
		row2(d, "best speedup vs baseline", RP_NA);
		return;
	}
	const struct rp_cand *b = &r->cands[r->best];
	fspeed(sp, sizeof(sp), b->speedup, NAN);
	snprintf(t, sizeof(t), "%s (%s phase, candidate #%lld)", sp, b->phase, (long long)b->c->id);
	row2(d, "best speedup vs baseline", t);
	if (isfinite(b->library_speedup)) {
		char k[96];
		fspeed(sp, sizeof(sp), b->library_speedup, NAN);
		snprintf(k, sizeof(k), "best speedup vs %s", r->library);
		row2(d, k, sp);
	}
	row2(d, "best source", r->best_file);
}

static void header_table(struct rp_doc *d, const struct rp_run *r)
{
	const struct ks_store_run *run = r->run;
	static const char *const heads[] = {"run", ""};
	char t[256];
	doc_table_begin(d, 2, heads, NULL);
	row2(d, "run id", run->id);
	row2(d, "status", run->status);
	row2(d, "task", run->task);
	row2(d, "backend", run->backend);
	rp_fmt_target(r, t, sizeof(t));
	row2(d, "target", t);
	if (r->selection[0]) {
		snprintf(t, sizeof(t), "only %s of the task's timed workloads (--workloads)",
			 r->selection);
		row2(d, "tuned for", t);
	}
	row2(d, "strategy", run->strategy);
	row2(d, "policy", run->policy);
	snprintf(t, sizeof(t), "%llu", (unsigned long long)run->seed);
	row2(d, "seed", t);
	snprintf(t, sizeof(t), "%lld candidates", (long long)run->budget);
	row2(d, "budget", t);
	snprintf(t, sizeof(t), "%d (%zu proposed)", r->evaluated, r->ncands);
	row2(d, "evaluated", t);
	snprintf(t, sizeof(t), "%d (%.0f%%)", r->passed,
		 r->evaluated ? 100.0 * r->passed / r->evaluated : 0.0);
	row2(d, "passed", t);
	fmt_failures(r, t, sizeof(t));
	row2(d, "failures", r->nfails ? t : "none");
	rp_fmt_duration(r->wall_s, t, sizeof(t));
	row2(d, "wall time", t);
	header_best_rows(d, r);
	row2(d, "created", run->created);
	row2(d, "ksearch version", run->version);
	doc_table_end(d);
}

static void section_header(struct rp_doc *d, const struct rp_run *r)
{
	doc_rawf(d, d->html ? "<h1>" : "# ");
	doc_textf(d, "ksearch report: %s", r->run->task);
	doc_raw(d, d->html ? "</h1>\n" : "\n\n");
	header_headline(d, r);
	header_notes(d, r);
	header_table(d, r);
}

/* A chart: inline SVG in HTML; in Markdown a link to the SVG file written beside the report */
static void doc_chart(struct rp_doc *d, const struct rp_run *r, const char *cls,
		      int (*render)(const struct rp_run *, struct ks_buf *), const char *md_image)
{
	if (d->html) {
		doc_rawf(d, "<div class=\"%s\">", cls);
		if (!d->rc)
			d->rc = render(r, d->b);
		doc_raw(d, "</div>\n");
	} else {
		doc_raw(d, md_image);
		doc_raw(d, "\n\n");
	}
}

static void section_convergence(struct rp_doc *d, const struct rp_run *r)
{
	doc_heading(d, 2, "Convergence");
	doc_chart(d, r, "chart", rp_render_svg,
		  "![Convergence: best speedup so far per evaluated candidate](" KS_REPORT_SVG_FILE ")");
	doc_para_begin(d);
	double best = NAN;
	size_t at = 0;
	for (size_t i = 0; i < r->nconv; i++)
		if (isfinite(r->conv[i].best) && (!isfinite(best) || r->conv[i].best > best)) {
			best = r->conv[i].best;
			at = i + 1;
		}
	if (isfinite(best))
		doc_textf(d, "Green steps: the best search-phase speedup after each evaluated candidate "
			     "(reached %.2fx at candidate %zu of %zu). Blue dots: each passing "
			     "candidate. Triangles under the axis: failed candidates, coloured by "
			     "status. Dashed red line: the baseline (1.0x).",
			  best, at, r->nconv);
	else
		doc_textf(d, "%zu candidates evaluated, none passed yet.", r->nconv);
	doc_para_end(d);
}

/* "The memory roof, 21.05 GB/s, was measured ... (age 3 min) by the memcpy probe at load
 * 0.4 on 2 cores ..." for each roof whose figure was measured; 1 when one was loaded */
static int roof_provenance(struct rp_doc *d, const struct rp_run *r)
{
	const struct {
		const char *what, *unit;
		double value;
		const struct ks_spec_measure *m;
	} roofs[] = {{"memory roof", "GB/s", r->roof_gbps, &r->roof_gbps_measure},
		     {"f32 FMA rate behind the compute roof", "GFLOP/s", NAN, &r->roof_gflops_measure}};
	int loaded = 0;
	for (size_t i = 0; i < sizeof(roofs) / sizeof(roofs[0]); i++) {
		char text[512], value[48] = "";
		if (!roofs[i].m->probe[0])
			continue;
		ks_spec_measure_text(roofs[i].m, r->started, text, sizeof(text));
		if (isfinite(roofs[i].value))
			snprintf(value, sizeof(value), ", %.4g %s,", roofs[i].value, roofs[i].unit);
		doc_textf(d, " The %s%s was %s.", roofs[i].what, value, text);
		loaded |= ks_spec_measure_loaded(roofs[i].m);
	}
	if (r->roof_gbps_measure.probe[0] || r->roof_gflops_measure.probe[0])
		doc_text(d, " Ages are at the start of this run; a roof is the best figure any "
			    "detection on this machine measured, so a later run on a quiet machine "
			    "can only raise it.");
	return loaded;
}

static void section_roofline(struct rp_doc *d, const struct rp_run *r)
{
	doc_heading(d, 2, "Roofline");
	doc_chart(d, r, "chart roofline", rp_render_roofline,
		  "![Roofline: each workload's best kernel and baseline against the roofs](" KS_REPORT_ROOFLINE_FILE ")");
	doc_para_begin(d);
	if (r->roof_gflops > 0)
		doc_textf(d, "The roof is what the hardware can attain at a kernel's arithmetic "
			     "intensity: min(%.4g GFLOP/s %s compute, intensity x %.4g GB/s memory). "
			     "\"%% of roofline\" in the tables is achieved over that attainable rate, so "
			     "a memory-bound kernel is measured against the memory roof. A kernel "
			     "faster than that is shown \"above the roof (Nx)\", never as a share: "
			     "the roof is an underestimate (measured low, as on a loaded machine) "
			     "or the data stayed in cache between repetitions.",
			  r->roof_gflops, r->roof_dtype[0] ? r->roof_dtype : "f32", r->roof_gbps);
	int provenance = r->roof_gbps_measure.probe[0] || r->roof_gflops_measure.probe[0];
	if (r->roof_gflops > 0 && roof_provenance(d, r)) {
		doc_text(d, " Measured under load: the roof may be low and % of roofline high; run ");
		doc_code(d, "ksearch spec detect");
		doc_text(d, " when the machine is quiet, and later runs use its figure.");
	}
	if (r->roof_gflops > 0 && !provenance &&
	    (r->peaks_measured || (!strcmp(r->target, "auto") && !r->spec_name[0])))
		doc_text(d, " These roofs come from hardware detected at the start of this run "
			    "(--spec auto); on a CPU they are measured then and vary by a few percent "
			    "between runs, so compare % of roofline across runs only as far as their "
			    "roofs agree.");
	else if (!(r->roof_gflops > 0))
		doc_text(d, "This run recorded no roofs (a hardware spec without peak figures, or a "
			    "run from an older ksearch): the points are placed without them.");
	doc_para_end(d);
}

static void wl_cell(struct rp_doc *d, const struct rp_wl *w)
{
	char a[48], b[48], c[48], e[48];
	if (!w->present) {
		doc_cell(d, RP_NA);
		return;
	}
	if (!isfinite(w->median_us)) {
		doc_cell(d, w->status);
		return;
	}
	fnum(a, sizeof(a), "%.1f", w->median_us);
	fnum(b, sizeof(b), "\xc2\xb1%.1f%%", w->spread_pct);
	frate(c, sizeof(c), w->gflops);
	frate(e, sizeof(e), w->gbps);
	char pct[48] = "";
	if (isfinite(w->roofline_pct))
		ks_roof_pct_text(w->roofline_pct, 0, pct, sizeof(pct));
	doc_cellf(d, "%s %s \xc2\xb7 %s GF/s \xc2\xb7 %s GB/s%s%s%s", a, b, c, e,
		  pct[0] ? " \xc2\xb7 " : "", pct, pct[0] && w->roofline_pct <= 100 ? " roof" : "");
}

/* "family `K=V ...`" of a candidate, as one table cell */
static void family_cell(struct rp_doc *d, const struct rp_cand *c)
{
	char knobs[400];
	rp_fmt_knobs(c->c->knobs, knobs, sizeof(knobs));
	doc_cell_begin(d);
	doc_text(d, c->c->family && c->c->family[0] ? c->c->family : RP_NA);
	if (knobs[0]) {
		doc_text(d, " ");
		doc_code(d, knobs);
	}
	doc_cell_end(d);
}

/* one part of the leaderboard: the rows whose figures come from one phase */
struct lb_part {
	int final;            /* 1: ranked by the final re-measurement; 0: by the search */
	int rows[1000];       /* indexes into r->cands, in rank order */
	int nrows;
	int first;            /* the rank number of its first row */
};

/* the header cells of a part: the speedups and the library named after their phase */
static int lb_heads(const struct rp_run *r, const struct lb_part *p, const char **heads,
		    char *align, char (*labels)[96], const int *timed, int nt)
{
	static const char *const fixed[] = {"#", "id", "action", "family / knobs", "status"};
	int nh = 0;
	for (; nh < 5; nh++)
		heads[nh] = fixed[nh];
	snprintf(align, 8, "rrlll");
	heads[nh] = p->final ? "speedup (final)" : "speedup (search)";
	align[nh++] = 'r';
	if (p->final) { /* the search phase's figure beside it: the winner's curse shows */
		heads[nh] = "speedup (search)";
		align[nh++] = 'r';
	}
	if (r->has_library) {
		snprintf(labels[0], sizeof(labels[0]), "vs %s (%s)", r->library,
			 p->final ? "final" : "search");
		heads[nh] = labels[0];
		align[nh++] = 'r';
	}
	for (int i = 0; i < nt; i++) {
		snprintf(labels[i + 1], sizeof(labels[0]), "%s (us)", r->workloads[timed[i]].label);
		heads[nh] = labels[i + 1];
		align[nh++] = 'r';
	}
	align[nh] = 0;
	return nh;
}

/* the geometric mean of the library speedups of one phase's workloads (NAN: none) */
static double lib_speedup(const struct rp_run *r, const struct rp_wl *w)
{
	double sum = 0;
	int n = 0;
	for (size_t i = 0; i < r->nworkloads; i++)
		if (w[i].present && isfinite(w[i].library_speedup) && w[i].library_speedup > 0) {
			sum += log(w[i].library_speedup);
			n++;
		}
	return n ? exp(sum / n) : NAN;
}

static void lb_row(struct rp_doc *d, const struct rp_run *r, const struct lb_part *p, int k,
		   const int *timed, int nt)
{
	int ci = p->rows[k];
	const struct rp_cand *c = &r->cands[ci];
	const struct rp_wl *w = p->final ? c->final : c->search;
	char t[512];
	doc_row_begin(d, ci == r->best ? "best" : c->rank_group == 2 ? "failed" : NULL);
	doc_cellf(d, "%d", p->first + k);
	doc_cellf(d, "%lld", (long long)c->c->id);
	doc_cell(d, c->c->action);
	family_cell(d, c);
	rp_fmt_status(c, t, sizeof(t));
	doc_cell(d, t);
	if (p->final) {
		fspeed(t, sizeof(t), c->speedup, c->speedup_spread);
		doc_cell(d, t);
	}
	fspeed(t, sizeof(t), c->search_speedup, c->search_spread);
	doc_cell(d, c->c->has_result && isfinite(c->search_speedup) ? t : RP_NA);
	if (r->has_library) {
		fspeed(t, sizeof(t), lib_speedup(r, w), NAN);
		doc_cell(d, p->final || isfinite(c->search_speedup) ? t : RP_NA);
	}
	for (int i = 0; i < nt; i++)
		wl_cell(d, &w[timed[i]]);
	doc_row_end(d);
}

static void lb_table(struct rp_doc *d, const struct rp_run *r, const struct lb_part *p)
{
	int timed[MAX_TIMED], nt = rp_timed_workloads(r, timed, MAX_TIMED);
	const char *heads[8 + MAX_TIMED];
	char labels[1 + MAX_TIMED][96], align[9 + MAX_TIMED];
	if (!p->nrows)
		return;
	doc_heading(d, 3, p->final ? "Ranked by the final re-measurement"
				   : "Ranked by the search phase");
	doc_para_begin(d);
	doc_text(d, p->final ? "Every figure but the search column is the final's: the speedup "
			       "and the times pooled over its rounds, the baseline timed again beside "
			       "each candidate. The best comes first even when another measured "
			       "faster inside the noise: the crown leaves the search phase's leader "
			       "only beyond it (How sure, above)."
			     : "Every figure is the search phase's: one measurement per candidate, "
			       "against the baseline timed once at the start of the run. Candidates "
			       "that failed (in the search, or in the final re-measurement) follow the "
			       "passing ones.");
	doc_para_end(d);
	int nh = lb_heads(r, p, heads, align, labels, timed, nt);
	doc_table_begin(d, nh, heads, align);
	for (int k = 0; k < p->nrows; k++)
		lb_row(d, r, p, k, timed, nt);
	doc_table_end(d);
}

static void section_leaderboard(struct rp_doc *d, const struct rp_run *r)
{
	struct lb_part parts[2]; /* 8 KiB: the rows of --top 1000 */
	char t[128];
	int top = r->opts.top, shown = 0;
	if (top >= r->evaluated)
		snprintf(t, sizeof(t), "Leaderboard (all %d evaluated)", r->evaluated);
	else
		snprintf(t, sizeof(t), "Leaderboard (top %d of %d evaluated)", top, r->evaluated);
	doc_heading(d, 2, t);
	if (!r->ncands) {
		doc_para_begin(d);
		doc_text(d, "No candidates yet.");
		doc_para_end(d);
		return;
	}
	parts[0] = (struct lb_part){.final = 1, .first = 1};
	parts[1] = (struct lb_part){.final = 0};
	for (size_t k = 0; k < r->ncands && shown < top; k++, shown++) {
		const struct rp_cand *c = &r->cands[r->ranked[k]];
		if (c->rank_group == 3)
			break; /* not evaluated: nothing to rank */
		struct lb_part *p = &parts[c->rank_group == 0 ? 0 : 1];
		if (p->nrows < (int)(sizeof(p->rows) / sizeof(p->rows[0])))
			p->rows[p->nrows++] = r->ranked[k];
	}
	parts[1].first = parts[0].nrows + 1;
	doc_para_begin(d);
	doc_text(d, "Best first, in two parts so that each column holds figures of one phase: the "
		    "candidates the final re-measured and passed, by their final speedup, then the "
		    "others by their search-phase speedup. Speedup: geometric mean over the timed "
		    "workloads of baseline median / candidate median; \xc2\xb1 after it is the "
		    "largest timing spread among its workloads. A vs-library column is the same "
		    "against the task's vendor library kernel (library.<ext>: OpenBLAS, cuBLAS), "
		    "timed interleaved like the baseline: above 1.00x beats the library. Workload "
		    "cells: median time in microseconds \xc2\xb1 spread, achieved GFLOP/s, GB/s and "
		    "the share of the roofline when the Spec gives one (\"above the roof\": faster "
		    "than the roof allows; see Roofline).");
	doc_para_end(d);
	lb_table(d, r, &parts[0]);
	lb_table(d, r, &parts[1]);
}

/* the share of the task's tolerance a workload used, the way the check judged it:
 * "0.31 elementwise · 0.02 L2" ("inf" for a non-finite mismatch) */
static void ftol(char *dst, size_t n, const struct rp_wl *w)
{
	char a[24], b[24];
	if (isnan(w->tol_elem) && isnan(w->tol_l2)) {
		snprintf(dst, n, "%s", RP_NA);
		return;
	}
	snprintf(a, sizeof(a), isinf(w->tol_elem) ? "inf" : "%.2g", w->tol_elem);
	snprintf(b, sizeof(b), isinf(w->tol_l2) ? "inf" : "%.2g", w->tol_l2);
	snprintf(dst, n, "%s elementwise \xc2\xb7 %s L2", isnan(w->tol_elem) ? RP_NA : a,
		 isnan(w->tol_l2) ? RP_NA : b);
}

/* the best's action, knobs, defines and place in the search */
static void best_intro(struct rp_doc *d, const struct rp_cand *b)
{
	char knobs[400];
	doc_para_begin(d);
	doc_text(d, "Action ");
	doc_code(d, b->c->action);
	rp_fmt_knobs(b->c->knobs, knobs, sizeof(knobs));
	if (knobs[0]) {
		doc_text(d, ", knobs ");
		doc_code(d, knobs);
	}
	if (b->c->defines && b->c->defines[0]) {
		doc_text(d, ", defines ");
		doc_code(d, b->c->defines);
	}
	doc_textf(d, ", parent #%lld, node %lld, policy %s, round %d.", (long long)b->c->parent_id,
		  (long long)b->c->node_id, b->c->policy ? b->c->policy : "?", b->c->round);
	if (!strcmp(b->phase, "final") && b->c->has_result && isfinite(b->c->speedup))
		doc_textf(d, " Search phase measured %.2fx.", b->c->speedup);
	doc_para_end(d);
}

/* one workload's row of the best's table */
static void best_row(struct rp_doc *d, const struct rp_run *r, size_t i, const struct rp_wl *w)
{
	char t[256];
	doc_row_begin(d, NULL);
	doc_cellf(d, "%s%s", r->workloads[i].label, r->workloads[i].is_check ? " (check)" : "");
	doc_cell(d, w->present ? w->status : "not run");
	num_cell(d, "%.2e", w->max_abs_err);
	ftol(t, sizeof(t), w);
	doc_cell(d, t);
	num_cell(d, "%.2f", w->median_us);
	num_cell(d, "%.1f%%", w->spread_pct);
	num_cell(d, "%.2f", w->baseline_us);
	num_cell(d, "%.2fx", w->speedup);
	if (r->has_library) {
		num_cell(d, "%.2f", w->library_us);
		num_cell(d, "%.2fx", w->library_speedup);
	}
	frate(t, sizeof(t), w->gflops);
	doc_cell(d, t);
	frate(t, sizeof(t), w->gbps);
	doc_cell(d, t);
	if (isfinite(w->roofline_pct) && w->roofline_pct > 0)
		ks_roof_pct_text(w->roofline_pct, 0, t, sizeof(t));
	else
		snprintf(t, sizeof(t), "%s", RP_NA);
	doc_cell(d, t);
	doc_row_end(d);
}

static void section_best(struct rp_doc *d, const struct rp_run *r)
{
	char t[256], lib_us[96], lib_vs[96];
	if (r->best < 0)
		return;
	const struct rp_cand *b = &r->cands[r->best];
	snprintf(t, sizeof(t), "Best candidate #%lld per workload (%s phase)", (long long)b->c->id,
		 b->phase);
	doc_heading(d, 2, t);
	best_intro(d, b);
	snprintf(lib_us, sizeof(lib_us), "%s (us)", r->library);
	snprintf(lib_vs, sizeof(lib_vs), "vs %s", r->library);
	const char *heads[] = {"workload", "status", "max abs err", "error / tolerance", "median (us)",
			       "spread", "baseline (us)", "speedup", lib_us, lib_vs, "GFLOP/s",
			       "GB/s", "roofline"};
	if (!r->has_library) /* no library: the two columns drop out */
		memmove(&heads[8], &heads[10], 3 * sizeof(heads[0]));
	doc_table_begin(d, r->has_library ? 13 : 11, heads,
			r->has_library ? "llrrrrrrrrrrr" : "llrrrrrrrrr");
	const struct rp_wl *ws = !strcmp(b->phase, "final") ? b->final : b->search;
	for (size_t i = 0; i < r->nworkloads; i++)
		/* checks are correctness-only and run in the search phase */
		best_row(d, r, i, !ws[i].present && r->workloads[i].is_check ? &b->search[i] : &ws[i]);
	doc_table_end(d);
	doc_para_begin(d);
	doc_text(d, "Error / tolerance: what the check judged, as shares of the task's tolerance "
		    "(PASSED needs both at most 1): elementwise, the worst element's |got - want| "
		    "over atol + rtol x |want|; L2, the relative L2 error over the task's bound. "
		    "Max abs err is the largest difference, for scale.");
	doc_para_end(d);
}

/* the label of the workload of this index */
static const char *wl_label(const struct rp_run *r, int index)
{
	for (size_t i = 0; i < r->nworkloads; i++)
		if (r->workloads[i].index == index)
			return r->workloads[i].label;
	return "?";
}

/* what the picks say: one kernel serves every shape, another candidate wins every
 * workload (the two rankings disagree), or sizes trade off */
static void per_shape_text(struct rp_doc *d, const struct rp_run *r)
{
	const struct ks_shape_picks *p = &r->picks;
	long long one = p->w[0].candidate, best = p->best;
	for (int k = 1; k < p->n; k++)
		one = p->w[k].candidate == one ? one : -1;
	doc_para_begin(d);
	if (!p->others)
		doc_textf(d, "Candidate #%lld, the best on the geometric mean, is also the fastest on "
			     "each of the %d timed workloads: no other candidate was faster beyond "
			     "both timings' spreads (half of each +-%% plus %.0f%%, as 'ksearch "
			     "compare' counts it), so one kernel serves every shape.",
			  best, p->n, KS_RUN_COMPARE_MIN_PCT);
	else if (one >= 0 && one != best)
		/* not a trade-off between sizes: the two rankings disagree */
		doc_textf(d, "Candidate #%lld had lower times than the best, #%lld, on every timed "
			     "workload. The best is chosen on its speedups, each against the "
			     "baseline timed beside it, which cancels drift of the machine between "
			     "measurements; when the two orders disagree, the difference between "
			     "these candidates is within what the measurements can tell apart.",
			  one, best);
	else
		doc_textf(d, "Candidate #%lld is best on the geometric mean, but on %d of %d timed "
			     "workloads another candidate was faster beyond both timings' spreads "
			     "(half of each +-%% plus %.0f%%, as 'ksearch compare' counts it). A "
			     "kernel that dispatches on the workload's parameters combines them: "
			     "'ksearch export %s --to c --per-shape'.",
			  best, p->others, p->n, KS_RUN_COMPARE_MIN_PCT, r->dir);
	if (p->others)
		doc_text(d, " Each candidate is compared with the best in one phase: the final "
			    "re-measurement where it was re-measured, else the search phase for "
			    "both (a single measurement, noisier).");
	if (!p->recorded)
		doc_text(d, " (Computed from the evaluations: the run predates the record of "
			    "its per-shape pick.)");
	doc_para_end(d);
}

static void per_shape_row(struct rp_doc *d, const struct rp_run *r, const struct ks_shape_pick *x)
{
	int ci = rp_find_cand(r, x->candidate);
	doc_row_begin(d, x->candidate == r->picks.best ? "best" : NULL);
	doc_cell(d, wl_label(r, x->workload));
	doc_cellf(d, "#%lld%s", x->candidate, x->candidate == r->picks.best ? " (best)" : "");
	if (ci >= 0)
		family_cell(d, &r->cands[ci]);
	else
		doc_cell(d, RP_NA);
	doc_cell(d, x->phase);
	num_cell(d, "%.2f", x->median_us);
	num_cell(d, "%.2f", x->best_us);
	num_cell(d, "%.2fx", x->speedup_vs_best);
	doc_row_end(d);
}

/* The per-shape pick: the best wins the geometric mean; per timed workload, the candidate
 * fastest there beyond the noise and its speedup over the best on that workload (small
 * tiles for small sizes, big tiles for big ones), which a dispatching export combines. */
static void section_per_shape(struct rp_doc *d, const struct rp_run *r)
{
	static const char *const heads[] = {"workload", "fastest", "family / knobs", "phase",
					    "median (us)", "best's median (us)", "speedup over the best"};
	if (r->best < 0 || !r->picks.n)
		return;
	doc_heading(d, 2, "Per-shape pick");
	per_shape_text(d, r);
	if (!r->picks.others)
		return;
	doc_table_begin(d, 7, heads, "lrllrrr");
	for (int k = 0; k < r->picks.n; k++)
		per_shape_row(d, r, &r->picks.w[k]);
	doc_table_end(d);
}

/* largest visit count in the subtree of i */
static long subtree_visits(const struct rp_tree *tr, int i, int depth)
{
	long m = tr->nodes[i].visits;
	if (depth > MAX_DEPTH)
		return m;
	for (int c = tr->nodes[i].first_child; c >= 0; c = tr->nodes[c].next_sibling) {
		long v = subtree_visits(tr, c, depth + 1);
		m = v > m ? v : m;
	}
	return m;
}

/* what the attached candidate measured: "candidate #5 measured 2.48x (final)" */
static void node_candidate(struct rp_doc *d, const struct rp_run *r, const struct rp_node *n)
{
	if (!n->candidate_id) {
		if (isfinite(n->score))
			doc_textf(d, ", score %.3g", n->score);
		return;
	}
	int ci = rp_find_cand(r, n->candidate_id);
	doc_textf(d, ", candidate #%lld", (long long)n->candidate_id);
	if (ci >= 0 && r->cands[ci].rank_group <= 1 && isfinite(r->cands[ci].speedup))
		doc_textf(d, " measured %.2fx (%s)", r->cands[ci].speedup, r->cands[ci].phase);
	else if (ci >= 0 && r->cands[ci].c->has_final && r->cands[ci].c->final_status &&
		 strcmp(r->cands[ci].c->final_status, "PASSED"))
		doc_textf(d, " %s in the final re-measurement", r->cands[ci].c->final_status);
	else if (ci >= 0 && r->cands[ci].c->status)
		doc_textf(d, " %s", r->cands[ci].c->status);
	else if (isfinite(n->score))
		doc_textf(d, " score %.3g (from the snapshot)", n->score);
}

static void tree_children(struct rp_doc *d, const struct rp_run *r, const struct rp_node *n,
			  int depth);

static void tree_node(struct rp_doc *d, const struct rp_run *r, int i, int depth)
{
	const struct rp_tree *tr = &r->tree;
	const struct rp_node *n = &tr->nodes[i];
	char t[128];

	doc_item_begin(d, n->on_best_path ? "bestpath" : NULL);
	if (n->on_best_path)
		doc_strong_begin(d);
	/* "[id]" never forms a link: there are no reference definitions and the id is escaped */
	doc_raw(d, n->on_best_path ? "\xe2\x98\x85 [" : "[");
	doc_text(d, n->id);
	doc_raw(d, "] ");
	doc_text(d, n->title ? n->title : "(untitled)");
	if (n->on_best_path)
		doc_strong_end(d);
	doc_text(d, " \xe2\x80\x94 ");
	fnum(t, sizeof(t), "%.1f/10", n->rating);
	doc_textf(d, "rating %s", t);
	fnum(t, sizeof(t), "%.2f", n->confidence);
	doc_textf(d, ", confidence %s", t);
	if (isfinite(n->difficulty))
		doc_textf(d, ", difficulty %.0f/5", n->difficulty);
	doc_textf(d, ", %s", n->status ? n->status : "status ?");
	if (n->visits >= 0)
		doc_textf(d, ", %ld visit%s", n->visits, n->visits == 1 ? "" : "s");
	if (n->attempts >= 0)
		doc_textf(d, ", %ld attempt%s", n->attempts, n->attempts == 1 ? "" : "s");
	if (n->failures > 0)
		doc_textf(d, " (%ld failed)", n->failures);
	node_candidate(d, r, n);
	if (n->impacts[0])
		doc_textf(d, "; impacts: %s", n->impacts);
	if (n->is_active)
		doc_text(d, " \xe2\x86\x90 active leaf");
	if (n->first_child >= 0 && depth >= MAX_DEPTH)
		doc_text(d, " (deeper levels not shown)");
	else if (n->first_child >= 0)
		tree_children(d, r, n, depth);
	doc_item_end(d);
}

/* the children drawn, the folded ones counted: "… 12 more nodes folded (6 actions here,
 * none visited)" */
static void tree_children(struct rp_doc *d, const struct rp_run *r, const struct rp_node *n,
			  int depth)
{
	const struct rp_tree *tr = &r->tree;
	int folded = 0, kids = 0;
	long most = -1;
	doc_list_begin(d);
	for (int c = n->first_child; c >= 0; c = tr->nodes[c].next_sibling) {
		if (tr->nodes[c].shown) {
			tree_node(d, r, c, depth + 1);
			continue;
		}
		kids++;
		folded += tr->nodes[c].subtree;
		long v = subtree_visits(tr, c, depth + 1);
		most = v > most ? v : most;
	}
	if (folded) {
		doc_item_begin(d, "folded");
		doc_textf(d, "\xe2\x80\xa6 %d more node%s folded (%d action%s here", folded,
			  folded == 1 ? "" : "s", kids, kids == 1 ? "" : "s");
		if (most == 0)
			doc_text(d, ", none visited");
		else if (most > 0)
			doc_textf(d, ", at most %ld visit%s each", most, most == 1 ? "" : "s");
		doc_text(d, ")");
		doc_item_end(d);
	}
	doc_list_end(d);
}

static void tree_questions(struct rp_doc *d, const struct rp_tree *tr)
{
	doc_para_begin(d);
	doc_strong_begin(d);
	doc_text(d, "Open questions:");
	doc_strong_end(d);
	doc_para_end(d);
	doc_list_begin(d);
	for (int i = 0; i < tr->nquestions; i++) {
		doc_item_begin(d, NULL);
		doc_text(d, tr->open_questions[i]);
		doc_item_end(d);
	}
	doc_list_end(d);
}

static void section_tree(struct rp_doc *d, const struct rp_run *r)
{
	const struct rp_tree *tr = &r->tree;
	char t[256];
	doc_heading(d, 2, "World model");
	doc_para_begin(d);
	if (!tr->nsnapshots) {
		doc_text(d, "No world-model snapshot was recorded (strategies other than wm keep none).");
		doc_para_end(d);
		return;
	}
	if (tr->no_tree) {
		const char *sname = tr->strategy && tr->strategy[0] ? tr->strategy
					 : r->run->strategy && r->run->strategy[0] ? r->run->strategy
										     : "run's";
		doc_textf(d, "The %s strategy keeps no world model: its %d snapshot%s record%s its "
			     "own search state, not a decision tree.",
			  sname, tr->nsnapshots, tr->nsnapshots == 1 ? "" : "s",
			  tr->nsnapshots == 1 ? "s" : "");
		doc_para_end(d);
		return;
	}
	snprintf(t, sizeof(t), "Latest snapshot: version %d of %d, round %d. ",
		 tr->snapshot_version, tr->nsnapshots, tr->snapshot_round);
	doc_text(d, t);
	doc_text(d, "Each node is an optimization action with the model's rating (0-10), confidence "
		    "(0-1), status, visits and attempts, and the measured speedup of the candidate "
		    "attached to it. \xe2\x98\x85 marks the path from the root to the best "
		    "candidate.");
	if (tr->nshown < tr->nnodes)
		doc_textf(d, " Showing %d of %d nodes: the path to the best, the active leaf and "
			     "the most visited; the rest are counted under their parents (ksearch "
			     "report --tree N draws more).",
			  tr->nshown, tr->nnodes);
	if (tr->error[0]) {
		doc_text(d, " Note: ");
		doc_text(d, tr->error);
		doc_text(d, ".");
	}
	doc_para_end(d);
	if (tr->kernel_summary && tr->kernel_summary[0])
		labelled_para(d, "Kernel summary:", tr->kernel_summary, "");
	if (tr->nnodes) {
		if (d->html)
			doc_raw(d, "<div class=\"tree\">");
		doc_list_begin(d);
		/* the root first, then any other parentless nodes (orphans) */
		if (tr->root >= 0)
			tree_node(d, r, tr->root, 0);
		for (int i = 0; i < tr->nnodes; i++)
			if (tr->nodes[i].parent_index < 0 && i != tr->root)
				tree_node(d, r, i, 0);
		doc_list_end(d);
		if (d->html)
			doc_raw(d, "</div>\n");
	}
	if (tr->nquestions)
		tree_questions(d, tr);
}

static void section_failures(struct rp_doc *d, const struct rp_run *r)
{
	doc_heading(d, 2, "Failures");
	if (!r->nfails) {
		doc_para_begin(d);
		doc_textf(d, "None of the %d evaluated candidates failed.", r->evaluated);
		doc_para_end(d);
		return;
	}
	static const char *const heads[] = {"status", "candidates", "share"};
	doc_table_begin(d, 3, heads, "lrr");
	for (int i = 0; i < r->nfails; i++) {
		doc_row_begin(d, NULL);
		doc_cell_begin(d);
		if (d->html)
			doc_rawf(d, "<span class=\"sw\" style=\"background:%s\"></span>",
				 rp_status_color(r->fails[i].status));
		doc_text(d, r->fails[i].status);
		doc_cell_end(d);
		doc_cellf(d, "%d", r->fails[i].count);
		doc_cellf(d, "%.0f%%", 100.0 * r->fails[i].count / (r->evaluated ? r->evaluated : 1));
		doc_row_end(d);
	}
	doc_table_end(d);
	doc_para_begin(d);
	doc_text(d, "Examples (first line of the log):");
	doc_para_end(d);
	doc_list_begin(d);
	for (int i = 0; i < r->nfails; i++) {
		int shown = 0;
		for (size_t k = 0; k < r->ncands && shown < r->opts.fail_examples; k++) {
			const struct rp_cand *c = &r->cands[k];
			if (!c->c->has_result || !c->c->status || strcmp(c->c->status, r->fails[i].status))
				continue;
			shown++;
			doc_item_begin(d, NULL);
			doc_textf(d, "%s #%lld ", r->fails[i].status, (long long)c->c->id);
			doc_text(d, c->c->action);
			doc_text(d, ": ");
			if (c->fail_line[0])
				doc_code(d, c->fail_line);
			else
				doc_text(d, "(no log)");
			doc_item_end(d);
		}
	}
	doc_list_end(d);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* what the run could not use from the model (each told to it in its next prompt) */
static void section_model_rejects(struct rp_doc *d, const struct rp_run *r)
{
	if (!r->nmodel_rejects)
		return;
	doc_para_begin(d);
	doc_textf(d, "What the run could not use from the model (%d, each told to it in its next "
		     "prompt):",
		  r->nmodel_rejects);
	doc_para_end(d);
	doc_list_begin(d);
	const char *m = ks_buf_str(&r->model_rejects);
	for (int i = 0; i < r->nmodel_rejects; i++, m += strlen(m) + 1) {
		doc_item_begin(d, NULL);
		doc_text(d, m);
		doc_item_end(d);
	}
	doc_list_end(d);
}

/* the run's model calls, summed */
struct llm_sums {
	long long pt, ct;       /* prompt and completion tokens */
	double cost, *lat;      /* lat: the latencies (ms), nlat of them */
	int ok, ncost, nlat, tokens_known;
	char models[512];       /* "a, b" */
};

static void llm_sum(const struct rp_run *r, struct llm_sums *m)
{
	size_t mlen = 0;
	for (size_t i = 0; i < r->nllm; i++) {
		const struct ks_store_llm *x = &r->llm[i];
		m->tokens_known |= x->prompt_tokens >= 0;
		m->pt += x->prompt_tokens > 0 ? x->prompt_tokens : 0;
		m->ct += x->completion_tokens > 0 ? x->completion_tokens : 0;
		m->ok += x->status && !strcmp(x->status, "ok");
		if (isfinite(x->cost)) {
			m->cost += x->cost;
			m->ncost++;
		}
		if (m->lat && isfinite(x->latency_ms))
			m->lat[m->nlat++] = x->latency_ms;
		if (x->model && x->model[0] && !strstr(m->models, x->model)) {
			int w = snprintf(m->models + mlen, sizeof(m->models) - mlen, "%s%s",
					 mlen ? ", " : "", x->model);
			if (w > 0 && (size_t)w < sizeof(m->models) - mlen)
				mlen += (size_t)w;
			else
				m->models[mlen] = 0;
		}
	}
}

static void section_llm(struct rp_doc *d, const struct rp_run *r)
{
	if (!r->nllm)
		return;
	struct llm_sums m = {.lat = malloc(sizeof(double) * r->nllm)};
	llm_sum(r, &m);
	doc_heading(d, 2, "LLM usage");
	static const char *const heads[] = {"calls", "ok", "prompt tokens", "completion tokens",
					    "cost", "median latency", "max latency", "models"};
	doc_table_begin(d, 8, heads, "rrrrrrrl");
	doc_row_begin(d, NULL);
	doc_cellf(d, "%zu", r->nllm);
	doc_cellf(d, "%d", m.ok);
	if (m.tokens_known) {
		doc_cellf(d, "%lld", m.pt);
		doc_cellf(d, "%lld", m.ct);
	} else { /* a command or a person: nobody counted them */
		doc_cell(d, "unknown");
		doc_cell(d, "unknown");
	}
	if (m.ncost)
		doc_cellf(d, "%.4f%s", m.cost, m.ncost < (int)r->nllm ? " (some unknown)" : "");
	else
		doc_cell(d, "unknown");
	if (m.nlat) {
		qsort(m.lat, (size_t)m.nlat, sizeof(*m.lat), cmp_dbl);
		double med = m.nlat % 2 ? m.lat[m.nlat / 2] : (m.lat[m.nlat / 2 - 1] + m.lat[m.nlat / 2]) / 2;
		doc_cellf(d, "%.2f s", med / 1000);
		doc_cellf(d, "%.2f s", m.lat[m.nlat - 1] / 1000);
	} else {
		doc_cell(d, RP_NA);
		doc_cell(d, RP_NA);
	}
	doc_cell(d, m.models[0] ? m.models : RP_NA);
	doc_row_end(d);
	doc_table_end(d);
	free(m.lat);
	doc_para_begin(d);
	doc_text(d, "Prompts and replies are in the run database (llm table); reports never show "
		    "them.");
	doc_para_end(d);
	section_model_rejects(d, r);
}

/* where each candidate's wall time went, on average (the framework's cost, not the
 * kernels') */
static void section_times(struct rp_doc *d, const struct rp_run *r)
{
	if (r->ntimes < 1)
		return;
	doc_heading(d, 2, "Where the time went");
	if (isfinite(r->final_s) && r->final_s > 0 && isfinite(r->wall_s) && r->wall_s > 0) {
		doc_para_begin(d);
		doc_textf(d, "The run took %.1f s; the final re-measurement of the top candidates "
			     "%.1f s of it (%.0f%%, %d round%s).", r->wall_s, r->final_s,
			  100 * r->final_s / r->wall_s, r->final_rounds, r->final_rounds == 1 ? "" : "s");
		doc_para_end(d);
	}
	double total = 0;
	for (int k = 0; k < RP_NTIMES; k++)
		total += r->times[k];
	doc_para_begin(d);
	doc_textf(d, "Mean wall time per candidate over the %d evaluated in this process: %.2f s. "
		     "Compile overlaps with the other candidates of a batch; reference is the "
		     "expected outputs (cached after the first candidate); start is the runner "
		     "processes and the kernel's load; inputs the generation and upload of input "
		     "sets (for the correctness calls and for timing); check the correctness "
		     "calls with their output downloads and input checksums; compare the "
		     "comparison of outputs with the reference; timing the timed blocks, the "
		     "baseline's included.",
		  r->ntimes, total / r->ntimes);
	doc_para_end(d);
	static const char *const heads[] = {"phase", "mean s", "share"};
	doc_table_begin(d, 3, heads, "lrr");
	for (int k = 0; k < RP_NTIMES; k++) {
		doc_row_begin(d, NULL);
		doc_cell(d, rp_time_names[k]);
		doc_cellf(d, "%.3f", r->times[k] / r->ntimes);
		doc_cellf(d, "%.0f%%", total > 0 ? 100 * r->times[k] / total : 0.0);
		doc_row_end(d);
	}
	doc_table_end(d);
}

static void section_footer(struct rp_doc *d, const struct rp_run *r)
{
	doc_heading(d, 2, "How these numbers were measured");
	doc_para_begin(d);
	doc_text(d, "Each time is the median of timed repetitions taken after a warm-up; spread is "
		    "the interquartile range as a percentage of the median. Speedup is the baseline "
		    "median divided by the candidate median, and a candidate's speedup is the "
		    "geometric mean over the timed workloads. Which baseline figure depends on the "
		    "phase. Rows of phase search: the baseline (and the library, where one is "
		    "timed) was timed once per workload at the start of the run, interleaved with "
		    "the first candidate to reach timing, and every later candidate is divided "
		    "into those samples; good for ranking, but drift of the machine since then "
		    "shows in these speedups. Rows of phase final: at the end of a run the top "
		    "candidates are re-measured with more repetitions, the baseline timed again "
		    "in blocks interleaved with each candidate's (the later rounds, which only "
		    "tell the leaders apart, time the candidates alone against the first round's "
		    "baseline), and the best is chosen on that re-measurement. Correctness is "
		    "checked on several fresh input seeds per workload plus every check entry; a "
		    "candidate passes only if all of them pass.");
	doc_para_end(d);
	doc_para_begin(d);
	doc_text(d, "Regenerate this report from the run database with ");
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "ksearch report %s", r->dir);
	doc_code(d, cmd);
	doc_text(d, " (add --json for a machine-readable summary).");
	doc_para_end(d);
}

int rp_render_body(const struct rp_run *r, int html, struct ks_buf *out)
{
	struct rp_doc d = {.b = out, .html = html};
	section_header(&d, r);
	section_convergence(&d, r);
	section_roofline(&d, r);
	section_leaderboard(&d, r);
	section_best(&d, r);
	section_per_shape(&d, r);
	section_tree(&d, r);
	section_failures(&d, r);
	section_llm(&d, r);
	section_times(&d, r);
	section_footer(&d, r);
	return d.rc;
}
