#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/suggest.h"

#include "backend/backends.h"
#include "ksearch/backend.h"
#include "ksearch/knowledge.h"
#include "util/env.h"

static const struct ks_backend_i *const backends[] = {
	&ks_backend_cpu,
	&ks_backend_cuda,
	&ks_backend_mlx,
	NULL,
};

/* kernel languages known without a backend of their own */
static const struct ks_abi *const languages[] = {
	&ks_abi_metal,
	NULL,
};

const struct ks_backend_i *const *ks_backend_list(void)
{
	return backends;
}

const struct ks_backend_i *ks_backend_find(const char *name)
{
	for (int i = 0; name && backends[i]; i++)
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
		const char *names[16];
		int nn = 0;
		for (int i = 0; backends[i] && nn < 16; i++)
			names[nn++] = backends[i]->name;
		const char *near = ks_suggest(name, names, nn);
		return ks_error_set(e, KS_ENOTFOUND, "unknown backend '%s' (known: %s)%s%s%s", name,
				    known, near ? "; did you mean '" : "", near ? near : "",
				    near ? "'?" : "");
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

/* ---- defaults of the optional slots: here and nowhere else ---- */

const struct ks_abi *ks_backend_abi(const struct ks_backend_i *b)
{
	return b->abi ? b->abi : &ks_abi_c;
}

const struct ks_sandbox_needs *ks_backend_sandbox(const struct ks_backend_i *b)
{
	static const struct ks_sandbox_needs base_rules = {0};
	return b->sandbox ? b->sandbox : &base_rules;
}

int ks_backend_template_runs(const struct ks_backend_i *b, const char *source, char *why,
			     size_t n)
{
	return !b || !b->template_runs || b->template_runs(source, why, n);
}

int ks_backend_probe_kernels(const struct ks_backend_i *b, char *why, size_t n)
{
	return b && b->probe_kernels ? b->probe_kernels(why, n) : 0;
}

const char *ks_backend_reply_file(const struct ks_backend_i *b)
{
	return b && b->reply_file ? b->reply_file
				  : "the complete kernel file: its includes, helpers and the entry "
				    "point with exactly the prototype the Task section gives";
}

const char *ks_backend_knob_use(const struct ks_backend_i *b)
{
	return b && b->knob_use ? b->knob_use
				: "#ifndef BLOCK / #define BLOCK 128 / #endif before the first use "
				  "(ksearch compiles each other value with -DBLOCK=V)";
}

void ks_backend_timing_text(const struct ks_backend_i *b, struct ks_buf *out)
{
	if (b && b->describe_timing)
		b->describe_timing(out);
	else
		ks_buf_adds(out, "a timed call is one call of the entry point, on input sets rotated "
				 "so that their total is more than twice the last-level cache (the data "
				 "of one call is not in the cache at the next)");
}

int ks_backend_on_host(const struct ks_backend_i *b)
{
	return b && b->on_host;
}

int ks_backend_spec_fits(const struct ks_backend_i *b, const struct ks_spec *s,
			 struct ks_error *e)
{
	if (b && b->on_host && s->kind && strcmp(s->kind, "cpu"))
		return ks_error_set(e, KS_EINVAL,
				    "spec '%s' describes a %s, but backend '%s' runs kernels on this "
				    "machine's CPU: its roofline and SUSPICIOUS floor would be a %s's "
				    "(use --spec auto, or a cpu spec)",
				    s->name ? s->name : "?", s->kind, b->name, s->kind);
	return 0;
}

int ks_backend_timing_tolerates_host_load(const struct ks_backend_i *b)
{
	return b && b->timing_tolerates_host_load;
}

const char *ks_backend_device_reference(const struct ks_backend_i *b)
{
	return b->device_reference && b->device_reference[0] ? b->device_reference : NULL;
}

int ks_task_hash(const struct ks_task *t, char out[65], struct ks_error *e)
{
	/* each backend's device reference once (two backends may name the same file) */
	const struct ks_backend_i *const *bs = ks_backend_list();
	const char *files[sizeof(backends) / sizeof(backends[0])];
	int n = 0;
	for (int i = 0; bs[i]; i++) {
		const char *file = ks_backend_device_reference(bs[i]);
		int seen = 0;
		for (int j = 0; file && j < n && !seen; j++)
			seen = !strcmp(files[j], file);
		if (file && !seen)
			files[n++] = file;
	}
	files[n] = NULL;
	return ks_task_hash_files(t, files, out, e);
}

int ks_backend_detect_spec(const char *backend, int device, int measure, struct ks_buf *yaml,
			   struct ks_error *e)
{
	const struct ks_backend_i *b = ks_backend_find(backend);
	if (!b)
		return ks_backend_get(backend, &b, e);
	if (!b->detect_spec)
		return ks_error_set(e, KS_EUNAVAILABLE,
				    "backend '%s' has no device detection (the host CPU: 'ksearch spec "
				    "detect')",
				    backend);
	return b->detect_spec(device, measure, yaml, e);
}

/* ---- kernel languages ---- */

const struct ks_abi *ks_abi_find(const char *name)
{
	if (!name)
		return NULL;
	const struct ks_backend_i *b = ks_backend_find(name);
	if (b)
		return ks_backend_abi(b);
	for (int i = 0; backends[i]; i++)
		if (!strcmp(ks_backend_abi(backends[i])->lang, name))
			return ks_backend_abi(backends[i]);
	for (int i = 0; languages[i]; i++)
		if (!strcmp(languages[i]->lang, name))
			return languages[i];
	return NULL;
}

int ks_task_prototype(const struct ks_task *t, const char *lang, struct ks_buf *out)
{
	return ks_abi_prototype(ks_abi_find(lang), t, out);
}

int ks_task_shim(const struct ks_task *t, const char *lang, struct ks_buf *out)
{
	return ks_abi_shim(ks_abi_find(lang), t, out);
}

const char *ks_dtype_ctype(enum ks_dtype t, const char *lang)
{
	const struct ks_abi *abi = ks_abi_find(lang ? lang : "c");
	return abi && (unsigned)t < KS_NDTYPES ? abi->ctype[t] : NULL;
}

int ks_backend_device_spec(const char *backend, const char *devices, struct ks_spec *out,
			   struct ks_error *e)
{
	ks_spec_init(out);
	const char *d = devices ? devices : ks_env_get()->device;
	struct ks_buf y = KS_BUF_INIT;
	int rc = ks_backend_detect_spec(backend, d ? atoi(d) : 0, 0, &y, e);
	if (!rc)
		rc = ks_spec_load_text(ks_buf_str(&y), out, e);
	ks_buf_release(&y);
	return rc;
}
