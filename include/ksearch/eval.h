/* Evaluation: compile a kernel, check it against the task's reference on several seeds and
 * every check, time it against the task's baseline in the same session (docs/evaluation.md).
 * A failing candidate is data (a status), never an error: the error channel of these
 * functions is for infrastructure faults only. */
#ifndef KSEARCH_EVAL_H
#define KSEARCH_EVAL_H

#include <stddef.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "ksearch/task.h"

#define KS_STATUS_MAP(X)                                                                 \
	X(PASSED)                                                                        \
	X(COMPILE_ERROR)                                                                 \
	X(RUNTIME_ERROR)                                                                 \
	X(TIMEOUT)                                                                       \
	X(MEMORY_LIMIT)                                                                  \
	X(INCORRECT_NUMERICAL)                                                           \
	X(SANDBOX_VIOLATION)                                                             \
	X(SUSPICIOUS)

enum ks_status {
#define KS_STATUS_ENUM_(name) KS_STATUS_##name,
	KS_STATUS_MAP(KS_STATUS_ENUM_)
#undef KS_STATUS_ENUM_
	KS_STATUS_COUNT_
};

/* "PASSED", "COMPILE_ERROR", ... */
const char *ks_status_name(enum ks_status s);
/* parse a status name; -1 when unknown */
int ks_status_parse(const char *name);

struct ks_eval_opts {
	const char *backend;      /* "cpu" (default) */
	int nseeds;               /* correctness seeds per workload (>= 3; default 3) */
	double timeout_s;         /* per runner command: a call, a timing block (default 60) */
	size_t memory_limit;      /* bytes a kernel may allocate beyond its tensors (default 2 GiB) */
	double min_time_s;        /* timing floor per block (default 0.2 s) */
	int min_reps;             /* timing count floor (default 10) */
	int max_reps;             /* timing count cap (default 2000) */
	double rep_ci_rel;        /* a block also ends before min_time_s once the median of its
				     reps is known to +-rep_ci_rel (95%) (0: off, the default) */
	int rep_ci_min_reps;      /* ...and only after this many reps (default 20) */
	int warmup;               /* untimed calls first (default 2) */
	int yard_reps;            /* > 0: a yardstick's (baseline, library) block takes one
				     warm-up call and this count floor instead of warmup and
				     min_reps, the time floor unchanged: a naive baseline of
				     0.2 s a call needs no 12 calls a block to be known (final) */
	int blocks;               /* interleaved baseline/candidate blocks (default 2) */
	double ci_rel;            /* after `blocks`, add blocks until the candidate's median is
				     known to +-ci_rel (95%, e.g. 0.02) or max_blocks (0: off) */
	int max_blocks;           /* cap on blocks when ci_rel is set (default: blocks, <= 50) */
	size_t rotate_bytes;      /* rotating input sets until this many bytes (default: 2x LLC,
				     capped at 256 MiB) */
	const char *workloads;    /* NULL or "all": every workload; else "0,2" indexes */
	int skip_checks;          /* do not run `checks` entries */
	int skip_baseline;        /* do not time the baseline (no speedups) */
	int skip_library;         /* do not time the task's library kernel (library.<ext>) */
	int threads;              /* OMP_NUM_THREADS for kernels (0: leave unset) */
	const char *cflags;       /* compiler flags (cpu default "-O3 -march=native -fopenmp") */
	const char *const *defines; /* NULL-terminated "NAME=VALUE" list passed as -D */
	double peak_gflops;       /* roofline: compute ceiling (0: unknown, no compute floor) */
	double peak_gbps;         /* roofline: memory ceiling (0: unknown, no memory floor) */
	double suspicious_factor; /* SUSPICIOUS below floor/factor (default 1.5) */
	/* "% of roofline": the attainable rate at the workload's arithmetic intensity,
	 * min(compute roof of the task's dtype, intensity x memory roof), as in the roofline
	 * model; realistic roofs, not upper bounds (0: use peak_gflops / peak_gbps) */
	double roof_gflops_f32;   /* FP32 FMA (CPU: measured by spec detect) */
	double roof_gflops_f16;   /* FP16 (GPU tensor cores where the spec lists them) */
	double roof_gflops_bf16;  /* BF16 (tensor cores; CPU: AMX tiles where present) */
	double roof_gbps;         /* memory (CPU: measured copy bandwidth) */
	int reuse_baseline;       /* time the baseline (and the library) once per workload and
				     reuse it (search) */
	unsigned long long seed;  /* base of the input seeds (default 1) */
	int no_sandbox;           /* for trusted debugging only; never for candidates */
};

