/* Context packs: the knowledge an LLM prompt includes at each context level, and the
 * folder-based validator for any knowledge file. */
#include <stdio.h>
#include <string.h>

#include "knowledge/conceptmap.h"
#include "ksearch/knowledge.h"

int ks_context_level_parse(const char *text, enum ks_context_level *out)
{
	if (!text)
		return KS_EINVAL;
	if (!strcmp(text, "none"))
		*out = KS_CONTEXT_NONE;
	else if (!strcmp(text, "spec"))
		*out = KS_CONTEXT_SPEC;
	else if (!strcmp(text, "full"))
		*out = KS_CONTEXT_FULL;
	else
		return KS_EINVAL;
	return 0;
}

const char *ks_context_level_name(enum ks_context_level l)
{
	return l == KS_CONTEXT_NONE ? "none" : l == KS_CONTEXT_SPEC ? "spec" : "full";
}

int ks_context_pack(enum ks_context_level level, const char *task_class, const char *target,
		    const struct ks_spec *spec, const char *expert_cuda_src, struct ks_buf *out,
		    struct ks_error *e)
{
	if (level == KS_CONTEXT_NONE)
		return 0;
	if (spec) {
		ks_buf_adds(out, "## Hardware\n\n");
		ks_spec_to_text(spec, out);
		ks_buf_adds(out, "Respect these limits: a kernel that needs more shared/threadgroup "
				 "memory or threads per group than listed does not run.\n\n");
	}
	if (level == KS_CONTEXT_SPEC)
		return 0;
	const char *canon = ks_target_canonical(target);
	int rc;
	if (canon) {
		ks_buf_adds(out, "## CUDA concepts on this target\n\n");
		if ((rc = ks_conceptmap_text(canon, out, e)))
			return rc;
		ks_buf_adds(out, "\n## Target patterns\n\n");
		struct ks_error he = {0};
		if ((rc = ks_hints_text(canon, NULL, out, &he)) && rc != KS_ENOTFOUND)
			return ks_error_set(e, rc, "%s", he.msg);
		ks_buf_adds(out, "\n");
	}
	if (task_class && ks_assertions_class(task_class)) {
		ks_buf_adds(out, "## Properties every candidate must keep\n\n");
		if ((rc = ks_assertions_prose(task_class, out)))
			return ks_error_set(e, rc, "assertions for class '%s'", task_class);
		ks_buf_adds(out, "\n");
	}
	if (expert_cuda_src && canon) {
		ks_buf_adds(out, "## Expert CUDA kernel (knowledge source, not to be copied "
				 "literally)\n\n```cuda\n");
		ks_buf_adds(out, expert_cuda_src);
		ks_buf_adds(out, "\n```\n\n## Its translation to this target\n\n");
		struct ks_translation tr;
		if ((rc = ks_translate(expert_cuda_src, canon, spec, NULL, &tr, e)))
			return rc;
		rc = ks_translation_to_text(&tr, out);
		ks_translation_release(&tr);
		if (rc)
			return ks_error_set(e, rc, "render translation");
	}
	return 0;
}

int ks_knowledge_validate_file(const char *path, struct ks_error *e)
{
	if (strstr(path, "/specs/"))
		return ks_spec_validate_file(path, e);
	if (strstr(path, "/translate/"))
		return ks_conceptmap_validate_file(path, e);
	if (strstr(path, "/assertions/"))
		return ks_assertions_validate_file(path, e);
	return ks_error_set(e, KS_EINVAL,
			    "'%s': not under specs/, translate/ or assertions/", path);
}
