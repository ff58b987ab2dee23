#include "ksearch/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *ks_err_name(int code)
{
	switch (code) {
	case KS_OK:
		return "OK";
#define KS_ERR_NAME_(name, text)                                                         \
	case KS_E##name:                                                                 \
		return "E" #name;
		KS_ERR_MAP(KS_ERR_NAME_)
#undef KS_ERR_NAME_
	}
	return "unknown";
}

const char *ks_strerror(int code)
{
	switch (code) {
	case KS_OK:
		return "success";
#define KS_ERR_TEXT_(name, text)                                                         \
	case KS_E##name:                                                                 \
		return text;
		KS_ERR_MAP(KS_ERR_TEXT_)
#undef KS_ERR_TEXT_
	}
	return "unknown error";
}

int ks_error_set(struct ks_error *e, int code, const char *fmt, ...)
{
	if (!e)
		return code;
	va_list ap;
	va_start(ap, fmt);
	e->code = code;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

int ks_error_wrap(struct ks_error *e, const char *fmt, ...)
{
	if (!e)
		return KS_EINVAL;
	char prefix[512], old[sizeof(e->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof(old));
	snprintf(e->msg, sizeof(e->msg), "%s: %s", prefix, old);
	return e->code;
}

void ks_error_clear(struct ks_error *e)
{
	if (e) {
		e->code = 0;
		e->msg[0] = '\0';
	}
}
