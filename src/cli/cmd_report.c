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
	static const char *const formats[] = {"flashinfer-trace", NULL};
	const char *to = NULL;
	int md = 0, html = 0, json = 0, svg = 0, top = 10, examples = 3, tree = KS_REPORT_TREE_NODES, verbose = 0;
	const struct ks_opt opts[] = {
		KS_OPT_FLAG("md", &md, "print the Markdown report to stdout"),
		KS_OPT_FLAG("html", &html, "print the HTML report to stdout"),
		KS_OPT_FLAG("json", &json, "print one JSON object (every candidate) to stdout"),
		KS_OPT_FLAG("svg", &svg, "print the convergence chart to stdout"),
		KS_OPT_ENUM("to", &to, formats, "FORMAT", "print the run in another format: flashinfer-trace"),
		KS_OPT_INT("top", &top, 1, 1000, "N", "leaderboard rows (default 10)"),
		KS_OPT_INT("tree", &tree, 1, 100000, "N", "world-model nodes drawn before folding (default 40)"),
		KS_OPT_INT("examples", &examples, 0, 50, "N", "log examples per failure status (default 3)"),
		KS_OPT_FLAG("verbose", &verbose, "log more"),
		KS_OPT_END,
	};
	const char *pos[1];
	int npos = 0;
	int prc = ks_opts_parse(argc, argv, opts, usage, about, pos, 1, &npos, NULL);
	if (prc)
		return prc > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	if (npos != 1) {
		fprintf(stderr, "ksearch report: needs RUN_DIR\nusage: %s\n", usage);
		return KS_EXIT_USAGE;
	}
	if (md + html + json + svg + (to != NULL) > 1) {
		fprintf(stderr, "ksearch report: choose one of --md, --html, --json, --svg and --to\n");
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
