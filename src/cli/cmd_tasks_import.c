/* ksearch tasks import FORMAT FILE [WORKLOADS] [--out DIR] */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "ksearch/import.h"

static const char usage[] =
	"ksearch tasks import flashinfer-bench DEFINITION.json [WORKLOADS.jsonl] [--out DIR]\n"
	"       ksearch tasks import kernelbench PROBLEM.py [--out DIR]";
static const char about[] =
	"Write a task folder DIR/<name> (DIR defaults to the current folder) from a problem of\n"
	"another benchmark, ready for 'ksearch eval' and 'ksearch run':\n"
	"  flashinfer-bench  a Definition (axes become params, scalar inputs too, symbolic\n"
	"                    shapes and dtypes kept, its run() the reference) and its Workloads\n"
	"  kernelbench       a level-1 problem (Model.forward the reference, get_inputs() the\n"
	"                    workload, its module-level sizes the params)\n"
	"The reference is reference.py, run with torch when installed.  For operators ksearch\n"
	"recognises (relu, sigmoid, tanh, softmax over the last axis, rmsnorm; f32) it also\n"
	"writes a naive baseline.c, a knob template and a numpy form of the reference for\n"
	"machines without torch; for others it says what to add.  See docs/tasks.md.";

int cmd_tasks_import(int argc, char **argv)
{
	const char *out = ".";
	const struct ks_opt opts[] = {
		{"out", KS_OPT_STR, &out, "DIR", "where the task folder goes (default: .)"},
		{NULL, 0, NULL, NULL, NULL},
	};
	const char *pos[4];
	int npos = 0;
	int rc = ks_opts_parse(argc, argv, opts, usage, about, pos, 4, &npos);
	if (rc)
		return rc > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	if (npos < 2) {
		fprintf(stderr, "ksearch: 'tasks import' needs a format and a problem file\nusage: %s\n",
			usage);
		return KS_EXIT_USAGE;
	}
	struct ks_error e = {0};
	const struct ks_importer_i *imp;
	if (ks_importer_get(pos[0], &imp, &e)) {
		fprintf(stderr, "ksearch: %s\n", e.msg);
		return KS_EXIT_USAGE;
	}
	if (npos > (imp->takes_workloads ? 3 : 2)) {
		fprintf(stderr, "ksearch: 'tasks import %s' takes %s\n", imp->name, imp->usage);
		return KS_EXIT_USAGE;
	}
	struct ks_import_req req = {.source = pos[1], .workloads = npos > 2 ? pos[2] : NULL,
				    .out_dir = out};
	struct ks_import_result res;
	if (imp->import(&req, &res, &e)) {
		fprintf(stderr, "ksearch: %s\n", e.msg);
		return KS_EXIT_USAGE;
	}
	printf("wrote task '%s' to %s\n", res.name, res.dir);
	if (res.op[0])
		printf("recognised %s: generated baseline.c%s\n", res.op,
		       res.templates ? " and a knob template (templates/cpu/)" : "");
	/* the note is lines: "warning: ..." ones go to stderr */
	for (char *l = res.note, *nl; *l; l = nl ? nl + 1 : l + strlen(l)) {
		nl = strchr(l, '\n');
		int n = nl ? (int)(nl - l) : (int)strlen(l);
		if (!strncmp(l, "warning: ", 9))
			fprintf(stderr, "ksearch: %.*s\n", n, l);
		else
			printf("note: %.*s\n", n, l);
	}
	printf("next: ksearch tasks show %s\n", res.dir);
	if (res.baseline)
		printf("      ksearch eval %s %s/baseline.c\n", res.dir, res.dir);
	if (res.templates)
		printf("      ksearch run %s --budget 8\n", res.dir);
	return KS_EXIT_OK;
}
