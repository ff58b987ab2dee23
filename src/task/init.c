/* Input initialisers: parse the small fixed vocabulary of task.yaml and fill tensors from
 * the counter-based RNG.  Linked into the sandboxed runner too: depends only on libc, libm,
 * src/util/{error,buf,rng,chunks}.c. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/task.h"
#include "util/chunks.h"
#include "util/rng.h"

struct cursor {
	const char *s;
	size_t pos;
	int errpos;
	struct ks_error *e;
};

static void ws(struct cursor *c)
{
	while (c->s[c->pos] == ' ' || c->s[c->pos] == '\t')
		c->pos++;
}

static const char *what(struct cursor *c, char *buf, size_t n)
{
	if (!c->s[c->pos])
		return "end of text";
	buf[0] = '\'';
	buf[1] = c->s[c->pos];
	buf[2] = '\'';
	buf[3] = 0;
	(void)n;
	return buf;
}

static int fail(struct cursor *c, const char *expected)
{
	char b[8];
	c->errpos = (int)c->pos;
	return ks_error_set(c->e, KS_EPARSE, "expected %s, got %s", expected, what(c, b, sizeof(b)));
}

static int lit(struct cursor *c, const char *word)
{
	ws(c);
	size_t n = strlen(word);
	if (strncmp(c->s + c->pos, word, n))
		return 0;
	/* a word must not continue with more identifier characters */
	if (isalpha((unsigned char)word[n - 1]) &&
	    (isalnum((unsigned char)c->s[c->pos + n]) || c->s[c->pos + n] == '_'))
		return 0;
	c->pos += n;
	return 1;
}

/* [+-]digits[.digits][e[+-]digits] -- no hex, inf or nan */
static int number(struct cursor *c, double *out)
{
	ws(c);
	const char *s = c->s + c->pos;
	size_t n = 0, digits = 0;
	if (s[n] == '+' || s[n] == '-')
		n++;
	while (isdigit((unsigned char)s[n]))
		n++, digits++;
	if (s[n] == '.') {
		n++;
		while (isdigit((unsigned char)s[n]))
			n++, digits++;
	}
	if (!digits)
		return fail(c, "a number");
	if (s[n] == 'e' || s[n] == 'E') {
		size_t m = n + 1;
		if (s[m] == '+' || s[m] == '-')
			m++;
		if (!isdigit((unsigned char)s[m])) {
			c->pos += m;
			return fail(c, "digits in the exponent");
		}
		while (isdigit((unsigned char)s[m]))
			m++;
		n = m;
	}
	char buf[64];
	if (n >= sizeof(buf))
		return fail(c, "a shorter number");
	memcpy(buf, s, n);
	buf[n] = 0;
	*out = strtod(buf, NULL);
	c->pos += n;
	return 0;
}

/* "(a, b)" */
static int two_args(struct cursor *c, double *a, double *b)
{
	int rc;
	if (!lit(c, "("))
		return fail(c, "'('");
	if ((rc = number(c, a)))
		return rc;
	if (!lit(c, ","))
		return fail(c, "',' between the two arguments");
	if ((rc = number(c, b)))
		return rc;
	if (!lit(c, ")"))
		return fail(c, "')' after the second argument");
	return 0;
}

static int normal_call(struct cursor *c, struct ks_init *out)
{
	if (!lit(c, "normal"))
		return fail(c, "'normal(mean, std)'");
	size_t args = c->pos;
	int rc = two_args(c, &out->a, &out->b);
	if (!rc && !(out->b >= 0)) {
		c->pos = args;
		ws(c);
		c->errpos = (int)c->pos + 1;
		return ks_error_set(c->e, KS_EPARSE, "expected a standard deviation >= 0, got %g",
				    out->b);
	}
	return rc;
}

