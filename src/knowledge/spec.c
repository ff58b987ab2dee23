/* Hardware specs: schema, loading and validation, field access, listing, renderings. */
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/yaml.h"
#include "knowledge/spec_schema.h"
#include "ksearch/knowledge.h"
#include "ksearch/suggest.h"
#include "util/fs.h"
#include "util/json.h"

#define F(name, uc, req, help) {#name, uc, offsetof(struct ks_spec, name), req, help}
#define KS_REQ_ALL (KS_REQ_GPU | KS_REQ_CPU)

const struct ks_spec_field_def ks_spec_fields[] = {
	F(simd_width, KS_U_THREADS, KS_REQ_ALL, "warp / simdgroup width, or f32 SIMD lanes"),
	F(max_threads_per_group, KS_U_THREADS, KS_REQ_ALL, "threads per block/threadgroup"),
	F(max_threads_per_core, KS_U_THREADS, 0, "resident threads per SM / GPU core"),
	F(smem_per_block, KS_U_BYTES, KS_REQ_GPU, "shared/threadgroup memory per group"),
	F(smem_per_block_optin, KS_U_BYTES, 0, "shared memory per block with opt-in"),
	F(smem_per_core, KS_U_BYTES, 0, "shared memory per SM / core"),
	F(registers_per_core, KS_U_REGS, 0, "32-bit registers per SM / core"),
	F(regs_per_thread_max, KS_U_REGS, 0, "32-bit registers per thread"),
	F(l1_bytes, KS_U_BYTES, 0, "L1 data cache per core"),
	F(l2_bytes, KS_U_BYTES, 0, "L2 cache (GPU: device, CPU: per core)"),
	F(llc_bytes, KS_U_BYTES, 0, "last-level cache (SLC / L3)"),
	F(mem_bytes, KS_U_BYTES, 0, "memory capacity"),
	F(mem_bandwidth_gbps, KS_U_BW, KS_REQ_ALL, "peak memory bandwidth"),
	F(cores, KS_U_COUNT, KS_REQ_ALL, "SMs / GPU cores / CPU cores"),
	F(clock_mhz, KS_U_CLOCK, 0, "boost clock"),
	F(peak_gflops_f32, KS_U_FLOPS, KS_REQ_ALL, "vector FP32 peak"),
	F(peak_gflops_f16, KS_U_FLOPS, 0, "vector FP16 peak"),
	F(peak_gflops_bf16, KS_U_FLOPS, 0, "vector BF16 peak"),
	F(peak_gflops_f64, KS_U_FLOPS, 0, "vector FP64 peak"),
	F(peak_gflops_tf32_matrix, KS_U_FLOPS, 0, "TF32 matrix unit peak (dense)"),
	F(peak_gflops_f16_matrix, KS_U_FLOPS, 0, "FP16 matrix unit peak (dense)"),
	F(peak_gflops_bf16_matrix, KS_U_FLOPS, 0, "BF16 matrix unit peak (dense)"),
	F(peak_gflops_fp8_matrix, KS_U_FLOPS, 0, "FP8 matrix unit peak (dense)"),
	F(peak_gops_int8_matrix, KS_U_OPS, 0, "INT8 matrix unit peak (dense)"),
	F(latency_global_cycles, KS_U_CYCLES, 0, "typical DRAM load latency"),
	F(latency_l2_cycles, KS_U_CYCLES, 0, "typical L2 hit latency"),
	F(latency_smem_cycles, KS_U_CYCLES, 0, "shared/threadgroup memory load latency"),
	F(matrix_unit, KS_U_TEXT, KS_REQ_GPU, "matrix hardware and how it is programmed"),
	F(features, KS_U_LIST, KS_REQ_ALL, "feature tokens (vocabulary in docs/knowledge.md)"),
	F(fast_instructions, KS_U_LIST, 0, "notable fast instructions"),
};
const size_t ks_spec_nfields = sizeof(ks_spec_fields) / sizeof(ks_spec_fields[0]);

const char *const ks_spec_feature_names[] = {
	"fp64", "fp16", "bf16", "fp8", "fp4", "int8_dot", "tensor_cores", "mma_sync", "wgmma",
	"tcgen05", "tma", "cp_async", "clusters", "warp_shuffle", "simdgroup_matrix",
	"simd_shuffle", "atomic_f32_add", "atomic_f64_add", "unified_memory", "texture",
	"sse4", "avx2", "fma", "avx512", "avx512_bf16", "avx512_fp16", "amx", "neon", "sve",
	NULL,
};

const struct ks_spec_field_def *ks_spec_field_def(const char *name)
{
	for (size_t i = 0; i < ks_spec_nfields; i++)
		if (!strcmp(ks_spec_fields[i].name, name))
			return &ks_spec_fields[i];
	return NULL;
}

