/* Search-efficiency benchmark (issue 3, item 7).
 *
 *   ks-bench-search TASK CACHE.jsonl [--seeds N] [--record] [--min-time S] [--target F]
 *
 * 1. --record: evaluate every feasible configuration of the task's cpu templates once and
 *    append each outcome to CACHE.jsonl (one JSON object per line; an existing cache is
 *    extended, never re-measured), the way Kernel Tuner caches a space.
 * 2. Replay wm, evolve and random against the cache for seeds 1..N: every proposal is
 *    answered from the cache, and we count the evaluations each strategy needs to reach 95%
 *    (--target: another fraction) of the best configuration's score.  Prints a markdown
 *    table.  A lower target asks less of the one best measurement, which is a single noisy
 *    sample: where two families' bests are within the noise, 95% may name only one.
 *
 * Replaying real recorded timings isolates the strategies from timing noise: every
 * strategy sees exactly the same numbers for the same configuration. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/eval.h"
#include "ksearch/knowledge.h"
#include "ksearch/log.h"
#include "ksearch/strategy.h"
#include "ksearch/task.h"
#include "search/space.h"

struct entry {
	char key[1024]; /* family + defines */
	int passed;
	double score;
};

static struct entry *cache;
static int ncache, acache;

static const struct entry *find(const char *key)
{
	for (int i = 0; i < ncache; i++)
		if (!strcmp(cache[i].key, key))
			return &cache[i];
	return NULL;
}

static void add(const char *key, int passed, double score)
{
	if (ncache == acache) {
		acache = acache ? 2 * acache : 256;
		cache = realloc(cache, (size_t)acache * sizeof(*cache));
	}
	snprintf(cache[ncache].key, sizeof(cache[ncache].key), "%s", key);
	cache[ncache].passed = passed;
	cache[ncache].score = score;
	ncache++;
}

static void load_cache(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		json_t *o = json_loads(line, 0, NULL);
		if (!o)
			continue;
		add(json_string_value(json_object_get(o, "key")),
		    json_is_true(json_object_get(o, "passed")),
		    json_number_value(json_object_get(o, "score")));
		json_decref(o);
	}
	fclose(f);
}

static void key_of(const struct ks_search_space *sp, int t, const int *cfg, char *out, size_t n)
{
	struct ks_buf ident = KS_BUF_INIT;
	char defs[KS_TEMPLATE_MAX_KNOBS + 1][128];
	const char *list[KS_TEMPLATE_MAX_KNOBS + 1];
	ks_search_space_defines(sp->tpl[t], cfg, &ident, defs, list, KS_TEMPLATE_MAX_KNOBS + 1);
	snprintf(out, n, "%s %s", sp->tpl[t]->family, ks_buf_str(&ident));
	ks_buf_release(&ident);
}

