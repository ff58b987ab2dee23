/* Minimal TAP producer for the unit tests (one process per test file). */
#ifndef KS_TEST_TAP_H
#define KS_TEST_TAP_H

#include <string.h>

int tap_ok(int cond, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* a check that cannot run here (no GPU, no compiler feature): "ok N - # SKIP why" */
void tap_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the plan and returns the exit status: 0 when every check passed, 1 when one
 * failed, TAP_SKIP_EXIT when every check was skipped (CTest shows "Skipped"). */
int tap_done(void);
/* Nothing in this file can run here: prints "1..0 # SKIP why" and returns TAP_SKIP_EXIT,
 * for `return tap_skip_all("no GPU");` at the top of main. */
int tap_skip_all(const char *why);

/* the exit status CTest is told means "skipped" (SKIP_RETURN_CODE in CMakeLists.txt) */
#define TAP_SKIP_EXIT 77

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
int tap_is_int(long long got, long long want, const char *file, int line, const char *name);
/* each argument is evaluated once */
#define is_int(a, b, name) tap_is_int((long long)(a), (long long)(b), __FILE__, __LINE__, name)
#define is_str(a, b, name) ok((a) && (b) && !strcmp((a), (b)), "%s (got '%s' want '%s')", name, (a) ? (a) : "(null)", (b) ? (b) : "(null)")

#endif
