/* ksearch compare RUN_A RUN_B: per workload, is B's best kernel faster than A's? */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "ksearch/report.h"

static const char usage[] = "ksearch compare RUN_A RUN_B [--json]";
static const char about[] =
	"Compare the best kernel of run B with the best kernel of run A (two runs of one task),\n"
	"per timed workload, by the median time each run measured (the final re-measurement when\n"
	"there is one).  Each line says FAST (B is faster), SLOW (B is slower) or SAME, with\n"
	"both medians, their spreads, the phase each median comes from (final: re-measured;\n"
	"search: the search phase's timing), B/A and each run's baseline median.\n\n"
	"Warnings: a run whose report flags its measurements noisy (the final re-measurement's\n"
	"verdict), and baselines that differ by more than the same margin as the kernels (the\n"
	"machine was not as fast in both runs, so B/A mixes the kernels with the machine).\n\n"
	"What counts as a difference: each median is uncertain by half its interquartile range\n"
	"(the +-% column, as in 'ksearch eval'); B is FAST when its median plus half its spread\n"
	"is still more than 1% below A's median minus half A's spread, SLOW the other way round,\n"
	"SAME otherwise.  The runs were timed in different sessions: load on the machine then\n"
	"shows in the spreads only if it changed during a run, so compare runs made under the\n"
	"same conditions, or re-measure both kernels side by side with 'ksearch eval'.\n\n"
	"Exit status: 0 compared, 2 usage error, unreadable runs, runs of different tasks or a\n"
	"run without a passing candidate.";

static const char *const verdicts[] = {"SAME", "FAST", "SLOW", "-"};

#define NUM(v) (isfinite(v) ? json_real(v) : json_null())

/* one run's side of the JSON object */
static json_t *json_run(const char *dir, long cand, int noisy, const char *noise)
{
	return json_pack("{s:s, s:I, s:b, s:o}", "dir", dir, "candidate", (json_int_t)cand, "noisy",
			 noisy, "noise", noisy ? json_string(noise) : json_null());
}

static json_t *str_or_null(const char *s)
{
	return s[0] ? json_string(s) : json_null();
}

static int print_json(const struct ks_run_compare *c, const char *dir_a, const char *dir_b)
{
	json_t *rows = json_array();
	for (int i = 0; i < c->nrows; i++) {
		const struct ks_run_compare_row *r = &c->rows[i];
		json_array_append_new(
			rows, json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:s}",
					"workload", r->label, "a_us", NUM(r->a_us), "a_spread_pct",
					NUM(r->a_spread), "a_phase", str_or_null(r->a_phase),
					"a_baseline_us", NUM(r->a_base_us), "b_us", NUM(r->b_us),
					"b_spread_pct", NUM(r->b_spread), "b_phase",
					str_or_null(r->b_phase), "b_baseline_us", NUM(r->b_base_us),
					"ratio", NUM(r->ratio), "baselines_differ", r->base_differs,
					"verdict", verdicts[r->verdict]));
	}
	json_t *o = json_pack("{s:s, s:I, s:I, s:o, s:o, s:b, s:b, s:o, s:o}", "task", c->task,
			      "candidate_a", (json_int_t)c->cand_a, "candidate_b",
			      (json_int_t)c->cand_b, "run_a",
			      json_run(dir_a, c->cand_a, c->a_noisy, c->a_noise), "run_b",
			      json_run(dir_b, c->cand_b, c->b_noisy, c->b_noise), "noisy",
			      c->a_noisy || c->b_noisy, "baselines_differ", c->base_differs,
			      "geomean_ratio", NUM(c->geomean), "workloads", rows);
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	printf("%s\n", s ? s : "{}");
	free(s);
	json_decref(o);
	return KS_EXIT_OK;
}

int cmd_compare(int argc, char **argv)
{
	int json = 0;
	const struct ks_opt opts[] = {
		KS_OPT_FLAG("json", &json, "print one JSON object"),
		KS_OPT_END,
	};
	const char *pos[2];
	int npos = 0;
	int rc = ks_opts_parse(argc, argv, opts, usage, about, pos, 2, &npos, NULL);
	if (rc)
		return rc > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	if (npos != 2) {
		fprintf(stderr, "ksearch compare: needs two run folders\nusage: %s\n", usage);
		return KS_EXIT_USAGE;
	}
	struct ks_run_compare c;
	struct ks_error e = {0};
	if (ks_report_compare(pos[0], pos[1], &c, &e)) {
		fprintf(stderr, "ksearch compare: %s\n", e.msg);
		return KS_EXIT_USAGE;
	}
	if (json) {
		rc = print_json(&c, pos[0], pos[1]);
		ks_run_compare_release(&c);
		return rc;
	}
	printf("task %s: A = %s (best #%ld), B = %s (best #%ld)\n\n", c.task, pos[0], c.cand_a,
	       pos[1], c.cand_b);
	if (c.a_noisy)
		printf("warning: run A's report flags its measurements noisy (%s): the verdicts "
		       "below may be noise\n", c.a_noise[0] ? c.a_noise : "see its events");
	if (c.b_noisy)
		printf("warning: run B's report flags its measurements noisy (%s): the verdicts "
		       "below may be noise\n", c.b_noise[0] ? c.b_noise : "see its events");
	for (int i = 0, said = 0; i < c.nrows && !said; i++) {
		const struct ks_run_compare_row *r = &c.rows[i];
		if (r->base_differs)
			said = printf("warning: the baselines differ (%s: A %.0f us, B %.0f us): the "
				      "machine was not as fast in both runs, so B/A mixes the kernels' "
				      "difference with the machine's; time both with 'ksearch eval'\n",
				      r->label, r->a_base_us, r->b_base_us);
	}
	if (c.a_noisy || c.b_noisy || c.base_differs)
		printf("\n");
	printf("%-32s %10s %6s %-6s %10s %6s %-6s %8s  %-4s %10s %10s\n", "workload", "A_us", "+-%",
	       "A_from", "B_us", "+-%", "B_from", "B/A", "B is", "A_base_us", "B_base_us");
	for (int i = 0; i < c.nrows; i++) {
		const struct ks_run_compare_row *r = &c.rows[i];
		printf("%-32.32s %10.2f %6.1f %-6s %10.2f %6.1f %-6s %7.3fx  %-4s %10.0f %10.0f\n",
		       r->label, r->a_us, r->a_spread, r->a_phase[0] ? r->a_phase : "-", r->b_us,
		       r->b_spread, r->b_phase[0] ? r->b_phase : "-", r->ratio, verdicts[r->verdict],
		       r->a_base_us, r->b_base_us);
	}
	printf("\ngeometric mean of B/A: %.3fx (below 1: B is faster); FAST/SLOW only beyond half of "
	       "each +-%% plus %.0f%%\n", c.geomean, KS_RUN_COMPARE_MIN_PCT);
	printf("from: final = the final re-measurement, search = the search phase's timing "
	       "(not re-measured)\n");
	ks_run_compare_release(&c);
	return KS_EXIT_OK;
}
