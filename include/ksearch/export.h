/* Exporters: turn kernels ksearch found into code for another framework (`ksearch export
 * RUN_DIR|KERNEL --to TARGET`).  One interface struct per target, registered in one table
 * (src/export/registry.c), as backends are.  Targets: c (a folder: header, sources, a
 * Makefile building a static library), torch (a Python module registering a torch.library
 * op), mlx (a Python module building mx.fast.metal_kernel / cuda_kernel) and flashinfer (a
 * flashinfer-bench Solution JSON).  docs/export.md describes what each writes. */
#ifndef KSEARCH_EXPORT_H
#define KSEARCH_EXPORT_H

#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "ksearch/task.h"

/* 2: items carry variants and shape routes; targets list the backends they take and may
 * write several files */
#define KS_EXPORTER_VERSION 2

#define KS_EXPORT_MAX_VARIANTS 8 /* distinct winners exported per task */
#define KS_EXPORT_MAX_ROUTES 32  /* measured workloads a dispatcher chooses among */
#define KS_EXPORT_MAX_FILES 16

/* one kernel: a candidate's source with its knob values baked in as #defines */
struct ks_export_variant {
	const char *source;
	const char *label; /* "candidate 8" (a kernel file: its path) */
	const char *knobs; /* JSON object of the knob values, "{}" when unknown */
};

/* variant `variant` won the measured workload with these param values (a shape measured
 * nowhere gets variants[0], the overall best) */
struct ks_export_route {
	double values[16]; /* one per task param, in declaration order */
	int variant;
};

/* the kernels of one task to export */
struct ks_export_item {
	const struct ks_task *task;
	const char *backend; /* where the kernels were found: "cpu", "cuda", "mlx" */
	const char *origin;  /* the run folder or kernel file, for the generated comments */
	/* where the kernel comes from and how fast it measured, for the generated comments:
	 * lines of plain text ("run DIR, candidate 8: task softmax, backend cpu", the speedup
	 * and its phase, "exported by ksearch 0.1.0"); NULL: none */
	const char *provenance;
	int nvariants;       /* >= 1; variants[0] is the run's best */
	struct ks_export_variant variants[KS_EXPORT_MAX_VARIANTS];
	int nroutes;         /* 0: variants[0] for every shape */
	struct ks_export_route routes[KS_EXPORT_MAX_ROUTES];
};

/* what an exporter writes: files named relative to the output (one file: stdout or --out) */
struct ks_export_out {
	int nfiles;
	char names[KS_EXPORT_MAX_FILES][128];
	struct ks_buf files[KS_EXPORT_MAX_FILES];
};

struct ks_exporter_i {
	int version;                  /* KS_EXPORTER_VERSION */
	const char *name;             /* "mlx" */
	const char *const *backends;  /* NULL-terminated: the backends whose kernels it takes */
	int folder;                   /* 1: writes a folder (--out DIR); 0 (left out): one file */
	const char *summary;          /* one line for --help */
	/* every item into out; a kernel the target cannot take is KS_EINVAL with why */
	int (*write)(const struct ks_export_item *items, int n, struct ks_export_out *out,
		     struct ks_error *e);
};

/* the exporter by name, or NULL */
const struct ks_exporter_i *ks_exporter_find(const char *name);
/* every exporter, NULL-terminated */
const struct ks_exporter_i *const *ks_exporter_list(void);
/* 1 when ex takes kernels found on backend */
int ks_exporter_takes(const struct ks_exporter_i *ex, const char *backend);

void ks_export_out_init(struct ks_export_out *o);
void ks_export_out_release(struct ks_export_out *o);
/* a new file of out (NULL when KS_EXPORT_MAX_FILES are taken) */
struct ks_buf *ks_export_out_file(struct ks_export_out *o, const char *name);
/* out written to path: a folder (made when missing) with every file, or the one file */
int ks_export_out_write(const struct ks_export_out *o, const char *path, int folder,
			struct ks_error *e);

/* ks_export_load's flags */
#define KS_EXPORT_PER_SHAPE 0x1u /* a run's per-shape winners too, routed by shape */

/* Load what to export from a run folder (its task, backend, best kernel and, with
 * KS_EXPORT_PER_SHAPE, the candidates the run's per-shape pick crowned on workloads of
 * their own: include/ksearch/report.h) or from a kernel file (backend from its header or
 * its extension, task from its header or task_name).  The item's strings live in *out;
 * release with ks_export_loaded_release. */
struct ks_export_loaded {
	struct ks_export_item item;
	struct ks_task *task;
	struct ks_buf mem[KS_EXPORT_MAX_VARIANTS];
	char origin[4096];
	char backend[32];
	char labels[KS_EXPORT_MAX_VARIANTS][64];
	char *knobs[KS_EXPORT_MAX_VARIANTS];
	char provenance[1024];
	int shape_wins;    /* a run's timed workloads another candidate wins beyond the noise
			      (exported as variants only with KS_EXPORT_PER_SHAPE) */
};
int ks_export_load(const char *path, const char *task_name, unsigned flags,
		   struct ks_export_loaded *out, struct ks_error *e);
/* KS_EINVAL naming the backends ex takes when l was found on another one */
int ks_exporter_check(const struct ks_exporter_i *ex, const struct ks_export_loaded *l,
		      struct ks_error *e);
void ks_export_loaded_release(struct ks_export_loaded *l);

#endif
