#!/usr/bin/env python3
"""Writes the fake-model scripts of tests/cli/t0700-llm-run.sh for the tiny fixture task
tests/fixtures/eval/scale (y = 2x), in purpose mode (see fake_llm_server.py):

  scripts/scale_cpu.json     a whole run: init with three actions, kernels that pass, an
                             @ksearch knob kernel (tuned without the model), a reply
                             without code and its correction, a kernel that does not
                             compile and its debug fix, an edit that inserts a node, an
                             edit that deletes the root and a correction that tries to
                             attach a result (both rejected)
  scripts/scale_faults.json  the failure classes: 429 with Retry-After, 500, malformed
                             JSON in the reply and a body that is not JSON (init falls
                             back to the root alone), a hung connection, a truncated
                             body, a 5 MB reply, a reply without code, a compile error

Replies mention TEST_KEY outside code, so the tests can check it is redacted.
Regenerate after editing: python3 tests/fake_llm/make_scale_scripts.py"""
import json
import os

TEST_KEY = "sk-test-7f3a9c1e5b2d4f60a8e1"


def impacts(mb, rp, hw):
    return {"memory_bandwidth": {"score": mb, "risk": "low", "notes": "fake"},
            "register_pressure": {"score": rp, "risk": "low", "notes": "fake"},
            "compute_hw_fit": {"score": hw, "risk": "low", "notes": "fake"}}


def node(nid, parent, title, diff, rating, conf):
    return {"node_id": nid, "parent_id": parent,
            "action": {"title": title, "description": "fake: " + title},
            "difficulty_1_to_5": diff, "impacts": impacts(5, 2, 5),
            "overall_rating_0_to_10": rating, "confidence_0_to_1": conf}


init_doc = {
    "kernel_summary": "elementwise: y[i] = 2 x[i]; contiguous; bandwidth bound",
    "open_questions": ["does the loop vectorize at -O3?"],
    "decision_tree": {"root_id": 0, "active_leaf_id": 1, "nodes": [
        node(0, None, "baseline", 1, 0, 1),
        dict(node(1, 0, "parallelize with OpenMP", 1, 8, 0.8),
             result={"candidate_id": 99, "score": 50.0}),   # forged: must be dropped
        node(2, 0, "blocked loop with a BLOCK knob", 1, 6.5, 0.6),
        node(3, 0, "non-temporal stores", 2, 5, 0.5),
    ]},
}

HEAD = "#include <stdint.h>\n\n"
omp = HEAD + """void scale(const float *x, float *y, int32_t n)
{
#pragma omp parallel for schedule(static)
	for (int32_t i = 0; i < n; i++)
		y[i] = 2.0f * x[i];
}
"""
omp_v2 = omp.replace("schedule(static)", "schedule(static, 8192)")
omp_v3 = omp.replace("y[i] = 2.0f * x[i];", "y[i] = x[i] + x[i];")
fixed = omp.replace("2.0f * x[i]", "x[i] * 2.0f")
guided = omp.replace("schedule(static)", "schedule(guided)")
broken = fixed.replace("x[i] * 2.0f;", "x[i] * 2.0f")
knob = """/* @ksearch
family: blocked-scale
summary: BLOCK elements per OpenMP iteration
knobs:
  BLOCK: {values: [1024, 4096, 16384], default: 4096}
@end */
""" + HEAD + """#ifndef BLOCK
#define BLOCK 4096
#endif

void scale(const float *x, float *y, int32_t n)
{
#pragma omp parallel for schedule(static)
	for (int32_t b = 0; b < n; b += BLOCK) {
		int32_t end = n - b < BLOCK ? n : b + BLOCK;
		for (int32_t i = b; i < end; i++)
			y[i] = 2.0f * x[i];
	}
}
"""


def code(src, note="Here is the kernel."):
    return {"content": note + "\n\n```c\n" + src + "```\n"}


NOCODE = {"content": "I would parallelize it, but no code today. (key seen: %s)" % TEST_KEY}


