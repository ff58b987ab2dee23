/* Knob templates: kernel source whose comment holds a YAML block
 *
 *   / * @ksearch
 *   family: tiled-online-softmax
 *   summary: K/V tiles in shared memory, online softmax, one query block per CTA
 *   rating: 7                      (0-10, prior of the family action; default 5)
 *   difficulty: 3                  (1-5; default 3)
 *   knobs:
 *     BLOCK_M: {values: [32, 64, 128], default: 64, summary: "...",
 *               impacts: {memory_bandwidth: 7, register_pressure: 5, compute_hw_fit: 0}}
 *     SCHED: {values: [static, dynamic]}
 *   require:
 *     - "(BLOCK_M + 2*BLOCK_N) * D * 2 <= spec.smem_per_block"
 *   @end * /
 *
 * The block starts on the line after "@ksearch" and ends where "@end" is; its lines are
 * plain YAML (no per-line comment prefix).  Errors say "FILE:LINE:COL: ..." with the line
 * of the source file.  Knob values reach the kernel as -DNAME=VALUE.  A configuration is one
 * value index per knob (int cfg[nknobs]); `require` expressions (src/util/expr.h) see the
 * knobs by name (non-numeric values evaluate to their index) and everything else (workload
 * params, "spec.X" fields) through a caller callback; a configuration is feasible when every
 * expression is non-zero for every workload. */
#ifndef KSEARCH_TEMPLATE_H
#define KSEARCH_TEMPLATE_H

#include <stddef.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "ksearch/impact.h"

#define KS_TEMPLATE_MAX_KNOBS 16
#define KS_TEMPLATE_MAX_VALUES 64
#define KS_TEMPLATE_MAX_REQUIRE 64
#define KS_TEMPLATE_MAX_CONFIGS 1000000L /* cap on the raw configuration space */
#define KS_TEMPLATE_MAX_SOURCE ((size_t)4 << 20)

struct ks_knob {
	char *name;     /* a C identifier, the -D name */
	char *summary;  /* or NULL */
	int nvalues;
	char **values;  /* as written: "64", "dynamic" */
	double *nums;   /* numeric value of each, or its index when not a number */
	int def;        /* index of the default value */
	double impacts[KS_IMPACT_COUNT]; /* 0-10: how much this knob moves each axis */
	int line;       /* where the knob is declared (1-based source line) */
};

struct ks_require {
	char *expr; /* expression text */
	int line;   /* 1-based source line of the expression */
	int col;    /* 1-based source column of its first character */
};

struct ks_template {
	char *path;     /* file it was loaded from (or the name given to ks_template_parse) */
	char *family;   /* family name: the depth-1 action's title */
	char *summary;  /* one line, or NULL */
	double rating;  /* prior overall rating 0-10 */
	int difficulty; /* 1-5 */
	int nknobs;
	struct ks_knob *knobs;
	int nrequire;
	struct ks_require *require;
	char *source;   /* the whole file text */
	size_t source_len;
	int block_line; /* line of "@ksearch" */
};

/* a set of configurations of one template, in ascending index order */
struct ks_config_set {
	int nknobs;
	int n;
	int *cfg;    /* n * nknobs value indices */
	long *index; /* the configuration index of each (see ks_template_config_at) */
};

/* one knob one step up or down */
struct ks_knob_move {
	int knob;
	int from; /* value index before */
	int to;   /* value index after (from +- 1) */
};

/* Resolve a name that is not a knob (workload param, "spec.X") for workload w: return 0 and
 * set *out, or KS_ENOTFOUND.  w is -1 when there are no workloads. */
typedef int (*ks_template_lookup_fn)(int w, const char *name, size_t len, double *out,
				     void *ctx);

struct ks_task;
struct ks_workload;
struct ks_spec;
/* The names a task's templates may use besides their knobs, one resolver for every caller:
 * "spec.FIELD" (spec may be NULL: not found), "sizeof.TENSOR" (the bytes of one element of
 * the task's tensor, so one bound serves a task's f16 and f32 variants), and the task's
 * params in workload wl (NULL: not found).  0 and *out set, or KS_ENOTFOUND. */
int ks_template_task_name(const struct ks_task *t, const struct ks_workload *wl,
			  const struct ks_spec *spec, const char *name, size_t len, double *out);

int ks_template_load(const char *path, struct ks_template **out, struct ks_error *e);
/* parse from memory; name stands for the path in messages */
int ks_template_parse(const char *text, size_t len, const char *name, struct ks_template **out,
		      struct ks_error *e);
void ks_template_free(struct ks_template *t);
/* KS_EINVAL when two of the n templates name the same family (the world model, reports and
 * run summaries tell templates apart by it), naming both files */
int ks_template_family_clash(struct ks_template *const *list, int n, struct ks_error *e);
/* Every file in dir holding an @ksearch block (name order, dot files and files without a block
 * skipped, at most KS_TEMPLATE_MAX_DIR); *out is an array of *n templates, free it with
 * ks_template_list_free.  A broken template, or two with one family, fails the whole load. */
#define KS_TEMPLATE_MAX_DIR 64
int ks_template_load_dir(const char *dir, struct ks_template ***out, int *n, struct ks_error *e);
void ks_template_list_free(struct ks_template **list, int n);

/* index of a knob by name, -1 if none */
int ks_template_knob(const struct ks_template *t, const char *name);
/* number of raw configurations (product of value counts) */
long ks_template_size(const struct ks_template *t);
/* configuration number index (mixed radix, the last knob varies fastest) into cfg */
void ks_template_config_at(const struct ks_template *t, long index, int *cfg);
long ks_template_config_index(const struct ks_template *t, const int *cfg);
/* the defaults */
void ks_template_config_default(const struct ks_template *t, int *cfg);

/* *feasible = 1 when every require holds for all nworkloads workloads (0: evaluated once
 * with w = -1).  A require that cannot be evaluated (unknown name, division by zero) is an
 * error "FILE:LINE:COL: unknown name 'X'". */
int ks_template_feasible(const struct ks_template *t, const int *cfg, int nworkloads,
			 ks_template_lookup_fn lookup, void *ctx, int *feasible,
			 struct ks_error *e);
/* every feasible configuration into out (initialised here; release with ks_config_set_release) */
int ks_template_enumerate(const struct ks_template *t, int nworkloads,
			  ks_template_lookup_fn lookup, void *ctx, struct ks_config_set *out,
			  struct ks_error *e);
void ks_config_set_release(struct ks_config_set *s);
/* position of the configuration in s, -1 if absent */
int ks_config_set_find(const struct ks_config_set *s, const struct ks_template *t,
		       const int *cfg);

/* NULL-terminated list "-DNAME=VALUE" (one per knob); free with ks_template_defines_free */
int ks_template_defines(const struct ks_template *t, const int *cfg, char ***out,
			struct ks_error *e);
void ks_template_defines_free(char **defs);
/* "BLOCK_M=64 USE_EXP2=1" appended to out */
int ks_template_config_str(const struct ks_template *t, const int *cfg, struct ks_buf *out);
/* all one-knob one-step moves from cfg (at most 2 * nknobs), knob order, down before up */
int ks_template_neighbours(const struct ks_template *t, const int *cfg, struct ks_knob_move *out,
			   int max);
/* generic move key "BLOCK_M:+1" / "BLOCK_M:-1" (kind 0) or exact "BLOCK_M:64->128" (kind 1) */
int ks_template_move_key(const struct ks_template *t, const struct ks_knob_move *m, int exact,
			 char *out, size_t n);

#endif
