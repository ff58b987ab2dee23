/* The roofline chart (roofline.svg): arithmetic intensity (flop/byte, log) on x, GFLOP/s
 * (log) on y; the roof min(compute roof, intensity x memory roof) that "% of roofline"
 * refers to, and per timed workload the best kernel, the baseline and, where the task has
 * one, the library.  The roofs are the ones the run used (its "roofline" event); a run
 * without them gets the points alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_impl.h"

#define W 760
#define H 420
#define ML 70
#define MR 24
#define MT 40
#define YB 330

struct axes {
	double x0, x1, y0, y1; /* log10 domains */
};

static double ax(const struct axes *a, double v)
{
	return ML + (log10(v) - a->x0) / (a->x1 - a->x0) * (W - ML - MR);
}

static double ay(const struct axes *a, double v)
{
	double l = log10(v);
	l = l < a->y0 ? a->y0 : l > a->y1 ? a->y1 : l;
	return YB - (l - a->y0) / (a->y1 - a->y0) * (YB - MT);
}

struct rl_point {
	double ai, gflops;
	int wl;
	int kind; /* 0 best, 1 baseline, 2 library */
};

#define LABEL_FONT 10  /* px, the point labels' font size */
#define LABEL_GAP 12.0 /* least distance between two labels' baselines (> LABEL_FONT) */

/* a point label: its point, and where its text goes */
struct rl_label {
	double px, py;     /* the point */
	double x, y, w;    /* text start (or end when anchor_end), baseline, estimated width */
	int anchor_end;
	const char *text;
};

static int label_cmp(const void *a, const void *b)
{
	const struct rl_label *x = a, *y = b;
	return x->py < y->py ? -1 : x->py > y->py;
}

static int labels_cross(const struct rl_label *a, const struct rl_label *b)
{
	double a0 = a->anchor_end ? a->x - a->w : a->x, b0 = b->anchor_end ? b->x - b->w : b->x;
	return a0 < b0 + b->w + 4 && b0 < a0 + a->w + 4;
}

/* Place the labels beside their points: top to bottom in the points' order, at least
 * LABEL_GAP apart where they would share columns, and off the compute roof (a flat line
 * at roof_y from roof_x0 rightwards; roof_y < 0: none) where that does not break the
 * order.  Sorts l by point y. */
static void labels_place(struct rl_label *l, int n, double roof_x0, double roof_y)
{
	qsort(l, (size_t)n, sizeof(*l), label_cmp);
	for (int i = 0; i < n; i++) {
		l[i].w = 5.6 * (double)strlen(l[i].text);
		l[i].anchor_end = l[i].px + 8 + l[i].w > W - MR;
		l[i].x = l[i].anchor_end ? l[i].px - 8 : l[i].px + 8;
		double y = l[i].py + LABEL_FONT * 0.35; /* centred on its point */
		double x0 = l[i].anchor_end ? l[i].x - l[i].w : l[i].x;
		/* the text spans y - 0.75 em .. y + 0.25 em: below the roof when it would cross */
		if (roof_y >= 0 && x0 + l[i].w > roof_x0 && y - 0.75 * LABEL_FONT - 1 < roof_y &&
		    y + 0.25 * LABEL_FONT + 1 > roof_y)
			y = roof_y + 0.75 * LABEL_FONT + 2;
		for (int j = 0; j < i; j++)
			if (labels_cross(&l[i], &l[j]) && y < l[j].y + LABEL_GAP)
				y = l[j].y + LABEL_GAP;
		l[i].y = y;
	}
	/* pushed below the plot: pull up from the bottom, keeping the gaps */
	for (int i = n - 1; i >= 0; i--) {
		double y = l[i].y < YB - 2 ? l[i].y : YB - 2;
		for (int j = i + 1; j < n; j++)
			if (labels_cross(&l[i], &l[j]) && y > l[j].y - LABEL_GAP)
				y = l[j].y - LABEL_GAP;
		l[i].y = y;
	}
}

