/* Recursive-descent expression evaluator (contract in expr.h).
 *
 * Grammar, lowest precedence first (C precedence, ?: right-associative):
 *   cond  := or [ '?' cond ':' cond ]
 *   or    := and { '||' and }
 *   and   := eq { '&&' eq }
 *   eq    := rel { ('==' | '!=') rel }
 *   rel   := shift { ('<' | '<=' | '>' | '>=') shift }
 *   shift := add { ('<<' | '>>') add }
 *   add   := mul { ('+' | '-') mul }
 *   mul   := unary { ('*' | '/' | '%') unary }
 *   unary := ('-' | '+' | '!') unary | primary
 *   primary := NUMBER | NAME | NAME '(' cond { ',' cond } ')' | '(' cond ')'
 *            | 'sizeof' '(' TYPE ')'
 *
 * NUMBER is a C literal: decimal, 0x hexadecimal, a fraction or an exponent, with the
 * suffixes u, l, ul, ll, ull (integers) or f (floats) ignored, so constant expressions copied
 * from CUDA or C sources evaluate as written.  sizeof(TYPE) asks the lookup for the name
 * "sizeof:TYPE".
 *
 * Every value carries an "integral" flag: integer literals, integer-valued names and the
 * results of integer operations are integral; / and % on two integral operands truncate
 * like C.  Branches not taken (?:, && and ||) are still parsed and their names resolved,
 * so a typo is reported wherever it is, but they cannot fail on division by zero. */
#include "util/expr.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPR_MAX_DEPTH 128
#define EXPR_MAX_ARGS 8

struct val {
	double v;
	int integral;
};

struct parser {
	const char *src;
	size_t pos;
	ks_expr_lookup_fn lookup;
	void *ctx;
	int skip;  /* > 0 while inside a branch that is not taken */
	int depth;
	int errpos; /* byte offset of the failure */
	struct ks_error *e;
};

static int fail(struct parser *p, size_t at, int code, const char *fmt, const char *arg)
{
	p->errpos = (int)at;
	return ks_error_set(p->e, code, fmt, arg);
}

static void skip_ws(struct parser *p)
{
	while (p->src[p->pos] == ' ' || p->src[p->pos] == '\t' || p->src[p->pos] == '\n' ||
	       p->src[p->pos] == '\r')
		p->pos++;
}

/* consume the operator tok if it is next (and not the first half of a longer one) */
static int accept(struct parser *p, const char *tok)
{
	skip_ws(p);
	size_t n = strlen(tok);
	if (strncmp(p->src + p->pos, tok, n))
		return 0;
	char next = p->src[p->pos + n];
	/* '<' must not match "<=" or "<<", '!' must not match "!=", '&'... are only two-char */
	if (n == 1 && (tok[0] == '<' || tok[0] == '>' || tok[0] == '!' || tok[0] == '=') &&
	    (next == '=' || ((tok[0] == '<' || tok[0] == '>') && next == tok[0])))
		return 0;
	p->pos += n;
	return 1;
}

/* a short description of what is at the cursor, for "expected X, got Y" messages */
static const char *found(struct parser *p, char *buf, size_t n)
{
	char c = p->src[p->pos];
	if (!c)
		return "end of expression";
	snprintf(buf, n, "'%c'", c);
	return buf;
}

static int integral(double v)
{
	return isfinite(v) && v == trunc(v);
}

static struct val mkval(double v, int isint)
{
	struct val r = {v, isint && integral(v)};
	return r;
}

static int parse_cond(struct parser *p, struct val *out);

