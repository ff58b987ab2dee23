/* Expression evaluator: precedence, integer semantics, C literals and shifts, sizeof,
 * functions, errors with columns. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "util/expr.h"

struct binding {
	const char *name;
	double v;
};

static const struct binding vars[] = {
	{"rows", 4096}, {"cols", 1000}, {"n", 7}, {"zero", 0}, {"half", 0.5},
	{"spec.smem_per_block", 49152}, {"D", 128}, {"sizeof:float", 4},
	{"sizeof:unsigned int", 4}, {NULL, 0},
};

static int lookup(const char *name, size_t len, double *out, void *ctx)
{
	int *calls = ctx;
	if (calls)
		(*calls)++;
	for (const struct binding *b = vars; b->name; b++)
		if (strlen(b->name) == len && !strncmp(b->name, name, len)) {
			*out = b->v;
			return 0;
		}
	return KS_ENOTFOUND;
}

static void val(const char *src, double want)
{
	double got = NAN;
	struct ks_error e = {0};
	int col = -1;
	int rc = ks_expr_eval(src, lookup, NULL, &got, &col, &e);
	ok(rc == 0 && got == want, "'%s' = %.17g (rc %d, got %.17g, %s)", src, want, rc, got,
	   rc ? e.msg : "");
}

static void err(const char *src, int want_col, const char *want_msg)
{
	double got = 0;
	struct ks_error e = {0};
	int col = -1;
	int rc = ks_expr_eval(src, lookup, NULL, &got, &col, &e);
	ok(rc < 0 && col == want_col && strstr(e.msg, want_msg),
	   "'%s' fails at column %d with '%s' (rc %d, col %d, msg '%s')", src, want_col, want_msg,
	   rc, col, e.msg);
}

int main(void)
{
	/* literals and precedence */
	val("42", 42);
	val("  1.5e3 ", 1500);
	val(".25", 0.25);
	val("1 + 2 * 3", 7);
	val("(1 + 2) * 3", 9);
	val("10 - 4 - 3", 3);     /* left associative */
	val("2 * 3 % 4", 2);      /* (2*3)%4 */
	val("-2 * -3", 6);
	val("- -4", 4);
	val("!0 + !5", 1);
	val("1 + 2 < 4", 1);      /* + binds tighter than < */
	val("1 < 2 == 1", 1);     /* < binds tighter than == */
	val("1 == 1 && 0 == 1", 0);
	val("1 || 0 && 0", 1);    /* && binds tighter than || */
	val("3 <= 3", 1);
	val("3 >= 4", 0);
	val("3 != 4", 1);
	val("2 > 1 > 0", 1);      /* (2>1)>0 */
	/* ?: is right associative and lowest */
	val("0 ? 1 : 0 ? 2 : 3", 3);
	val("1 ? 0 ? 5 : 6 : 7", 6);
	val("1 + 1 ? 10 : 20", 10);
	/* integer semantics */
	val("7 / 2", 3);
	val("-7 / 2", -3);        /* C truncation */
	val("7 % 3", 1);
	val("-7 % 3", -1);
	val("7.0 / 2", 3.5);
	val("n / 2", 3);
	val("half * 4 / 3", 2.0 / 3.0); /* 2.0 is not integral by type: float division */
	val("rows / 3", 1365);
	val("sqrt(16) / 3", 4.0 / 3.0); /* sqrt yields a float */
	val("7.5 % 2", 1.5);
	/* names */
	val("rows * cols", 4096000);
	val("spec.smem_per_block / 1024", 48);
	val("(64 + 2*64) * D * 2 <= spec.smem_per_block", 1);
	/* functions */
	val("min(3, 1, 2)", 1);
	val("max(rows, cols)", 4096);
	val("ceil_div(10, 3)", 4);
	val("ceil_div(9, 3)", 3);
	val("ceil_div(-7, 2)", -3);
	val("floor(2.7)", 2);
	val("ceil(2.1)", 3);
	val("sqrt(2)", sqrt(2.0));
	val("log2(1024)", 10);
	val("pow(2, 10)", 1024);
	val("abs(-3)", 3);
	val("ceil_div(rows, 128) * 128", 4096);
	val("min( 1 , max(2,3) )", 1);
	/* C literals and operators of constant expressions in kernel sources (the knowledge
	 * layer's #define values and array bounds use the same evaluator) */
	val("0x40", 64);
	val("0X1f + 1", 32);
	val("256u", 256);
	val("64UL * 2", 128);
	val("1ull << 10", 1024);
	val("2.5f * 2", 5);
	val("1.f", 1);
	val("1 << 4 + 1", 32);    /* + binds tighter than << */
	val("1024 >> 3", 128);
	val("-9 >> 1", -5);       /* floor, as an arithmetic shift */
	val("1 << 3 < 9", 1);     /* << binds tighter than < */
	val("2 < 3", 1);          /* '<' is not the start of "<<" here */
	val("sizeof(float) * D", 512);
	val("sizeof( unsigned int )", 4);
	val("32 * 32 * sizeof(float)", 4096);
	val("zero ? 1 << half : 3", 3); /* an untaken shift cannot fail */
	/* short circuit: the untaken branch cannot divide by zero */
	val("zero ? 1 / zero : 5", 5);
	val("zero && 1 / zero", 0);
	val("1 || 1 % zero", 1);
	val("zero == 0 ? 2 : ceil_div(1, zero)", 2);

	/* errors with columns (1-based) and what was expected */
	err("", 1, "expected a number, a name or '(', got end of expression");
	err("1 +", 4, "expected a number, a name or '('");
	err("rows * (cols + 1", 17, "expected ')'");
	err("rowz * cols", 1, "unknown name 'rowz'");
	err("rows * colz", 8, "unknown name 'colz'");
	err("1 / zero", 3, "division by zero");
	err("5 % 0", 3, "division by zero");
	err("1.0 / 0", 5, "division by zero");
	err("ceil_div(1, 0)", 1, "division by zero");
	err("2 3", 3, "expected an operator or end of expression, got '3'");
	err("foo(1)", 1, "unknown function 'foo'");
	err("min(1)", 1, "'min' takes at least 2 arguments, got 1");
	err("ceil_div(1, 2, 3)", 1, "'ceil_div' takes 2 arguments, got 3");
	err("min(1 2)", 7, "expected ',' or ')' after argument");
	err("1 ? 2", 6, "expected ':'");
	err("3rows", 2, "expected an operator after number");
	err("1e+", 4, "expected digits in the exponent");
	err("a $ b", 1, "unknown name 'a'");
	err("rows $ 2", 6, "expected an operator or end of expression, got '$'");
	err("sqrt(-1)", 1, "negative");
	err("zero ? rowz : 1", 8, "unknown name 'rowz'"); /* names checked in every branch */
	err("1 = 2", 3, "expected an operator or end of expression, got '='");
	err("0x", 3, "expected hexadecimal digits");
	err("0x1g", 4, "expected an operator after number");
	err("12uu", 4, "expected an operator after number");
	err("2.5u", 4, "expected an operator after number");
	err("1 << half", 3, "shift needs integers");
	err("1 << 63", 3, "shift needs integers and a count from 0 to 62");
	err("sizeof(double)", 8, "unknown type 'double' in sizeof");
	err("sizeof(float", 13, "expected ')' after the type in sizeof");

	/* deep nesting is refused, not a stack overflow */
	{
		char deep[2048];
		memset(deep, '(', 1000);
		deep[1000] = '1';
		memset(deep + 1001, ')', 1000);
		deep[2001] = 0;
		double v;
		struct ks_error e = {0};
		int rc = ks_expr_eval(deep, lookup, NULL, &v, NULL, &e);
		ok(rc == KS_ELIMIT && strstr(e.msg, "nested"), "deep nesting refused (%s)", e.msg);
	}
	/* no lookup callback: every name is unknown; the callback context is passed through */
	{
		double v;
		struct ks_error e = {0};
		int col = 0;
		ok(ks_expr_eval("x", NULL, NULL, &v, &col, &e) == KS_ENOTFOUND && col == 1,
		   "NULL lookup: names unknown");
		int calls = 0;
		ok(!ks_expr_eval("rows + rows", lookup, &calls, &v, NULL, NULL) && calls == 2,
		   "ctx reaches the lookup callback");
	}
	return tap_done();
}
