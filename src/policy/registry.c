/* The policy table and the wrappers that give optional slots their defaults (one place). */
#include "ksearch/policy.h"

#include <stdio.h>
#include <string.h>

static const struct ks_policy_i *const policies[] = {
	&ks_policy_builtin,
	&ks_policy_llm,
	&ks_policy_cmd,
	&ks_policy_files,
	NULL,
};

const struct ks_policy_i *ks_policy_find(const char *name)
{
	for (int i = 0; name && policies[i]; i++)
		if (!strcmp(policies[i]->name, name))
			return policies[i];
	return NULL;
}

int ks_policy_uses_model(const char *name)
{
	const struct ks_policy_i *p = ks_policy_find(name);
	return p && p->uses_model;
}

const char *ks_policy_names(void)
{
	static char names[128];
	if (!names[0])
		for (int i = 0; policies[i]; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 i ? ", " : "", policies[i]->name);
	return names;
}

int ks_policy_check(const struct ks_run_opts *o, struct ks_error *e)
{
	const struct ks_policy_i *p = ks_policy_find(o->policy);
	if (!p)
		return ks_error_set(e, KS_EINVAL, "unknown policy '%s' (%s)",
				    o->policy ? o->policy : "", ks_policy_names());
	return p->check ? p->check(o, e) : 0;
}

int ks_policy_open(const char *name, const struct ks_policy_env *env, struct ks_policy *p,
		   struct ks_error *e)
{
	memset(p, 0, sizeof(*p));
	const struct ks_policy_i *ops = ks_policy_find(name);
	if (!ops)
		return ks_error_set(e, KS_EINVAL, "unknown policy '%s' (%s)", name ? name : "",
				    ks_policy_names());
	if (ops->version != KS_POLICY_VERSION)
		return ks_error_set(e, KS_EINVAL, "policy '%s' has interface version %d, not %d",
				    ops->name, ops->version, KS_POLICY_VERSION);
	int rc = ops->open(&p->state, env, e);
	if (rc == 0)
		p->ops = ops;
	return rc;
}

int ks_policy_propose(struct ks_policy *p, struct ks_policy_cand *out, int max, int *n,
		      struct ks_policy_stop *why, struct ks_error *e)
{
	*n = 0;
	why->reason[0] = '\0';
	if (max > KS_POLICY_MAX_PROPOSALS)
		max = KS_POLICY_MAX_PROPOSALS;
	int rc = p->ops->propose(p->state, out, max, n, why, e);
	if (!rc && *n == 0 && !why->reason[0])
		snprintf(why->reason, sizeof(why->reason), "policy %s has nothing more to try",
			 p->ops->name);
	return rc;
}

int ks_policy_observe(struct ks_policy *p, const struct ks_policy_cand *c,
		      const struct ks_policy_outcome *o, struct ks_error *e)
{
	return p->ops->observe(p->state, c, o, e);
}

int ks_policy_snapshot(struct ks_policy *p, struct ks_buf *out, struct ks_error *e)
{
	int rc = p->ops->snapshot ? p->ops->snapshot(p->state, out, e) : 0;
	/* stored as the world model's version: a cut snapshot would not load back */
	if (!rc && (rc = ks_buf_failed(out)))
		ks_error_set(e, rc, "the snapshot could not be built whole (%s)", ks_strerror(rc));
	return rc;
}

void ks_policy_usage(struct ks_policy *p, struct ks_policy_usage *u)
{
	memset(u, 0, sizeof(*u));
	if (p->ops && p->ops->usage)
		p->ops->usage(p->state, u);
}

void ks_policy_close(struct ks_policy *p)
{
	if (p->ops && p->ops->free)
		p->ops->free(p->state);
	memset(p, 0, sizeof(*p));
}
