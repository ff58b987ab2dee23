/* Helper executables beside ksearch. */
#ifndef KS_UTIL_EXE_PATH_H
#define KS_UTIL_EXE_PATH_H

#include <stddef.h>

#include "ksearch/error.h"

/* path of the helper executable name (e.g. "ksearch-runner") beside the running
 * executable; $KSEARCH_RUNNER_DIR overrides the directory */
int ks_runner_path(const char *name, char *out, size_t n, struct ks_error *e);

#endif
