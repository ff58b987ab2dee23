/* Strategy replay harness: a synthetic cost landscape over a ~230-configuration template.
 * Checks determinism per seed, no repeated evaluations, exhaustion, snapshots, and that wm
 * reaches 95% of the best configuration in fewer median evaluations than random. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/strategy.h"
#include "tap.h"

#define FIXTURE "tests/fixtures/templates/landscape.c"
#define NSEEDS 101
#define MAXEVAL 4096
#define NS 4 /* strategies compared: wm, evolve, random, anneal */

static int lookup(int w, const char *name, size_t len, double *out, void *ctx)
{
	(void)w;
	(void)ctx;
	if (len == 16 && !memcmp(name, "spec.tile_budget", len)) {
		*out = 16384;
		return 0;
	}
	return KS_ENOTFOUND;
}

/* log2 of knob k's value in configuration p */
static double lv(const struct ks_template *t, const struct ks_proposal *p, const char *knob)
{
	int k = ks_template_knob(t, knob);
	return log2(t->knobs[k].nums[p->knobs[k]]);
}

/* Speedup of a configuration: tile sizes with an interaction, unroll and vector width that
 * compete for registers (a ridge: the best needs UNROLL down while VEC goes up), a scheduling
 * effect that flips for big tiles; the largest tiles with full unroll fail to compile. */
static int variant; /* which landscape */

/* the "simple-loop" family: a good default, a low ceiling */
static const char loop_template[] =
	"/* @ksearch\n"
	"family: simple-loop\n"
	"rating: 5\n"
	"difficulty: 1\n"
	"knobs:\n"
	"  UNROLL: {values: [1, 2, 4, 8], default: 2, impacts: {compute_hw_fit: 4}}\n"
	"  CHUNK: {values: [1, 4, 16, 64], default: 16, impacts: {memory_bandwidth: 3}}\n"
	"  SCHED: {values: [static, dynamic], default: static, impacts: {compute_hw_fit: 2}}\n"
	"@end */\n";

/* a family rated high whose configurations all lie within 11% of each other, and one rated
 * low whose default is half as fast and whose knobs climb to 1.35x the first one's best */
static const char plateau_template[] =
	"/* @ksearch\n"
	"family: plateau\n"
	"rating: 8\n"
	"difficulty: 1\n"
	"knobs:\n"
	"  A: {values: [1, 2, 4, 8], default: 2, impacts: {compute_hw_fit: 4}}\n"
	"  B: {values: [1, 2, 4, 8], default: 2, impacts: {compute_hw_fit: 4}}\n"
	"  C: {values: [1, 2, 4, 8], default: 2, impacts: {compute_hw_fit: 4}}\n"
	"  D: {values: [1, 2, 4, 8], default: 2, impacts: {compute_hw_fit: 4}}\n"
	"@end */\n";
static const char ramp_template[] =
	"/* @ksearch\n"
	"family: ramp\n"
	"rating: 4\n"
	"difficulty: 1\n"
	"knobs:\n"
	"  X: {values: [1, 2, 4, 8], default: 1, impacts: {compute_hw_fit: 4}}\n"
	"  Y: {values: [1, 2, 4, 8], default: 1, impacts: {compute_hw_fit: 4}}\n"
	"  Z: {values: [1, 2, 4, 8], default: 1, impacts: {compute_hw_fit: 4}}\n"
	"@end */\n";

/* a knob whose middle value is a valley: THREADS 0 (all cores) and 2 are fast, 1 is slow, and
 * 2 is the best with any tile */
static const char valley_template[] =
	"/* @ksearch\n"
	"family: valley\n"
	"rating: 6\n"
	"difficulty: 1\n"
	"knobs:\n"
	"  TILE: {values: [8, 16, 32, 64], default: 16, impacts: {memory_bandwidth: 4}}\n"
	"  THREADS: {values: [0, 1, 2], default: 0, impacts: {compute_hw_fit: 4}}\n"
	"  VEC: {values: [4, 8, 16], default: 8, impacts: {compute_hw_fit: 3}}\n"
	"@end */\n";

