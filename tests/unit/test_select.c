/* Selection (priority, exploration, failure penalty, difficulty gate, ties), refinement
 * sessions (debug and stagnation budgets), regression and base, learning across the tree. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ksearch/world.h"
#include "tap.h"

static int add(struct ks_world *w, int parent, const char *title, double rating, int difficulty,
	       const char *move)
{
	struct ks_node_spec s = {.title = title, .difficulty = difficulty, .rating = rating,
				 .confidence = 0.5};
	char payload[128];
	struct ks_error e = {0};
	int id = -1;
	if (move) {
		snprintf(payload, sizeof(payload), "{\"move\":\"%s\"}", move);
		s.payload = payload;
	}
	if (ks_world_add(w, parent, &s, &id, &e))
		printf("# add failed: %s\n", e.msg);
	return id;
}

static int selected(const struct ks_world *w)
{
	int id = -1;
	struct ks_error e = {0};
	ks_world_select(w, &id, &e);
	return id;
}

int main(void)
{
	struct ks_world w;
	struct ks_error e = {0};
	enum ks_refine v;
	int a, b, c, d, x, rc;

	ks_world_init(&w, "naive", "k", &e);
	a = add(&w, 0, "a", 6, 1, NULL);
	b = add(&w, 0, "b", 6, 1, NULL);
	c = add(&w, 0, "c", 9, 4, NULL);
	/* c has difficulty 4 > gate 2, and easier siblings are untried: not eligible */
	ok(!ks_world_eligible(&w, c), "hard node gated while easier siblings are untried");
	ok(ks_world_eligible(&w, a), "easy node eligible");

	ks_world_release(&w);
	ks_world_init(&w, "naive", "k", &e);
	a = add(&w, 0, "a", 6, 1, NULL);
	b = add(&w, 0, "b", 6, 1, NULL);
	c = add(&w, 0, "c", 9, 4, NULL);
	is_int(selected(&w), a, "gate: the 9-rated hard node waits; tie broken by lower id");
	ks_world_begin(&w, a, &e);
	ks_world_record(&w, a, 1, 1, 2.0, &v, &e);
	ks_world_set_status(&w, a, KS_NODE_CLOSED, "explored", &e);
	ok(!ks_world_eligible(&w, c), "still gated: sibling b untried");
	ks_world_begin(&w, b, &e);
	ks_world_set_status(&w, b, KS_NODE_OPEN, NULL, &e);
	ok(ks_world_eligible(&w, c), "eligible once easier siblings are tried");
	is_int(selected(&w), c, "then the high rating wins");
	/* maturity also opens the gate */
	d = add(&w, a, "d", 5, 5, NULL);
	x = add(&w, a, "x", 1, 1, NULL);
	ok(!ks_world_eligible(&w, d), "difficulty 5 gated early");
	w.records = 3 * w.params.difficulty_step;
	ok(ks_world_eligible(&w, d), "difficulty 5 eligible as the run matures");

	/* exploration: equal ratings, the less visited node gets the higher priority */
	ks_world_release(&w);
	ks_world_init(&w, "naive", "k", &e);
	a = add(&w, 0, "a", 5, 1, NULL);
	b = add(&w, 0, "b", 5, 1, NULL);
	for (int i = 0; i < 3; i++)
		ks_world_begin(&w, a, &e);
	ks_world_set_status(&w, a, KS_NODE_OPEN, NULL, &e);
	ok(ks_world_priority(&w, b) > ks_world_priority(&w, a), "unvisited explored first");
	is_int(selected(&w), b, "select the unvisited");
	/* failure penalty */
	ks_world_begin(&w, b, &e);
	ks_world_record(&w, b, 1, 0, 0, &v, &e);
	ks_world_record(&w, b, 2, 0, 0, &v, &e);
	ks_world_set_status(&w, b, KS_NODE_OPEN, NULL, &e);
	ks_world_begin(&w, a, &e);
	ks_world_set_status(&w, a, KS_NODE_OPEN, NULL, &e);
	/* now both have visits 4 vs 1 but b failed twice: the penalty outweighs exploration */
	ok(ks_world_priority(&w, b) < ks_world_priority(&w, a) + 0.2,
	   "failures lower the priority (%.3f vs %.3f)", ks_world_priority(&w, b),
	   ks_world_priority(&w, a));
	{
		double before = ks_world_priority(&w, b);
		ks_world_record(&w, b, 3, 0, 0, &v, &e);
		is_int(v, KS_REFINE_DEBUG_OUT, "third consecutive failure spends the debug budget");
		is_int(ks_world_node(&w, b)->status, KS_NODE_CLOSED, "closed");
		ok(ks_world_priority(&w, b) < before, "penalty grows with failures");
	}

	/* refinement session: stagnation window W = 5 counts non-improving passes only */
	ks_world_release(&w);
	ks_world_init(&w, "naive", "k", &e);
	a = add(&w, 0, "a", 5, 1, NULL);
	rc = ks_world_record(&w, a, 10, 1, 2.0, &v, &e);
	ok(rc == 0 && v == KS_REFINE_CONTINUE, "first pass continues");
	ok(ks_world_node(&w, a)->visits == 1 && ks_world_node(&w, a)->status == KS_NODE_ACTIVE,
	   "a record starts the session implicitly");
	ks_world_begin(&w, a, &e);
	is_int(ks_world_node(&w, a)->visits, 2, "begin counts a visit");
	ks_world_record(&w, a, 11, 0, 0, &v, &e);
	ks_world_record(&w, a, 12, 0, 0, &v, &e);
	is_int(v, KS_REFINE_CONTINUE, "two failures are within the debug budget");
	ks_world_record(&w, a, 13, 1, 2.5, &v, &e);
	is_int(ks_world_node(&w, a)->consecutive_failures, 0, "a pass resets the debug budget");
	is_int(ks_world_node(&w, a)->candidate, 13, "best candidate attached");
	for (int i = 0; i < 4; i++)
		ks_world_record(&w, a, 20 + i, 1, 2.4, &v, &e);
	is_int(v, KS_REFINE_CONTINUE, "4 non-improving attempts: continue");
	ks_world_record(&w, a, 30, 1, 1.0, &v, &e);
	is_int(v, KS_REFINE_STAGNATED, "5th non-improving attempt closes the session");
	is_int(ks_world_node(&w, a)->status, KS_NODE_CLOSED, "stagnated node closed");
	is_int(ks_world_node(&w, a)->attempts, 9, "attempts counted");
	is_int(ks_world_node(&w, a)->failures, 2, "failures counted");
	ok(ks_world_node(&w, a)->score == 2.5, "best score kept");
	ok(ks_world_record(&w, a, -1, 1, 1.0, &v, &e) == KS_EINVAL, "negative candidate refused");
	ok(ks_world_record(&w, a, 40, 1, NAN, &v, &e) == KS_EINVAL, "nan score refused");

	/* regression: a child worse than its parent is flagged; its children build on the parent */
	b = add(&w, a, "b", 5, 1, NULL);
	ks_world_record(&w, b, 50, 1, 1.8, &v, &e);
	is_int(ks_world_node(&w, b)->regression, 1, "regression flagged");
	is_int(ks_world_base(&w, b), a, "regressed node's base is its best ancestor");
	c = add(&w, b, "c", 5, 1, NULL);
	is_int(ks_world_base(&w, c), a, "grandchild builds on the best ancestor");
	ks_world_record(&w, c, 51, 1, 3.0, &v, &e);
	is_int(ks_world_node(&w, c)->regression, 0, "improvement over the base is no regression");
	is_int(ks_world_base(&w, c), c, "a node with the best score is its own base");
	is_int(ks_world_base(&w, 0), 0, "root without results is its own base");

	/* learning: a move that helped raises the same move elsewhere; one that hurt lowers it */
	ks_world_release(&w);
	ks_world_init(&w, "naive", "k", &e);
	a = add(&w, 0, "family A", 5, 1, NULL);
	b = add(&w, 0, "family B", 5, 1, NULL);
	ks_world_record(&w, a, 1, 1, 2.0, &v, &e);
	ks_world_record(&w, b, 2, 1, 2.0, &v, &e);
	c = add(&w, a, "BM up in A", 5, 1, "BM:+1");
	d = add(&w, b, "BM up in B", 5, 1, "BM:+1");
	x = add(&w, a, "UNROLL up in A", 5, 1, "UNROLL:+1");
	{
		int y = add(&w, b, "UNROLL up in B", 5, 1, "UNROLL:+1");
		double conf0 = ks_world_node(&w, d)->confidence;
		ks_world_record(&w, c, 3, 1, 3.0, &v, &e); /* 1.5x over its base */
		ok(ks_world_node(&w, d)->rating > 5.0, "helpful move raises the same move elsewhere (%.2f)",
		   ks_world_node(&w, d)->rating);
		ok(ks_world_node(&w, d)->confidence > conf0, "and its confidence");
		ok(ks_world_node(&w, y)->rating == 5.0, "other moves untouched");
		ks_world_record(&w, x, 4, 1, 1.0, &v, &e); /* 0.5x: hurt */
		ok(ks_world_node(&w, y)->rating < 5.0, "harmful move lowers the same move elsewhere (%.2f)",
		   ks_world_node(&w, y)->rating);
		ok(ks_world_node(&w, x)->regression, "harmful move is a regression");
		/* more evidence moves further (shrinkage toward the observed mean) */
		{
			double r1 = ks_world_node(&w, d)->rating;
			ks_world_learn(&w, "BM:+1", 1.5, -1, &e);
			ok(ks_world_node(&w, d)->rating > r1, "second confirmation raises further");
		}
		/* a node added later inherits the evidence */
		{
			int z = add(&w, d, "BM up again", 5, 1, "BM:+1");
			ok(ks_world_node(&w, z)->rating > 5.0, "new node with a known move starts informed");
		}
		/* a rescore keeps the learned shift */
		ks_world_rescore(&w, d, 4.0, -1, &e);
		ok(fabs(ks_world_node(&w, d)->rating - (4.0 + ks_world_move_shift(&w, "BM:+1"))) < 1e-9,
		   "rescore composes with learning");
	}
	ks_world_release(&w);
	return tap_done();
}
