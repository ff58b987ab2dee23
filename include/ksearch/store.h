/* Run store: one SQLite database per run, DIR/run.db.
 *
 * Everything a run produces is recorded here as it happens: the run's options, the
 * workloads, every candidate kernel (source, identity, lineage), every evaluation (one row
 * per candidate, workload, seed and phase), a per-candidate result, versioned snapshots of
 * the world model, every LLM exchange and an event log.  `ksearch report` and `--resume`
 * read it back; nothing else is needed to reproduce or continue a run.
 *
 * Durability: the database is in WAL mode with synchronous=FULL; every ks_store_add_*
 * and ks_store_finish_* call is one transaction, committed before the call returns, so
 * killing the process (even with SIGKILL) loses no completed call (docs/store.md).
 *
 * Threads: every function may be called from any thread; one mutex serialises access to
 * the connection.  Other processes may read the database while a run writes it.  Never
 * carry an open store across fork(): close it first and open it again in the child.
 *
 * Redaction: text that may come from outside (config, logs, prompts, replies, events) goes
 * through ks_redact() before it is written; sources only lose registered secret values.
 *
 * Ownership: structs passed to ks_store_add_* are read, never kept.  Structs and arrays
 * returned by queries are one allocation each (strings included); free them with
 * ks_store_free().  Unknown doubles are NAN (NULL in the database). */
#ifndef KSEARCH_STORE_H
#define KSEARCH_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "ksearch/log.h"

/* the log of a workload result that was not run (the evaluator's ks_wl_result.not_run), as
 * the store keeps it and its readers (report, traces) recognise it */
#define KS_STORE_NOT_RUN_LOG "not run: an earlier check or workload failed"

struct ks_store;

/* size caps; longer text is cut to the cap, the row's `truncated` column says how many bytes
 * were dropped and a warning is logged (sources are never cut: they fail with KS_ELIMIT) */
#define KS_STORE_MAX_SOURCE ((size_t)1 << 20)  /* candidate source */
#define KS_STORE_MAX_LOG ((size_t)64 << 10)    /* compile and evaluation logs, event text */
#define KS_STORE_MAX_JSON ((size_t)4 << 20)    /* config, params, knobs, samples, event data
						* (never cut: KS_ELIMIT, invalid JSON: KS_EINVAL) */
#define KS_STORE_MAX_LLM ((size_t)8 << 20)     /* prompt and reply */
#define KS_STORE_MAX_SNAPSHOT ((size_t)16 << 20) /* world-model JSON (never cut: KS_ELIMIT) */

/* current schema version (the `schema_version` table lists every migration applied) */
#define KS_STORE_SCHEMA_VERSION 5

/* ---- opening ---------------------------------------------------------------------- */

/* Open DIR/run.db.  create != 0: make DIR (mkdir -p) and the database when missing;
 * create == 0: the database must exist (KS_ENOTFOUND otherwise).  Applies pending schema
 * migrations; a database from a newer ksearch fails with KS_EDB. */
int ks_store_open(const char *dir, int create, struct ks_store **out, struct ks_error *e);
/* checkpoint and close; NULL is ignored */
void ks_store_close(struct ks_store *s);
/* free anything a query returned (NULL is ignored) */
void ks_store_free(void *p);
/* number of text fields cut to their cap since open */
unsigned long ks_store_truncations(struct ks_store *s);

/* ---- the run ---------------------------------------------------------------------- */

/* The one `run` row.  On write, NULL strings become "" (config: "{}"), created is set by the
 * store and id, version and status get their defaults when NULL; on read everything is set. */
struct ks_store_run {
	const char *id;         /* run id, e.g. "20261129-173000-matmul" (generated when NULL) */
	const char *created;    /* ISO-8601 UTC, set by the store */
	const char *version;    /* ksearch version that created the run (KS_VERSION when NULL) */
	const char *task;       /* task name */
	const char *task_hash;  /* ks_task_hash() of the task, detects a changed task on resume */
	const char *backend;    /* cpu, cuda, mlx, opencl */
	const char *strategy;   /* wm, evolve, random */
	const char *policy;     /* builtin, llm, cmd */
	uint64_t seed;          /* the run's seed */
	int64_t budget;         /* total evaluated candidates */
	const char *config;     /* JSON object: every option of the run (redacted again here) */
	const char *status;     /* running (on write when NULL), finished, interrupted */
};

