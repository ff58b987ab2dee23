/* Knowledge base: hardware specs, CUDA -> target concept maps, hints and reusable
 * assertions (docs/knowledge.md).
 *
 * Everything is data under <data root>/knowledge/:
 *   specs/NAME.yaml              one device per file, every field with unit and source
 *   translate/cuda-to-T.yaml     per CUDA concept: detection, target equivalent, constraints
 *   hints/T.md                   code-level patterns for target T ("## " sections)
 *   assertions/CLASS.yaml        properties in prose + check workloads per task class
 * Errors in any of these files are reported as "FILE:LINE:COL: what was expected". */
#ifndef KSEARCH_KNOWLEDGE_H
#define KSEARCH_KNOWLEDGE_H

#include <stddef.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "ksearch/task.h"

/* ---- hardware specs ---------------------------------------------------------------- */

/* Where a measured figure came from: which probe, when, and how busy the machine was.
 * All zero (probe "") for figures not measured by `spec detect` (documented, detected).
 * In a spec file: `measured: {at: "2026-12-08T14:03:11Z", probe: memcpy, load: 0.4,
 * loadavg: 2.9, cores: 2}` inside the field's mapping. */
struct ks_spec_measure {
	char probe[16];   /* "memcpy" (mem_bandwidth_gbps), "fma" (peak_gflops_f32) */
	double at;        /* unix time of the measurement; 0: not measured */
	double load;      /* tasks wanting a CPU besides the probe, averaged over samples
			     taken between its bursts (/proc/loadavg's runnable count) */
	double loadavg;   /* the 1-minute load average as the probe started (uptime's) */
	int cores;        /* online CPUs then */
	int from_cache;   /* not this detection's figure: an earlier, higher one kept from
			     the cached spec (ks_spec_cache_path) */
};

/* One field as written in the spec file (numbers are converted to the base unit of the
 * field: bytes, GB/s, GFLOPS, MHz, cycles, threads, count). */
struct ks_spec_value {
	char *name;   /* "smem_per_block" */
	double value; /* base unit; NaN for text/list fields and for template placeholders */
	char *text;   /* text and list fields ("a, b, c" for lists); NULL for numbers */
	char *unit;   /* unit as written ("KiB", "TB/s"); NULL when unitless */
	char *source; /* resolved citation: the title of the referenced source */
	char *url;    /* the source's url, or NULL */
	char *basis;  /* documented | derived | estimated | measured | detected */
	char *note;   /* free text or NULL */
	int line;     /* line in the spec file, 0 for detected values */
	struct ks_spec_measure measure; /* provenance of a measured value (probe "" if none) */
};

/* A device.  Numeric members are NaN when the spec does not say (use ks_spec_field to
 * test).  Sizes are bytes, bandwidth GB/s (1e9 B/s), rates GFLOPS (GOPS for int8). */
struct ks_spec {
	char *name;   /* "m3-max" */
	char *title;  /* "Apple M3 Max (40-core GPU)" */
	char *kind;   /* "gpu" | "cpu" */
	char *vendor; /* "nvidia" | "apple" | "intel" | "amd" | "generic" */
	char *arch;   /* "hopper (sm_90)", "apple-gpu-family-9", "x86-64" */
	char *path;   /* the file it was loaded from (NULL when detected) */
	int is_template; /* values are placeholders filled by detection */

	double simd_width;            /* warp / simdgroup / SIMD lanes (f32) */
	double max_threads_per_group; /* threads per block / threadgroup / work-group */
	double max_threads_per_core;  /* resident threads per SM / GPU core */
	double smem_per_block;        /* shared/threadgroup memory per group, default */
	double smem_per_block_optin;  /* ... with opt-in (cudaFuncAttributeMaxDynamicShared...) */
	double smem_per_core;         /* shared memory per SM / GPU core */
	double registers_per_core;    /* 32-bit registers per SM / core */
	double regs_per_thread_max;   /* 32-bit registers per thread */
	double l1_bytes;              /* per core */
	double l2_bytes;              /* whole device (CPU: per core) */
	double llc_bytes;             /* last level: SLC on Apple, L3 on CPUs, = L2 on NVIDIA */
	double mem_bytes;             /* device memory capacity (largest configuration) */
	double mem_bandwidth_gbps;    /* peak DRAM bandwidth (measured on detected CPUs) */
	double cores;                 /* SMs / GPU cores / CPU cores */
	double clock_mhz;             /* boost clock */
	double peak_gflops_f32;       /* vector (non-matrix) FP32 */
	double peak_gflops_f16;       /* vector FP16 */
	double peak_gflops_bf16;      /* vector BF16 */
	double peak_gflops_f64;       /* vector FP64 */
	double peak_gflops_tf32_matrix;
	double peak_gflops_f16_matrix;  /* dense, FP32 or FP16 accumulate (best documented) */
	double peak_gflops_bf16_matrix;
	double peak_gflops_fp8_matrix;
	double peak_gops_int8_matrix;
	double latency_global_cycles; /* typical DRAM load latency */
	double latency_l2_cycles;
	double latency_smem_cycles;   /* shared / threadgroup memory load latency */

