/* What a model is told that does not change during a run: the task (with the ABI of the
 * kernel file in the flavour in force), its reference source, the target's facts, the
 * knowledge the --context level adds, and the starting kernel.  The llm/cmd/files policies
 * and `ksearch prompt` build it the same way, so the preview is what a run sends.
 *
 * Context follows the target: kernels on the host CPU get the CPU's facts (cores, SIMD
 * lanes, caches, measured bandwidth, the OpenMP threads in force), device kernels the
 * device's; the seeds' translation layer (concept map, the task's highest-rated CUDA kernel
 * that fits and its translation) goes only to backends whose kernels carry CUDA expertise
 * over (mlx). */
#ifndef KS_POLICY_LLM_CONTEXT_H
#define KS_POLICY_LLM_CONTEXT_H

#include "ksearch/backend.h"
#include "ksearch/eval.h"
#include "ksearch/buf.h"
#include "ksearch/knowledge.h"
#include "ksearch/llm.h"
#include "ksearch/task.h"

#define KS_LLM_EXPERT_MAX ((size_t)32 << 10) /* a larger CUDA kernel is not shown whole */
#define KS_LLM_BASELINE_SHOWN 2048 /* a baseline file other than the start, shown up to this */

struct ks_llm_context_opts {
	const struct ks_task *task;
	const struct ks_backend_i *be;
	const struct ks_spec *spec;   /* the target's spec, NULL when none is known */
	const char *flavour;          /* kernel language in force; NULL: the backend's here */
	enum ks_context_level level;  /* --context */
	const char *workloads;        /* --workloads selection (NULL: all) */
	int threads;                  /* --threads (0: the OpenMP default) */
	/* the run's search-phase evaluation (seeds, timing), told as the rules of the game;
	 * NULL: a run's defaults (ks_run_opts_init) */
	const struct ks_eval_opts *eval;
};

struct ks_llm_context {
	char flavour[16];          /* the kernel language written: "c", "cuda", "metal" */
	struct ks_buf task;        /* summary, ABI, tensors, tolerance, workloads, checks, README */
	struct ks_buf reference;   /* the reference implementation's source */
	struct ks_buf hardware;    /* the target's facts (--context spec and full) */
	struct ks_buf translation; /* --context full: patterns, assertions, translation layer */
	struct ks_buf start;       /* the starting kernel's source */
	char start_file[64];       /* its file in the task folder ("baseline.c") */
	/* what it is, for "the starting kernel (...)": its file, whether it is the baseline,
	 * whether it was timed ("baseline.c of the task: the baseline itself, 1.0x ...") */
	char start_what[512];
	const char *reply_file;    /* what a reply's code block holds (the backend's phrase) */
	const char *knob_use;      /* how a kernel gives its knobs their values (the same) */
};

/* KS_EINVAL for a flavour the backend does not write (a message saying which it does);
 * errors reading the task's files.  c is initialised either way; release it. */
int ks_llm_context_open(struct ks_llm_context *c, const struct ks_llm_context_opts *o,
			struct ks_error *e);
void ks_llm_context_release(struct ks_llm_context *c);

/* q asks for a kernel as a run does: the code block of the flavour's language, at most a
 * kernel source's size (the run's kernel prompts and `ksearch prompt --reply`) */
void ks_llm_context_want_code(const struct ks_llm_context *c, struct ks_llm_ask *q);

/* the task section: summary, the ABI of flavour, tensors, tolerance, workloads and checks in
 * plain words, how a kernel is scored (against what, timed how), the README (llm_task.c);
 * ev: the run's evaluation options, start_file: the starting kernel's file */
void ks_llm_task_text(const struct ks_llm_context_opts *o, const char *flavour,
		      const struct ks_eval_opts *ev, const char *start_file, struct ks_buf *out);
/* md into out with its headings levels down ("## x" -> "#### x" for 2), fenced code left
 * alone, so a document inside a prompt section starts no section of the prompt */
void ks_llm_add_demoted(struct ks_buf *out, const char *md, int levels);

/* the knowledge of --context full for o's target (exposed for tests) */
int ks_llm_context_knowledge(const struct ks_llm_context_opts *o, const char *flavour,
			     struct ks_buf *out, struct ks_error *e);

#endif
