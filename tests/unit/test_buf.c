/* ks_buf: the cap, sticky failure (check once at the end) and no partial text of a failed add. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "tap.h"

/* the out-of-memory check asks for more than any allocator gives; under ASan that must be a
 * NULL return, not an abort */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

static void test_cap(void)
{
	struct ks_buf b;
	ks_buf_init(&b, 8);
	is_int(ks_buf_adds(&b, "abcd"), 0, "add within the cap");
	is_int(ks_buf_adds(&b, "efgh"), 0, "add up to the cap exactly");
	is_int(ks_buf_room(&b), 0, "no room left at the cap");
	is_int(ks_buf_adds(&b, "i"), KS_ELIMIT, "one byte over the cap fails with KS_ELIMIT");
	is_str(ks_buf_str(&b), "abcdefgh", "the contents before the failed add are kept");
	ks_buf_release(&b);
}

static void test_sticky(void)
{
	struct ks_buf b;
	ks_buf_init(&b, 10);
	is_int(ks_buf_failed(&b), 0, "a new buffer has not failed");
	ks_buf_adds(&b, "12345");
	is_int(ks_buf_adds(&b, "too long for the rest"), KS_ELIMIT, "overflowing add fails");
	is_int(ks_buf_failed(&b), KS_ELIMIT, "the buffer remembers the failure");
	is_int(ks_buf_adds(&b, "x"), KS_ELIMIT, "a later add that would fit still fails");
	is_int(ks_buf_addf(&b, "%d", 7), KS_ELIMIT, "a later addf fails too");
	is_int(ks_buf_add(&b, "", 0), KS_ELIMIT, "even an empty add reports the failure");
	is_int(ks_buf_grow(&b, 1), KS_ELIMIT, "grow reports the failure");
	is_str(ks_buf_str(&b), "12345", "nothing after the failure was added");
	is_int((long long)b.len, 5, "length is that of the prefix");
	is_int(ks_buf_room(&b), 0, "a failed buffer has no room");
	ks_buf_reset(&b);
	is_int(ks_buf_failed(&b), 0, "reset clears the failure");
	is_int(ks_buf_adds(&b, "again"), 0, "adds work after reset");
	is_str(ks_buf_str(&b), "again", "contents after reset");
	ks_buf_adds(&b, "0123456789");
	size_t n = 99;
	char *d = ks_buf_detach(&b, &n);
	ok(d == NULL, "detach of a failed buffer hands over nothing, not the prefix ('%s')",
	   d ? d : "NULL");
	is_int((long long)n, 0, "... with a length of 0");
	is_int(ks_buf_failed(&b), 0, "detach clears the failure");
	is_str(ks_buf_str(&b), "", "... and leaves the buffer empty");
	free(d);
	is_int(ks_buf_adds(&b, "fresh"), 0, "the buffer takes adds after the detach");
	d = ks_buf_detach(&b, &n);
	is_str(d ? d : "NULL", "fresh", "a whole buffer is handed over");
	is_int((long long)n, 5, "... with its length");
	free(d);
	ks_buf_release(&b);
}

static void test_no_partial(void)
{
	struct ks_buf b;
	ks_buf_init(&b, 16);
	ks_buf_adds(&b, "head:");
	is_int(ks_buf_addf(&b, "%s", "a formatted tail that is too long"), KS_ELIMIT,
	       "an overflowing addf fails");
	is_str(ks_buf_str(&b), "head:", "no partial text of the failed addf");
	ks_buf_release(&b);

	ks_buf_init(&b, 16);
	ks_buf_adds(&b, "head:");
	ks_buf_add(&b, "0123456789abcdef", 16);
	is_str(ks_buf_str(&b), "head:", "no partial text of the failed add");
	is_int((long long)strlen(b.data), (long long)b.len, "terminator right after the prefix");
	ks_buf_release(&b);
}

static void test_check_once(void)
{
	/* the pattern callers use: add everything, check at the end */
	struct ks_buf b;
	ks_buf_init(&b, 32);
	for (int i = 0; i < 100; i++)
		ks_buf_addf(&b, "line %d\n", i);
	is_int(ks_buf_failed(&b), KS_ELIMIT, "one check at the end sees an overflow in the middle");
	ok(b.len <= 32, "never over the cap (len %zu)", b.len);
	ok(b.len > 0 && b.data[b.len - 1] == '\n', "the prefix ends on a whole add");
	ks_buf_release(&b);

	ks_buf_init(&b, 0);
	for (int i = 0; i < 100; i++)
		ks_buf_addf(&b, "line %d\n", i);
	is_int(ks_buf_failed(&b), 0, "no overflow under the default cap");
	ks_buf_release(&b);
}

static void test_oom(void)
{
	struct ks_buf b;
	ks_buf_init(&b, SIZE_MAX - 1);
	ks_buf_adds(&b, "x");
	is_int(ks_buf_grow(&b, SIZE_MAX / 2 + 16), KS_ENOMEM, "an impossible allocation fails");
	is_int(ks_buf_failed(&b), KS_ENOMEM, "out of memory is sticky");
	is_int(ks_buf_adds(&b, "y"), KS_ENOMEM, "later adds report it");
	is_str(ks_buf_str(&b), "x", "contents survive");
	ks_buf_release(&b);
}

int main(void)
{
	test_cap();
	test_sticky();
	test_no_partial();
	test_check_once();
	test_oom();
	return tap_done();
}
