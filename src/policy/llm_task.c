/* The task as a prompt tells it (llm_context.h): the kernel's ABI in the flavour in force,
 * the tensors, the tolerance, the workloads and checks in plain words, how a kernel is
 * scored, the README. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/backend.h"
#include "ksearch/eval.h"
#include "ksearch/knowledge.h"
#include "policy/llm_context.h"

/* a check the task's class added (knowledge/assertions), not one of the task's own */
static int is_class_check(const struct ks_workload *w)
{
	return w->name && !strncmp(w->name, KS_ASSERT_PREFIX, strlen(KS_ASSERT_PREFIX));
}

/* ": why it exists" of a check the class added */
static void class_check_why(const struct ks_task *t, const struct ks_workload *w,
			    struct ks_buf *out)
{
	struct ks_buf why = KS_BUF_INIT;
	if (!ks_assertions_check_why(t->cls, w->name + strlen(KS_ASSERT_PREFIX), &why) && why.len)
		ks_buf_addf(out, ": %s", ks_buf_str(&why));
	ks_buf_release(&why);
}

static void abi_text(const struct ks_llm_context_opts *o, const char *flavour, struct ks_buf *out)
{
	struct ks_buf abi = KS_BUF_INIT;
	ks_abi_describe(o->be->name, o->task, flavour, &abi);
	if (!strchr(ks_buf_str(&abi), '\n'))
		ks_buf_addf(out, "Entry point (keep exactly this prototype):\n```%s\n%s\n```\n",
			    flavour, ks_buf_str(&abi));
	else
		ks_buf_addf(out, "The kernel file (backend %s, flavour %s; what `ksearch tasks show %s "
				 "--backend %s` prints):\n%s",
			    o->be->name, flavour, o->task->name, o->be->name, ks_buf_str(&abi));
	ks_buf_release(&abi);
}

/* an input's values in words: "x = 2.5 everywhere", "x from normal(0, 80)" */
static void init_words(const char *name, const char *init, struct ks_buf *out)
{
	char *end;
	strtod(init, &end);
	int number = end != init && !end[strspn(end, " ")];
	ks_buf_addf(out, number ? "%s = %s everywhere" : "%s from %s", name, init);
}

/* "- large-logits (rows=67 cols=1000; x from normal(0, 80))": a workload's params and the
 * inputs it draws otherwise than the task's tensors say, the class's mark left out */
static void workload_line(const struct ks_task *t, const struct ks_workload *w, struct ks_buf *out)
{
	struct ks_workload bare = *w;
	bare.name = NULL;
	ks_buf_adds(out, "\n- ");
	if (w->name)
		ks_buf_addf(out, "%s (", w->name + (is_class_check(w) ? strlen(KS_ASSERT_PREFIX) : 0));
	ks_workload_label(t, &bare, out);
	for (int i = 0, n = 0; w->init && i < t->ntensors; i++)
		if (w->init[i]) {
			ks_buf_adds(out, n++ ? ", " : "; ");
			init_words(t->tensors[i].name, w->init[i], out);
		}
	if (w->name)
		ks_buf_adds(out, ")");
}

/* the same params and inputs: a class's check that repeats one of the task's own */
static int same_check(const struct ks_task *t, const struct ks_workload *a,
		      const struct ks_workload *b)
{
	for (int i = 0; i < t->nparams; i++)
		if (a->values[i] != b->values[i])
			return 0;
	for (int i = 0; i < t->ntensors; i++) {
		const char *x = a->init ? a->init[i] : NULL, *y = b->init ? b->init[i] : NULL;
		if ((x || y) && (!x || !y || strcmp(x, y)))
			return 0;
	}
	return 1;
}

/* the task's checks, then those its class adds (why each exists; none that repeats one of
 * the task's), in plain words */
