/* The mlx backend's kernel file and the artifact the runner loads (docs/mlx.md).
 *
 * A kernel file is an MLX custom-kernel *body* (MLX writes the signature) plus `// @mlx`
 * directive lines that say how it is launched:
 *
 *   // @mlx flavour: cuda                     cuda | metal | native
 *   // @mlx grid: rows * 32, 1, 1             threads, not blocks; expressions over params
 *   // @mlx threadgroup: 256, 1, 1
 *   // @mlx template: TILE = 64               more template args (params and knobs are
 *                                             passed already); repeatable
 *   // @mlx init: nan                         nan (default), none, or an expression
 *   // @mlx shared_memory: 0                  dynamic shared memory bytes (cuda)
 *   // @mlx native: softmax                   flavour native: the MLX op (no body)
 *   // @mlx header                            the lines up to "// @mlx body" are the header
 *   // @mlx include: PATH                     (in the header) a file of the task's folder,
 *                                             resolved when the artifact is written
 *   // @mlx body                              the rest of the file is the body
 *   #define NAME VALUE                        (before header and body) a template arg: how
 *                                             a run's best.mlx keeps its knob values
 *
 * The artifact is what the backend's compile step writes and ksearch-runner-mlx reads: the
 * task's params and tensors (names, dtypes, shapes as expressions), the knob values, the
 * number of chained calls per timed eval, then the kernel file verbatim.  Both files are
 * parsed here, in plain C with src/util/expr.c only, so the runner links this file too. */
#ifndef KS_BACKEND_MLX_KERNEL_H
#define KS_BACKEND_MLX_KERNEL_H

#include <stddef.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "ksearch/task.h"

#define KS_MLX_MAX_TEMPLATE 32
#define KS_MLX_MAX_TENSORS 32
#define KS_MLX_MAX_PARAMS 32
#define KS_MLX_NAME 64
#define KS_MLX_EXPR 256
#define KS_MLX_MAX_CHAIN 64 /* calls per timed eval */
#define KS_MLX_ARTIFACT_MAGIC "ksearch-mlx-artifact 1"
#define KS_MLX_HEADER_FILE "header.cuh" /* beside the artifact, with header_file */

enum ks_mlx_flavour { KS_MLX_NATIVE, KS_MLX_CUDA, KS_MLX_METAL };

/* one `template:` line: NAME = expression (or a dtype name f32/f16/bf16, true, false) */
struct ks_mlx_tdecl {
	char name[KS_MLX_NAME];
	char expr[KS_MLX_EXPR];
	int line;
	/* 1: a leading `#define NAME VALUE` line (a knob's value as the file runs as written),
	 * which a define of the same name replaces (the knob tuning's values) */
	int from_define;
};

struct ks_mlx_kernel {
	enum ks_mlx_flavour flavour;
	int have_flavour;
	char native[KS_MLX_NAME];       /* flavour native: the op ("softmax") */
	char grid[3][KS_MLX_EXPR];      /* threads per axis */
	char threadgroup[3][KS_MLX_EXPR];
	int ntemplate;
	struct ks_mlx_tdecl tmpl[KS_MLX_MAX_TEMPLATE];
	char init[KS_MLX_EXPR];         /* "nan", "none" or an expression */
	char shared_memory[KS_MLX_EXPR];
	char *header;                   /* text between "@mlx header" and "@mlx body", compacted */
	char *body;                     /* text after "@mlx body", compacted */
	int body_line;                  /* 1-based line of the body's first line */
};

/* Parse a kernel file.  Errors read "LINE:COL: what was expected" (0 for the whole file),
 * KS_EPARSE.  k is zeroed first; release it either way. */
int ks_mlx_kernel_parse(const char *text, struct ks_mlx_kernel *k, struct ks_error *e);
void ks_mlx_kernel_release(struct ks_mlx_kernel *k);

/* Compact C, C++, CUDA or Metal source in place: comments, indentation and blank runs go,
 * every line stays (the line numbers of compiler messages are the file's), literals are
 * untouched.  What MLX is handed: it copies and hashes the whole text on every call
 * (mlx_compact.c). */
void ks_mlx_compact(char *text);
const char *ks_mlx_flavour_name(enum ks_mlx_flavour f);

