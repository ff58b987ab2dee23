/* World model: documents and edit scripts in the original K-Search's shape (string ids,
 * nodes in any order, a dummy root, action objects, {"active_leaf_id", "ops"} scripts). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/world.h"
#include "tap.h"

/* an init document as K-Search's model writes it: the child a1b comes before its parent,
 * the root is a dummy with null decision/choice and an empty action, a1 has an unknown field
 * and only score_0_to_1, a2's parent is not in the document, a3 is a decision node without
 * an action, and the top level carries K-Search's computed_signals */
static const char *const init_doc =
	"{\"kernel_summary\": \"row softmax over [rows, 4096] fp32, bandwidth bound\",\n"
	" \"open_questions\": [\"is one row per block enough at rows=4?\"],\n"
	" \"computed_signals\": {\"round_index\": 0, \"trace\": {\"status\": \"\"}},\n"
	" \"decision_tree\": {\"root_id\": \"root\", \"active_leaf_id\": \"a1\", \"nodes\": [\n"
	"  {\"node_id\": \"a1b\", \"parent_id\": \"a1\", \"node_type\": \"decision\",\n"
	"   \"decision\": \"Row reduction\", \"choice\": \"warp shuffles\",\n"
	"   \"action\": {\"title\": \"Warp-shuffle max and sum\", \"description\": \"reduce in registers\",\n"
	"     \"difficulty_1_to_5\": 3, \"score_0_to_1\": 0.55, \"expected_vs_baseline_factor\": 1.8,\n"
	"     \"rationale\": \"shared-memory round trips dominate\"},\n"
	"   \"impacts\": {\"memory_bandwidth\": {\"rating_0_to_10\": 4, \"risk\": \"low\", \"notes\": \"same traffic\"},\n"
	"     \"register_pressure\": 3,\n"
	"     \"compute_intensity_and_hw_fit\": {\"rating_0_to_10\": 6, \"risk\": \"\", \"notes\": \"\",\n"
	"       \"hw_notes\": \"32-wide warps\"}},\n"
	"   \"overall_rating_0_to_10\": 6.5, \"confidence_0_to_1\": 0.4, \"last_updated_round\": 0,\n"
	"   \"notes\": \"SELF_CHECK: excludes the block reduction\",\n"
	"   \"solution_ref\": {\"solution_id\": null, \"parent_solution_id\": null,\n"
	"     \"eval\": {\"status\": \"\", \"score\": null, \"score_name\": null}}},\n"
	"  {\"node_id\": \"root\", \"parent_id\": null, \"node_type\": \"root\", \"decision\": null,\n"
	"   \"choice\": null, \"overall_rating_0_to_10\": 0, \"confidence_0_to_1\": 0.0,\n"
	"   \"notes\": \"1) reduction along the row ...\",\n"
	"   \"impacts\": {\"memory_bandwidth\": {\"rating_0_to_10\": 0, \"risk\": \"\", \"notes\": \"\"}},\n"
	"   \"action\": {\"title\": \"\", \"description\": \"\", \"difficulty_1_to_5\": 3,\n"
	"     \"score_0_to_1\": 0.0, \"expected_vs_baseline_factor\": null, \"rationale\": \"\"}},\n"
	"  {\"node_id\": \"a1\", \"parent_id\": \"root\", \"decision\": \"Mapping\",\n"
	"   \"choice\": \"one block per row\", \"mystery_field\": {\"x\": 1},\n"
	"   \"action\": {\"title\": \"One block per row\", \"difficulty_1_to_5\": 2, \"score_0_to_1\": 0.7},\n"
	"   \"confidence_0_to_1\": 0.5},\n"
	"  {\"node_id\": \"a2\", \"parent_id\": \"ghost\", \"overall_rating_0_to_10\": 5,\n"
	"   \"action\": {\"title\": \"Online softmax (single pass)\", \"difficulty_1_to_5\": 4}},\n"
	"  {\"node_id\": \"a3\", \"parent_id\": \"root\", \"decision\": \"Vector width\",\n"
	"   \"choice\": \"float4 loads\", \"overall_rating_0_to_10\": 4}\n"
	" ]}}\n";

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

