#!/usr/bin/env python3
"""Writes scripts/softmax_cpu.json: a purpose-mode script for the fake LLM server that
drives a whole `ksearch run tasks/softmax --backend cpu --policy llm` (init, actions,
a compile error and its debug fix, edits including one that breaks an invariant, and
improve).  Regenerate after editing: python3 tests/fake_llm/make_softmax_script.py"""
import json
import os

def impacts(mb, rp, hw):
    return {"memory_bandwidth": {"score": mb, "risk": "low", "notes": "fake"},
            "register_pressure": {"score": rp, "risk": "low", "notes": "fake"},
            "compute_hw_fit": {"score": hw, "risk": "low", "notes": "fake"}}

def node(nid, parent, title, desc, diff, rating, conf, imp):
    return {"node_id": nid, "parent_id": parent,
            "action": {"title": title, "description": desc},
            "difficulty_1_to_5": diff, "impacts": imp,
            "overall_rating_0_to_10": rating, "confidence_0_to_1": conf}

init_doc = {
    "kernel_summary": "reduction: y[r,j] = exp(x[r,j]-max_r) / sum_j exp(x[r,j]-max_r); "
                      "row-major rows, each row read 3x by the baseline; bandwidth bound "
                      "for large rows, latency bound for short rows",
    "open_questions": ["does expf vectorize with -O3 -march=native?"],
    "decision_tree": {"root_id": 0, "active_leaf_id": 1, "nodes": [
        node(0, None, "baseline", "the starting kernel", 1, 0, 1, impacts(0, 0, 0)),
        node(1, 0, "parallelize rows with OpenMP", "one row per iteration of a parallel for",
             1, 8, 0.8, impacts(8, 2, 7)),
        node(2, 0, "online softmax", "fuse max and sum in one pass with rescaling",
             2, 6.5, 0.6, impacts(6, 3, 5)),
        node(3, 0, "two-pass with cached exp", "store exp in y, then scale", 2, 5, 0.5,
             impacts(5, 2, 4)),
    ]},
}

omp_kernel = r'''#include <math.h>
#include <stdint.h>

void softmax(const float *x, float *y, int32_t rows, int32_t cols)
{
#pragma omp parallel for schedule(static)
	for (int32_t r = 0; r < rows; r++) {
		const float *xr = x + (int64_t)r * cols;
		float *yr = y + (int64_t)r * cols;
		float m = xr[0];
		for (int32_t j = 1; j < cols; j++)
			m = xr[j] > m ? xr[j] : m;
		float s = 0.0f;
		for (int32_t j = 0; j < cols; j++) {
			yr[j] = expf(xr[j] - m);
			s += yr[j];
		}
		float inv = 1.0f / s;
		for (int32_t j = 0; j < cols; j++)
			yr[j] *= inv;
	}
}
'''

online_kernel = r'''#include <math.h>
#include <stdint.h>

void softmax(const float *x, float *y, int32_t rows, int32_t cols)
{
#pragma omp parallel for schedule(static)
	for (int32_t r = 0; r < rows; r++) {
		const float *xr = x + (int64_t)r * cols;
		float *yr = y + (int64_t)r * cols;
		float m = -INFINITY, s = 0.0f;
		for (int32_t j = 0; j < cols; j++) {
			float v = xr[j];
			if (v > m) {
				s = s * expf(m - v) + 1.0f;
				m = v;
			} else {
				s += expf(v - m);
			}
		}
		float inv = 1.0f / s;
		for (int32_t j = 0; j < cols; j++)
			yr[j] = expf(xr[j] - m) * inv;
	}
}
'''

broken_kernel = omp_kernel.replace("float inv = 1.0f / s;", "float inv = 1.0f / s")

def code(src, note="Here is the kernel."):
    return note + "\n\n```c\n" + src + "```\n"

edit_ok = ("CURRENT: OpenMP over rows sped up every workload.\n"
           "FOLLOW_THROUGH: fully implemented.\n"
           "UPDATE_BELIEF: raise the online softmax, it saves a pass.\n"
           "PERF_GAP: still a third pass over y; bandwidth bound.\n\n"
           "```json\n" + json.dumps([
               {"op": "update_node", "node_id": 2,
                "node": {"overall_rating_0_to_10": 7.5, "confidence_0_to_1": 0.7}},
               {"op": "insert_node", "parent_id": 1, "node": {
                   "action": {"title": "vectorize the scale loop",
                              "description": "multiply by 1/s with SIMD"},
                   "difficulty_1_to_5": 1, "impacts": impacts(4, 1, 5),
                   "overall_rating_0_to_10": 5, "confidence_0_to_1": 0.5}},
           ], indent=1) + "\n```\n")

edit_bad = ("CURRENT: tried to remove the root.\nFOLLOW_THROUGH: -\nUPDATE_BELIEF: -\n"
            "PERF_GAP: -\n\n```json\n" +
            json.dumps([{"op": "delete_node", "node_id": 0}]) + "\n```\n")

edit_empty = ("CURRENT: no change.\nFOLLOW_THROUGH: done.\nUPDATE_BELIEF: none.\n"
              "PERF_GAP: unknown.\n\n```json\n[]\n```\n")

script = {
    "repeat_last": True,
    "purposes": {
        "init": [{"content": "Analysis first.\n\n```json\n" + json.dumps(init_doc, indent=1)
                  + "\n```\n", "usage": {"prompt_tokens": 1500, "completion_tokens": 900}}],
        "init-fix": [{"content": "```json\n" + json.dumps(init_doc) + "\n```\n"}],
        "action": [
            {"content": code(omp_kernel)},
            {"content": "I think this should work but I have no code today."},
            {"content": code(broken_kernel, "Attempt with a typo.")},
            {"content": code(online_kernel)},
        ],
        "action-fix": [{"content": code(omp_kernel, "Sorry, here it is.")}],
        "debug": [{"content": code(omp_kernel, "Missing semicolon fixed.")}],
        "debug-fix": [{"content": code(omp_kernel)}],
        "improve": [{"content": code(online_kernel)}],
        "improve-fix": [{"content": code(online_kernel)}],
        "edit": [{"content": edit_ok}, {"content": edit_bad}, {"content": edit_empty}],
        "edit-fix": [{"content": edit_empty}],
        "*": [{"content": code(omp_kernel)}],
    },
}

here = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(here, "scripts"), exist_ok=True)
with open(os.path.join(here, "scripts", "softmax_cpu.json"), "w", encoding="utf-8") as f:
    json.dump(script, f, indent=1)
    f.write("\n")
