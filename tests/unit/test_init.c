/* dtypes (names, C spellings, f16/bf16 conversions) and input initialisers. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/backend.h"
#include "ksearch/task.h"
#include "tap.h"
#include "util/rng.h"

static uint16_t f16(double v)
{
	uint16_t h;
	ks_dtype_store(KS_DT_F16, &h, 0, v);
	return h;
}

static uint16_t bf16(double v)
{
	uint16_t h;
	ks_dtype_store(KS_DT_BF16, &h, 0, v);
	return h;
}

/* reference bf16 rounding from a float (exact input, so one rounding) */
static uint16_t bf16_ref(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);
	return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

/* 1 when ks_dtype_store agrees with the compiler's own double -> _Float16 conversion on
 * random doubles across the f16 range, 0 on a mismatch, -1 without _Float16 */
#ifdef __FLT16_MAX__
static int f16_cast_agrees(void)
{
	for (uint64_t i = 0; i < 200000; i++) {
		double v = ldexp(ks_rng_uniform(9, 9, i) * 2 - 1, (int)(i % 44) - 28);
		_Float16 c = (_Float16)v;
		uint16_t cb;
		memcpy(&cb, &c, 2);
		if (cb != f16(v)) {
			printf("# mismatch at %.17g: %04x vs %04x\n", v, cb, f16(v));
			return 0;
		}
	}
	return 1;
}
#else
static int f16_cast_agrees(void)
{
	return -1;
}
#endif

static void init_ok(const char *text, enum ks_init_kind kind, double a, double b)
{
	struct ks_init in;
	struct ks_error e = {0};
	int col = -1;
	int rc = ks_init_parse(text, &in, &col, &e);
	ok(rc == 0 && in.kind == kind && in.a == a && in.b == b && col == 0,
	   "init '%s' parses (rc %d kind %d a %g b %g %s)", text, rc, in.kind, in.a, in.b, e.msg);
}

static void init_bad(const char *text, int want_col, const char *want)
{
	struct ks_init in;
	struct ks_error e = {0};
	int col = -1;
	int rc = ks_init_parse(text, &in, &col, &e);
	ok(rc == KS_EPARSE && col == want_col && strstr(e.msg, want),
	   "init '%s' fails at column %d with '%s' (col %d, '%s')", text, want_col, want, col,
	   e.msg);
}