static const struct ks_node *by_ref(const struct ks_world *w, const char *ref)
{
	return ks_world_node(w, ks_world_find(w, ref));
}

static void check_import(struct ks_world *w)
{
	struct ks_error e = {0};
	struct ks_buf notes = KS_BUF_INIT;
	const struct ks_node *n;
	char ref[80];
	int rc = ks_world_import_ex(w, init_doc, &notes, &e);
	ok(rc == 0, "K-Search init document imports (%s)", e.msg);
	if (rc)
		exit(tap_done() + 1); /* nothing below can run without the tree */
	is_int(ks_world_count(w), 5, "five nodes");
	/* integer ids: the root first, then by depth, in document order within a depth */
	is_int(w->root, 0, "root gets id 0");
	is_int(ks_world_find(w, "root"), 0, "root keeps its string id");
	is_int(ks_world_find(w, "a1"), 1, "a1 is id 1");
	is_int(ks_world_find(w, "a2"), 2, "a2 is id 2");
	is_int(ks_world_find(w, "a3"), 3, "a3 is id 3");
	is_int(ks_world_find(w, "a1b"), 4, "the child listed first gets an id after its parent");
	is_int(ks_world_find(w, "4"), 4, "a decimal string is the integer id");
	is_int(ks_world_find(w, "nope"), -1, "unknown id");
	n = by_ref(w, "a1b");
	ok(n && n->parent == 1, "a1b hangs under a1");
	n = by_ref(w, "root");
	ok(n && n->parent == -1 && n->title && !strcmp(n->title, "root"),
	   "dummy root with null decision/choice and an empty action title");
	is_int(w->active_leaf, 1, "active_leaf_id 'a1'");
	/* dangling parent */
	n = by_ref(w, "a2");
	ok(n && n->parent == 0, "a2 (parent 'ghost') attached to the root");
	ok(strstr(ks_buf_str(&notes), "node 'a2': parent 'ghost' is not in the document") != NULL,
	   "the dangling parent is noted: %s", ks_buf_str(&notes));
	is_int(ks_world_node(w, 0)->nchildren, 3, "root has a1, a2, a3");
	/* action objects */
	n = by_ref(w, "a1b");
	is_str(n->title, "Warp-shuffle max and sum", "action.title wins over decision/choice");
	is_str(n->description, "reduce in registers", "action.description");
	is_str(n->rationale, "shared-memory round trips dominate", "action.rationale kept");
	ok(n->expected_factor == 1.8, "expected_vs_baseline_factor kept (%g)", n->expected_factor);
	is_int(n->difficulty, 3, "action.difficulty_1_to_5");
	ok(n->rating == 6.5, "overall rating wins over score_0_to_1 (%g)", n->rating);
	ok(n->confidence == 0.4, "confidence");
	/* impacts: objects with rating_0_to_10, bare numbers, K-Search's axis name */
	ok(n->impacts[KS_IMPACT_MEMORY_BANDWIDTH].score == 4, "impact object rating_0_to_10");
	is_str(n->impacts[KS_IMPACT_MEMORY_BANDWIDTH].risk, "low", "impact risk");
	is_str(n->impacts[KS_IMPACT_MEMORY_BANDWIDTH].notes, "same traffic", "impact notes");
	ok(n->impacts[KS_IMPACT_REGISTER_PRESSURE].score == 3, "impact as a bare number");
	ok(n->impacts[KS_IMPACT_COMPUTE_HW_FIT].score == 6,
	   "compute_intensity_and_hw_fit is the compute_hw_fit axis");
	n = by_ref(w, "a1");
	ok(n->rating == 7, "score_0_to_1 0.7 gives rating 7 without an overall rating (%g)", n->rating);
	is_int(n->difficulty, 2, "a1 difficulty");
	n = by_ref(w, "a3");
	is_str(n->title, "Vector width: float4 loads", "a node without action is named by decision: choice");
	is_int(n->difficulty, 3, "default difficulty");
	is_int(n->candidate, -1, "solution_ref is not a measurement");
	is_str(w->kernel_summary, "row softmax over [rows, 4096] fp32, bandwidth bound", "summary");
	is_int(w->nquestions, 1, "open question");
	ks_world_node_ref(w, 4, ref, sizeof(ref));
	ok(!strcmp(ref, "a1b"), "node_ref shows the model's id (%s)", ref);
	ks_world_node_ref(w, 77, ref, sizeof(ref));
	ok(!strcmp(ref, "77"), "node_ref of a node without a string id is its number (%s)", ref);
	ks_buf_release(&notes);
}

