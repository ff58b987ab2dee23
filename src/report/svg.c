/* The convergence chart as plain SVG text: candidate (evaluation order) on x, speedup on y;
 * a step line for the best speedup so far, a dot per passing candidate, a triangle per
 * failing one on a strip under the axis (colour = status), a dashed 1.0x baseline line. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report_impl.h"

#define W 760
#define H 400
#define ML 70  /* left margin: y tick labels and title */
#define MR 24
#define MT 40  /* title */
#define YB 282 /* y of the x axis */
#define FAIL_Y (YB + 14)

struct chart {
	double x0, x1;      /* x domain */
	double y0, y1;      /* y domain (log10 values when log) */
	int log;
};

static double px(const struct chart *c, double x)
{
	return ML + (x - c->x0) / (c->x1 - c->x0) * (W - ML - MR);
}

static double py(const struct chart *c, double v)
{
	double y = c->log ? log10(v > 0 ? v : 1e-9) : v;
	if (y < c->y0)
		y = c->y0;
	if (y > c->y1)
		y = c->y1;
	return YB - (y - c->y0) / (c->y1 - c->y0) * (YB - MT);
}

static double nice_step(double raw)
{
	double p = pow(10, floor(log10(raw)));
	double f = raw / p;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

static void fmt_x(double v, char *dst, size_t n)
{
	if (fabs(v - round(v)) < 1e-9 * (v > 1 ? v : 1))
		snprintf(dst, n, "%.0fx", v);
	else if (v >= 1)
		snprintf(dst, n, "%.1fx", v);
	else
		snprintf(dst, n, "%.2gx", v);
}

static int point_passed(const struct rp_run *r, const struct ks_store_point *p, const char **status)
{
	int ci = rp_find_cand(r, p->candidate_id);
	const char *st = ci >= 0 && r->cands[ci].c->status ? r->cands[ci].c->status : "?";
	*status = st;
	return !strcmp(st, "PASSED") && isfinite(p->speedup) && p->speedup > 0;
}

static int legend_item(struct ks_buf *b, double *x, int *yp, const char *shape,
		       const char *color, const char *label)
{
	int rc = 0;
	double wid = 23 + 7.0 * (double)strlen(label) + 16;
	if (*x + wid > W - MR && *x > ML) {
		*x = ML; /* next row */
		*yp += 20;
	}
	int y = *yp;
	if (!strcmp(shape, "line"))
		rc = ks_buf_addf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" "
				 "stroke-width=\"2.5\"/>", *x, y - 4, *x + 18, y - 4, color);
	else if (!strcmp(shape, "dash"))
		rc = ks_buf_addf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" "
				 "stroke-dasharray=\"5 3\"/>", *x, y - 4, *x + 18, y - 4, color);
	else if (!strcmp(shape, "dot"))
		rc = ks_buf_addf(b, "<circle cx=\"%.1f\" cy=\"%d\" r=\"3.5\" fill=\"%s\" "
				 "fill-opacity=\"0.75\"/>", *x + 9, y - 4, color);
	else if (!strcmp(shape, "diamond"))
		rc = ks_buf_addf(b, "<path d=\"M%.1f %d l5 5 l-5 5 l-5 -5 z\" fill=\"none\" "
				 "stroke=\"%s\" stroke-width=\"1.8\"/>", *x + 9, y - 9, color);
	else
		rc = ks_buf_addf(b, "<path d=\"M%.1f %d l4 -7 l4 7 z\" fill=\"%s\"/>", *x + 5,
				 y, color);
	rc = rc ? rc : ks_buf_addf(b, "<text x=\"%.1f\" y=\"%d\">", *x + 23, y);
	rc = rc ? rc : rp_html_esc(b, label);
	rc = rc ? rc : ks_buf_adds(b, "</text>");
	*x += wid;
	return rc;
}

/* The domains: x over the candidates, y over the passing speedups (log10 when they span
 * more than 50x), always including the 1.0x baseline.  Returns how many passed. */
