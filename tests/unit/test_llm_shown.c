/* What the prompts of the model-driven policies show is true (the findings of the runs with
 * real models, 2026-12): a candidate's code reads as it ran (its knob values in its
 * #defines and in its @ksearch defaults, one value per knob); differences inside the timing
 * spreads are called so, by the search's rule (not the final phase's, which is told
 * apart); the machine's load is told; a CPU's
 * facts are in a CPU's terms, its measured roofs said to be measured and under what load; a
 * section with nothing to show is left out; the edit prompt says which field prunes a node
 * and that any node's description can be corrected, which the world model allows. */
#include "backend/backends.h"
#include "ksearch/backend.h"
#include "ksearch/knowledge.h"
#include "ksearch/llm.h"
#include "ksearch/task.h"
#include "ksearch/template.h"
#include "ksearch/world.h"
#include "policy/llm_context.h"
#include "policy/llm_prompt.h"
#include "policy/llm_text.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int has(const char *text, const char *s)
{
	return strstr(text, s) != NULL;
}

/* the default value of knob name in the source's @ksearch block, as the parser reads it */
static const char *parsed_default(const char *src, const char *name, char *out, size_t n)
{
	struct ks_template *t = NULL;
	struct ks_error e = {0};
	out[0] = '\0';
	if (ks_template_parse(src, strlen(src), "baked", &t, &e))
		return out;
	int k = ks_template_knob(t, name);
	if (k >= 0)
		snprintf(out, n, "%s", t->knobs[k].values[t->knobs[k].def]);
	ks_template_free(t);
	return out;
}

static void test_bake(void)
{
	/* the softmax-spec run's shape: a guard, the block saying default 1, the source's own
	 * guard saying 1 again; candidate 3 ran with -DSTREAM=0 */
	const char *src = "/* @ksearch\nfamily: multipass\nknobs:\n"
			  "  STREAM: {values: [0, 1], default: 1}\n"
			  "  BK:\n    values: [32, 64]\n    default: 64\n@end */\n"
			  "#include <stdint.h>\n#ifndef STREAM\n#define STREAM 1\n#endif\n"
			  "#ifndef BK\n#  define BK\t64\n#endif\nint f(void) { return STREAM + BK; }\n";
	struct ks_buf out = KS_BUF_INIT;
	char d[32];
	ks_llm_bake_knobs(src, "-DSTREAM=0 -DBK=32", &out);
	const char *b = ks_buf_str(&out);
	ok(has(b, "#define STREAM 0\n") && !has(b, "#define STREAM 1"),
	   "the source's #define takes the value it ran with");
	ok(has(b, "#  define BK 32\n") && !has(b, "64\n#endif"), "... in any spelling of #define");
	is_str(parsed_default(b, "STREAM", d, sizeof(d)), "0", "the block's default is it too");
	is_str(parsed_default(b, "BK", d, sizeof(d)), "32", "... in a block-style knob as well");
	ok(!strncmp(b, "/* @ksearch", 11), "no guard on top when the source defines the knob");
	ok(has(b, "values: [32, 64]") && has(b, "{values: [0, 1], default: 0}"),
	   "the rest of the block is untouched");

	ks_buf_reset(&out);
	const char *twice = "#ifndef STREAM\n#define STREAM 0\n#endif\n/* @ksearch\nfamily: m\n"
			    "knobs:\n  STREAM: {values: [0, 1], default: 1}\n@end */\n"
			    "#ifndef STREAM\n#define STREAM 1\n#endif\n";
	ks_llm_bake_knobs(twice, "-DSTREAM=1", &out);
	b = ks_buf_str(&out);
	ok(!has(b, "#define STREAM 0") && has(b, "#define STREAM 1\n#endif\n/* @ksearch"),
	   "a source that defines the knob twice says one value in both places");

	ks_buf_reset(&out);
	const char *mlx = "// @mlx body\n/* @ksearch\nfamily: m\nknobs:\n  TILE: {values: [8, 16], "
			  "default: 8}\n@end */\ny[i] = x[i] * TILE;\n";
	ks_llm_bake_knobs(mlx, "-DTILE=16", &out);
	b = ks_buf_str(&out);
	ok(!strncmp(b, "#ifndef TILE\n#define TILE 16\n#endif\n", 35),
	   "a knob the source never #defines gets a guarded #define on top");
	is_str(parsed_default(b, "TILE", d, sizeof(d)), "16", "... and the block's default");

	ks_buf_reset(&out);
	ks_llm_bake_knobs(src, "", &out);
	ok(!strcmp(ks_buf_str(&out), src), "no defines: the source as written");
	ks_buf_release(&out);
}