struct unit_row {
	enum ks_unit_class uc;
	const char *unit;
	double factor;
};

static const struct unit_row unit_rows[] = {
	{KS_U_COUNT, "count", 1},        {KS_U_THREADS, "threads", 1},
	{KS_U_BYTES, "B", 1},            {KS_U_BYTES, "KiB", 1024.0},
	{KS_U_BYTES, "MiB", 1048576.0},  {KS_U_BYTES, "GiB", 1073741824.0},
	{KS_U_BW, "GB/s", 1},            {KS_U_BW, "TB/s", 1000},
	{KS_U_FLOPS, "GFLOPS", 1},       {KS_U_FLOPS, "TFLOPS", 1000},
	{KS_U_OPS, "GOPS", 1},           {KS_U_OPS, "TOPS", 1000},
	{KS_U_CLOCK, "MHz", 1},          {KS_U_CLOCK, "GHz", 1000},
	{KS_U_CYCLES, "cycles", 1},      {KS_U_REGS, "registers", 1},
};

const char *ks_unit_base(enum ks_unit_class uc)
{
	for (size_t i = 0; i < sizeof(unit_rows) / sizeof(unit_rows[0]); i++)
		if (unit_rows[i].uc == uc && unit_rows[i].factor == 1)
			return unit_rows[i].unit;
	return NULL;
}

double ks_unit_factor(enum ks_unit_class uc, const char *unit)
{
	for (size_t i = 0; i < sizeof(unit_rows) / sizeof(unit_rows[0]); i++)
		if (unit_rows[i].uc == uc && !strcmp(unit_rows[i].unit, unit))
			return unit_rows[i].factor;
	return -1;
}

const char *ks_unit_allowed(enum ks_unit_class uc)
{
	switch (uc) {
	case KS_U_COUNT: return "count";
	case KS_U_THREADS: return "threads";
	case KS_U_BYTES: return "B, KiB, MiB, GiB";
	case KS_U_BW: return "GB/s, TB/s";
	case KS_U_FLOPS: return "GFLOPS, TFLOPS";
	case KS_U_OPS: return "GOPS, TOPS";
	case KS_U_CLOCK: return "MHz, GHz";
	case KS_U_CYCLES: return "cycles";
	case KS_U_REGS: return "registers";
	case KS_U_TEXT:
	case KS_U_LIST: break;
	}
	return "none";
}

static const char *const bases[] = {"documented", "derived", "estimated", "measured",
				    "detected", NULL};

void ks_spec_init(struct ks_spec *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < ks_spec_nfields; i++)
		if (ks_spec_fields[i].uc != KS_U_TEXT && ks_spec_fields[i].uc != KS_U_LIST)
			*(double *)((char *)s + ks_spec_fields[i].off) = NAN;
}

static void strv_free(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

void ks_spec_release(struct ks_spec *s)
{
	free(s->name);
	free(s->title);
	free(s->kind);
	free(s->vendor);
	free(s->arch);
	free(s->path);
	free(s->matrix_unit);
	strv_free(s->features);
	strv_free(s->fast_instructions);
	for (int i = 0; i < s->nvalues; i++) {
		struct ks_spec_value *v = &s->values[i];
		free(v->name);
		free(v->text);
		free(v->unit);
		free(v->source);
		free(v->url);
		free(v->basis);
		free(v->note);
	}
	free(s->values);
	ks_spec_init(s);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int ks_spec_value_add(struct ks_spec *s, const char *name, double value, const char *text,
		      const char *unit, const char *source, const char *basis, const char *note,
		      int line)
{
	struct ks_spec_value *nv = realloc(s->values, (size_t)(s->nvalues + 1) * sizeof(*nv));
	if (!nv)
		return KS_ENOMEM;
	s->values = nv;
	struct ks_spec_value *v = &nv[s->nvalues];
	memset(v, 0, sizeof(*v));
	v->name = strdup(name);
	v->value = value;
	v->text = dup_or_null(text);
	v->unit = dup_or_null(unit);
	v->source = dup_or_null(source);
	v->basis = dup_or_null(basis);
	v->note = dup_or_null(note);
	v->line = line;
	s->nvalues++;
	if (!v->name)
		return KS_ENOMEM;
	return 0;
}

static struct ks_spec_value *value_find(const struct ks_spec *s, const char *name)
{
	for (int i = 0; i < s->nvalues; i++)
		if (!strcmp(s->values[i].name, name))
			return &s->values[i];
	return NULL;
}

int ks_spec_set_number(struct ks_spec *s, const char *name, double base_value,
		       const char *source, const char *basis, const char *note)
{
	const struct ks_spec_field_def *d = ks_spec_field_def(name);
	if (!d || d->uc == KS_U_TEXT || d->uc == KS_U_LIST)
		return KS_EINVAL;
	*(double *)((char *)s + d->off) = base_value;
	struct ks_spec_value *v = value_find(s, name);
	if (!v)
		return ks_spec_value_add(s, name, base_value, NULL, ks_unit_base(d->uc), source,
					 basis, note, 0);
	v->value = base_value;
	free(v->unit);
	free(v->source);
	free(v->basis);
	free(v->note);
	v->unit = dup_or_null(ks_unit_base(d->uc));
	v->source = dup_or_null(source);
	v->basis = dup_or_null(basis);
	v->note = dup_or_null(note);
	return v->unit && v->source && v->basis ? 0 : KS_ENOMEM;
}

/* ---- loading ----------------------------------------------------------------------- */

static int is_ident(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' ||
		      *s == '_'))
			return 0;
	return 1;
}

