/* dtypes: names, sizes and scalar conversions, including
 * IEEE binary16 and bfloat16 with round-to-nearest-even (how each kernel language spells a
 * dtype is in its struct ks_abi, src/backend/).  Linked into the sandboxed runner
 * too: depends only on libc, libm and src/util/{error,buf}.c. */
#include <math.h>
#include <string.h>

#include "ksearch/task.h"

static const struct {
	const char *name;
	size_t size;
} dtypes[] = {
	[KS_DT_F32] = {"f32", 4}, [KS_DT_F64] = {"f64", 8},  [KS_DT_F16] = {"f16", 2},
	[KS_DT_BF16] = {"bf16", 2}, [KS_DT_I32] = {"i32", 4}, [KS_DT_I64] = {"i64", 8},
};

#define NDTYPES (sizeof(dtypes) / sizeof(dtypes[0]))
_Static_assert(NDTYPES == KS_NDTYPES, "KS_NDTYPES counts the dtypes");

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

/* Encode v as a binary float with ebits exponent and mbits mantissa bits (sign on top),
 * rounding to nearest even directly from the bits of the double, so there is no double
 * rounding.  A carry out of the mantissa moves into the exponent by plain addition, which
 * is also how the largest finite value rounds up to infinity. */
static uint16_t encode_small(double v, int ebits, int mbits)
{
	uint64_t u;
	memcpy(&u, &v, sizeof(u));
	const uint32_t sign = (uint32_t)(u >> 63) << (ebits + mbits);
	const uint32_t inf = ((1u << ebits) - 1) << mbits;
	const int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias;
	const int e = (int)((u >> 52) & 0x7ff);
	const uint64_t frac = u & ((1ull << 52) - 1);
	if (e == 0x7ff)
		return (uint16_t)(sign | inf | (frac ? 1u << (mbits - 1) : 0));
	const int E = e - 1023;
	if (E > bias)
		return (uint16_t)(sign | inf);
	uint64_t sig;
	int shift;
	uint32_t base;
	if (E >= emin) {
		sig = frac;
		shift = 52 - mbits;
		base = (uint32_t)(E + bias) << mbits;
	} else {
		/* subnormal in the small format (double subnormals are far below its range) */
		shift = 52 - mbits + (emin - E);
		if (e == 0 || shift > 53)
			return (uint16_t)sign;
		sig = frac | (1ull << 52);
		base = 0;
	}
	uint64_t mant = sig >> shift, rem = sig & ((1ull << shift) - 1), half = 1ull << (shift - 1);
	if (rem > half || (rem == half && (mant & 1)))
		mant++;
	uint32_t bits = base + (uint32_t)mant;
	if (bits > inf)
		bits = inf;
	return (uint16_t)(sign | bits);
}

static double decode_small(uint16_t h, int ebits, int mbits)
{
	const int bias = (1 << (ebits - 1)) - 1;
	const uint32_t emask = (1u << ebits) - 1, mmask = (1u << mbits) - 1;
	uint32_t e = (h >> mbits) & emask, m = h & mmask;
	uint64_t sign = (uint64_t)((h >> (ebits + mbits)) & 1) << 63, u;
	if (e == emask) {
		u = sign | 0x7ff0000000000000ull | ((uint64_t)m << (52 - mbits));
	} else if (e == 0) {
		double v = ldexp((double)m, 1 - bias - mbits);
		return sign ? -v : v;
	} else {
		u = sign | (uint64_t)(e - (uint32_t)bias + 1023) << 52 | (uint64_t)m << (52 - mbits);
	}
	double v;
	memcpy(&v, &u, sizeof(v));
	return v;
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

/* NaN payloads no arithmetic produces (x86 and ARM make the default quiet NaN) */
#define POISON_F32 0x7fc0a5a5u
#define POISON_F64 0x7ff8a5a5a5a5a5a5ull
#define POISON_F16 0x7e5au
#define POISON_BF16 0x7fe5u
#define POISON_BYTE 0xa5

void ks_dtype_poison(enum ks_dtype t, void *base, size_t n)
{
	switch (t) {
	case KS_DT_F32:
		for (size_t i = 0; i < n; i++) {
			uint32_t u = POISON_F32;
			memcpy((char *)base + 4 * i, &u, 4);
		}
		return;
	case KS_DT_F64:
		for (size_t i = 0; i < n; i++) {
			uint64_t u = POISON_F64;
			memcpy((char *)base + 8 * i, &u, 8);
		}
		return;
	case KS_DT_F16:
	case KS_DT_BF16:
		for (size_t i = 0; i < n; i++)
			((uint16_t *)base)[i] = t == KS_DT_F16 ? POISON_F16 : POISON_BF16;
		return;
	case KS_DT_I32:
	case KS_DT_I64:
		memset(base, POISON_BYTE, n * ks_dtype_size(t));
		return;
	}
}

int ks_dtype_is_poison(enum ks_dtype t, const void *base, size_t i)
{
	switch (t) {
	case KS_DT_F32: {
		uint32_t u;
		memcpy(&u, (const char *)base + 4 * i, 4);
		return u == POISON_F32;
	}
	case KS_DT_F64: {
		uint64_t u;
		memcpy(&u, (const char *)base + 8 * i, 8);
		return u == POISON_F64;
	}
	case KS_DT_F16:
		return ((const uint16_t *)base)[i] == POISON_F16;
	case KS_DT_BF16:
		return ((const uint16_t *)base)[i] == POISON_BF16;
	case KS_DT_I32:
		return ((const uint32_t *)base)[i] == 0xa5a5a5a5u;
	case KS_DT_I64:
		return ((const uint64_t *)base)[i] == 0xa5a5a5a5a5a5a5a5ull;
	}
	return 0;
}
