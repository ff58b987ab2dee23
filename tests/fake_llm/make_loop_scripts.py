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
  scripts/loop_truth.json   what the prompts show is true (tests/cli/t0770): a kernel with
                            knobs that are tuned (its default value is 20 times slower, so
                            the cycle's best is a tuned variant, its code shown with the
                            values it ran with), a slow refinement
                            under it and a slower improve (the edit shows the cycle's best,
                            not its last), an action under the slow node (it builds on that
                            node's kernel, not the faster one higher up), an IMPLEMENTS: new
                            kernel with knobs when too few candidates are left to tune them
                            (placeholder scores, said; tuning skipped, said), an edit that
                            scores the new node

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

def knobbed(tag, knob="U", values=(1, 2, 4), family="unrolled", slow_default=1):
    """a kernel whose @ksearch knob is #defined under a guard, as models write them; its
    default value does the work slow_default times, so a tuned value wins by far"""
    block = ("/* @ksearch\nfamily: %s\nknobs:\n  %s: {values: [%s], default: %d}\n@end */\n"
             "#ifndef %s\n#define %s %d\n#endif\n"
             % (family, knob, ", ".join(map(str, values)), values[0], knob, knob, values[0]))
    return block + ("#include <stdint.h>\n\n/* %s */\nvoid scale(const float *x, float *y, "
                    "int32_t n)\n{\n\tfor (int r = 0; r < (%s == %d ? %d : 1); r++) {\n"
                    "\t\tfor (int32_t i = 0; i < n; i++)\n\t\t\ty[i] = 2.0f * x[i];\n"
                    "\t\t__asm__ volatile(\"\" ::: \"memory\");\n\t}\n}\n"
                    % (tag, knob, values[0], slow_default))


def slow(tag, reps):
    """a correct kernel doing the work reps times (the barrier keeps the passes apart)"""
    return ("#include <stdint.h>\n\n/* %s */\nvoid scale(const float *x, float *y, int32_t n)\n"
            "{\n\tfor (int r = 0; r < %d; r++) {\n\t\tfor (int32_t i = 0; i < n; i++)\n"
            "\t\t\ty[i] = 2.0f * x[i];\n\t\t__asm__ volatile(\"\" ::: \"memory\");\n\t}\n}\n"
            % (tag, reps))


loop_truth = {
    "repeat_last": True,
    "purposes": {
        "init": [init(1, [node(0, None, "baseline", 1, 0, 1),
                          node(1, 0, "knobbed loop", 1, 9, 0.8),
                          node(2, 0, "spare idea", 1, 2, 0.5)])],
        "action": [
            reply(knobbed("knob kernel", slow_default=20), implements=1,
                  changed="an unroll knob"),
            reply(slow("slow kernel", 30), implements=3, changed="the slow refinement"),
            reply(knobbed("new idea {n}", knob="V", values=(1, 2), family="fused"),
                  implements="new: fused idea", changed="a fused idea", numbered=True),
            fresh("action"),
        ],
        "improve": [
            reply(slow("slower kernel", 90), implements=3, changed="slower still"),
            fresh("improve"),
        ],
        "edit": [
            edit([{"op": "insert_node", "parent_id": 1, "node_id": 3,
                   "node": node(3, 1, "slow refinement", 1, 8, 0.6)}], active=3),
            edit([{"op": "insert_node", "parent_id": 3, "node_id": 5,
                   "node": node(5, 3, "child of the slow one", 1, 8, 0.6)}], active=5),
            edit([{"op": "update_node", "node_id": 6,
                   "node": {"overall_rating_0_to_10": 7, "confidence_0_to_1": 0.6}}],
                 active=2),
            edit([]),
        ],
        "*": [fresh("other")],
    },
}

here = os.path.dirname(os.path.abspath(__file__))
for name, script in (("loop_cpu.json", loop_cpu), ("loop_reject.json", loop_reject),
                     ("loop_truth.json", loop_truth)):
    with open(os.path.join(here, "scripts", name), "w", encoding="utf-8") as f:
        json.dump(script, f, indent=1)
        f.write("\n")
