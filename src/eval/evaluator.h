/* Private state of an evaluator, shared by the files of src/eval/. */
#ifndef KS_EVAL_EVALUATOR_H
#define KS_EVAL_EVALUATOR_H

#include "eval/runner_client.h"
#include "eval/runner_proto.h"
#include "ksearch/backend.h"
#include "ksearch/eval.h"

#define KS_MAX_SEEDS 16

/* Seed slots (ev->seeds, ws->ref): the correctness calls' seeds (0..nseeds-1, --seeds), then
 * the timed sets' (set s of the rotation holds slot KS_SEED_TIMED + s mod ws->ntimed_seeds),
 * then the fresh inputs of the call after timing.  Each is a seed the kernel's process has
 * not been shown before its slot's calls: a result cached from an earlier call never answers
 * a later one (issue 39). */
#define KS_TIMED_SEEDS 2
#define KS_SEED_TIMED KS_MAX_SEEDS
#define KS_SEED_FRESH (KS_SEED_TIMED + KS_TIMED_SEEDS)
/* after the fresh call, calls on more inputs never shown, timed only (their outputs are not
 * compared, so they need no reference; the kernel cannot tell them from the fresh call),
 * each followed by a call on inputs of the timed calls */
#define KS_PROBE_SEEDS 2
#define KS_SEED_PROBE (KS_SEED_FRESH + 1)
#define KS_SEED_SLOTS (KS_SEED_PROBE + KS_PROBE_SEEDS)

/* After timing, every set the timed calls wrote is compared while their outputs add up to
 * at most this; beyond it a random subset of them that does, drawn after the timing, at
 * least KS_CHECK_MIN_SETS (docs/evaluation.md, "After timing") */
#define KS_CHECK_BYTES ((size_t)32 << 20)
#define KS_CHECK_MIN_SETS 2

/* The wall-clock bound on a timing block's runner clock (clock_untrue in workload.c): the
 * runner's time from reading the command to its reply may fall short of what this process
 * saw by two pipe wake-ups, allowed as the larger of KS_SPAN_SLACK_S and KS_SPAN_SLACK_REL
 * of the block's wall time (measured under load 16 on 2 cores: up to 28 ms of 78); a clock
 * slowed by more than 1 / (1 - KS_SPAN_SLACK_REL) over a block of 0.4 s or more is caught */
#define KS_SPAN_SLACK_S 0.100
#define KS_SPAN_SLACK_REL 0.25
/* a block the cross-check refuses is timed again, this many tries in all (time_block) */
#define KS_CLOCK_TRIES 3

/* a timing block as the runner's clock saw it, in seconds */
struct ks_block_times {
	double warm, block, span; /* warm-up calls, timed calls, the whole command */
	long long preempted;      /* the runner's involuntary context switches during the timed
				     calls, all its threads; -1: not counted (macOS, an older
				     runner) */
};

struct ks_buf;
/* 1 when the runner's clock cannot be true against this process's wall clock (the block
 * of cnt reps summing to sum took wall seconds here, waited of them this thread or the
 * runner spent waiting for a CPU), saying why in log (src/eval/workload.c) */
int ks_clock_untrue(const struct ks_block_times *bt, double sum, int cnt, double wall,
		    double waited, struct ks_buf *log);

/* A runner's scratch folder is a tmpfs of this size where it can have a mount namespace
 * (src/eval/sandbox_linux.c): what a kernel writes there is bounded */
#define KS_SCRATCH_BYTES ((size_t)256 << 20)
/* pids.max of a runner's pids cgroup: KS_RUNNER_THREADS_BASE + _PER_CPU x the cores */
#define KS_RUNNER_THREADS_BASE 64
#define KS_RUNNER_THREADS_PER_CPU 16

/* The fresh-inputs check: the fastest call on inputs the kernel had never been shown (the
 * correctness calls after the first, the probes after timing) may take at most
 * KS_FRESH_FACTOR x the slowest probe on inputs it had seen + KS_FRESH_SLACK_US: more means
 * calls on seen inputs, the timed ones among them, were answered from what earlier calls
 * left (docs/evaluation.md) */
#define KS_FRESH_FACTOR 3.0
#define KS_FRESH_SLACK_US 500.0
/* ... taken again with new probes when it fires, this many tries in all (workload.c) */
#define KS_FRESH_TRIES 3
/* Timed calls whose median exceeds KS_DISTURBED_FACTOR x the fastest single call around
 * them + KS_DISTURBED_SLACK_US get a note that the machine's load set the figure (workload.c;
 * a cold cache alone makes timed calls a few times slower than a call right after a fill) */
#define KS_DISTURBED_FACTOR 10.0
#define KS_DISTURBED_SLACK_US 1000.0
/* Timed calls whose process was preempted (involuntary context switches, all its threads) at
 * least KS_PREEMPTED_PER_CALL times per call on average get a note that the machine's load
 * set part of the figure (ks_preempted_note, docs/evaluation.md "Preempted calls") */
#define KS_PREEMPTED_PER_CALL 1.0

