/* Kernel files of an export item, shared by the exporters that ship sources (c, torch,
 * flashinfer): their names and, when several candidates won different shapes, each
 * variant's entry point renamed so one library holds them all; the task's tensor list for
 * their header comments and docstrings. */
#include <stdio.h>
#include <string.h>

#include "export/exporters.h"
#include "ksearch/backend.h"

const char *ks_export_ext(const struct ks_export_item *it)
{
	const struct ks_backend_i *be = ks_backend_find(it->backend);
	return be ? be->ext : "c";
}

void ks_export_kernel_name(const struct ks_export_item *it, int v, char *out, size_t n)
{
	if (it->nvariants == 1)
		snprintf(out, n, "%s.%s", it->task->name, ks_export_ext(it));
	else
		snprintf(out, n, "%s_v%d.%s", it->task->name, v, ks_export_ext(it));
}

int ks_export_kernel_source(const struct ks_export_item *it, int v, struct ks_buf *out)
{
	ks_buf_addf(out, "/* %s: %s of %s (ksearch export)\n", it->task->name,
		    it->variants[v].label, it->origin);
	if (v == 0)
		ks_export_provenance(out, it, " * ");
	ks_buf_adds(out, " */\n");
	if (it->nvariants > 1)
		ks_buf_addf(out, "#define %s %s__v%d\n", it->task->name, it->task->name, v);
	return ks_buf_addf(out, "%s", it->variants[v].source);
}

void ks_export_tensors_doc(struct ks_buf *out, const struct ks_task *t)
{
	for (int i = 0; i < t->ntensors; i++) {
		const struct ks_tensor_decl *d = &t->tensors[i];
		ks_buf_addf(out, "%s%s %s [", i == t->ninputs ? " -> " : i ? ", " : "", d->name,
			    ks_dtype_name(d->dtype));
		for (int j = 0; j < d->ndim; j++)
			ks_buf_addf(out, "%s%s", j ? ", " : "", d->shape[j]);
		ks_buf_adds(out, "]");
	}
}

void ks_export_provenance(struct ks_buf *out, const struct ks_export_item *it, const char *prefix)
{
	for (const char *p = it->provenance; p && *p;) {
		size_t len = strcspn(p, "\n");
		ks_buf_addf(out, "%s%.*s\n", prefix, (int)len, p);
		p += len + (p[len] == '\n');
	}
}
