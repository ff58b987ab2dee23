/* Growable byte buffer with a hard size cap (compiler logs, LLM replies and worker messages
 * are untrusted input, so every buffer says how large it may grow). */
#ifndef KSEARCH_BUF_H
#define KSEARCH_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct ks_buf {
	char *data;   /* always NUL-terminated when len > 0 or after any add */
	size_t len;   /* bytes used, not counting the terminator */
	size_t alloc; /* bytes allocated */
	size_t cap;   /* maximum len; adds beyond it fail with KS_ELIMIT (0 = 64 MiB) */
};

#define KS_BUF_INIT {NULL, 0, 0, 0}

void ks_buf_init(struct ks_buf *b, size_t cap);
/* frees the contents; the struct may be reused after ks_buf_init */
void ks_buf_release(struct ks_buf *b);
/* hands the data over to the caller (never NULL: an empty string when nothing was added) */
char *ks_buf_detach(struct ks_buf *b, size_t *len);
void ks_buf_reset(struct ks_buf *b);
int ks_buf_add(struct ks_buf *b, const void *data, size_t n);
int ks_buf_adds(struct ks_buf *b, const char *s);
int ks_buf_addf(struct ks_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ks_buf_vaddf(struct ks_buf *b, const char *fmt, va_list ap);
/* ensure room for n more bytes */
int ks_buf_grow(struct ks_buf *b, size_t n);
/* the contents as a string ("" when empty) */
const char *ks_buf_str(const struct ks_buf *b);

#endif
