/* ks_utf8_seq: well-formed sequences by length, and each kind of malformed one refused. */
#include <string.h>

#include "ksearch/buf.h"
#include "tap.h"
#include "util/utf8.h"

static size_t seq(const char *s, size_t n)
{
	return ks_utf8_seq((const unsigned char *)s, n);
}

int main(void)
{
	is_int((int)seq("a", 1), 1, "ASCII");
	is_int((int)seq("", 1), 1, "a NUL is one byte (callers that refuse it check it apart)");
	is_int((int)seq("\xc3\xa9", 2), 2, "two bytes (e acute)");
	is_int((int)seq("\xe2\x82\xac", 3), 3, "three bytes (euro sign)");
	is_int((int)seq("\xf0\x9f\x98\x80", 4), 4, "four bytes (U+1F600)");
	is_int((int)seq("\xf4\x8f\xbf\xbf", 4), 4, "U+10FFFF, the last code point");
	is_int((int)seq("\xff", 1), 0, "0xff is never UTF-8");
	is_int((int)seq("\x80", 1), 0, "a stray continuation byte");
	is_int((int)seq("\xc0\x80", 2), 0, "an overlong NUL");
	is_int((int)seq("\xe0\x80\x80", 3), 0, "an overlong three-byte form");
	is_int((int)seq("\xed\xa0\x80", 3), 0, "a surrogate (U+D800)");
	is_int((int)seq("\xf4\x90\x80\x80", 4), 0, "past U+10FFFF");
	is_int((int)seq("\xe2\x82\xac", 2), 0, "a sequence cut short by n");
	is_int((int)seq("\xe2\x82", 3), 0, "a sequence cut short by a NUL");
	is_int((int)seq("a", 0), 0, "nothing to read");

	struct ks_buf b = KS_BUF_INIT;
	const char in[] = "ok \xc3\xa9 \xff\xed\xa0\x80 \xe2\x82";
	is_int(ks_utf8_clean(&b, in, sizeof(in) - 1), 0, "clean appends");
	is_str(ks_buf_str(&b), "ok \xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd "
			       "\xef\xbf\xbd\xef\xbf\xbd",
	       "each byte that starts no sequence becomes U+FFFD, the rest is kept");
	ks_buf_release(&b);
	return tap_done();
}