static struct ks_llm_times times2(double us0, double sp0, double us1, double sp1)
{
	struct ks_llm_times t = {.n = 2};
	t.t[0] = (struct ks_llm_time){.wl = 0, .label = "rows=2048", .us = us0, .spread = sp0};
	t.t[1] = (struct ks_llm_time){.wl = 1, .label = "rows=8192", .us = us1, .spread = sp1};
	return t;
}

static void test_compare(void)
{
	struct ks_buf b = KS_BUF_INIT;
	/* the softmax-none run: candidate 8 (8.278x) against candidate 7 (7.531x) */
	struct ks_llm_times c8 = times2(8036.84, 45, 14456.02, 61), c7 = times2(9728.77, 50, 14430.45, 38);
	ks_llm_compare_text(&c8, "candidate 8", &c7, "candidate 7", &b);
	is_str(ks_buf_str(&b), "no measured difference between candidate 8 and candidate 7: inside "
			       "the spreads on every timed workload",
	       "a 10% lead with ±45% spreads is inside them");
	ks_buf_reset(&b);
	struct ks_llm_times fast = times2(100, 2, 100, 2), slow = times2(200, 2, 200, 2);
	ks_llm_compare_text(&fast, "candidate 1", &slow, "candidate 2", &b);
	is_str(ks_buf_str(&b), "candidate 1 is faster than candidate 2 beyond the spreads on every "
			       "timed workload",
	       "2x with ±2%: the faster one is the subject, the other named");
	ks_buf_reset(&b);
	/* the attention run's "node 5's candidate 4, 52.592x (against it: ... slower beyond the
	 * spreads on ... causal=1)": which one was slower was not said */
	struct ks_llm_times c4 = times2(200, 2, 100, 2), c9 = times2(100, 2, 100, 2);
	ks_llm_compare_text(&c4, "candidate 4", &c9, "candidate 9", &b);
	is_str(ks_buf_str(&b), "candidate 4 is slower than candidate 9 beyond the spreads on "
			       "rows=2048; no measured difference (inside the spreads) on rows=8192",
	       "... per workload, the slower one named as such");
	ks_buf_reset(&b);
	struct ks_llm_times mixed = times2(100, 2, 300, 2);
	ks_llm_compare_text(&mixed, "candidate 3", &slow, "candidate 2", &b);
	is_str(ks_buf_str(&b), "candidate 3 is faster than candidate 2 beyond the spreads on "
			       "rows=2048; slower than candidate 2 beyond the spreads on rows=8192",
	       "faster on one, slower on another: both said of the subject");
	ks_buf_reset(&b);
	struct ks_llm_times one = {.n = 1, .t = {{.wl = 5, .label = "x", .us = 1, .spread = 1}}};
	ks_llm_compare_text(&one, "candidate 5", &slow, "candidate 2", &b);
	is_str(ks_buf_str(&b), "candidate 5 and candidate 2 have no timed workload in common",
	       "nothing to compare");
	int v[2];
	is_int(ks_llm_compare(&fast, &slow, v), 2, "two workloads in common");
	ok(v[0] == 1 && v[1] == 1, "each faster");
	ks_buf_release(&b);
}

static void test_noise(void)
{
	struct ks_buf b = KS_BUF_INIT;
	struct ks_llm_machine m = {.load = 19.6, .load_min = 17.3, .load_max = 22.0, .ncpu = 2,
				   .ntimed = 9, .spread_max = 1690, .spread_median = 62};
	ks_llm_noise_text(&m, &b);
	ok(has(ks_buf_str(&b), "The machine was loaded while kernels were timed: load average 19.6 "
			      "on 2 CPUs"),
	   "a load average above the CPUs is a loaded machine (the final phase's rule)");
	ok(has(ks_buf_str(&b), "reach ±1690% (median ±62%)"), "the spreads are told");
	ok(has(ks_buf_str(&b), "plus half its spread, plus 1%"), "the rule a difference must pass");
	ok(has(ks_buf_str(&b), "verdicts do not chain"),
	   "... and that its verdicts are pairwise, not transitive (a real model read them as a chain)");
	ok(!has(ks_buf_str(&b), "final ranking uses the same rule") &&
		   has(ks_buf_str(&b), "The run's best is not chosen by that rule") &&
		   has(ks_buf_str(&b), "95% interval"),
	   "... said to be the search's, not the final phase's (which ranks by a 95%% interval)");
	ks_buf_reset(&b);
	m.load = 1.5;
	ks_llm_noise_text(&m, &b);
	ok(has(ks_buf_str(&b), "was not loaded") && !has(ks_buf_str(&b), "several times off"),
	   "below the CPUs it is not");
	ks_buf_reset(&b);
	m.ntimed = 0;
	m.load = 3;
	ks_llm_noise_text(&m, &b);
	ok(has(ks_buf_str(&b), "No kernel has been timed in this run yet; the machine is loaded now"),
	   "before the first timing: the load now");
	ks_buf_release(&b);
}