/* record the run row; KS_EINVAL when the database already holds one */
int ks_store_write_run(struct ks_store *s, const struct ks_store_run *run, struct ks_error *e);
/* the run row (for --resume and reports); KS_ENOTFOUND when none was written */
int ks_store_get_run(struct ks_store *s, struct ks_store_run **out, struct ks_error *e);
/* status: "running", "finished" or "interrupted" */
int ks_store_set_run_status(struct ks_store *s, const char *status, struct ks_error *e);

/* ---- workloads -------------------------------------------------------------------- */

struct ks_store_workload {
	int index;              /* position in the task's workload list (0-based) */
	const char *label;      /* "M=512 N=512 K=512" */
	const char *params;     /* JSON object of the workload's parameters */
	int is_check;           /* 1: a correctness-only `checks` entry, never timed */
};

/* insert or replace workload `index` */
int ks_store_add_workload(struct ks_store *s, const struct ks_store_workload *w,
			  struct ks_error *e);
int ks_store_list_workloads(struct ks_store *s, struct ks_store_workload **out, size_t *n,
			    struct ks_error *e);

/* ---- candidates ------------------------------------------------------------------- */

/* Evaluation statuses, stored as these exact words. */
#define KS_STORE_STATUSES(X)                                                             \
	X(PASSED) X(COMPILE_ERROR) X(RUNTIME_ERROR) X(TIMEOUT) X(MEMORY_LIMIT)            \
	X(INCORRECT_NUMERICAL) X(SANDBOX_VIOLATION) X(SUSPICIOUS)
/* 1 when name is one of KS_STORE_STATUSES */
int ks_store_status_valid(const char *name);

/* A candidate kernel.  On add: source, language and policy are required; id, created,
 * source_hash, compile_* and the result fields are ignored.  On read every field is set
 * (result fields from the 'search' phase result; final_* from the 'final' one). */
struct ks_store_candidate {
	int64_t id;              /* store-assigned, 1, 2, ... in insertion order */
	const char *created;     /* ISO-8601 UTC */
	const char *source;      /* kernel source (NULL in list results: ks_store_get_source) */
	const char *source_hash; /* sha256 hex of source, computed by the store */
	const char *language;    /* c, cuda, metal, opencl */
	int64_t parent_id;       /* candidate this one was derived from, 0 for none */
	int64_t node_id;         /* world-model node the candidate implements, < 0 for none
				  * (read back as -1) */
	const char *action;      /* title of the action it implements */
	const char *policy;      /* builtin, llm, cmd */
	const char *family;      /* template / family name ("" when none) */
	const char *knobs;       /* JSON object of knob values ({} when none) */
	const char *defines;     /* compiler defines, part of the identity ("-DBM=64 -DBN=32") */
	int round;               /* search round that produced it */
	/* set by ks_store_finish_compile */
	const char *compile_status; /* pending, ok, failed */
	const char *compile_log;    /* compiler output (NULL in list results) */
	const char *resources;      /* resource usage, e.g. "ptxas: 64 registers, 16384 smem" */
	double compile_ms;          /* compile wall time */
	/* result of the search phase (has_result == 0: not evaluated yet) */
	int has_result;
	const char *status;      /* overall status (KS_STORE_STATUSES) or NULL */
	double speedup;          /* geometric-mean speedup over timed workloads */
	/* result of the final re-measurement, when there was one */
	int has_final;
	const char *final_status;
	double final_speedup;
};

/* add a candidate (compile_status pending); *id gets its id */
int ks_store_add_candidate(struct ks_store *s, const struct ks_store_candidate *c, int64_t *id,
			   struct ks_error *e);
/* record the compile outcome: ok != 0 for success, log and resources may be NULL */
int ks_store_finish_compile(struct ks_store *s, int64_t id, int ok, const char *log,
			    const char *resources, double compile_ms, struct ks_error *e);
/* one candidate with every field (source and compile log included); KS_ENOTFOUND */
int ks_store_get_candidate(struct ks_store *s, int64_t id, struct ks_store_candidate **out,
			   struct ks_error *e);
