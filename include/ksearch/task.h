/* Tasks: what a kernel must compute (task.yaml), on which shapes, and how it is checked.
 * See docs/tasks.md for the file format. */
#ifndef KSEARCH_TASK_H
#define KSEARCH_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"

#define KS_MAX_DIMS 8

enum ks_dtype { KS_DT_F32, KS_DT_F64, KS_DT_F16, KS_DT_BF16, KS_DT_I32, KS_DT_I64 };
#define KS_NDTYPES 6 /* how many dtypes there are (the size of ks_abi.ctype) */

size_t ks_dtype_size(enum ks_dtype t);
/* "f32", "f64", "f16", "bf16", "i32", "i64" */
const char *ks_dtype_name(enum ks_dtype t);
/* 0 on success, KS_EPARSE for an unknown name */
int ks_dtype_parse(const char *name, enum ks_dtype *out);

/* Element initialiser: a small fixed vocabulary, see ks_init_parse(). */
enum ks_init_kind {
	KS_INIT_NORMAL,          /* normal(mean, std) */
	KS_INIT_UNIFORM,         /* uniform(lo, hi) */
	KS_INIT_SOFTPLUS_NORMAL, /* softplus(normal(mean, std)) */
	KS_INIT_NEG_EXP_NORMAL,  /* -exp(normal(mean, std)) */
	KS_INIT_RANDINT,         /* randint(lo, hi): integers in [lo, hi) */
	KS_INIT_CONST,           /* a number */
};

struct ks_init {
	enum ks_init_kind kind;
	double a, b; /* the two arguments (mean/std, lo/hi, value/unused) */
};

/* parse "normal(0, 3)", "uniform(-1,1)", "softplus(normal(0,1))", "-exp(normal(0,1))",
 * "randint(0, 10)", "0.5"; *errcol gets the 1-based column of a syntax error */
int ks_init_parse(const char *text, struct ks_init *out, int *errcol, struct ks_error *e);
/* Version of the input generator (RNG and initialisers): part of every cache key built on
 * generated inputs (reference outputs), so a change here never reuses stale references.
 * Bump it whenever ks_init_fill's output changes. */
#define KS_INPUTS_VERSION 2

/* Fill n elements of dtype t at dst.  Element i's value depends only on (key, seed, i), so
 * any process regenerates the same tensor; key comes from ks_tensor_key(). */
void ks_init_fill(const struct ks_init *init, enum ks_dtype t, void *dst, size_t n,
		  uint64_t key, uint64_t seed);
/* The same values for elements [start, start + n) only (dst is still element 0): lets
 * several threads fill one tensor, each its own range, with the very same result. */
void ks_init_fill_range(const struct ks_init *init, enum ks_dtype t, void *dst, size_t start,
			size_t n, uint64_t key, uint64_t seed);
/* ks_init_fill split over the cores this process may run on (big tensors: generation
 * dominates the evaluation of large workloads); the very same bytes as ks_init_fill. */
void ks_init_fill_parallel(const struct ks_init *init, enum ks_dtype t, void *dst, size_t n,
			   uint64_t key, uint64_t seed);

struct ks_param {
	char *name;
	enum ks_dtype dtype; /* i32, i64, f32 or f64 */
};

struct ks_tensor_decl {
	char *name;
	enum ks_dtype dtype;
	int ndim;
	char *shape[KS_MAX_DIMS]; /* expressions over params, e.g. "rows", "batch*heads" */
	char *init;               /* initialiser text (inputs only; outputs: NULL) */
	int is_output;
};

struct ks_workload {
	char *name;     /* checks: their name; timed workloads: NULL (see ks_workload_label) */
	double *values; /* one per task param, in declaration order */
	char **init;    /* per tensor (task order): initialiser override or NULL */
	char **backends; /* NULL-terminated list of backends it is restricted to, or NULL: all */
	int line;       /* where it is declared in task.yaml (1-based) */
};

/* A vendor library's version of the task on one backend (task.yaml's `library` map; the
 * kernel is the task's library.<ext>), timed beside the baseline as a second yardstick */
