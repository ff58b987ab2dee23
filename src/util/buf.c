#include "ksearch/buf.h"
#include "ksearch/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KS_BUF_DEFAULT_CAP ((size_t)64 << 20)

void ks_buf_init(struct ks_buf *b, size_t cap)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap ? cap : KS_BUF_DEFAULT_CAP;
	b->failed = 0;
}

/* Records the first failure; later ones keep reporting it. */
static int buf_fail(struct ks_buf *b, int rc)
{
	if (!b->failed)
		b->failed = rc;
	return b->failed;
}

void ks_buf_release(struct ks_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->failed = 0;
}

char *ks_buf_detach(struct ks_buf *b, size_t *len)
{
	/* a failed buffer holds a prefix of the text meant: handing it over would let it be
	 * stored or sent as if it were whole */
	char *d = b->failed ? NULL : b->data ? b->data : strdup("");
	if (b->failed)
		free(b->data);
	if (len)
		*len = d ? b->len : 0;
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->failed = 0;
	return d;
}

void ks_buf_reset(struct ks_buf *b)
{
	b->len = 0;
	b->failed = 0;
	if (b->data)
		b->data[0] = '\0';
}

int ks_buf_grow(struct ks_buf *b, size_t n)
{
	if (b->failed)
		return b->failed;
	size_t cap = b->cap ? b->cap : KS_BUF_DEFAULT_CAP;
	if (n > cap || b->len > cap - n)
		return buf_fail(b, KS_ELIMIT);
	if (b->len + n + 1 <= b->alloc)
		return 0;
	size_t need = b->len + n + 1, want = b->alloc ? b->alloc : 256;
	while (want < need)
		want = want > SIZE_MAX / 2 ? need : want * 2;
	char *d = realloc(b->data, want);
	if (!d)
		return buf_fail(b, KS_ENOMEM);
	b->data = d;
	b->alloc = want;
	return 0;
}

int ks_buf_add(struct ks_buf *b, const void *data, size_t n)
{
	int rc = ks_buf_grow(b, n);
	if (rc)
		return rc;
	if (n)
		memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int ks_buf_adds(struct ks_buf *b, const char *s)
{
	return ks_buf_add(b, s, strlen(s));
}

int ks_buf_vaddf(struct ks_buf *b, const char *fmt, va_list ap)
{
	if (b->failed)
		return b->failed;
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return buf_fail(b, KS_EINVAL);
	int rc = ks_buf_grow(b, (size_t)n);
	if (rc)
		return rc;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int ks_buf_addf(struct ks_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = ks_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return rc;
}

const char *ks_buf_str(const struct ks_buf *b)
{
	return b->data ? b->data : "";
}

int ks_buf_failed(const struct ks_buf *b)
{
	return b->failed;
}

size_t ks_buf_room(const struct ks_buf *b)
{
	size_t cap = b->cap ? b->cap : KS_BUF_DEFAULT_CAP;
	return b->failed || b->len >= cap ? 0 : cap - b->len;
}