static void checks_text(const struct ks_llm_context_opts *o, struct ks_buf *out)
{
	const struct ks_task *t = o->task;
	for (int cls = 0, shown = 0; cls < 2; cls++) {
		for (int i = 0; i < t->nchecks; i++) {
			const struct ks_workload *w = &t->checks[i];
			int dup = 0;
			for (int k = 0; cls && k < t->nchecks; k++)
				dup |= !is_class_check(&t->checks[k]) && same_check(t, w, &t->checks[k]);
			if (is_class_check(w) != cls || dup ||
			    !ks_workload_for_backend(w, o->be->name))
				continue;
			if (cls && !shown++)
				ks_buf_addf(out, "\nChecks every %s kernel gets (from the class's "
						 "assertions), which must pass too:",
					    t->cls);
			workload_line(t, w, out);
			if (cls)
				class_check_why(t, w, out);
		}
	}
}

static void workloads_text(const struct ks_llm_context_opts *o, struct ks_buf *out)
{
	const struct ks_task *t = o->task;
	ks_buf_adds(out, "Timed workloads (the score is the geometric-mean speedup over these):");
	for (int i = 0, k = 0; i < t->nworkloads; i++) {
		const struct ks_workload *w = &t->workloads[i];
		if (ks_workload_for_backend(w, o->be->name) &&
		    ks_eval_workload_selected(o->workloads, k++))
			workload_line(t, w, out);
	}
	ks_buf_adds(out, "\nCorrectness checks (must pass, not timed):");
	checks_text(o, out);
}

/* What PASSED needs (ks_compare_tensors), in the words the feedback uses: both bounds, on
 * every output, seed, workload and check */
static void tolerance_text(const struct ks_task *t, const struct ks_eval_opts *ev,
			   struct ks_buf *out)
{
	ks_buf_addf(out, "\nTolerance (what PASSED needs, for every output on every workload and "
			 "check, each run on %d input seeds): every element within atol + rtol * "
			 "|reference| (atol %g, rtol %g), and the relative L2 error ||out - reference|| "
			 "/ max(||reference||, atol * sqrt(elements)) at most l2 (%g); NaN or Inf where "
			 "the reference is finite never passes.  The feedback gives the tolerance used: "
			 "the worst element's error and the L2 error as shares of their bounds "
			 "(elementwise, L2), both at most 1 to pass.\n",
		    ev->nseeds, t->atol, t->rtol, t->l2);
}

/* What every speedup is against: the starting kernel itself, or another file of the task
 * (MLX's own op), shown when it is a few lines */
static void baseline_text(const struct ks_llm_context_opts *o, const char *start_file,
			  struct ks_buf *out)
{
	char file[64], path[PATH_MAX + 80];
	snprintf(file, sizeof(file), "baseline.%s", o->be->ext);
	if (!strcmp(start_file, file)) {
		ks_buf_addf(out, "the task's %s, which is also the starting kernel (the parent of the "
				 "first action): 1.0x by definition",
			    file);
		return;
	}
	ks_buf_addf(out, "the task's %s (%s), not the starting kernel %s", file,
		    ks_backend_baseline_label(o->be), start_file);
	struct ks_buf src = KS_BUF_INIT;
	snprintf(path, sizeof(path), "%s/%s", o->task->dir, file);
	if (!ks_kernel_source_read(path, KS_LLM_BASELINE_SHOWN, &src, NULL))
		ks_buf_addf(out, ":\n```\n%s%s```\n", ks_buf_str(&src),
			    src.len && src.data[src.len - 1] == '\n' ? "" : "\n");
	ks_buf_release(&src);
}

/* How a kernel is scored: the baseline, how a time is measured (the run's timing options,
 * docs/evaluation.md "Timing"), how times become the score, and which figures a run reports */
