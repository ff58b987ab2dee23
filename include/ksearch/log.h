/* Logging.  The library never prints to stdout; it hands log lines to a sink the
 * application installs (the CLI writes them to stderr or feeds its status line). */
#ifndef KSEARCH_LOG_H
#define KSEARCH_LOG_H

enum ks_log_level { KS_LOG_DEBUG, KS_LOG_INFO, KS_LOG_WARN, KS_LOG_ERROR };

typedef void (*ks_log_fn)(enum ks_log_level level, const char *line, void *ctx);

/* install the sink (NULL: drop everything) and the lowest level passed to it */
void ks_log_set(ks_log_fn fn, void *ctx, enum ks_log_level min_level);
void ks_log(enum ks_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define ks_debug(...) ks_log(KS_LOG_DEBUG, __VA_ARGS__)
#define ks_info(...) ks_log(KS_LOG_INFO, __VA_ARGS__)
#define ks_warn(...) ks_log(KS_LOG_WARN, __VA_ARGS__)

#endif
