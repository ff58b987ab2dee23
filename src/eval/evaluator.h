/* Private state of an evaluator, shared by the files of src/eval/. */
#ifndef KS_EVAL_EVALUATOR_H
#define KS_EVAL_EVALUATOR_H

#include "eval/runner_client.h"
#include "ksearch/backend.h"
#include "ksearch/eval.h"

#define KS_MAX_SEEDS 16

struct ks_wl_state {
	const struct ks_workload *wl;
	int index, is_check;
	size_t out_bytes;   /* all outputs of one set, concatenated */
	size_t set_bytes;   /* inputs + outputs of one set */
	int nsets;          /* rotating sets for timing */
	unsigned char *ref[KS_MAX_SEEDS]; /* reference outputs per seed, NULL until computed */
	double *base_samples; /* baseline timings (us) of the last measurement */
	int nbase;
	double flops, bytes;
};

struct ks_evaluator {
	const struct ks_task *task;
	struct ks_eval_opts o;
	const struct ks_backend_i *be;
	struct ks_artifact ref, base;
	char runner[4096];      /* the backend's runner */
	char host_runner[4096]; /* ksearch-runner, for the reference */
	char task_hash[65];
	int nwl;
	struct ks_wl_state *wl;
	char threads_env[64];
	const char *env[4];
	unsigned long long seeds[KS_MAX_SEEDS];
};

/* start a runner for artifact lib with the workload's tensors set up and nsets allocated */
int ks_eval_open_runner(struct ks_evaluator *ev, struct ks_wl_state *ws, const char *lib,
			int nsets, int host, size_t mem_extra, struct ks_runner **out,
			struct ks_error *e);
/* reference outputs for (workload, seed index), computed on first use */
int ks_eval_reference(struct ks_evaluator *ev, struct ks_wl_state *ws, int seed_idx,
		      struct ks_error *e);
/* check + time one workload of an already compiled candidate */
int ks_eval_workload(struct ks_evaluator *ev, struct ks_wl_state *ws, const char *lib,
		     struct ks_wl_result *res, struct ks_error *e);

#endif