static int call_function(struct parser *p, const char *name, size_t len, size_t at,
			 struct val *args, int nargs, struct val *out)
{
	static const struct {
		const char *name;
		int min, max;
	} fns[] = {
		{"min", 2, EXPR_MAX_ARGS}, {"max", 2, EXPR_MAX_ARGS}, {"ceil_div", 2, 2},
		{"floor", 1, 1},           {"ceil", 1, 1},            {"sqrt", 1, 1},
		{"log2", 1, 1},            {"pow", 2, 2},             {"abs", 1, 1},
	};
	char fname[32];
	snprintf(fname, sizeof(fname), "%.*s", (int)(len < 31 ? len : 31), name);
	int which = -1;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (strlen(fns[i].name) == len && !strncmp(fns[i].name, name, len))
			which = (int)i;
	if (which < 0)
		return fail(p, at, KS_ENOTFOUND,
			    "unknown function '%s' (known: min, max, ceil_div, floor, ceil, sqrt, "
			    "log2, pow, abs)",
			    fname);
	if (nargs < fns[which].min || nargs > fns[which].max) {
		p->errpos = (int)at;
		if (fns[which].min == fns[which].max)
			return ks_error_set(p->e, KS_EPARSE, "'%s' takes %d argument%s, got %d",
					    fname, fns[which].min, fns[which].min == 1 ? "" : "s",
					    nargs);
		return ks_error_set(p->e, KS_EPARSE, "'%s' takes at least %d arguments, got %d",
				    fname, fns[which].min, nargs);
	}
	double a = args[0].v, b = nargs > 1 ? args[1].v : 0;
	int allint = 1;
	for (int i = 0; i < nargs; i++)
		allint &= args[i].integral;
	switch (which) {
	case 0:
	case 1: {
		double r = a;
		for (int i = 1; i < nargs; i++)
			r = which == 0 ? fmin(r, args[i].v) : fmax(r, args[i].v);
		*out = mkval(r, allint);
		return 0;
	}
	case 2:
		if (b == 0) {
			if (p->skip) {
				*out = mkval(0, 1);
				return 0;
			}
			return fail(p, at, KS_EINVAL, "division by zero in '%s'", fname);
		}
		*out = mkval(ceil(a / b), 1);
		if (allint && fabs(a) < 9.0e15 && fabs(b) < 9.0e15) {
			int64_t x = (int64_t)a, y = (int64_t)b;
			int64_t q = x / y;
			if ((x % y != 0) && ((x < 0) == (y < 0)))
				q++;
			*out = mkval((double)q, 1);
		}
		return 0;
	case 3:
		*out = mkval(floor(a), 1);
		return 0;
	case 4:
		*out = mkval(ceil(a), 1);
		return 0;
	case 5:
		if (a < 0 && !p->skip)
			return fail(p, at, KS_EINVAL, "'%s' of a negative number", fname);
		*out = mkval(a < 0 ? 0 : sqrt(a), 0);
		return 0;
	case 6:
		if (a <= 0 && !p->skip)
			return fail(p, at, KS_EINVAL, "'%s' of a number that is not positive", fname);
		*out = mkval(a <= 0 ? 0 : log2(a), 0);
		return 0;
	case 7:
		*out = mkval(pow(a, b), allint && b >= 0);
		return 0;
	case 8:
		*out = mkval(fabs(a), allint);
		return 0;
	}
	return fail(p, at, KS_EINVARIANT, "unhandled function '%s'", fname);
}

/* length of a C integer suffix (u, l, ul, lu, ll, ull, llu in any case) at s */
static size_t int_suffix(const char *s)
{
	size_t n = 0;
	int u = 0, l = 0;
	for (;;) {
		char c = s[n];
		if ((c == 'u' || c == 'U') && !u) {
			u = 1;
			n++;
		} else if ((c == 'l' || c == 'L') && !l) {
			l = 1;
			n += s[n + 1] == c ? 2 : 1;
		} else {
			return n;
		}
	}
}

/* sizeof(TYPE), the cursor on '(': the lookup answers "sizeof:TYPE" */
static int parse_sizeof(struct parser *p, struct val *out)
{
	size_t open = p->pos++;
	skip_ws(p);
	size_t t = p->pos;
	while (p->src[p->pos] && p->src[p->pos] != ')' && p->src[p->pos] != '(')
		p->pos++;
	if (p->src[p->pos] != ')') {
		char fb[8];
		return fail(p, p->pos, KS_EPARSE, "expected ')' after the type in sizeof, got %s",
			    found(p, fb, sizeof(fb)));
	}
	size_t te = p->pos;
	while (te > t && isspace((unsigned char)p->src[te - 1]))
		te--;
	p->pos++;
	char name[96];
	snprintf(name, sizeof(name), "sizeof:%.*s", (int)(te - t < 80 ? te - t : 80), p->src + t);
	double v = 0;
	int rc = te > t && p->lookup ? p->lookup(name, strlen(name), &v, p->ctx) : KS_ENOTFOUND;
	if (rc)
		return fail(p, te > t ? t : open, KS_ENOTFOUND, "unknown type '%s' in sizeof",
			    name + 7);
	*out = mkval(v, 1);
	return 0;
}