/* the marker of a point kind, at x, y; the legend draws the same */
static int marker(struct ks_buf *b, int kind, double x, double y, const char *cls,
		  const char *color)
{
	if (kind == 0)
		return ks_buf_addf(b, "<circle%s%s%s cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\">",
				   cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "", x, y, color);
	if (kind == 1)
		return ks_buf_addf(b, "<rect%s%s%s x=\"%.1f\" y=\"%.1f\" width=\"9\" height=\"9\" "
				   "fill=\"%s\">", cls ? " class=\"" : "", cls ? cls : "",
				   cls ? "\"" : "", x - 4.5, y - 4.5, color);
	return ks_buf_addf(b, "<path%s%s%s d=\"M%.1f %.1f l5 5 l-5 5 l-5 -5 z\" fill=\"%s\">",
			   cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "", x, y - 5, color);
}

static const char *const marker_end[] = {"</circle>", "</rect>", "</path>"};

static void widen(double v, double *lo, double *hi)
{
	if (!(v > 0) || !isfinite(v))
		return;
	if (v < *lo)
		*lo = v;
	if (v > *hi)
		*hi = v;
}

static int tick_label(struct ks_buf *b, const struct axes *a, int x_axis, double v)
{
	char t[32];
	if (v >= 1e4 || v < 1e-2)
		snprintf(t, sizeof(t), "%.0e", v);
	else
		snprintf(t, sizeof(t), "%g", v);
	if (x_axis)
		return ks_buf_addf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" "
				   "stroke=\"#e6e6e6\"/><text x=\"%.1f\" y=\"%d\" "
				   "text-anchor=\"middle\">%s</text>\n",
				   ax(a, v), ax(a, v), MT, YB, ax(a, v), YB + 16, t);
	return ks_buf_addf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>"
			   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			   ML, W - MR, ay(a, v), ay(a, v), ML - 6, ay(a, v) + 4, t);
}

static const char *const rl_color[] = {"#2ca02c", "#d62728", "#ff7f0e"};
static const char *const rl_class[] = {"rl-best", "rl-baseline", "rl-library"};

/* a point kind's name; the library's points carry its name ("OpenBLAS") */
static const char *rl_name(const struct rp_run *r, int kind)
{
	return kind == 0 ? "best" : kind == 1 ? "baseline" : r->library[0] ? r->library : "library";
}

/* Per timed workload of the best candidate (its final figures when re-measured): the
 * kernel, and at the same intensity the baseline and the library, their GFLOP/s scaled by
 * the time ratio.  Returns how many points went into pts (3 per workload at most). */
static int rl_collect(const struct rp_run *r, struct rl_point *pts)
{
	int np = 0, timed[64], nt = rp_timed_workloads(r, timed, 64);
	const struct rp_cand *best = r->best >= 0 ? &r->cands[r->best] : NULL;
	for (int i = 0; best && i < nt; i++) {
		const struct rp_wl *w = &(best->rank_group == 0 ? best->final : best->search)[timed[i]];
		if (!w->present || !(w->gflops > 0) || !(w->gbps > 0))
			continue;
		double ai = w->gflops / w->gbps;
		pts[np++] = (struct rl_point){ai, w->gflops, timed[i], 0};
		if (w->baseline_us > 0 && w->median_us > 0)
			pts[np++] = (struct rl_point){ai, w->gflops * w->median_us / w->baseline_us,
						      timed[i], 1};
		if (w->library_us > 0 && w->median_us > 0)
			pts[np++] = (struct rl_point){ai, w->gflops * w->median_us / w->library_us,
						      timed[i], 2};
	}
	return np;
}

/* whole decades around the points and the ridge (P GFLOP/s over B GB/s), with air; a chart
 * with neither gets 0.1-100 flop/byte by 1-1000 GFLOP/s */
