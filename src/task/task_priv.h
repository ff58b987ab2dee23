/* Internals shared by the task module's files (not part of the public API). */
#ifndef KS_TASK_PRIV_H
#define KS_TASK_PRIV_H

#include <stddef.h>

#include "ksearch/task.h"

/* binds a task's params to a workload's values for ks_expr_eval() */
struct ks_param_scope {
	const struct ks_task *t;
	const double *values;
};

int ks_task_param_lookup(const char *name, size_t len, double *out, void *ctx);
/* a C identifier that is not a C keyword and does not start with "ks_" */
int ks_task_ident_ok(const char *s);

#endif