static int in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return 1;
	return 0;
}

/* resolve a field's source key to the source title */
static int source_title(const struct ks_yaml_doc *y, struct ks_yaml_node *sources, struct ks_yaml_node *ref,
			char *out, size_t n, char *url, size_t nurl, struct ks_error *e)
{
	url[0] = 0;
	const char *key = ks_yaml_scalar(ref);
	if (!key || !*key)
		return ks_yaml_error_in(y, ref, e, "'source' must name an entry of 'sources'");
	struct ks_yaml_node *s = ks_yaml_get(sources, key);
	if (!s)
		return ks_yaml_error_in(y, ref, e, "source '%s' is not defined in 'sources'", key);
	struct ks_yaml_node *t = (s && s->kind == KS_YAML_MAP) ? ks_yaml_get(s, "title") : s;
	const char *title = ks_yaml_scalar(t);
	if (!title)
		return ks_yaml_error_in(y, s, e, "source '%s' needs a title", key);
	snprintf(out, n, "%s", title);
	const char *u = s->kind == KS_YAML_MAP ? ks_yaml_scalar(ks_yaml_get(s, "url")) : NULL;
	if (u)
		snprintf(url, nurl, "%s", u);
	return 0;
}

static int load_list(const struct ks_yaml_doc *y, struct ks_yaml_node *seq, const char *field,
		     char ***out, struct ks_buf *joined, struct ks_error *e)
{
	if (!(seq && seq->kind == KS_YAML_SEQ))
		return ks_yaml_error_in(y, seq, e, "'%s' value must be a list of strings", field);
	int n = seq->n;
	char **v = calloc((size_t)n + 1, sizeof(char *));
	if (!v)
		return ks_error_set(e, KS_ENOMEM, "load '%s'", y->path);
	int i = 0;
	for (int k = 0; k < seq->n; k++) {
		struct ks_yaml_node *item = seq->items[k];
		char *t = ks_yaml_strdup(item);
		if (!t || !*t) {
			free(t);
			strv_free(v);
			return ks_yaml_error_in(y, item, e, "'%s' items must be non-empty strings",
					   field);
		}
		if (!strcmp(field, "features") && !in_list(ks_spec_feature_names, t)) {
			int rc = ks_yaml_error_in(y, item, e,
					     "unknown feature '%s' (see docs/knowledge.md for the "
					     "vocabulary)",
					     t);
			free(t);
			strv_free(v);
			return rc;
		}
		v[i++] = t;
		ks_buf_addf(joined, "%s%s", i > 1 ? ", " : "", t);
	}
	*out = v;
	return 0;
}

static int load_field_(const struct ks_yaml_doc *y, struct ks_yaml_node *sources, const char *name,
		       struct ks_yaml_node *fv, struct ks_spec *s, char *url, struct ks_error *e);

static int load_field(const struct ks_yaml_doc *y, struct ks_yaml_node *sources, const char *name,
		      struct ks_yaml_node *fv, struct ks_spec *s, struct ks_error *e)
{
	char url[512] = "";
	int n0 = s->nvalues;
	int rc = load_field_(y, sources, name, fv, s, url, e);
	if (!rc && s->nvalues > n0 && url[0] && !(s->values[n0].url = strdup(url)))
		rc = ks_error_set(e, KS_ENOMEM, "load '%s'", y->path);
	return rc;
}

