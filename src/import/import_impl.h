/* What the importers share: a format-neutral description of the problem they read, written
 * out as a task folder by one function (import_write.c), which also generates the naive C
 * baseline and a knob template when the problem is an operator it recognises. */
#ifndef KS_TASK_IMPORT_IMPL_H
#define KS_TASK_IMPORT_IMPL_H

#include "ksearch/buf.h"
#include "ksearch/import.h"
#include "ksearch/task.h"

#define IMP_MAX 24           /* params, tensors */
#define IMP_NAME 64
#define IMP_EXPR 192         /* a dimension: a param, a number or an expression of params */
#define IMP_WARN_BYTES ((double)(4ULL << 30)) /* a workload this big is worth a warning */

struct imp_param {
	char name[IMP_NAME];
	const char *type; /* "i32", "i64", "f32" */
};

struct imp_tensor {
	char name[IMP_NAME];
	const char *dtype; /* a ksearch dtype name */
	int ndim;
	char shape[KS_MAX_DIMS][IMP_EXPR]; /* expressions of params */
	const char *init;                  /* inputs: an initialiser */
	int is_output;
};

/* the operators a baseline and a template can be generated for (all f32, contiguous) */
enum imp_op_kind {
	IMP_OP_NONE,
	IMP_OP_UNARY,   /* y = f(x) elementwise: one input, one output of its shape */
	IMP_OP_SOFTMAX, /* y = softmax(x) over the last axis */
	IMP_OP_RMSNORM, /* y = x / sqrt(mean(x^2 over the last axis) + eps) * w */
};

struct imp_op {
	enum imp_op_kind kind;
	char name[32];      /* "relu", "softmax", "rmsnorm" */
	const char *c_expr;  /* unary: the value in C of float ks_v */
	const char *np_expr; /* unary: the value in numpy of array v */
};

struct imp_task {
	char name[IMP_NAME * 2];
	char summary[256];
	char cls[32];
	char origin[64]; /* "flashinfer-bench", "KernelBench" */
	const char *source; /* the user's problem file, named in errors */
	int nparams;
	struct imp_param params[IMP_MAX];
	int ntensors; /* inputs first, then outputs */
	struct imp_tensor tensors[IMP_MAX];
	int nworkloads;
	int cap_workloads;          /* rows allocated in values */
	double (*values)[IMP_MAX];  /* per workload, per param (imp_workload_row) */
	struct imp_op op;
	char shipped[IMP_NAME];     /* a shipped task whose kernels compute this problem, or "" */
	char flops[4096];           /* the flops expression, "" for the op's own (or 0) */
	double atol, rtol, l2;      /* the tolerance; atol 0: by the dtypes */
	struct ks_buf kernel_head;  /* a generated naive kernel: its includes, */
	struct ks_buf kernel_body;  /* and the body of its entry point ("": none) */
	unsigned fixed;             /* bit i: param i keeps its value in the generated check */
	char sidecar_name[32];      /* one more file for the folder ("": none), */
	struct ks_buf sidecar;      /* and its text */
	struct ks_buf reference; /* reference.py up to its reference() (see imp_reference_tail) */
	struct ks_buf readme;
};

void imp_task_init(struct imp_task *it);
/* the values of workload row w (it->nworkloads rows are in use), grown as needed; NULL when
 * out of memory */
double *imp_workload_row(struct imp_task *it, int w);
void imp_task_release(struct imp_task *it);
/* a C identifier the task loader accepts from text into out: lower case, one '_' for each
 * run of other characters and none at either end, "task" when nothing is left, the prefix
 * when it starts with a digit or is a C keyword or a reserved name; at most 64 characters */
void imp_identifier(const char *text, const char *prefix, char *out, size_t n);
/* the op called name (relu, sigmoid, tanh, softmax, rmsnorm), or NULL */
const struct imp_op *imp_op_find(const char *name);
/* 0 when the task's tensors and params have the shape the op needs (else an explanation in
 * why) */
int imp_op_fits(const struct imp_task *it, char *why, size_t n);
/* start it->reference: the problem's code in _KS_SOURCE (what names it in tracebacks, a
 * Python string literal) and the helpers _ks_module(), _ks_wants_torch(), _ks_have_torch()
 * and _ks_torch(); the importer then defines _ks_torch_reference(kw) and
 * _ks_plain_reference(kw), imp_numpy_form the numpy form, imp_write reference() */
void imp_reference_prelude(struct imp_task *it, const char *source, const char *what);
/* append to it->reference the numpy form of the recognised op as
 * _ks_numpy_reference(kw), or "_ks_numpy_reference = None" */
void imp_numpy_form(struct imp_task *it);
/* write the task folder out_dir/<name>: task.yaml, reference.py, README.md, and for a
 * recognised op baseline.c and templates/cpu/<op>.c.  It is written in a temporary folder
 * beside it, loaded back to validate and only then renamed into place: a failed import
 * leaves nothing behind.  Names that collide are an error naming it->source; workloads
 * whose tensors need more than IMP_WARN_BYTES are a "warning: " line of res->note. */
int imp_write(struct imp_task *it, const char *out_dir, struct ks_import_result *res,
	      struct ks_error *e);

extern const struct ks_importer_i ks_importer_flashinfer;
extern const struct ks_importer_i ks_importer_kernelbench;

#endif