/* append candidate id's source to out; KS_ENOTFOUND */
int ks_store_get_source(struct ks_store *s, int64_t id, struct ks_buf *out, struct ks_error *e);
/* The candidate with this source and defines (its identity), preferring one that has a
 * search result, else the oldest; *id = 0 when there is none (not an error) and
 * *has_result says whether it was evaluated, so a resumed run never evaluates twice. */
int ks_store_find_candidate(struct ks_store *s, const char *source, const char *defines,
			    int64_t *id, int *has_result, struct ks_error *e);

enum ks_store_order {
	KS_STORE_ORDER_ID,   /* insertion order */
	KS_STORE_ORDER_BEST, /* evaluated first: PASSED by speedup (final re-measurement when
			      * present) descending, then other statuses, then unevaluated; ties
			      * by id */
};
/* every candidate, without source and compile log */
int ks_store_list_candidates(struct ks_store *s, enum ks_store_order order,
			     struct ks_store_candidate **out, size_t *n, struct ks_error *e);

/* ---- evaluations and results ---------------------------------------------------- */

/* One measurement of one candidate on one workload with one seed. */
struct ks_store_eval {
	int64_t candidate_id;
	int workload;           /* workload index (must have been added) */
	uint64_t seed;          /* input seed */
	const char *phase;      /* "search" (when NULL) or "final" */
	const char *status;     /* KS_STORE_STATUSES */
	double max_abs_err;     /* against the reference */
	double max_rel_err;
	double median_us;       /* median time of the timed repetitions */
	double spread_pct;      /* interquartile range / median, percent */
	double gflops;          /* achieved GFLOP/s */
	double gbps;            /* achieved GB/s */
	double roofline_pct;    /* percent of the Spec's roofline */
	double baseline_us;     /* baseline median, same session */
	double speedup;         /* baseline_us / median_us */
	const char *samples;    /* JSON array of per-repetition times in us (NULL: []) */
	const char *log;        /* worker / runner output (redacted, capped) */
	const char *created;    /* set by the store */
	double library_us;      /* the task's library kernel's median, same session (NAN or
				   0: not timed) */
	double tol_elem;        /* what the tolerance judged, as shares of it (ks_wl_result;
				   NAN: not recorded): the worst element over atol + rtol*|want| */
	double tol_l2;          /* ... and the relative L2 error over its bound */
};

/* Record an evaluation; a second call for the same (candidate, workload, seed, phase)
 * replaces the first (a re-run after a resume). */
int ks_store_add_eval(struct ks_store *s, const struct ks_store_eval *ev, struct ks_error *e);
/* evaluations of a candidate in workload, seed order; phase NULL: every phase */
int ks_store_list_evals(struct ks_store *s, int64_t candidate_id, const char *phase,
			struct ks_store_eval **out, size_t *n, struct ks_error *e);

/* The summary of a candidate in one phase ("search" or "final"); the search-phase result
 * is what the budget counts.  Replaces an earlier result for the same phase. */
int ks_store_add_result(struct ks_store *s, int64_t candidate_id, const char *phase,
			const char *status, double speedup, struct ks_error *e);
/* candidates with a search-phase result: the budget spent so far */
int ks_store_count_evaluated(struct ks_store *s, int64_t *n, struct ks_error *e);

/* one point of the convergence curve, in the order search results were recorded */
struct ks_store_point {
	int64_t candidate_id;
	double speedup;         /* this candidate's speedup (NAN unless PASSED) */
	double best;            /* best PASSED speedup so far (NAN before the first) */
};
int ks_store_convergence(struct ks_store *s, struct ks_store_point **out, size_t *n,
			 struct ks_error *e);

/* ---- evaluations that never ended ------------------------------------------------- */

/* how many times processes that are gone may start evaluating a candidate before it is
 * recorded as failed: once for an unrelated crash or kill -9, a second time to be sure */
#define KS_STORE_MAX_EVAL_STARTS 2

/* Call right before a search-phase evaluation of candidate_id.  When earlier processes
 * started it KS_STORE_MAX_EVAL_STARTS times and none recorded a result (each time the
 * evaluation took the evaluator down), records the search result RUNTIME_ERROR ("the
 * evaluator died while evaluating it", an event of kind eval_abandoned) and sets
 * *abandoned = 1: the caller uses that result and does not evaluate.  Otherwise records
 * this start (an event of kind eval_started with this process's id) and sets
 * *abandoned = 0.  Relies on ks_run_lock: no other live process evaluates the run. */