static int load_field_(const struct ks_yaml_doc *y, struct ks_yaml_node *sources, const char *name,
		       struct ks_yaml_node *fv, struct ks_spec *s, char *url, struct ks_error *e)
{
	const struct ks_spec_field_def *d = ks_spec_field_def(name);
	if (!d)
		return ks_yaml_error_in(y, fv, e, "unknown field '%s'", name);
	if (value_find(s, name))
		return ks_yaml_error_in(y, fv, e, "field '%s' given twice", name);
	if (!(fv && fv->kind == KS_YAML_MAP))
		return ks_yaml_error_in(y, fv, e,
				   "field '%s' must be a mapping {value, unit, source, basis}",
				   name);
	static const char *const keys[] = {"value", "unit", "source", "basis", "note", "measured",
					   NULL};
	int rc = ks_yaml_check_keys(y, fv, "a field", keys, NULL, e);
	if (rc)
		return rc;
	struct ks_yaml_node *val = ks_yaml_get(fv, "value"), *unit = ks_yaml_get(fv, "unit");
	struct ks_yaml_node *src = ks_yaml_get(fv, "source"), *basis = ks_yaml_get(fv, "basis");
	struct ks_yaml_node *note = ks_yaml_get(fv, "note");
	if (!val)
		return ks_yaml_error_in(y, fv, e, "field '%s' has no 'value'", name);
	if (!src)
		return ks_yaml_error_in(y, fv, e, "field '%s' has no 'source'", name);
	char title[512];
	if ((rc = source_title(y, sources, src, title, sizeof(title), url, 512, e)))
		return rc;
	const char *b = basis ? ks_yaml_scalar(basis) : "documented";
	if (!b || !in_list(bases, b))
		return ks_yaml_error_in(y, basis, e,
				   "'basis' must be documented, derived, estimated, measured or "
				   "detected");
	const char *nt = note ? ks_yaml_scalar(note) : NULL;
	if (note && !nt)
		return ks_yaml_error_in(y, note, e, "'note' must be text");
	if ((!strcmp(b, "derived") || !strcmp(b, "estimated")) && (!nt || !*nt))
		return ks_yaml_error_in(y, fv, e, "field '%s' is %s: say how in a 'note'", name, b);
	int line, col;
	ks_yaml_pos(fv, &line, &col);
	int is_null = val->kind == KS_YAML_SCALAR && !val->quoted && !strcmp(val->str, "null");
	if (is_null && !s->is_template)
		return ks_yaml_error_in(y, val, e, "field '%s': null is only allowed in templates",
				   name);

	if (d->uc == KS_U_TEXT || d->uc == KS_U_LIST) {
		if (unit)
			return ks_yaml_error_in(y, unit, e, "field '%s' takes no unit", name);
		if (is_null)
			return ks_spec_value_add(s, name, NAN, NULL, NULL, title, b, nt, line);
		if (d->uc == KS_U_TEXT) {
			char *t = ks_yaml_strdup(val);
			if (!t || !*t) {
				free(t);
				return ks_yaml_error_in(y, val, e, "field '%s' must be text", name);
			}
			*(char **)((char *)s + d->off) = t;
			return ks_spec_value_add(s, name, NAN, t, NULL, title, b, nt, line);
		}
		struct ks_buf j = KS_BUF_INIT;
		char **list = NULL;
		rc = load_list(y, val, name, &list, &j, e);
		if (!rc) {
			*(char ***)((char *)s + d->off) = list;
			rc = ks_spec_value_add(s, name, NAN, ks_buf_str(&j), NULL, title, b, nt,
					       line);
		}
		ks_buf_release(&j);
		return rc;
	}
	const char *u = NULL;
	if (unit && !(u = ks_yaml_scalar(unit)))
		return ks_yaml_error_in(y, unit, e, "'unit' must be text");
	if (!u && d->uc != KS_U_COUNT)
		return ks_yaml_error_in(y, fv, e, "field '%s' needs a unit (%s)", name,
				   ks_unit_allowed(d->uc));
	double factor = u ? ks_unit_factor(d->uc, u) : 1;
	if (factor < 0)
		return ks_yaml_error_in(y, unit, e, "field '%s': unit '%s' is not one of %s", name, u,
				   ks_unit_allowed(d->uc));
	double v = NAN;
	if (!is_null) {
		if (ks_yaml_number(y, val, "a number", &v, NULL))
			return ks_yaml_error_in(y, val, e, "field '%s': value must be a number", name);
		if (v < 0)
			return ks_yaml_error_in(y, val, e, "field '%s': value must not be negative",
					   name);
		v *= factor;
	}
	struct ks_spec_measure m = {0};
	struct ks_yaml_node *mn = ks_yaml_get(fv, "measured");
	if (mn && strcmp(b, "measured"))
		return ks_yaml_error_in(y, mn, e, "field '%s': 'measured' needs basis measured", name);
	if (mn && (rc = ks_spec_measure_parse(y, mn, &m, e)))
		return rc;
	*(double *)((char *)s + d->off) = v;
	rc = ks_spec_value_add(s, name, v, NULL, u, title, b, nt, line);
	if (!rc)
		s->values[s->nvalues - 1].measure = m;
	return rc;
}