void ks_eval_opts_init(struct ks_eval_opts *o);

/* Where an evaluation's wall time goes (issue 12's breakdown), seconds */
enum ks_eval_phase {
	KS_PHASE_REFERENCE, /* expected outputs: the reference run, or its cache read */
	KS_PHASE_START,     /* runner processes started, kernel loaded (device init included) */
	KS_PHASE_INPUTS,    /* input sets generated and uploaded: for timing, and the runner's
			       fill time of each correctness call's fresh inputs */
	KS_PHASE_CHECK,     /* correctness calls: output poison, call, downloads, the inputs'
			       checksum, round trips, teardown */
	KS_PHASE_COMPARE,   /* outputs compared with the reference in this process */
	KS_PHASE_TIMING,    /* timing blocks, the baseline's interleaved ones included */
	KS_PHASE_COUNT
};
/* "reference", "start", "inputs", "check", "compare", "timing" */
const char *ks_eval_phase_name(enum ks_eval_phase p);

/* What the candidate's runner says its commands spent, seconds of its wall clock: its fill
 * and correctness-call steps (inside the inputs and check phases; timing blocks not
 * included), then the steps of its start (inside the start phase) */
enum ks_eval_part {
	KS_PART_GENERATE, /* input generation (or a copy from a set of the same seed) */
	KS_PART_UPLOAD,   /* inputs to the device, outputs poisoned (on the device or uploaded) */
	KS_PART_CALL,     /* correctness calls, device synchronisation included */
	KS_PART_DOWNLOAD, /* outputs and (device inputs) inputs back to the host */
	KS_PART_CHECKSUM, /* inputs hashed after each fill and each call */
	KS_PART_EXEC,     /* the evaluator's spawn to the runner's main: fork, exec, the dynamic
			     loader with the runner's libraries (libcudart) */
	KS_PART_SANDBOX,  /* Landlock and seccomp entered */
	KS_PART_LOAD,     /* the kernel's library loaded (dlopen, its constructors) */
	KS_PART_INIT,     /* the device initialised (cuda: driver, context, stream, events, L2
			     flush buffer, idle-sync calibration) */
	KS_PART_ALLOC_HOST,   /* a workload's sets: host pages mapped and touched */
	KS_PART_ALLOC_DEVICE, /* a workload's sets: device buffers allocated */
	KS_PART_RESET,    /* the last workload's buffers released before the next one's */
	KS_PART_COUNT
};
/* the first of the start phase's parts */
#define KS_PART_START_FIRST KS_PART_EXEC
/* "generate", "upload", "call", "download", "checksum", "exec", "sandbox", "load", "init",
 * "alloc_host", "alloc_device", "reset" */
const char *ks_eval_part_name(enum ks_eval_part p);

struct ks_wl_result {
	int index;               /* workload index in the task (checks: index in checks) */
	int is_check;
	char *label;             /* "rows=4096 cols=4096" or the check name */
	char *params_json;       /* {"rows": 4096, "cols": 4096} */
	enum ks_status status;
	double max_abs_err, max_rel_err; /* NaN when an output held NaN or Inf where the
					    reference did not */
	/* what the task's tolerance judged, worst over outputs and seeds, as shares of it
	 * (ks_compare: PASSED needs both at most 1): the worst element's |got - want| /
	 * (atol + rtol*|want|), and the relative L2 error over the task's l2 bound */
	double tol_elem, tol_l2;
	double median_us;        /* candidate, 0 when not timed */
	double spread_pct;       /* interquartile range as % of the median */
	double gflops, gbps;     /* achieved */
	double roofline_pct;     /* attainable-rate floor / median time * 100 (roof_*), 0 when
				    unknown; above 100 when the data stayed in cache */
	double baseline_us;      /* baseline median in the same session, 0 when not timed */
	double speedup;          /* baseline_us / median_us */
	int nsamples;
	double *samples_us;      /* every timed repetition */
	int blocks;              /* interleaved timing blocks it took */
	long long preempted;     /* involuntary context switches of the kernel's process during
				    its timed calls (all threads); -1: not counted here (macOS) */
	int nbaseline_samples;
	double *baseline_samples_us; /* the baseline's repetitions behind baseline_us (local
					evaluations only; NULL from a worker) */
	double library_us;       /* the task's library kernel's median in the same session, 0
				    when not timed (none, not installed, or wrong here) */
	double library_speedup;  /* library_us / median_us: above 1 beats the library */
	int nlibrary_samples;
	double *library_samples_us; /* the library's repetitions (local evaluations only) */
	int nseeds;              /* seeds checked (in order) */
	unsigned long long seeds[16];
	double seed_abs_err[16], seed_rel_err[16]; /* worst error per seed */
	char *log;               /* compiler message, signal, first mismatches, ... */
	int not_run;             /* 1: not evaluated, an earlier check or workload failed (status
				    is that failure's; nothing was compared or timed); its log
				    is KS_STORE_NOT_RUN_LOG (ksearch/store.h), what a run's store keeps of it */
	double phase_s[KS_PHASE_COUNT]; /* this workload's wall time by phase */
	double part_s[KS_PART_COUNT];   /* the runner's steps (enum ks_eval_part) */
	double inputs_cached_bytes;     /* input bytes the runner read from the input cache
					   instead of generating them */
};

