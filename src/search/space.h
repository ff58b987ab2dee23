/* The builtin policy's search space for a task on a backend: its knob templates
 * (tasks/TASK/templates/BACKEND/NAME.EXT) and their feasible configurations. */
#ifndef KS_POLICY_SPACE_H
#define KS_POLICY_SPACE_H

#include "ksearch/buf.h"
#include "ksearch/knowledge.h"
#include "ksearch/strategy.h"
#include "ksearch/task.h"

struct ks_search_space {
	struct ks_space space;        /* what strategies see */
	int n;
	struct ks_template **tpl;
	struct ks_config_set *feasible;
	long total_feasible;
};

/* Load every template of the task for backend ext and enumerate the configurations that
 * satisfy their `require` for every workload and check of that backend, with spec.X
 * resolved from spec.  KS_ENOTFOUND when the task ships no template for the backend. */
int ks_search_space_load(struct ks_search_space *sp, const struct ks_task *t,
			 const char *backend, const char *ext, const struct ks_spec *spec,
			 struct ks_error *e);
void ks_search_space_release(struct ks_search_space *sp);

/* "-DBM=64 -DBN=32" for a configuration (the candidate's identity besides its source) and
 * the NULL-terminated "BM=64" list the compiler gets; defs holds the strings */
void ks_search_space_defines(const struct ks_template *t, const int *cfg, struct ks_buf *ident,
			     char defs[][128], const char **list, int max);
/* {"BM": "64", ...} */
void ks_search_space_knobs_json(const struct ks_template *t, const int *cfg, struct ks_buf *out);

#endif