static int load_spec(const char *path, struct ks_spec *s, struct ks_error *e)
{
	static const char *const top[] = {"schema", "name", "title", "kind", "vendor", "arch",
					  "template", "sources", "fields", NULL};
	struct ks_yaml_doc *y = NULL;
	ks_spec_init(s);
	int rc = ks_yaml_load_schema(path, "the spec file", "ks-spec/1", top, &y, e);
	if (rc)
		return rc;
	struct ks_yaml_node *root = y->root, *n, *sources, *fields;
	struct {
		const char *key;
		char **dst;
	} strs[] = {{"name", &s->name},     {"title", &s->title}, {"kind", &s->kind},
		    {"vendor", &s->vendor}, {"arch", &s->arch}};
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		if ((rc = ks_yaml_need(y, root, strs[i].key, KS_YAML_SCALAR, &n, e)))
			goto out;
		*strs[i].dst = ks_yaml_strdup(n);
		if (!*strs[i].dst || !**strs[i].dst) {
			rc = ks_yaml_error_in(y, n, e, "'%s' must not be empty", strs[i].key);
			goto out;
		}
	}
	n = ks_yaml_get(root, "name");
	if (!is_ident(s->name)) {
		rc = ks_yaml_error_in(y, n, e, "'name' may hold only a-z, 0-9, '-' and '_'");
		goto out;
	}
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t bl = strlen(base);
	if (bl > 5 && !strcmp(base + bl - 5, ".yaml") &&
	    (bl - 5 != strlen(s->name) || strncmp(base, s->name, bl - 5))) {
		rc = ks_yaml_error_in(y, n, e, "'name' (%s) must match the file name", s->name);
		goto out;
	}
	if (strcmp(s->kind, "gpu") && strcmp(s->kind, "cpu")) {
		rc = ks_yaml_error_in(y, ks_yaml_get(root, "kind"), e, "'kind' must be gpu or cpu");
		goto out;
	}
	if ((n = ks_yaml_get(root, "template"))) {
		const char *t = ks_yaml_scalar(n);
		if (!t || (strcmp(t, "true") && strcmp(t, "false"))) {
			rc = ks_yaml_error_in(y, n, e, "'template' must be true or false");
			goto out;
		}
		s->is_template = !strcmp(t, "true");
	}
	if ((rc = ks_yaml_need(y, root, "sources", KS_YAML_MAP, &sources, e)))
		goto out;
	for (int i = 0; i < sources->n; i++) {
		struct ks_yaml_node *v = sources->items[i];
		struct ks_yaml_node *t = v->kind == KS_YAML_MAP ? ks_yaml_get(v, "title") : v;
		if (!ks_yaml_scalar(t) || !*ks_yaml_scalar(t)) {
			rc = ks_yaml_error_in(y, v, e, "a source is a title or {title, url}");
			goto out;
		}
		if (v->kind == KS_YAML_MAP) {
			static const char *const sk[] = {"title", "url", "note", NULL};
			if ((rc = ks_yaml_check_keys(y, v, "a source", sk, NULL, e)))
				goto out;
		}
	}
	if ((rc = ks_yaml_need(y, root, "fields", KS_YAML_MAP, &fields, e)))
		goto out;
	for (int i = 0; i < fields->n; i++) {
		/* keys are always scalars here (the loader refuses others) */
		if ((rc = load_field(y, sources, fields->keys[i]->str, fields->items[i], s, e)))
			goto out;
	}
	unsigned need = !strcmp(s->kind, "gpu") ? KS_REQ_GPU : KS_REQ_CPU;
	for (size_t i = 0; i < ks_spec_nfields; i++)
		if ((ks_spec_fields[i].req & need) && !value_find(s, ks_spec_fields[i].name)) {
			rc = ks_yaml_error_in(y, fields, e, "missing required field '%s' (%s)",
					 ks_spec_fields[i].name, ks_spec_fields[i].help);
			goto out;
		}
	if (!s->is_template && isfinite(s->smem_per_block_optin) &&
	    s->smem_per_block_optin < s->smem_per_block) {
		rc = ks_yaml_error_in(y, ks_yaml_get(fields, "smem_per_block_optin"), e,
				 "smem_per_block_optin is smaller than smem_per_block");
		goto out;
	}
	if (!isfinite(s->smem_per_block_optin) && isfinite(s->smem_per_block))
		s->smem_per_block_optin = s->smem_per_block;
	s->path = strdup(path);
out:
	ks_yaml_free(y);
	if (rc)
		ks_spec_release(s);
	return rc;
}

static int spec_path(const char *name_or_path, char *out, size_t n)
{
	size_t l = strlen(name_or_path);
	if (strchr(name_or_path, '/') || (l > 5 && !strcmp(name_or_path + l - 5, ".yaml")))
		return snprintf(out, n, "%s", name_or_path) >= (int)n ? KS_ELIMIT : 0;
	return snprintf(out, n, "%s/knowledge/specs/%s.yaml", ks_data_root(), name_or_path) >=
			       (int)n
		       ? KS_ELIMIT
		       : 0;
}