/* the cursor moved to pos, and "expected ..., got <what is there>" (fmt has one %s) */
static int fail_expected(struct parser *p, size_t pos, const char *fmt)
{
	char fb[8];
	p->pos = pos;
	return fail(p, p->pos, KS_EPARSE, fmt, found(p, fb, sizeof(fb)));
}

/* a number that ends at s[n] (s = the source at at) must not run into a name */
static int number_end(struct parser *p, size_t at, size_t n)
{
	const char *s = p->src + at;
	if (isalnum((unsigned char)s[n]) || s[n] == '_')
		return fail_expected(p, at + n, "expected an operator after number, got %s");
	return 0;
}

/* 0x1F, with an integer suffix; the cursor on the '0' */
static int parse_hex(struct parser *p, struct val *out)
{
	size_t at = p->pos;
	const char *s = p->src + at;
	size_t n = 2;
	while (isxdigit((unsigned char)s[n]))
		n++;
	if (n == 2)
		return fail_expected(p, at + n, "expected hexadecimal digits, got %s");
	out->v = (double)strtoull(s, NULL, 16);
	out->integral = integral(out->v);
	n += int_suffix(s + n);
	int rc = number_end(p, at, n);
	if (rc)
		return rc;
	p->pos = at + n;
	return 0;
}

/* 12, 1.5, .5, 1e-3, with an integer suffix (integers) or f (fractions and exponents) */
static int parse_decimal(struct parser *p, struct val *out)
{
	size_t at = p->pos;
	const char *s = p->src + at;
	size_t n = 0;
	int isint = 1;
	while (isdigit((unsigned char)s[n]))
		n++;
	if (s[n] == '.') {
		isint = 0;
		n++;
		while (isdigit((unsigned char)s[n]))
			n++;
	}
	if (s[n] == 'e' || s[n] == 'E') {
		size_t m = n + 1;
		if (s[m] == '+' || s[m] == '-')
			m++;
		if (!isdigit((unsigned char)s[m]))
			return fail_expected(p, at + m, "expected digits in the exponent, got %s");
		while (isdigit((unsigned char)s[m]))
			m++;
		n = m;
		isint = 0;
	}
	size_t digits = n;
	if (isint)
		n += int_suffix(s + n);
	else if (s[n] == 'f' || s[n] == 'F')
		n++;
	int rc = number_end(p, at, n);
	if (rc)
		return rc;
	char num[64];
	if (digits >= sizeof(num))
		return fail(p, at, KS_EPARSE, "%s", "number too long");
	memcpy(num, s, digits);
	num[digits] = 0;
	out->v = strtod(num, NULL);
	out->integral = isint && integral(out->v);
	p->pos = at + n;
	return 0;
}

/* NAME(cond, ...), the cursor on '(': the arguments, then the function */
static int parse_call(struct parser *p, const char *name, size_t len, size_t at,
		      struct val *out)
{
	char fb[8];
	struct val args[EXPR_MAX_ARGS];
	int nargs = 0;
	p->pos++;
	for (;;) {
		struct val v;
		if (nargs == EXPR_MAX_ARGS)
			return fail(p, p->pos, KS_EPARSE, "%s", "too many arguments (at most 8)");
		int rc = parse_cond(p, &v);
		if (rc)
			return rc;
		args[nargs++] = v;
		if (accept(p, ","))
			continue;
		if (accept(p, ")"))
			break;
		return fail(p, p->pos, KS_EPARSE, "expected ',' or ')' after argument, got %s",
			    found(p, fb, sizeof(fb)));
	}
	return call_function(p, name, len, at, args, nargs, out);
}