static int landscape(const struct ks_template *t, const struct ks_proposal *p, double *score)
{
	if (!strcmp(t->family, "valley")) {
		static const double threads[] = {1.0, 0.55, 1.25};
		double tile = lv(t, p, "TILE"), vec = lv(t, p, "VEC");
		*score = threads[p->knobs[ks_template_knob(t, "THREADS")]] *
			 exp(-0.05 * (tile - 5) * (tile - 5) - 0.04 * (vec - 3) * (vec - 3));
		return 1;
	}
	if (!strcmp(t->family, "plateau")) {
		*score = exp(0.1 * (lv(t, p, "A") + lv(t, p, "B") + lv(t, p, "C") + lv(t, p, "D")) /
			     12);
		return 1;
	}
	if (!strcmp(t->family, "ramp")) {
		*score = 0.6 * exp(log(2.5) * (lv(t, p, "X") + lv(t, p, "Y") + lv(t, p, "Z")) / 9);
		return 1;
	}
	if (!strcmp(t->family, "simple-loop")) {
		double un = lv(t, p, "UNROLL"), ch = lv(t, p, "CHUNK");
		int dyn = p->knobs[ks_template_knob(t, "SCHED")] == 1;
		*score = exp(0.6 - 0.08 * (un - 1.5) * (un - 1.5) - 0.03 * (ch - 3) * (ch - 3) +
			     0.05 * dyn);
		return 1;
	}
	double bm = lv(t, p, "BM"), bn = lv(t, p, "BN"), un = lv(t, p, "UNROLL");
	double vec = lv(t, p, "VEC");
	int dyn = p->knobs[ks_template_knob(t, "SCHED")] == 1;
	double l = 0;
	/* a third landscape: every dynamic-schedule configuration fails its checks, like a knob
	 * value that breaks accuracy (3xTF32 without split accumulation) */
	if (variant == 3 && dyn)
		return 0;
	if (variant == 1) {
		/* a second landscape: small BM, wide BN, unroll and vector width that help
		 * together, dynamic scheduling that hurts except with small tiles */
		if (bn >= 7 && vec >= 3)
			return 0;
		l += -0.3 * (bm - 4.4) * (bm - 4.4) - 0.2 * (bn - 6.6) * (bn - 6.6);
		l += -0.1 * (bm - 4) * (bn - 6);
		l += 0.12 * un + 0.1 * vec + 0.05 * un * vec - 0.04 * un * un;
		l += (bm <= 4 ? 0.1 : -0.15) * dyn;
		*score = exp(l);
		return 1;
	}
	if (bm >= 8 && un >= 3)
		return 0;
	l += -0.35 * (bm - 6.2) * (bm - 6.2);
	l += -0.25 * (bn - 5.5) * (bn - 5.5);
	l += 0.15 * (bm - 6) * (bn - 5);
	l += 0.25 * un + 0.35 * vec - 0.09 * un * vec * log2(exp2(bn) / 16 + 1);
	l += 0.12 * dyn - 0.05 * dyn * (bm >= 7);
	if (variant == 2) {
		/* frozen measurement noise, +-4%, a fixed function of the configuration */
		uint64_t h = 1469598103934665603ULL;
		for (int k = 0; k < t->nknobs; k++)
			h = (h ^ (uint64_t)p->knobs[k]) * 1099511628211ULL;
		h ^= h >> 29;
		l += 0.04 * ((double)(h % 2001) / 1000.0 - 1.0);
	}
	*score = exp(l);
	return 1;
}

struct run {
	int n;               /* evaluations made */
	int reach;           /* evaluations until 95% of the best (0: never) */
	int dup;             /* repeated configurations */
	int order[MAXEVAL];  /* config index of each evaluation */
	int worlds_ok;       /* wm snapshots re-imported */
	int short_early;     /* short batches before the space was exhausted */
	int fails;           /* evaluations that failed */
};

/* drive a strategy the way the search loop does: batches of `batch` proposals, outcomes in
 * reverse order of proposal, until exhaustion or max evaluations */
static const struct ks_world_params *wm_params; /* NULL: the strategy's defaults */
static double family_share;                      /* 0: the strategy's default */

