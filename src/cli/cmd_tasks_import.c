/* ksearch tasks import FORMAT FILE [WORKLOADS] [--out DIR] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ksearch/import.h"

static const char usage[] =
	"ksearch tasks import flashinfer-bench DEFINITION.json [WORKLOADS.jsonl] [--out DIR]\n"
	"                                      [--max-workloads N]\n"
	"       ksearch tasks import kernelbench PROBLEM.py [--out DIR] [--scale F] [--set NAME=N,...]";
static const char about[] =
	"Write a task folder DIR/<name> (DIR defaults to the current folder) from a problem of\n"
	"another benchmark, ready for 'ksearch eval' and 'ksearch run':\n"
	"  flashinfer-bench  a Definition (axes become params, scalar inputs too, symbolic\n"
	"                    shapes and dtypes kept, its run() the reference) and its Workloads\n"
	"  kernelbench       a problem (Model.forward the reference, get_inputs() the workload,\n"
	"                    its module-level sizes the params, the modules' weights inputs);\n"
	"                    the file is interpreted, never run outside the jail\n"
	"The reference is reference.py, run with torch when installed.  A KernelBench forward\n"
	"made of the operations the importer knows (elementwise, reductions, matmul, conv,\n"
	"pooling, norms, scans, losses, attention; f32) gets a naive baseline.c, an OpenMP knob\n"
	"template and a numpy form of the reference for machines without torch; a plain matmul\n"
	"or softmax gets the shipped task's kernels.  GPU-sized problems shrink with --scale\n"
	"(e.g. 0.125: every size get_inputs() uses, times F) or --set (one size).\n"
	"See docs/tasks.md.";

/* --set's "N=512,K=64" into d: each NAME=INTEGER */
static int parse_sets(const char *sets, struct ks_defines *d)
{
	struct ks_error e = {0};
	if (ks_defines_parse(d, sets, &e)) {
		fprintf(stderr, "ksearch: --set: %s\n", e.msg);
		return -1;
	}
	for (int i = 0; i < d->n; i++) {
		char *end = NULL;
		if (d->value[i])
			strtol(d->value[i], &end, 10);
		if (!end || end == d->value[i] || *end) {
			fprintf(stderr, "ksearch: --set '%s': expected NAME=INTEGER, e.g. --set N=512,K=64\n",
				d->list[i]);
			return -1;
		}
	}
	return 0;
}

int cmd_tasks_import(int argc, char **argv)
{
	const char *out = ".", *sets = NULL;
	double scale = 1;
	int max_wl = KS_IMPORT_MAX_WORKLOADS;
	const struct ks_opt opts[] = {
		KS_OPT_STR("out", &out, "DIR", "where the task folder goes (default: .)"),
		KS_OPT_DOUBLE("scale", &scale, 1e-6, 1e6, "F",
			      "kernelbench: multiply the sizes get_inputs() uses by F (default 1; at "
			      "least 1 each)"),
		KS_OPT_STR("set", &sets, "NAME=N,...",
			   "kernelbench: give module-level sizes these values (after --scale)"),
		KS_OPT_INT("max-workloads", &max_wl, 1, 1 << 20, "N",
			   "flashinfer-bench: distinct workloads kept before the import refuses "
			   "(default 256)"),
		KS_OPT_END,
	};
	const char *pos[4];
	int npos = 0;
	int rc = ks_opts_parse(argc, argv, opts, usage, about, pos, 4, &npos, NULL);
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
	struct ks_defines setv;
	ks_defines_init(&setv);
	struct ks_import_req req = {.source = pos[1], .workloads = npos > 2 ? pos[2] : NULL,
				    .out_dir = out, .max_workloads = max_wl, .scale = scale,
				    .sets = setv.list};
	struct ks_import_result res;
	int bad = parse_sets(sets, &setv);
	if (!bad && (bad = imp->import(&req, &res, &e)))
		fprintf(stderr, "ksearch: %s\n", e.msg);
	ks_defines_release(&setv);
	if (bad)
		return KS_EXIT_USAGE;
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
