/* The run-independent part of every prompt (llm_context.h). */
#include "policy/llm_context.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knowledge/conceptmap.h"
#include "ksearch/eval.h"
#include "ksearch/llm.h"
#include "ksearch/run_opts.h"
#include "ksearch/store.h"
#include "ksearch/template.h"
#include "util/fs.h"

/* md into out with its headings levels down ("## x" -> "#### x" for 2), so a document
 * shown inside a prompt section does not start sections of the prompt; fenced code (C's
 * #include) is left alone */
void ks_llm_add_demoted(struct ks_buf *out, const char *md, int levels)
{
	int fenced = 0;
	for (const char *l = md; *l;) {
		size_t n = strcspn(l, "\n");
		if (!strncmp(l, "```", 3))
			fenced = !fenced;
		if (!fenced && l[0] == '#' && l[strspn(l, "#")] == ' ')
			ks_buf_addf(out, "%.*s", levels, "####");
		ks_buf_add(out, l, n);
		ks_buf_adds(out, "\n");
		l += n + (l[n] == '\n');
	}
}

/* the flavour in force: the one asked for, else the one this machine's runtime compiles */
static int flavour_pick(const struct ks_llm_context_opts *o, char *out, size_t n,
			struct ks_error *e)
{
	const char *lang = ks_backend_abi(o->be)->lang, *f = o->flavour;
	if (!f)
		f = ks_backend_flavour(o->be);
	if (!f) /* a runtime that compiles none here (MLX's CPU build): its first language */
		f = "cuda";
	int known = ks_abi_find(f) != NULL;
	if (!known || (!o->be->flavour && strcmp(f, lang)))
		return ks_error_set(e, KS_EINVAL, "flavour '%s': backend '%s' writes %s kernels%s", f,
				    o->be->name, o->be->flavour ? "cuda or metal" : lang,
				    o->be->flavour ? "" : " only");
	snprintf(out, n, "%s", f);
	return 0;
}

/* the source the outputs are compared against: reference.c, else reference.py */
static int reference_text(const struct ks_task *t, struct ks_buf *out, struct ks_error *e)
{
	static const char *const files[][2] = {{"reference.c", "c"}, {"reference.py", "python"}};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", t->dir, files[i][0]);
		if (!ks_path_exists(path))
			continue;
		struct ks_buf src = KS_BUF_INIT;
		int rc = ks_kernel_source_read(path, KS_LLM_EXPERT_MAX, &src, e);
		if (!rc)
			ks_buf_addf(out, "%s (the outputs are compared against it; computed in higher "
					 "precision where it says so):\n```%s\n%s\n```\n",
				    files[i][0], files[i][1], ks_buf_str(&src));
		ks_buf_release(&src);
		return rc ? ks_error_wrap(e, "the reference of task '%s'", t->name) : 0;
	}
	return ks_buf_adds(out, "(the task has no reference source to show)\n");
}

/* one "name value" fact when the spec has the field */
static void fact(const struct ks_spec *s, const char *field, const char *fmt, double scale,
		 struct ks_buf *out)
{
	double v;
	if (ks_spec_field(s, field, &v) == 0 && isfinite(v) && v > 0)
		ks_buf_addf(out, fmt, v / scale);
}

static void facts_text(const struct ks_llm_context_opts *o, const struct ks_spec *s,
		       struct ks_buf *out)
{
	int host = ks_backend_on_host(o->be);
	ks_buf_addf(out, "%s: %s (%s).", host ? "The kernels run on this CPU" : "The kernels run on",
		    s->title ? s->title : s->name, s->arch ? s->arch : "?");
	fact(s, "cores", host ? " %.0f cores;" : " %.0f SMs / cores;", 1, out);
	fact(s, "simd_width", host ? " %.0f f32 SIMD lanes;" : " SIMD width %.0f;", 1, out);
	fact(s, "max_threads_per_group", host ? "" : " up to %.0f threads per group;", 1, out);
	fact(s, "smem_per_block", host ? "" : " %.0f KiB shared memory per group;", 1024, out);
	fact(s, "smem_per_block_optin", host ? "" : " %.0f KiB with opt-in;", 1024, out);
	fact(s, "l1_bytes", " L1 %.0f KiB;", 1024, out);
	fact(s, "l2_bytes", host ? " L2 %.0f KiB per core;" : " L2 %.0f KiB;", 1024, out);
	fact(s, "llc_bytes", " last-level cache %.0f MiB;", 1 << 20, out);
	fact(s, "mem_bandwidth_gbps", " memory bandwidth %.1f GB/s;", 1, out);
	fact(s, "peak_gflops_f32", " f32 peak %.0f GFLOP/s;", 1, out);
	if (host) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		if (o->threads > 0)
			ks_buf_addf(out, " OpenMP threads in force: %d (--threads).", o->threads);
		else
			ks_buf_addf(out, " OpenMP threads in force: the default, one per online core "
					 "(%ld here; --threads sets it).",
				    online);
		/* a real model read "one per core" as advice to thread on a loaded machine */
		ks_buf_adds(out, " The threads share the cores with whatever else runs: when the load "
				 "average reaches the core count (below: how far the measurements can be "
				 "trusted), a thread that waits for a CPU holds up its whole team at every "
				 "barrier.");
	}
	ks_buf_adds(out, "\n\n");
}