/* 1, with a note in log, when `preempted` involuntary context switches over `calls` timed
 * calls reach KS_PREEMPTED_PER_CALL per call; 0 when fewer or not counted (-1) */
int ks_preempted_note(long long preempted, int calls, struct ks_buf *log);

/* Workloads of at least this many flops (the task's `flops` expression) take their expected
 * outputs from the task's trusted device reference (reference.cu for cuda) when it has one:
 * reference.c on the host would take minutes there (8192^3 matmul is 1.1e12 flops, 4096^3
 * 1.4e11, the 512^3 workload 2.7e8). */
#define KS_REF_DEVICE_MIN_FLOPS 1e10

/* what computes a workload's expected outputs; each runs in its own runner process */
enum ks_ref_source {
	KS_REF_HOST,   /* reference.c in ksearch-runner: the ground truth */
	KS_REF_DEVICE, /* reference.<ext> in the backend's runner, validated against reference.c */
};

/* What a candidate's time is compared with, each timed in its own runner interleaved with
 * the candidate in the same session, through one code path (workload.c): the task's naive
 * baseline.<ext>, and its vendor library kernel library.<ext> where the task declares one
 * for the backend and it builds here (src/eval/library.c), checked against the reference
 * before it is trusted. */
enum ks_yard { KS_YARD_BASELINE, KS_YARD_LIBRARY, KS_YARD_COUNT };

struct ks_yardstick {
	int on;                 /* compiled and to be timed */
	char label[64];         /* "baseline", "OpenBLAS", "OpenBLAS (SkylakeX)" */
	char env[128];          /* "VAR=VALUE" the runners get for it (library.c), or "" */
	struct ks_artifact art;
};

/* one yardstick's state on one workload */
struct ks_yard_wl {
	double *samples;  /* its timings (us) of the last measurement */
	int n;
	int checked;      /* its outputs were compared with the reference (library) */
	int wrong;        /* they did not match: never timed on this workload */
};

struct ks_wl_state {
	const struct ks_workload *wl;
	int index, is_check;
	size_t out_bytes;   /* all outputs of one set, concatenated (the references' form) */
	size_t set_bytes;   /* inputs + outputs of one set */
	size_t numel[KS_RUNNER_MAX_TENSORS];   /* each tensor's elements */
	size_t out_off[KS_RUNNER_MAX_TENSORS]; /* each output's place in a set of the runner's */
	size_t out_stride;  /* shared output file (ks_runner_out_layout), and a set's bytes there */
	int nsets;          /* rotating sets for timing */
	int ntimed_seeds;   /* distinct seeds among them: min(nsets, KS_TIMED_SEEDS) */
	unsigned char *ref[KS_SEED_SLOTS]; /* reference outputs per seed slot, NULL until computed */
	struct ks_yard_wl yard[KS_YARD_COUNT];
	double flops, bytes;
	enum ks_ref_source ref_source;
};

struct ks_evaluator {
	const struct ks_task *task;
	struct ks_eval_opts o;
	const struct ks_backend_i *be;
	struct ks_artifact ref;
	struct ks_yardstick yard[KS_YARD_COUNT];
	struct ks_artifact ref_dev; /* reference.<ext>, compiled when a workload needs it */
	int ref_py;                 /* the reference is reference.py (ks_pyref_run) */
	char runner[4096];      /* the backend's runner */
	char host_runner[4096]; /* ksearch-runner, for the reference */
	char task_hash[65];
	int nwl;
	struct ks_wl_state *wl;
	char threads_env[64], blas_threads_env[64];
	char passed_env[16384]; /* "NAME=VALUE" of the backend's sandbox needs' env */
	const char *env[16];
	unsigned long long seeds[KS_SEED_SLOTS];
	char inputs_dir[4096];  /* the input cache (src/eval/inputs.c); "" when it is off */
};

/* The timing seam: every block of samples (us) the runner reports passes through adjust
 * after the wall-clock cross-check, so a test can make the clock noisy or biased without a
 * special build.  adjust NULL (the default): samples are used as measured. */
struct ks_eval_timing_seam {
	int version; /* 1 */
	void (*adjust)(void *ctx, int is_baseline, double *samples_us, int n);
	void *ctx;
};
extern struct ks_eval_timing_seam ks_eval_timing;

/* The reference for one workload: the device one only for timed workloads of at least
 * KS_REF_DEVICE_MIN_FLOPS when the task has one; checks and everything else use reference.c.
 * flops is 0 when the task gives no flops expression. */
enum ks_ref_source ks_eval_ref_source(int have_device_ref, int is_check, double flops);
/* Cache file of the expected outputs of (task hash, workload label, seed): reference.c's
 * when device_ext is NULL, else reference.<device_ext>'s, which never share a file. */
void ks_eval_ref_cache_path(const char *task_hash, const char *label, unsigned long long seed,
			    const char *device_ext, char *out, size_t n);
/* start a runner for artifact lib with the workload's tensors set up and nsets allocated,
 * the outputs of set 0 alone in its shared output file (a yardstick's, a reference's) */