static struct axes rl_axes(const struct rl_point *pts, int np, double P, double B)
{
	double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
	for (int i = 0; i < np; i++) {
		widen(pts[i].ai, &xlo, &xhi);
		widen(pts[i].gflops, &ylo, &yhi);
	}
	if (P > 0 && B > 0) {
		widen(P / B, &xlo, &xhi); /* the ridge */
		widen(P, &ylo, &yhi);
	}
	if (!np && !(P > 0)) {
		xlo = 0.1;
		xhi = 100;
		ylo = 1;
		yhi = 1000;
	}
	return (struct axes){floor(log10(xlo) - 0.5), ceil(log10(xhi) + 0.5),
			     floor(log10(ylo) - 0.3), ceil(log10(yhi) + 0.3)};
}

/* the document, and a title that names the roofs when the run recorded them */
static int rl_open(struct ks_buf *b, const struct rp_run *r)
{
	double P = r->roof_gflops, B = r->roof_gbps;
	int rc = ks_buf_addf(b,
			 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			 "viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" "
			 "font-size=\"12\" role=\"img\" aria-label=\"roofline\">\n"
			 "<title>Roofline: each workload's best kernel and baseline against the "
			 "roofs</title>\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n"
			 "<text x=\"%d\" y=\"22\" font-size=\"14\" font-weight=\"bold\">Roofline",
			 W, H, W, H, W, H, ML);
	if (!rc && P > 0)
		rc = ks_buf_addf(b, " (%s: %.4g GFLOP/s compute, %.4g GB/s memory)",
				 r->roof_dtype[0] ? r->roof_dtype : "f32", P, B);
	return rc ? rc : ks_buf_adds(b, "</text>\n");
}

/* a grid line per decade on both axes, the axes and their titles */
static int rl_grid(struct ks_buf *b, const struct axes *a)
{
	int rc = 0;
	for (int d = (int)a->x0; d <= (int)a->x1 && !rc; d++)
		rc = tick_label(b, a, 1, pow(10, d));
	for (int d = (int)a->y0; d <= (int)a->y1 && !rc; d++)
		rc = tick_label(b, a, 0, pow(10, d));
	return rc ? rc : ks_buf_addf(b,
			 "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n"
			 "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n"
			 "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">arithmetic intensity "
			 "(flop/byte, log scale)</text>\n"
			 "<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">"
			 "GFLOP/s (log scale)</text>\n",
			 ML, MT, ML, YB, ML, YB, W - MR, YB, (ML + W - MR) / 2, YB + 36, (MT + YB) / 2);
}

/* the roof: a slope of B up to the ridge, flat at P after it; P alone: the flat part */
static int rl_roof(struct ks_buf *b, const struct axes *a, double P, double B)
{
	if (P > 0 && B > 0) {
		double x0 = pow(10, a->x0), x1 = pow(10, a->x1), ridge = P / B;
		double xs = x0 * B < pow(10, a->y0) ? pow(10, a->y0) / B : x0;
		return ks_buf_addf(b, "<path class=\"roof\" fill=\"none\" stroke=\"#444\" "
				   "stroke-width=\"2.5\" d=\"M%.1f %.1f L%.1f %.1f L%.1f %.1f\"/>\n"
				   "<text x=\"%.1f\" y=\"%.1f\" fill=\"#444\" font-size=\"10\">ridge "
				   "%.3g flop/byte</text>\n",
				   ax(a, xs), ay(a, xs * B), ax(a, ridge), ay(a, P), ax(a, x1),
				   ay(a, P), ax(a, ridge) + 4, ay(a, P) + 14, ridge);
	}
	if (P > 0)
		return ks_buf_addf(b, "<line class=\"roof\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" "
				   "y2=\"%.1f\" stroke=\"#444\" stroke-width=\"2.5\"/>\n",
				   ML, W - MR, ay(a, P), ay(a, P));
	return 0;
}

/* a marker per point with its details as a tooltip; the best kernels' points get a label
 * (into labels, *nlabel of them, 64 at most) */
