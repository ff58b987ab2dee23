/* The exporters registered in registry.c, and what they share. */
#ifndef KS_EXPORT_EXPORTERS_H
#define KS_EXPORT_EXPORTERS_H

#include "ksearch/export.h"

extern const struct ks_exporter_i ks_exporter_c;
extern const struct ks_exporter_i ks_exporter_torch;
extern const struct ks_exporter_i ks_exporter_mlx;
extern const struct ks_exporter_i ks_exporter_flashinfer;

/* the backends whose kernels are C or CUDA source: what c, torch and flashinfer take */
extern const char *const ks_export_host_and_cuda[];
/* KS_EINVAL naming both when two items are of one task: one `what` ("library", "op") per task */
int ks_export_one_per_task(const struct ks_export_item *items, int n, const char *what,
			   struct ks_error *e);

/* ---- Python text (py.c): mlx and torch modules ---- */
/* a parenthesised Python string literal of s, one source line per literal line */
void ks_py_add_str(struct ks_buf *out, const char *s);
/* ksearch expression -> Python (`/` is `//`, ceil_div, floor, ...); ?: is KS_EINVAL */
int ks_py_add_expr(struct ks_buf *out, const char *x, const char *what, struct ks_error *e);
/* "x.shape[1]" when an input's shape names param p alone; 0 when none does */
int ks_py_param_source(const struct ks_task *t, const char *p, char *out, size_t n);

/* ---- the torch module (torch_py.c), also the body of a flashinfer Solution ---- */
/* kernel_file: NULL to embed the kernel source; else the module reads it from this file
 * next to itself.  fn: the Python function name (the task's, or "run") */
int ks_torch_module(const struct ks_export_item *items, int n, const char *kernel_file,
		    const char *fn, struct ks_buf *out, struct ks_error *e);
/* the source file name of a variant: "softmax.c", "softmax_v2.cu" */
void ks_export_kernel_name(const struct ks_export_item *it, int v, char *out, size_t n);
/* the source of variant v with the entry point renamed to its variant symbol when the item
 * has several ("#define softmax softmax__v1" first) */
int ks_export_kernel_source(const struct ks_export_item *it, int v, struct ks_buf *out);
/* the file extension of the item's kernels ("c", "cu") */
const char *ks_export_ext(const struct ks_export_item *it);
/* the item's provenance, each line as prefix + line + "\n" (nothing when it has none) */
void ks_export_provenance(struct ks_buf *out, const struct ks_export_item *it, const char *prefix);
/* "x f32 [rows, cols] -> y f32 [rows, cols]": the task's tensors, for a header comment or a
 * docstring */
void ks_export_tensors_doc(struct ks_buf *out, const struct ks_task *t);

#endif
