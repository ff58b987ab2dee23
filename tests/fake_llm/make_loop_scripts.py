#!/usr/bin/env python3
"""Writes the fake-model scripts of tests/cli/t0740-llm-loop.sh for the tiny fixture task
tests/fixtures/eval/scale (y = 2x), for fake_llm_cmd.py in purpose mode:

  scripts/loop_cpu.json     the K-Search loop's behaviour: an init document whose
                            active_leaf_id names a hard, low-rated node (followed), kernels
                            with IMPLEMENTS / CHANGED / EXPECTED lines (one naming another
                            node: credited there), an edit naming a closed node as the next
                            (refused, the model told), a kernel that does not compile (debug
                            with the known-good base), and a new kernel for every later
                            request, so a budget of 8 shows the edit-round cadence
  scripts/loop_reject.json  what ksearch cannot use goes back to the model: a passing
                            kernel whose @ksearch block has no family (dropped), a kernel
                            repeating an earlier one (repeat prompt), a reply without code

Regenerate after editing: python3 tests/fake_llm/make_loop_scripts.py"""
import json
import os


def impacts(mb, rp, hw):
    return {"memory_bandwidth": {"score": mb, "risk": "low", "notes": "fake"},
            "register_pressure": {"score": rp, "risk": "low", "notes": "fake"},
            "compute_hw_fit": {"score": hw, "risk": "low", "notes": "fake"}}


def node(nid, parent, title, diff, rating, conf, **action):
    a = {"title": title, "description": "fake: " + title}
    a.update(action)
    return {"node_id": nid, "parent_id": parent, "action": a, "difficulty_1_to_5": diff,
            "impacts": impacts(5, 2, 5), "overall_rating_0_to_10": rating,
            "confidence_0_to_1": conf}


def init(active, nodes):
    doc = {"kernel_summary": "elementwise: y[i] = 2 x[i]; bandwidth bound",
           "open_questions": [],
           "decision_tree": {"root_id": 0, "active_leaf_id": active, "nodes": nodes}}
    return {"content": "Analysis.\n\n```json\n" + json.dumps(doc, indent=1) + "\n```\n"}


def kernel(tag, body="y[i] = 2.0f * x[i];", block=""):
    return (block + "#include <stdint.h>\n\n/* %s */\nvoid scale(const float *x, float *y, "
            "int32_t n)\n{\n\tfor (int32_t i = 0; i < n; i++)\n\t\t%s\n}\n") % (tag, body)


def reply(src, implements=None, changed=None, expected=None, numbered=False):
    head = ""
    if implements is not None:
        head += "IMPLEMENTS: %s\n" % implements
    if changed:
        head += "CHANGED: %s\n" % changed
    if expected:
        head += "EXPECTED: %s\n" % expected
    step = {"content": head + "\n```c\n" + src + "```\n"}
    if numbered:
        step["numbered"] = True
    return step


def edit(ops, active=None, notes="CURRENT: measured.\nFOLLOW_THROUGH: complete.\n"
         "UPDATE_BELIEF: none.\nPERF_GAP: bandwidth bound."):
    doc = {"ops": ops}
    if active is not None:
        doc["active_leaf_id"] = active
    return {"content": notes + "\n\n```json\n" + json.dumps(doc) + "\n```\n"}


NOCODE = {"content": "I would rather not write code today."}


def fresh(queue):
    """a new kernel at every request of one queue"""
    return reply(kernel("fresh %s kernel {n}" % queue), changed="a fresh variant {n}",
                 numbered=True)


loop_cpu = {
    "repeat_last": True,
    "purposes": {
        "init": [init(2, [
            node(0, None, "baseline", 1, 0, 1),
            node(1, 0, "parallelize with OpenMP", 1, 9, 0.8),
            node(2, 0, "hand-vectorize with intrinsics", 4, 1, 0.3,
                 rationale="the loop is bandwidth bound; wide stores halve the instructions",
                 expected_vs_baseline_factor=1.7),
            node(3, 0, "non-temporal stores", 1, 5, 0.5),
        ])],
        "action": [
            reply(kernel("vector loop"), implements=2, changed="vector loop over x",
                  expected="1.7x: wider stores"),
            reply(kernel("broken", body="y[i] = 2.0f * x[i]"), changed="a typo"),
            fresh("action"),
        ],
        "improve": [
            reply(kernel("streaming stores"), implements=3, changed="streaming stores",
                  expected="1.2x"),
            fresh("improve"),
        ],
        "debug": [reply(kernel("typo fixed"), changed="the missing semicolon")],
        "repeat": [fresh("repeat")],
        "edit": [
            edit([], active=2),
            edit([{"op": "update_node", "node_id": 1,
                   "node": {"overall_rating_0_to_10": 8}}], active=1),
            edit([]),
        ],
        "*": [fresh("other")],
    },
}

BAD_BLOCK = "/* @ksearch\nknobs:\n  BLOCK: {values: [64, 128], default: 64}\n@end */\n"
loop_reject = {
    "repeat_last": True,
    "purposes": {
        "init": [init(1, [node(0, None, "baseline", 1, 0, 1),
                          node(1, 0, "unroll the loop", 1, 8, 0.5)])],
        "action": [reply(kernel("blocked", block=BAD_BLOCK), implements=1,
                         changed="a knob block")],
        "improve": [reply(kernel("blocked", block=BAD_BLOCK), changed="nothing, by mistake")],
        "repeat": [NOCODE],
        "repeat-fix": [NOCODE],
        "edit": [edit([])],
        "*": [fresh("other")],
    },
}

here = os.path.dirname(os.path.abspath(__file__))
for name, script in (("loop_cpu.json", loop_cpu), ("loop_reject.json", loop_reject)):
    with open(os.path.join(here, "scripts", name), "w", encoding="utf-8") as f:
        json.dump(script, f, indent=1)
        f.write("\n")