/* a name (dots between its parts allowed), a call or sizeof(TYPE) */
static int parse_name(struct parser *p, struct val *out)
{
	size_t at = p->pos;
	const char *s = p->src + at;
	size_t n = 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '_' ||
	       (s[n] == '.' && (isalpha((unsigned char)s[n + 1]) || s[n + 1] == '_')))
		n++;
	p->pos = at + n;
	skip_ws(p);
	if (p->src[p->pos] == '(' && n == 6 && !strncmp(s, "sizeof", 6))
		return parse_sizeof(p, out);
	if (p->src[p->pos] == '(')
		return parse_call(p, s, n, at, out);
	double v = 0;
	int rc = p->lookup ? p->lookup(s, n, &v, p->ctx) : KS_ENOTFOUND;
	if (rc) {
		char name[96];
		snprintf(name, sizeof(name), "%.*s", (int)(n < 95 ? n : 95), s);
		if (rc == KS_ENOTFOUND)
			return fail(p, at, KS_ENOTFOUND, "unknown name '%s'", name);
		return fail(p, at, rc, "cannot resolve name '%s'", name);
	}
	*out = mkval(v, 1);
	return 0;
}

static int parse_primary(struct parser *p, struct val *out)
{
	char fb[8];
	skip_ws(p);
	const char *s = p->src + p->pos;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_hex(p, out);
	if (isdigit((unsigned char)s[0]) || (s[0] == '.' && isdigit((unsigned char)s[1])))
		return parse_decimal(p, out);
	if (isalpha((unsigned char)s[0]) || s[0] == '_')
		return parse_name(p, out);
	if (s[0] == '(') {
		p->pos++;
		int rc = parse_cond(p, out);
		if (rc)
			return rc;
		if (!accept(p, ")"))
			return fail(p, p->pos, KS_EPARSE, "expected ')', got %s",
				    found(p, fb, sizeof(fb)));
		return 0;
	}
	return fail(p, p->pos, KS_EPARSE, "expected a number, a name or '(', got %s",
		    found(p, fb, sizeof(fb)));
}

static int parse_unary(struct parser *p, struct val *out)
{
	if (++p->depth > EXPR_MAX_DEPTH)
		return fail(p, p->pos, KS_ELIMIT, "%s", "expression nested too deeply");
	int rc;
	if (accept(p, "-")) {
		rc = parse_unary(p, out);
		out->v = -out->v;
	} else if (accept(p, "+")) {
		rc = parse_unary(p, out);
	} else if (accept(p, "!")) {
		rc = parse_unary(p, out);
		*out = mkval(out->v == 0, 1);
	} else {
		rc = parse_primary(p, out);
	}
	p->depth--;
	return rc;
}

static int parse_mul(struct parser *p, struct val *out)
{
	int rc = parse_unary(p, out);
	while (!rc) {
		skip_ws(p);
		size_t at = p->pos;
		char op = p->src[at];
		if (op != '*' && op != '/' && op != '%')
			break;
		p->pos++;
		struct val r;
		if ((rc = parse_unary(p, &r)))
			break;
		int isint = out->integral && r.integral;
		if (op == '*') {
			*out = mkval(out->v * r.v, isint);
			continue;
		}
		if (r.v == 0) {
			if (!p->skip)
				return fail(p, at, KS_EINVAL, "%s", "division by zero");
			*out = mkval(0, isint);
			continue;
		}
		if (isint && fabs(out->v) < 9.0e18 && fabs(r.v) < 9.0e18) {
			int64_t a = (int64_t)out->v, b = (int64_t)r.v;
			*out = mkval((double)(op == '/' ? a / b : a % b), 1);
		} else if (op == '/') {
			*out = mkval(out->v / r.v, 0);
		} else {
			*out = mkval(fmod(out->v, r.v), isint);
		}
	}
	return rc;
}

static int parse_add(struct parser *p, struct val *out)
{
	int rc = parse_mul(p, out);
	while (!rc) {
		skip_ws(p);
		char op = p->src[p->pos];
		if (op != '+' && op != '-')
			break;
		p->pos++;
		struct val r;
		if ((rc = parse_mul(p, &r)))
			break;
		*out = mkval(op == '+' ? out->v + r.v : out->v - r.v, out->integral && r.integral);
	}
	return rc;
}