/* when and under what load a measured roof was measured: the load its probe recorded
 * (ks_spec_measure), never the load now, which says nothing about the probe */
static void roof_when(const struct ks_spec *s, const struct ks_spec_value *x, struct ks_buf *out)
{
	char text[320];
	ks_spec_measure_text(&x->measure, 0, text, sizeof(text));
	if (text[0])
		ks_buf_addf(out, " (%s)", text);
	else if (s->path)
		ks_buf_addf(out, " (when the spec file %s was written; the load then is not known)",
			    s->path);
	else
		ks_buf_adds(out, " (by ksearch's micro-benchmarks; the load then was not recorded)");
}

/* A CPU's spec in its own terms: where the facts above come from, the instruction sets,
 * and for the measured roofs when and under what load they were measured (a roof measured
 * on a loaded machine is a floor of what the hardware does, not a ceiling).  The spec's
 * GPU-shaped fields (threads per group, shared memory per block) have no place here. */
static void host_spec_text(const struct ks_spec *s, struct ks_buf *out)
{
	double v;
	int nmeasured = 0;
	if (ks_spec_field(s, "clock_mhz", &v) == 0 && isfinite(v) && v > 0)
		ks_buf_addf(out, "Clock %.0f MHz (as the system reports it, often the base clock: "
				 "cores may run faster, as a measured FMA rate can show). ",
			    v);
	if (ks_spec_field(s, "mem_bytes", &v) == 0 && isfinite(v) && v > 0)
		ks_buf_addf(out, "Memory %.1f GiB. ", v / (1 << 30));
	for (int i = 0; i < s->nvalues; i++)
		if (!strcmp(s->values[i].name, "features") && s->values[i].text)
			ks_buf_addf(out, "Instruction sets: %s.", s->values[i].text);
	ks_buf_adds(out, "\n");
	for (int i = 0; i < s->nvalues; i++) {
		const struct ks_spec_value *x = &s->values[i];
		if (!x->basis || strcmp(x->basis, "measured"))
			continue;
		if (!nmeasured++)
			ks_buf_adds(out, "Memory bandwidth and f32 peak are measured, not the "
					 "hardware's limits (a roof measured under load is low: kernels "
					 "timed later may measure above it); \"% of the roofline\" in the "
					 "feedback is against them. When and under what load each was "
					 "measured:");
		ks_buf_addf(out, "\n- %s: %s", x->name, x->note ? x->note : x->source);
		roof_when(s, x, out);
	}
	ks_buf_adds(out, nmeasured ? "\n" : "");
}

/* the target's facts, then its spec: a CPU's in its own terms, a device's as written
 * (sources and units) with its hard limits */
static void hardware_text(const struct ks_llm_context_opts *o, struct ks_buf *out)
{
	if (!o->spec) {
		ks_buf_addf(out, "(no spec of the %s is known here: pass --spec NAME to name one)\n",
			    ks_backend_on_host(o->be) ? "CPU" : "device");
		return;
	}
	facts_text(o, o->spec, out);
	if (ks_backend_on_host(o->be)) {
		host_spec_text(o->spec, out);
		return;
	}
	ks_spec_to_text(o->spec, out);
	ks_buf_adds(out, "Respect these limits: a kernel that needs more shared/threadgroup "
			 "memory or threads per group than listed does not run.\n");
}

/* template i before j: rated higher, the shorter on ties */
static int expert_before(const struct ks_template *i, const struct ks_template *j)
{
	return i->rating > j->rating || (i->rating == j->rating && i->source_len < j->source_len);
}

/* The CUDA kernel shown: the task's highest-rated CUDA template (the shorter on ties) that
 * the prompt holds whole.  Those rated as high or higher that it cannot hold, or that lost
 * the tie, are named with their summaries, so the prompt says why the one shown was chosen
 * (the README may call another the fastest).  Nothing when the task has no CUDA template. */