static void scoring_text(const struct ks_llm_context_opts *o, const struct ks_eval_opts *ev,
			 const char *start_file, struct ks_buf *out)
{
	ks_buf_adds(out, "\n\nHow a kernel is scored: on each timed workload it runs beside the "
			 "baseline, on the same inputs, in the same run.  The baseline is ");
	baseline_text(o, start_file, out);
	ks_buf_addf(out, "%sA time is the median of repeated calls: %d untimed warm-up calls, then "
			 "at least %d calls and %.2g s",
		    out->len && out->data[out->len - 1] == '\n' ? "" : ".  ", ev->warmup,
		    ev->min_reps, ev->min_time_s);
	if (ev->rep_ci_rel > 0)
		ks_buf_addf(out, ", fewer seconds once %d calls or more put the median within "
				 "+-%.0f%% (95%% interval)",
			    ev->rep_ci_min_reps, ev->rep_ci_rel * 100);
	ks_buf_adds(out, "; the spread shown with a time (+-N%) is the interquartile range of "
			 "its calls as a share of the median.  On this backend ");
	ks_backend_timing_text(o->be, out);
	ks_buf_adds(out, ".  Speedup = the baseline's median / the "
			 "kernel's median; the score is the geometric mean of the speedups over the "
			 "timed workloads.");
	if (ev->reuse_baseline)
		ks_buf_adds(out, "  The baseline is timed once per workload in a run, beside the "
				 "first kernel timed, and every kernel is compared with those times.");
	const struct ks_task_library *lib = ks_task_library_for(o->task, o->be->name);
	if (lib)
		ks_buf_addf(out, "  %s (library.%s) is timed beside the baseline and shown, not "
				 "scored.",
			    lib->name, o->be->ext);
	ks_buf_adds(out, "  At the end of the run its best kernels are timed again, in longer "
			 "blocks interleaved with the baseline; the run reports those times.");
}

/* 1 when a README heading line (n bytes) is about the repository's template or kernel files */
static int about_files(const char *l, size_t n)
{
	char h[256];
	snprintf(h, sizeof(h), "%.*s", (int)n, l);
	return strcasestr(h, "template") || strcasestr(h, "kernel");
}

/* The task's README as the model gets it: its sections on the repository's template and
 * kernel files left out (a model behind an API cannot open them; the kernels it needs are
 * in the prompt), and a word that the paths left in name files not shown (a real model's
 * finding: "pointers a model cannot follow") */
static void readme_text(const char *readme, struct ks_buf *out)
{
	struct ks_buf kept = KS_BUF_INIT;
	int skip = 0, fenced = 0, dropped = 0;
	for (const char *l = readme; *l;) {
		size_t n = strcspn(l, "\n");
		if (!strncmp(l, "```", 3))
			fenced = !fenced;
		if (!fenced && !strncmp(l, "## ", 3))
			dropped += skip = about_files(l, n);
		if (!skip) {
			ks_buf_add(&kept, l, n);
			ks_buf_adds(&kept, "\n");
		}
		l += n + (l[n] == '\n');
	}
	const char *k = ks_buf_str(&kept);
	ks_llm_add_demoted(out, k, 2);
	if (dropped || strstr(k, "docs/") || strstr(k, "tests/") || strstr(k, "templates/"))
		ks_buf_addf(out, "\n(This README is the task's file in ksearch's repository:%s the "
				 "paths it names (docs/, tests/, templates/) are files you are not "
				 "shown; everything you need is in this prompt.)\n",
			    dropped ? " its sections on the template and kernel files are left out;" : "");
	ks_buf_release(&kept);
}

/* name, ABI, tensors, tolerance, the workloads searched for and the checks, README */
void ks_llm_task_text(const struct ks_llm_context_opts *o, const char *flavour,
		      const struct ks_eval_opts *ev, const char *start_file, struct ks_buf *out)
{
	const struct ks_task *t = o->task;
	ks_buf_addf(out, "%s (class %s): %s\n\n", t->name, t->cls ? t->cls : "?",
		    t->summary ? t->summary : "");
	abi_text(o, flavour, out);
	ks_buf_adds(out, "Tensors:");
	for (int i = 0; i < t->ntensors; i++) {
		const struct ks_tensor_decl *d = &t->tensors[i];
		ks_buf_addf(out, "%s %s %s [", i ? ";" : "", d->is_output ? "output" : "input",
			    d->name);
		for (int k = 0; k < d->ndim; k++)
			ks_buf_addf(out, "%s%s", k ? ", " : "", d->shape[k]);
		ks_buf_addf(out, "] %s", ks_dtype_name(d->dtype));
		if (d->init) {
			ks_buf_adds(out, ", ");
			init_words("values", d->init, out);
		}
	}
	tolerance_text(t, ev, out);
	workloads_text(o, out);
	scoring_text(o, ev, start_file, out);
	if (t->readme) {
		ks_buf_adds(out, "\n\nThe math (the task's README):\n");
		readme_text(t->readme, out);
	} else {
		ks_buf_adds(out, "\n");
	}
}
