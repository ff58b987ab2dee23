/* The builtin policy: a strategy (wm, evolve, random, exhaustive) proposes configurations of the
 * task's knob templates; a candidate is a template's source with the knob values as -D
 * defines.  The same code tunes the knobs of an @ksearch kernel a model wrote
 * (ks_policy_builtin_new over a one-template space). */
#include "ksearch/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/log.h"
#include "ksearch/strategy.h"
#include "search/space.h"

/* one proposal in flight: the strings its candidate points to */
struct slot {
	int used;
	struct ks_proposal p;
	char defs[KS_TEMPLATE_MAX_KNOBS + 1][128];
	const char *list[KS_TEMPLATE_MAX_KNOBS + 1];
	struct ks_buf ident, knobs, title;
};

struct builtin {
	struct ks_search_space own; /* the task's templates (opened from the registry) */
	int owns_space;
	const struct ks_space *space;
	struct ks_strategy *s;
	struct ks_policy_builtin_cfg cfg;
	char *title_prefix;
	struct slot slots[KS_POLICY_MAX_PROPOSALS];
	int *round;
	int outstanding; /* proposals not observed yet */
	int defaults[KS_TEMPLATE_MAX_KNOBS];
};

static void builtin_free(void *state)
{
	struct builtin *b = state;
	if (!b)
		return;
	if (b->s)
		ks_strategy_free(b->s);
	if (b->owns_space)
		ks_search_space_release(&b->own);
	for (int i = 0; i < KS_POLICY_MAX_PROPOSALS; i++) {
		ks_buf_release(&b->slots[i].ident);
		ks_buf_release(&b->slots[i].knobs);
		ks_buf_release(&b->slots[i].title);
	}
	free(b->title_prefix);
	free(b);
}

static int builtin_start(struct builtin *b, const struct ks_space *space,
			 const struct ks_policy_builtin_cfg *cfg, struct ks_error *e)
{
	b->space = space;
	b->cfg = *cfg;
	if (cfg->title_prefix)
		b->title_prefix = strdup(cfg->title_prefix);
	b->cfg.title_prefix = b->title_prefix;
	if (space->ntemplates > 0)
		ks_template_config_default(space->templates[0], b->defaults);
	struct ks_strategy_config scfg = {.seed = cfg->seed, .root_title = cfg->root_title,
					  .kernel_summary = cfg->kernel_summary,
					  .budget = cfg->budget};
	return ks_strategy_new(cfg->strategy, space, &scfg, &b->s, e);
}

int ks_policy_builtin_new(const struct ks_space *space, const struct ks_policy_builtin_cfg *cfg,
			  struct ks_policy *p, struct ks_error *e)
{
	memset(p, 0, sizeof(*p));
	struct builtin *b = calloc(1, sizeof(*b));
	if (!b)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	int rc = builtin_start(b, space, cfg, e);
	if (rc) {
		builtin_free(b);
		return rc;
	}
	p->ops = &ks_policy_builtin;
	p->state = b;
	return 0;
}

static int builtin_check(const struct ks_run_opts *o, struct ks_error *e)
{
	if (!ks_strategy_find(o->strategy))
		return ks_strategy_unknown(o->strategy, e);
	if (o->llm_cmd && o->llm_cmd[0])
		return ks_error_set(e, KS_EINVAL,
				    "--llm-cmd is used by --policy cmd only (the policy is '%s')",
				    o->policy);
	return 0;
}

static int builtin_open(void **state, const struct ks_policy_env *env, struct ks_error *e)
{
	struct builtin *b = calloc(1, sizeof(*b));
	if (!b)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	int rc = ks_search_space_load(&b->own, env->task, env->be->name, env->be->ext, env->spec,
				      e);
	if (rc) {
		free(b);
		return rc;
	}
	b->owns_space = 1;
	b->round = env->round;
	struct ks_policy_builtin_cfg cfg = {.strategy = env->o->strategy, .seed = env->o->seed,
					    .root_title = "naive baseline",
					    .kernel_summary = env->task->summary,
					    .policy = "builtin", .parent = -1, .node = -1,
					    .budget = env->o->budget};
	if ((rc = builtin_start(b, &b->own.space, &cfg, e))) {
		builtin_free(b);
		return rc;
	}
	ks_info("strategy %s over %ld feasible configurations in %d templates", env->o->strategy,
		b->own.total_feasible, b->own.n);
	*state = b;
	return 0;
}

static struct slot *slot_get(struct builtin *b)
{
	for (int i = 0; i < KS_POLICY_MAX_PROPOSALS; i++)
		if (!b->slots[i].used) {
			struct slot *s = &b->slots[i];
			s->used = 1;
			if (!s->ident.cap) {
				ks_buf_init(&s->ident, 4096);
				ks_buf_init(&s->knobs, 4096);
				ks_buf_init(&s->title, 512);
			}
			ks_buf_reset(&s->ident);
			ks_buf_reset(&s->knobs);
			ks_buf_reset(&s->title);
			return s;
		}
	return NULL;
}