static void expert_kernel(const struct ks_task *t, struct ks_buf *head, struct ks_buf *src)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/templates/cuda", t->dir);
	struct ks_template **list = NULL;
	int nt = 0, best = -1;
	if (!ks_path_exists(dir) || ks_template_load_dir(dir, &list, &nt, NULL))
		return;
	for (int i = 0; i < nt; i++)
		if (list[i]->source_len <= KS_LLM_EXPERT_MAX && (best < 0 || expert_before(list[i], list[best])))
			best = i;
	if (best >= 0) {
		const char *p = strrchr(list[best]->path, '/');
		ks_buf_addf(head, "### A CUDA kernel of the task: templates/cuda/%s, rated %.0f, the "
				  "highest-rated of its %d CUDA templates that fits in the prompt (expert "
				  "knowledge to carry over, not to copy literally)\n\n",
			    p ? p + 1 : list[best]->path, list[best]->rating, nt);
		ks_buf_add(src, list[best]->source, list[best]->source_len);
	}
	for (int i = 0, n = 0; best >= 0 && i < nt; i++) {
		const struct ks_template *x = list[i];
		if (i == best || x->rating < list[best]->rating)
			continue;
		const char *p = strrchr(x->path, '/');
		ks_buf_addf(head, "%s- %s, rated %.0f, %zu KB: %s%s%s\n",
			    n++ ? "" : "Not shown, though rated as high or higher:\n", p ? p + 1 : x->path,
			    x->rating, (x->source_len + 1023) >> 10,
			    x->source_len > KS_LLM_EXPERT_MAX ? "longer than the prompt shows whole"
							      : "as high, and the one shown is shorter",
			    x->summary ? ". " : "", x->summary ? x->summary : "");
	}
	if (head->len && strstr(ks_buf_str(head), "Not shown"))
		ks_buf_adds(head, "\n");
	ks_template_list_free(list, nt);
}

/* How a CUDA kernel becomes an MLX body of flavour cuda: the same device code, MLX's
 * launch instead of the host's (there is no concept map: the language does not change). */
static const char cuda_body_map[] =
	"From a CUDA kernel to an MLX body of flavour cuda (the device code stays; the launch "
	"changes):\n"
	"- The __global__ function's body becomes the text after `// @mlx body`; MLX writes the "
	"signature (the task's tensors by name, const for inputs) and passes the params and knobs "
	"as constexpr ints.\n"
	"- __device__ helpers, structs and #include-free device code go between `// @mlx "
	"header` and `// @mlx body`.\n"
	"- The host launch <<<grid, block, smem>>> becomes `// @mlx grid:` in THREADS per axis "
	"(blocks x threads per block), `// @mlx threadgroup:` (the block) and `// @mlx "
	"shared_memory:` (dynamic shared memory bytes); host code (cudaFuncSetAttribute, "
	"streams, several launches) has no place: one file is one kernel.\n"
	"- NVRTC compiles it: no <math.h> macros (INFINITY: -__int_as_float(0x7f800000) gives "
	"-inf), __half and __nv_bfloat16 come from cuda_fp16.h / cuda_bf16.h, already included.\n";

/* the CUDA kernel chosen (expert_kernel) and how it carries over to flavour (canon: its
 * concept map) */
static int expert_text(const struct ks_llm_context_opts *o, const char *canon, struct ks_buf *out,
		       struct ks_error *e)
{
	struct ks_buf src = KS_BUF_INIT, head = KS_BUF_INIT;
	expert_kernel(o->task, &head, &src);
	int rc = 0;
	if (!src.len)
		goto out;
	ks_buf_addf(out, "%s```cuda\n%s\n```\n\n", ks_buf_str(&head), ks_buf_str(&src));
	if (!canon) {
		ks_buf_addf(out, "### Its translation to this target\n\n%s\n", cuda_body_map);
		goto out;
	}
	ks_buf_adds(out, "### Its translation to this target\n\n");
	struct ks_translation tr;
	if ((rc = ks_translate(ks_buf_str(&src), canon, o->spec, NULL, &tr, e)))
		goto out;
	/* its patterns' "## " headings would start sections of the prompt */
	struct ks_buf text = KS_BUF_INIT;
	rc = ks_translation_to_text(&tr, &text);
	ks_translation_release(&tr);
	ks_llm_add_demoted(out, ks_buf_str(&text), 2);
	ks_buf_release(&text);
	ks_buf_adds(out, "\n");
out:
	ks_buf_release(&src);
	ks_buf_release(&head);
	return rc;
}