	char *matrix_unit;       /* "4th-gen tensor cores (wgmma)", "simdgroup_matrix 8x8" */
	char **features;         /* NULL-terminated vocabulary tokens: fp64, wgmma, tma, ... */
	char **fast_instructions; /* NULL-terminated: "exp2", "rsqrt", ... */

	int nvalues;             /* every field as written, in file order */
	struct ks_spec_value *values;
};

void ks_spec_init(struct ks_spec *s);
/* frees the contents; the struct may be reused after ks_spec_init */
void ks_spec_release(struct ks_spec *s);

/* Load and validate a spec by name (<data root>/knowledge/specs/NAME.yaml) or path. */
int ks_spec_load(const char *name_or_path, struct ks_spec *out, struct ks_error *e);
/* Load and validate a spec document held in memory (e.g. one a backend detected); its
 * "name:" must be a valid spec name.  Errors point into a temporary file. */
int ks_spec_load_text(const char *yaml, struct ks_spec *out, struct ks_error *e);
/* Validate one spec file without keeping it. */
int ks_spec_validate_file(const char *path, struct ks_error *e);
/* Numeric field by name ("smem_per_block"; a "spec." prefix is accepted, as written in
 * template require expressions; "simd_bytes" is derived as simd_width x 4, "has_TOKEN" as
 * 1 or 0 for a token of the features list).
 * KS_ENOTFOUND for unknown names and absent values. */
int ks_spec_field(const struct ks_spec *s, const char *name, double *value);
/* true when the spec lists the feature token (see docs/knowledge.md for the vocabulary) */
int ks_spec_has_feature(const struct ks_spec *s, const char *feature);
/* sorted names of the shipped specs; free with ks_spec_list_free */
int ks_spec_list(char ***names, int *n, struct ks_error *e);
void ks_spec_list_free(char **names, int n);
/* Detect the host CPU: /proc/cpuinfo, sysfs caches, core count, plus a short (<= 2 s)
 * measurement of copy bandwidth and FMA rate (basis "measured", each with its
 * ks_spec_measure).  A measurement never lowers a roof: where the cached spec of this
 * machine (ks_spec_cache_path) holds a higher figure, that figure and its provenance are
 * kept (from_cache 1); a higher new figure replaces it in the cache.  A probe that ran on
 * a loaded machine (ks_spec_measure_loaded) is logged as a warning that says what to do. */
int ks_spec_detect_host(struct ks_spec *out, struct ks_error *e);

/* What one detection did, for `spec detect` to say (ks_spec_detect_host_ex) */
struct ks_detect_opts {
	int fresh;                   /* in: this run's figures replace the cached ones even
					when lower (the hardware or its settings changed) */
	int no_cache;                /* in: neither read nor write the cached spec */
	struct ks_spec_measure bw, fma; /* out: this run's probes (before the cached best) */
	double bw_gbps, fma_gflops;  /* out: this run's figures */
	int kept;                    /* out: figures taken from the cache (higher than new) */
	char cache_path[4096];       /* out: the cached spec ("" with no_cache) */
	char cache_error[256];       /* out: why it could not be read or written ("" if fine) */
};
int ks_spec_detect_host_ex(struct ks_spec *out, struct ks_detect_opts *o, struct ks_error *e);

/* ---- roofs and their provenance ------------------------------------------------------ */