static int rl_points(struct ks_buf *b, const struct rp_run *r, const struct axes *a,
		     const struct rl_point *pts, int np, struct rl_label *labels, int *nlabel)
{
	int rc = 0;
	for (int i = 0; i < np && !rc; i++) {
		const struct rl_point *p = &pts[i];
		double x = ax(a, p->ai), y = ay(a, p->gflops);
		rc = marker(b, p->kind, x, y, rl_class[p->kind], rl_color[p->kind]);
		rc = rc ? rc : ks_buf_addf(b, "<title>%s, ", rl_name(r, p->kind));
		rc = rc ? rc : rp_html_esc(b, r->workloads[p->wl].label);
		rc = rc ? rc : ks_buf_addf(b, ": %.4g GFLOP/s at %.3g flop/byte</title>%s\n",
					   p->gflops, p->ai, marker_end[p->kind]);
		if (p->kind == 0 && *nlabel < 64)
			labels[(*nlabel)++] = (struct rl_label){
				.px = x, .py = y,
				.text = r->workloads[p->wl].label ? r->workloads[p->wl].label : "?"};
	}
	return rc;
}

static int rl_labels(struct ks_buf *b, const struct rl_label *labels, int n)
{
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) {
		rc = ks_buf_addf(b, "<text class=\"rl-label\" x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" "
				 "fill=\"#333\"%s>", labels[i].x, labels[i].y, LABEL_FONT,
				 labels[i].anchor_end ? " text-anchor=\"end\"" : "");
		rc = rc ? rc : rp_html_esc(b, labels[i].text);
		rc = rc ? rc : ks_buf_adds(b, "</text>\n");
	}
	return rc;
}

/* the point kinds the chart shows, then the roof when there is one */
static int rl_legend(struct ks_buf *b, const struct rp_run *r, const struct rl_point *pts,
		     int np)
{
	int lx = ML, ly = H - 30, rc = 0;
	for (int k = 0; k < 3 && !rc; k++) {
		int any = 0;
		for (int i = 0; i < np; i++)
			any |= pts[i].kind == k;
		if (!any)
			continue;
		/* the same marker as the plot's points */
		rc = marker(b, k, lx + 5, ly - 4, NULL, rl_color[k]);
		rc = rc ? rc : ks_buf_addf(b, "%s<text x=\"%d\" y=\"%d\">%s</text>", marker_end[k],
					   lx + 14, ly, rl_name(r, k));
		lx += 100;
	}
	if (!rc && r->roof_gflops > 0)
		rc = ks_buf_addf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\" "
				 "stroke-width=\"2.5\"/><text x=\"%d\" y=\"%d\">roof (attainable)"
				 "</text>",
				 lx, ly - 4, lx + 18, ly - 4, lx + 24, ly);
	return rc;
}

int rp_render_roofline(const struct rp_run *r, struct ks_buf *b)
{
	struct rl_point pts[3 * 64];
	struct rl_label labels[64];
	double P = r->roof_gflops, B = r->roof_gbps;
	int np = rl_collect(r, pts), nlabel = 0;
	struct axes a = rl_axes(pts, np, P, B);
	int rc = rl_open(b, r);
	rc = rc ? rc : rl_grid(b, &a);
	rc = rc ? rc : rl_roof(b, &a, P, B);
	rc = rc ? rc : rl_points(b, r, &a, pts, np, labels, &nlabel);
	/* workloads often share an intensity or come close: labels in the points' order */
	labels_place(labels, nlabel, P > 0 && B > 0 ? ax(&a, P / B) : ML, P > 0 ? ay(&a, P) : -1);
	rc = rc ? rc : rl_labels(b, labels, nlabel);
	if (!np && !rc)
		rc = ks_buf_addf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#666\">"
				 "no timed result with throughput to place</text>\n",
				 (ML + W - MR) / 2, (MT + YB) / 2);
	rc = rc ? rc : rl_legend(b, r, pts, np);
	return rc ? rc : ks_buf_adds(b, "\n</svg>\n");
}