static void check_round_trip(struct ks_world *w)
{
	struct ks_world w2;
	struct ks_error e = {0};
	char *a = export_str(w), *b = NULL;
	int rc;
	ok(a && strstr(a, "\"node_id\":4,\"ext_id\":\"a1b\",\"parent_id\":1"),
	   "export writes the integer id and the model's id");
	rc = ks_world_import(&w2, a, &e);
	ok(rc == 0, "import of the export (%s)", e.msg);
	if (!rc) {
		b = export_str(&w2);
		ok(a && b && !strcmp(a, b), "export(import(export)) is identical");
		is_int(ks_world_find(&w2, "a1b"), 4, "string id survives with the same integer id");
		is_str(ks_world_node(&w2, 4)->rationale, "shared-memory round trips dominate",
		       "rationale survives");
		ks_world_release(&w2);
	}
	free(a);
	free(b);
}

static void check_edit(struct ks_world *w)
{
	struct ks_error e = {0};
	struct ks_buf notes = KS_BUF_INIT;
	struct ks_world_edit r;
	const struct ks_node *n;
	const char *script =
		"{\"active_leaf_id\": \"a1b\", \"ops\": [\n"
		" {\"op\": \"insert_node\", \"parent_id\": \"a1b\", \"parent_solution_id\": null,\n"
		"  \"node\": {\"node_id\": \"a1b1\", \"decision\": \"Loads\", \"choice\": \"float4\",\n"
		"   \"action\": {\"title\": \"Vectorise the row loads\", \"difficulty_1_to_5\": 2,\n"
		"     \"score_0_to_1\": 0.6},\n"
		"   \"impacts\": {\"memory_bandwidth\": {\"rating_0_to_10\": 7, \"risk\": \"alignment\", \"notes\": \"\"}},\n"
		"   \"overall_rating_0_to_10\": 6, \"confidence_0_to_1\": 0.5, \"notes\": \"next step\",\n"
		"   \"solution_ref\": {\"solution_id\": null}}},\n"
		" {\"op\": \"update_node\", \"node_id\": \"a3\", \"patch\": {\"overall_rating_0_to_10\": 2.5,\n"
		"   \"confidence_0_to_1\": 0.7, \"notes\": \"dominated\",\n"
		"   \"action\": {\"score_0_to_1\": 0.2, \"rationale\": \"float4 alone did not help\"}}},\n"
		" {\"op\": \"update_node\", \"node_id\": \"zz9\", \"patch\": {\"overall_rating_0_to_10\": 9}},\n"
		" {\"op\": \"split_node\", \"node_id\": \"a2\", \"parent_patch\": {\"confidence_0_to_1\": 0.6},\n"
		"  \"children\": [{\"node_id\": \"a2x\", \"action\": {\"title\": \"Online softmax, one warp per row\"}},\n"
		"   {\"node_id\": \"a2y\", \"action\": {\"title\": \"Online softmax, one block per row\"}}]}\n"
		"]}";
	int rc = ks_world_apply_ex(w, script, 0, &r, &notes, &e);
	ok(rc == 0, "K-Search edit script applies (%s)", e.msg);
	is_int(r.applied, 3, "three ops applied");
	is_int(r.skipped, 1, "one op skipped");
	ok(strstr(ks_buf_str(&notes), "op 2 (update_node): node 'zz9' does not exist") != NULL,
	   "the skipped op's reason is reported: %s", ks_buf_str(&notes));
	is_int(r.nnew, 3, "three new nodes");
	n = by_ref(w, "a1b1");
	ok(n && n->parent == ks_world_find(w, "a1b"), "inserted under a1b by string ids");
	ok(n && n->id == r.new_ids[0], "first new id is the insert");
	ok(n && !strcmp(n->title, "Vectorise the row loads") && n->rating == 6 &&
		   n->impacts[KS_IMPACT_MEMORY_BANDWIDTH].score == 7,
	   "inserted node's fields");
	n = by_ref(w, "a3");
	ok(n->rating == 2.5 && n->confidence == 0.7, "update by string id (%g, %g)", n->rating,
	   n->confidence);
	is_str(n->rationale, "float4 alone did not help", "patch sets the rationale");
	n = by_ref(w, "a2");
	is_int(n->status, KS_NODE_CLOSED, "split node closed");
	ok(n->confidence == 0.6, "parent_patch applied");
	is_int(n->nchildren, 2, "split children");
	ok(by_ref(w, "a2x") && by_ref(w, "a2x")->parent == n->id && by_ref(w, "a2y"),
	   "split children keep their string ids");
	is_int(w->active_leaf, ks_world_find(w, "a1b"), "active_leaf_id applied");
	ks_buf_release(&notes);

	/* our integer ids and K-Search's string ids mix; a bare array of K-Search ops */
	ks_buf_init(&notes, 0);
	rc = ks_world_apply_ex(w,
			       "[{\"op\": \"update_node\", \"node_id\": 1, \"patch\": {\"confidence_0_to_1\": 0.9}},"
			       " {\"op\": \"update_node\", \"node_id\": \"a1\", \"patch\": {\"overall_rating_0_to_10\": 8,"
			       "  \"typo_rating\": 3, \"choice\": \"two rows per block\"}}]",
			       0, &r, &notes, &e);
	ok(rc == 0 && r.applied == 2, "bare array, integer and string ids (%s)", e.msg);
	n = by_ref(w, "a1");
	ok(n->confidence == 0.9 && n->rating == 8, "both updates landed on a1");
	is_str(n->title, "One block per row", "a patched choice does not rename the action");
	ok(strstr(ks_buf_str(&notes), "ignored unknown field 'typo_rating'") != NULL,
	   "unknown field noted: %s", ks_buf_str(&notes));
	ks_buf_release(&notes);
}

