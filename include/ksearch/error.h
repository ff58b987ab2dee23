/* Errors: 0 is success, failures are negative values of one enum.
 *
 * The list below is the single source of truth: it yields the enum, ks_err_name()
 * and ks_strerror().  Detail travels in a caller-owned struct ks_error whose message is
 * lower case, has no full stop, says what failed first and quotes the subject. */
#ifndef KSEARCH_ERROR_H
#define KSEARCH_ERROR_H

#include <stddef.h>

#define KS_ERR_MAP(X)                                                    \
	X(NOMEM, "out of memory")                                        \
	X(INVAL, "invalid argument")                                     \
	X(IO, "input/output error")                                      \
	X(PARSE, "malformed input")                                      \
	X(NOTFOUND, "not found")                                         \
	X(UNAVAILABLE, "not available on this machine")                  \
	X(TIMEOUT, "timed out")                                          \
	X(SYS, "system call failed")                                     \
	X(PROTO, "protocol error")                                       \
	X(LIMIT, "size limit exceeded")                                  \
	X(DB, "database error")                                          \
	X(HTTP, "http error")                                            \
	X(BUDGET, "budget exhausted")                                    \
	X(INVARIANT, "invariant violated")                               \
	X(INTERRUPTED, "interrupted")

enum ks_err {
	KS_OK = 0,
#define KS_ERR_ENUM_(name, text) KS_E##name,
	KS_ERR_FIRST_ = -1000,
	KS_ERR_MAP(KS_ERR_ENUM_)
#undef KS_ERR_ENUM_
	KS_ERR_LAST_
};

/* Detail of the last failure; callers own it and may pass NULL where they do not care. */
struct ks_error {
	int code;        /* one of enum ks_err, 0 when nothing failed */
	char msg[1024];  /* "open 'tasks/x/task.yaml': no such file" */
};

/* "EINVAL"-style name of a code, "unknown" for anything else */
const char *ks_err_name(int code);
/* human text of a code */
const char *ks_strerror(int code);
/* Record code and a printf-style message in e (if not NULL); returns code so callers can
 * write `return ks_error_set(e, KS_EIO, "read '%s'", path);` */
int ks_error_set(struct ks_error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prefix the existing message with context: "load task 'x': <old message>" */
int ks_error_wrap(struct ks_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ks_error_clear(struct ks_error *e);

#endif