struct ks_eval_result {
	enum ks_status status;   /* first non-PASSED among checks and workloads */
	double speedup;          /* geometric mean over timed workloads (0 if none) */
	double library_speedup;  /* the same against the library, over the workloads it was
				    timed on (0 if none) */
	char *library;           /* the library's name ("OpenBLAS"), NULL when none was timed */
	char *kernel_hash;       /* sha256 of source + flags + defines */
	char *compile_log;
	int nworkloads;
	struct ks_wl_result *workloads;
	int nchecks;
	struct ks_wl_result *checks;
	char *sandbox;           /* what isolated the kernel: "seccomp + landlock abi 7" */
	double phase_s[KS_PHASE_COUNT]; /* wall time by phase over every workload and check */
	double part_s[KS_PART_COUNT];   /* the runner's steps over every workload and check */
	double inputs_cached_bytes;     /* the same over every workload and check */
};

void ks_eval_result_release(struct ks_eval_result *r);
/* the documented --json object ({"task", "backend", "kernel", "status", ...}) */
int ks_eval_result_json(const struct ks_task *t, const char *backend, const char *kernel_path,
			const struct ks_eval_result *r, struct ks_buf *out);

/* An evaluator keeps what stays the same across candidates: the task, compiled reference
 * and baseline, cached reference outputs and the baseline's timings. */
struct ks_evaluator;

int ks_evaluator_new(const struct ks_task *t, const struct ks_eval_opts *o,
		     struct ks_evaluator **out, struct ks_error *e);
void ks_evaluator_free(struct ks_evaluator *ev);
/* Evaluate one kernel source (its text; path only for messages).  defines override
 * o->defines when not NULL.  Returns 0 with a status in r, or an infrastructure error. */
int ks_evaluator_run(struct ks_evaluator *ev, const char *source, const char *path,
		     const char *const *defines, struct ks_eval_result *r, struct ks_error *e);
struct ks_artifact;
/* The same for a kernel compiled already (the search driver compiles the next candidates
 * while this one runs); a != ok is a COMPILE_ERROR result with its log. */
int ks_evaluator_run_artifact(struct ks_evaluator *ev, const struct ks_artifact *a,
			      struct ks_eval_result *r, struct ks_error *e);

struct ks_spec;
/* Ceilings for the roofline from a hardware spec (upper bounds; 0 when unknown).  CPUs:
 * theoretical compute peak only (FMA, or AMX tiles where the spec lists amx); GPUs: the best
 * compute rate and the bandwidth the spec gives. */
void ks_roofline_from_spec(const struct ks_spec *s, double *gflops, double *gbps);
/* the options' roofline ceilings and "% of roofline" roofs from s, where they are not set
 * (<= 0) already */
void ks_roofline_fill(const struct ks_spec *s, struct ks_eval_opts *o);

/* The attainable GFLOP/s for a workload of these flops and bytes in dtype dt: the compute
 * roof of dt, capped by arithmetic intensity x the memory roof (the roofline model); 0 when
 * unknown.  "% of roofline" is achieved / attainable. */
double ks_roofline_attainable(const struct ks_eval_opts *o, enum ks_dtype dt, double flops,
			      double bytes);
/* One-shot helper for `ksearch eval`: new + run + free. */
int ks_eval_kernel(const struct ks_task *t, const char *source, const char *path,
		   const struct ks_eval_opts *o, struct ks_eval_result *r, struct ks_error *e);

/* is the i-th timed workload (counted over those that run on the backend) in the
 * selection ("all", NULL or "0,2"); the evaluator rejects indexes out of range */
int ks_eval_workload_selected(const char *sel, int i);
/* KS_EINVAL with a message unless sel is "all", NULL or indexes below n ("" is an error:
 * an option given empty, not "all") */
int ks_eval_validate_workloads(const char *sel, int n, struct ks_error *e);

#endif
