/* "Did you mean": the one edit-distance helper behind every suggestion for a mistyped
 * command, task, backend, option or format name (src/util/suggest.c). */
#ifndef KSEARCH_SUGGEST_H
#define KSEARCH_SUGGEST_H

#include <stddef.h>

/* Levenshtein distance (insert, delete, substitute; an adjacent swap counts as one), case
 * sensitive; names longer than 255 bytes compare by their first 255 */
int ks_edit_distance(const char *a, const char *b);
/* the candidate nearest to word when it is close enough to be a typo (distance at most 1
 * for short words, a third of the length for long ones, never the word itself), else NULL.
 * cands: n names, or NULL-terminated when n < 0. */
const char *ks_suggest(const char *word, const char *const *cands, int n);

#endif
