/* Roofline ceilings for SUSPICIOUS and "% of roofline".  They must be upper bounds: a
 * legitimate kernel may never look faster than the hardware allows. */
#include <math.h>
#include <string.h>

#include "ksearch/eval.h"
#include "ksearch/knowledge.h"
#include "ksearch/task.h"

static double field(const struct ks_spec *s, const char *name)
{
	double v;
	return ks_spec_field(s, name, &v) == 0 && isfinite(v) && v > 0 ? v : 0;
}

void ks_roofline_from_spec(const struct ks_spec *s, double *gflops, double *gbps)
{
	*gflops = 0;
	*gbps = 0;
	if (s->kind && !strcmp(s->kind, "cpu")) {
		/* theoretical: cores x clock x turbo headroom x 2 FMA pipes x 2 flops x lanes.
		 * A measured FMA rate is not an upper bound (a loaded machine measures low),
		 * and the memory floor is left out: with a last-level cache shared by a whole
		 * host, no rotation guarantees DRAM traffic. */
		double cores = field(s, "cores"), mhz = field(s, "clock_mhz");
		double lanes = field(s, "simd_width");
		if (cores && mhz && lanes)
			*gflops = cores * mhz * 1e-3 * 1.8 * 2 * 2 * lanes;
		/* AMX: a 16x16x32 bf16 tile product (16384 flops) per 16 cycles per core, 1024
		 * flops per cycle, 16 times a 16-lane FMA pair; int8 tiles twice that */
		if (cores && mhz && ks_spec_has_feature(s, "amx"))
			*gflops = cores * mhz * 1e-3 * 1.8 * 2048;
		return;
	}
	static const char *const peaks[] = {"peak_gflops_f32", "peak_gflops_f16", "peak_gflops_bf16",
					    "peak_gflops_tf32_matrix", "peak_gflops_f16_matrix",
					    "peak_gflops_bf16_matrix"};
	for (size_t i = 0; i < sizeof(peaks) / sizeof(peaks[0]); i++)
		if (field(s, peaks[i]) > *gflops)
			*gflops = field(s, peaks[i]);
	*gbps = field(s, "mem_bandwidth_gbps");
}

/* the first positive of a, b, c */
static double first(double a, double b, double c)
{
	return a > 0 ? a : b > 0 ? b : c;
}

static void set_if_unset(double *dst, double v)
{
	if (*dst <= 0)
		*dst = v;
}

void ks_roofline_fill(const struct ks_spec *s, struct ks_eval_opts *o)
{
	double gflops, gbps;
	ks_roofline_from_spec(s, &gflops, &gbps);
	set_if_unset(&o->peak_gflops, gflops);
	set_if_unset(&o->peak_gbps, gbps);
	/* the roofs "% of roofline" refers to: per dtype, and a memory roof on every backend */
	double f32, f16, bf16;
	if (s->kind && !strcmp(s->kind, "cpu")) {
		/* two FMA pipes per core at the listed clock, unless spec detect measured it */
		double cores = field(s, "cores"), mhz = field(s, "clock_mhz");
		double lanes = field(s, "simd_width");
		double fma = cores * mhz * 1e-3 * 2 * 2 * lanes;
		f32 = first(field(s, "peak_gflops_f32"), fma, 0);
		f16 = first(field(s, "peak_gflops_f16"), f32, 0);
		bf16 = field(s, "peak_gflops_bf16");
		if (bf16 <= 0 && ks_spec_has_feature(s, "amx") && cores && mhz)
			bf16 = cores * mhz * 1e-3 * 1024; /* one 16x16x32 tile product per 16 cycles */
		else if (bf16 <= 0 && ks_spec_has_feature(s, "avx512_bf16"))
			bf16 = 2 * f32; /* dot-product pairs */
		bf16 = first(bf16, f32, 0);
	} else {
		f32 = first(field(s, "peak_gflops_f32"), gflops, 0);
		f16 = first(field(s, "peak_gflops_f16_matrix"), field(s, "peak_gflops_f16"), f32);
		bf16 = first(field(s, "peak_gflops_bf16_matrix"), field(s, "peak_gflops_bf16"), f32);
	}
	set_if_unset(&o->roof_gflops_f32, f32);
	set_if_unset(&o->roof_gflops_f16, f16);
	set_if_unset(&o->roof_gflops_bf16, bf16);
	set_if_unset(&o->roof_gbps, field(s, "mem_bandwidth_gbps"));
}

double ks_roofline_attainable(const struct ks_eval_opts *o, enum ks_dtype dt, double flops,
			      double bytes)
{
	double roof = dt == KS_DT_BF16 ? o->roof_gflops_bf16
		      : dt == KS_DT_F16 ? o->roof_gflops_f16
					: o->roof_gflops_f32;
	roof = first(roof, o->peak_gflops, 0);
	double bw = first(o->roof_gbps, o->peak_gbps, 0);
	if (!(flops > 0))
		return 0;
	if (!(bytes > 0) || !(bw > 0))
		return roof;
	double mem = flops / bytes * bw; /* arithmetic intensity x memory roof */
	return roof > 0 && roof < mem ? roof : mem;
}