/* the measure of field's value when it was measured (probe set), else NULL */
const struct ks_spec_measure *ks_spec_measure_of(const struct ks_spec *s, const char *field);
/* 1 when the load during the probe was above the core count: it shared the CPUs with other
 * work and its figure may be low (so a "% of roofline" against it reads high) */
int ks_spec_measure_loaded(const struct ks_spec_measure *m);
/* "measured 2026-12-08 14:03 UTC (age 3.2 h) by the memcpy probe at load 0.4 on 2 cores
 * (1-minute load average 2.9)", then "; kept from an earlier detection" and "; the load was
 * above the core count, so the figure may be low" where they apply.  now > 0 adds the
 * age at that unix time (a run's start); 0 leaves it out.  "" for a NULL or unmeasured m. */
void ks_spec_measure_text(const struct ks_spec_measure *m, double now, char *out, size_t n);
/* m as one JSON object appended to out: {"at": ISO-8601 UTC, "unix", "probe", "load",
 * "loadavg", "cores", "loaded", "from_cache"}; nothing for a NULL or unmeasured m */
int ks_spec_measure_json(const struct ks_spec_measure *m, struct ks_buf *out);
/* back from that text; KS_EPARSE when it holds none */
int ks_spec_measure_parse_json(const char *text, struct ks_spec_measure *m);
/* Merge the cached spec of this machine into a fresh detection: every measured value of
 * cached that is higher than fresh's replaces it, with its provenance (from_cache 1).
 * Returns how many were replaced, or a negative error (out of memory). */
int ks_spec_keep_best(struct ks_spec *fresh, const struct ks_spec *cached);
/* $KSEARCH_CACHE/specs/host-HASH.yaml: the best measured figures of this machine (HASH of
 * its CPU model, CPU count and memory size, so a cache shared by machines keeps each's) */
int ks_spec_cache_path(char *out, size_t n);
/* "% of roofline" as text that never passes a figure above 100 off as a fraction:
 * "42%" (prose: "42% of the roofline"); above 100 "above the roof (5.4x)" (prose: "5.4x
 * the roofline: faster than the roof allows, so the roof is an underestimate (measured
 * low, e.g. on a loaded machine) or the data stayed in cache").  "" when pct is not a
 * positive number. */
void ks_roof_pct_text(double pct, int prose, char *out, size_t n);

/* Renderings.  JSON: {"name":..., "fields": {"NAME": {"value":, "unit":, "source":,
 * "basis":, "note":}}, ...}.  YAML is a valid spec file (what `spec detect --save` writes).
 * Text is the compact form shown to an LLM. */
int ks_spec_to_json(const struct ks_spec *s, struct ks_buf *out, struct ks_error *e);
int ks_spec_to_yaml(const struct ks_spec *s, struct ks_buf *out, struct ks_error *e);
int ks_spec_to_text(const struct ks_spec *s, struct ks_buf *out);

/* ---- translation --------------------------------------------------------------------- */

enum ks_severity { KS_SEV_INFO, KS_SEV_WARN, KS_SEV_ERROR };
const char *ks_severity_name(enum ks_severity s);

/* One CUDA concept found in the source. */
struct ks_translate_use {
	char *concept;    /* id from the concept map: "shared_static" */
	char *title;      /* "__shared__ arrays" */
	char *equivalent; /* the target equivalent (text) */
	char *notes;      /* notes from the map, or NULL */
	char *constraints; /* the map's hard constraints for the concept ("; "-joined) or NULL */
	int nlines;
	int *lines;       /* 1-based line numbers (first 64 occurrences) */
	char *snippet;    /* the first matching source line, trimmed */
};

/* One violated or risky constraint. */
struct ks_translate_finding {
	enum ks_severity severity;
	char *check;   /* "smem_per_block", "threads_per_group", "warp_size", "fp64", "feature" */
	char *concept; /* concept id it belongs to, or NULL */
	int line;      /* 1-based, 0 when file-wide */
	char *message; /* "kernel 'k': 49152 B of __shared__ > 32768 B threadgroup limit" */
};