int ks_llm_context_knowledge(const struct ks_llm_context_opts *o, const char *flavour,
			     struct ks_buf *out, struct ks_error *e)
{
	int cuda = ks_backend_translates_cuda(o->be);
	/* a backend translating CUDA writes the flavour's language; the others their own */
	const char *canon = ks_target_canonical(cuda ? flavour : o->be->name);
	int rc;
	if (cuda && canon) {
		ks_buf_adds(out, "### CUDA concepts on this target\n\n");
		if ((rc = ks_conceptmap_text(canon, out, e)))
			return rc;
		ks_buf_adds(out, "\n");
	}
	struct ks_error he = {0};
	struct ks_buf hints = KS_BUF_INIT;
	if (canon && (rc = ks_hints_text(canon, NULL, &hints, &he)) && rc != KS_ENOTFOUND) {
		ks_buf_release(&hints);
		return ks_error_set(e, rc, "%s", he.msg);
	}
	if (hints.len) {
		ks_buf_adds(out, "### Patterns for this target\n\n");
		ks_llm_add_demoted(out, ks_buf_str(&hints), 3);
		ks_buf_adds(out, "\n");
	}
	ks_buf_release(&hints);
	const char *cls = o->task->cls;
	if (cls && ks_assertions_class(cls)) {
		ks_buf_adds(out, "### Properties every candidate must keep\n\n");
		if ((rc = ks_assertions_properties(cls, out)))
			return ks_error_set(e, rc, "assertions for class '%s'", cls);
		ks_buf_adds(out, "Its checks are among the task's correctness checks above.\n");
		ks_buf_adds(out, "\n");
	}
	return cuda ? expert_text(o, canon, out, e) : 0;
}

/* the starting kernel: naive.<flavour>.<ext> where the task has one (a naive custom
 * kernel where the backend's baseline is a library op), else baseline.<ext> */
static int start_read(const struct ks_task *t, const struct ks_backend_i *be, const char *flavour,
		      struct ks_llm_context *c, struct ks_error *e)
{
	char path[PATH_MAX + 80];
	snprintf(c->start_file, sizeof(c->start_file), "naive.%s.%s", flavour, be->ext);
	snprintf(path, sizeof(path), "%s/%s", t->dir, c->start_file);
	if (!ks_path_exists(path)) {
		snprintf(c->start_file, sizeof(c->start_file), "baseline.%s", be->ext);
		snprintf(path, sizeof(path), "%s/%s", t->dir, c->start_file);
	}
	if (ks_kernel_source_read(path, KS_STORE_MAX_SOURCE, &c->start, e))
		return ks_error_wrap(e, "the starting kernel");
	if (!strncmp(c->start_file, "baseline.", 9))
		snprintf(c->start_what, sizeof(c->start_what),
			 "%s of the task: the baseline itself, 1.0x by definition", c->start_file);
	else
		snprintf(c->start_what, sizeof(c->start_what),
			 "%s of the task: a plain, correct kernel to start from, not the baseline "
			 "(baseline.%s, %s) and not timed, so how fast it is against the baseline is "
			 "not known",
			 c->start_file, be->ext, ks_backend_baseline_label(be));
	return ks_buf_adds(&c->start, "");
}

int ks_llm_context_open(struct ks_llm_context *c, const struct ks_llm_context_opts *o,
			struct ks_error *e)
{
	memset(c, 0, sizeof(*c));
	int rc = flavour_pick(o, c->flavour, sizeof(c->flavour), e);
	if (rc)
		return rc;
	c->reply_file = ks_backend_reply_file(o->be);
	c->knob_use = ks_backend_knob_use(o->be);
	if ((rc = reference_text(o->task, &c->reference, e)) ||
	    (rc = start_read(o->task, o->be, c->flavour, c, e)))
		return rc;
	struct ks_run_opts defaults;
	ks_run_opts_init(&defaults);
	ks_llm_task_text(o, c->flavour, o->eval ? o->eval : &defaults.eval, c->start_file, &c->task);
	if (o->level >= KS_CONTEXT_SPEC)
		hardware_text(o, &c->hardware);
	if (o->level == KS_CONTEXT_FULL &&
	    (rc = ks_llm_context_knowledge(o, c->flavour, &c->translation, e)))
		return ks_error_wrap(e, "context");
	if (!c->hardware.len)
		ks_buf_adds(&c->hardware, "(not shown: --context none)");
	/* below --context full the section is left out of the prompts (empty) */
	if (!c->translation.len && o->level == KS_CONTEXT_FULL)
		ks_buf_adds(&c->translation, "(nothing more is known for this target)");
	return 0;
}

void ks_llm_context_want_code(const struct ks_llm_context *c, struct ks_llm_ask *q)
{
	q->want = KS_LLM_WANT_CODE;
	q->lang = c->flavour;
	q->max_code = KS_STORE_MAX_SOURCE;
}

void ks_llm_context_release(struct ks_llm_context *c)
{
	struct ks_buf *b[] = {&c->task, &c->reference, &c->hardware, &c->translation, &c->start};
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		ks_buf_release(b[i]);
}
