/* Knob values as a compiler takes them: NAME=VALUE pairs (-DNAME=VALUE).  They travel as
 * text in two spellings, the run store's "-DBM=64 -DBN=32" and --define's "BM=64,BN=32";
 * this is the one parser of both, and the one baker of pairs into '#define NAME VALUE' lines
 * (a run's best file, an exported kernel). */
#ifndef KS_UTIL_DEFINES_H
#define KS_UTIL_DEFINES_H

#include <stddef.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"

#define KS_DEFINES_MAX 64

struct ks_defines {
	int n;
	const char *name[KS_DEFINES_MAX];     /* "BM" */
	const char *value[KS_DEFINES_MAX];    /* "64"; NULL for a bare name ("-DNDEBUG") */
	const char *list[KS_DEFINES_MAX + 1]; /* "BM=64" (or "NDEBUG"): a compile's defines,
						 NULL-terminated */
};

void ks_defines_init(struct ks_defines *d);
/* frees the pairs; d is empty (and reusable) after it */
void ks_defines_release(struct ks_defines *d);
/* Append the pairs of text: words separated by spaces or commas, each NAME=VALUE or NAME,
 * with or without a leading -D.  NULL or "" adds none.  KS_EINVAL for a name that is not a
 * C identifier, KS_ELIMIT past KS_DEFINES_MAX pairs, KS_ENOMEM; d keeps the pairs before. */
int ks_defines_parse(struct ks_defines *d, const char *text, struct ks_error *e);
/* append one pair (value NULL: a bare name), checked as ks_defines_parse checks */
int ks_defines_add(struct ks_defines *d, const char *name, const char *value,
		   struct ks_error *e);
/* the index of name in d, or -1 */
int ks_defines_find(const struct ks_defines *d, const char *name);
/* The pairs of text (ks_defines_parse) as '#define NAME VALUE' lines appended to out, so a
 * source stands alone with the values it was compiled with.  0, or the parse's error, or
 * out's (a failed out is left failed). */
int ks_defines_bake(const char *text, struct ks_buf *out, struct ks_error *e);
/* The value of src's line '#define NAME VALUE' (a baked file starts with one per knob) into
 * out (n bytes), or NULL when src has none */
const char *ks_defines_in_source(const char *src, const char *name, char *out, size_t n);

#endif
