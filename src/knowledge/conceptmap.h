/* Internal: a loaded concept map (knowledge/translate/cuda-to-TARGET.yaml). */
#ifndef KS_KNOWLEDGE_CONCEPTMAP_H
#define KS_KNOWLEDGE_CONCEPTMAP_H

#include <regex.h>

#include "ksearch/knowledge.h"

struct ks_cmap_constraint {
	char *text;
	char *check; /* analyser name or NULL */
};

struct ks_cmap_concept {
	char *id, *title, *equivalent, *notes;
	char *feature;  /* spec feature the target must list, or NULL */
	int missing;    /* no equivalent on the target at all */
	enum ks_severity severity; /* of the feature/missing finding */
	int nre;
	regex_t *re;
	char **re_src;
	int ncons;
	struct ks_cmap_constraint *cons;
};

struct ks_cmap {
	char *target, *summary, *default_source_spec, *default_target_spec;
	int n;
	struct ks_cmap_concept *c;
};

/* "metal" (also "mlx"), "cpu", "opencl"; NULL for anything else */
const char *ks_target_canonical(const char *target);
/* by target name or by path */
int ks_cmap_load(const char *target_or_path, struct ks_cmap *m, struct ks_error *e);
void ks_cmap_release(struct ks_cmap *m);
/* does concept c carry a constraint with this check */
int ks_cmap_has_check(const struct ks_cmap_concept *c, const char *check);

#endif