struct ks_mlx_tensor {
	char name[KS_MLX_NAME];
	int is_output;
	enum ks_dtype dtype;
	int ndim;
	char shape[KS_MAX_DIMS][KS_MLX_EXPR];
};

/* how a timed eval is measured: the wall clock around it (MLX's way), or CUDA events on
 * MLX's stream before and after it (the cross-check; the wall clock where there is no
 * CUDA backend) */
enum ks_mlx_timer { KS_MLX_TIMER_WALL, KS_MLX_TIMER_EVENTS };

struct ks_mlx_artifact {
	char task[KS_MLX_NAME];
	int chain; /* calls per timed eval (>= 1) */
	enum ks_mlx_timer timer;
	/* 1 (KSEARCH_MLX_HEADER=file, CUDA kernels): MLX is handed `#include "DIR/header.cuh"`
	 * for the header, DIR the artifact's folder, where the backend wrote the compacted
	 * header: MLX copies and hashes a kernel's whole text on every call (docs/mlx.md) */
	int header_file;
	int nparams;
	char params[KS_MLX_MAX_PARAMS][KS_MLX_NAME];
	int ntensors; /* task order: inputs, then outputs */
	struct ks_mlx_tensor tensors[KS_MLX_MAX_TENSORS];
	int ndefines; /* knob values, NAME=VALUE */
	char defines[KS_MLX_MAX_TEMPLATE][2][KS_MLX_NAME];
	struct ks_mlx_kernel kernel;
};

/* The artifact text for task t, kernel file source and knob defines ("NAME=VALUE"): what
 * the backend's compile step writes, with the source's includes resolved (implemented in
 * mlx.c: the library only, the runner has no tasks).  An include that does not resolve is
 * KS_EPARSE with "LINE:COL: ..." (the candidate's fault). */
int ks_mlx_artifact_write(const struct ks_task *t, const char *source,
			  const char *const *defines, int chain, enum ks_mlx_timer timer,
			  int header_file, struct ks_buf *out, struct ks_error *e);

/* Append source to out with each `// @mlx include: PATH` line of its header replaced by
 * the file task_dir/PATH (inside task_dir), between `#define NAME VALUE` and `#undef NAME`
 * lines for the knob values: defines ("NAME=VALUE") and the file's leading #define lines
 * (mlx_include.c; library only).  Errors are KS_EPARSE "LINE:COL: ...". */
int ks_mlx_resolve_includes(const char *task_dir, const char *source,
			    const char *const *defines, struct ks_buf *out, struct ks_error *e);

/* 1 where MLX gets the artifact's header as `#include "FOLDER/" KS_MLX_HEADER_FILE`: asked for
 * (header_file) and a CUDA kernel, NVRTC being what reads the file; the backend writes the
 * file and the runner the include by this one rule */
int ks_mlx_header_in_file(const struct ks_mlx_artifact *a);

/* parse an artifact (heap-allocate a: it is large); release with ks_mlx_artifact_release */
int ks_mlx_artifact_parse(const char *text, struct ks_mlx_artifact *a, struct ks_error *e);
void ks_mlx_artifact_release(struct ks_mlx_artifact *a);

/* A template argument with its value for one workload. */
enum ks_mlx_targ_kind { KS_MLX_TARG_INT, KS_MLX_TARG_BOOL, KS_MLX_TARG_DTYPE };
struct ks_mlx_targ {
	char name[KS_MLX_NAME];
	enum ks_mlx_targ_kind kind;
	int value; /* the int, 0/1, or an enum ks_dtype */
};

/* Everything one call needs, evaluated for one workload's params. */
struct ks_mlx_launch {
	int grid[3], threadgroup[3];
	int ntargs;
	struct ks_mlx_targ targs[KS_MLX_MAX_TEMPLATE + KS_MLX_MAX_PARAMS];
	int has_init;
	double init;
	int shared_memory;
	int shape[KS_MLX_MAX_TENSORS][KS_MAX_DIMS]; /* per tensor, ndim from the artifact */
};

/* Evaluate the launch of artifact a under params (one per a->params, in order): the
 * task's params and the knob values become template args, then the `template:` lines.
 * Native kernels get shapes only.  Errors name the directive and the expression. */
int ks_mlx_launch_resolve(const struct ks_mlx_artifact *a, const double *params,
			  struct ks_mlx_launch *out, struct ks_error *e);

#endif
