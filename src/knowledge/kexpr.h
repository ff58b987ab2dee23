/* A small integer/float expression evaluator for the knowledge layer: constant
 * expressions in CUDA sources (array dimensions, #define values, launch bounds) and
 * parameter expressions in assertion files.  Kept separate from util/expr so the
 * knowledge layer works on its own; the grammar is a subset:
 *   numbers (C literals, suffixes u/l/f ignored), names, + - * / % << >>, unary - +,
 *   parentheses, min(a,b) max(a,b) ceil_div(a,b), sizeof(TYPE) through the lookup. */
#ifndef KS_KNOWLEDGE_KEXPR_H
#define KS_KNOWLEDGE_KEXPR_H

#include <stddef.h>

/* resolve a name ("rows", "TILE", "sizeof:float"); return 0 and set *out, or -1 */
typedef int (*ks_kexpr_lookup_fn)(const char *name, size_t len, double *out, void *ctx);

/* 0 on success; -1 on a syntax error or unknown name (*why gets a static reason, *col the
 * 1-based column when not NULL) */
int ks_kexpr_eval(const char *src, ks_kexpr_lookup_fn lookup, void *ctx, double *out,
		  const char **why, int *col);

#endif