static int chart_scale(const struct rp_run *r, struct chart *c)
{
	double lo = 1.0, hi = 1.0;
	int npass = 0;
	const char *st;
	for (size_t i = 0; i < r->nconv; i++)
		if (point_passed(r, &r->conv[i], &st)) {
			npass++;
			if (r->conv[i].speedup < lo)
				lo = r->conv[i].speedup;
			if (r->conv[i].speedup > hi)
				hi = r->conv[i].speedup;
		}
	*c = (struct chart){.x0 = 0.5, .x1 = (double)(r->nconv ? r->nconv : 1) + 0.5};
	c->log = hi / lo > 50;
	if (c->log) {
		c->y0 = floor(log10(lo) * 4 - 0.5) / 4; /* a little air below and above */
		c->y1 = ceil(log10(hi) * 4 + 0.5) / 4;
	} else {
		c->y0 = 0;
		c->y1 = hi * 1.08;
	}
	return npass;
}

static int chart_open(struct ks_buf *b, const struct rp_run *r, int npass)
{
	return ks_buf_addf(b,
			   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			   "viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" "
			   "font-size=\"12\" role=\"img\" aria-label=\"convergence of the search\">\n"
			   "<title>Convergence: best speedup so far per evaluated candidate</title>\n"
			   "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n"
			   "<text x=\"%d\" y=\"22\" font-size=\"14\" font-weight=\"bold\">Convergence"
			   " (search phase): %zu evaluated, %d passed</text>\n",
			   W, H, W, H, W, H, ML, r->nconv, npass);
}

/* one horizontal grid line at speedup v, labelled on the y axis */
static int grid_line(struct ks_buf *b, const struct chart *c, double v)
{
	char t[64];
	fmt_x(v, t, sizeof(t));
	return ks_buf_addf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
			   "stroke=\"#e6e6e6\"/><text x=\"%d\" y=\"%.1f\" "
			   "text-anchor=\"end\">%s</text>\n",
			   ML, W - MR, py(c, v), py(c, v), ML - 6, py(c, v) + 4, t);
}

/* log scale: every power of ten, and 2x and 5x between them while the range is short */
static int grid_log(struct ks_buf *b, const struct chart *c)
{
	int rc = 0;
	for (int d = (int)floor(c->y0); d <= (int)ceil(c->y1) && !rc; d++)
		for (int m = 1; m <= 5 && !rc; m += (m == 1 ? 1 : 3)) {
			double v = (double)m * pow(10, d), lv = log10(v);
			if (lv < c->y0 - 1e-9 || lv > c->y1 + 1e-9)
				continue;
			if (m != 1 && c->y1 - c->y0 > 3)
				continue;
			rc = grid_line(b, c, v);
		}
	return rc;
}

static int grid_linear(struct ks_buf *b, const struct chart *c)
{
	int rc = 0;
	double step = nice_step(c->y1 / 5);
	for (double v = 0; v <= c->y1 + 1e-9 && !rc; v += step)
		rc = grid_line(b, c, v);
	return rc;
}

/* a tick at candidate 1, then at the multiples of a round step */
static int x_ticks(struct ks_buf *b, const struct rp_run *r, const struct chart *c)
{
	int rc = 0;
	double xstep = r->nconv > 1 ? nice_step((double)r->nconv / 8) : 1;
	if (xstep < 1)
		xstep = 1;
	for (double x = 1; x <= (double)(r->nconv ? r->nconv : 1) && !rc; x += xstep) {
		double xx = xstep > 1 && x == 1 ? 1 : x;
		rc = ks_buf_addf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#333\"/>"
				 "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.0f</text>\n",
				 px(c, xx), px(c, xx), YB, YB + 5, px(c, xx), YB + 40, xx);
		if (xstep > 1 && x == 1)
			x = 0; /* 1, then multiples of the step */
	}
	return rc;
}

