#include "util/utf8.h"

#include "ksearch/buf.h"

size_t ks_utf8_seq(const unsigned char *p, size_t n)
{
	if (!n)
		return 0;
	size_t len = p[0] < 0x80			  ? 1
		     : p[0] >= 0xc2 && p[0] <= 0xdf ? 2
		     : (p[0] & 0xf0) == 0xe0	  ? 3
		     : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
						  : 0;
	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* the second byte's range rules out overlong forms, surrogates and > U+10FFFF */
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
	    (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return len;
}

int ks_utf8_clean(struct ks_buf *b, const char *s, size_t n)
{
	int rc = 0;
	for (size_t i = 0; i < n && !rc;) {
		size_t k = ks_utf8_seq((const unsigned char *)s + i, n - i);
		rc = k ? ks_buf_add(b, s + i, k) : ks_buf_add(b, "\xef\xbf\xbd", 3);
		i += k ? k : 1;
	}
	return rc;
}
