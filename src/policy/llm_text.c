/* The text the llm policy shows the model (llm_text.h). */
#include "policy/llm_text.h"

#include <stdio.h>
#include <string.h>

void ks_llm_task_text(const struct ks_policy_env *env, struct ks_buf *out)
{
	const struct ks_task *t = env->task;
	struct ks_buf proto = KS_BUF_INIT;
	ks_task_prototype(t, env->be->lang, &proto);
	ks_buf_addf(out, "%s (class %s): %s\n\nEntry point (keep exactly this prototype):\n```%s\n%s\n```\n",
		    t->name, t->cls ? t->cls : "?", t->summary ? t->summary : "", env->be->lang,
		    ks_buf_str(&proto));
	ks_buf_release(&proto);
	ks_buf_adds(out, "Tensors:");
	for (int i = 0; i < t->ntensors; i++) {
		const struct ks_tensor_decl *d = &t->tensors[i];
		ks_buf_addf(out, "%s %s %s [", i ? ";" : "", d->is_output ? "output" : "input",
			    d->name);
		for (int k = 0; k < d->ndim; k++)
			ks_buf_addf(out, "%s%s", k ? ", " : "", d->shape[k]);
		ks_buf_addf(out, "] %s", ks_dtype_name(d->dtype));
	}
	ks_buf_addf(out, "\nTolerance: atol %g, rtol %g\n", t->atol, t->rtol);
	ks_buf_adds(out, "Timed workloads (the score is the geometric-mean speedup over these):");
	for (int pass = 0, k = 0; pass < 2; pass++) {
		if (pass)
			ks_buf_adds(out, "\nCorrectness checks (must pass, not timed):");
		int n = pass ? t->nchecks : t->nworkloads;
		for (int i = 0; i < n; i++) {
			const struct ks_workload *w = pass ? &t->checks[i] : &t->workloads[i];
			if (!ks_workload_for_backend(w, env->be->name))
				continue;
			if (!pass && !ks_eval_workload_selected(env->o->eval.workloads, k++))
				continue;
			struct ks_buf l = KS_BUF_INIT;
			ks_workload_label(t, w, &l);
			ks_buf_addf(out, "\n- %s", ks_buf_str(&l));
			ks_buf_release(&l);
		}
	}
	if (t->readme)
		ks_buf_addf(out, "\n\nThe math (the task's README):\n%s", t->readme);
	ks_buf_adds(out, "\n");
}

void ks_llm_tree_text(const struct ks_world *w, int full, struct ks_buf *out)
{
	if (full && w->kernel_summary)
		ks_buf_addf(out, "Kernel summary: %s\n", w->kernel_summary);
	for (int i = 0; i < w->nnodes; i++) {
		const struct ks_node *n = ks_world_node(w, i);
		if (!n)
			continue;
		if (!full && i != w->root && n->status != KS_NODE_OPEN && n->candidate < 0)
			continue;
		/* the model's own ids when it gave them (K-Search's "a1"), so its scripts can
		 * name the nodes as it knows them */
		char id[64], parent[64];
		ks_world_node_ref(w, n->id, id, sizeof(id));
		if (n->parent >= 0)
			ks_world_node_ref(w, n->parent, parent, sizeof(parent));
		else
			snprintf(parent, sizeof(parent), "none");
		ks_buf_addf(out, "[%s] parent %s, %s: %s | rating %.1f, confidence %.2f, difficulty %d, "
				 "impacts mem %.0f / regs %.0f / hw %.0f | attempts %d, failures %d",
			    id, parent, ks_node_status_name(n->status), n->title ? n->title : "",
			    n->rating, n->confidence, n->difficulty,
			    n->impacts[KS_IMPACT_MEMORY_BANDWIDTH].score,
			    n->impacts[KS_IMPACT_REGISTER_PRESSURE].score,
			    n->impacts[KS_IMPACT_COMPUTE_HW_FIT].score, n->attempts, n->failures);
		if (n->candidate >= 0)
			ks_buf_addf(out, " | measured: candidate %ld, %.3fx the baseline%s", n->candidate,
				    n->score, n->regression ? " (regressed vs its base)" : "");
		if (n->close_reason)
			ks_buf_addf(out, " | closed: %s", n->close_reason);
		if (full && n->description && n->description[0])
			ks_buf_addf(out, "\n    %s", n->description);
		ks_buf_adds(out, "\n");
	}
}

void ks_llm_node_text(const struct ks_world *w, int id, struct ks_buf *out)
{
	const struct ks_node *n = ks_world_node(w, id);
	if (!n)
		return;
	ks_buf_addf(out, "%s\n%s\n(difficulty %d, rating %.1f, confidence %.2f)\n",
		    n->title ? n->title : "", n->description ? n->description : "", n->difficulty,
		    n->rating, n->confidence);
}

void ks_llm_feedback_text(const struct ks_eval_result *r, struct ks_buf *out)
{
	ks_buf_addf(out, "status %s", ks_status_name(r->status));
	if (r->status == KS_STATUS_PASSED)
		ks_buf_addf(out, ", %.3fx the baseline (geometric mean)", r->speedup);
	ks_buf_adds(out, "\n");
	if (r->status == KS_STATUS_COMPILE_ERROR && r->compile_log)
		ks_buf_addf(out, "compiler output:\n%.4000s\n", r->compile_log);
	for (int l = 0; l < 2; l++) {
		const struct ks_wl_result *list = l ? r->checks : r->workloads;
		int n = l ? r->nchecks : r->nworkloads;
		for (int i = 0; i < n; i++) {
			const struct ks_wl_result *x = &list[i];
			ks_buf_addf(out, "- %s%s: %s", l ? "check " : "", x->label ? x->label : "?",
				    ks_status_name(x->status));
			if (x->median_us > 0)
				ks_buf_addf(out, ", %.2f us (baseline %.2f us, %.2fx), %.1f GB/s, %.1f GFLOP/s",
					    x->median_us, x->baseline_us, x->speedup, x->gbps, x->gflops);
			if (x->roofline_pct > 0)
				ks_buf_addf(out, ", %.0f%% of the roofline", x->roofline_pct);
			if (x->status != KS_STATUS_PASSED || x->max_abs_err > 0)
				ks_buf_addf(out, ", max abs err %.3g, max rel err %.3g", x->max_abs_err,
					    x->max_rel_err);
			if (x->status != KS_STATUS_PASSED && x->log && x->log[0])
				ks_buf_addf(out, "\n  log: %.*s", KS_LLM_FEEDBACK_LOG, x->log);
			ks_buf_adds(out, "\n");
		}
	}
}
