/* The builtin policy's candidate labels are unique: the leaderboard showed "THREADS 0->1"
 * for two configurations (one move made from two bases), and "random: tiled" for every draw
 * of a family.  Every strategy walks 60 configurations of the landscape template; no two
 * candidates may share a label. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/policy.h"
#include "ksearch/strategy.h"
#include "tap.h"

#define FIXTURE "tests/fixtures/templates/landscape.c"
#define STEPS 60

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

/* a speedup that rises with the knob values' indices, with a ripple so moves go both ways */
static double score_of(const char *knobs)
{
	unsigned h = 2166136261u;
	for (const char *p = knobs; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return 1.0 + (double)(h % 1000) / 250.0;
}

/* labels of the first STEPS candidates of strategy over space; returns how many */
static int walk(const char *strategy, const struct ks_space *space, char **labels)
{
	struct ks_policy_builtin_cfg cfg = {.strategy = strategy, .seed = 5,
					    .root_title = "naive baseline", .policy = "builtin",
					    .parent = -1, .node = -1, .budget = STEPS};
	struct ks_policy p;
	struct ks_error e = {0};
	struct ks_policy_stop why;
	struct ks_policy_cand c[4];
	int n = 0, got;
	if (ks_policy_builtin_new(space, &cfg, &p, &e)) {
		printf("# %s: %s\n", strategy, e.msg);
		return 0;
	}
	while (n < STEPS && !ks_policy_propose(&p, c, 2, &got, &why, &e) && got) {
		for (int i = 0; i < got; i++) {
			struct ks_policy_outcome o = {.candidate = n + 1, .status = 0, .passed = 1,
						      .score = score_of(c[i].knobs)};
			if (n < STEPS)
				labels[n++] = strdup(c[i].title);
			ks_policy_observe(&p, &c[i], &o, &e);
		}
	}
	ks_policy_close(&p);
	return n;
}

int main(void)
{
	struct ks_template *t = NULL;
	struct ks_error e = {0};
	struct ks_config_set fs;
	if (ks_template_load(FIXTURE, &t, &e) || ks_template_enumerate(t, 1, lookup, NULL, &fs, &e)) {
		ok(0, "load the landscape template: %s", e.msg);
		return tap_done();
	}
	struct ks_space space = {.ntemplates = 1, .templates = &t, .feasible = &fs};
	static const char *const strategies[] = {"wm", "anneal", "random", "evolve"};
	for (size_t k = 0; k < sizeof(strategies) / sizeof(strategies[0]); k++) {
		char *labels[STEPS] = {0};
		int n = walk(strategies[k], &space, labels), dup = -1;
		for (int i = 0; i < n && dup < 0; i++)
			for (int j = 0; j < i && dup < 0; j++)
				if (!strcmp(labels[i], labels[j]))
					dup = i;
		ok(n == STEPS, "%s: %d candidates", strategies[k], n);
		ok(dup < 0, "%s: no two candidates share a label%s%s", strategies[k],
		   dup >= 0 ? " (twice: " : "", dup >= 0 ? labels[dup] : "");
		if (dup >= 0)
			printf("#   )\n");
		for (int i = 0; i < n; i++)
			free(labels[i]);
	}
	ks_config_set_release(&fs);
	ks_template_free(t);
	return tap_done();
}