int ks_store_begin_eval(struct ks_store *s, int64_t candidate_id, int *abandoned,
			struct ks_error *e);

/* ---- continuing a run ------------------------------------------------------------- */

/* PRAGMA quick_check: KS_EDB naming the first problem when the database is damaged */
int ks_store_check(struct ks_store *s, struct ks_error *e);
/* Take the run folder's lock (DIR/run.lock, an exclusive flock held until ks_run_unlock
 * or the process ends): KS_EINVAL when another process holds it.  *fd gets the lock. */
int ks_run_lock(const char *dir, int *fd, struct ks_error *e);
void ks_run_unlock(int fd);

/* ---- world-model snapshots ---------------------------------------------------------- */

struct ks_store_snapshot {
	int round;              /* search round */
	int version;            /* 1, 2, ... in the order snapshots were added */
	const char *json;       /* the world model's document */
	const char *created;
};

/* append a snapshot (append-only: the table refuses updates and deletes); *version may be
 * NULL */
int ks_store_add_snapshot(struct ks_store *s, int round, const char *json, int *version,
			  struct ks_error *e);
/* the newest snapshot; KS_ENOTFOUND when there is none */
int ks_store_latest_snapshot(struct ks_store *s, struct ks_store_snapshot **out,
			     struct ks_error *e);
/* every snapshot, oldest first */
int ks_store_list_snapshots(struct ks_store *s, struct ks_store_snapshot **out, size_t *n,
			    struct ks_error *e);

/* ---- LLM exchanges -------------------------------------------------------------------- */

struct ks_store_llm {
	int64_t id;             /* store-assigned, in call order */
	int round;
	const char *purpose;    /* init, edit, action, debug, improve, repair */
	const char *model;
	const char *params;     /* JSON object: temperature, max tokens, ... (NULL: {}) */
	const char *prompt;     /* redacted, capped at KS_STORE_MAX_LLM */
	const char *reply;      /* redacted, capped; NULL/"" when the call failed */
	int64_t prompt_tokens;
	int64_t completion_tokens;
	double latency_ms;
	double cost;            /* in the price table's currency, NAN when unknown */
	const char *status;     /* ok, error, timeout, ... */
	const char *error;      /* error text when status is not ok */
	const char *created;
};

int ks_store_add_llm(struct ks_store *s, const struct ks_store_llm *x, int64_t *id,
		     struct ks_error *e);
/* every exchange in call order (for --llm-replay) */
int ks_store_list_llm(struct ks_store *s, struct ks_store_llm **out, size_t *n,
		      struct ks_error *e);

/* ---- events ------------------------------------------------------------------------ */

struct ks_store_event {
	int64_t id;
	const char *ts;         /* ISO-8601 UTC */
	const char *level;      /* debug, info, warn, error */
	const char *kind;       /* short tag: "round", "worker", "resume", ... */
	const char *message;    /* one line for humans */
	const char *data;       /* JSON object with details (NULL: {}) */
};

int ks_store_add_event(struct ks_store *s, const char *level, const char *kind,
		       const char *message, const char *data_json, struct ks_error *e);
/* every event in order */
int ks_store_list_events(struct ks_store *s, struct ks_store_event **out, size_t *n,
			 struct ks_error *e);
/* a ks_log_fn that records each log line as an event of kind "log" (store = the
 * struct ks_store *): ks_log_set(ks_store_log_sink, store, KS_LOG_INFO) */
void ks_store_log_sink(enum ks_log_level level, const char *line, void *store);

/* ---- redaction ---------------------------------------------------------------------- */

/* Append text to out with anything that looks like a credential replaced by "[REDACTED]":
 * registered secret values, sk-... / ghp_... / AIza... / hf_... / xox?-... style keys,
 * "Bearer <token>" / "Basic <token>", and the value of key=value / "key": "value" pairs whose name
 * ends in key, token, secret or password (values that look like code are kept).  The rules
 * are conservative so kernel code in LLM replies survives unchanged. */
int ks_redact(const char *text, struct ks_buf *out);
/* Secret values are registered in the process's one registry: ks_secret_add,
 * ks_secret_add_env and ks_secret_clear (ksearch/secret.h). */

#endif
