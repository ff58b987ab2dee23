/* Backends: one interface struct of function pointers per kind of hardware, registered in
 * one static table (src/backend/registry.c).  A backend that cannot run on this machine
 * says so as data (probe returns KS_EUNAVAILABLE with a reason); it never fails to build. */
#ifndef KSEARCH_BACKEND_H
#define KSEARCH_BACKEND_H

#include <stddef.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "ksearch/task.h"

#define KS_BACKEND_VERSION 1

struct ks_compile_req {
	const struct ks_task *task;
	const char *source;          /* kernel source text */
	const char *const *defines;  /* NULL-terminated "NAME=VALUE" list, or NULL */
	const char *flags;           /* compiler flags; NULL: the backend's default */
};

struct ks_artifact {
	int ok;              /* 1 compiled; 0 compile error (the log says why) */
	char path[4096];     /* the loadable library */
	char hash[65];       /* content hash of everything that went into it */
	struct ks_buf log;   /* compiler output (capped) */
	char resources[512]; /* resource usage when the toolchain reports it (ptxas -v) */
	int cached;          /* 1 when it came from the compile cache */
};

void ks_artifact_init(struct ks_artifact *a);
void ks_artifact_release(struct ks_artifact *a);

struct ks_backend_i {
	int version;      /* KS_BACKEND_VERSION */
	const char *name; /* "cpu" */
	const char *lang; /* prototype language for ks_task_prototype: "c", "cuda" */
	const char *ext;  /* kernel file extension: "c", "cu" */
	const char *default_flags;
	/* 0 when usable here; KS_EUNAVAILABLE with the reason in why otherwise */
	int (*probe)(char *why, size_t n);
	/* compile into a loadable artifact; a compile error is data (a->ok = 0) */
	int (*compile)(const struct ks_compile_req *req, struct ks_artifact *a, struct ks_error *e);
	/* the runner executable beside ksearch: "ksearch-runner", "ksearch-runner-cuda" */
	const char *runner;
	/* runner settings: the address-space limit applies (0 for GPU drivers that map a lot) */
	int limit_address_space;
	/* optional: what the kernels run on ("Intel Xeon ... 2 cores"); NULL = name */
	int (*describe_target)(struct ks_buf *out);
	/* optional: what a kernel file for task t must hold, several lines (mlx: the format,
	 * the signatures MLX generates, an example); NULL = ks_task_prototype(t, lang) */
	int (*describe_abi)(const struct ks_task *t, struct ks_buf *out);
	/* optional: what speedups are measured against, for people ("MLX native");
	 * NULL = "baseline" (the task's baseline.<ext>) */
	const char *baseline_label;
};

/* be's baseline_label, "baseline" when it has none (or be is NULL) */
const char *ks_backend_baseline_label(const struct ks_backend_i *be);

/* the registered backend by name, or NULL */
const struct ks_backend_i *ks_backend_find(const char *name);
/* every registered backend, NULL-terminated */
const struct ks_backend_i *const *ks_backend_list(void);
/* find + probe: 0, KS_ENOTFOUND (unknown name, the known ones listed in e) or
 * KS_EUNAVAILABLE (with the reason) */
int ks_backend_get(const char *name, const struct ks_backend_i **out, struct ks_error *e);

/* Detect the device of a backend as a spec document (YAML in the knowledge/specs format,
 * with measured ceilings when measure is set); KS_EUNAVAILABLE when the backend cannot
 * detect here. */
int ks_backend_detect_spec(const char *backend, int device, int measure, struct ks_buf *yaml,
			   struct ks_error *e);

/* The spec of the local device the kernels run on, as loaded by ks_spec_load, from its
 * properties and theoretical peaks (nothing measured, so quick): what `--spec auto` means on
 * a GPU backend.  The device is the first of devices ("0,1" as --devices takes it), else
 * $KSEARCH_DEVICE, else 0.  out is initialised either way; the caller releases it. */
struct ks_spec;
int ks_backend_device_spec(const char *backend, const char *devices, struct ks_spec *out,
			   struct ks_error *e);

/* the compile cache used by backends: key -> directory */
int ks_compile_cache_dir(const char *hash, char *out, size_t n, struct ks_error *e);

#endif
