/* wm: the world-model strategy on the builtin-policy space.
 *
 * Depth 1 holds one action per template family (its default configuration), rated from the
 * template's annotation.  A measured node that does not regress gets one child per one-knob
 * move of its configuration ("BLOCK_M 64->128", move key "BLOCK_M:+1"), rated
 *
 *     prior = 7 + 10 * ln(parent score / best score) + bonus(knob impacts)
 *
 * so children of the incumbent come first and the world's learned move shift (same units:
 * rating points per ln of speedup) orders them by what the move did elsewhere.  Every action
 * is one configuration, so a node closes once measured.  A one-knob move that breaks a
 * `require` is tried with each one-step change of another knob that repairs it.  When the
 * best has not improved for three stagnation windows (3 W), or nothing is open, the incumbent
 * gets two-knob moves (escapes ridges where one knob only pays off with another); when even
 * those are spent a random untried configuration is planted under the root as a restart.
 * A move whose candidate fails (wrong numbers, crash, timeout, compile error) while its base
 * passed teaches its move key a strong loss (FAIL_RATIO), so the same move from another node
 * waits behind untried moves instead of failing again, and a one-knob move that failed twice
 * (alone or inside two-knob moves) and never passed is not proposed again (measured on an
 * H200: a 3xTF32 GEMM run spent 5 of 14 candidates re-trying one accuracy-breaking knob move
 * before this; 1 of 18 after).
 * A one-step move that comes out slower than its base is tried again one step further
 * (cross_valley), at a lower prior.
 * A family within half of the best overall gets at least one evaluation per three of the
 * leading family's (FAMILY_SHARE), its most promising open action, whatever the priors say.
 * A seeded jitter of +-0.15 rating points breaks ties differently per seed. */
#include "search/strategy_impl.h"
#include "search/world_impl.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRIOR_BASE 7.0
#define COMPOUND_PENALTY 1.0 /* rating points: a two-knob move is a bigger gamble */
#define STAGNATION_WINDOWS 3
#define FAMILY_WEIGHT 0.3 /* weight of a family's gap to the best overall */
/* a template family whose best is within FAMILY_VIABLE of the best overall is owed
 * FAMILY_SHARE evaluations per evaluation of the leading family: its default is one sample of
 * what its knobs can reach (see starved_family_node) */
#define FAMILY_SHARE (1.0 / 3.0)
#define FAMILY_VIABLE 0.5
/* rating points off the prior of a move past a valley (cross_valley): such moves wait behind
 * the ordinary ones of nodes near the best, about a factor of 1.6 in the parent's score */
#define VALLEY_PENALTY 5.0
/* what a failed move teaches its key, as a speedup ratio: with the default learning scale
 * one failure lowers the same move elsewhere by about 4.6 rating points */
#define FAIL_RATIO 0.25
/* a one-knob move that failed this often, alone or as part of a two-knob move, and never
 * passed, is not proposed again */
#define CONDEMN_FAILS 2

enum wm_kind { WM_FAMILY, WM_MOVE, WM_COMPOUND, WM_RESTART };

struct wm_info {
	int t, c;          /* configuration the node evaluates */
	enum wm_kind kind;
	double base_score; /* score of the node it builds on (0 for families and restarts) */
	double bonus;      /* prior bonus from the knob impacts */
	double shift_hint; /* single-move shifts folded into a compound prior */
	int compound_done; /* two-knob children added */
	int owned;         /* created by this strategy (carries a configuration) */
};

/* pass/fail record of a one-knob move key ("SPLIT_ACC:-1") over every node that made it */
struct move_record {
	char key[64];
	int fails, passes;
};

struct wm {
	const struct ks_space *space;
	struct ks_world w;
	struct ks_ledger ledger;
	struct ks_prng rng;
	struct wm_info *info; /* index = node id */
	int info_alloc;
	double best;
	double *fam_best; /* best score per template */
	int *fam_evals;   /* evaluations proposed per template */
	double share;     /* FAMILY_SHARE or the configuration's, 0: off */
	int best_node;
	int since; /* evaluations since the best improved */
	struct move_record *rec;
	int nrec, rec_alloc;
};

