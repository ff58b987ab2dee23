#include "ksearch/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

static ks_log_fn log_fn;
static void *log_ctx;
static enum ks_log_level log_min = KS_LOG_INFO;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void ks_log_set(ks_log_fn fn, void *ctx, enum ks_log_level min_level)
{
	pthread_mutex_lock(&log_lock);
	log_fn = fn;
	log_ctx = ctx;
	log_min = min_level;
	pthread_mutex_unlock(&log_lock);
}

void ks_log(enum ks_log_level level, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	pthread_mutex_lock(&log_lock);
	if (log_fn && level >= log_min) {
		va_start(ap, fmt);
		vsnprintf(line, sizeof(line), fmt, ap);
		va_end(ap);
		log_fn(level, line, log_ctx);
	}
	pthread_mutex_unlock(&log_lock);
}