struct ks_translation {
	char *target;        /* "metal" | "cpu" | "opencl" */
	char *target_spec;   /* spec names or NULL */
	char *source_spec;
	int nuses;
	struct ks_translate_use *uses;
	int nfindings;
	struct ks_translate_finding *findings;
	int nerrors;         /* findings with KS_SEV_ERROR */
	/* ratios target/source (NaN when a spec or value is missing) */
	double bandwidth_ratio, f32_ratio, f16_matrix_ratio;
	double source_balance, target_balance; /* f32 FLOP per byte of DRAM bandwidth */
	char *ratio_text;    /* one paragraph explaining the ratios, or NULL */
	char *hints;         /* relevant sections of hints/<target>.md, or NULL */
};

void ks_translation_release(struct ks_translation *t);
/* Analyse a CUDA source for target ("metal", "cpu", "opencl").  Specs may be NULL; without
 * a target spec only spec-independent findings are reported. */
int ks_translate(const char *cuda_src, const char *target, const struct ks_spec *target_spec,
		 const struct ks_spec *source_spec, struct ks_translation *out,
		 struct ks_error *e);
int ks_translation_to_text(const struct ks_translation *t, struct ks_buf *out);
int ks_translation_to_json(const struct ks_translation *t, struct ks_buf *out,
			   struct ks_error *e);
/* Validate a concept map file (translate/cuda-to-*.yaml). */
int ks_conceptmap_validate_file(const char *path, struct ks_error *e);
/* The whole concept map for target as compact text (for the full context level). */
int ks_conceptmap_text(const char *target, struct ks_buf *out, struct ks_error *e);
/* hints/<target>.md; with concepts (NULL-terminated ids) only the sections whose
 * "Applies to:" line names one of them or "always".  KS_ENOTFOUND without a file. */
int ks_hints_text(const char *target, const char *const *concepts, struct ks_buf *out,
		  struct ks_error *e);

/* ---- reusable assertions ----------------------------------------------------------- */

/* The assertion file a task class uses: "reduction", "scan", "attention", "matmul"
 * (aliases: softmax -> reduction, selective_scan -> scan, gemm -> matmul); NULL if none. */
const char *ks_assertions_class(const char *task_class);
#define KS_ASSERT_PREFIX "assert:" /* names the checks a task gets from its class */
/* Append the class's check workloads to t->checks, named "assert:NAME".  A check that
 * cannot apply to this task (a named param or input it lacks) is skipped; the reasons are
 * logged at info level.  Checks already present by name are not added twice. */
int ks_assertions_apply(struct ks_task *t, struct ks_error *e);
/* Same, and appends one line "assert:NAME: skipped: REASON" per skipped check to skipped
 * (may be NULL).  *added (may be NULL) gets the number of checks appended. */
int ks_assertions_apply_ex(struct ks_task *t, struct ks_buf *skipped, int *added,
			   struct ks_error *e);
/* The class's properties in prose, then its checks (params, inputs, why); KS_ENOTFOUND for
 * a class without file. */
int ks_assertions_prose(const char *cls, struct ks_buf *out);
/* The properties alone (for prompts, which list the checks with the task's) */
int ks_assertions_properties(const char *cls, struct ks_buf *out);
/* Append why the class's check name (without KS_ASSERT_PREFIX) exists; KS_ENOTFOUND when the
 * class has no such check */
int ks_assertions_check_why(const char *cls, const char *name, struct ks_buf *out);
int ks_assertions_validate_file(const char *path, struct ks_error *e);

/* ---- context packs (what an LLM prompt includes) ----------------------------------- */

enum ks_context_level {
	KS_CONTEXT_NONE, /* the task only: nothing is added */
	KS_CONTEXT_SPEC, /* + the hardware spec */
	KS_CONTEXT_FULL, /* + concept map, hints, assertions, translation of an expert kernel */
};
/* "none" | "spec" | "full" */
int ks_context_level_parse(const char *text, enum ks_context_level *out);
const char *ks_context_level_name(enum ks_context_level l);
/* Append the text for level to out.  target: "metal", "cpu", "opencl" (backend names
 * "mlx" and "cuda" are accepted: mlx means metal; cuda has no translation map). */
int ks_context_pack(enum ks_context_level level, const char *task_class, const char *target,
		    const struct ks_spec *spec, const char *expert_cuda_src, struct ks_buf *out,
		    struct ks_error *e);

/* Validate any knowledge file by its folder (specs/, translate/, assertions/). */
int ks_knowledge_validate_file(const char *path, struct ks_error *e);

#endif