/* the default configuration of a tuned kernel is the kernel itself, measured already */
static int is_default(const struct builtin *b, const struct ks_proposal *p)
{
	const struct ks_template *t = b->space->templates[p->template_index];
	return b->cfg.skip_defaults &&
	       !memcmp(p->knobs, b->defaults, (size_t)t->nknobs * sizeof(int));
}

/* The candidate's label: the strategy's title, then what tells it from other candidates
 * of that title ("THREADS 0->1" made from two bases, "random: tiled" drawn twice): the
 * base candidate, and the configuration unless the title names the move from that base
 * or the configuration is the family's default */
static void title_label(struct ks_buf *out, const struct ks_template *t,
			const struct ks_proposal *p)
{
	int k, own = 0;
	ks_buf_adds(out, p->title);
	if (p->parent_candidate > 0)
		ks_buf_addf(out, " from #%ld", p->parent_candidate);
	if (p->parent_candidate > 0 && p->move[0])
		return;
	for (k = 0; k < t->nknobs; k++)
		own |= p->knobs[k] != t->knobs[k].def;
	for (k = 0; own && k < t->nknobs; k++)
		ks_buf_addf(out, "%s%s=%s", k ? " " : " (", t->knobs[k].name,
			    t->knobs[k].values[p->knobs[k]]);
	if (own)
		ks_buf_adds(out, ")");
}

static int builtin_propose(void *state, struct ks_policy_cand *out, int max, int *n,
			   struct ks_policy_stop *why, struct ks_error *e)
{
	struct builtin *b = state;
	*n = 0;
	while (*n < max) {
		struct ks_proposal p;
		int got = 0;
		int rc = ks_strategy_propose(b->s, &p, 1, &got, e);
		if (rc)
			return rc;
		if (!got)
			break;
		if (is_default(b, &p)) {
			struct ks_outcome oc = {.candidate = b->cfg.parent,
						.passed = b->cfg.parent_passed,
						.score = b->cfg.parent_score,
						.status = b->cfg.parent_status};
			if ((rc = ks_strategy_observe(b->s, &p, &oc, e)))
				return rc;
			continue;
		}
		struct slot *s = slot_get(b);
		if (!s)
			return ks_error_set(e, KS_ELIMIT, "builtin policy: too many proposals in flight");
		s->p = p;
		const struct ks_template *t = b->space->templates[p.template_index];
		ks_search_space_defines(t, p.knobs, &s->ident, s->defs, s->list,
					KS_TEMPLATE_MAX_KNOBS + 1);
		ks_search_space_knobs_json(t, p.knobs, &s->knobs);
		if (b->cfg.title_prefix)
			ks_buf_addf(&s->title, "%s [%s]", b->cfg.title_prefix, ks_buf_str(&s->ident));
		else
			title_label(&s->title, t, &p);
		out[*n] = (struct ks_policy_cand){
			.source = t->source, .path = t->path, .defines = s->list,
			.ident = ks_buf_str(&s->ident), .family = t->family ? t->family : "",
			.knobs = ks_buf_str(&s->knobs),
			.parent = p.parent_candidate > 0 ? p.parent_candidate : b->cfg.parent,
			.node = b->cfg.node >= 0 ? b->cfg.node : p.node,
			.title = ks_buf_str(&s->title), .purpose = b->cfg.title_prefix ? "tune" : "knobs",
			.policy = b->cfg.policy ? b->cfg.policy : "builtin", .token = s};
		(*n)++;
	}
	b->outstanding += *n;
	if (*n == 0)
		snprintf(why->reason, sizeof(why->reason), "the search space is exhausted");
	return 0;
}

static int builtin_observe(void *state, const struct ks_policy_cand *c,
			   const struct ks_policy_outcome *o, struct ks_error *e)
{
	struct builtin *b = state;
	struct slot *s = c->token;
	struct ks_outcome oc = {.candidate = o->candidate, .passed = o->passed,
				.score = o->passed ? o->score : 0, .status = o->status};
	int rc = ks_strategy_observe(b->s, &s->p, &oc, e);
	s->used = 0;
	/* a round is one batch of proposals: the strategy chose them before any result */
	if (--b->outstanding == 0 && b->round)
		(*b->round)++;
	return rc;
}

static int builtin_snapshot(void *state, struct ks_buf *out, struct ks_error *e)
{
	struct builtin *b = state;
	return ks_strategy_snapshot(b->s, out, e);
}

const struct ks_policy_i ks_policy_builtin = {
	.version = KS_POLICY_VERSION,
	.name = "builtin",
	.summary = "a strategy (--strategy wm, evolve, random, exhaustive) over the task's knob templates",
	.check = builtin_check,
	.open = builtin_open,
	.propose = builtin_propose,
	.observe = builtin_observe,
	.snapshot = builtin_snapshot,
	.free = builtin_free,
};
