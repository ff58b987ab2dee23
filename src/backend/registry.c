#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backends.h"
#include "backend/cuda.h"
#include "ksearch/backend.h"
#include "ksearch/knowledge.h"

static const struct ks_backend_i *const backends[] = {
	&ks_backend_cpu,
	&ks_backend_cuda,
	&ks_backend_mlx,
	NULL,
};

const struct ks_backend_i *const *ks_backend_list(void)
{
	return backends;
}

const struct ks_backend_i *ks_backend_find(const char *name)
{
	for (int i = 0; backends[i]; i++)
		if (!strcmp(backends[i]->name, name))
			return backends[i];
	return NULL;
}

int ks_backend_get(const char *name, const struct ks_backend_i **out, struct ks_error *e)
{
	const struct ks_backend_i *b = ks_backend_find(name ? name : "cpu");
	if (!b) {
		char known[256] = "";
		for (int i = 0; backends[i]; i++)
			snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
				 i ? ", " : "", backends[i]->name);
		return ks_error_set(e, KS_ENOTFOUND, "unknown backend '%s' (known: %s)", name, known);
	}
	char why[512] = "";
	if (b->probe && b->probe(why, sizeof(why)))
		return ks_error_set(e, KS_EUNAVAILABLE, "backend '%s' is not available here: %s",
				    b->name, why);
	*out = b;
	return 0;
}

const char *ks_backend_baseline_label(const struct ks_backend_i *be)
{
	return be && be->baseline_label ? be->baseline_label : "baseline";
}

void ks_artifact_init(struct ks_artifact *a)
{
	memset(a, 0, sizeof(*a));
	ks_buf_init(&a->log, 64 << 10);
}

void ks_artifact_release(struct ks_artifact *a)
{
	ks_buf_release(&a->log);
}

int ks_backend_detect_spec(const char *backend, int device, int measure, struct ks_buf *yaml,
			   struct ks_error *e)
{
	if (!strcmp(backend, "cuda"))
		return ks_cuda_detect(device, measure, yaml, e);
	return ks_error_set(e, KS_EUNAVAILABLE,
			    "backend '%s' has no device detection (the host CPU: 'ksearch spec detect')",
			    backend);
}

int ks_backend_device_spec(const char *backend, const char *devices, struct ks_spec *out,
			   struct ks_error *e)
{
	ks_spec_init(out);
	const char *d = devices ? devices : getenv("KSEARCH_DEVICE");
	struct ks_buf y = KS_BUF_INIT;
	int rc = ks_backend_detect_spec(backend, d ? atoi(d) : 0, 0, &y, e);
	if (!rc)
		rc = ks_spec_load_text(ks_buf_str(&y), out, e);
	ks_buf_release(&y);
	return rc;
}