/* scripts that must change nothing */
static void check_unchanged(struct ks_world *w, const char *script, int want_rc, const char *want,
			    const char *name)
{
	struct ks_error e = {0};
	struct ks_buf notes = KS_BUF_INIT;
	char *before = export_str(w), *after;
	int rc = ks_world_apply_ex(w, script, 0, NULL, &notes, &e);
	after = export_str(w);
	ok(rc == want_rc, "%s: rejected (rc %d)", name, rc);
	ok(strstr(e.msg, want) != NULL, "%s: message '%s' contains '%s'", name, e.msg, want);
	ok(before && after && !strcmp(before, after), "%s: tree unchanged", name);
	free(before);
	free(after);
	ks_buf_release(&notes);
}

static void check_transaction(struct ks_world *w)
{
	/* four inserts, each valid on its own, break the new-node cap together */
	check_unchanged(w,
			"{\"ops\": ["
			"{\"op\":\"insert_node\",\"parent_id\":\"a1\",\"node\":{\"action\":{\"title\":\"p\"}}},"
			"{\"op\":\"insert_node\",\"parent_id\":\"a1\",\"node\":{\"action\":{\"title\":\"q\"}}},"
			"{\"op\":\"update_node\",\"node_id\":\"a1\",\"patch\":{\"confidence_0_to_1\":0.1}},"
			"{\"op\":\"split_node\",\"node_id\":\"a3\",\"children\":[{\"action\":{\"title\":\"r\"}},"
			"{\"action\":{\"title\":\"s\"}}]}]}",
			KS_EINVARIANT, "the edit script changed nothing: the ops add 4 new nodes, at most 3",
			"valid ops over the new-node cap");
	check_unchanged(w, "{\"ops\": [{\"op\":\"delete_node\",\"node_id\":\"nope\"}]}", KS_EINVARIANT,
			"op 0 (delete_node): node 'nope' does not exist", "nothing usable");
	check_unchanged(w,
			"[{\"op\":\"update_node\",\"node_id\":\"a1\",\"patch\":{\"solution_ref\":"
			"{\"solution_id\":\"sol_7\"}}},{\"op\":\"update_node\",\"node_id\":\"root\","
			"\"patch\":{\"notes\":\"x\"}}]",
			KS_EINVARIANT, "none of the 2 ops could be applied", "forged solution and root");
	check_unchanged(w, "{\"ops\": 3}", KS_EPARSE, "array of ops", "malformed");
	check_unchanged(w,
			"[{\"op\":\"insert_node\",\"parent_id\":\"a1\",\"node\":{\"node_id\":\"a2\","
			"\"action\":{\"title\":\"t\"}}}]",
			KS_EINVARIANT, "node id 'a2' is taken", "string id in use");
	/* an empty script is a valid "no change" */
	{
		struct ks_error e = {0};
		ok(ks_world_apply(w, "{\"active_leaf_id\": null, \"ops\": []}", NULL, NULL, &e) == 0,
		   "empty op list (%s)", e.msg);
	}
}