int ks_eval_open_runner(struct ks_evaluator *ev, struct ks_wl_state *ws, const char *lib,
			int nsets, int host, size_t mem_extra, struct ks_runner **out,
			struct ks_error *e);
/* The candidate's runner set up for workload ws: *cand reset and reused when it is running
 * (one process, one device init for all checks and workloads of a candidate), else a new
 * one sized for every workload of the candidate.  The runner's start steps (exec ...
 * reset, enum ks_eval_part) are added to part_s.  On failure *cand may hold the runner
 * whose fate says why (the kernel's constructors run at load). */
int ks_eval_candidate_runner(struct ks_evaluator *ev, struct ks_wl_state *ws, const char *lib,
			     int nsets, struct ks_runner **cand, double part_s[KS_PART_COUNT],
			     struct ks_error *e);
/* The input cache's directory, <cache root>/inputs/v<KS_INPUTS_VERSION>, created, into
 * out: 0, or -1 when the cache is off ($KSEARCH_NO_INPUT_CACHE set, not "0") or the
 * directory cannot be made (runners then generate every input, as without a cache). */
int ks_eval_inputs_dir(char *out, size_t n);
/* Make sure the input cache holds every input tensor of workload ws that is big enough
 * (KS_INPUT_CACHE_MIN_BYTES) for each of the evaluator's seeds: generated here, on every
 * core, and written atomically when a file is missing or of the wrong size.  Best effort:
 * a file that cannot be written is generated by the runners instead.  Called before any
 * runner is sent a fill for ws (ks_eval_workload). */
void ks_eval_inputs_ensure(struct ks_evaluator *ev, struct ks_wl_state *ws);
/* Refuse up front, before any input is generated or any runner started, a workload that
 * cannot be evaluated here: what it holds in memory at once (the candidate's and the
 * baseline's runners, the expected outputs) beyond the machine's memory, or its input and
 * reference cache files beyond the free space where the cache lives.  KS_ELIMIT naming
 * the workload and the sizes. */
int ks_eval_inputs_fit(struct ks_evaluator *ev, struct ks_error *e);
/* 1 when the task's reference is reference.py (it has no reference.c) */
int ks_task_has_pyref(const struct ks_task *t);
struct ks_proc_result;
/* Run the Python that references use (python3 or $KSEARCH_PYTHON) inside ksearch-cc-jail:
 * it reads only the system folders, the interpreter's own folders and ro (NULL: none),
 * writes only rw (its working folder), has no network, and gets memory (mem_bytes),
 * file-size and CPU limits; script_args (NULL-terminated) follow "python3 -I -B".  stdout
 * and stderr go to log.  0 when it ran, whatever its exit (see res). */
int ks_python_jailed(const char *ro, const char *rw, char *const script_args[],
		     double timeout_s, size_t mem_bytes, struct ks_buf *log,
		     struct ks_proc_result *res, struct ks_error *e);
/* reference.py's outputs of (w, seed), in task order, into out (out_bytes), run by python3
 * ($KSEARCH_PYTHON) in ksearch-cc-jail with mem_bytes of address space (pyref.c) */
int ks_pyref_run(const struct ks_task *t, const struct ks_workload *w, unsigned long long seed,
		 double timeout_s, size_t mem_bytes, unsigned char *out, size_t out_bytes,
		 struct ks_error *e);
/* reference outputs for (workload, seed slot), computed on first use */
int ks_eval_reference(struct ks_evaluator *ev, struct ks_wl_state *ws, int seed_idx,
		      struct ks_error *e);
/* The seed slots workload ws uses, in order, into slots[KS_SEED_SLOTS]: its correctness
 * seeds, then for a timed workload its timed sets' and the fresh one (those have
 * references), and with with_probes the probes' (inputs only); returns the count */
int ks_eval_seed_slots(const struct ks_evaluator *ev, const struct ks_wl_state *ws,
		       int with_probes, int *slots);
/* set s's outputs in runner r's shared output file (each output at ws->out_off[j]) */
const unsigned char *ks_eval_set_outputs(const struct ks_runner *r, const struct ks_wl_state *ws,
					 int s);
/* check + time one workload of an already compiled candidate in its runner *cand (started
 * or reused by ks_eval_candidate_runner); *cand is kept for the next workload when this one
 * PASSED, else freed and NULL */
int ks_eval_workload(struct ks_evaluator *ev, struct ks_wl_state *ws, const char *lib,
		     struct ks_runner **cand, struct ks_wl_result *res, struct ks_error *e);

/* Compile the task's library kernel for the backend into ev->yard[KS_YARD_LIBRARY] when
 * the task declares one and it builds here; otherwise leave it off with a note in the log
 * (a library that is not installed is no error).  Errors are infrastructure faults only. */
int ks_eval_library_setup(struct ks_evaluator *ev, struct ks_error *e);

/* Remove what killed evaluations left in the cache (scratch folders and temporary
 * libraries of processes that are gone); the first call does the work, later calls return
 * the same count. */
int ks_eval_sweep(void);

#endif
