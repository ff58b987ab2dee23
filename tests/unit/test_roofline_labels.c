/* roofline.svg: the legend draws each kind with the plot's marker, and point labels keep
 * their points' vertical order, stay a font height apart and off the compute roof. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_impl.h"
#include "tap.h"

#define FONT 10 /* the labels' font size (roofline_svg.c LABEL_FONT) */

/* the label text's baseline y, found by its text */
static double label_y(const char *svg, const char *text)
{
	char want[128];
	snprintf(want, sizeof(want), ">%s</text>", text);
	for (const char *p = strstr(svg, "<text class=\"rl-label\""); p;
	     p = strstr(p + 1, "<text class=\"rl-label\"")) {
		const char *end = strstr(p, "</text>");
		const char *t = strchr(p, '>');
		if (end && t && !strncmp(t, want, strlen(want)))
			return atof(strstr(p, " y=\"") + 4);
	}
	return NAN;
}

/* the best point's cy for workload text (its <title> follows the circle) */
static double point_y(const char *svg, const char *text)
{
	char want[160];
	snprintf(want, sizeof(want), "<title>best, %s:", text);
	const char *t = strstr(svg, want);
	if (!t)
		return NAN;
	const char *c = t;
	while (c > svg && strncmp(c, "<circle", 7))
		c--;
	return atof(strstr(c, "cy=\"") + 4);
}

static void render(double gf0, double gf1, double roof, struct ks_buf *out)
{
	static struct ks_store_workload wl[2] = {{0, "rows=2048 cols=2048", "{}", 0},
						 {1, "rows=4096 cols=4096", "{}", 0}};
	static struct rp_wl fin[2];
	static struct rp_cand cand;
	static struct rp_run r;
	memset(&r, 0, sizeof(r));
	memset(fin, 0, sizeof(fin));
	double gf[2] = {gf0, gf1};
	for (int i = 0; i < 2; i++) {
		fin[i] = (struct rp_wl){.present = 1, .status = "PASSED", .median_us = 100,
					.gflops = gf[i], .gbps = gf[i] / 2, .baseline_us = 300,
					.library_us = NAN};
	}
	cand = (struct rp_cand){.final = fin, .search = fin, .final_any = 1, .rank_group = 0};
	r.workloads = wl;
	r.nworkloads = 2;
	r.cands = &cand;
	r.ncands = 1;
	r.best = 0;
	r.roof_gflops = roof;
	r.roof_gbps = roof > 0 ? roof / 0.1 : 0;
	ks_buf_release(out);
	ks_buf_init(out, 1 << 20);
	rp_render_roofline(&r, out);
}

int main(void)
{
	struct ks_buf b = KS_BUF_INIT;
	const char *A = "rows=2048 cols=2048", *Bw = "rows=4096 cols=4096";

	/* two points a few pixels apart, A above B */
	render(100, 97, 0, &b);
	const char *svg = ks_buf_str(&b);
	double pa = point_y(svg, A), pb = point_y(svg, Bw);
	double la = label_y(svg, A), lb = label_y(svg, Bw);
	ok(pa < pb && pb - pa < FONT, "the points are closer than a font height (%.1f, %.1f)", pa, pb);
	ok(la < lb, "labels keep the points' order (A at %.1f above B at %.1f)", la, lb);
	ok(lb - la >= FONT, "labels are at least a font height apart (%.1f)", lb - la);

	/* the other way round: B's point above A's */
	render(97, 100, 0, &b);
	svg = ks_buf_str(&b);
	pa = point_y(svg, A), pb = point_y(svg, Bw);
	la = label_y(svg, A), lb = label_y(svg, Bw);
	ok(pb < pa && lb < la && la - lb >= FONT, "swapped points: labels swap too (%.1f, %.1f)", lb,
	   la);

	/* points just under the compute roof: their labels stay off its line */
	render(100, 98, 101, &b);
	svg = ks_buf_str(&b);
	const char *roof = strstr(svg, "<path class=\"roof\"");
	double m[6], ry = NAN;
	if (roof && sscanf(strstr(roof, " d=\"M"), " d=\"M%lf %lf L%lf %lf L%lf %lf", &m[0], &m[1],
			   &m[2], &m[3], &m[4], &m[5]) == 6)
		ry = m[5]; /* the flat compute roof */
	la = label_y(svg, A), lb = label_y(svg, Bw);
	ok(isfinite(ry) && la - 0.75 * FONT > ry && lb - la >= FONT,
	   "labels below the roof line at %.1f (%.1f, %.1f)", ry, la, lb);

	/* the legend's baseline marker is a square, as in the plot */
	ok(strstr(svg, "<rect class=\"rl-baseline\"") != NULL, "the plot draws baselines as squares");
	const char *legend = strstr(svg, "<rect x=\""); /* the legend's markers carry no class */
	const char *red = legend ? strstr(legend, "fill=\"#d62728\"") : NULL;
	ok(red && red - legend < 80 && !strstr(svg, "r=\"5\" fill=\"#d62728\""),
	   "the legend draws the baseline as a square too, never a circle");
	ks_buf_release(&b);
	return tap_done();
}
