/* Backends: one interface struct of function pointers per kind of hardware, registered in
 * one static table (src/backend/registry.c).  A backend that cannot run on this machine
 * says so as data (probe returns KS_EUNAVAILABLE with a reason); it never fails to build.
 *
 * What sets backends apart (the language and prototype of their kernels, what their runner's
 * sandbox must allow, how their device is detected, where the trusted reference runs) is a
 * slot of the struct, so no code outside src/backend/ names a backend.  Optional slots may be
 * NULL; read them through the ks_backend_* accessors below, which fill the defaults in one
 * place.  docs/backends.md says how to add a backend. */
#ifndef KSEARCH_BACKEND_H
#define KSEARCH_BACKEND_H

#include <stddef.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "ksearch/task.h"

/* 2: the capability slots abi, sandbox, detect_spec, device_reference, on_host;
 *    limit_address_space moved into the sandbox needs
 * 3: describe_abi takes a flavour; the slots flavour and translates_cuda */
#define KS_BACKEND_VERSION 3

struct ks_compile_req {
	const struct ks_task *task;
	const char *source;          /* kernel source text */
	const char *const *defines;  /* NULL-terminated "NAME=VALUE" list, or NULL */
	const char *flags;           /* compiler flags; NULL: the backend's default */
	const char *libs;            /* link flags after the sources ("-lopenblas"), or NULL */
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

/* What the sandbox around a backend's runner must allow beyond the base rules (read-only
 * system files, the kernel, /proc/self, writes under scratch; no network, exec, new
 * processes: src/eval/sandbox.h, on Linux and macOS).  Data the sandbox reads, so it never
 * asks which backend runs.  Every list is NULL-terminated and may be NULL; a zeroed struct
 * is the base rules. */
struct ks_sandbox_needs {
	int unlimited_address_space;         /* 1: no RLIMIT_AS (GPU drivers reserve far more than they use) */
	const char *const *read_paths;       /* more trees the runner may read (driver state in /proc, /sys) */
	const char *const *device_prefixes;  /* /dev entries starting with one of these, read-write ("nvidia") */
	const char *const *rw_paths;         /* trees with every file right ("/dev/shm", for driver threads) */
	int unix_sockets;                    /* 1: AF_UNIX sockets allowed (driver daemons); network stays refused */
	const char *const *syscalls;         /* system calls its runtime needs beyond the common allow-list
						(src/eval/sandbox_linux.c); the always-trapped ones stay trapped */
	int artifact_folder;                 /* 1: the kernel artifact's whole folder is readable, not
						the file alone (mlx: header.cuh beside the artifact, which
						NVRTC reads when MLX compiles the kernel) */
	const char *const *env;              /* variables its runtime reads, passed to the runner as
						ksearch has them (LD_LIBRARY_PATH for a runtime unpacked
						outside the system's paths); the scrubbed rest is dropped */
	int wx_memory;                       /* 1: memory that is writable and executable (or made
						executable after it was written) is not refused
						(PR_SET_MDWE), for a runtime that may need it; 0: refused,
						so a kernel cannot rewrite the runner's code */
	/* macOS (Seatbelt, src/eval/sandbox_sbpl.c); Linux ignores both */
	const char *const *mach_services;    /* Mach services the runtime looks up (Metal's compiler) */
	const char *const *iokit_classes;    /* IOKit user-client classes it opens (the GPU's driver) */
};

struct ks_backend_i {
	int version;      /* KS_BACKEND_VERSION */
	const char *name; /* "cpu" */
	const char *lang; /* kernel language (prompts, stored candidates): its abi's lang */
	const char *ext;  /* kernel file extension: "c", "cu" */
	const char *default_flags;
	/* 0 when usable here; KS_EUNAVAILABLE with the reason in why otherwise */
	int (*probe)(char *why, size_t n);
	/* compile into a loadable artifact; a compile error is data (a->ok = 0) */
	int (*compile)(const struct ks_compile_req *req, struct ks_artifact *a, struct ks_error *e);
	/* the runner executable beside ksearch: "ksearch-runner", "ksearch-runner-cuda" */
	const char *runner;
	/* optional: what the kernels run on ("Intel Xeon ... 2 cores"); NULL = name */
	int (*describe_target)(struct ks_buf *out);

