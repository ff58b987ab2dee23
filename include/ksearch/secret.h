/* The process's secrets (API keys) and their redaction.  One registry for the whole
 * process: the store (ks_redact), the LLM client (its records and errors)
 * and everything the CLI prints use the same list, so a key registered anywhere is hidden
 * everywhere.  Thread-safe. */
#ifndef KSEARCH_SECRET_H
#define KSEARCH_SECRET_H

#include <stddef.h>

#include "ksearch/buf.h"

/* shorter values are not registered: they would redact ordinary words and code */
#define KS_SECRET_MIN 8
#define KS_SECRET_MAX 64

/* Register a secret value.  0 also when it is shorter than KS_SECRET_MIN (ignored) or
 * already known; KS_ELIMIT when KS_SECRET_MAX values are registered; KS_ENOMEM. */
int ks_secret_add(const char *value);
/* register the values of the variables in envp ("NAME=value", NULL-terminated) whose names
 * look secret (ks_secret_name) */
int ks_secret_add_env(char *const *envp);
/* forget every registered value */
void ks_secret_clear(void);
/* 1 when a variable name ("NAME" or "NAME=value") looks like it holds a credential: it
 * contains KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL, AUTH, COOKIE or SESSION
 * (case-insensitive).  Such variables never reach a kernel, and their values are redacted. */
int ks_secret_name(const char *name);

/* Append text[0..len) to out with every registered value replaced by "[REDACTED]". */
int ks_secret_redact(const char *text, size_t len, struct ks_buf *out);
/* The same in place over a NUL-terminated string in a buffer of size bytes (error messages);
 * the result is cut to fit. */
void ks_secret_scrub(char *s, size_t size);

#endif