static int drive(const char *name, const struct ks_space *space, uint64_t seed, int batch,
		 int max, double target, int stop_at_target, struct run *r)
{
	struct ks_strategy_config cfg = {.seed = seed, .root_title = "naive gemm",
					 .params = wm_params, .family_share = family_share};
	struct ks_strategy *s = NULL;
	struct ks_error e = {0};
	struct ks_proposal props[8];
	int total = 0;
	char *seen;
	for (int i = 0; i < space->ntemplates; i++)
		total += space->feasible[i].n;
	seen = calloc((size_t)total, 1);
	int rc = ks_strategy_new(name, space, &cfg, &s, &e);
	memset(r, 0, sizeof(*r));
	if (rc || !seen) {
		printf("# %s: %s\n", name, e.msg);
		free(seen);
		return -1;
	}
	while (r->n < max && !(stop_at_target && r->reach)) {
		int n = 0;
		rc = ks_strategy_propose(s, props, batch, &n, &e);
		if (rc) {
			printf("# propose: %s\n", e.msg);
			break;
		}
		if (!n)
			break;
		if (n < batch && r->n + n < total)
			r->short_early++;
		for (int i = n - 1; i >= 0; i--) {
			const struct ks_proposal *p = &props[i];
			struct ks_outcome o = {.candidate = r->n};
			o.passed = landscape(space->templates[p->template_index], p, &o.score);
			r->fails += !o.passed;
			int slot = p->config;
			for (int ti = 0; ti < p->template_index; ti++)
				slot += space->feasible[ti].n;
			if (seen[slot]++)
				r->dup++;
			if (r->n < MAXEVAL)
				r->order[r->n] = slot;
			r->n++;
			if (!r->reach && o.passed && o.score >= 0.95 * target)
				r->reach = r->n;
			rc = ks_strategy_observe(s, p, &o, &e);
			if (rc) {
				printf("# observe: %s\n", e.msg);
				break;
			}
		}
		if (rc)
			break;
		if (ks_strategy_world(s) && r->n % 16 == 0) {
			struct ks_buf b;
			struct ks_world w;
			ks_buf_init(&b, 0);
			if (!ks_strategy_snapshot(s, &b, &e) && !ks_world_import(&w, ks_buf_str(&b), &e)) {
				r->worlds_ok++;
				ks_world_release(&w);
			}
			ks_buf_release(&b);
		}
	}
	ks_strategy_free(s);
	free(seen);
	return rc ? -1 : 0;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static double median(int *v, int n)
{
	qsort(v, (size_t)n, sizeof(int), cmp_int);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(void)
{
	struct ks_template *t = NULL;
	struct ks_error e = {0};
	struct ks_config_set fs;
	struct ks_space space;
	static struct run r1, r2;
	static int reach[NS][NSEEDS];
	const char *names[NS] = {"wm", "evolve", "random", "anneal"};
	double best = 0, med[NS];
	int rc, nfail = 0;

	rc = ks_template_load(FIXTURE, &t, &e);
	ok(rc == 0, "load landscape template (%s)", e.msg);
	if (rc)
		return tap_done();
	rc = ks_template_enumerate(t, 1, lookup, NULL, &fs, &e);
	ok(rc == 0 && fs.n >= 150 && fs.n <= 300, "about 200 feasible configurations (%d)", fs.n);
	space = (struct ks_space){.ntemplates = 1, .templates = &t, .feasible = &fs};
	for (int c = 0; c < fs.n; c++) {
		struct ks_proposal p = {0};
		double s;
		memcpy(p.knobs, fs.cfg + (size_t)c * fs.nknobs, (size_t)fs.nknobs * sizeof(int));
		if (!landscape(t, &p, &s))
			nfail++;
		else if (s > best)
			best = s;
	}
	printf("# %d feasible, %d fail to compile, best speedup %.3f\n", fs.n, nfail, best);

	{
		struct ks_strategy *s = NULL;
		ok(ks_strategy_new("greedy", &space, NULL, &s, &e) == KS_ENOTFOUND && !s,
		   "unknown strategy refused (%s)", e.msg);
	}

	for (int k = 0; k < NS; k++) {
		/* determinism: same seed, same proposals; another seed, other proposals */
		drive(names[k], &space, 7, 3, 60, best, 0, &r1);
		drive(names[k], &space, 7, 3, 60, best, 0, &r2);
		ok(r1.n == 60 && r2.n == 60 && !memcmp(r1.order, r2.order, sizeof(int) * 60),
		   "%s: same seed, same proposals", names[k]);
		drive(names[k], &space, 8, 3, 60, best, 0, &r2);
		ok(memcmp(r1.order, r2.order, sizeof(int) * 60) != 0, "%s: other seed differs",
		   names[k]);
		/* exhaustion: every feasible configuration exactly once, then nothing */
		drive(names[k], &space, 3, 4, MAXEVAL, best, 0, &r1);
		ok(r1.n == fs.n && r1.dup == 0, "%s: exhausts the space without repeats (%d of %d, %d dup)",
		   names[k], r1.n, fs.n, r1.dup);
		is_int(r1.short_early, 0, "full batches until the space is exhausted");
		if (k == 0)
			ok(r1.worlds_ok > 5, "wm: snapshots re-import (%d)", r1.worlds_ok);
		for (int sd = 0; sd < NSEEDS; sd++) {
			drive(names[k], &space, 1000 + sd, 1, MAXEVAL, best, 1, &r1);
			reach[k][sd] = r1.reach ? r1.reach : MAXEVAL;
		}
		med[k] = median(reach[k], NSEEDS);
		printf("# %s: median evaluations to 95%% of best over %d seeds: %.1f (p25 %d, p75 %d)\n",
		       names[k], NSEEDS, med[k], reach[k][NSEEDS / 4], reach[k][3 * NSEEDS / 4]);
	}
	{
		/* exhaustive: every feasible configuration once, in the template's own order,
		 * whatever the seed */
		drive("exhaustive", &space, 5, 1, MAXEVAL, best, 0, &r1);
		int in_order = 1;
		for (int i = 0; i < r1.n && i < MAXEVAL; i++)
			in_order &= r1.order[i] == i;
		ok(r1.n == fs.n && r1.dup == 0 && in_order,
		   "exhaustive: each of the %d configurations once, in template order (%d, %d dup)",
		   fs.n, r1.n, r1.dup);
		drive("exhaustive", &space, 6, 4, MAXEVAL, best, 0, &r2);
		ok(r2.n == fs.n && r2.dup == 0 && r2.short_early == 0,
		   "exhaustive: batches of 4 cover the space too");
		struct ks_strategy *s = NULL;
		ok(ks_strategy_new("exhaustiv", &space, NULL, &s, &e) == KS_ENOTFOUND &&
			   strstr(e.msg, "did you mean 'exhaustive'"),
		   "a misspelt strategy gets a suggestion (%s)", e.msg);
	}
	ok(med[0] < med[2], "wm beats random (%.1f < %.1f)", med[0], med[2]);
	/* the second landscape, and the first with frozen noise: same ordering */
	for (variant = 1; variant <= 2; variant++) {
		static int rv[NS][NSEEDS];
		double best1 = 0, m1[NS];
		for (int c = 0; c < fs.n; c++) {
			struct ks_proposal p = {0};
			double s;
			memcpy(p.knobs, fs.cfg + (size_t)c * fs.nknobs, (size_t)fs.nknobs * sizeof(int));
			if (landscape(t, &p, &s) && s > best1)
				best1 = s;
		}
		for (int k = 0; k < NS; k++) {
			for (int sd = 0; sd < NSEEDS; sd++) {
				drive(names[k], &space, 1000 + sd, 1, MAXEVAL, best1, 1, &r1);
				rv[k][sd] = r1.reach ? r1.reach : MAXEVAL;
			}
			m1[k] = median(rv[k], NSEEDS);
		}
		printf("# landscape %s medians: wm %.1f, evolve %.1f, random %.1f, anneal %.1f\n",
		       variant == 1 ? "2" : "1 with noise", m1[0], m1[1], m1[2], m1[3]);
		ok(m1[0] < m1[2], "landscape variant %d: wm beats random", variant);
		ok(m1[0] <= m1[1], "landscape variant %d: wm at least as good as evolve", variant);
	}
	variant = 0;
	ok(med[0] < med[1], "wm beats evolve (%.1f < %.1f)", med[0], med[1]);
	ok(med[0] < med[3], "wm beats simulated annealing (%.1f < %.1f)", med[0], med[3]);
	ok(med[3] < med[2], "simulated annealing beats random (%.1f < %.1f)", med[3], med[2]);
	ok(med[0] <= 0.5 * med[2], "wm needs at most half of random's evaluations");

	/* a move that failed is not tried again from every other node: in the first 40
	 * evaluations wm fails at most a few times although the failing knob value looks good */
	{
		static int nf[NSEEDS];
		variant = 3;
		for (int sd = 0; sd < NSEEDS; sd++) {
			drive("wm", &space, 1000 + sd, 2, 40, best, 0, &r1);
			nf[sd] = r1.fails;
		}
		variant = 0;
		printf("# wm, failing SCHED=dynamic: median %.1f failures in 40 evaluations\n",
		       median(nf, NSEEDS));
		ok(median(nf, NSEEDS) <= 3, "wm learns from a failing move (median %.1f failures)",
		   median(nf, NSEEDS));
	}

	/* parallel batches keep wm ahead */
	{
		static int rb[NSEEDS];
		for (int sd = 0; sd < NSEEDS; sd++) {
			drive("wm", &space, 1000 + sd, 4, MAXEVAL, best, 1, &r1);
			rb[sd] = r1.reach ? r1.reach : MAXEVAL;
		}
		printf("# wm batch 4: median %.1f\n", median(rb, NSEEDS));
		ok(median(rb, NSEEDS) < med[2], "wm with 4 in flight beats random");
	}

	/* two families: the one with the better default has the lower ceiling */
	{
		struct ks_template *lt = NULL, *tt[2];
		struct ks_config_set lfs, fss[2];
		struct ks_space two;
		static int rv[NS][NSEEDS];
		double m2[NS];
		rc = ks_template_parse(loop_template, strlen(loop_template), "loop.c", &lt, &e);
		ok(rc == 0, "loop template (%s)", e.msg);
		rc = ks_template_enumerate(lt, 0, NULL, NULL, &lfs, &e);
		ok(rc == 0 && lfs.n == 32, "loop space");
		tt[0] = lt;
		tt[1] = t;
		fss[0] = lfs;
		fss[1] = fs;
		two = (struct ks_space){.ntemplates = 2, .templates = tt, .feasible = fss};
		for (int k = 0; k < NS; k++) {
			drive(names[k], &two, 5, 4, MAXEVAL, best, 0, &r1);
			ok(r1.n == fs.n + lfs.n && r1.dup == 0, "%s: two families exhausted without repeats",
			   names[k]);
			for (int sd = 0; sd < NSEEDS; sd++) {
				drive(names[k], &two, 1000 + sd, 1, MAXEVAL, best, 1, &r1);
				rv[k][sd] = r1.reach ? r1.reach : MAXEVAL;
			}
			m2[k] = median(rv[k], NSEEDS);
		}
		printf("# two families medians: wm %.1f, evolve %.1f, random %.1f, anneal %.1f\n",
		       m2[0], m2[1], m2[2], m2[3]);
		ok(m2[0] < m2[2], "two families: wm beats random");
		ok(m2[0] <= m2[1], "two families: wm at least as good as evolve");
		ks_config_set_release(&lfs);
		ks_template_free(lt);
	}

	/* a slow default is not a low ceiling: the family rated lower, half as fast at its
	 * default, holds the best configurations; wm must not spend the flat family's whole
	 * space first */
	{
		struct ks_template *pt = NULL, *rt = NULL, *tt[2];
		struct ks_config_set fss[2];
		struct ks_space two;
		static int with[NSEEDS], without[NSEEDS];
		double mw, mo, top = 0.6 * 2.5;
		e = (struct ks_error){0};
		rc = ks_template_parse(plateau_template, strlen(plateau_template), "plateau.c", &pt,
				       &e) ||
		     ks_template_parse(ramp_template, strlen(ramp_template), "ramp.c", &rt, &e) ||
		     ks_template_enumerate(pt, 0, NULL, NULL, &fss[0], &e) ||
		     ks_template_enumerate(rt, 0, NULL, NULL, &fss[1], &e);
		ok(rc == 0 && fss[0].n == 256 && fss[1].n == 64, "plateau and ramp spaces (%s)",
		   e.msg);
		tt[0] = pt;
		tt[1] = rt;
		two = (struct ks_space){.ntemplates = 2, .templates = tt, .feasible = fss};
		for (int sd = 0; sd < NSEEDS; sd++) {
			family_share = 0;
			drive("wm", &two, 1000 + sd, 1, MAXEVAL, top, 1, &r1);
			with[sd] = r1.reach ? r1.reach : MAXEVAL;
			family_share = -1;
			drive("wm", &two, 1000 + sd, 1, MAXEVAL, top, 1, &r1);
			without[sd] = r1.reach ? r1.reach : MAXEVAL;
		}
		family_share = 0;
		mw = median(with, NSEEDS);
		mo = median(without, NSEEDS);
		printf("# slow default, high ceiling: wm median %.1f, without the family share "
		       "%.1f (of %d configurations)\n",
		       mw, mo, fss[0].n + fss[1].n);
		ok(mw <= 60 && mw <= 0.5 * mo,
		   "wm opens the trailing family early (median %.1f, %.1f without the share)", mw,
		   mo);
		ks_config_set_release(&fss[0]);
		ks_config_set_release(&fss[1]);
		ks_template_free(pt);
		ks_template_free(rt);
	}

	/* a valley on one knob: the value past the slow one is tried from the same base */
	{
		struct ks_template *vt = NULL;
		struct ks_config_set vfs;
		struct ks_space one;
		static int rv[NSEEDS];
		double mv, top = 0;
		e = (struct ks_error){0};
		rc = ks_template_parse(valley_template, strlen(valley_template), "valley.c", &vt,
				       &e) ||
		     ks_template_enumerate(vt, 0, NULL, NULL, &vfs, &e);
		ok(rc == 0 && vfs.n == 36, "valley space (%s)", e.msg);
		one = (struct ks_space){.ntemplates = 1, .templates = &vt, .feasible = &vfs};
		for (int c = 0; c < vfs.n; c++) {
			struct ks_proposal p = {0};
			double sc;
			memcpy(p.knobs, vfs.cfg + (size_t)c * vfs.nknobs,
			       (size_t)vfs.nknobs * sizeof(int));
			if (landscape(vt, &p, &sc) && sc > top)
				top = sc;
		}
		for (int sd = 0; sd < NSEEDS; sd++) {
			drive("wm", &one, 1000 + sd, 1, MAXEVAL, top, 1, &r1);
			rv[sd] = r1.reach ? r1.reach : MAXEVAL;
		}
		mv = median(rv, NSEEDS);
		printf("# valley on THREADS: wm median %.1f of %d configurations\n", mv, vfs.n);
		/* 22 without cross_valley, 11 with it */
		ok(mv <= 14, "wm crosses a one-value valley early (median %.1f)", mv);
		ks_config_set_release(&vfs);
		ks_template_free(vt);
	}

	/* ablation: the same search without learning across the tree */
	{
		static int rb[NSEEDS];
		struct ks_world_params wp;
		ks_world_params_default(&wp);
		wp.explore = 0.02;
		wp.learn_scale = 0;
		wm_params = &wp;
		for (int sd = 0; sd < NSEEDS; sd++) {
			drive("wm", &space, 1000 + sd, 1, MAXEVAL, best, 1, &r1);
			rb[sd] = r1.reach ? r1.reach : MAXEVAL;
		}
		wm_params = NULL;
		printf("# wm without move learning: median %.1f\n", median(rb, NSEEDS));
	}

	/* two families: both defaults are measured first, then knob moves */
	{
		struct ks_template *tt[2] = {t, t};
		struct ks_config_set fss[2] = {fs, fs};
		struct ks_space two = {.ntemplates = 2, .templates = tt, .feasible = fss};
		struct ks_strategy_config cfg = {.seed = 1};
		struct ks_strategy *s = NULL;
		struct ks_proposal p[2];
		int n = 0;
		rc = ks_strategy_new("wm", &two, &cfg, &s, &e);
		ok(rc == 0, "wm over two templates");
		ks_strategy_propose(s, p, 2, &n, &e);
		ok(n == 2 && p[0].template_index != p[1].template_index &&
			   !strncmp(p[0].title, "family: ", 8) && !strncmp(p[1].title, "family: ", 8),
		   "first proposals are the family defaults (%s, %s)", p[0].title, p[1].title);
		{
			int def[KS_TEMPLATE_MAX_KNOBS];
			ks_template_config_default(t, def);
			ok(!memcmp(p[0].knobs, def, sizeof(int) * (size_t)t->nknobs), "family = default");
		}
		for (int i = 0; i < n; i++) {
			struct ks_outcome o = {.candidate = i};
			o.passed = landscape(t, &p[i], &o.score);
			ks_strategy_observe(s, &p[i], &o, &e);
		}
		ks_strategy_propose(s, p, 1, &n, &e);
		ok(n == 1 && p[0].move[0] && p[0].parent_candidate >= 0,
		   "then a knob move building on a measured candidate (%s, parent %ld)", p[0].title,
		   p[0].parent_candidate);
		/* a stale or forged outcome is refused */
		{
			struct ks_outcome o = {.candidate = 9, .passed = 1, .score = 1};
			struct ks_proposal q = p[0];
			q.config = (q.config + 1) % fs.n;
			ok(ks_strategy_observe(s, &q, &o, &e) != 0, "mismatched outcome refused (%s)",
			   e.msg);
			o.score = -1;
			ok(ks_strategy_observe(s, &p[0], &o, &e) == KS_EINVAL, "bad score refused");
		}
		{
			const struct ks_world *w = ks_strategy_world(s);
			ok(w && ks_world_count(w) > 3, "world model grows (%d nodes)", w ? ks_world_count(w) : 0);
		}
		ks_strategy_free(s);
	}
	ks_config_set_release(&fs);
	ks_template_free(t);
	return tap_done();
}