/* "unknown spec 'h20' (see 'ksearch spec list'); did you mean 'h200'?" */
static int unknown_spec(const char *name, struct ks_error *e)
{
	char **names = NULL;
	int n = 0;
	const char *near = ks_spec_list(&names, &n, NULL) ? NULL
			   : ks_suggest(name, (const char *const *)names, n);
	ks_error_set(e, KS_ENOTFOUND, "unknown spec '%s' (see 'ksearch spec list')%s%s%s", name,
		     near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
	ks_spec_list_free(names, n);
	return KS_ENOTFOUND;
}

int ks_spec_load(const char *name_or_path, struct ks_spec *out, struct ks_error *e)
{
	char path[4096];
	ks_spec_init(out);
	if (!name_or_path || !*name_or_path)
		return ks_error_set(e, KS_EINVAL, "load spec: no name given");
	if (spec_path(name_or_path, path, sizeof(path)))
		return ks_error_set(e, KS_ELIMIT, "load spec '%s': path too long", name_or_path);
	if (!ks_path_exists(path)) {
		if (!strchr(name_or_path, '/'))
			return unknown_spec(name_or_path, e);
		return ks_error_set(e, KS_ENOTFOUND, "open '%s': no such file", path);
	}
	return load_spec(path, out, e);
}

int ks_spec_load_text(const char *yaml, struct ks_spec *out, struct ks_error *e)
{
	ks_spec_init(out);
	/* through a file named after the document's "name:", as the loader requires */
	const char *nm = strstr(yaml, "\nname: ");
	char dir[] = "/tmp/ksearch-spec-XXXXXX", path[sizeof(dir) + 80];
	if (!nm)
		return ks_error_set(e, KS_EINVAL, "spec document: no 'name:' line");
	if (!mkdtemp(dir))
		return ks_error_set(e, KS_EIO, "spec document: cannot create a temporary directory");
	snprintf(path, sizeof(path), "%s/%.*s.yaml", dir, (int)strcspn(nm + 7, "\n"), nm + 7);
	FILE *f = fopen(path, "w");
	int bad = !f || fputs(yaml, f) < 0, rc;
	if ((f && fclose(f)) || bad)
		rc = ks_error_set(e, KS_EIO, "write '%s': cannot write file", path);
	else
		rc = ks_spec_load(path, out, e);
	unlink(path);
	rmdir(dir);
	return rc;
}

int ks_spec_validate_file(const char *path, struct ks_error *e)
{
	struct ks_spec s;
	int rc = load_spec(path, &s, e);
	if (!rc)
		ks_spec_release(&s);
	return rc;
}

int ks_spec_field(const struct ks_spec *s, const char *name, double *value)
{
	if (!strncmp(name, "spec.", 5))
		name += 5;
	/* derived: the SIMD register width in bytes (f32 lanes x 4), as templates size vectors */
	if (!strcmp(name, "simd_bytes")) {
		double lanes;
		if (ks_spec_field(s, "simd_width", &lanes))
			return KS_ENOTFOUND;
		*value = lanes * 4;
		return 0;
	}
	/* derived: 1 when the features list has the token, else 0 ("has_avx512_bf16"), so a
	 * template can require an instruction set extension */
	if (!strncmp(name, "has_", 4) && name[4]) {
		*value = ks_spec_has_feature(s, name + 4);
		return 0;
	}
	const struct ks_spec_field_def *d = ks_spec_field_def(name);
	if (!d || d->uc == KS_U_TEXT || d->uc == KS_U_LIST)
		return KS_ENOTFOUND;
	double v = *(const double *)((const char *)s + d->off);
	if (!isfinite(v))
		return KS_ENOTFOUND;
	*value = v;
	return 0;
}

int ks_spec_has_feature(const struct ks_spec *s, const char *feature)
{
	for (char **p = s->features; p && *p; p++)
		if (!strcmp(*p, feature))
			return 1;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void ks_spec_list_free(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int ks_spec_list(char ***names, int *n, struct ks_error *e)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/knowledge/specs", ks_data_root());
	*names = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return ks_error_set(e, KS_ENOTFOUND, "open '%s': no such directory", dir);
	struct dirent *de;
	char **v = NULL;
	int c = 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l <= 5 || strcmp(de->d_name + l - 5, ".yaml") || de->d_name[0] == '.')
			continue;
		char **nv = realloc(v, (size_t)(c + 1) * sizeof(char *));
		if (!nv || !(nv[c] = strndup(de->d_name, l - 5))) {
			closedir(d);
			ks_spec_list_free(nv ? nv : v, c);
			return ks_error_set(e, KS_ENOMEM, "list specs");
		}
		v = nv;
		c++;
	}
	closedir(d);
	if (c)
		qsort(v, (size_t)c, sizeof(char *), cmp_str);
	*names = v;
	*n = c;
	return 0;
}

