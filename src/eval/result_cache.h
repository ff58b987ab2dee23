/* The results cache: evaluations kept across runs, so a later run (or another run of the
 * same task) does not compile, check and time again what an earlier one measured.  One
 * SQLite file under the cache root, $KSEARCH_CACHE/results/results.sqlite (ks_results_path); an
 * entry is keyed by everything that decides the result: the kernel's source, its knob
 * values, the task's content (task.yaml with its workloads, the reference), the workload
 * selection and timing options, the backend, the compiler and the machine. */
#ifndef KS_EVAL_RESULT_CACHE_H
#define KS_EVAL_RESULT_CACHE_H

#include <stddef.h>

#include "ksearch/error.h"

struct ks_eval_result;
struct ks_results;

/* what identifies an evaluation (each may be NULL: "") */
struct ks_results_key {
	const char *source;    /* the kernel's text */
	const char *defines;   /* knob values, "A=1,B=2" */
	const char *task_hash; /* ks_task_hash(): task.yaml, workloads, reference, templates */
	const char *backend;   /* "cpu" */
	const char *compiler;  /* compiler and flags as the backend runs it */
	const char *options;   /* the evaluation options that change the result (JSON) */
};

/* the file, "<cache root>/results/results.sqlite"; 0, or KS_ELIMIT when the path does not fit */
int ks_results_path(char *out, size_t n);
/* open (create) the cache; the caller closes it */
int ks_results_open(struct ks_results **out, struct ks_error *e);
void ks_results_close(struct ks_results *c);
/* the entry's key: SHA-256 over k's fields and this machine's fingerprint (CPU model, cores,
 * memory) */
void ks_results_key_hex(const struct ks_results_key *k, char out[65]);
/* 1 and *res filled (the caller releases it) and *age_s set when key is cached, 0 when not
 * (or the entry is unreadable: it is then treated as missing) */
int ks_results_get(struct ks_results *c, const char *key, struct ks_eval_result *res,
		   double *age_s);
/* keep res under key (an existing entry is replaced) */
int ks_results_put(struct ks_results *c, const char *key, const struct ks_eval_result *res,
		   struct ks_error *e);

#endif
