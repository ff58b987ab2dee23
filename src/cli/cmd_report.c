/* ksearch report DIR: regenerate the reports of a run from its database. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "ksearch/report.h"

static const char usage[] = "ksearch report RUN_DIR [--md|--html|--json|--svg|--to flashinfer-trace] [--top N]";
static const char about[] =
	"Read RUN_DIR/run.db and write RUN_DIR/report.md, RUN_DIR/report.html and the two\n"
	"charts report.md links to, RUN_DIR/convergence.svg and RUN_DIR/roofline.svg, then\n"
	"print their paths.\n"
	"With --md, --html, --json or --svg print that one format to stdout instead and write\n"
	"nothing.  --to flashinfer-trace prints flashinfer-bench Trace JSONL instead: one line\n"
	"per evaluated candidate and timed workload (definition: the task's name; solution:\n"
	"<task>_ksearch_<id>; integer params are the axes).  The database is only read, so\n"
	"this also works while a run is going on.\n"
	"docs/reports.md explains every section.\n\n"
	"Exit status: 0 done, 2 usage error, no run database or an unreadable one.";

int cmd_report(int argc, char **argv)
{
	const char *to = NULL;
	int md = 0, html = 0, json = 0, svg = 0, top = 10, examples = 3, tree = KS_REPORT_TREE_NODES, verbose = 0;
	const struct ks_opt opts[] = {
		{"md", KS_OPT_FLAG, &md, NULL, "print the Markdown report to stdout"},
		{"html", KS_OPT_FLAG, &html, NULL, "print the HTML report to stdout"},
		{"json", KS_OPT_FLAG, &json, NULL, "print one JSON object (every candidate) to stdout"},
		{"svg", KS_OPT_FLAG, &svg, NULL, "print the convergence chart to stdout"},
		{"to", KS_OPT_STR, &to, "FORMAT", "print the run in another format: flashinfer-trace"},
		{"top", KS_OPT_INT, &top, "N", "leaderboard rows (default 10)"},
		{"tree", KS_OPT_INT, &tree, "N", "world-model nodes drawn before folding (default 40)"},
		{"examples", KS_OPT_INT, &examples, "N", "log examples per failure status (default 3)"},
		{"verbose", KS_OPT_FLAG, &verbose, NULL, "log more"},
		{NULL, 0, NULL, NULL, NULL},
	};
	const char *pos[1];
	int npos = 0;
	int prc = ks_opts_parse(argc, argv, opts, usage, about, pos, 1, &npos);
	if (prc)
		return prc > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	if (ks_opt_range("examples", examples, 0, 100000))
		return KS_EXIT_USAGE;
	if (npos != 1) {
		fprintf(stderr, "ksearch report: needs RUN_DIR\nusage: %s\n", usage);
		return KS_EXIT_USAGE;
	}
	if (to && strcmp(to, "flashinfer-trace")) {
		fprintf(stderr, "ksearch report: unknown --to format '%s' (known: flashinfer-trace)\n", to);
		return KS_EXIT_USAGE;
	}
	if (md + html + json + svg + (to != NULL) > 1) {
		fprintf(stderr, "ksearch report: choose one of --md, --html, --json, --svg and --to\n");
		return KS_EXIT_USAGE;
	}
	if (top < 1 || top > 1000) {
		fprintf(stderr, "ksearch report: --top must be between 1 and 1000, got %d\n", top);
		return KS_EXIT_USAGE;
	}
	if (examples < 0 || examples > 50) {
		fprintf(stderr, "ksearch report: --examples must be between 0 and 50, got %d\n",
			examples);
		return KS_EXIT_USAGE;
	}
	if (tree < 1 || tree > 100000) {
		fprintf(stderr, "ksearch report: --tree must be between 1 and 100000, got %d\n", tree);
		return KS_EXIT_USAGE;
	}
	ks_cli_log_init(verbose);
	struct ks_report_opts o;
	ks_report_opts_init(&o);
	o.top = top;
	o.fail_examples = examples;
	o.tree_nodes = tree;
	struct ks_error e = {0};
	const char *dir = pos[0];
	if (!md && !html && !json && !svg && !to) {
		if (ks_report_write_files_opts(dir, &o, &e)) {
			fprintf(stderr, "ksearch report: %s\n", e.msg);
			return KS_EXIT_USAGE;
		}
		const char *sep = dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/";
		printf("%s%s%s\n%s%s%s\n%s%s%s\n%s%s%s\n", dir, sep, KS_REPORT_MD_FILE, dir, sep,
		       KS_REPORT_HTML_FILE, dir, sep, KS_REPORT_SVG_FILE, dir, sep,
		       KS_REPORT_ROOFLINE_FILE);
		return KS_EXIT_OK;
	}
	enum ks_report_format fmt = to     ? KS_REPORT_FLASHINFER_TRACE
				    : md   ? KS_REPORT_MD
				    : html ? KS_REPORT_HTML
				    : json ? KS_REPORT_JSON
					   : KS_REPORT_SVG;
	struct ks_buf out;
	ks_buf_init(&out, (size_t)256 << 20);
	int rc = ks_report_write_opts(dir, fmt, &o, &out, &e);
	if (rc) {
		fprintf(stderr, "ksearch report: %s\n", e.msg);
		ks_buf_release(&out);
		return KS_EXIT_USAGE;
	}
	rc = ks_cli_print_buf("report", &out);
	ks_buf_release(&out);
	return rc;
}
