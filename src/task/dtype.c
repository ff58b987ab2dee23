/* dtypes: names, sizes, spellings per kernel language and scalar conversions, including
 * IEEE binary16 and bfloat16 with round-to-nearest-even.  Linked into the sandboxed runner
 * too: depends only on libc, libm and src/util/{error,buf}.c. */
#include <math.h>
#include <string.h>

#include "ksearch/task.h"

static const struct {
	const char *name;
	size_t size;
	const char *c, *cuda, *metal;
} dtypes[] = {
	[KS_DT_F32] = {"f32", 4, "float", "float", "float"},
	[KS_DT_F64] = {"f64", 8, "double", "double", "double"},
	[KS_DT_F16] = {"f16", 2, "_Float16", "__half", "half"},
	[KS_DT_BF16] = {"bf16", 2, "uint16_t", "__nv_bfloat16", "bfloat"},
	[KS_DT_I32] = {"i32", 4, "int32_t", "int32_t", "int"},
	[KS_DT_I64] = {"i64", 8, "int64_t", "int64_t", "long"},
};

#define NDTYPES (sizeof(dtypes) / sizeof(dtypes[0]))

static int valid(enum ks_dtype t)
{
	return (unsigned)t < NDTYPES;
}

size_t ks_dtype_size(enum ks_dtype t)
{
	return valid(t) ? dtypes[t].size : 0;
}

const char *ks_dtype_name(enum ks_dtype t)
{
	return valid(t) ? dtypes[t].name : "?";
}

int ks_dtype_parse(const char *name, enum ks_dtype *out)
{
	for (size_t i = 0; name && i < NDTYPES; i++)
		if (!strcmp(name, dtypes[i].name)) {
			*out = (enum ks_dtype)i;
			return 0;
		}
	return KS_EPARSE;
}

const char *ks_dtype_ctype(enum ks_dtype t, const char *lang)
{
	if (!valid(t))
		return NULL;
	if (!lang || !strcmp(lang, "c"))
		return dtypes[t].c;
	if (!strcmp(lang, "cuda"))
		return dtypes[t].cuda;
	if (!strcmp(lang, "metal"))
		return dtypes[t].metal;
	return NULL;
}

/* Encode v as a binary float with ebits exponent and mbits mantissa bits (sign on top),
 * rounding to nearest even directly from double, so there is no double rounding. */
static uint16_t encode_small(double v, int ebits, int mbits)
{
	const uint32_t sign = signbit(v) ? 1u << (ebits + mbits) : 0;
	const uint32_t inf = ((1u << ebits) - 1) << mbits;
	const int bias = (1 << (ebits - 1)) - 1;
	if (isnan(v))
		return (uint16_t)(sign | inf | 1u << (mbits - 1));
	double a = fabs(v);
	if (isinf(a))
		return (uint16_t)(sign | inf);
	uint32_t bits;
	if (a < ldexp(1.0, 1 - bias)) {
		/* subnormal: units of 2^(1-bias-mbits); rounding up to 2^mbits lands on the
		 * smallest normal, whose encoding is exactly that integer */
		bits = (uint32_t)nearbyint(ldexp(a, bias - 1 + mbits));
	} else {
		int ex;
		frexp(a, &ex); /* a = f * 2^ex, f in [0.5, 1) */
		int e = ex - 1;
		if (e + bias >= (1 << ebits) - 1)
			return (uint16_t)(sign | inf);
		double m = nearbyint(ldexp(a, mbits - e)); /* in [2^mbits, 2^(mbits+1)] */
		/* m == 2^(mbits+1) carries into the exponent, which the sum does naturally */
		bits = ((uint32_t)(e + bias) << mbits) + ((uint32_t)m - (1u << mbits));
		if (bits >= inf)
			bits = inf;
	}
	return (uint16_t)(sign | bits);
}

static double decode_small(uint16_t h, int ebits, int mbits)
{
	const int bias = (1 << (ebits - 1)) - 1;
	const uint32_t emask = (1u << ebits) - 1, mmask = (1u << mbits) - 1;
	uint32_t e = (h >> mbits) & emask, m = h & mmask;
	double s = (h >> (ebits + mbits)) & 1 ? -1.0 : 1.0;
	if (e == emask)
		return m ? NAN : s * INFINITY;
	if (e == 0)
		return s * ldexp((double)m, 1 - bias - mbits);
	return s * ldexp((double)(m | (1u << mbits)), (int)e - bias - mbits);
}

static int64_t to_int(double v, double lo, double hi)
{
	if (isnan(v))
		return 0;
	v = nearbyint(v);
	return (int64_t)(v < lo ? lo : v > hi ? hi : v);
}

double ks_dtype_load(enum ks_dtype t, const void *base, size_t i)
{
	switch (t) {
	case KS_DT_F32:
		return ((const float *)base)[i];
	case KS_DT_F64:
		return ((const double *)base)[i];
	case KS_DT_F16:
		return decode_small(((const uint16_t *)base)[i], 5, 10);
	case KS_DT_BF16:
		return decode_small(((const uint16_t *)base)[i], 8, 7);
	case KS_DT_I32:
		return ((const int32_t *)base)[i];
	case KS_DT_I64:
		return (double)((const int64_t *)base)[i];
	}
	return NAN;
}

void ks_dtype_store(enum ks_dtype t, void *base, size_t i, double v)
{
	switch (t) {
	case KS_DT_F32:
		((float *)base)[i] = (float)v;
		return;
	case KS_DT_F64:
		((double *)base)[i] = v;
		return;
	case KS_DT_F16:
		((uint16_t *)base)[i] = encode_small(v, 5, 10);
		return;
	case KS_DT_BF16:
		((uint16_t *)base)[i] = encode_small(v, 8, 7);
		return;
	case KS_DT_I32:
		((int32_t *)base)[i] = (int32_t)to_int(v, -2147483648.0, 2147483647.0);
		return;
	case KS_DT_I64:
		((int64_t *)base)[i] = to_int(v, -9223372036854775808.0, 9223372036854774784.0);
		return;
	}
}