/* the tree's versus callback for test_tree_versus: candidate 2 against candidate 1 as the
 * softmax-none run measured them (a 10% gap with ±45% spreads) */
static void tree_versus(void *ctx, long a, long b, struct ks_buf *out)
{
	(void)ctx;
	struct ks_llm_times c8 = times2(8036.84, 45, 14456.02, 61), c7 = times2(9728.77, 50, 14430.45, 38);
	char an[32], bn[32];
	snprintf(an, sizeof(an), "candidate %ld", a);
	snprintf(bn, sizeof(bn), "candidate %ld", b);
	ks_llm_compare_text(a == 2 ? &c7 : &c8, an, a == 2 ? &c8 : &c7, bn, out);
}

/* a node whose speedup is below the best kernel above it, with no measured difference: the
 * tree does not call it below (the attention run's prompt did, and said "no measured
 * difference" of the same two kernels elsewhere) */
static void test_tree_versus(void)
{
	struct ks_world w;
	struct ks_error e = {0};
	struct ks_node_spec sp = {.title = "tile", .description = "d", .difficulty = 2,
				  .rating = 5, .confidence = 0.5};
	int a = -1, b = -1;
	ks_world_init(&w, "root", "s", &e);
	ks_world_add(&w, w.root, &sp, &a, &e);
	ks_world_add(&w, a, &sp, &b, &e);
	ks_world_record(&w, a, 1, 1, 8.278, NULL, &e);
	ks_world_record(&w, b, 2, 1, 7.531, NULL, &e);
	ok(ks_world_node(&w, b)->regression, "node b's speedup is below node a's");
	struct ks_llm_versus vs = {.text = tree_versus};
	struct ks_buf t = KS_BUF_INIT;
	ks_llm_tree_text(&w, 1, &vs, &t);
	ok(!has(ks_buf_str(&t), "below") &&
		   has(ks_buf_str(&t), "| measured: candidate 2, 7.531x the baseline (the best kernel "
				       "above it on its path: node 1's candidate 1, 8.278x; no measured "
				       "difference between candidate 2 and candidate 1: inside the "
				       "spreads on every timed workload)"),
	   "the tree says what the spreads say of a node and the kernel above it, not 'below'");
	ks_buf_reset(&t);
	ks_llm_tree_text(&w, 0, NULL, &t);
	ok(has(ks_buf_str(&t), "8.278x; no per-workload timings to compare them)"),
	   "... and that it cannot tell without timings");
	ks_buf_release(&t);
	ks_world_release(&w);
}

/* the edit prompt names the field that prunes a node and says a closed node's description
 * can be corrected; the world model does what it says */
