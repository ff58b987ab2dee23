/* Workload helpers: labels, expressions with params bound, shapes, tensor stream keys. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ksearch/task.h"
#include "task/task_priv.h"
#include "util/expr.h"
#include "util/hash.h"
#include "util/rng.h"

int ks_task_param_lookup(const char *name, size_t len, double *out, void *ctx)
{
	const struct ks_param_scope *s = ctx;
	for (int i = 0; i < s->t->nparams; i++)
		if (strlen(s->t->params[i].name) == len && !strncmp(s->t->params[i].name, name, len)) {
			*out = s->values[i];
			return 0;
		}
	return KS_ENOTFOUND;
}

int ks_workload_for_backend(const struct ks_workload *w, const char *backend)
{
	if (!w->backends)
		return 1;
	for (char **b = w->backends; *b; b++)
		if (backend && !strcmp(*b, backend))
			return 1;
	return 0;
}

int ks_task_timed_count(const struct ks_task *t, const char *backend)
{
	int n = 0;
	for (int i = 0; i < t->nworkloads; i++)
		n += ks_workload_for_backend(&t->workloads[i], backend) != 0;
	return n;
}

static void add_value(struct ks_buf *out, enum ks_dtype t, double v)
{
	if (t == KS_DT_I32 || t == KS_DT_I64)
		ks_buf_addf(out, "%lld", (long long)v);
	else
		ks_buf_addf(out, "%.9g", v);
}

void ks_workload_label(const struct ks_task *t, const struct ks_workload *w, struct ks_buf *out)
{
	if (w->name)
		ks_buf_addf(out, "%s (", w->name);
	for (int i = 0; i < t->nparams; i++) {
		ks_buf_addf(out, "%s%s=", i ? " " : "", t->params[i].name);
		add_value(out, t->params[i].dtype, w->values[i]);
	}
	if (w->name)
		ks_buf_adds(out, ")");
}

int ks_workload_expr(const struct ks_task *t, const struct ks_workload *w, const char *expr,
		     double *out, struct ks_error *e)
{
	struct ks_param_scope s = {t, w->values};
	int col = 0;
	int rc = ks_expr_eval(expr, ks_task_param_lookup, &s, out, &col, e);
	if (rc)
		ks_error_wrap(e, "evaluate '%s' (column %d)", expr, col);
	return rc;
}

int ks_workload_shape(const struct ks_task *t, const struct ks_workload *w, int i,
		      int64_t dims[KS_MAX_DIMS], size_t *numel, struct ks_error *e)
{
	if (i < 0 || i >= t->ntensors)
		return ks_error_set(e, KS_EINVAL, "tensor index %d out of range", i);
	const struct ks_tensor_decl *d = &t->tensors[i];
	size_t n = 1;
	for (int k = 0; k < d->ndim; k++) {
		double v;
		int rc = ks_workload_expr(t, w, d->shape[k], &v, e);
		if (rc)
			return ks_error_wrap(e, "shape of '%s'", d->name);
		if (!(v >= 1) || v != trunc(v) || v > 9.0e15)
			return ks_error_set(e, KS_EINVAL,
					    "dimension %d of '%s' ('%s') is %g; expected a positive "
					    "integer",
					    k, d->name, d->shape[k], v);
		dims[k] = (int64_t)v;
		if (n > ((size_t)1 << 62) / (size_t)dims[k])
			return ks_error_set(e, KS_ELIMIT, "tensor '%s' has too many elements",
					    d->name);
		n *= (size_t)dims[k];
	}
	for (int k = d->ndim; k < KS_MAX_DIMS; k++)
		dims[k] = 1;
	*numel = n;
	return 0;
}

const char *ks_workload_init(const struct ks_task *t, const struct ks_workload *w, int i)
{
	if (i < 0 || i >= t->ntensors)
		return NULL;
	if (w && w->init && w->init[i])
		return w->init[i];
	return t->tensors[i].init;
}

uint64_t ks_tensor_key(const struct ks_task *t, const struct ks_workload *w, int i)
{
	/* the text of the params ("%.17g") is the same on every machine, so the key is too */
	struct ks_sha256 h;
	uint8_t d[32];
	char num[64];
	ks_sha256_init(&h);
	ks_sha256_update_str(&h, "ksearch tensor key v1");
	ks_sha256_update_str(&h, t->name);
	for (int k = 0; k < t->nparams; k++) {
		snprintf(num, sizeof(num), "%.17g", w->values[k]);
		ks_sha256_update_str(&h, t->params[k].name);
		ks_sha256_update_str(&h, num);
	}
	ks_sha256_update_str(&h, i >= 0 && i < t->ntensors ? t->tensors[i].name : "");
	ks_sha256_final(&h, d);
	uint64_t k = 0;
	for (int b = 0; b < 8; b++)
		k = k << 8 | d[b];
	return k;
}
