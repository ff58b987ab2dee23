/* UTF-8: the one check behind every place that must tell text from bytes (YAML input,
 * reports, LLM request bodies). */
#ifndef KS_UTIL_UTF8_H
#define KS_UTIL_UTF8_H

#include <stddef.h>

/* the length (1 to 4) of the well-formed UTF-8 sequence at p, reading at most n bytes; 0 when
 * the bytes there are not one: stray continuation bytes, overlong forms, surrogates, code
 * points past U+10FFFF, a sequence cut short by n.  A NUL byte is a sequence of 1. */
size_t ks_utf8_seq(const unsigned char *p, size_t n);

struct ks_buf;
/* append the n bytes at s to b with every byte that starts no well-formed sequence replaced
 * by U+FFFD (compiler logs and model replies can hold any byte; JSON and HTML cannot);
 * ks_buf_add's result */
int ks_utf8_clean(struct ks_buf *b, const char *s, size_t n);

#endif