static int parse(struct cursor *c, struct ks_init *out)
{
	int rc;
	ws(c);
	size_t start = c->pos;
	out->a = out->b = 0;
	if (lit(c, "normal")) {
		c->pos = start;
		out->kind = KS_INIT_NORMAL;
		return normal_call(c, out);
	}
	if (lit(c, "uniform")) {
		out->kind = KS_INIT_UNIFORM;
		size_t args = c->pos;
		if ((rc = two_args(c, &out->a, &out->b)))
			return rc;
		if (!(out->a < out->b)) {
			c->pos = args;
			ws(c);
			c->errpos = (int)c->pos + 1;
			return ks_error_set(c->e, KS_EPARSE, "expected lo < hi in uniform(lo, hi)");
		}
		return 0;
	}
	if (lit(c, "randint")) {
		out->kind = KS_INIT_RANDINT;
		size_t args = c->pos;
		if ((rc = two_args(c, &out->a, &out->b)))
			return rc;
		if (out->a != trunc(out->a) || out->b != trunc(out->b) || !(out->a < out->b)) {
			c->pos = args;
			ws(c);
			c->errpos = (int)c->pos + 1;
			return ks_error_set(c->e, KS_EPARSE,
					    "expected integers lo < hi in randint(lo, hi)");
		}
		return 0;
	}
	if (lit(c, "softplus")) {
		out->kind = KS_INIT_SOFTPLUS_NORMAL;
		if (!lit(c, "("))
			return fail(c, "'('");
		if ((rc = normal_call(c, out)))
			return rc;
		if (!lit(c, ")"))
			return fail(c, "')' closing softplus(");
		return 0;
	}
	if (lit(c, "-exp")) {
		out->kind = KS_INIT_NEG_EXP_NORMAL;
		if (!lit(c, "("))
			return fail(c, "'('");
		if ((rc = normal_call(c, out)))
			return rc;
		if (!lit(c, ")"))
			return fail(c, "')' closing -exp(");
		return 0;
	}
	const char *s = c->s + c->pos;
	if (isdigit((unsigned char)s[0]) || s[0] == '.' || s[0] == '-' || s[0] == '+') {
		out->kind = KS_INIT_CONST;
		return number(c, &out->a);
	}
	return fail(c, "an initialiser: normal(m, s), uniform(lo, hi), softplus(normal(m, s)), "
		       "-exp(normal(m, s)), randint(lo, hi) or a number");
}

int ks_init_parse(const char *text, struct ks_init *out, int *errcol, struct ks_error *e)
{
	struct cursor c = {text ? text : "", 0, 0, e};
	struct ks_init tmp;
	int rc = parse(&c, &tmp);
	if (!rc) {
		ws(&c);
		if (c.s[c.pos])
			rc = fail(&c, "end of the initialiser");
	}
	if (errcol)
		*errcol = rc ? c.errpos + 1 : 0;
	if (rc)
		return rc;
	*out = tmp;
	return 0;
}

static double softplus(double x)
{
	return x > 30 ? x : log1p(exp(x));
}

/* the random variable of element i before the kind's transform: normal kinds draw
 * pairs, so a fill costs one Philox block per two elements */
static double transform(const struct ks_init *in, double z)
{
	switch (in->kind) {
	case KS_INIT_NORMAL:
		return in->a + in->b * z;
	case KS_INIT_SOFTPLUS_NORMAL:
		return softplus(in->a + in->b * z);
	case KS_INIT_NEG_EXP_NORMAL:
		return -exp(in->a + in->b * z);
	default:
		return z;
	}
}

void ks_init_fill_range(const struct ks_init *init, enum ks_dtype t, void *dst, size_t start,
			size_t n, uint64_t key, uint64_t seed)
{
	const double a = init->a, b = init->b;
	size_t end = start + n;
	switch (init->kind) {
	case KS_INIT_NORMAL:
	case KS_INIT_SOFTPLUS_NORMAL:
	case KS_INIT_NEG_EXP_NORMAL:
		/* element i is component i%2 of counter block i/2, wherever the range starts */
		for (size_t i = start & ~(size_t)1; i < end; i += 2) {
			double z[2];
			ks_rng_normal2(key, seed, i >> 1, z);
			if (i >= start)
				ks_dtype_store(t, dst, i, transform(init, z[0]));
			if (i + 1 < end)
				ks_dtype_store(t, dst, i + 1, transform(init, z[1]));
		}
		return;
	case KS_INIT_UNIFORM:
		for (size_t i = start; i < end; i++)
			ks_dtype_store(t, dst, i, a + (b - a) * ks_rng_uniform(key, seed, i));
		return;
	case KS_INIT_RANDINT:
		for (size_t i = start; i < end; i++) {
			double v = a + floor(ks_rng_uniform(key, seed, i) * (b - a));
			ks_dtype_store(t, dst, i, v >= b ? b - 1 : v);
		}
		return;
	case KS_INIT_CONST:
		for (size_t i = start; i < end; i++)
			ks_dtype_store(t, dst, i, a);
		return;
	}
}

void ks_init_fill(const struct ks_init *init, enum ks_dtype t, void *dst, size_t n,
		  uint64_t key, uint64_t seed)
{
	ks_init_fill_range(init, t, dst, 0, n, key, seed);
}

struct fill_job {
	const struct ks_init *init;
	enum ks_dtype t;
	void *dst;
	uint64_t key, seed;
};

static void fill_chunk(void *ctx, size_t c, size_t begin, size_t end)
{
	(void)c;
	const struct fill_job *j = ctx;
	ks_init_fill_range(j->init, j->t, j->dst, begin, end - begin, j->key, j->seed);
}

/* elements per chunk: even, so a normal pair never straddles two chunks (it would be
 * drawn twice, with the same result) */
#define FILL_CHUNK ((size_t)1 << 18)

void ks_init_fill_parallel(const struct ks_init *init, enum ks_dtype t, void *dst, size_t n,
			   uint64_t key, uint64_t seed)
{
	struct fill_job j = {init, t, dst, key, seed};
	ks_chunks_run(n, FILL_CHUNK, 0, fill_chunk, &j);
}
