/* Importers: problems written for other benchmarks, turned into ksearch task folders
 * (docs/tasks.md, "Importing problems").  One struct per format, listed in one table
 * (src/import/import_registry.c). */
#ifndef KSEARCH_IMPORT_H
#define KSEARCH_IMPORT_H

#include <limits.h>

#include "ksearch/error.h"

struct ks_import_req {
	const char *source;    /* the problem file (a Definition JSON, a KernelBench .py) */
	const char *workloads; /* optional second file (a Workload JSONL), NULL: none */
	const char *out_dir;   /* the task folder is out_dir/<name>; NULL: "." */
	int max_workloads;     /* distinct workloads kept before the import refuses; 0: the
				  default, KS_IMPORT_MAX_WORKLOADS */
	double scale;          /* KernelBench: sizes get_inputs() uses times this; 0: 1 */
	const char *const *sets; /* KernelBench: NAME=VALUE overrides of module-level sizes,
				    NULL-terminated, or NULL */
};

/* workloads an import keeps by default (each evaluation times every one of them) */
#define KS_IMPORT_MAX_WORKLOADS 256

struct ks_import_result {
	char dir[PATH_MAX];   /* the task folder written */
	char name[128];       /* the task's name */
	char op[64];          /* the operator recognised ("rmsnorm"), "" when none */
	int baseline;         /* 1: baseline.c was generated */
	int templates;        /* 1: a knob template for the cpu backend was generated */
	char note[512];       /* what the user still has to do, "" when nothing */
};

struct ks_importer_i {
	int version;         /* 1 */
	const char *name;    /* "flashinfer-bench" */
	const char *usage;   /* "DEFINITION.json [WORKLOADS.jsonl]" */
	const char *summary; /* one line for --help */
	int takes_workloads; /* 1: the second file is accepted */
	int (*import)(const struct ks_import_req *req, struct ks_import_result *res,
		      struct ks_error *e);
};

/* NULL-terminated list of the importers */
const struct ks_importer_i *const *ks_importer_list(void);
/* the importer called name; KS_ENOTFOUND naming the known ones (and the nearest) otherwise */
int ks_importer_get(const char *name, const struct ks_importer_i **out, struct ks_error *e);

#endif