/* ---- renderings ---------------------------------------------------------------------- */

/* "32 KiB", "3.35 TB/s", "989 TFLOPS": a base value in a readable unit */
static void human(const struct ks_spec_field_def *d, double v, char *out, size_t n)
{
	if (!isfinite(v)) {
		snprintf(out, n, "(detected at run time)");
		return;
	}
	switch (d->uc) {
	case KS_U_BYTES:
		if (v >= 1073741824.0)
			snprintf(out, n, "%.4g GiB", v / 1073741824.0);
		else if (v >= 1048576.0)
			snprintf(out, n, "%.4g MiB", v / 1048576.0);
		else if (v >= 1024)
			snprintf(out, n, "%.4g KiB", v / 1024.0);
		else
			snprintf(out, n, "%.0f B", v);
		return;
	case KS_U_BW:
		snprintf(out, n, v >= 1000 ? "%.4g TB/s" : "%.4g GB/s", v >= 1000 ? v / 1000 : v);
		return;
	case KS_U_FLOPS:
		snprintf(out, n, v >= 1000 ? "%.4g TFLOPS" : "%.4g GFLOPS",
			 v >= 1000 ? v / 1000 : v);
		return;
	case KS_U_OPS:
		snprintf(out, n, v >= 1000 ? "%.4g TOPS" : "%.4g GOPS", v >= 1000 ? v / 1000 : v);
		return;
	case KS_U_CLOCK:
		snprintf(out, n, "%.0f MHz", v);
		return;
	default:
		snprintf(out, n, "%.6g%s%s", v, ks_unit_base(d->uc) ? " " : "",
			 ks_unit_base(d->uc) ? ks_unit_base(d->uc) : "");
	}
}

int ks_spec_to_text(const struct ks_spec *s, struct ks_buf *out)
{
	ks_buf_addf(out, "Hardware spec %s: %s\nkind %s, vendor %s, architecture %s\n", s->name,
		    s->title ? s->title : s->name, s->kind, s->vendor, s->arch);
	for (int i = 0; i < s->nvalues; i++) {
		const struct ks_spec_value *v = &s->values[i];
		const struct ks_spec_field_def *d = ks_spec_field_def(v->name);
		/* a text value (a feature list, a matrix unit) goes in whole: a prompt that cut it
		 * mid-word told the model half a fact */
		char num[128];
		if (!v->text)
			human(d, v->value, num, sizeof(num));
		char prov[512];
		ks_spec_measure_text(&v->measure, 0, prov, sizeof(prov));
		ks_buf_addf(out, "- %s: %s [%s: %s]%s%s%s%s\n", v->name, v->text ? v->text : num,
			    v->basis, v->source, v->note ? " - " : "", v->note ? v->note : "",
			    prov[0] ? "; " : "", prov);
	}
	if (!strcmp(s->kind, "gpu")) {
		double bw = s->mem_bandwidth_gbps, f = s->peak_gflops_f32;
		if (isfinite(bw) && isfinite(f) && bw > 0)
			ks_buf_addf(out,
				    "- machine balance: %.1f f32 FLOP per DRAM byte (kernels below "
				    "this arithmetic intensity are bandwidth-bound)\n",
				    f / bw);
	}
	return ks_buf_adds(out, "");
}

int ks_spec_to_json(const struct ks_spec *s, struct ks_buf *out, struct ks_error *e)
{
	json_t *o = json_object(), *fields = json_object();
	json_object_set_new(o, "name", json_string(s->name));
	json_object_set_new(o, "title", json_string(s->title ? s->title : s->name));
	json_object_set_new(o, "kind", json_string(s->kind));
	json_object_set_new(o, "vendor", json_string(s->vendor));
	json_object_set_new(o, "arch", json_string(s->arch));
	json_object_set_new(o, "template", json_boolean(s->is_template));
	if (s->path)
		json_object_set_new(o, "path", json_string(s->path));
	for (int i = 0; i < s->nvalues; i++) {
		const struct ks_spec_value *v = &s->values[i];
		const struct ks_spec_field_def *d = ks_spec_field_def(v->name);
		json_t *f = json_object();
		if (d->uc == KS_U_LIST) {
			char **list = *(char **const *)((const char *)s + d->off);
			json_t *a = json_array();
			for (char **p = list; p && *p; p++)
				json_array_append_new(a, json_string(*p));
			json_object_set_new(f, "value", a);
		} else if (d->uc == KS_U_TEXT) {
			json_object_set_new(f, "value", v->text ? json_string(v->text) : json_null());
		} else {
			json_t *num = !isfinite(v->value) ? json_null()
				      : v->value == floor(v->value) && fabs(v->value) < 9e15
					      ? json_integer((json_int_t)v->value)
					      : json_real(v->value);
			json_object_set_new(f, "value", num);
			if (ks_unit_base(d->uc))
				json_object_set_new(f, "unit", json_string(ks_unit_base(d->uc)));
			char h[96];
			human(d, v->value, h, sizeof(h));
			json_object_set_new(f, "display", json_string(h));
		}
		json_object_set_new(f, "source", json_string(v->source ? v->source : ""));
		if (v->url)
			json_object_set_new(f, "source_url", json_string(v->url));
		json_object_set_new(f, "basis", json_string(v->basis ? v->basis : ""));
		if (v->note)
			json_object_set_new(f, "note", json_string(v->note));
		json_t *m = ks_spec_measure_jobj(&v->measure);
		if (m)
			json_object_set_new(f, "measured", m);
		json_object_set_new(fields, v->name, f);
	}
	json_object_set_new(o, "fields", fields);
	int rc = ks_json_to_buf(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10),
				out);
	json_decref(o);
	rc = rc ? rc : ks_buf_adds(out, "\n");
	return rc ? ks_error_set(e, rc, "render spec '%s' as json", s->name) : 0;
}