struct ks_task_library {
	char *backend; /* "cpu" */
	char *name;    /* what speedups are measured against: "OpenBLAS" */
	char *pkg;     /* pkg-config package its compile and link flags come from, or NULL */
	/* link flags after the sources, or NULL: only -lNAME and -L<folder inside the task's
	 * own>, the folder made absolute ("-lcublas", "-L/abs/task/lib") */
	char *libs;
	/* functions `const char *f(void)` of the library that say what it runs here, asked
	 * before it is timed (NULL-terminated, or NULL): the first answer (OpenBLAS's core)
	 * labels the yardstick, the rest goes to the log */
	char **describe;
	/* the variable that picks the library's core (OPENBLAS_CORETYPE), or NULL; passed to
	 * the runners as the user has it */
	char *core_var;
	/* by CPU flag, widest vector ISA first: the cores that use it.  Where the CPU has the
	 * flag and the library describes another core, it runs a fallback, and the first of
	 * these is asked for through core_var instead (unless the user set it) */
	struct ks_task_core_fit {
		char *flag;   /* "avx512f", as /proc/cpuinfo says it */
		char **cores; /* NULL-terminated: "SkylakeX", "Cooperlake" */
	} *fit;
	int nfit;
};

struct ks_task {
	char *name;
	char *cls;       /* reduction | scan | attention | matmul | elementwise | moe | ... */
	char *summary;
	char *dir;       /* the task folder */
	char *yaml_path; /* dir/task.yaml */
	char *readme;    /* README.md text or NULL */
	int nparams;
	struct ks_param *params;
	int ntensors; /* inputs first (declaration order), then outputs */
	int ninputs;
	struct ks_tensor_decl *tensors;
	char *flops; /* expression over params */
	char *bytes; /* expression over params */
	double atol, rtol;
	double l2;   /* bound on ||got - want||_2 / ||want||_2; defaults to max(rtol, 1e-6) */
	int nworkloads;
	struct ks_workload *workloads;
	int nchecks;
	struct ks_workload *checks;
	int nlibraries;
	struct ks_task_library *libraries;
};

/* the task's library for backend, or NULL when it declares none */
const struct ks_task_library *ks_task_library_for(const struct ks_task *t, const char *backend);

/* Load a task from a folder path, or by name from <data root>/tasks/<name>.  Every error in
 * task.yaml is reported as "FILE:LINE:COL: what was expected". */
int ks_task_load(const char *name_or_dir, struct ks_task **out, struct ks_error *e);
void ks_task_free(struct ks_task *t);
/* names of the shipped tasks (sorted); free with ks_strv_free */
int ks_task_list(char ***names, int *n, struct ks_error *e);
void ks_strv_free(char **v, int n);

/* true when workload w applies to backend name */
int ks_workload_for_backend(const struct ks_workload *w, const char *backend);
/* how many of t's timed workloads apply to backend (what --workloads indexes count) */
int ks_task_timed_count(const struct ks_task *t, const char *backend);
/* "rows=4096 cols=4096" (checks: "name (rows=5 cols=1)") */
void ks_workload_label(const struct ks_task *t, const struct ks_workload *w, struct ks_buf *out);
/* evaluate an expression with the workload's params bound (flops, bytes, shapes, ...) */
int ks_workload_expr(const struct ks_task *t, const struct ks_workload *w, const char *expr,
		     double *out, struct ks_error *e);
/* dims and element count of tensor i under workload w */
int ks_workload_shape(const struct ks_task *t, const struct ks_workload *w, int i,
		      int64_t dims[KS_MAX_DIMS], size_t *numel, struct ks_error *e);
/* the initialiser tensor i uses under w (override or the task default) */
const char *ks_workload_init(const struct ks_task *t, const struct ks_workload *w, int i);
/* stable 64-bit stream key for (task, workload params, tensor name) */
uint64_t ks_tensor_key(const struct ks_task *t, const struct ks_workload *w, int i);

/* How a kernel language writes the task-named entry point (docs/abi.md): the data the
 * prototype and the shim are generated from, so no code compares language names.  A backend
 * points to one (ks_backend_i.abi); src/backend/ holds them.  NULL fields mean "nothing". */
struct ks_abi {
	const char *lang;               /* "c", "cuda", "metal": the name prompts and tasks show use */
	const char *ctype[KS_NDTYPES];  /* spelling of each dtype (tensor elements and params) */
	const char *ret;                /* before the name; NULL: "void" ("kernel void" for metal) */
	const char *tensor_space;       /* before a tensor pointer's type: its address space ("device ") */
	const char *param_space;        /* NULL: params by value; else by reference in this space ("constant ") */
	const char *slot_attr;          /* after each tensor and param, with "%d" its slot (" [[buffer(%d)]]") */
	const char *stream_type;        /* a last "T stream" parameter, cast by the shim; NULL: none */
	const char *trailing;           /* a last parameter the backend's dispatch fills in; NULL: none */
	int no_shim;                    /* 1: the backend dispatches kernels itself; no ks__entry_v1 shim */
	const char *shim_includes;      /* lines the shim starts with after <stdint.h> */
	const char *shim_linkage;       /* before ks__entry_v1 ("extern \"C\" " from C++) */
	/* optional: write the prototype another way (say kernels that are a body plus a launch
	 * block); NULL: the C-style signature from the fields above */
	int (*prototype)(const struct ks_abi *abi, const struct ks_task *t, struct ks_buf *out);
};