static int info_for(struct wm *m, int id, struct ks_error *e)
{
	if (id >= m->info_alloc) {
		int na = m->info_alloc ? m->info_alloc : 64;
		struct wm_info *ni;
		while (na <= id)
			na *= 2;
		ni = realloc(m->info, (size_t)na * sizeof(*ni));
		if (!ni)
			return ks_error_set(e, KS_ENOMEM, "wm node info");
		memset(ni + m->info_alloc, 0, (size_t)(na - m->info_alloc) * sizeof(*ni));
		m->info = ni;
		m->info_alloc = na;
	}
	return 0;
}

static const int *cfg_of(const struct wm *m, int t, int c)
{
	const struct ks_config_set *fs = &m->space->feasible[t];
	return fs->cfg + (size_t)c * fs->nknobs;
}

/* {"family":..., "template":t, "config":c, "knobs":{...}, "move":..., "from":{...}}: a move
 * says which knobs moved ("move") and from which configuration ("from", the base's knobs) */
static char *payload(const struct wm *m, int t, int c, const char *move, int base_c)
{
	const struct ks_template *tp = m->space->templates[t];
	const int *cfg = cfg_of(m, t, c);
	json_t *o = json_object(), *k = json_object();
	char *s = NULL;
	if (!o || !k)
		goto out;
	json_object_set_new(o, "family", json_string(tp->family));
	json_object_set_new(o, "template", json_integer(t));
	json_object_set_new(o, "config", json_integer(c));
	for (int i = 0; i < tp->nknobs; i++)
		json_object_set_new(k, tp->knobs[i].name, json_string(tp->knobs[i].values[cfg[i]]));
	json_object_set_new(o, "knobs", k);
	k = NULL;
	if (move && *move)
		json_object_set_new(o, "move", json_string(move));
	if (move && *move && base_c >= 0) {
		const int *from = cfg_of(m, t, base_c);
		json_t *f = json_object();
		if (!f)
			goto out;
		for (int i = 0; i < tp->nknobs; i++)
			if (from[i] != cfg[i])
				json_object_set_new(f, tp->knobs[i].name,
						    json_string(tp->knobs[i].values[from[i]]));
		json_object_set_new(o, "from", f);
	}
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
out:
	json_decref(o);
	json_decref(k);
	return s;
}

static double move_prior(const struct wm *m, int t, double base_score, double bonus)
{
	/* against the family's own best, plus a softened gap between the family and the best
	 * overall: a family with a worse default but a higher ceiling keeps being explored */
	double fam = m->fam_best[t] > 0 ? m->fam_best[t] : base_score;
	double rel = fam > 0 && base_score > 0 ? log(base_score / fam) : 0.0;
	double gap = m->best > 0 && fam > 0 ? log(fam / m->best) : 0.0;
	return ks_clamp(PRIOR_BASE + 10.0 * rel + 10.0 * FAMILY_WEIGHT * gap + bonus, -50, 50);
}

static int add_node(struct wm *m, int parent, int t, int c, enum wm_kind kind, const char *title,
		    const char *move, int difficulty, const double *impacts, double prior,
		    double confidence, double base_score, double bonus, double shift_hint,
		    struct ks_error *e)
{
	struct ks_node_spec s = {.title = title, .difficulty = difficulty,
				 .confidence = confidence};
	char *pl = payload(m, t, c, move,
			   parent != m->w.root && parent < m->info_alloc ? m->info[parent].c : -1);
	int id, rc;
	if (!pl)
		return ks_error_set(e, KS_ENOMEM, "wm payload");
	for (int k = 0; k < KS_IMPACT_COUNT; k++)
		s.impacts[k] = impacts ? impacts[k] : 0;
	s.rating = ks_clamp(prior, 0, 10);
	s.payload = pl;
	rc = ks_world_add(&m->w, parent, &s, &id, e);
	free(pl);
	if (!rc)
		rc = info_for(m, id, e);
	if (rc)
		return rc;
	/* the prior may leave [0, 10] before clamping; keep the unclamped value so learning
	 * and rescoring compose */
	if ((rc = ks_world_rescore(&m->w, id, prior, -1, e)))
		return rc;
	m->info[id] = (struct wm_info){.t = t, .c = c, .kind = kind, .base_score = base_score,
				       .bonus = bonus, .shift_hint = shift_hint, .owned = 1};
	return 0;
}

