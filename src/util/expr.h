/* The one expression evaluator: task files, knob templates, spec fields, assertion files
 * and constant expressions in CUDA/C sources (the knowledge layer).
 * Numbers are C literals (decimal, 0x hex, fractions, exponents; suffixes u/l/ul/ll/f
 * ignored), names, + - * / %, << >>, comparisons (< <= > >= == !=), && || !, ?:,
 * parentheses, the functions min, max, ceil_div (and floor, ceil, sqrt, log2, pow, abs),
 * and sizeof(TYPE).  Names are resolved by a caller callback, so the same evaluator serves
 * params, knobs, spec fields ("spec.smem_per_block") and #define'd constants. */
#ifndef KS_UTIL_EXPR_H
#define KS_UTIL_EXPR_H

#include <stddef.h>

#include "ksearch/error.h"

/* Resolve name[0..len) to a value: return 0 and set *out, or KS_ENOTFOUND (any other
 * nonzero value also fails the evaluation).  sizeof(TYPE) asks for "sizeof:TYPE". */
typedef int (*ks_expr_lookup_fn)(const char *name, size_t len, double *out, void *ctx);

/* Evaluate src.  On failure *errcol (if not NULL) gets the 1-based column in src where the
 * problem is, and e says what was expected ("expected ')' after argument", "unknown name
 * 'rowz'"); division by zero is an error.  Integer-valued operands of / and % use integer
 * semantics (C truncation) so "rows/2" matches the kernel's own arithmetic. */
int ks_expr_eval(const char *src, ks_expr_lookup_fn lookup, void *ctx, double *out, int *errcol,
		 struct ks_error *e);

#endif
