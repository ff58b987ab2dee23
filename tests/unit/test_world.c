/* World model: edit scripts (all-or-nothing, invariants) and the JSON document round trip. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/world.h"
#include "tap.h"

static char *export_str(const struct ks_world *w)
{
	struct ks_buf b;
	struct ks_error e = {0};
	ks_buf_init(&b, 0);
	if (ks_world_export(w, &b, &e)) {
		ks_buf_release(&b);
		return NULL;
	}
	return ks_buf_detach(&b, NULL);
}

/* apply a script that must be rejected in strict mode (the first invalid op rejects it);
 * checks the tree is unchanged and the message */
static void reject(struct ks_world *w, const char *script, const char *want, const char *name)
{
	struct ks_error e = {0};
	char *before = export_str(w), *after;
	int rc = ks_world_apply_ex(w, script, KS_WORLD_APPLY_STRICT, NULL, NULL, &e);
	after = export_str(w);
	ok(rc == KS_EINVARIANT || rc == KS_EPARSE, "%s: rejected (rc %d)", name, rc);
	ok(strstr(e.msg, want) != NULL, "%s: message '%s' contains '%s'", name, e.msg, want);
	ok(before && after && !strcmp(before, after), "%s: tree unchanged", name);
	free(before);
	free(after);
}

static const char *node_json(const char *title, double rating)
{
	static char buf[512];
	snprintf(buf, sizeof(buf),
		 "{\"action\":{\"title\":\"%s\",\"description\":\"d\"},\"difficulty_1_to_5\":2,"
		 "\"impacts\":{\"memory_bandwidth\":{\"score\":7,\"risk\":\"low\",\"notes\":\"n\"}},"
		 "\"overall_rating_0_to_10\":%g,\"confidence_0_to_1\":0.4}",
		 title, rating);
	return buf;
}