static void check_bad_documents(void)
{
	struct ks_world w;
	struct ks_error e = {0};
	int rc = ks_world_import(&w,
				 "{\"decision_tree\":{\"root_id\":\"root\",\"nodes\":["
				 "{\"node_id\":\"root\",\"parent_id\":null},"
				 "{\"node_id\":\"x\",\"parent_id\":\"y\"},{\"node_id\":\"y\",\"parent_id\":\"x\"}]}}",
				 &e);
	ok(rc == KS_EINVARIANT && strstr(e.msg, "cycle"), "string-id cycle rejected (%s)", e.msg);
	rc = ks_world_import(&w,
			     "{\"decision_tree\":{\"nodes\":[{\"node_id\":\"a\",\"parent_id\":\"r\"},"
			     "{\"node_id\":\"r\"},{\"node_id\":\"a\",\"parent_id\":\"r\"}]}}",
			     &e);
	ok(rc == KS_EINVARIANT && strstr(e.msg, "'a' appears twice"), "duplicate id rejected (%s)",
	   e.msg);
	rc = ks_world_import(&w,
			     "{\"decision_tree\":{\"nodes\":[{\"node_id\":\"k1\",\"parent_id\":\"top\","
			     "\"action\":{\"title\":\"t\"}},{\"node_id\":\"top\",\"parent_id\":null}]}}",
			     &e);
	ok(rc == 0 && w.root == 0 && ks_world_find(&w, "top") == 0 && ks_world_find(&w, "k1") == 1,
	   "missing root_id: the node without a parent is the root (%s)", e.msg);
	if (!rc)
		ks_world_release(&w);
	rc = ks_world_import(&w,
			     "{\"decision_tree\":{\"root_id\":\"r\",\"nodes\":[{\"node_id\":\"r\"},"
			     "{\"node_id\":\"b\",\"parent_id\":\"r\",\"overall_rating_0_to_10\":12}]}}",
			     &e);
	ok(rc == KS_EINVARIANT && strstr(e.msg, "node 'b'") && strstr(e.msg, "outside [0, 10]"),
	   "out-of-range rating names the node (%s)", e.msg);
}

int main(void)
{
	struct ks_world w;
	check_import(&w);
	check_round_trip(&w);
	check_edit(&w);
	check_transaction(&w);
	check_round_trip(&w);
	ks_world_release(&w);
	check_bad_documents();
	return tap_done();
}