static int parse_shift(struct parser *p, struct val *out)
{
	int rc = parse_add(p, out);
	while (!rc) {
		skip_ws(p);
		size_t at = p->pos;
		const char *o = p->src + at;
		int left = o[0] == '<' && o[1] == '<', right = o[0] == '>' && o[1] == '>';
		if (!left && !right)
			break;
		p->pos += 2;
		struct val r;
		if ((rc = parse_add(p, &r)))
			break;
		if (!out->integral || !r.integral || r.v < 0 || r.v > 62) {
			if (p->skip) {
				*out = mkval(0, 1);
				continue;
			}
			return fail(p, at, KS_EINVAL, "%s",
				    "shift needs integers and a count from 0 to 62");
		}
		*out = mkval(left ? ldexp(out->v, (int)r.v) : floor(ldexp(out->v, -(int)r.v)), 1);
	}
	return rc;
}

static int parse_rel(struct parser *p, struct val *out)
{
	int rc = parse_shift(p, out);
	while (!rc) {
		int op;
		if (accept(p, "<="))
			op = 0;
		else if (accept(p, ">="))
			op = 1;
		else if (accept(p, "<"))
			op = 2;
		else if (accept(p, ">"))
			op = 3;
		else
			break;
		struct val r;
		if ((rc = parse_shift(p, &r)))
			break;
		double a = out->v, b = r.v;
		int res = op == 0 ? a <= b : op == 1 ? a >= b : op == 2 ? a < b : a > b;
		*out = mkval(res, 1);
	}
	return rc;
}

static int parse_eq(struct parser *p, struct val *out)
{
	int rc = parse_rel(p, out);
	while (!rc) {
		int eq;
		if (accept(p, "=="))
			eq = 1;
		else if (accept(p, "!="))
			eq = 0;
		else
			break;
		struct val r;
		if ((rc = parse_rel(p, &r)))
			break;
		*out = mkval(eq ? out->v == r.v : out->v != r.v, 1);
	}
	return rc;
}

static int parse_and(struct parser *p, struct val *out)
{
	int rc = parse_eq(p, out);
	while (!rc && accept(p, "&&")) {
		struct val r;
		int taken = out->v != 0;
		p->skip += !taken;
		rc = parse_eq(p, &r);
		p->skip -= !taken;
		if (!rc)
			*out = mkval(taken && r.v != 0, 1);
	}
	return rc;
}

static int parse_or(struct parser *p, struct val *out)
{
	int rc = parse_and(p, out);
	while (!rc && accept(p, "||")) {
		struct val r;
		int decided = out->v != 0;
		p->skip += decided;
		rc = parse_and(p, &r);
		p->skip -= decided;
		if (!rc)
			*out = mkval(decided || r.v != 0, 1);
	}
	return rc;
}

static int parse_cond(struct parser *p, struct val *out)
{
	char fb[8];
	if (++p->depth > EXPR_MAX_DEPTH)
		return fail(p, p->pos, KS_ELIMIT, "%s", "expression nested too deeply");
	int rc = parse_or(p, out);
	if (!rc && accept(p, "?")) {
		int c = out->v != 0;
		struct val a, b;
		p->skip += !c;
		rc = parse_cond(p, &a);
		p->skip -= !c;
		if (!rc && !accept(p, ":"))
			rc = fail(p, p->pos, KS_EPARSE, "expected ':' in '?:', got %s",
				  found(p, fb, sizeof(fb)));
		if (!rc) {
			p->skip += c;
			rc = parse_cond(p, &b);
			p->skip -= c;
		}
		if (!rc)
			*out = c ? a : b;
	}
	p->depth--;
	return rc;
}

int ks_expr_eval(const char *src, ks_expr_lookup_fn lookup, void *ctx, double *out, int *errcol,
		 struct ks_error *e)
{
	char fb[8];
	struct parser p = {src ? src : "", 0, lookup, ctx, 0, 0, 0, e};
	struct val v = {0, 0};
	if (errcol)
		*errcol = 0;
	int rc = parse_cond(&p, &v);
	if (!rc) {
		skip_ws(&p);
		if (p.src[p.pos])
			rc = fail(&p, p.pos, KS_EPARSE, "expected an operator or end of expression, got %s",
				  found(&p, fb, sizeof(fb)));
	}
	if (rc) {
		if (errcol)
			*errcol = p.errpos + 1;
		return rc;
	}
	if (out)
		*out = v.v;
	return 0;
}