static int record(const struct ks_task *t, struct ks_search_space *sp, const char *path,
		  double min_time)
{
	struct ks_eval_opts o;
	ks_eval_opts_init(&o);
	o.min_time_s = min_time;
	o.blocks = 1;
	o.reuse_baseline = 1;
	struct ks_evaluator *ev;
	struct ks_error e = {0};
	if (ks_evaluator_new(t, &o, &ev, &e)) {
		fprintf(stderr, "evaluator: %s\n", e.msg);
		return 1;
	}
	FILE *f = fopen(path, "a");
	if (!f) {
		perror(path);
		return 1;
	}
	long done = 0;
	for (int ti = 0; ti < sp->n; ti++) {
		for (int c = 0; c < sp->feasible[ti].n; c++) {
			const int *cfg = &sp->feasible[ti].cfg[(size_t)c * (size_t)sp->feasible[ti].nknobs];
			char key[1024];
			key_of(sp, ti, cfg, key, sizeof(key));
			done++;
			if (find(key))
				continue;
			struct ks_buf ident = KS_BUF_INIT;
			char defs[KS_TEMPLATE_MAX_KNOBS + 1][128];
			const char *list[KS_TEMPLATE_MAX_KNOBS + 1];
			ks_search_space_defines(sp->tpl[ti], cfg, &ident, defs, list,
						KS_TEMPLATE_MAX_KNOBS + 1);
			ks_buf_release(&ident);
			struct ks_eval_result r;
			if (ks_evaluator_run(ev, sp->tpl[ti]->source, sp->tpl[ti]->path, list, &r, &e)) {
				fprintf(stderr, "evaluate %s: %s\n", key, e.msg);
				continue;
			}
			int passed = r.status == KS_STATUS_PASSED;
			add(key, passed, passed ? r.speedup : 0);
			json_t *o2 = json_pack("{s:s, s:b, s:f, s:s}", "key", key, "passed", passed,
					       "score", passed ? r.speedup : 0.0, "status",
					       ks_status_name(r.status));
			char *s = json_dumps(o2, JSON_COMPACT);
			fprintf(f, "%s\n", s);
			fflush(f);
			free(s);
			json_decref(o2);
			fprintf(stderr, "[%ld/%ld] %s: %s %.3f\n", done, sp->total_feasible, key,
				ks_status_name(r.status), r.speedup);
			ks_eval_result_release(&r);
		}
	}
	fclose(f);
	ks_evaluator_free(ev);
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* evaluations until the target score, or budget+1 when never reached */
static int replay(const char *strategy, double share, const struct ks_search_space *sp,
		  uint64_t seed, double target, int budget)
{
	struct ks_strategy *s;
	struct ks_strategy_config cfg = {.seed = seed, .root_title = "naive baseline",
					 .family_share = share};
	struct ks_error e = {0};
	if (ks_strategy_new(strategy, &sp->space, &cfg, &s, &e)) {
		fprintf(stderr, "%s: %s\n", strategy, e.msg);
		exit(1);
	}
	double best = 0;
	int n = 0, reached = budget + 1;
	while (n < budget) {
		struct ks_proposal p;
		int got = 0;
		if (ks_strategy_propose(s, &p, 1, &got, &e) || got == 0)
			break;
		char key[1024];
		key_of(sp, p.template_index, p.knobs, key, sizeof(key));
		const struct entry *en = find(key);
		struct ks_outcome oc = {.candidate = n + 1, .passed = en && en->passed,
					.score = en && en->passed ? en->score : 0,
					.status = en && en->passed ? 0 : 2};
		ks_strategy_observe(s, &p, &oc, &e);
		n++;
		if (oc.passed && oc.score > best)
			best = oc.score;
		if (best >= target) {
			reached = n;
			break;
		}
	}
	ks_strategy_free(s);
	return reached;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: ks-bench-search TASK CACHE.jsonl [--seeds N] [--record] "
				"[--min-time S] [--target F]\n");
		return 2;
	}
	int seeds = 50, rec = 0;
	double min_time = 0.05, frac = 0.95;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
			seeds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--record"))
			rec = 1;
		else if (!strcmp(argv[i], "--min-time") && i + 1 < argc)
			min_time = atof(argv[++i]);
		else if (!strcmp(argv[i], "--target") && i + 1 < argc)
			frac = atof(argv[++i]);
	}
	if (!(frac > 0 && frac <= 1)) {
		fprintf(stderr, "--target: a fraction of the best score in (0, 1], e.g. 0.9\n");
		return 2;
	}
	struct ks_error e = {0};
	struct ks_task *t;
	if (ks_task_load(argv[1], &t, &e) || ks_assertions_apply(t, &e)) {
		fprintf(stderr, "%s\n", e.msg);
		return 2;
	}
	struct ks_spec spec;
	ks_spec_init(&spec);
	if (ks_spec_detect_host(&spec, &e)) {
		fprintf(stderr, "%s\n", e.msg);
		return 2;
	}
	struct ks_search_space sp;
	if (ks_search_space_load(&sp, t, "cpu", "c", &spec, &e)) {
		fprintf(stderr, "%s\n", e.msg);
		return 2;
	}
	load_cache(argv[2]);
	if (rec && record(t, &sp, argv[2], min_time))
		return 1;
	double best = 0;
	int covered = 0;
	for (int ti = 0; ti < sp.n; ti++)
		for (int c = 0; c < sp.feasible[ti].n; c++) {
			char key[1024];
			key_of(&sp, ti, &sp.feasible[ti].cfg[(size_t)c * (size_t)sp.feasible[ti].nknobs],
			       key, sizeof(key));
			const struct entry *en = find(key);
			if (en) {
				covered++;
				if (en->passed && en->score > best)
					best = en->score;
			}
		}
	if (covered < sp.total_feasible) {
		fprintf(stderr, "the cache covers %d of %ld configurations: run with --record\n",
			covered, sp.total_feasible);
		return 2;
	}
	double target = frac * best;
	const int pct = (int)(frac * 100 + 0.5);
	int above = 0;
	for (int i = 0; i < ncache; i++)
		above += cache[i].passed && cache[i].score >= target;
	printf("Task `%s`, %ld feasible configurations in %d templates; best recorded speedup "
	       "%.3fx; %d configurations reach %d%% of it (%.3fx).\n\n",
	       t->name, sp.total_feasible, sp.n, best, above, pct, target);
	printf("| strategy | median evals to %d%% | p25 | p75 | mean | reached within %ld |\n",
	       pct, sp.total_feasible);
	printf("|---|---:|---:|---:|---:|---:|\n");
	/* wm also without its family share (negative: none), the ablation of that rule */
	static const struct {
		const char *label, *strategy;
		double share;
	} rows[] = {{"wm", "wm", 0},
		    {"wm, no family share", "wm", -1},
		    {"evolve", "evolve", 0},
		    {"anneal (simulated annealing)", "anneal", 0},
		    {"random", "random", 0}};
	for (size_t si = 0; si < sizeof(rows) / sizeof(rows[0]); si++) {
		int *v = calloc((size_t)seeds, sizeof(int));
		double sum = 0;
		int ok = 0;
		for (int s = 0; s < seeds; s++) {
			v[s] = replay(rows[si].strategy, rows[si].share, &sp, (uint64_t)s + 1, target,
				      (int)sp.total_feasible);
			sum += v[s];
			ok += v[s] <= sp.total_feasible;
		}
		qsort(v, (size_t)seeds, sizeof(int), cmp_int);
		printf("| %s | %d | %d | %d | %.1f | %d/%d |\n", rows[si].label, v[seeds / 2],
		       v[seeds / 4], v[(3 * seeds) / 4], sum / seeds, ok, seeds);
		free(v);
	}
	ks_search_space_release(&sp);
	ks_spec_release(&spec);
	ks_task_free(t);
	return 0;
}
