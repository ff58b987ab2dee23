/* The text the model-driven policies show the model about the run (llm_text.h). */
#include "policy/llm_text.h"

#include "ksearch/knowledge.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* head, then text with each of its line breaks followed by indent */
static void add_indented(struct ks_buf *out, const char *head, const char *text,
			 const char *indent)
{
	ks_buf_adds(out, head);
	for (const char *l = text; *l;) {
		size_t n = strcspn(l, "\n");
		ks_buf_add(out, l, n);
		l += n;
		if (*l && *++l)
			ks_buf_adds(out, indent);
	}
}

/* text, or its first lines up to max bytes and how much was left out: a log cut mid-line
 * reads as a different message */
static void add_clipped(struct ks_buf *out, const char *text, size_t max)
{
	size_t len = strlen(text);
	if (len <= max) {
		ks_buf_add(out, text, len);
		return;
	}
	size_t cut = max;
	while (cut > 0 && text[cut - 1] != '\n')
		cut--;
	if (cut == 0) /* one long line: at a word */
		for (cut = max; cut > 0 && text[cut - 1] != ' '; cut--)
			;
	if (cut == 0)
		cut = max;
	ks_buf_add(out, text, cut);
	ks_buf_addf(out, "%s[%zu more bytes of this log not shown]", text[cut - 1] == '\n' ? "" : " ",
		    len - cut);
}

/* what the model expected of a node when it proposed it */
static void node_expectation(const struct ks_node *n, struct ks_buf *out)
{
	ks_buf_adds(out, "\n    expected: ");
	if (n->expected_factor > 0)
		ks_buf_addf(out, "%.2fx the baseline%s", n->expected_factor, n->rationale ? "; " : "");
	if (n->rationale)
		ks_buf_addf(out, "%s", n->rationale);
}

/* Node n measured a lower speedup than the best kernel above it on its path: say which
 * kernel that is and what the per-workload rule says of the two (vs), never "below" on the
 * speedup alone, which the spreads may not support. */
static void path_best_text(const struct ks_world *w, const struct ks_node *n,
			   const struct ks_llm_versus *vs, struct ks_buf *out)
{
	int base = n->parent >= 0 ? ks_world_base(w, n->parent) : -1;
	const struct ks_node *b = base >= 0 ? ks_world_node(w, base) : NULL;
	if (!b || b->candidate < 0)
		return;
	char ref[64];
	ks_world_node_ref(w, base, ref, sizeof(ref));
	ks_buf_addf(out, " (the best kernel above it on its path: node %s's candidate %ld, %.3fx; ",
		    ref, b->candidate, b->score);
	size_t len = out->len;
	if (vs && vs->text)
		vs->text(vs->ctx, n->candidate, b->candidate, out);
	if (out->len == len)
		ks_buf_adds(out, "no per-workload timings to compare them");
	ks_buf_adds(out, ")");
}

/* what node n's measured kernel does that its title may not say, on a line of its own */
static void measured_kernel(const struct ks_node *n, const struct ks_llm_versus *vs,
			    struct ks_buf *out)
{
	struct ks_buf k = KS_BUF_INIT;
	vs->kernel(vs->ctx, n->id, n->candidate, &k);
	if (k.len)
		ks_buf_addf(out, "\n    measured kernel: %s", ks_buf_str(&k));
	ks_buf_release(&k);
}

void ks_llm_tree_text(const struct ks_world *w, int full, const struct ks_llm_versus *vs,
		      struct ks_buf *out)
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
			ks_buf_addf(out, " | measured: candidate %ld, %.3fx the baseline", n->candidate,
				    n->score);
		if (n->candidate >= 0 && n->regression)
			path_best_text(w, n, vs, out);
		if (n->close_reason)
			ks_buf_addf(out, " | closed: %s", n->close_reason);
		if (n->candidate >= 0 && vs && vs->kernel)
			measured_kernel(n, vs, out);
		if (full && n->description && n->description[0])
			ks_buf_addf(out, "\n    %s", n->description);
		if (full && (n->expected_factor > 0 || n->rationale))
			node_expectation(n, out);
		if (full && n->reflection)
			add_indented(out, "\n    notes: ", n->reflection, "\n           ");
		ks_buf_adds(out, "\n");
	}
}

void ks_llm_node_text(const struct ks_world *w, int id, struct ks_buf *out)
{
	const struct ks_node *n = ks_world_node(w, id);
	if (!n)
		return;
	ks_buf_addf(out, "%s\n%s\n(difficulty %d, rating %.1f, confidence %.2f)", n->title ? n->title : "",
		    n->description ? n->description : "", n->difficulty, n->rating, n->confidence);
	if (n->expected_factor > 0 || n->rationale)
		node_expectation(n, out);
	if (n->reflection)
		add_indented(out, "\nnotes from earlier cycles on it:\n  ", n->reflection, "\n  ");
	ks_buf_adds(out, "\n");
}

/* a workload's or check's label as the task section lists it (a class's check without the
 * internal mark that sets it apart from the task's own) */
