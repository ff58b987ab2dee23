/* What a model-driven run (--policy llm, cmd, files) would send the model, without a run:
 * the same context, templates and budget, with a placeholder wherever a run puts its state
 * (the tree, the cycle's kernels, the measurements).  `ksearch prompt` prints it. */
#ifndef KSEARCH_PROMPT_H
#define KSEARCH_PROMPT_H

#include "ksearch/buf.h"
#include "ksearch/error.h"

struct ks_prompt_preview {
	const char *task;        /* a shipped task's name or a task folder */
	const char *backend;     /* "cpu", "cuda", "mlx" */
	const char *purpose;     /* one of ks_prompt_purposes */
	const char *flavour;     /* the kernel language written ("cuda", "metal"); NULL: what
				    this machine's runtime compiles (cuda where it compiles none) */
	const char *context;     /* none, spec, full (NULL: full) */
	const char *spec;        /* a spec name or file; NULL: detect the target here (a run's
				    --spec auto), none found: the prompt says so */
	const char *prompts_dir; /* NULL: <data root>/prompts */
	const char *workloads;   /* --workloads selection, NULL: all */
	int threads;             /* --threads (0: the OpenMP default) */
};

/* the purposes a run asks for, NULL-terminated: init, action, improve, debug, repeat,
 * edit, direct */
extern const char *const ks_prompt_purposes[];

/* Render p's prompt: the system message into system, the user message into user.
 * KS_EINVAL for an unknown purpose, backend or flavour (the message lists the known ones);
 * the task's and the templates' errors as a run reports them. */
int ks_prompt_preview(const struct ks_prompt_preview *p, struct ks_buf *system,
		      struct ks_buf *user, struct ks_error *e);

/* the kernel a run takes from reply (len bytes), a model's answer to p's prompt (a kernel
 * purpose): the code block a run extracts, in the flavour in force, as the run asks for it.
 * KS_EPARSE with the reason a run would give when the reply holds no usable kernel. */
int ks_prompt_reply_kernel(const struct ks_prompt_preview *p, const char *reply, size_t len,
			   struct ks_buf *code, struct ks_error *e);

#endif
