/* Roofline ceilings for SUSPICIOUS and "% of roofline".  They must be upper bounds: a
 * legitimate kernel may never look faster than the hardware allows. */
#include <math.h>
#include <string.h>

#include "ksearch/eval.h"
#include "ksearch/knowledge.h"

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

void ks_roofline_fill(const struct ks_spec *s, struct ks_eval_opts *o)
{
	double gflops, gbps;
	ks_roofline_from_spec(s, &gflops, &gbps);
	if (o->peak_gflops <= 0)
		o->peak_gflops = gflops;
	if (o->peak_gbps <= 0)
		o->peak_gbps = gbps;
}
