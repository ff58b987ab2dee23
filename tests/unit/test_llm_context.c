/* What the model-driven policies tell the model that does not change in a run: context
 * follows the target (the translation layer only where kernels carry CUDA over), the ABI in
 * the flavour in force, the starting kernel; the tree's reflection notes; the spec of the
 * Apple chip MLX names. */
#include "backend/backends.h"
#include "ksearch/backend.h"
#include "ksearch/knowledge.h"
#include "ksearch/run_opts.h"
#include "ksearch/task.h"
#include "ksearch/template.h"
#include "ksearch/world.h"
#include "policy/llm_context.h"
#include "policy/llm_text.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

static int has(const struct ks_buf *b, const char *s)
{
	return strstr(ks_buf_str(b), s) != NULL;
}

static void test_targets(void)
{
	struct ks_task *t = NULL;
	struct ks_error e = {0};
	if (!ok(ks_task_load("softmax", &t, &e) == 0, "load softmax (%s)", e.msg))
		return;
	struct ks_llm_context_opts o = {.task = t, .be = ks_backend_find("cpu"),
					.level = KS_CONTEXT_FULL};
	struct ks_llm_context c;
	int rc = ks_llm_context_open(&c, &o, &e);
	is_int(rc, 0, "cpu context");
	is_str(c.flavour, "c", "cpu writes c");
	ok(!has(&c.translation, "CUDA concepts on this target") &&
		   !has(&c.translation, "A CUDA kernel of the task"),
	   "cpu: no concept map, no CUDA kernel");
	ok(has(&c.translation, "Patterns for this target"), "cpu: the CPU's patterns");
	ok(has(&c.task, "void softmax(const float *x, float *y, int32_t rows, int32_t cols);"),
	   "cpu: the prototype");
	is_str(c.start_file, "baseline.c", "cpu starts from baseline.c");
	is_str(c.start_what, "baseline.c of the task: the baseline itself, 1.0x by definition",
	       "... the baseline itself");
	ks_llm_context_release(&c);

	o.be = ks_backend_find("mlx");
	o.flavour = "cuda";
	rc = ks_llm_context_open(&c, &o, &e);
	is_int(rc, 0, "mlx context, flavour cuda");
	is_str(c.start_file, "naive.cuda.mlx", "mlx starts from the naive kernel of its flavour");
	ok(strstr(c.start_what, "naive.cuda.mlx of the task") &&
		   strstr(c.start_what, "not the baseline (baseline.mlx, MLX native) and not timed"),
	   "... and says what it is: not the baseline, not timed");
	ok(has(&c.task, "// @mlx body") && has(&c.task, "flavour cuda (mx.fast.cuda_kernel"),
	   "mlx: the // @mlx format, the cuda signature");
	ok(!has(&c.task, "flavour metal (mx.fast.metal_kernel"), "... and not the metal one");
	ok(has(&c.translation, "### A CUDA kernel of the task: templates/cuda/") &&
		   !has(&c.translation, "CUDA concepts on this target"),
	   "mlx cuda: a CUDA kernel of the task, no Metal concept map");
	ks_llm_context_release(&c);

	o.flavour = "metal";
	rc = ks_llm_context_open(&c, &o, &e);
	is_int(rc, 0, "mlx context, flavour metal");
	ok(has(&c.translation, "CUDA concepts on this target") &&
		   has(&c.translation, "Its translation to this target"),
	   "mlx metal: the concept map and the translation");
	ks_llm_context_release(&c);

	o.flavour = "opencl";
	rc = ks_llm_context_open(&c, &o, &e);
	is_int(rc, KS_EINVAL, "a flavour no language has is refused");
	ks_llm_context_release(&c);
	ks_task_free(t);
}