/* the axes, their titles and the dashed 1.0x baseline */
static int axes(struct ks_buf *b, const struct chart *c)
{
	int rc = ks_buf_addf(b,
			 "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n"
			 "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n"
			 "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">candidate (order of evaluation)"
			 "</text>\n"
			 "<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">"
			 "speedup vs baseline%s</text>\n"
			 "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#666\" font-size=\"10\">"
			 "failed</text>\n",
			 ML, MT, ML, YB, ML, YB, W - MR, YB, (ML + W - MR) / 2, YB + 58,
			 (MT + YB) / 2, c->log ? " (log scale)" : "", ML - 6, FAIL_Y + 4);
	return rc ? rc : ks_buf_addf(b,
			 "<line class=\"baseline\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
			 "stroke=\"#d62728\" stroke-dasharray=\"5 3\"/>"
			 "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#d62728\" "
			 "font-size=\"10\">baseline 1.0x</text>\n",
			 ML, W - MR, py(c, 1), py(c, 1), W - MR - 2, py(c, 1) - 4);
}

/* a passing candidate: a dot at its speedup, ringed when it is the best */
static int mark_pass(struct ks_buf *b, const struct rp_run *r, const struct chart *c,
		     size_t i, double dot_r)
{
	const struct ks_store_point *p = &r->conv[i];
	int ci = rp_find_cand(r, p->candidate_id), rc = 0;
	const char *action = ci >= 0 && r->cands[ci].c->action ? r->cands[ci].c->action : "";
	int64_t best_id = r->best >= 0 ? r->cands[r->best].c->id : 0;
	double x = px(c, (double)(i + 1));
	/* the ring sits on the figure the best was chosen on (final when re-measured) */
	if (p->candidate_id == best_id)
		rc = ks_buf_addf(b, "<circle class=\"best-mark\" cx=\"%.1f\" cy=\"%.1f\" "
				 "r=\"8\" fill=\"none\" stroke=\"#2ca02c\" "
				 "stroke-width=\"2\"/>", x, py(c, r->cands[ci].speedup));
	rc = rc ? rc : ks_buf_addf(b, "<circle class=\"pt pass\" cx=\"%.1f\" cy=\"%.1f\" "
				  "r=\"%.1f\" fill=\"#1f77b4\" fill-opacity=\"0.75\">"
				  "<title>#%lld ", x, py(c, p->speedup), dot_r,
				  (long long)p->candidate_id);
	rc = rc ? rc : rp_html_esc(b, action);
	return rc ? rc : ks_buf_addf(b, ": %.3gx</title></circle>\n", p->speedup);
}

/* a failing candidate: a triangle on the strip under the axis, coloured by its status */
static int mark_fail(struct ks_buf *b, const struct rp_run *r, const struct chart *c,
		     size_t i, const char *st)
{
	const struct ks_store_point *p = &r->conv[i];
	int ci = rp_find_cand(r, p->candidate_id);
	const char *action = ci >= 0 && r->cands[ci].c->action ? r->cands[ci].c->action : "";
	double x = px(c, (double)(i + 1));
	int rc = ks_buf_addf(b, "<path class=\"pt fail\" d=\"M%.1f %d l4 -7 l4 7 z\" "
			     "fill=\"%s\"><title>#%lld ", x - 4, FAIL_Y + 3,
			     rp_status_color(st), (long long)p->candidate_id);
	rc = rc ? rc : rp_html_esc(b, action);
	rc = rc ? rc : ks_buf_adds(b, ": ");
	rc = rc ? rc : rp_html_esc(b, st);
	return rc ? rc : ks_buf_adds(b, "</title></path>\n");
}

/* one mark per candidate */
static int marks(struct ks_buf *b, const struct rp_run *r, const struct chart *c)
{
	int rc = 0;
	const char *st;
	/* dots shrink on long runs so the cloud stays readable */
	double dot_r = r->nconv > 200 ? 3.5 * sqrt(200.0 / (double)r->nconv) : 3.5;
	if (dot_r < 1.2)
		dot_r = 1.2;
	for (size_t i = 0; i < r->nconv && !rc; i++)
		rc = point_passed(r, &r->conv[i], &st) ? mark_pass(b, r, c, i, dot_r)
						       : mark_fail(b, r, c, i, st);
	return rc;
}