static const char *label_of(const struct ks_wl_result *x)
{
	const char *l = x->label ? x->label : "?";
	size_t n = strlen(KS_ASSERT_PREFIX);
	return strncmp(l, KS_ASSERT_PREFIX, n) ? l : l + n;
}

/* the word before a label: none for a workload, "check " for the task's own checks, "class
 * check " for its class's (the two may share a name: matmul's long-k) */
static const char *kind_of(const struct ks_wl_result *x, int is_check)
{
	return !is_check ? "" : x->label && label_of(x) != x->label ? "class check " : "check ";
}

/* the shares of the tolerance a workload used, as the Task section explains them */
static void tolerance_used(const struct ks_wl_result *x, struct ks_buf *out)
{
	const double v[2] = {x->tol_elem, x->tol_l2};
	ks_buf_adds(out, ", tolerance used");
	for (int i = 0; i < 2; i++) {
		if (isinf(v[i]))
			ks_buf_adds(out, " inf");
		else if (isnan(v[i]))
			ks_buf_adds(out, " ?");
		else
			ks_buf_addf(out, " %.2g", v[i]);
		ks_buf_adds(out, i ? " L2" : " elementwise,");
	}
}

void ks_llm_feedback_text(const struct ks_eval_result *r, struct ks_buf *out)
{
	ks_buf_addf(out, "status %s", ks_status_name(r->status));
	if (r->status == KS_STATUS_PASSED)
		ks_buf_addf(out, ", %.3fx the baseline (geometric mean)", r->speedup);
	ks_buf_adds(out, "\n");
	if (r->status == KS_STATUS_COMPILE_ERROR && r->compile_log) {
		ks_buf_adds(out, "compiler output:\n");
		add_clipped(out, r->compile_log, KS_LLM_COMPILE_LOG);
		ks_buf_adds(out, "\n");
	}
	for (int l = 0; l < 2; l++) {
		const struct ks_wl_result *list = l ? r->checks : r->workloads;
		int n = l ? r->nchecks : r->nworkloads;
		for (int i = 0; i < n; i++) {
			const struct ks_wl_result *x = &list[i];
			ks_buf_addf(out, "- %s%s: %s", kind_of(x, l), label_of(x),
				    ks_status_name(x->status));
			if (x->median_us > 0)
				ks_buf_addf(out, ", %.2f us (baseline %.2f us, %.2fx), %.1f GB/s, %.1f GFLOP/s",
					    x->median_us, x->baseline_us, x->speedup, x->gbps, x->gflops);
			if (x->roofline_pct > 0)
				ks_buf_addf(out, ", %.0f%% of the roofline%s", x->roofline_pct,
					    x->roofline_pct > 100 ? " (above it: the data stayed in "
								    "cache, or the measured roof is "
								    "low)"
								  : "");
			if (x->status != KS_STATUS_PASSED || x->max_abs_err > 0)
				ks_buf_addf(out, ", max abs err %.3g, max rel err %.3g", x->max_abs_err,
					    x->max_rel_err);
			if (x->tol_elem > 0 || x->tol_l2 > 0)
				tolerance_used(x, out);
			/* a PASSED workload's log too: a block timed again, a figure the
			 * machine's load set (docs/evaluation.md) */
			if (x->log && x->log[0]) {
				ks_buf_adds(out, "\n  log: ");
				add_clipped(out, x->log, KS_LLM_FEEDBACK_LOG);
			}
			ks_buf_adds(out, "\n");
		}
	}
}

void ks_llm_attempt_text(long candidate, int status, int passed, double score,
			 const struct ks_eval_result *r, struct ks_buf *out)
{
	ks_buf_addf(out, "candidate %ld %s", candidate, ks_status_name((enum ks_status)status));
	if (passed)
		ks_buf_addf(out, ", %.3fx the baseline (geometric mean)", score);
	ks_buf_adds(out, "\n   ");
	if (!r) {
		ks_buf_adds(out, "(measured before the resume: no per-workload figures)\n");
		return;
	}
	if (r->status == KS_STATUS_COMPILE_ERROR) {
		ks_buf_adds(out, "did not compile\n");
		return;
	}
	int shown = 0;
	for (int l = 0; l < 2; l++) {
		const struct ks_wl_result *list = l ? r->checks : r->workloads;
		for (int i = 0; i < (l ? r->nchecks : r->nworkloads); i++) {
			const struct ks_wl_result *x = &list[i];
			if (x->status != KS_STATUS_PASSED) {
				ks_buf_addf(out, "%s%s%s: %s, max abs err %.3g", shown++ ? "; " : "",
					    kind_of(x, l), label_of(x),
					    ks_status_name(x->status), x->max_abs_err);
				goto end; /* the first failure says enough in a history line */
			}
			if (!l && x->median_us > 0)
				ks_buf_addf(out, "%s%s %.2fx (%.2f us ±%.0f%%)", shown++ ? "; " : "",
					    label_of(x), x->speedup, x->median_us,
					    x->spread_pct);
		}
	}
	if (!shown)
		ks_buf_adds(out, "no timings");
end:
	ks_buf_adds(out, "\n");
}