	/* ---- capabilities (version 2); read through the accessors below ---- */
	/* how the entry point is written and called (ks_backend_abi; NULL: the C ABI) */
	const struct ks_abi *abi;
	/* what the runner's sandbox must allow (ks_backend_sandbox; NULL: the base rules).
	 * The backend's runner device points to the same object (src/runner/runner.h). */
	const struct ks_sandbox_needs *sandbox;
	/* optional: describe a device as a spec document (ks_backend_detect_spec; NULL: no
	 * device detection) */
	int (*detect_spec)(int device, int measure, struct ks_buf *yaml, struct ks_error *e);
	/* a trusted reference the task may ship for this backend ("reference.cu"), run on the
	 * device for large workloads; NULL: reference.c on the host gives every expected output */
	const char *device_reference;
	/* 1: kernels run on the host CPU, so the host's spec is theirs (--spec auto detects the
	 * host); 0: they run on a device, whose spec comes from detect_spec */
	int on_host;
	/* optional: what a kernel file for task t must hold, several lines (mlx: the format,
	 * the signatures MLX generates, an example) for one flavour ("cuda", "metal"; NULL:
	 * every flavour); NULL = ks_task_prototype(t, lang).  Read through ks_abi_describe() */
	int (*describe_abi)(const struct ks_task *t, const char *flavour, struct ks_buf *out);
	/* optional: what speedups are measured against, for people ("MLX native");
	 * NULL = "baseline" (the task's baseline.<ext>) */
	const char *baseline_label;
	/* optional: 0 when a knob template (its whole text) cannot run on this machine's
	 * runtime, with the reason in why (mlx: a Metal template where MLX has CUDA); the
	 * search leaves such templates out.  NULL: every template can run */
	int (*template_runs)(const char *source, char *why, size_t n);
	/* 1: the kernels' timing is not disturbed by compilers on the host's cores (a device
	 * runs and times them), so a search round evaluates its candidate i while the later
	 * ones still compile; 0 (cpu): every compile of a round ends before its first timing,
	 * the quiet-cores rule of docs/evaluation.md */
	int timing_tolerates_host_load;
	/* optional: 0 when candidate kernels, not only the task's baseline, can run here; else
	 * KS_EUNAVAILABLE with the reason in why (mlx: MLX's CPU build runs its native ops, the
	 * baselines, only).  A search checks it before it writes anything.  NULL: probe's answer */
	int (*probe_kernels)(char *why, size_t n);