int main(void)
{
	struct ks_world w, w2;
	struct ks_error e = {0};
	int ids[3], n = 0, rc;
	char script[4096];

	rc = ks_world_init(&w, "naive softmax", "row softmax, one thread per row", &e);
	is_int(rc, 0, "init");
	is_int(ks_world_count(&w), 1, "root only");

	/* insert three nodes in one script; the second names its id and the third uses it */
	snprintf(script, sizeof(script),
		 "[{\"op\":\"insert_node\",\"parent_id\":0,\"node\":%s},", node_json("tile rows", 7));
	snprintf(script + strlen(script), sizeof(script) - strlen(script),
		 "{\"op\":\"insert_node\",\"parent_id\":0,\"node_id\":5,\"node\":%s},",
		 node_json("vectorise", 6));
	snprintf(script + strlen(script), sizeof(script) - strlen(script),
		 "{\"op\":\"insert_node\",\"parent_id\":5,\"node\":%s}]", node_json("avx512", 5));
	rc = ks_world_apply(&w, script, ids, &n, &e);
	ok(rc == 0, "insert three (%s)", e.msg);
	is_int(n, 3, "three new ids");
	is_int(ids[0], 1, "first id");
	is_int(ids[1], 5, "named id");
	is_int(ids[2], 6, "next id after the named one");
	ok(ks_world_node(&w, 6) && ks_world_node(&w, 6)->parent == 5, "child of named node");
	ok(ks_world_node(&w, 3) == NULL, "gap ids are tombstones");
	is_str(ks_world_node(&w, 1)->impacts[KS_IMPACT_MEMORY_BANDWIDTH].risk, "low", "impact risk");

	/* invariants: each rejected script names the op index and rule and changes nothing */
	snprintf(script, sizeof(script),
		 "[{\"op\":\"insert_node\",\"parent_id\":0,\"node\":%s},"
		 "{\"op\":\"insert_node\",\"parent_id\":0,\"node\":%s},"
		 "{\"op\":\"insert_node\",\"parent_id\":0,\"node\":%s},"
		 "{\"op\":\"insert_node\",\"parent_id\":0,\"node\":%s}]",
		 "{\"action\":{\"title\":\"a\"}}", "{\"action\":{\"title\":\"b\"}}",
		 "{\"action\":{\"title\":\"c\"}}", "{\"action\":{\"title\":\"d\"}}");
	reject(&w, script, "op 3 (insert_node): more than 3 new nodes", "four inserts");
	reject(&w, "[{\"op\":\"update_node\",\"node_id\":0,\"node\":{\"overall_rating_0_to_10\":9}}]",
	       "op 0 (update_node): the root node 0 is immutable", "root update");
	reject(&w, "[{\"op\":\"delete_node\",\"node_id\":0}]", "root node 0 is immutable",
	       "root delete");
	reject(&w,
	       "[{\"op\":\"update_node\",\"node_id\":1,\"node\":{\"overall_rating_0_to_10\":3}},"
	       "{\"op\":\"update_node\",\"node_id\":5,\"node\":{\"parent_id\":6}}]",
	       "op 1 (update_node): moving node 5 under 6 would create a cycle", "cycle");
	reject(&w, "[{\"op\":\"update_node\",\"node_id\":1,\"node\":{\"candidate_id\":3}}]",
	       "only the system attaches candidates", "forged candidate");
	reject(&w,
	       "[{\"op\":\"insert_node\",\"parent_id\":1,\"node\":{\"action\":{\"title\":\"x\"},"
	       "\"result\":{\"candidate_id\":1,\"score\":99}}}]",
	       "only the system attaches candidates", "forged result on insert");
	reject(&w, "[{\"op\":\"delete_node\",\"node_id\":5}]",
	       "op 0 (delete_node): node 5 has children", "delete inner node");
	reject(&w, "[{\"op\":\"update_node\",\"node_id\":1,\"node\":{\"overall_rating_0_to_10\":11}}]",
	       "outside [0, 10]", "rating range");
	reject(&w, "[{\"op\":\"update_node\",\"node_id\":1,\"node\":{\"confidence_0_to_1\":-0.1}}]",
	       "outside [0, 1]", "confidence range");
	reject(&w, "[{\"op\":\"update_node\",\"node_id\":1,\"node\":{\"difficulty_1_to_5\":2.5}}]",
	       "not an integer", "difficulty integer");
	reject(&w, "[{\"op\":\"split_node\",\"node_id\":1,\"children\":[{\"action\":{\"title\":\"x\"}}]}]",
	       "2 or 3 refined nodes", "split with one child");
	reject(&w, "[{\"op\":\"insert_node\",\"parent_id\":42,\"node\":{\"action\":{\"title\":\"x\"}}}]",
	       "parent node 42 does not exist", "missing parent");
	reject(&w, "[{\"op\":\"frobnicate\",\"node_id\":1}]", "op 0 (frobnicate): unknown op",
	       "unknown op");
	reject(&w, "[{\"op\":\"insert_node\",\"parent_id\":0,\"node_id\":1,\"node\":{\"action\":{\"title\":\"x\"}}}]",
	       "node id 1 is taken", "reused id");
	reject(&w, "{\"edits\": 3}", "array of ops", "malformed script");

	/* legal update, split, delete */
	rc = ks_world_apply(&w,
			    "{\"edits\":[{\"op\":\"update_node\",\"node_id\":1,\"node\":{"
			    "\"overall_rating_0_to_10\":8.5,\"policy\":{\"move\":\"BM:+1\",\"k\":[1,2]}}},"
			    "{\"op\":\"split_node\",\"node_id\":6,\"children\":["
			    "{\"action\":{\"title\":\"avx512 fma\"}},{\"action\":{\"title\":\"avx512 "
			    "gather\"}}]}]}",
			    ids, &n, &e);
	ok(rc == 0, "update + split (%s)", e.msg);
	ok(ks_world_node(&w, 1)->rating == 8.5, "rating updated");
	is_str(ks_world_node(&w, 1)->move, "BM:+1", "move key from policy payload");
	is_int(ks_world_node(&w, 6)->nchildren, 2, "split children");
	is_int(ks_world_node(&w, 6)->status, KS_NODE_CLOSED, "split node closed");
	rc = ks_world_apply(&w, "[{\"op\":\"delete_node\",\"node_id\":7}]", NULL, NULL, &e);
	ok(rc == 0 && ks_world_node(&w, 7) == NULL, "delete open leaf (%s)", e.msg);
	is_int(ks_world_node(&w, 6)->nchildren, 1, "unlinked from parent");
	{
		long cand = 0;
		ks_world_record(&w, 8, cand, 1, 1.5, NULL, &e);
		reject(&w, "[{\"op\":\"delete_node\",\"node_id\":8}]", "only open childless leaves",
		       "delete leaf with attempts");
	}

	/* system measurements and a round trip through JSON */
	ks_world_add_question(&w, "is the kernel bandwidth bound at cols=512?", &e);
	ks_world_learn(&w, "BM:+1", 1.3, -1, &e);
	{
		char *a = export_str(&w), *b;
		rc = ks_world_import(&w2, a, &e);
		ok(rc == 0, "import (%s)", e.msg);
		b = export_str(&w2);
		ok(a && b && !strcmp(a, b), "export(import(export)) is identical");
		ok(strstr(a, "\"kernel_summary\"") && strstr(a, "\"decision_tree\"") &&
			   strstr(a, "\"root_id\"") && strstr(a, "\"active_leaf_id\"") &&
			   strstr(a, "\"open_questions\"") && strstr(a, "\"overall_rating_0_to_10\""),
		   "K-Search document shape");
		is_int(w2.nnodes, w.nnodes, "same id space");
		ok(ks_world_node(&w2, 8)->candidate == 0 && ks_world_node(&w2, 8)->score == 1.5,
		   "result survives");
		ok(ks_world_move_stat(&w2, "BM:+1") && ks_world_move_stat(&w2, "BM:+1")->n == 1,
		   "move evidence survives");
		free(a);
		free(b);
		ks_world_release(&w2);
	}
	/* import rejects a cycle and a second root */
	rc = ks_world_import(&w2,
			     "{\"decision_tree\":{\"root_id\":0,\"nodes\":[{\"node_id\":0,\"parent_id\":null},"
			     "{\"node_id\":1,\"parent_id\":2},{\"node_id\":2,\"parent_id\":1}]}}",
			     &e);
	ok(rc == KS_EINVARIANT && strstr(e.msg, "cycle"), "import cycle rejected (%s)", e.msg);
	rc = ks_world_import(&w2,
			     "{\"decision_tree\":{\"root_id\":0,\"nodes\":[{\"node_id\":0,\"parent_id\":null},"
			     "{\"node_id\":1,\"parent_id\":null}]}}",
			     &e);
	ok(rc == KS_EINVARIANT, "import second root rejected (%s)", e.msg);
	/* a minimal original-style document imports with defaults */
	rc = ks_world_import(&w2,
			     "{\"kernel_summary\":\"k\",\"open_questions\":[],\"decision_tree\":{\"root_id\":0,"
			     "\"active_leaf_id\":1,\"nodes\":[{\"node_id\":0,\"parent_id\":null,\"action\":{\"title\":\"root\"}},"
			     "{\"node_id\":1,\"parent_id\":0,\"action\":{\"title\":\"tile\"},\"overall_rating_0_to_10\":6,"
			     "\"confidence_0_to_1\":0.3,\"difficulty_1_to_5\":2}]}}",
			     &e);
	ok(rc == 0 && ks_world_node(&w2, 1)->rating == 6 && w2.active_leaf == 1,
	   "original document (%s)", e.msg);
	if (!rc)
		ks_world_release(&w2);
	ks_world_release(&w);
	return tap_done();
}
