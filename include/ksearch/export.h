/* Exporters: turn kernels ksearch found into code for another framework (`ksearch export
 * RUN_DIR|KERNEL --to TARGET`).  One interface struct per target, registered in one table
 * (src/export/registry.c), as backends are.  Targets today: mlx (a Python module building
 * mx.fast.metal_kernel / cuda_kernel).  Room for more (c, torch, flashinfer) as slots. */
#ifndef KSEARCH_EXPORT_H
#define KSEARCH_EXPORT_H

#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "ksearch/task.h"

#define KS_EXPORTER_VERSION 1

/* one kernel to export */
struct ks_export_item {
	const struct ks_task *task;
	const char *source;  /* the kernel file's text (knob values baked in) */
	const char *origin;  /* where it came from, for the generated file's comments */
};

struct ks_exporter_i {
	int version;         /* KS_EXPORTER_VERSION */
	const char *name;    /* "mlx" */
	const char *ext;     /* of the file it writes: "py" */
	const char *backend; /* the backend whose kernel files it takes: "mlx" */
	const char *summary; /* one line for --help */
	/* one file for all items; a kernel the target cannot take is KS_EINVAL with why */
	int (*write)(const struct ks_export_item *items, int n, struct ks_buf *out,
		     struct ks_error *e);
};

/* the exporter by name, or NULL */
const struct ks_exporter_i *ks_exporter_find(const char *name);
/* every exporter, NULL-terminated */
const struct ks_exporter_i *const *ks_exporter_list(void);

#endif
