/* The spec schema shared by the loader, detection and the renderers. */
#ifndef KS_KNOWLEDGE_SPEC_SCHEMA_H
#define KS_KNOWLEDGE_SPEC_SCHEMA_H

#include <jansson.h>
#include <stddef.h>

#include "ksearch/knowledge.h"
#include "util/yaml.h"

enum ks_unit_class {
	KS_U_COUNT,   /* unitless count ("count") */
	KS_U_THREADS, /* "threads" */
	KS_U_BYTES,   /* B KiB MiB GiB -> bytes */
	KS_U_BW,      /* GB/s TB/s -> GB/s */
	KS_U_FLOPS,   /* GFLOPS TFLOPS -> GFLOPS */
	KS_U_OPS,     /* GOPS TOPS -> GOPS */
	KS_U_CLOCK,   /* MHz GHz -> MHz */
	KS_U_CYCLES,  /* "cycles" */
	KS_U_REGS,    /* "registers" (32-bit) */
	KS_U_TEXT,    /* a string */
	KS_U_LIST,    /* a sequence of strings */
};

#define KS_REQ_GPU 1u
#define KS_REQ_CPU 2u

struct ks_spec_field_def {
	const char *name;
	enum ks_unit_class uc;
	size_t off; /* offsetof in struct ks_spec (double, char * or char **) */
	unsigned req;
	const char *help;
};

extern const struct ks_spec_field_def ks_spec_fields[];
extern const size_t ks_spec_nfields;
/* vocabulary of the features list, NULL-terminated */
extern const char *const ks_spec_feature_names[];

const struct ks_spec_field_def *ks_spec_field_def(const char *name);
/* base unit name of a class ("B", "GB/s", ...), NULL for text/list/count */
const char *ks_unit_base(enum ks_unit_class uc);
/* factor from unit to base unit; -1 when unit is not allowed for the class */
double ks_unit_factor(enum ks_unit_class uc, const char *unit);
/* allowed unit spellings of a class for error messages */
const char *ks_unit_allowed(enum ks_unit_class uc);

/* append a value (takes ownership of nothing; copies strings) */
int ks_spec_value_add(struct ks_spec *s, const char *name, double value, const char *text,
		      const char *unit, const char *source, const char *basis, const char *note,
		      int line);
/* set a numeric member and its value record at once (for detection) */
int ks_spec_set_number(struct ks_spec *s, const char *name, double base_value,
		       const char *source, const char *basis, const char *note);

/* a field's `measured:` mapping (roof.c); errors at file:line:col */
int ks_spec_measure_parse(const struct ks_yaml_doc *y, const struct ks_yaml_node *node,
			  struct ks_spec_measure *m, struct ks_error *e);
/* ", measured: {...}" for a spec file's field mapping; nothing when m was not measured */
void ks_spec_measure_yaml(const struct ks_spec_measure *m, struct ks_buf *out);
/* {"at", "unix", "probe", "load", "loadavg", "cores", "loaded", "from_cache"}; NULL when m
 * was not measured */
json_t *ks_spec_measure_jobj(const struct ks_spec_measure *m);

/* ks_spec_detect_host's last step (spec_cache.c): the cached spec's higher figures into s
 * (o->kept), then s into the cache when it holds a figure of its own; o->cache_path and
 * o->cache_error say where and what failed (never fatal) */
void ks_spec_cache_apply(struct ks_spec *s, struct ks_detect_opts *o);

#endif
