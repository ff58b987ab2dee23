/* Growable byte buffer with a hard size cap (compiler logs, LLM replies and worker messages
 * are untrusted input, so every buffer says how large it may grow).
 *
 * Failure is sticky, so a caller may append freely and check once at the end: the first add
 * that fails (cap exceeded, out of memory, bad format) marks the buffer failed with that
 * error, and every later add, grow or format is a no-op that returns the same error.  A failed
 * add leaves nothing of itself behind: the contents stay exactly the prefix written before it
 * (handy in error messages; never a half-written add).  ks_buf_reset, ks_buf_release,
 * ks_buf_detach and ks_buf_init clear the failure. */
#ifndef KSEARCH_BUF_H
#define KSEARCH_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct ks_buf {
	char *data;   /* always NUL-terminated when len > 0 or after any add */
	size_t len;   /* bytes used, not counting the terminator */
	size_t alloc; /* bytes allocated */
	size_t cap;   /* maximum len; adds beyond it fail with KS_ELIMIT (0 = 64 MiB) */
	int failed;   /* 0, or the error of the first failed add (sticky until reset) */
};

#define KS_BUF_INIT {NULL, 0, 0, 0, 0}

void ks_buf_init(struct ks_buf *b, size_t cap);
/* frees the contents; the struct may be reused after ks_buf_init */
void ks_buf_release(struct ks_buf *b);
/* hands the data over to the caller (an empty string when nothing was added) and leaves
 * the buffer empty; NULL (with *len 0) when the buffer failed, whose contents are then
 * freed: a prefix of the text meant is never handed over as if it were whole (ks_buf_str
 * still shows that prefix before the detach, for error messages), nor when out of memory */
char *ks_buf_detach(struct ks_buf *b, size_t *len);
/* empties the buffer and clears a failure; keeps the allocation and the cap */
void ks_buf_reset(struct ks_buf *b);
int ks_buf_add(struct ks_buf *b, const void *data, size_t n);
int ks_buf_adds(struct ks_buf *b, const char *s);
int ks_buf_addf(struct ks_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ks_buf_vaddf(struct ks_buf *b, const char *fmt, va_list ap);
/* ensure room for n more bytes */
int ks_buf_grow(struct ks_buf *b, size_t n);
/* the contents as a string ("" when empty) */
const char *ks_buf_str(const struct ks_buf *b);
/* 0 when every add so far succeeded, else the error of the first one that failed */
int ks_buf_failed(const struct ks_buf *b);
/* bytes that may still be added before the cap */
size_t ks_buf_room(const struct ks_buf *b);

#endif
