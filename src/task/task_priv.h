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

/* the PATH of a `// @ksearch include: PATH` line (line at its start, n its length) and its
 * length in *plen, or NULL when the line is something else (source.c) */
const char *ks_source_include_path(const char *line, size_t n, size_t *plen);
/* every link in the task folder dir, and every include line of a file in it, leads to a
 * file of the task or of a sibling task, or fails naming the first that does not
 * (task_files.c) */
int ks_task_files_check(const char *dir, struct ks_error *e);

struct ks_yaml_doc;
struct ks_yaml_node;
/* task.yaml's `library` map n into t->libraries (task_library.c); backends: the names a key
 * may have */
int ks_task_parse_libraries(const struct ks_yaml_doc *doc, struct ks_task *t,
			    const struct ks_yaml_node *n, const char *const *backends,
			    struct ks_error *e);
void ks_task_libraries_free(struct ks_task *t);

#endif