/* The exact entry-point prototype a kernel must define in abi's language (with its ';').
 * KS_EINVAL for a NULL abi, KS_ELIMIT when out is full. */
int ks_abi_prototype(const struct ks_abi *abi, const struct ks_task *t, struct ks_buf *out);
/* Source of the generated shim that defines
 *     void ks__entry_v1(void **tensors, const double *params, void *stream)
 * and calls the task-named entry point with typed arguments (tensors in task order, params
 * converted to their declared types, the stream last when the ABI takes one).  KS_EINVAL for
 * a NULL abi or one without a shim. */
int ks_abi_shim(const struct ks_abi *abi, const struct ks_task *t, struct ks_buf *out);
/* content hash of task.yaml + reference.c (+ reference.py where there is one), + each of
 * extra_files (a NULL-terminated list of names in the task folder; those that exist) */
int ks_task_hash_files(const struct ks_task *t, const char *const *extra_files, char out[65],
		       struct ks_error *e);

/* Comparison of a candidate's output against the reference output (same dtype). */
struct ks_compare {
	double max_abs_err;
	double max_rel_err;
	double rel_l2;      /* ||got - want||_2 / max(||want||_2, atol*sqrt(n)) over finite pairs */
	/* max_rel_err is over elements with |want| > atol */
	size_t nbad;        /* elements outside atol + rtol*|want| */
	size_t nonfinite;   /* NaN/Inf in got where want is finite */
	/* what the tolerance judged, as shares of it (passed: both at most 1): the worst
	 * element's |got - want| / (atol + rtol*|want|) (inf for a non-finite mismatch), and
	 * rel_l2 / l2 */
	double tol_elem, tol_l2;
	int passed;
	char detail[512];   /* first mismatches: "y[3] = nan, expected 0.125; ..." */
};

/* the worse of *elem, *l2 and c's tol_elem, tol_l2 into them (over outputs and seeds) */
void ks_compare_tol_fold(const struct ks_compare *c, double *elem, double *l2);
/* allclose (|got-want| <= atol + rtol*|want|) on every element, plus rel_l2 <= l2;
 * NaN or Inf never pass unless the reference has the same non-finite value */
void ks_compare_tensors(enum ks_dtype t, const void *got, const void *want, size_t n,
			const char *name, double atol, double rtol, double l2,
			struct ks_compare *out);
/* The same on up to `threads` threads (<= 0: the cores it may run on).  Elements are taken in
 * fixed chunks of KS_COMPARE_CHUNK, summarised per chunk and combined in chunk order, so
 * every field of out is bit-identical for any thread count (ks_compare_tensors: all cores) */
#define KS_COMPARE_CHUNK ((size_t)1 << 18)
void ks_compare_tensors_n(enum ks_dtype t, const void *got, const void *want, size_t n,
			  const char *name, double atol, double rtol, double l2, int threads,
			  struct ks_compare *out);

/* scalar conversions (f16/bf16 stored as uint16_t bit patterns); stores round to nearest
 * even, integers are rounded and clamped */
double ks_dtype_load(enum ks_dtype t, const void *base, size_t i);
void ks_dtype_store(enum ks_dtype t, void *base, size_t i, double v);
/* Fill n elements with the poison pattern: a NaN with a recognisable payload for floats,
 * 0xA5 bytes for integers.  Outputs are poisoned before each run so an element the kernel
 * never wrote is caught (and named "poison" by ks_compare_tensors). */
void ks_dtype_poison(enum ks_dtype t, void *base, size_t n);
/* true when element i still holds the poison pattern */
int ks_dtype_is_poison(enum ks_dtype t, const void *base, size_t i);

/* Read a kernel source file into out (at most max bytes, includes counted): KS_EINVAL for
 * anything but a regular file (a FIFO, a directory, a device) and for a file with a NUL
 * byte; each `// @ksearch include: PATH` line (PATH relative to the file's folder, one level
 * deep) replaced by that file's text, KS_EPARSE with file:line:col for a bad one. */
int ks_kernel_source_read(const char *path, size_t max, struct ks_buf *out,
			  struct ks_error *e);

#endif