static void test_edit_ops(void)
{
	struct ks_buf t = KS_BUF_INIT;
	struct ks_error e = {0};
	is_int(ks_prompt_load("prompts", "edit.txt", &t, &e), 0, "edit.txt loads");
	ok(has(ks_buf_str(&t), "{\"op\": \"update_node\", \"node_id\": 4, \"node\": {\"status\": "
			       "\"pruned\"}}"),
	   "the edit prompt shows the op that prunes a node");
	ok(has(ks_buf_str(&t), "open, closed or pruned alike") &&
		   has(ks_buf_str(&t), "description"),
	   "... and that any node's description can be corrected");
	ks_buf_release(&t);

	struct ks_world w;
	ks_world_init(&w, "root", "s", &e);
	struct ks_node_spec sp = {.title = "tile", .description = "wrong", .difficulty = 2,
				  .rating = 5, .confidence = 0.5};
	int id = -1;
	ks_world_add(&w, w.root, &sp, &id, &e);
	ks_world_begin(&w, id, &e);
	ks_world_record(&w, id, 1, 1, 2.0, NULL, &e);
	ks_world_set_status(&w, id, KS_NODE_CLOSED, "refinement session ended", &e);
	char op[256];
	snprintf(op, sizeof(op), "{\"ops\": [{\"op\": \"update_node\", \"node_id\": %d, \"node\": "
		 "{\"action\": {\"description\": \"right\"}}}]}", id);
	is_int(ks_world_apply(&w, op, NULL, NULL, &e), 0, "an update of a closed node applies");
	is_str(ks_world_node(&w, id)->description, "right", "... and corrects its description");
	snprintf(op, sizeof(op), "{\"ops\": [{\"op\": \"update_node\", \"node_id\": %d, \"node\": "
		 "{\"status\": \"pruned\"}}]}", id);
	is_int(ks_world_apply(&w, op, NULL, NULL, &e), 0, "the pruning op of the prompt applies");
	is_int(ks_world_node(&w, id)->status, KS_NODE_PRUNED, "... and prunes the node");
	ks_world_release(&w);
}

static const char *host_yaml =
	"schema: ks-spec/1\nname: host\ntitle: \"Test CPU\"\nkind: cpu\nvendor: \"intel\"\n"
	"arch: \"x86_64\"\ntemplate: false\nsources:\n"
	"  src1: {title: \"Linux /proc/cpuinfo\"}\n  src3: {title: \"ksearch spec detect micro-benchmark\"}\n"
	"fields:\n"
	"  simd_width: {value: 16, unit: threads, source: src1, basis: detected}\n"
	"  max_threads_per_group: {value: 2, unit: threads, source: src1, basis: detected}\n"
	"  smem_per_block: {value: 49152, unit: B, source: src1, basis: detected}\n"
	"  l1_bytes: {value: 49152, unit: B, source: src1, basis: detected}\n"
	"  cores: {value: 2, source: src1, basis: detected}\n"
	"  clock_mhz: {value: 2100, unit: MHz, source: src1, basis: detected}\n"
	"  mem_bandwidth_gbps: {value: 3.1, unit: GB/s, source: src3, basis: measured, note: "
	"\"2-thread memcpy\"}\n"
	"  peak_gflops_f32: {value: 300, unit: GFLOPS, source: src3, basis: measured}\n"
	"  features: {value: [\"fp64\", \"avx512\"], source: src1, basis: detected}\n";

/* the prompt of purpose tmpl for context c, placeholders filled */
static void make(const struct ks_llm_context *c, const char *tmpl, struct ks_buf *user)
{
	struct ks_llm_state s = {.node_id = "1", .action = "A", .tree = "T", .tree_brief = "T"};
	struct ks_buf sys = KS_BUF_INIT;
	struct ks_error e = {0};
	ks_buf_reset(user);
	int rc = ks_llm_prompt_make("prompts", tmpl, "cpu", c, &s, &sys, user, &e);
	ok(rc == 0, "%s prompt (%s)", tmpl, rc ? e.msg : "ok");
	ks_buf_release(&sys);
}

