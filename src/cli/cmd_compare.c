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
	"both medians, their spreads and B/A.\n\n"
	"What counts as a difference: each median is uncertain by half its interquartile range\n"
	"(the +-% column, as in 'ksearch eval'); B is FAST when its median plus half its spread\n"
	"is still more than 1% below A's median minus half A's spread, SLOW the other way round,\n"
	"SAME otherwise.  The runs were timed in different sessions: load on the machine then\n"
	"shows in the spreads only if it changed during a run, so compare runs made under the\n"
	"same conditions, or re-measure both kernels side by side with 'ksearch eval'.\n\n"
	"Exit status: 0 compared, 2 usage error, unreadable runs, runs of different tasks or a\n"
	"run without a passing candidate.";

static const char *const verdicts[] = {"SAME", "FAST", "SLOW", "-"};

static int print_json(const struct ks_run_compare *c)
{
	json_t *rows = json_array();
	for (int i = 0; i < c->nrows; i++) {
		const struct ks_run_compare_row *r = &c->rows[i];
#define NUM(v) (isfinite(v) ? json_real(v) : json_null())
		json_array_append_new(rows, json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:s}", "workload",
						      r->label, "a_us", NUM(r->a_us), "a_spread_pct",
						      NUM(r->a_spread), "b_us", NUM(r->b_us),
						      "b_spread_pct", NUM(r->b_spread), "ratio",
						      NUM(r->ratio), "verdict", verdicts[r->verdict]));
	}
	json_t *o = json_pack("{s:s, s:I, s:I, s:o, s:o}", "task", c->task, "candidate_a",
			      (json_int_t)c->cand_a, "candidate_b", (json_int_t)c->cand_b,
			      "geomean_ratio", NUM(c->geomean), "workloads", rows);
#undef NUM
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
		{"json", KS_OPT_FLAG, &json, NULL, "print one JSON object"},
		{NULL, 0, NULL, NULL, NULL},
	};
	const char *pos[2];
	int npos = 0;
	int rc = ks_opts_parse(argc, argv, opts, usage, about, pos, 2, &npos);
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
		rc = print_json(&c);
		ks_run_compare_release(&c);
		return rc;
	}
	printf("task %s: A = %s (best #%ld), B = %s (best #%ld)\n\n", c.task, pos[0], c.cand_a,
	       pos[1], c.cand_b);
	printf("%-32s %12s %7s %12s %7s %8s  %s\n", "workload", "A_us", "+-%", "B_us", "+-%", "B/A",
	       "B is");
	for (int i = 0; i < c.nrows; i++) {
		const struct ks_run_compare_row *r = &c.rows[i];
		printf("%-32.32s %12.2f %7.1f %12.2f %7.1f %7.3fx  %s\n", r->label, r->a_us, r->a_spread,
		       r->b_us, r->b_spread, r->ratio, verdicts[r->verdict]);
	}
	printf("\ngeometric mean of B/A: %.3fx (below 1: B is faster); FAST/SLOW only beyond half of "
	       "each +-%% plus %.0f%%\n", c.geomean, KS_RUN_COMPARE_MIN_PCT);
	ks_run_compare_release(&c);
	return KS_EXIT_OK;
}