int main(void)
{
	/* names, sizes, spellings */
	{
		static const char *names[] = {"f32", "f64", "f16", "bf16", "i32", "i64"};
		static const size_t sizes[] = {4, 8, 2, 2, 4, 8};
		int good = 1;
		for (int i = 0; i < 6; i++) {
			enum ks_dtype t;
			good &= !ks_dtype_parse(names[i], &t) && (int)t == i &&
				!strcmp(ks_dtype_name(t), names[i]) && ks_dtype_size(t) == sizes[i];
		}
		ok(good, "dtype names round-trip with sizes");
		enum ks_dtype t;
		ok(ks_dtype_parse("float32", &t) == KS_EPARSE, "unknown dtype rejected");
		is_str(ks_dtype_ctype(KS_DT_F16, "c"), "_Float16", "c f16");
		is_str(ks_dtype_ctype(KS_DT_BF16, "c"), "uint16_t", "c bf16");
		is_str(ks_dtype_ctype(KS_DT_I64, "c"), "int64_t", "c i64");
		is_str(ks_dtype_ctype(KS_DT_F16, "cuda"), "__half", "cuda f16");
		is_str(ks_dtype_ctype(KS_DT_BF16, "cuda"), "__nv_bfloat16", "cuda bf16");
		is_str(ks_dtype_ctype(KS_DT_F16, "metal"), "half", "metal f16");
		is_str(ks_dtype_ctype(KS_DT_BF16, "metal"), "bfloat", "metal bf16");
		is_str(ks_dtype_ctype(KS_DT_F64, "metal"), "double", "metal f64");
		ok(ks_dtype_ctype(KS_DT_F32, "fortran") == NULL, "unknown language gives NULL");
	}
	/* f16: IEEE binary16, round to nearest even, subnormals, inf, nan */
	{
		is_int(f16(1.0), 0x3c00, "f16 1.0");
		is_int(f16(-2.0), 0xc000, "f16 -2.0");
		is_int(f16(0.1), 0x2e66, "f16 0.1");
		is_int(f16(65504.0), 0x7bff, "f16 max");
		is_int(f16(65519.99), 0x7bff, "f16 just below the overflow midpoint");
		is_int(f16(65520.0), 0x7c00, "f16 overflow midpoint rounds to inf");
		is_int(f16(1e10), 0x7c00, "f16 large -> inf");
		is_int(f16(-INFINITY), 0xfc00, "f16 -inf");
		ok((f16(NAN) & 0x7c00) == 0x7c00 && (f16(NAN) & 0x3ff), "f16 nan stays nan");
		is_int(f16(-0.0), 0x8000, "f16 -0");
		is_int(f16(ldexp(1, -14)), 0x0400, "f16 smallest normal");
		is_int(f16(ldexp(1, -24)), 0x0001, "f16 smallest subnormal");
		is_int(f16(ldexp(1, -25)), 0x0000, "f16 half the smallest subnormal ties to 0");
		is_int(f16(ldexp(1.0001, -25)), 0x0001, "f16 just above the tie rounds up");
		is_int(f16(ldexp(3, -25)), 0x0002, "f16 1.5 subnormal units tie to even 2");
		is_int(f16(ldexp(1023.5, -24)), 0x0400, "f16 subnormal rounds up into normal");
		is_int(f16(1.0 + ldexp(1, -11)), 0x3c00, "f16 tie rounds to even (down)");
		is_int(f16(1.0 + 3 * ldexp(1, -11)), 0x3c02, "f16 tie rounds to even (up)");
		is_int(f16(2047.0 / 1024.0 + ldexp(1, -11)), 0x4000, "f16 mantissa carry");
		/* every finite pattern decodes and re-encodes to itself */
		int rt = 1;
		for (uint32_t h = 0; h < 65536; h++) {
			uint16_t x = (uint16_t)h;
			double v = ks_dtype_load(KS_DT_F16, &x, 0);
			if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
				rt &= isnan(v) != 0;
			else
				rt &= f16(v) == x;
		}
		ok(rt, "f16 round trip of all 65536 patterns");
		/* agree with the compiler's _Float16 conversion on random doubles */
		int agree = f16_cast_agrees();
		if (agree < 0)
			tap_skip("f16 agrees with _Float16 casts: the compiler has no _Float16");
		else
			ok(agree, "f16 agrees with _Float16 casts");
	}
	/* bf16 */
	{
		is_int(bf16(1.0), 0x3f80, "bf16 1.0");
		is_int(bf16(-1.5), 0xbfc0, "bf16 -1.5");
		is_int(bf16(1.0 + ldexp(1, -8)), 0x3f80, "bf16 tie to even (down)");
		is_int(bf16(1.0 + 3 * ldexp(1, -8)), 0x3f82, "bf16 tie to even (up)");
		is_int(bf16(FLT_MAX), 0x7f80, "bf16 FLT_MAX rounds to inf");
		is_int(bf16(INFINITY), 0x7f80, "bf16 inf");
		ok((bf16(NAN) & 0x7f80) == 0x7f80 && (bf16(NAN) & 0x7f), "bf16 nan stays nan");
		is_int(bf16(ldexp(1, -133)), 0x0001, "bf16 smallest subnormal");
		int agree = 1;
		for (uint64_t i = 0; i < 200000; i++) {
			uint32_t u = (uint32_t)ks_rng_u64(5, 5, i);
			float f;
			memcpy(&f, &u, 4);
			if (isnan(f))
				continue;
			if (bf16(f) != bf16_ref(f)) {
				agree = 0;
				printf("# mismatch at %a: %04x vs %04x\n", (double)f, bf16(f), bf16_ref(f));
				break;
			}
		}
		ok(agree, "bf16 agrees with the float bit-trick RNE on random floats");
		uint16_t x = 0x4049; /* 3.140625 */
		ok(ks_dtype_load(KS_DT_BF16, &x, 0) == 3.140625, "bf16 load");
	}
	/* integers and plain floats */
	{
		int32_t i32[2];
		int64_t i64[1];
		float f32[1];
		ks_dtype_store(KS_DT_I32, i32, 0, 2.6);
		ks_dtype_store(KS_DT_I32, i32, 1, 1e12);
		ks_dtype_store(KS_DT_I64, i64, 0, -7.0);
		ks_dtype_store(KS_DT_F32, f32, 0, 0.1);
		ok(i32[0] == 3 && i32[1] == 2147483647 && i64[0] == -7 && f32[0] == 0.1f,
		   "integer stores round and clamp; f32 store");
		ok(ks_dtype_load(KS_DT_I32, i32, 1) == 2147483647.0, "i32 load");
	}
	/* initialiser grammar */
	init_ok("normal(0, 3)", KS_INIT_NORMAL, 0, 3);
	init_ok("  normal( -1.5 ,2e-1 ) ", KS_INIT_NORMAL, -1.5, 0.2);
	init_ok("uniform(-1,1)", KS_INIT_UNIFORM, -1, 1);
	init_ok("softplus(normal(0, 1))", KS_INIT_SOFTPLUS_NORMAL, 0, 1);
	init_ok("-exp(normal(0.5, 0.25))", KS_INIT_NEG_EXP_NORMAL, 0.5, 0.25);
	init_ok("randint(0, 10)", KS_INIT_RANDINT, 0, 10);
	init_ok("0.5", KS_INIT_CONST, 0.5, 0);
	init_ok("-2", KS_INIT_CONST, -2, 0);
	init_ok("1e3", KS_INIT_CONST, 1000, 0);
	init_bad("", 1, "expected an initialiser");
	init_bad("gauss(0, 1)", 1, "expected an initialiser");
	init_bad("normal 0, 1)", 8, "expected '('");
	init_bad("normal(0 1)", 10, "expected ',' between the two arguments");
	init_bad("normal(0, 1", 12, "expected ')' after the second argument");
	init_bad("normal(0, x)", 11, "expected a number");
	init_bad("normal(0, -1)", 8, "standard deviation >= 0");
	init_bad("uniform(1, 1)", 9, "lo < hi");
	init_bad("randint(0, 2.5)", 9, "integers lo < hi");
	init_bad("softplus(uniform(0, 1))", 10, "expected 'normal(mean, std)'");
	init_bad("softplus(normal(0, 1)", 22, "')' closing softplus(");
	init_bad("-exp(normal(0,1)) + 1", 19, "expected end of the initialiser");
	init_bad("normal(0, 1) x", 14, "expected end of the initialiser");
	init_bad("1e", 3, "digits in the exponent");
	init_bad("nan", 1, "expected an initialiser");
	/* filling: deterministic, depends on (key, seed, i) only, right distribution */
	{
		enum { N = 100000 };
		float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float));
		struct ks_init in;
		ks_init_parse("normal(2, 3)", &in, NULL, NULL);
		ks_init_fill(&in, KS_DT_F32, a, N, 77, 1);
		ks_init_fill(&in, KS_DT_F32, b, N, 77, 1);
		ok(!memcmp(a, b, N * sizeof(float)), "same key and seed give the same tensor");
		ok(a[12345] == (float)(2 + 3 * ks_rng_normal(77, 1, 12345)),
		   "element i is value i of the stream");
		ks_init_fill(&in, KS_DT_F32, b, 100, 77, 1);
		ok(!memcmp(a, b, 100 * sizeof(float)), "a prefix does not depend on n");
		ks_init_fill(&in, KS_DT_F32, b, N, 77, 2);
		ok(memcmp(a, b, N * sizeof(float)), "another seed gives another tensor");
		ks_init_fill(&in, KS_DT_F32, b, N, 78, 1);
		ok(memcmp(a, b, N * sizeof(float)), "another key gives another tensor");
		double s = 0, s2 = 0;
		for (int i = 0; i < N; i++)
			s += a[i], s2 += (double)a[i] * a[i];
		double m = s / N, sd = sqrt(s2 / N - m * m);
		ok(fabs(m - 2) < 0.05 && fabs(sd - 3) < 0.05, "normal(2, 3): mean %.3f sd %.3f", m,
		   sd);

		ks_init_parse("uniform(-1, 3)", &in, NULL, NULL);
		ks_init_fill(&in, KS_DT_F32, a, N, 5, 0);
		float lo = 9, hi = -9;
		for (int i = 0; i < N; i++)
			lo = fminf(lo, a[i]), hi = fmaxf(hi, a[i]);
		ok(lo >= -1 && hi <= 3 && lo < -0.99 && hi > 2.99, "uniform(-1, 3) range %g..%g",
		   lo, hi);

		int32_t *r = (int32_t *)a;
		ks_init_parse("randint(-2, 3)", &in, NULL, NULL);
		ks_init_fill(&in, KS_DT_I32, r, N, 5, 0);
		int seen[5] = {0}, inrange = 1;
		for (int i = 0; i < N; i++) {
			inrange &= r[i] >= -2 && r[i] < 3;
			if (r[i] >= -2 && r[i] < 3)
				seen[r[i] + 2]++;
		}
		ok(inrange && seen[0] && seen[4], "randint(-2, 3) gives every integer in [-2, 3)");

		ks_init_parse("softplus(normal(0, 4))", &in, NULL, NULL);
		ks_init_fill(&in, KS_DT_F32, a, N, 5, 0);
		int pos = 1;
		for (int i = 0; i < N; i++)
			pos &= a[i] > 0;
		ok(pos, "softplus(normal) is positive");
		ks_init_parse("-exp(normal(0, 1))", &in, NULL, NULL);
		ks_init_fill(&in, KS_DT_F32, a, N, 5, 0);
		int neg = 1;
		for (int i = 0; i < N; i++)
			neg &= a[i] < 0;
		ok(neg, "-exp(normal) is negative");

		uint16_t h[4];
		ks_init_parse("0.1", &in, NULL, NULL);
		ks_init_fill(&in, KS_DT_F16, h, 4, 5, 0);
		ok(h[0] == 0x2e66 && h[3] == 0x2e66, "constant written as f16 bits");
		ks_init_parse("normal(0, 1)", &in, NULL, NULL);
		ks_init_fill(&in, KS_DT_BF16, h, 4, 5, 0);
		ok(h[2] == bf16(ks_rng_normal(5, 0, 2)), "bf16 fill rounds the stream value");
		free(a);
		free(b);
	}
	return tap_done();
}
