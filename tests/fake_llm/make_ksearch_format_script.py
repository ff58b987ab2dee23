#!/usr/bin/env python3
"""Writes scripts/softmax_ksearch.json: a purpose-mode script for the fake LLM server whose
model answers in the original K-Search's own format (string node ids "root", "a1", nodes
out of order, a root with null decision and choice, impacts as {rating_0_to_10, risk,
notes}, actions with difficulty/score/expected factor/rationale, edit scripts as
{"active_leaf_id", "ops"} with update_node{node_id, patch} and insert_node{parent_id, node}),
every reply carrying a C kernel, and faults mixed in: HTTP 429 and 500, prose without code,
truncated JSON, a kernel that does not compile.  tests/cli/t0710-llm-ksearch-format.sh uses
it.  Regenerate after editing: python3 tests/fake_llm/make_ksearch_format_script.py"""
import json
import os

def impacts(mb, rp, hw):
    return {"memory_bandwidth": {"rating_0_to_10": mb, "risk": "low", "notes": "rows stream"},
            "register_pressure": {"rating_0_to_10": rp, "risk": "low", "notes": "few live values"},
            "compute_hw_fit": {"rating_0_to_10": hw, "risk": "medium", "notes": "expf bound"}}

def action(title, desc, diff, score, factor):
    return {"title": title, "description": desc, "difficulty_1_to_5": diff,
            "score_0_to_1": score, "expected_vs_baseline_factor": factor,
            "rationale": "the baseline reads every row three times"}

init_doc = {
    "kernel_summary": "row-wise softmax: max, exp-sum, scale; bandwidth bound",
    "open_questions": ["does expf vectorize?"],
    "decision_tree": {"root_id": "root", "active_leaf_id": "a1", "nodes": [
        # children first: K-Search does not promise an order
        {"node_id": "a1", "parent_id": "root", "decision": "parallelism",
         "choice": "rows across threads",
         "action": action("parallelize rows with OpenMP", "one row per iteration", 1, 0.8, 1.8),
         "impacts": impacts(8, 2, 7), "notes_from_model": "ignored"},
        {"node_id": "a2", "parent_id": "root", "decision": "passes", "choice": "online",
         "action": action("online softmax", "fuse max and sum with rescaling", 2, 0.65, 1.4),
         "impacts": impacts(6, 3, 5)},
        {"node_id": "root", "parent_id": None, "decision": None, "choice": None,
         "action": {"title": "naive baseline", "description": "the starting kernel"}},
        {"node_id": "a3", "parent_id": "root", "decision": "passes", "choice": "cache exp",
         "action": action("two-pass with cached exp", "store exp in y, then scale", 2, 0.5, 1.2),
         "impacts": {"memory_bandwidth": 5, "register_pressure": 2, "compute_hw_fit": 4}},
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

# the same kernels with other spellings, so no two replies repeat a source exactly
def variant(src, k):
    return src.replace("float inv = 1.0f / s;", "float inv = 1.0f / s; /* v%d */" % k)

broken_kernel = omp_kernel.replace("float inv = 1.0f / s;", "float inv = 1.0f / s")

def code(src, note="Here is the kernel."):
    return note + "\n\n```c\n" + src + "```\n"

edit_doc = {"active_leaf_id": "a2", "ops": [
    {"op": "update_node", "node_id": "a2",
     "patch": {"action": {"score_0_to_1": 0.75}, "overall_rating_0_to_10": 7.5}},
    {"op": "insert_node", "parent_id": "a1", "node": {
        "node_id": "a4", "decision": "vector width", "choice": "AVX-512",
        "action": action("vectorize the scale loop", "multiply by 1/s with SIMD", 1, 0.5, 1.1),
        "impacts": impacts(4, 1, 5)}},
]}

def edit_reply(k, src):
    return ("CURRENT: OpenMP over rows sped up every workload.\n"
            "UPDATE_BELIEF: the online softmax saves a pass.\n\n```json\n" +
            json.dumps(edit_doc, indent=1) + "\n```\n\nAnd a kernel to try:\n\n```c\n" +
            variant(src, k) + "```\n")

truncated = ("CURRENT: ...\n\n```json\n" + json.dumps(edit_doc)[:70] +
             "\n```\n\nThe kernel:\n\n```c\n" + variant(online_kernel, 90) + "```\n")

script = {
    "repeat_last": True,
    "purposes": {
        "init": [{"status": 429, "retry_after": "1"},
                 {"content": "Analysis first.\n\n```json\n" + json.dumps(init_doc, indent=1) +
                  "\n```\n\nA first kernel for a1:\n\n```c\n" + omp_kernel + "```\n",
                  "usage": {"prompt_tokens": 1500, "completion_tokens": 900}}],
        "init-fix": [{"content": "```json\n" + json.dumps(init_doc) + "\n```\n"}],
        "action": [
            {"status": 500, "body": "upstream overloaded"},
            {"content": "I would parallelize the rows, it is the obvious first step."},
            {"content": code(variant(online_kernel, 1))},
            {"content": code(variant(omp_kernel, 2))},
            {"content": code(variant(online_kernel, 3))},
            {"content": code(variant(omp_kernel, 4))},
            {"content": code(variant(online_kernel, 5))},
            {"content": code(variant(omp_kernel, 6))},
            {"content": code(variant(online_kernel, 7))},
        ],
        "action-fix": [{"content": code(variant(omp_kernel, 10), "Sorry, here it is.")},
                       {"content": code(variant(omp_kernel, 11))},
                       {"content": code(variant(omp_kernel, 12))}],
        "debug": [{"content": code(variant(omp_kernel, 20), "Missing semicolon fixed.")},
                  {"content": code(variant(omp_kernel, 21))},
                  {"content": code(variant(omp_kernel, 22))}],
        "improve": [{"status": 500, "body": "upstream overloaded"},
                    {"content": code(broken_kernel, "Faster, with a typo.")},
                    {"content": code(variant(online_kernel, 30))},
                    {"content": code(variant(online_kernel, 31))},
                    {"content": code(variant(online_kernel, 32))},
                    {"content": code(variant(online_kernel, 33))}],
        # the correction of the truncated script: the same script, whole
        "edit-fix": [{"content": edit_reply(53, omp_kernel)}],
        "direct": [{"content": code(variant(online_kernel, 40))},
                   {"content": code(variant(online_kernel, 41))}],
        "edit": [{"content": truncated},
                 {"content": edit_reply(50, online_kernel)},
                 {"content": edit_reply(51, omp_kernel)},
                 {"content": edit_reply(52, online_kernel)}],
        "*": [{"content": code(variant(omp_kernel, 60))}],
    },
}

here = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(here, "scripts"), exist_ok=True)
with open(os.path.join(here, "scripts", "softmax_ksearch.json"), "w", encoding="utf-8") as f:
    json.dump(script, f, indent=1)
    f.write("\n")