static void test_reflection(void)
{
	struct ks_world w;
	struct ks_error e = {0};
	ks_world_init(&w, "root", "s", &e);
	struct ks_node_spec spec = {.title = "tile", .difficulty = 2, .rating = 5, .confidence = 0.5};
	int id = -1;
	ks_world_add(&w, w.root, &spec, &id, &e);
	is_int(ks_world_reflect(&w, id, "CURRENT: first", &e), 0, "reflect");
	ks_world_reflect(&w, id, "CURRENT: second", &e);
	is_str(ks_world_node(&w, id)->reflection, "CURRENT: first\nCURRENT: second",
	       "notes accumulate, newest last");
	char big[3000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ks_world_reflect(&w, id, big, &e);
	ks_world_reflect(&w, id, big, &e);
	ok(strlen(ks_world_node(&w, id)->reflection) <= KS_WORLD_MAX_TEXT,
	   "notes stay under the text cap, the oldest dropped");
	struct ks_buf tree = KS_BUF_INIT, doc = KS_BUF_INIT;
	ks_world_reflect(&w, id, "PERF_GAP: bandwidth", &e);
	ks_llm_tree_text(&w, 1, NULL, &tree);
	ok(strstr(ks_buf_str(&tree), "PERF_GAP: bandwidth") != NULL, "the full tree shows them");
	ks_world_export(&w, &doc, &e);
	struct ks_world back;
	is_int(ks_world_import(&back, ks_buf_str(&doc), &e), 0, "export and import");
	ok(ks_world_node(&back, id)->reflection &&
		   strstr(ks_world_node(&back, id)->reflection, "PERF_GAP: bandwidth"),
	   "... keep them");
	ks_world_release(&back);
	ks_buf_release(&tree);
	ks_buf_release(&doc);
	ks_world_release(&w);
}

/* Text reaches the model whole or cut where a reader sees the cut: every text field of every
 * shipped spec in full (a feature list cut mid-name read "atomic_f [documented"), and a long
 * log cut at a line with how much was left out. */
static void test_no_cut_text(void)
{
	char **names = NULL;
	int n = 0;
	struct ks_error e = {0};
	if (!ok(ks_spec_list(&names, &n, &e) == 0 && n > 0, "shipped specs (%s)", e.msg))
		return;
	int whole = 1, fields = 0;
	for (int i = 0; i < n; i++) {
		struct ks_spec s;
		ks_spec_init(&s);
		if (ks_spec_load(names[i], &s, &e) == 0) {
			struct ks_buf b = KS_BUF_INIT;
			ks_spec_to_text(&s, &b);
			for (int k = 0; k < s.nvalues; k++) {
				const struct ks_spec_value *v = &s.values[k];
				if (!v->text)
					continue;
				fields++;
				char line[4096];
				snprintf(line, sizeof(line), "- %s: %s [", v->name, v->text);
				if (!has(&b, line)) {
					whole = 0;
					printf("# %s: %s is not shown whole\n", names[i], v->name);
				}
			}
			ks_buf_release(&b);
		}
		ks_spec_release(&s);
	}
	ks_spec_list_free(names, n);
	ok(whole && fields > 20, "every text field of every shipped spec is shown whole (%d)", fields);

	struct ks_wl_result w = {.label = "rows=4 cols=8", .status = KS_STATUS_RUNTIME_ERROR};
	char log[KS_LLM_FEEDBACK_LOG * 3] = "";
	for (int i = 0; strlen(log) + 40 < sizeof(log); i++)
		snprintf(log + strlen(log), sizeof(log) - strlen(log), "line %d of the runner's log\n", i);
	w.log = log;
	struct ks_eval_result r = {.status = KS_STATUS_RUNTIME_ERROR, .nworkloads = 1, .workloads = &w};
	struct ks_buf fb = KS_BUF_INIT;
	ks_llm_feedback_text(&r, &fb);
	const char *cut = strstr(ks_buf_str(&fb), "more bytes of this log not shown]");
	ok(cut && strstr(ks_buf_str(&fb), "of the runner's log\n["),
	   "a long log is cut after a whole line and says how much is left out");
	ks_buf_release(&fb);
}

/* The task section states the rules a kernel is judged by: the three tolerance bounds and how
 * they combine (a prompt that gave atol and rtol alone hid the L2 bound a kernel failed on),
 * and the feedback gives the shares of them a workload used. */
static void test_tolerance(void)
{
	struct ks_task *t = NULL;
	struct ks_error e = {0};
	if (!ok(ks_task_load("softmax", &t, &e) == 0, "load softmax (%s)", e.msg))
		return;
	struct ks_llm_context_opts o = {.task = t, .be = ks_backend_find("mlx"), .flavour = "cuda",
					.level = KS_CONTEXT_NONE};
	struct ks_llm_context c;
	ks_llm_context_open(&c, &o, &e);
	char want[256];
	snprintf(want, sizeof(want), "(atol %g, rtol %g), and the relative L2 error", t->atol, t->rtol);
	ok(has(&c.task, want), "the tolerance gives atol and rtol");
	snprintf(want, sizeof(want), "at most l2 (%g)", t->l2);
	ok(has(&c.task, want) && has(&c.task, "both at most 1 to pass"),
	   "... the l2 bound and what PASSED needs of both shares");
	ks_llm_context_release(&c);
	ks_task_free(t);

	struct ks_wl_result w = {.label = "rows=4 cols=8", .status = KS_STATUS_INCORRECT_NUMERICAL,
				 .max_abs_err = 0.5, .tol_elem = 3.5, .tol_l2 = 0.25};
	struct ks_eval_result r = {.status = w.status, .nworkloads = 1, .workloads = &w};
	struct ks_buf fb = KS_BUF_INIT;
	ks_llm_feedback_text(&r, &fb);
	ok(has(&fb, "tolerance used 3.5 elementwise, 0.25 L2"),
	   "the feedback gives the shares of the tolerance used");
	ks_buf_release(&fb);

	/* a PASSED workload's log reaches the model too: a figure the machine's load set */
	struct ks_wl_result p = {.label = "n=1024", .status = KS_STATUS_PASSED, .median_us = 12000,
				 .log = "timed calls took 12000.0 us at the median, 35x the fastest "
					"single call (340.0 us): the machine's load set this figure"};
	struct ks_eval_result pr = {.status = p.status, .nworkloads = 1, .workloads = &p};
	ks_llm_feedback_text(&pr, &fb);
	ok(has(&fb, "log: timed calls took 12000.0 us"), "a PASSED workload's log is in the feedback");
	ks_buf_release(&fb);

	/* a task's check and its class's of one name are told apart (matmul's long-k) */
	struct ks_wl_result ck[2] = {{.label = "long-k", .status = KS_STATUS_PASSED},
				     {.label = KS_ASSERT_PREFIX "long-k", .status = KS_STATUS_PASSED}};
	struct ks_eval_result cr = {.status = KS_STATUS_PASSED, .nchecks = 2, .checks = ck};
	ks_llm_feedback_text(&cr, &fb);
	ok(has(&fb, "- check long-k: PASSED") && has(&fb, "- class check long-k: PASSED"),
	   "a task's check and its class's of the same name read apart");
	ks_buf_release(&fb);
}

/* Checks read as plain words: no "assert:" mark or "#0~" notation, no check listed twice
 * (a class's check equal to one of the task's), inputs named, why a class's check exists;
 * the knowledge section does not list them again. */
static void test_checks_words(void)
{
	static const char *const tasks[] = {"softmax", "matmul", "selective_scan", "attention"};
	static const char *const bes[] = {"cpu", "mlx"};
	for (size_t i = 0; i < sizeof(tasks) / sizeof(tasks[0]); i++)
		for (size_t b = 0; b < 2; b++) {
			struct ks_task *t = NULL;
			struct ks_error e = {0};
			if (ks_task_load(tasks[i], &t, &e) || ks_assertions_apply(t, &e)) {
				ok(0, "load %s (%s)", tasks[i], e.msg);
				continue;
			}
			struct ks_llm_context_opts o = {.task = t, .be = ks_backend_find(bes[b]),
							.flavour = b ? "cuda" : NULL,
							.level = KS_CONTEXT_FULL};
			struct ks_llm_context c;
			ks_llm_context_open(&c, &o, &e);
			const char *txt = ks_buf_str(&c.task);
			const char *from = strstr(txt, "Correctness checks");
			const char *end = from ? strstr(from, "\n\n") : NULL;
			int lines = 0, twice = 0, notation = 0;
			for (const char *l = from; l && l < end; l = strchr(l + 1, '\n')) {
				size_t n = strcspn(l + 1, "\n");
				lines++;
				notation |= memchr(l + 1, '~', n) || memchr(l + 1, '#', n) ||
					    !strncmp(l + 1, "- assert", 8);
				for (const char *m = strchr(l + 1, '\n'); m && m < end; m = strchr(m + 1, '\n'))
					twice |= !strncmp(l + 1, m + 1, n) && m[1 + n] == '\n';
			}
			ok(from && lines > 5 && !notation && !twice,
			   "%s on %s: %d check lines, plain words, none twice", tasks[i], bes[b], lines);
			if (!strcmp(tasks[i], "softmax")) {
				const char *a = strstr(txt, "large-logits (");
				ok(a && !strstr(a + 1, "large-logits ("),
				   "softmax: the class's large-logits, the task's own check, once");
			}
			ok(!has(&c.translation, "Extra correctness checks") &&
				   !has(&c.translation, "assert:"),
			   "... and the knowledge section does not list them again");
			ks_llm_context_release(&c);
			ks_task_free(t);
		}
	struct ks_buf prose = KS_BUF_INIT;
	ks_assertions_prose("matmul", &prose);
	ok(has(&prose, "large-values (m=64 n=64 k=64; input 1 from normal(0, 4), input 2 from") &&
		   has(&prose, "zero-b (m=32 n=48 k=40; input 2 = 0 everywhere)") && !has(&prose, "~"),
	   "the class's own list of its checks is in words too");
	ks_buf_release(&prose);
	struct ks_wl_result w = {.label = "assert:odd-shape (m=67 n=129 k=33)",
				 .status = KS_STATUS_PASSED};
	struct ks_eval_result r = {.status = KS_STATUS_PASSED, .nchecks = 1, .checks = &w};
	struct ks_buf fb = KS_BUF_INIT;
	ks_llm_feedback_text(&r, &fb);
	ok(has(&fb, "- class check odd-shape (m=67 n=129 k=33): PASSED"),
	   "the feedback names a class's check as the task section does, as the class's");
	ks_buf_release(&fb);
}

/* The task section says what a speedup is against (the starting kernel itself, or MLX's own
 * op shown as its file) and how a time is measured, in the run's own figures. */
static void test_scoring(void)
{
	struct ks_task *t = NULL;
	struct ks_error e = {0};
	if (!ok(ks_task_load("softmax", &t, &e) == 0, "load softmax (%s)", e.msg))
		return;
	struct ks_run_opts run;
	ks_run_opts_init(&run);
	struct ks_llm_context_opts o = {.task = t, .be = ks_backend_find("cpu"),
					.level = KS_CONTEXT_NONE};
	struct ks_llm_context c;
	ks_llm_context_open(&c, &o, &e);
	char want[256];
	snprintf(want, sizeof(want), "%d untimed warm-up calls, then at least %d calls and %.2g s",
		 run.eval.warmup, run.eval.min_reps, run.eval.min_time_s);
	ok(has(&c.task, "The baseline is the task's baseline.c, which is also the starting kernel") &&
		   has(&c.task, want) && has(&c.task, "interquartile range"),
	   "cpu: the baseline is the starting kernel; a time is a median, the run's figures");
	ks_llm_context_release(&c);

	struct ks_eval_opts ev = run.eval;
	ev.warmup = 3, ev.min_reps = 11, ev.min_time_s = 0.25, ev.rep_ci_rel = 0.02;
	o.eval = &ev;
	o.be = ks_backend_find("mlx");
	o.flavour = "cuda";
	ks_llm_context_open(&c, &o, &e);
	ok(has(&c.task, "3 untimed warm-up calls, then at least 11 calls and 0.25 s") &&
		   has(&c.task, "within +-2%"),
	   "... the figures of the options the run passes");
	ok(has(&c.task, "The baseline is the task's baseline.mlx (MLX native), not the starting "
			"kernel naive.cuda.mlx") &&
		   has(&c.task, "// @mlx native: softmax") && has(&c.task, "chained launches"),
	   "mlx: the baseline is MLX's own op, its file shown; how a timed call is made");
	ks_llm_context_release(&c);
	ks_task_free(t);
}

/* The CUDA kernel a prompt carries over is the highest-rated that fits, and every one rated as
 * high or higher is named with why it is not the one shown (the prompt showed flash2.cu as
 * "the best" while the README called flash_wgmma.cu and state_scan.cu the fastest). */
static void test_expert_choice(void)
{
	static const char *const tasks[] = {"attention", "selective_scan", "softmax", "matmul"};
	for (size_t i = 0; i < sizeof(tasks) / sizeof(tasks[0]); i++) {
		struct ks_task *t = NULL;
		struct ks_error e = {0};
		if (!ok(ks_task_load(tasks[i], &t, &e) == 0, "load %s", tasks[i]))
			continue;
		struct ks_llm_context_opts o = {.task = t, .be = ks_backend_find("mlx"),
						.flavour = "cuda", .level = KS_CONTEXT_FULL};
		struct ks_llm_context c;
		ks_llm_context_open(&c, &o, &e);
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s/templates/cuda", t->dir);
		struct ks_template **list = NULL;
		int nt = 0, named = 1;
		double shown = -1;
		ks_template_load_dir(dir, &list, &nt, NULL);
		for (int k = 0; k < nt; k++) {
			const char *f = strrchr(list[k]->path, '/') + 1;
			char head[256];
			snprintf(head, sizeof(head), "templates/cuda/%s, rated %.0f, the highest-rated", f,
				 list[k]->rating);
			if (has(&c.translation, head))
				shown = list[k]->rating;
		}
		for (int k = 0; k < nt; k++) {
			const char *f = strrchr(list[k]->path, '/') + 1;
			char line[256], head[256];
			snprintf(line, sizeof(line), "\n- %s, rated %.0f, ", f, list[k]->rating);
			snprintf(head, sizeof(head), "templates/cuda/%s, rated", f);
			if (list[k]->rating >= shown && !has(&c.translation, line) &&
			    !has(&c.translation, head))
				named = 0;
			if (list[k]->source_len > KS_LLM_EXPERT_MAX && list[k]->rating >= shown &&
			    !has(&c.translation, "longer than the prompt shows whole"))
				named = 0;
		}
		ok(shown >= 0 && named, "%s: the kernel shown and every one rated as high, with why", tasks[i]);
		ks_template_list_free(list, nt);
		ks_llm_context_release(&c);
		ks_task_free(t);
	}
}

/* The MLX kernel-file format a prompt gives: what a reply holds and how a knob gets its value
 * (the backend's phrases, not the C form's "includes and entry point"), NVRTC's facts for
 * flavour cuda only, and an example whose every knob is explained by its @ksearch block. */
static void test_mlx_format(void)
{
	static const char *const tasks[] = {"softmax", "matmul", "selective_scan", "attention"};
	static const char *const flavours[] = {"cuda", "metal"};
	for (size_t i = 0; i < sizeof(tasks) / sizeof(tasks[0]); i++)
		for (int f = 0; f < 2; f++) {
			struct ks_task *t = NULL;
			struct ks_error e = {0};
			if (!ok(ks_task_load(tasks[i], &t, &e) == 0, "load %s", tasks[i]))
				continue;
			struct ks_llm_context_opts o = {.task = t, .be = ks_backend_find("mlx"),
							.flavour = flavours[f],
							.level = KS_CONTEXT_NONE};
			struct ks_llm_context c;
			ks_llm_context_open(&c, &o, &e);
			int cuda = !f;
			ok(c.reply_file && strstr(c.reply_file, ".mlx kernel file") &&
				   strstr(c.reply_file, "'#define NAME VALUE' line per knob") &&
				   c.knob_use && strstr(c.knob_use, "above '// @mlx header'") &&
				   has(&c.task, "The header comes before the kernel function and sees none"),
			   "%s %s: a reply is the .mlx file, knob values as #define lines above the "
			   "header, template args in the body only", tasks[i], flavours[f]);
			ok(cuda == has(&c.task, "int8_t to uint64_t, size_t and") &&
				   cuda == has(&c.task, "MLX raises the kernel's limit itself") &&
				   (!cuda) == has(&c.task, "Threadgroup memory (flavour metal)"),
			   "... NVRTC's types and shared memory past 48 KB for cuda, threadgroup "
			   "memory for metal");
			/* the example's knobs, each with its meaning */
			const char *ex = strstr(ks_buf_str(&c.task), "Example (flavour ");
			char file[256] = "";
			if (ex)
				sscanf(ex, "Example (flavour %*s %255[^:]", file);
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", t->dir, file);
			struct ks_template *tp = NULL;
			int explained = file[0] && !ks_template_load(path, &tp, &e) && tp->nknobs > 0;
			for (int k = 0; explained && k < tp->nknobs; k++) {
				char line[128];
				snprintf(line, sizeof(line), "  %s: {values:", tp->knobs[k].name);
				explained = strstr(ex, line) && tp->knobs[k].summary &&
					    strstr(ex, tp->knobs[k].summary);
			}
			ok(explained, "... the example %s explains each of its knobs", file);
			ks_template_free(tp);
			ks_llm_context_release(&c);
			ks_task_free(t);
		}
	struct ks_task *t = NULL;
	struct ks_error e = {0};
	ks_task_load("softmax", &t, &e);
	struct ks_llm_context_opts o = {.task = t, .be = ks_backend_find("cpu"),
					.level = KS_CONTEXT_NONE};
	struct ks_llm_context c;
	ks_llm_context_open(&c, &o, &e);
	ok(strstr(c.reply_file, "includes, helpers and the entry point") &&
		   strstr(c.knob_use, "#ifndef BLOCK"),
	   "cpu: a reply is includes, helpers and the entry point; knobs by a guarded #define");
	ks_llm_context_release(&c);
	ks_task_free(t);
}

/* every knob of every shipped template says what it is (a model is shown them) */
static void test_knob_summaries(void)
{
	static const char *const tasks[] = {"softmax", "matmul", "matmul_bf16", "selective_scan",
					    "attention", "attention_bf16", "selective_scan_f32",
					    "selective_scan_nogate"};
	static const char *const kinds[] = {"cpu", "cuda", "mlx"};
	int n = 0, missing = 0;
	for (size_t i = 0; i < sizeof(tasks) / sizeof(tasks[0]); i++) {
		struct ks_task *t = NULL;
		if (ks_task_load(tasks[i], &t, NULL))
			continue;
		for (size_t k = 0; k < 3; k++) {
			char dir[4096];
			snprintf(dir, sizeof(dir), "%s/templates/%s", t->dir, kinds[k]);
			struct ks_template **list = NULL;
			int nt = 0;
			if (ks_template_load_dir(dir, &list, &nt, NULL))
				continue;
			for (int j = 0; j < nt; j++)
				for (int q = 0; q < list[j]->nknobs; q++, n++)
					if (!list[j]->knobs[q].summary || !list[j]->knobs[q].summary[0]) {
						missing++;
						printf("# %s: knob %s has no summary\n", list[j]->path,
						       list[j]->knobs[q].name);
					}
			ks_template_list_free(list, nt);
		}
		ks_task_free(t);
	}
	ok(n > 100 && !missing, "every knob of the shipped templates has a summary (%d knobs)", n);
}

static void test_mlx_spec_name(void)
{
	static const char *const cases[][2] = {{"Apple M3 Max", "m3-max"}, {"Apple M1", "m1"},
					       {"Apple M2 Pro", "m2-pro"},
					       {"Apple M4 Ultra", NULL}, {"NVIDIA H200", NULL}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[32] = "";
		int rc = ks_mlx_spec_name(cases[i][0], out, sizeof(out));
		if (cases[i][1])
			ok(rc == 0 && !strcmp(out, cases[i][1]), "%s -> %s (got %s)", cases[i][0],
			   cases[i][1], out);
		else
			ok(rc == KS_ENOTFOUND, "%s has no shipped spec", cases[i][0]);
	}
}

int main(void)
{
	test_targets();
	test_reflection();
	test_mlx_spec_name();
	test_no_cut_text();
	test_tolerance();
	test_checks_words();
	test_scoring();
	test_expert_choice();
	test_mlx_format();
	test_knob_summaries();
	return tap_done();
}