/* seeded tie-breaker: +-0.15 rating points (about 1.5% of speedup), so seeds explore
 * different orders among equally promising moves */
static double jitter(struct wm *m)
{
	return 0.3 * (ks_prng_unit(&m->rng) - 0.5);
}

static double knob_weight(const struct ks_knob *kb)
{
	double w = 0;
	for (int k = 0; k < KS_IMPACT_COUNT; k++)
		w = kb->impacts[k] > w ? kb->impacts[k] : w;
	return w;
}

static int unseen(const struct wm *m, int t, int c)
{
	return c >= 0 && m->ledger.seen[ks_ledger_slot(&m->ledger, t, c)] == KS_SEEN_NO;
}

/* A one-knob move that breaks a `require` (VEC up while UNROLL * VEC is capped) is tried
 * together with each one-step change of another knob that makes it feasible again. */
static int expand_repairs(struct wm *m, int id, double score, const struct ks_knob_move *mv,
			  struct ks_error *e)
{
	const struct wm_info in = m->info[id];
	const struct ks_template *tp = m->space->templates[in.t];
	const struct ks_knob *kb = &tp->knobs[mv->knob];
	const int *base = cfg_of(m, in.t, in.c);
	int cfg[KS_TEMPLATE_MAX_KNOBS];
	for (int j = 0; j < tp->nknobs; j++) {
		for (int d = -1; d <= 1 && j != mv->knob; d += 2) {
			const struct ks_knob *kj = &tp->knobs[j];
			char key[128], k1[64], k2[64], title[160];
			int a = mv->knob < j ? mv->knob : j, c, rc;
			double bonus, hint;
			if (base[j] + d < 0 || base[j] + d >= kj->nvalues)
				continue;
			memcpy(cfg, base, (size_t)tp->nknobs * sizeof(int));
			cfg[mv->knob] = mv->to;
			cfg[j] += d;
			c = ks_config_set_find(&m->space->feasible[in.t], tp, cfg);
			if (!unseen(m, in.t, c))
				continue;
			/* the key names both steps in knob order, like expand_compound's keys */
			snprintf(k1, sizeof(k1), "%s:%+d", tp->knobs[a].name,
				 a == j ? d : mv->to - mv->from);
			snprintf(k2, sizeof(k2), "%s:%+d", tp->knobs[a == j ? mv->knob : j].name,
				 a == j ? mv->to - mv->from : d);
			snprintf(key, sizeof(key), "%s,%s", k1, k2);
			snprintf(title, sizeof(title), "%s %s->%s (with %s %s->%s)", kb->name,
				 kb->values[mv->from], kb->values[mv->to], kj->name, kj->values[base[j]],
				 kj->values[cfg[j]]);
			bonus = 0.1 * knob_weight(kb) - 0.05 * knob_weight(kj) + jitter(m);
			snprintf(k1, sizeof(k1), "%s:%+d", kb->name, mv->to - mv->from);
			hint = ks_world_move_shift(&m->w, k1);
			rc = add_node(m, id, in.t, c, WM_COMPOUND, title, key, 1, kb->impacts,
				      move_prior(m, in.t, score, bonus) + hint, 0.5, score, bonus, hint, e);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* the child of node id that makes the one-knob move mv, if feasible and untried; a move of one
 * step that breaks a `require` is tried with the repairs instead.  penalty: rating points off
 * the prior */
static int add_move(struct wm *m, int id, double score, const struct ks_knob_move *mv,
		    double penalty, struct ks_error *e)
{
	const struct wm_info in = m->info[id];
	const struct ks_template *tp = m->space->templates[in.t];
	const struct ks_knob *kb = &tp->knobs[mv->knob];
	int cfg[KS_TEMPLATE_MAX_KNOBS], c, rc;
	char key[64], title[160];
	double bonus;
	memcpy(cfg, cfg_of(m, in.t, in.c), (size_t)tp->nknobs * sizeof(int));
	cfg[mv->knob] = mv->to;
	c = ks_config_set_find(&m->space->feasible[in.t], tp, cfg);
	if (c < 0)
		return abs(mv->to - mv->from) == 1 ? expand_repairs(m, id, score, mv, e) : 0;
	if (!unseen(m, in.t, c))
		return 0;
	ks_template_move_key(tp, mv, 0, key, sizeof(key));
	snprintf(title, sizeof(title), "%s %s->%s", kb->name, kb->values[mv->from],
		 kb->values[mv->to]);
	bonus = 0.1 * knob_weight(kb) + jitter(m) - penalty;
	rc = add_node(m, id, in.t, c, WM_MOVE, title, key, 1, kb->impacts,
		      move_prior(m, in.t, score, bonus), 0.5, score, bonus, 0, e);
	if (!rc && kb->summary)
		rc = ks_world_set_text(&m->w.nodes[m->w.nnodes - 1].description, kb->summary, e);
	return rc;
}

/* one child per feasible, untried one-knob move of node id's configuration */
static int expand_single(struct wm *m, int id, double score, struct ks_error *e)
{
	const struct wm_info in = m->info[id];
	const struct ks_template *tp = m->space->templates[in.t];
	struct ks_knob_move mv[2 * KS_TEMPLATE_MAX_KNOBS];
	int n = ks_template_neighbours(tp, cfg_of(m, in.t, in.c), mv, 2 * KS_TEMPLATE_MAX_KNOBS);
	for (int i = 0; i < n; i++) {
		int rc = add_move(m, id, score, &mv[i], 0, e);
		if (rc)
			return rc;
	}
	return 0;
}

/* Node id, a one-step move, came out slower than its base: try the same knob one step further
 * from the base.  Knob values are not always a smooth scale (THREADS 0 means all cores, so on
 * a 2-core machine THREADS 0 and 2 are the same kernel and THREADS 1 the slow one between);
 * without this the value past a valley is reached only by a restart. */
static int cross_valley(struct wm *m, int id, struct ks_error *e)
{
	const struct ks_node *node = ks_world_node(&m->w, id);
	int parent = node ? node->parent : -1;
	if (parent < 0 || parent >= m->info_alloc || !m->info[parent].owned ||
	    m->info[parent].t != m->info[id].t)
		return 0;
	const struct ks_node *pn = ks_world_node(&m->w, parent);
	const struct ks_template *tp = m->space->templates[m->info[id].t];
	const int *from = cfg_of(m, m->info[id].t, m->info[parent].c);
	const int *to = cfg_of(m, m->info[id].t, m->info[id].c);
	for (int k = 0; k < tp->nknobs; k++) {
		int d = to[k] - from[k];
		if (!d)
			continue;
		if (abs(d) != 1 || from[k] + 2 * d < 0 || from[k] + 2 * d >= tp->knobs[k].nvalues)
			return 0;
		struct ks_knob_move mv = {.knob = k, .from = from[k], .to = from[k] + 2 * d};
		return add_move(m, parent, pn->score, &mv, VALLEY_PENALTY, e);
	}
	return 0;
}

/* the two-knob move (knob a by da, knob b by db) of node id, if feasible and untried */
static int add_compound(struct wm *m, int id, double score, int a, int da, int b, int db,
			int *added, struct ks_error *e)
{
	const struct wm_info in = m->info[id];
	const struct ks_template *tp = m->space->templates[in.t];
	const struct ks_knob *ka = &tp->knobs[a], *kb = &tp->knobs[b];
	const int *base = cfg_of(m, in.t, in.c);
	int cfg[KS_TEMPLATE_MAX_KNOBS], c, rc;
	char key[128], ka_key[64], kb_key[64], title[160];
	double bonus, hint;

	if (base[a] + da < 0 || base[a] + da >= ka->nvalues || base[b] + db < 0 ||
	    base[b] + db >= kb->nvalues)
		return 0;
	memcpy(cfg, base, (size_t)tp->nknobs * sizeof(int));
	cfg[a] += da;
	cfg[b] += db;
	c = ks_config_set_find(&m->space->feasible[in.t], tp, cfg);
	if (!unseen(m, in.t, c))
		return 0;
	snprintf(ka_key, sizeof(ka_key), "%s:%+d", ka->name, da);
	snprintf(kb_key, sizeof(kb_key), "%s:%+d", kb->name, db);
	snprintf(key, sizeof(key), "%s,%s", ka_key, kb_key);
	snprintf(title, sizeof(title), "%s %s->%s, %s %s->%s", ka->name, ka->values[base[a]],
		 ka->values[cfg[a]], kb->name, kb->values[base[b]], kb->values[cfg[b]]);
	bonus = 0.05 * (knob_weight(ka) + knob_weight(kb)) + jitter(m) - COMPOUND_PENALTY;
	/* what the parts did elsewhere, half weight each */
	hint = 0.5 * (ks_world_move_shift(&m->w, ka_key) + ks_world_move_shift(&m->w, kb_key));
	rc = add_node(m, id, in.t, c, WM_COMPOUND, title, key, 2, NULL,
		      move_prior(m, in.t, score, bonus) + hint, 0.4, score, bonus, hint, e);
	if (!rc)
		(*added)++;
	return rc;
}

/* all two-knob moves of node id's configuration; *added counts the new nodes */
static int expand_compound(struct wm *m, int id, int *added, struct ks_error *e)
{
	const struct ks_template *tp = m->space->templates[m->info[id].t];
	const struct ks_node *node = ks_world_node(&m->w, id);
	double score = node ? node->score : 0;
	m->info[id].compound_done = 1;
	for (int a = 0; a < tp->nknobs; a++)
		for (int b = a + 1; b < tp->nknobs; b++)
			for (int d = 0; d < 4; d++) {
				int rc = add_compound(m, id, score, a, d & 1 ? 1 : -1, b,
						      d & 2 ? 1 : -1, added, e);
				if (rc)
					return rc;
			}
	return 0;
}

/* nothing open: widen around good nodes, else restart from a random untried configuration */
static int refill(struct wm *m, int *added, struct ks_error *e)
{
	*added = 0;
	for (;;) {
		int pick = -1, rc;
		for (int id = 0; id < m->w.nnodes; id++) {
			const struct ks_node *n = ks_world_node(&m->w, id);
			if (!n || id == m->w.root || n->candidate < 0 || n->regression ||
			    id >= m->info_alloc || m->info[id].compound_done)
				continue;
			if (pick < 0 || n->score > m->w.nodes[pick].score)
				pick = id;
		}
		if (pick < 0)
			break;
		if ((rc = expand_compound(m, pick, added, e)))
			return rc;
		if (*added)
			return 0;
	}
	if (m->ledger.done + m->ledger.pending >= m->ledger.total)
		return 0;
	{
		int slot = ks_ledger_random_unseen(&m->ledger, &m->rng), rc;
		int t = ks_ledger_template(&m->ledger, slot);
		rc = add_node(m, m->w.root, t, slot - m->ledger.offset[t], WM_RESTART,
			      "restart: untried configuration", NULL, 1, NULL, 0.0, 0.2, 0, 0, 0, e);
		if (!rc)
			*added = 1;
		return rc;
	}
}

/* the default when feasible, else the feasible configuration closest to it (L1 over value
 * indices, lower index on ties) */
static int nearest_config(const struct wm *m, int t, const int *def)
{
	const struct ks_template *tp = m->space->templates[t];
	int c = ks_config_set_find(&m->space->feasible[t], tp, def), bd = -1;
	if (c >= 0)
		return c;
	for (int i = 0; i < m->space->feasible[t].n; i++) {
		const int *x = cfg_of(m, t, i);
		int d = 0;
		for (int k = 0; k < tp->nknobs; k++)
			d += abs(x[k] - def[k]);
		if (bd < 0 || d < bd) {
			bd = d;
			c = i;
		}
	}
	return c;
}

static int wm_init(void **state, const struct ks_space *space,
		   const struct ks_strategy_config *cfg, struct ks_error *e)
{
	struct wm *m = calloc(1, sizeof(*m));
	int rc;
	if (!m)
		return ks_error_set(e, KS_ENOMEM, "wm strategy");
	m->space = space;
	m->best_node = -1;
	m->share = cfg->family_share > 0 ? cfg->family_share
					 : cfg->family_share < 0 ? 0 : FAMILY_SHARE;
	ks_prng_seed(&m->rng, cfg->seed);
	m->fam_best = calloc((size_t)space->ntemplates, sizeof(double));
	m->fam_evals = calloc((size_t)space->ntemplates, sizeof(int));
	if (!m->fam_best || !m->fam_evals) {
		free(m->fam_best);
		free(m->fam_evals);
		free(m);
		return ks_error_set(e, KS_ENOMEM, "wm strategy");
	}
	rc = ks_ledger_init(&m->ledger, space, e);
	if (rc) {
		free(m->fam_best);
		free(m->fam_evals);
		free(m);
		return rc;
	}
	rc = ks_world_init(&m->w, cfg->root_title ? cfg->root_title : "naive baseline",
			   cfg->kernel_summary, e);
	if (rc) {
		ks_ledger_release(&m->ledger);
		free(m->fam_best);
		free(m->fam_evals);
		free(m);
		return rc;
	}
	if (cfg->params) {
		m->w.params = *cfg->params;
	} else {
		/* every action is one configuration: exploration comes from the frontier itself */
		m->w.params.explore = 0.02;
	}
	*state = m;
	for (int t = 0; t < space->ntemplates && !rc; t++) {
		const struct ks_template *tp = space->templates[t];
		int def[KS_TEMPLATE_MAX_KNOBS], c;
		double imp[KS_IMPACT_COUNT] = {0};
		char title[160];
		if (!space->feasible[t].n)
			continue;
		ks_template_config_default(tp, def);
		c = nearest_config(m, t, def);
		for (int k = 0; k < tp->nknobs; k++)
			for (int a = 0; a < KS_IMPACT_COUNT; a++)
				if (tp->knobs[k].impacts[a] > imp[a])
					imp[a] = tp->knobs[k].impacts[a];
		snprintf(title, sizeof(title), "family: %s", tp->family);
		/* families come before knob moves: every family's default is measured once */
		rc = add_node(m, m->w.root, t, c, WM_FAMILY, title, NULL, tp->difficulty, imp,
			      8.0 + 0.2 * tp->rating + jitter(m), 0.3, 0, 0, 0, e);
		if (!rc && tp->summary)
			rc = ks_world_set_text(&m->w.nodes[m->w.nnodes - 1].description, tp->summary, e);
	}
	if (rc) {
		*state = NULL;
		ks_world_release(&m->w);
		ks_ledger_release(&m->ledger);
		free(m->info);
		free(m->fam_best);
		free(m->fam_evals);
		free(m);
	}
	return rc;
}

static struct move_record *record_of(struct wm *m, const char *key, size_t len, int create)
{
	for (int i = 0; i < m->nrec; i++)
		if (strlen(m->rec[i].key) == len && !memcmp(m->rec[i].key, key, len))
			return &m->rec[i];
	if (!create || len >= sizeof(m->rec[0].key))
		return NULL;
	if (m->nrec == m->rec_alloc) {
		int na = m->rec_alloc ? 2 * m->rec_alloc : 16;
		struct move_record *nr = realloc(m->rec, (size_t)na * sizeof(*nr));
		if (!nr)
			return NULL; /* the record is advice: without memory the search goes on */
		m->rec = nr;
		m->rec_alloc = na;
	}
	memset(&m->rec[m->nrec], 0, sizeof(m->rec[0]));
	memcpy(m->rec[m->nrec].key, key, len);
	return &m->rec[m->nrec++];
}

/* count a pass or a failure for every one-knob part of a move key */
static void record_parts(struct wm *m, const char *key, int passed)
{
	while (key && *key) { /* "A:+1,B:-1": one part at a time */
		size_t len = strcspn(key, ",");
		struct move_record *r = record_of(m, key, len, 1);
		if (r)
			*(passed ? &r->passes : &r->fails) += 1;
		key += len + (key[len] == ',');
	}
}

/* 1 when a part of the move key failed CONDEMN_FAILS times and never passed */
static int condemned(struct wm *m, const char *key)
{
	while (key && *key) {
		size_t len = strcspn(key, ",");
		const struct move_record *r = record_of(m, key, len, 0);
		if (r && r->fails >= CONDEMN_FAILS && !r->passes)
			return 1;
		key += len + (key[len] == ',');
	}
	return 0;
}

/* The open action to evaluate for a family that trails the leader in effort but not hopelessly
 * in score, or -1.  Priors compare a family's best with the best overall, so a family whose
 * default is slower waits behind every move of the leader that stays near the leader's best:
 * on the CPU attention task wm refined flash-tiled for hundreds of evaluations before it
 * opened materialized-scores, whose tuned kernels were as fast (docs/results/
 * search-efficiency.md).  The family owed most (fewest evaluations per evaluation of the
 * leader) goes first, its highest-priority open action. */
static int starved_family_node(const struct wm *m)
{
	int lead = m->best_node >= 0 ? m->info[m->best_node].t : -1, pick = -1;
	double pick_share = 0, pp = 0;
	if (lead < 0 || m->share <= 0)
		return -1;
	for (int id = 0; id < m->w.nnodes && id < m->info_alloc; id++) {
		const struct ks_node *n = ks_world_node(&m->w, id);
		const struct wm_info *in = &m->info[id];
		double s, pr;
		if (!n || n->status != KS_NODE_OPEN || !in->owned || in->t == lead ||
		    m->fam_best[in->t] < FAMILY_VIABLE * m->best)
			continue;
		s = (double)m->fam_evals[in->t] / (m->fam_evals[lead] + 1);
		if (s >= m->share)
			continue;
		pr = ks_world_priority(&m->w, id);
		if (pick < 0 || s < pick_share || (s == pick_share && pr > pp)) {
			pick = id;
			pick_share = s;
			pp = pr;
		}
	}
	return pick;
}

static int wm_propose(void *state, struct ks_proposal *out, int max, int *n, struct ks_error *e)
{
	struct wm *m = state;
	while (*n < max) {
		struct ks_error se = {0};
		struct wm_info *in;
		struct ks_proposal *p;
		const struct ks_node *node;
		int id, rc, base;
		/* three stagnation windows without a new best: widen the incumbent's
		 * neighbourhood to two-knob moves (once per incumbent) */
		if (m->best_node >= 0 && !m->info[m->best_node].compound_done &&
		    m->since >= STAGNATION_WINDOWS * m->w.params.stagnation_window) {
			int added = 0;
			if ((rc = expand_compound(m, m->best_node, &added, e)))
				return rc;
		}
		id = starved_family_node(m);
		rc = id >= 0 ? 0 : ks_world_select(&m->w, &id, &se);
		if (rc == KS_ENOTFOUND) {
			int added = 0;
			if ((rc = refill(m, &added, e)))
				return rc;
			if (!added)
				break;
			continue;
		}
		if (rc)
			return ks_error_set(e, rc, "%s", se.msg);
		in = id < m->info_alloc ? &m->info[id] : NULL;
		if (!in || !in->owned) {
			/* an action without a configuration is not this policy's to evaluate */
			ks_world_set_status(&m->w, id, KS_NODE_CLOSED, "exhausted", e);
			continue;
		}
		if (!unseen(m, in->t, in->c)) {
			ks_world_set_status(&m->w, id, KS_NODE_CLOSED, "duplicate", e);
			continue;
		}
		if (in->kind != WM_FAMILY && condemned(m, ks_world_node(&m->w, id)->move)) {
			ks_world_set_status(&m->w, id, KS_NODE_CLOSED, "move failed elsewhere", e);
			continue;
		}
		if ((rc = ks_world_begin(&m->w, id, e)) ||
		    (rc = ks_ledger_propose(&m->ledger, in->t, in->c, e)))
			return rc;
		m->fam_evals[in->t]++;
		node = ks_world_node(&m->w, id);
		p = &out[*n];
		ks_proposal_fill(m->space, in->t, in->c, p);
		p->node = id;
		base = ks_world_base(&m->w, node->parent >= 0 ? node->parent : id);
		p->parent_candidate = ks_world_node(&m->w, base)->candidate;
		snprintf(p->title, sizeof(p->title), "%s", node->title);
		snprintf(p->move, sizeof(p->move), "%s", node->move ? node->move : "");
		(*n)++;
	}
	return 0;
}

/* A two-knob move's effect also counts, halved in log terms, as evidence for each of its
 * one-knob parts ("VEC:+1,UNROLL:-1" informs "VEC:+1" and "UNROLL:-1"). */
static int learn_parts(struct wm *m, int id, double ratio, struct ks_error *e)
{
	const char *key = ks_world_node(&m->w, id)->move;
	const char *comma = key ? strchr(key, ',') : NULL;
	char part[64];
	int rc;
	if (!comma || (size_t)(comma - key) >= sizeof(part))
		return 0;
	memcpy(part, key, (size_t)(comma - key));
	part[comma - key] = '\0';
	if ((rc = ks_world_learn(&m->w, part, sqrt(ratio), id, e)))
		return rc;
	return ks_world_learn(&m->w, comma + 1, sqrt(ratio), id, e);
}

static int wm_observe(void *state, const struct ks_proposal *p, const struct ks_outcome *o,
		      struct ks_error *e)
{
	struct wm *m = state;
	const struct ks_node *node = ks_world_node(&m->w, p->node);
	enum ks_refine verdict;
	int rc, improved = 0;
	if (!node || p->node >= m->info_alloc || !m->info[p->node].owned ||
	    m->info[p->node].t != p->template_index ||
	    m->info[p->node].c != p->config)
		return ks_error_set(e, KS_EINVAL, "observe: proposal does not match world node %d",
				    p->node);
	if ((rc = ks_ledger_observe(&m->ledger, p->template_index, p->config, o, e)) ||
	    (rc = ks_world_record(&m->w, p->node, o->candidate, o->passed, o->score, &verdict, e)))
		return rc;
	node = ks_world_node(&m->w, p->node);
	/* the action is one configuration: measured means explored */
	if (node->status == KS_NODE_ACTIVE || node->status == KS_NODE_OPEN)
		ks_world_set_status(&m->w, p->node, KS_NODE_CLOSED, "explored", e);
	if (o->passed && o->score > m->fam_best[p->template_index]) {
		m->fam_best[p->template_index] = o->score;
		improved = 1;
	}
	if (o->passed && o->score > m->best * (1 + 1e-12)) {
		improved = 1;
		m->best = o->score;
		m->best_node = p->node;
		m->since = 0;
	} else {
		m->since++;
	}
	if (o->passed && m->info[p->node].kind == WM_COMPOUND && m->info[p->node].base_score > 0 &&
	    (rc = learn_parts(m, p->node, o->score / m->info[p->node].base_score, e)))
		return rc;
	if (node->move && m->info[p->node].base_score > 0)
		record_parts(m, node->move, o->passed);
	/* a move that broke a passing base is to blame for the failure */
	if (!o->passed && node->move && m->info[p->node].base_score > 0 &&
	    ((rc = ks_world_learn(&m->w, node->move, FAIL_RATIO, p->node, e)) ||
	     (m->info[p->node].kind == WM_COMPOUND && (rc = learn_parts(m, p->node, FAIL_RATIO, e)))))
		return rc;
	if (o->passed && !node->regression && (rc = expand_single(m, p->node, o->score, e)))
		return rc;
	if (o->passed && node->regression && m->info[p->node].kind == WM_MOVE &&
	    (rc = cross_valley(m, p->node, e)))
		return rc;
	if (improved) {
		/* the yardstick moved: re-rate every open move against the new best */
		for (int id = 0; id < m->w.nnodes && id < m->info_alloc; id++) {
			const struct ks_node *n = ks_world_node(&m->w, id);
			const struct wm_info *in = &m->info[id];
			if (!n || n->status != KS_NODE_OPEN ||
			    (in->kind != WM_MOVE && in->kind != WM_COMPOUND))
				continue;
			rc = ks_world_rescore(&m->w, id,
					      move_prior(m, in->t, in->base_score, in->bonus) +
						      in->shift_hint,
					      -1, e);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static const struct ks_world *wm_world(const void *state)
{
	return &((const struct wm *)state)->w;
}

static int wm_snapshot(const void *state, struct ks_buf *out, struct ks_error *e)
{
	return ks_world_export(&((const struct wm *)state)->w, out, e);
}

static void wm_free(void *state)
{
	struct wm *m = state;
	ks_world_release(&m->w);
	ks_ledger_release(&m->ledger);
	free(m->info);
	free(m->fam_best);
	free(m->fam_evals);
	free(m->rec);
	free(m);
}

const struct ks_strategy_ops ks_strategy_wm = {
	.version = KS_STRATEGY_VERSION,
	.name = "wm",
	.init = wm_init,
	.propose = wm_propose,
	.observe = wm_observe,
	.world = wm_world,
	.snapshot = wm_snapshot,
	.free = wm_free,
};
