/* Reusable assertions on hand-built tasks of each shipped class, and context packs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/knowledge.h"
#include "tap.h"

struct tdesc {
	const char *name;
	enum ks_dtype dt;
	const char *shape[4];
};

/* a task as the loader would build it: params, tensors (inputs first), one workload */
static struct ks_task *make_task(const char *name, const char *cls, const char *const *params,
				 int np, const struct tdesc *tensors, int nt, int ninputs,
				 const double *w0)
{
	struct ks_task *t = calloc(1, sizeof(*t));
	t->name = strdup(name);
	t->cls = strdup(cls);
	t->nparams = np;
	t->params = calloc((size_t)np, sizeof(*t->params));
	for (int i = 0; i < np; i++) {
		t->params[i].name = strdup(params[i]);
		t->params[i].dtype = KS_DT_I32;
	}
	t->ntensors = nt;
	t->ninputs = ninputs;
	t->tensors = calloc((size_t)nt, sizeof(*t->tensors));
	for (int i = 0; i < nt; i++) {
		struct ks_tensor_decl *d = &t->tensors[i];
		d->name = strdup(tensors[i].name);
		d->dtype = tensors[i].dt;
		for (int k = 0; k < 4 && tensors[i].shape[k]; k++)
			d->shape[d->ndim++] = strdup(tensors[i].shape[k]);
		d->is_output = i >= ninputs;
		d->init = d->is_output ? NULL : strdup("normal(0, 1)");
	}
	if (w0) {
		t->nworkloads = 1;
		t->workloads = calloc(1, sizeof(*t->workloads));
		t->workloads[0].values = malloc((size_t)np * sizeof(double));
		memcpy(t->workloads[0].values, w0, (size_t)np * sizeof(double));
	}
	return t;
}

static void free_wl(struct ks_workload *w, int n, int nt)
{
	for (int i = 0; i < n; i++) {
		free(w[i].name);
		free(w[i].values);
		for (int k = 0; w[i].init && k < nt; k++)
			free(w[i].init[k]);
		free(w[i].init);
	}
	free(w);
}

static void free_task(struct ks_task *t)
{
	free(t->name);
	free(t->cls);
	for (int i = 0; i < t->nparams; i++)
		free(t->params[i].name);
	free(t->params);
	for (int i = 0; i < t->ntensors; i++) {
		free(t->tensors[i].name);
		free(t->tensors[i].init);
		for (int k = 0; k < t->tensors[i].ndim; k++)
			free(t->tensors[i].shape[k]);
	}
	free(t->tensors);
	free_wl(t->workloads, t->nworkloads, t->ntensors);
	free_wl(t->checks, t->nchecks, t->ntensors);
	free(t);
}

static const struct ks_workload *check(const struct ks_task *t, const char *name)
{
	for (int i = 0; i < t->nchecks; i++)
		if (!strcmp(t->checks[i].name, name))
			return &t->checks[i];
	return NULL;
}

/* check name has the values want (one per param) and init[i] == inits[i] (NULL: none) */
static void expect(const struct ks_task *t, const char *name, const double *want,
		   const char *const *inits)
{
	const struct ks_workload *w = check(t, name);
	ok(w != NULL, "%s: %s present", t->name, name);
	if (!w)
		return;
	int same = 1;
	for (int i = 0; i < t->nparams; i++)
		same &= w->values[i] == want[i];
	ok(same, "%s: %s values", t->name, name);
	ok(w->backends == NULL && w->line > 0, "%s: %s applies to every backend, has a line",
	   t->name, name);
	for (int i = 0; i < t->ntensors; i++) {
		const char *g = w->init[i], *x = inits ? inits[i] : NULL;
		ok((!g && !x) || (g && x && !strcmp(g, x)), "%s: %s init of %s is %s (got %s)",
		   t->name, name, t->tensors[i].name, x ? x : "default", g ? g : "default");
	}
}

