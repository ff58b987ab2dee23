#include "tap.h"

#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed, tap_skipped;

int tap_ok(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	tap_n++;
	printf("%s %d - ", cond ? "ok" : "not ok", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return cond;
}

void tap_skip(const char *fmt, ...)
{
	va_list ap;
	tap_n++;
	tap_skipped++;
	printf("ok %d - # SKIP ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

int tap_done(void)
{
	printf("1..%d\n", tap_n);
	if (tap_failed)
		printf("# %d of %d checks failed\n", tap_failed, tap_n);
	if (tap_skipped)
		printf("# %d of %d checks skipped\n", tap_skipped, tap_n);
	if (tap_failed)
		return 1;
	return tap_n > 0 && tap_skipped == tap_n ? TAP_SKIP_EXIT : 0;
}

int tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	fflush(stdout);
	return TAP_SKIP_EXIT;
}

int tap_is_int(long long got, long long want, const char *file, int line, const char *name)
{
	return tap_ok(got == want, file, line, "%s (got %lld want %lld)", name, got, want);
}