static void test_cpu_context(void)
{
	struct ks_task *t = NULL;
	struct ks_spec spec;
	struct ks_error e = {0};
	ks_spec_init(&spec);
	if (!ok(ks_task_load("softmax", &t, &e) == 0, "load softmax (%s)", e.msg) ||
	    !ok(ks_spec_load_text(host_yaml, &spec, &e) == 0, "a CPU spec (%s)", e.msg)) {
		ks_task_free(t);
		return;
	}
	free(spec.path); /* as detected at the start of a run: no file */
	spec.path = NULL;
	/* the bandwidth probe ran at load 3.8 (the real run's prompt said the load at its own
	 * time, 7.2); the peak's provenance was not recorded */
	for (int i = 0; i < spec.nvalues; i++)
		if (!strcmp(spec.values[i].name, "mem_bandwidth_gbps"))
			spec.values[i].measure = (struct ks_spec_measure){
				.probe = "memcpy", .at = 1796000000, .load = 3.8, .loadavg = 3.5,
				.cores = 2};
	struct ks_llm_context_opts o = {.task = t, .be = ks_backend_find("cpu"), .spec = &spec,
					.level = KS_CONTEXT_SPEC};
	struct ks_llm_context c;
	is_int(ks_llm_context_open(&c, &o, &e), 0, "cpu context at --context spec");
	const char *hw = ks_buf_str(&c.hardware);
	ok(has(hw, "16 f32 SIMD lanes") && !has(hw, "16 threads") && !has(hw, "simd_width"),
	   "SIMD width in f32 lanes, not threads");
	ok(!has(hw, "smem_per_block") && !has(hw, "shared memory") && !has(hw, "threads per group"),
	   "no GPU notions on a CPU");
	ok(has(hw, "Instruction sets: fp64, avx512"), "the instruction sets");
	ok(has(hw, "Clock 2100 MHz (as the system reports it, often the base clock: cores may run "
		   "faster"),
	   "the reported clock is said to be the system's figure, not the turbo clock");
	ok(has(hw, "measured, not the hardware's limits") &&
		   has(hw, "- mem_bandwidth_gbps: 2-thread memcpy (measured 2026-11-30 00:53 UTC ") &&
		   has(hw, "by the memcpy probe at load 3.8 on 2 cores (1-minute load average 3.5); "
			   "the load was above the core count"),
	   "a measured roof says it was measured, when, under the load its probe recorded");
	ok(!has(hw, "under load average") &&
		   has(hw, "- peak_gflops_f32: ksearch spec detect micro-benchmark (by ksearch's "
			   "micro-benchmarks; the load then was not recorded)"),
	   "... never the load at prompt time, which says nothing of the probe");
	struct ks_buf user = KS_BUF_INIT;
	make(&c, "action", &user);
	ok(!has(ks_buf_str(&user), "## Knowledge for this target") &&
		   has(ks_buf_str(&user), "## Target hardware"),
	   "--context spec: no empty knowledge section");
	ks_llm_context_release(&c);

	o.level = KS_CONTEXT_FULL;
	is_int(ks_llm_context_open(&c, &o, &e), 0, "cpu context at --context full");
	make(&c, "action", &user);
	ok(has(ks_buf_str(&user), "## Knowledge for this target\n### Patterns for this target"),
	   "--context full: the section with its knowledge");
	ks_llm_context_release(&c);

	spec.path = strdup("/tmp/saved-host.yaml");
	is_int(ks_llm_context_open(&c, &o, &e), 0, "a spec from a file");
	ok(has(ks_buf_str(&c.hardware), "(when the spec file /tmp/saved-host.yaml was written; the "
					"load then is not known)"),
	   "... says its roofs were measured when the file was written");
	ks_llm_context_release(&c);
	ks_buf_release(&user);
	ks_spec_release(&spec);
	ks_task_free(t);
}

/* a section whose piece is empty and optional is left out of a prompt, heading included */
static void test_optional_section(void)
{
	char dir[] = "/tmp/ks-prompt-XXXXXX";
	if (!ok(mkdtemp(dir) != NULL, "temp dir"))
		return;
	char path[64];
	snprintf(path, sizeof(path), "%s/system.txt", dir);
	FILE *f = fopen(path, "w");
	fputs("sys\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/p.txt", dir);
	f = fopen(path, "w");
	fputs("PURPOSE: p\n\n## Extra\n{{extra}}\n\n## Next\n{{next}}\n", f);
	fclose(f);
	struct ks_context_piece pieces[] = {{.name = "extra", .text = "", .optional_section = 1},
					    {.name = "next", .text = "N", .required = 1}};
	struct ks_llm_prompt p = {.dir = dir, .purpose = "p", .pieces = pieces, .npieces = 2};
	struct ks_buf sys = KS_BUF_INIT, user = KS_BUF_INIT;
	struct ks_error e = {0};
	is_int(ks_llm_prompt_build(&p, &sys, &user, NULL, &e), 0, "built");
	ok(!strcmp(ks_buf_str(&user), "PURPOSE: p\n\n## Next\nN\n"), "the empty section is left out");
	pieces[0].text = "E";
	ks_llm_prompt_build(&p, &sys, &user, NULL, &e);
	ok(!strcmp(ks_buf_str(&user), "PURPOSE: p\n\n## Extra\nE\n\n## Next\nN\n"), "a full one stays");
	ks_buf_release(&sys);
	ks_buf_release(&user);
	remove(path);
	snprintf(path, sizeof(path), "%s/system.txt", dir);
	remove(path);
	rmdir(dir);
}

int main(void)
{
	test_bake();
	test_compare();
	test_noise();
	test_tree_versus();
	test_edit_ops();
	test_cpu_context();
	test_optional_section();
	return tap_done();
}