static void yaml_quoted(struct ks_buf *out, const char *s)
{
	ks_buf_adds(out, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			ks_buf_addf(out, "\\%c", *s);
		else if (*s == '\n')
			ks_buf_adds(out, "\\n");
		else
			ks_buf_add(out, s, 1);
	}
	ks_buf_adds(out, "\"");
}

int ks_spec_to_yaml(const struct ks_spec *s, struct ks_buf *out, struct ks_error *e)
{
	/* sources are keyed src1, src2, ... in order of first use */
	const char **titles = calloc((size_t)s->nvalues + 1, sizeof(char *));
	int nt = 0;
	if (!titles)
		return ks_error_set(e, KS_ENOMEM, "render spec '%s' as yaml", s->name);
	ks_buf_adds(out, "schema: ks-spec/1\nname: ");
	ks_buf_adds(out, s->name);
	ks_buf_adds(out, "\ntitle: ");
	yaml_quoted(out, s->title ? s->title : s->name);
	ks_buf_addf(out, "\nkind: %s\nvendor: ", s->kind);
	yaml_quoted(out, s->vendor);
	ks_buf_adds(out, "\narch: ");
	yaml_quoted(out, s->arch);
	ks_buf_addf(out, "\ntemplate: %s\nsources:\n", s->is_template ? "true" : "false");
	for (int i = 0; i < s->nvalues; i++) {
		const char *src = s->values[i].source ? s->values[i].source : "unknown";
		int k;
		for (k = 0; k < nt && strcmp(titles[k], src); k++)
			;
		if (k == nt) {
			titles[nt++] = src;
			ks_buf_addf(out, "  src%d: {title: ", k + 1);
			yaml_quoted(out, src);
			if (s->values[i].url) {
				ks_buf_adds(out, ", url: ");
				yaml_quoted(out, s->values[i].url);
			}
			ks_buf_adds(out, "}\n");
		}
	}
	ks_buf_adds(out, "fields:\n");
	for (int i = 0; i < s->nvalues; i++) {
		const struct ks_spec_value *v = &s->values[i];
		const struct ks_spec_field_def *d = ks_spec_field_def(v->name);
		const char *src = v->source ? v->source : "unknown";
		int k;
		for (k = 0; k < nt && strcmp(titles[k], src); k++)
			;
		ks_buf_addf(out, "  %s: {value: ", v->name);
		if (d->uc == KS_U_LIST) {
			char **list = *(char **const *)((const char *)s + d->off);
			ks_buf_adds(out, "[");
			for (char **p = list; p && *p; p++) {
				ks_buf_adds(out, p == list ? "" : ", ");
				yaml_quoted(out, *p);
			}
			ks_buf_adds(out, "]");
		} else if (d->uc == KS_U_TEXT) {
			if (v->text)
				yaml_quoted(out, v->text);
			else
				ks_buf_adds(out, "null");
		} else if (!isfinite(v->value)) {
			ks_buf_adds(out, "null");
		} else {
			ks_buf_addf(out, "%.10g", v->value);
		}
		if (d->uc != KS_U_LIST && d->uc != KS_U_TEXT && d->uc != KS_U_COUNT)
			ks_buf_addf(out, ", unit: %s", ks_unit_base(d->uc));
		ks_buf_addf(out, ", source: src%d, basis: %s", k + 1,
			    v->basis ? v->basis : "documented");
		if (v->note) {
			ks_buf_adds(out, ", note: ");
			yaml_quoted(out, v->note);
		}
		ks_spec_measure_yaml(&v->measure, out);
		ks_buf_adds(out, "}\n");
	}
	free(titles);
	return 0;
}
