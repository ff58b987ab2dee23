/* JSON text into a capped buffer (jansson's dump written straight into a ks_buf, no
 * intermediate string, the buffer's cap applies). */
#ifndef KS_UTIL_JSON_H
#define KS_UTIL_JSON_H

#include <jansson.h>

#include "ksearch/buf.h"

/* Append j dumped with jansson's flags (JSON_COMPACT, JSON_INDENT(n), ...) to out.
 * 0, the buffer's error (KS_ELIMIT over its cap, KS_ENOMEM), or KS_ENOMEM when jansson
 * fails.  j stays the caller's. */
int ks_json_to_buf(const json_t *j, size_t flags, struct ks_buf *out);

#endif