int main(void)
{
	struct ks_error e = {0};
	struct ks_buf skipped = KS_BUF_INIT;
	int added;

	is_str(ks_assertions_class("softmax"), "reduction", "softmax uses reduction");
	is_str(ks_assertions_class("selective_scan"), "scan", "selective_scan uses scan");
	ok(ks_assertions_class("elementwise") == NULL, "no assertions for elementwise");

	/* softmax: class reduction */
	const char *sp[] = {"rows", "cols"};
	struct tdesc st[] = {{"x", KS_DT_F32, {"rows", "cols"}}, {"y", KS_DT_F32, {"rows", "cols"}}};
	double sw[] = {2048, 2048};
	struct ks_task *t = make_task("softmax", "reduction", sp, 2, st, 2, 1, sw);
	ok(ks_assertions_apply_ex(t, &skipped, &added, &e) == 0, "apply reduction: %s", e.msg);
	is_int(added, 8, "eight reduction checks");
	is_int(t->nchecks, 8, "appended to checks");
	expect(t, "assert:large-logits", (double[]){67, 1000}, (const char *[]){"normal(0, 80)", NULL});
	expect(t, "assert:single-column", (double[]){5, 1}, NULL);
	expect(t, "assert:long-prime-row", (double[]){1, 10007}, NULL);
	expect(t, "assert:constant-row", (double[]){4, 1024}, (const char *[]){"2.5", NULL});
	ok(ks_assertions_apply(t, &e) == 0 && t->nchecks == 8, "applying twice adds nothing");
	free_task(t);

	/* a reduction task without 'cols': every check names cols, so all are skipped */
	const char *np1[] = {"n"};
	struct tdesc nt1[] = {{"x", KS_DT_F32, {"n"}}, {"y", KS_DT_F32, {"n"}}};
	t = make_task("sum", "reduction", np1, 1, nt1, 2, 1, (double[]){1000});
	ks_buf_reset(&skipped);
	ok(ks_assertions_apply_ex(t, &skipped, &added, &e) == 0, "apply to a task without cols");
	is_int(added, 0, "nothing added");
	ok(strstr(ks_buf_str(&skipped),
		  "assert:large-logits: skipped: param 'n' has no value in the check or the defaults") !=
		   NULL,
	   "skip reason names the param without a value");
	free_task(t);

	/* matmul */
	const char *mp[] = {"m", "n", "k"};
	struct tdesc mt[] = {{"a", KS_DT_F32, {"m", "k"}}, {"b", KS_DT_F32, {"k", "n"}},
			     {"c", KS_DT_F32, {"m", "n"}}};
	t = make_task("matmul", "matmul", mp, 3, mt, 3, 2, (double[]){512, 512, 512});
	ok(ks_assertions_apply_ex(t, NULL, &added, &e) == 0, "apply matmul");
	is_int(added, 8, "eight matmul checks");
	expect(t, "assert:gemv-m1", (double[]){1, 257, 129}, NULL);
	expect(t, "assert:k1", (double[]){33, 65, 1}, NULL);
	expect(t, "assert:zero-b", (double[]){32, 48, 40}, (const char *[]){NULL, "0", NULL});
	expect(t, "assert:large-values", (double[]){64, 64, 64},
	       (const char *[]){"normal(0, 4)", "normal(0, 4)", NULL});
	free_task(t);

	/* attention: head_dim and causal default to the task's first workload */
	const char *ap[] = {"batch", "heads", "seqlen", "head_dim", "causal"};
	struct tdesc at[] = {{"q", KS_DT_F16, {"batch", "heads", "seqlen", "head_dim"}},
			     {"k", KS_DT_F16, {"batch", "heads", "seqlen", "head_dim"}},
			     {"v", KS_DT_F16, {"batch", "heads", "seqlen", "head_dim"}},
			     {"o", KS_DT_F16, {"batch", "heads", "seqlen", "head_dim"}}};
	t = make_task("attention", "attention", ap, 5, at, 4, 3, (double[]){1, 4, 512, 64, 0});
	ok(ks_assertions_apply_ex(t, NULL, &added, &e) == 0, "apply attention");
	is_int(added, 7, "seven attention checks");
	expect(t, "assert:seqlen-1", (double[]){1, 2, 1, 64, 0}, NULL);
	expect(t, "assert:odd-seqlen-causal", (double[]){1, 2, 129, 64, 1}, NULL);
	expect(t, "assert:long-causal", (double[]){1, 1, 2048, 64, 1}, NULL);
	expect(t, "assert:batched", (double[]){3, 3, 33, 64, 0}, NULL);
	expect(t, "assert:large-scores", (double[]){1, 2, 64, 64, 0},
	       (const char *[]){"normal(0, 8)", "normal(0, 8)", NULL, NULL});
	free_task(t);
	/* an attention task without a causal param and with head_dim fixed by its workload */
	const char *ap2[] = {"batch", "heads", "seqlen", "head_dim"};
	t = make_task("attn-noncausal", "attention", ap2, 4, at, 4, 3, (double[]){2, 8, 256, 128});
	ks_buf_reset(&skipped);
	ok(ks_assertions_apply_ex(t, &skipped, &added, &e) == 0, "apply to non-causal attention");
	is_int(added, 4, "causal checks skipped, four remain");
	ok(check(t, "assert:seqlen-1-causal") == NULL, "seqlen-1-causal requires causal: skipped");
	ok(check(t, "assert:seqlen-1") != NULL, "seqlen-1 (causal: 0) still applies");
	ok(strstr(ks_buf_str(&skipped), "task has no param 'causal'") != NULL, "reason: causal");
	expect(t, "assert:odd-seqlen", (double[]){1, 2, 67, 128}, NULL); /* causal: 0 ignored */
	free_task(t);
	/* the shipped task's ABI, with GQA and kv_seqlen: kv_heads and kv_seqlen default to heads
	 * and seqlen, and the GQA / kv_seqlen checks apply */
	const char *ap3[] = {"batch", "heads", "kv_heads", "seqlen", "kv_seqlen", "head_dim",
			     "causal"};
	struct tdesc at3[] = {{"q", KS_DT_F16, {"batch", "heads", "seqlen", "head_dim"}},
			      {"k", KS_DT_F16, {"batch", "kv_heads", "kv_seqlen", "head_dim"}},
			      {"v", KS_DT_F16, {"batch", "kv_heads", "kv_seqlen", "head_dim"}},
			      {"o", KS_DT_F16, {"batch", "heads", "seqlen", "head_dim"}}};
	t = make_task("attention-gqa", "attention", ap3, 7, at3, 4, 3,
		      (double[]){1, 32, 8, 2048, 2048, 128, 0});
	ok(ks_assertions_apply_ex(t, NULL, &added, &e) == 0, "apply GQA attention");
	is_int(added, 12, "seven attention checks and five GQA / kv_seqlen ones");
	expect(t, "assert:seqlen-1", (double[]){1, 2, 2, 1, 1, 128, 0}, NULL);
	expect(t, "assert:batched", (double[]){3, 3, 3, 33, 33, 128, 0}, NULL);
	expect(t, "assert:gqa", (double[]){1, 4, 2, 67, 67, 128, 0}, NULL);
	expect(t, "assert:gqa-causal", (double[]){1, 4, 1, 129, 129, 128, 1}, NULL);
	expect(t, "assert:kv-longer-causal", (double[]){1, 2, 2, 40, 150, 128, 1}, NULL);
	expect(t, "assert:kv-shorter-causal", (double[]){1, 2, 2, 150, 40, 128, 1}, NULL);
	free_task(t);

	/* selective scan: dim = min(workload.dim, 64), dstate from the workload */
	const char *cp[] = {"batch", "dim", "seqlen", "dstate"};
	struct tdesc ct[] = {{"u", KS_DT_F16, {"batch", "dim", "seqlen"}},
			     {"delta", KS_DT_F16, {"batch", "dim", "seqlen"}},
			     {"A", KS_DT_F32, {"dim", "dstate"}},
			     {"B", KS_DT_F16, {"batch", "dstate", "seqlen"}},
			     {"C", KS_DT_F16, {"batch", "dstate", "seqlen"}},
			     {"D", KS_DT_F32, {"dim"}},
			     {"z", KS_DT_F16, {"batch", "dim", "seqlen"}},
			     {"delta_bias", KS_DT_F32, {"dim"}},
			     {"y", KS_DT_F16, {"batch", "dim", "seqlen"}}};
	t = make_task("selective_scan", "scan", cp, 4, ct, 9, 8, (double[]){1, 256, 512, 16});
	ok(ks_assertions_apply_ex(t, NULL, &added, &e) == 0, "apply scan");
	is_int(added, 6, "six scan checks");
	expect(t, "assert:seqlen-1", (double[]){1, 64, 1, 16}, NULL);
	expect(t, "assert:odd-batch-dim", (double[]){2, 5, 33, 16}, NULL);
	expect(t, "assert:long-fast-decay", (double[]){1, 4, 4096, 16},
	       (const char *[]){NULL, "normal(6, 1)", "-exp(normal(0.5, 0.5))", NULL, NULL, NULL,
				NULL, NULL, NULL});
	expect(t, "assert:large-inputs", (double[]){1, 64, 128, 16},
	       (const char *[]){"normal(0, 10)", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL});
	free_task(t);
	/* without timed workloads, workload.dstate cannot be resolved: skipped with a reason */
	t = make_task("scan-noworkload", "scan", cp, 4, ct, 9, 8, NULL);
	ks_buf_reset(&skipped);
	ok(ks_assertions_apply_ex(t, &skipped, &added, &e) == 0 && added == 0,
	   "scan task without workloads: everything skipped");
	ok(strstr(ks_buf_str(&skipped), "cannot be evaluated") != NULL, "reason: cannot evaluate");
	free_task(t);

	/* class without assertions: nothing happens */
	t = make_task("relu", "elementwise", np1, 1, nt1, 2, 1, (double[]){10});
	ok(ks_assertions_apply(t, &e) == 0 && t->nchecks == 0, "elementwise: no checks");
	free_task(t);

	/* prose */
	struct ks_buf b = KS_BUF_INIT;
	ok(ks_assertions_prose("attention", &b) == 0, "attention prose");
	ok(strstr(ks_buf_str(&b), "running maximum") && strstr(ks_buf_str(&b), "odd-seqlen-causal"),
	   "prose has properties and checks");
	ks_buf_reset(&b);
	ok(ks_assertions_prose("selective_scan", &b) == 0 &&
		   strstr(ks_buf_str(&b), "(a2*a1, a2*b1 + b2)"),
	   "scan prose states the associative combine");
	is_int(ks_assertions_prose("elementwise", &b), KS_ENOTFOUND, "no prose for elementwise");

	/* context levels */
	struct ks_spec m3;
	ok(ks_spec_load("m3-max", &m3, &e) == 0, "load m3-max");
	ks_buf_reset(&b);
	ok(ks_context_pack(KS_CONTEXT_NONE, "attention", "metal", &m3, NULL, &b, &e) == 0 &&
		   b.len == 0,
	   "none: nothing");
	ok(ks_context_pack(KS_CONTEXT_SPEC, "attention", "metal", &m3, NULL, &b, &e) == 0,
	   "spec level");
	ok(strstr(ks_buf_str(&b), "smem_per_block: 32 KiB") &&
		   !strstr(ks_buf_str(&b), "CUDA concepts on this target"),
	   "spec: the spec only");
	size_t spec_len = b.len;
	ks_buf_reset(&b);
	const char *expert = "__global__ void k(float *x) { __shared__ float t[128][96]; "
			     "t[threadIdx.x][0] = x[0]; __syncthreads(); }\n";
	ok(ks_context_pack(KS_CONTEXT_FULL, "attention", "mlx", &m3, expert, &b, &e) == 0,
	   "full level: %s", e.msg);
	const char *s = ks_buf_str(&b);
	ok(b.len > spec_len, "full is larger than spec");
	ok(strstr(s, "threadgroup_barrier") && strstr(s, "exp2") && strstr(s, "online-softmax") &&
		   strstr(s, "Expert CUDA kernel") && strstr(s, "48 KiB"),
	   "full: concept map, hints, assertions, expert translation with its violation");
	enum ks_context_level lv;
	ok(ks_context_level_parse("full", &lv) == 0 && lv == KS_CONTEXT_FULL, "parse full");
	ok(ks_context_level_parse("max", &lv) != 0, "reject unknown level");
	ks_spec_release(&m3);
	ks_buf_release(&b);
	ks_buf_release(&skipped);
	return tap_done();
}