def edit(notes, ops):
    return {"content": notes + "\n\n```json\n" + json.dumps(ops, indent=1) + "\n```\n"}


NOTES = ("CURRENT: OpenMP helped (%s).\nFOLLOW_THROUGH: complete.\n"
         "UPDATE_BELIEF: blocking is worth a try.\nPERF_GAP: bandwidth bound.") % TEST_KEY
edit_ok = edit(NOTES, [
    {"op": "update_node", "node_id": 2,
     "node": {"overall_rating_0_to_10": 7.5, "confidence_0_to_1": 0.7}},
    {"op": "insert_node", "parent_id": 1, "node": {
        "action": {"title": "unroll the loop by 8", "description": "fake: 8 per iteration"},
        "difficulty_1_to_5": 1, "impacts": impacts(4, 1, 5),
        "overall_rating_0_to_10": 9.5, "confidence_0_to_1": 0.5}},
])
edit_delete_root = edit("CURRENT: remove everything.", [{"op": "delete_node", "node_id": 0}])
edit_attach = edit("CURRENT: claim a result.", [
    {"op": "update_node", "node_id": 1, "node": {"result": {"candidate_id": 1, "score": 99}}}])
edit_empty = edit("CURRENT: nothing to change.", [])

scale_cpu = {
    "repeat_last": True,
    "purposes": {
        "init": [{"content": "Analysis first.\n\n```json\n" + json.dumps(init_doc, indent=1)
                  + "\n```\n", "usage": {"prompt_tokens": 1500, "completion_tokens": 900}}],
        "init-fix": [{"content": "```json\n" + json.dumps(init_doc) + "\n```\n"}],
        "action": [code(omp), code(knob), NOCODE, code(omp_v3)],
        "action-fix": [code(broken, "Attempt with a typo.")],
        "improve": [code(omp_v2), NOCODE],
        "improve-fix": [NOCODE],
        "debug": [code(fixed, "Missing semicolon fixed.")],
        "debug-fix": [code(fixed)],
        "repeat": [code(guided, "A different schedule.")],
        "edit": [edit_ok, edit_delete_root, edit_empty],
        "edit-fix": [edit_attach, edit_empty],
        "*": [NOCODE],
    },
}

edit_grow = edit("CURRENT: the tree is empty; propose actions.", [
    {"op": "insert_node", "parent_id": 0, "node": {
        "action": {"title": "parallelize with OpenMP", "description": "fake"},
        "difficulty_1_to_5": 1, "impacts": impacts(8, 1, 6),
        "overall_rating_0_to_10": 8, "confidence_0_to_1": 0.6}},
    {"op": "insert_node", "parent_id": 0, "node": {
        "action": {"title": "vectorize", "description": "fake"},
        "difficulty_1_to_5": 1, "impacts": impacts(6, 1, 6),
        "overall_rating_0_to_10": 6, "confidence_0_to_1": 0.6}},
])

scale_faults = {
    "repeat_last": True,
    "purposes": {
        "init": [{"status": 429, "retry_after": "1"}, {"status": 500},
                 {"content": "```json\n{\"kernel_summary\": \"x\", \"decision_tree\": [\n```\n"}],
        "init-fix": [{"malformed": True}],
        "action": [{"hang": 6}, {"truncate": True}, {"big": 5000000}, NOCODE, code(omp)],
        "action-fix": [code(broken, "Attempt with a typo.")],
        "debug": [code(fixed)],
        "repeat": [code(omp_v2)],
        "improve": [NOCODE],
        "edit": [edit_grow, edit_delete_root, edit_empty],
        "edit-fix": [edit_attach, edit_empty],
        "*": [NOCODE],
    },
}

here = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(here, "scripts"), exist_ok=True)
for name, script in (("scale_cpu.json", scale_cpu), ("scale_faults.json", scale_faults)):
    with open(os.path.join(here, "scripts", name), "w", encoding="utf-8") as f:
        json.dump(script, f, indent=1)
        f.write("\n")