	/* ---- version 3 ---- */
	/* optional: the flavour of kernel this machine's runtime compiles, a kernel language
	 * ("cuda" on MLX's CUDA build, "metal" on Apple silicon), NULL when it compiles none;
	 * NULL slot: the backend's lang.  Read through ks_backend_flavour() */
	const char *(*flavour)(void);
	/* 1: its kernels are written with CUDA expertise carried over (the seeds' translation
	 * layer): a model's context holds the task's highest-rated CUDA kernel that fits, its
	 * translation through the concept map of the flavour and the class's assertions (mlx) */
	int translates_cuda;
	/* optional: how one timed call of a kernel is made and clocked, a sentence for a model
	 * or a person (mlx: chained launches per MLX eval, the wall clock); NULL: one call of
	 * the entry point on rotated input sets.  Read through ks_backend_timing_text() */
	void (*describe_timing)(struct ks_buf *out);
	/* optional: what a model's code block holds, top to bottom (mlx: the .mlx layout, where
	 * the @ksearch block and the knob values go); NULL: includes, helpers and the entry
	 * point.  Read through ks_backend_reply_file() */
	const char *reply_file;
	/* optional: how a kernel gives its knobs their values (mlx: a #define line above the
	 * header, a template arg in the body); NULL: the C way, a guarded #define that -D
	 * overrides.  Read through ks_backend_knob_use() */
	const char *knob_use;
};

/* What a kernel file for task t must hold on a backend ("cpu", "mlx") or in a kernel
 * language ("metal"), the one text `ksearch tasks show` and the LLM prompts give: the
 * exact prototype (one line, with its ';') for a typed entry point, or the several lines
 * of the backend's describe_abi slot for flavour (NULL: every flavour).  KS_EINVAL when
 * name is neither a backend nor a language. */
int ks_abi_describe(const char *name, const struct ks_task *t, const char *flavour,
		    struct ks_buf *out);
/* the flavour b's kernels are written in on this machine (its flavour slot; b's lang
 * without one); NULL when the runtime here compiles none (MLX's CPU build) */
const char *ks_backend_flavour(const struct ks_backend_i *b);
/* 1 when b's kernels carry CUDA expertise over (the translates_cuda slot) */
int ks_backend_translates_cuda(const struct ks_backend_i *b);

/* what a model's code block holds on b, and how its knobs get values (the slots or the
 * defaults), as phrases for a prompt */
const char *ks_backend_reply_file(const struct ks_backend_i *b);
const char *ks_backend_knob_use(const struct ks_backend_i *b);
/* how one timed call is made on b (its describe_timing slot, or the default) */
void ks_backend_timing_text(const struct ks_backend_i *b, struct ks_buf *out);
/* be's baseline_label, "baseline" when it has none (or be is NULL) */
const char *ks_backend_baseline_label(const struct ks_backend_i *be);

/* the registered backend by name, or NULL */
const struct ks_backend_i *ks_backend_find(const char *name);
/* every registered backend, NULL-terminated */
const struct ks_backend_i *const *ks_backend_list(void);
/* find + probe: 0, KS_ENOTFOUND (unknown name, the known ones listed in e) or
 * KS_EUNAVAILABLE (with the reason) */
int ks_backend_get(const char *name, const struct ks_backend_i **out, struct ks_error *e);

/* ---- the one place optional slots get their defaults ---- */
/* b's ABI; the C ABI when the slot is NULL */
const struct ks_abi *ks_backend_abi(const struct ks_backend_i *b);
/* b's sandbox needs; the base rules (a zeroed struct) when the slot is NULL */
const struct ks_sandbox_needs *ks_backend_sandbox(const struct ks_backend_i *b);
/* 1 when template text source can run here (b's template_runs slot; 1 without it) */
int ks_backend_template_runs(const struct ks_backend_i *b, const char *source, char *why,
			     size_t n);
/* b's probe_kernels: 0 when candidate kernels can run here (always, without the slot), else
 * KS_EUNAVAILABLE with the reason in why */
int ks_backend_probe_kernels(const struct ks_backend_i *b, char *why, size_t n);
/* 1 when b's kernels run on the host CPU (0 for NULL, an unknown backend) */
int ks_backend_on_host(const struct ks_backend_i *b);
struct ks_spec;
/* 0 when spec s can describe where b's kernels run; KS_EINVAL, saying why, for a GPU's spec
 * given to a backend whose kernels run on the host CPU */
int ks_backend_spec_fits(const struct ks_backend_i *b, const struct ks_spec *s,
			 struct ks_error *e);
/* 1 when compiles may run on the host while b's kernels are timed (0 for NULL) */
int ks_backend_timing_tolerates_host_load(const struct ks_backend_i *b);
/* the file name of b's device reference ("reference.cu"), or NULL when it has none */
const char *ks_backend_device_reference(const struct ks_backend_i *b);

/* The ABI of a backend ("cpu", "cuda") or of a kernel language: a backend's ("c", "cuda") or
 * one known without a backend yet ("metal"); NULL when name is neither */
const struct ks_abi *ks_abi_find(const char *name);
/* type spelling in a kernel language: the ctype of ks_abi_find(lang) (NULL: "c"); NULL for an
 * unknown language */
const char *ks_dtype_ctype(enum ks_dtype t, const char *lang);
/* ks_abi_prototype / ks_abi_shim by name: lang is a backend ("cpu", "cuda") or a kernel
 * language ("c", "metal"), looked up with ks_abi_find(); KS_EINVAL when it names neither. */
int ks_task_prototype(const struct ks_task *t, const char *lang, struct ks_buf *out);
int ks_task_shim(const struct ks_task *t, const char *lang, struct ks_buf *out);
/* content hash of the task's ground truth: task.yaml, its references, and every backend's
 * device reference the task has (reference.cu); keys reference-output caches */
int ks_task_hash(const struct ks_task *t, char out[65], struct ks_error *e);

/* Detect the device of a backend as a spec document (YAML in the knowledge/specs format,
 * with measured ceilings when measure is set) through its detect_spec slot; KS_ENOTFOUND
 * for an unknown backend, KS_EUNAVAILABLE when it has no device detection or cannot detect
 * here. */
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