/* the best speedup so far, as steps */
static int best_steps(struct ks_buf *b, const struct rp_run *r, const struct chart *c)
{
	int started = 0, rc = 0;
	double prev = NAN;
	for (size_t i = 0; i < r->nconv && !rc; i++) {
		double bv = r->conv[i].best, x = px(c, (double)(i + 1));
		if (!isfinite(bv) || bv <= 0)
			continue;
		if (!started)
			rc = ks_buf_addf(b, "<path class=\"best\" fill=\"none\" stroke=\"#2ca02c\" "
					 "stroke-width=\"2.5\" d=\"M%.1f %.1f", x, py(c, bv));
		else if (bv != prev)
			rc = ks_buf_addf(b, " H%.1f V%.1f", x, py(c, bv));
		started = 1;
		prev = bv;
	}
	if (started && !rc)
		rc = ks_buf_addf(b, " H%.1f\"/>\n", px(c, (double)r->nconv));
	return rc;
}

/* the final re-measurements, where they landed relative to the search figure */
static int final_marks(struct ks_buf *b, const struct rp_run *r, const struct chart *c)
{
	int rc = 0;
	for (size_t i = 0; i < r->nconv && !rc; i++) {
		int ci = rp_find_cand(r, r->conv[i].candidate_id);
		if (ci < 0 || r->cands[ci].rank_group != 0)
			continue;
		double x = px(c, (double)(i + 1)), y = py(c, r->cands[ci].speedup);
		rc = ks_buf_addf(b, "<path class=\"final\" d=\"M%.1f %.1f l5 5 l-5 5 l-5 -5 z\" "
				 "fill=\"none\" stroke=\"#9467bd\" stroke-width=\"1.8\"><title>#%lld "
				 "final re-measurement: %.3gx</title></path>\n",
				 x, y - 5, (long long)r->conv[i].candidate_id, r->cands[ci].speedup);
	}
	return rc;
}

/* only what the chart shows */
static int legend(struct ks_buf *b, const struct rp_run *r)
{
	double lx = ML;
	int ly = H - 44;
	int rc = legend_item(b, &lx, &ly, "line", "#2ca02c", "best so far");
	rc = rc ? rc : legend_item(b, &lx, &ly, "dot", "#1f77b4", "passed");
	rc = rc ? rc : legend_item(b, &lx, &ly, "dash", "#d62728", "baseline");
	if (r->any_final)
		rc = rc ? rc : legend_item(b, &lx, &ly, "diamond", "#9467bd", "final re-measurement");
	for (int i = 0; i < r->nfails && !rc; i++)
		rc = legend_item(b, &lx, &ly, "tri", rp_status_color(r->fails[i].status),
				 r->fails[i].status);
	return rc;
}

int rp_render_svg(const struct rp_run *r, struct ks_buf *b)
{
	struct chart c;
	int npass = chart_scale(r, &c);
	int rc = chart_open(b, r, npass);
	rc = rc ? rc : c.log ? grid_log(b, &c) : grid_linear(b, &c);
	rc = rc ? rc : x_ticks(b, r, &c);
	rc = rc ? rc : axes(b, &c);
	rc = rc ? rc : marks(b, r, &c);
	rc = rc ? rc : best_steps(b, r, &c);
	rc = rc ? rc : final_marks(b, r, &c);
	if (!r->nconv && !rc)
		rc = ks_buf_addf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#666\">"
				 "no candidate evaluated yet</text>\n", (ML + W - MR) / 2,
				 (MT + YB) / 2);
	rc = rc ? rc : legend(b, r);
	return rc ? rc : ks_buf_adds(b, "</svg>\n");
}
