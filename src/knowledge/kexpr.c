#include "knowledge/kexpr.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parser {
	const char *src, *p;
	ks_kexpr_lookup_fn lookup;
	void *ctx;
	const char *why;
	int depth;
};

static void skip_ws(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

static int fail(struct parser *ps, const char *why)
{
	if (!ps->why)
		ps->why = why;
	return -1;
}

static int parse_expr(struct parser *ps, double *out);

static int is_int(double v)
{
	return v == floor(v) && fabs(v) < 9.007199254740992e15;
}

static int parse_primary(struct parser *ps, double *out)
{
	skip_ws(ps);
	if (++ps->depth > 64)
		return fail(ps, "expression nested too deeply");
	int rc = -1;
	char c = *ps->p;
	if (c == '(') {
		ps->p++;
		if (parse_expr(ps, out))
			goto out;
		skip_ws(ps);
		if (*ps->p != ')') {
			fail(ps, "expected ')'");
			goto out;
		}
		ps->p++;
		rc = 0;
	} else if (c == '-' || c == '+') {
		ps->p++;
		if (parse_primary(ps, out))
			goto out;
		if (c == '-')
			*out = -*out;
		rc = 0;
	} else if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)ps->p[1]))) {
		char *end;
		if (c == '0' && (ps->p[1] == 'x' || ps->p[1] == 'X'))
			*out = (double)strtoull(ps->p, &end, 16);
		else
			*out = strtod(ps->p, &end);
		ps->p = end;
		while (*ps->p == 'u' || *ps->p == 'U' || *ps->p == 'l' || *ps->p == 'L' ||
		       *ps->p == 'f' || *ps->p == 'F')
			ps->p++;
		rc = 0;
	} else if (isalpha((unsigned char)c) || c == '_') {
		const char *s = ps->p;
		while (isalnum((unsigned char)*ps->p) || *ps->p == '_' || *ps->p == '.')
			ps->p++;
		size_t n = (size_t)(ps->p - s);
		skip_ws(ps);
		if (*ps->p == '(') {
			ps->p++;
			if (n == 6 && !strncmp(s, "sizeof", 6)) {
				skip_ws(ps);
				const char *t = ps->p;
				while (*ps->p && *ps->p != ')')
					ps->p++;
				if (*ps->p != ')') {
					fail(ps, "expected ')' after sizeof type");
					goto out;
				}
				const char *te = ps->p;
				while (te > t && isspace((unsigned char)te[-1]))
					te--;
				char name[96];
				snprintf(name, sizeof(name), "sizeof:%.*s", (int)(te - t), t);
				ps->p++;
				if (!ps->lookup ||
				    ps->lookup(name, strlen(name), out, ps->ctx)) {
					fail(ps, "unknown type in sizeof");
					goto out;
				}
				rc = 0;
				goto out;
			}
			double a, b;
			if (parse_expr(ps, &a))
				goto out;
			skip_ws(ps);
			if (*ps->p != ',') {
				fail(ps, "expected ',' between function arguments");
				goto out;
			}
			ps->p++;
			if (parse_expr(ps, &b))
				goto out;
			skip_ws(ps);
			if (*ps->p != ')') {
				fail(ps, "expected ')' after function arguments");
				goto out;
			}
			ps->p++;
			if (n == 3 && !strncmp(s, "min", 3))
				*out = a < b ? a : b;
			else if (n == 3 && !strncmp(s, "max", 3))
				*out = a > b ? a : b;
			else if (n == 8 && !strncmp(s, "ceil_div", 8)) {
				if (b == 0) {
					fail(ps, "division by zero");
					goto out;
				}
				*out = ceil(a / b);
			} else {
				fail(ps, "unknown function");
				goto out;
			}
			rc = 0;
			goto out;
		}
		if (!ps->lookup || ps->lookup(s, n, out, ps->ctx)) {
			ps->p = s;
			fail(ps, "unknown name");
			goto out;
		}
		rc = 0;
	} else {
		fail(ps, *ps->p ? "unexpected character" : "unexpected end of expression");
	}
out:
	ps->depth--;
	return rc;
}

static int parse_term(struct parser *ps, double *out)
{
	if (parse_primary(ps, out))
		return -1;
	for (;;) {
		skip_ws(ps);
		char op = *ps->p;
		if (op != '*' && op != '/' && op != '%')
			return 0;
		ps->p++;
		double r;
		if (parse_primary(ps, &r))
			return -1;
		if (op == '*') {
			*out *= r;
			continue;
		}
		if (r == 0)
			return fail(ps, "division by zero");
		if (op == '/')
			*out = is_int(*out) && is_int(r) ? trunc(*out / r) : *out / r;
		else
			*out = fmod(*out, r);
	}
}

static int parse_sum(struct parser *ps, double *out)
{
	if (parse_term(ps, out))
		return -1;
	for (;;) {
		skip_ws(ps);
		char op = *ps->p;
		if (op != '+' && op != '-')
			return 0;
		ps->p++;
		double r;
		if (parse_term(ps, &r))
			return -1;
		*out = op == '+' ? *out + r : *out - r;
	}
}

static int parse_expr(struct parser *ps, double *out)
{
	if (parse_sum(ps, out))
		return -1;
	for (;;) {
		skip_ws(ps);
		int left = ps->p[0] == '<' && ps->p[1] == '<';
		int right = ps->p[0] == '>' && ps->p[1] == '>';
		if (!left && !right)
			return 0;
		ps->p += 2;
		double r;
		if (parse_sum(ps, &r))
			return -1;
		if (!is_int(*out) || !is_int(r) || r < 0 || r > 62)
			return fail(ps, "shift of a non-integer");
		*out = left ? ldexp(*out, (int)r) : floor(ldexp(*out, -(int)r));
	}
}

int ks_kexpr_eval(const char *src, ks_kexpr_lookup_fn lookup, void *ctx, double *out,
		  const char **why, int *col)
{
	struct parser ps = {.src = src, .p = src, .lookup = lookup, .ctx = ctx};
	double v = 0;
	int rc = parse_expr(&ps, &v);
	if (!rc) {
		skip_ws(&ps);
		if (*ps.p) {
			fail(&ps, "unexpected text after expression");
			rc = -1;
		}
	}
	if (rc) {
		if (why)
			*why = ps.why ? ps.why : "invalid expression";
		if (col)
			*col = (int)(ps.p - src) + 1;
		return -1;
	}
	*out = v;
	return 0;
}
