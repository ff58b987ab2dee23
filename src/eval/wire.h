/* JSON forms shared by the worker (worker.c) and the pool (pool.c): evaluation options
 * and exact results (result_parse.c).  Private to src/eval/. */
#ifndef KS_EVAL_WIRE_H
#define KS_EVAL_WIRE_H

#include <jansson.h>

#include "ksearch/error.h"
#include "ksearch/eval.h"

/* most "NAME=VALUE" defines a message may carry */
#define KS_WIRE_MAX_DEFINES 64

/* every field of o that changes an evaluation, as a new JSON object */
json_t *ks_wire_opts(const struct ks_eval_opts *o);
/* Read an options object into o (defaults first).  Strings point into j, defines into
 * defs[KS_WIRE_MAX_DEFINES + 1]: keep both alive while o is used. */
int ks_wire_opts_parse(json_t *j, struct ks_eval_opts *o, const char **defs,
		       struct ks_error *e);
/* a JSON array of strings -> defs (NULL-terminated); NULL or null gives an empty list */
int ks_wire_strings(json_t *arr, const char **defs, int max, const char *what,
		    struct ks_error *e);
/* every field of r, as a new JSON object */
json_t *ks_wire_result(const struct ks_eval_result *r);
/* rebuild r from ks_wire_result's object; r is zeroed on error */
int ks_wire_result_parse(json_t *j, struct ks_eval_result *r, struct ks_error *e);

#endif
