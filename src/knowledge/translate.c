/* ks_translate: find the CUDA primitives a source uses, map them onto a target through the
 * concept map, and check the target spec's hard limits (shared memory per group, threads
 * per group, SIMD width, fp64, missing features).  A light C lexer is enough: shared
 * array sizes, launch bounds and launch configurations are evaluated where they are
 * constant expressions over #define / constexpr constants of the same file. */
#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knowledge/conceptmap.h"
#include "util/expr.h"
#include "ksearch/knowledge.h"
#include "util/json.h"

#define MAX_LINES_PER_USE 64

const char *ks_severity_name(enum ks_severity s)
{
	return s == KS_SEV_ERROR ? "error" : s == KS_SEV_WARN ? "warn" : "info";
}

/* ---- source model ------------------------------------------------------------------ */

struct constant {
	char name[64];
	char *expr;
	int busy; /* recursion guard */
};

struct func {
	char name[96];
	int is_kernel;     /* __global__ (else __device__) */
	size_t body_begin, body_end; /* offsets of '{' and '}' */
	int line;
	double launch_bounds; /* NaN when absent or not evaluable */
	int lb_line;
	char lb_expr[128];
	double smem_static;   /* bytes of static __shared__ with known size */
	int smem_unknown;     /* declarations whose size could not be evaluated */
	char smem_list[512];  /* "tile 48 KiB, red 128 B" */
	int smem_line;        /* first __shared__ declaration */
};

struct src {
	char *text;   /* comments blanked, newlines kept */
	size_t len;
	int nlines;
	size_t *line_off;
	int nconst;
	struct constant *consts;
	int nfunc;
	struct func *funcs;
};

static int line_of(const struct src *s, size_t off)
{
	int lo = 0, hi = s->nlines - 1;
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;
		if (s->line_off[mid] <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo + 1;
}

static void blank_comments(char *t)
{
	for (char *p = t; *p; p++) {
		if (*p == '"' || *p == '\'') {
			char q = *p;
			for (p++; *p && *p != q && *p != '\n'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (!*p)
				return;
		} else if (p[0] == '/' && p[1] == '/') {
			while (*p && *p != '\n')
				*p++ = ' ';
			if (!*p)
				return;
		} else if (p[0] == '/' && p[1] == '*') {
			*p++ = ' ';
			*p = ' ';
			for (p++; *p && !(p[0] == '*' && p[1] == '/'); p++)
				if (*p != '\n')
					*p = ' ';
			if (!*p)
				return;
			p[0] = p[1] = ' ';
			p++;
		}
	}
}

static const struct {
	const char *name;
	double size;
} type_sizes[] = {
	{"float", 4},	      {"double", 8},	     {"half", 2},	   {"__half", 2},
	{"__nv_bfloat16", 2}, {"nv_bfloat16", 2},    {"bfloat16", 2},	   {"half2", 4},
	{"__half2", 4},	      {"__nv_bfloat162", 4}, {"float2", 8},	   {"float3", 12},
	{"float4", 16},	      {"double2", 16},	     {"int", 4},	   {"unsigned", 4},
	{"unsigned int", 4},  {"uint", 4},	     {"int32_t", 4},	   {"uint32_t", 4},
	{"int64_t", 8},	      {"uint64_t", 8},	     {"long long", 8},	   {"long", 8},
	{"unsigned long long", 8}, {"short", 2},     {"unsigned short", 2}, {"char", 1},
	{"unsigned char", 1}, {"int8_t", 1},	     {"uint8_t", 1},	   {"bool", 1},
	{"int2", 8},	      {"int4", 16},	     {"uint2", 8},	   {"uint4", 16},
	{"char4", 4},	      {"size_t", 8},	     {"int16_t", 2},	   {"uint16_t", 2},
	{"__nv_fp8_e4m3", 1}, {"__nv_fp8_e5m2", 1},
};

static double type_size(const char *t)
{
	for (size_t i = 0; i < sizeof(type_sizes) / sizeof(type_sizes[0]); i++)
		if (!strcmp(type_sizes[i].name, t))
			return type_sizes[i].size;
	return NAN;
}

static int lookup(const char *name, size_t len, double *out, void *ctx);

static int const_eval(struct src *s, const char *expr, double *out)
{
	return ks_expr_eval(expr, lookup, s, out, NULL, NULL);
}

static int lookup(const char *name, size_t len, double *out, void *ctx)
{
	struct src *s = ctx;
	if (len > 7 && !strncmp(name, "sizeof:", 7)) {
		char t[96];
		snprintf(t, sizeof(t), "%.*s", (int)(len - 7), name + 7);
		double v = type_size(t);
		if (!isfinite(v))
			return KS_ENOTFOUND;
		*out = v;
		return 0;
	}
	for (int i = s->nconst - 1; i >= 0; i--) {
		struct constant *c = &s->consts[i];
		if (strlen(c->name) != len || strncmp(c->name, name, len))
			continue;
		if (c->busy)
			return KS_ENOTFOUND;
		c->busy = 1;
		int rc = const_eval(s, c->expr, out);
		c->busy = 0;
		return rc;
	}
	return KS_ENOTFOUND;
}

static void add_const(struct src *s, const char *name, size_t nlen, const char *expr, size_t elen)
{
	if (nlen >= sizeof(s->consts[0].name) || elen == 0)
		return;
	struct constant *nc = realloc(s->consts, (size_t)(s->nconst + 1) * sizeof(*nc));
	if (!nc)
		return;
	s->consts = nc;
	struct constant *c = &nc[s->nconst];
	memset(c, 0, sizeof(*c));
	memcpy(c->name, name, nlen);
	c->expr = strndup(expr, elen);
	if (c->expr)
		s->nconst++;
}

static int is_id(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* #define NAME EXPR, [static] [constexpr|const] TYPE NAME = EXPR; and plain
 * `int NAME = EXPR;` (best effort: the last definition in the file wins) */
static void collect_constants(struct src *s)
{
	for (int l = 0; l < s->nlines; l++) {
		const char *p = s->text + s->line_off[l];
		const char *end = strchr(p, '\n');
		if (!end)
			end = s->text + s->len;
		while (p < end && isspace((unsigned char)*p))
			p++;
		if (*p == '#') {
			p++;
			while (p < end && isspace((unsigned char)*p))
				p++;
			if (strncmp(p, "define", 6) || !isspace((unsigned char)p[6]))
				continue;
			p += 6;
			while (p < end && isspace((unsigned char)*p))
				p++;
			const char *n = p;
			while (p < end && is_id(*p))
				p++;
			if (p == n || *p == '(')
				continue;
			const char *v = p;
			const char *ve = end;
			while (ve > v && isspace((unsigned char)ve[-1]))
				ve--;
			while (v < ve && isspace((unsigned char)*v))
				v++;
			add_const(s, n, (size_t)(p - n), v, (size_t)(ve - v));
			continue;
		}
		/* declarations with an initialiser on one line */
		static const char *const types[] = {"int", "unsigned", "size_t", "long", "short",
						    "int32_t", "uint32_t", "int64_t", "auto",
						    "uint", NULL};
		const char *q = p;
		int qual = 0;
		for (;;) {
			int adv = 0;
			static const char *const quals[] = {"static", "constexpr", "const", "__device__",
							    "__constant__", "unsigned", NULL};
			for (const char *const *k = quals; *k; k++) {
				size_t kl = strlen(*k);
				if (!strncmp(q, *k, kl) && isspace((unsigned char)q[kl])) {
					q += kl;
					while (q < end && isspace((unsigned char)*q))
						q++;
					adv = 1;
					qual++;
				}
			}
			if (!adv)
				break;
		}
		int typed = 0;
		for (const char *const *k = types; *k; k++) {
			size_t kl = strlen(*k);
			if (!strncmp(q, *k, kl) && isspace((unsigned char)q[kl])) {
				q += kl;
				typed = 1;
				break;
			}
		}
		if (!typed && !qual)
			continue;
		while (q < end && isspace((unsigned char)*q))
			q++;
		const char *n = q;
		while (q < end && is_id(*q))
			q++;
		size_t nl = (size_t)(q - n);
		while (q < end && isspace((unsigned char)*q))
			q++;
		if (!nl || *q != '=' || q[1] == '=')
			continue;
		q++;
		const char *semi = memchr(q, ';', (size_t)(end - q));
		if (!semi)
			continue;
		while (q < semi && isspace((unsigned char)*q))
			q++;
		add_const(s, n, nl, q, (size_t)(semi - q));
	}
}

static size_t match_brace(const char *t, size_t len, size_t open)
{
	char o = t[open], c = o == '{' ? '}' : o == '(' ? ')' : o == '[' ? ']' : '>';
	int depth = 0;
	for (size_t i = open; i < len; i++) {
		if (t[i] == o)
			depth++;
		else if (t[i] == c && --depth == 0)
			return i;
	}
	return len;
}

static int word_at(const char *t, size_t i, const char *w)
{
	size_t n = strlen(w);
	return !strncmp(t + i, w, n) && (i == 0 || !is_id(t[i - 1])) && !is_id(t[i + n]);
}

static void collect_functions(struct src *s)
{
	const char *t = s->text;
	for (size_t i = 0; i < s->len; i++) {
		int kernel = word_at(t, i, "__global__");
		if (!kernel && !word_at(t, i, "__device__"))
			continue;
		struct func f;
		memset(&f, 0, sizeof(f));
		f.is_kernel = kernel;
		f.launch_bounds = NAN;
		f.line = line_of(s, i);
		size_t p = i + 10;
		/* tokens up to the name followed by '(' */
		while (p < s->len) {
			while (p < s->len && isspace((unsigned char)t[p]))
				p++;
			if (p >= s->len || t[p] == ';' || t[p] == '{' || t[p] == '=')
				break;
			if (!is_id(t[p])) {
				p++;
				continue;
			}
			size_t b = p;
			while (p < s->len && is_id(t[p]))
				p++;
			size_t e = p;
			while (p < s->len && isspace((unsigned char)t[p]))
				p++;
			if (p < s->len && t[p] == '(') {
				size_t close = match_brace(t, s->len, p);
				if (e - b == 17 && !strncmp(t + b, "__launch_bounds__", 17)) {
					size_t a = p + 1, z = a;
					while (z < close && t[z] != ',')
						z++;
					snprintf(f.lb_expr, sizeof(f.lb_expr), "%.*s", (int)(z - a),
						 t + a);
					f.lb_line = line_of(s, b);
					double v;
					if (!const_eval(s, f.lb_expr, &v))
						f.launch_bounds = v;
					p = close + 1;
					continue;
				}
				snprintf(f.name, sizeof(f.name), "%.*s", (int)(e - b), t + b);
				p = close + 1;
				while (p < s->len && t[p] != '{' && t[p] != ';')
					p++;
				if (p < s->len && t[p] == '{') {
					f.body_begin = p;
					f.body_end = match_brace(t, s->len, p);
				}
				break;
			}
		}
		if (!f.name[0] || !f.body_end)
			continue; /* a declaration, a __device__ variable, or a lambda */
		struct func *nf = realloc(s->funcs, (size_t)(s->nfunc + 1) * sizeof(*nf));
		if (!nf)
			return;
		s->funcs = nf;
		nf[s->nfunc++] = f;
		i = f.body_begin;
	}
}

static struct func *func_at(struct src *s, size_t off)
{
	for (int i = 0; i < s->nfunc; i++)
		if (off > s->funcs[i].body_begin && off < s->funcs[i].body_end)
			return &s->funcs[i];
	return NULL;
}

static struct func *func_named(struct src *s, const char *name)
{
	for (int i = 0; i < s->nfunc; i++)
		if (s->funcs[i].is_kernel && !strcmp(s->funcs[i].name, name))
			return &s->funcs[i];
	return NULL;
}

static int in_device_code(struct src *s, int line)
{
	size_t off = s->line_off[line - 1];
	size_t end = line < s->nlines ? s->line_off[line] : s->len;
	for (int i = 0; i < s->nfunc; i++)
		if (end > s->funcs[i].body_begin && off <= s->funcs[i].body_end)
			return 1;
	return 0;
}

static int src_load(struct src *s, const char *cuda)
{
	memset(s, 0, sizeof(*s));
	s->text = strdup(cuda);
	if (!s->text)
		return KS_ENOMEM;
	blank_comments(s->text);
	s->len = strlen(s->text);
	int n = 1;
	for (size_t i = 0; i < s->len; i++)
		n += s->text[i] == '\n';
	s->line_off = calloc((size_t)n + 1, sizeof(size_t));
	if (!s->line_off)
		return KS_ENOMEM;
	s->line_off[0] = 0;
	s->nlines = 1;
	for (size_t i = 0; i < s->len; i++)
		if (s->text[i] == '\n')
			s->line_off[s->nlines++] = i + 1;
	collect_constants(s);
	collect_functions(s);
	return 0;
}

static void src_release(struct src *s)
{
	free(s->text);
	free(s->line_off);
	for (int i = 0; i < s->nconst; i++)
		free(s->consts[i].expr);
	free(s->consts);
	free(s->funcs);
	memset(s, 0, sizeof(*s));
}

/* ---- findings ------------------------------------------------------------------------ */

static int add_finding(struct ks_translation *t, enum ks_severity sev, const char *check,
		       const char *concept, int line, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static int add_finding(struct ks_translation *t, enum ks_severity sev, const char *check,
		       const char *concept, int line, const char *fmt, ...)
{
	struct ks_translate_finding *nf =
		realloc(t->findings, (size_t)(t->nfindings + 1) * sizeof(*nf));
	if (!nf)
		return KS_ENOMEM;
	t->findings = nf;
	struct ks_translate_finding *f = &nf[t->nfindings++];
	memset(f, 0, sizeof(*f));
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	f->severity = sev;
	f->check = strdup(check);
	f->concept = concept ? strdup(concept) : NULL;
	f->line = line;
	f->message = strdup(msg);
	if (sev == KS_SEV_ERROR)
		t->nerrors++;
	return f->check && f->message ? 0 : KS_ENOMEM;
}

static void fmt_bytes(double b, char *out, size_t n)
{
	if (b >= 1024 && fmod(b, 1024) == 0)
		snprintf(out, n, "%.0f KiB", b / 1024);
	else if (b >= 1024)
		snprintf(out, n, "%.1f KiB", b / 1024);
	else
		snprintf(out, n, "%.0f B", b);
}

static struct ks_translate_use *use_find(struct ks_translation *t, const char *id)
{
	for (int i = 0; i < t->nuses; i++)
		if (!strcmp(t->uses[i].concept, id))
			return &t->uses[i];
	return NULL;
}

static void trim_copy(const char *b, const char *e, char *out, size_t n)
{
	while (b < e && isspace((unsigned char)*b))
		b++;
	while (e > b && isspace((unsigned char)e[-1]))
		e--;
	size_t l = (size_t)(e - b);
	if (l >= n)
		l = n - 1;
	memcpy(out, b, l);
	out[l] = 0;
}

/* whether the statement holding the __shared__ at i says extern before it */
static int shared_is_extern(const char *x, size_t i)
{
	size_t stmt = i;
	while (stmt > 0 && x[stmt - 1] != ';' && x[stmt - 1] != '{' && x[stmt - 1] != '}')
		stmt--;
	for (size_t k = stmt; k < i; k++)
		if (word_at(x, k, "extern"))
			return 1;
	return 0;
}

/* past the qualifiers that open a declaration: __align__(n), alignas(n), volatile, static,
 * const */
static char *skip_qualifiers(char *d)
{
	for (;;) {
		while (isspace((unsigned char)*d))
			d++;
		if (!strncmp(d, "__align__", 9) || !strncmp(d, "alignas", 7)) {
			char *c = strchr(d, ')');
			if (!c)
				break;
			d = c + 1;
			continue;
		}
		if (!strncmp(d, "volatile ", 9) || !strncmp(d, "static ", 7) ||
		    !strncmp(d, "const ", 6)) {
			d = strchr(d, ' ') + 1;
			continue;
		}
		break;
	}
	return d;
}

/* one declarator of a __shared__ statement */
struct shared_var {
	char name[96];
	int line;
	int ok;        /* the size is known */
	double bytes;  /* the size when ok */
	char why[160]; /* why the size is not known */
};

/* v's size: the element size tsz times the [dimensions] read from *r on (*r is left after
 * them); not ok, with the reason, when the type or a dimension has no constant value */
static void shared_var_size(struct src *s, const char *type, double tsz, const char **rp,
			    struct shared_var *v)
{
	v->bytes = tsz;
	v->ok = isfinite(tsz);
	v->why[0] = 0;
	if (!v->ok)
		snprintf(v->why, sizeof(v->why), "element type '%s' has no known size", type);
	const char *r = *rp;
	while (*r == '[' || isspace((unsigned char)*r)) {
		if (isspace((unsigned char)*r)) {
			r++;
			continue;
		}
		const char *close = strchr(r, ']');
		if (!close)
			break;
		char ex[160];
		trim_copy(r + 1, close, ex, sizeof(ex));
		double d;
		if (v->ok && const_eval(s, ex, &d) == 0 && d > 0) {
			v->bytes *= d;
		} else if (v->ok) {
			v->ok = 0;
			snprintf(v->why, sizeof(v->why), "dimension '%s' is not a constant "
				 "expression of this file", ex);
		}
		r = close + 1;
	}
	*rp = r;
}

/* count v into its function f's static shared memory (f NULL: at file scope); a warning
 * when its size is unknown, an error when a file-scope array alone passes a GPU's limit */
static void shared_var_record(struct ks_translation *t, const struct ks_spec *ts,
			      const char *tspec_name, struct func *f, const struct shared_var *v)
{
	if (f && !f->smem_line)
		f->smem_line = v->line;
	if (f && v->ok) {
		f->smem_static += v->bytes;
		char b[32];
		fmt_bytes(v->bytes, b, sizeof(b));
		size_t l = strlen(f->smem_list);
		snprintf(f->smem_list + l, sizeof(f->smem_list) - l, "%s%s %s", l ? ", " : "",
			 v->name, b);
	} else if (f) {
		f->smem_unknown++;
	}
	if (!v->ok)
		add_finding(t, KS_SEV_WARN, "smem_static", "shared_static", v->line,
			    "__shared__ '%s': size unknown (%s); it must fit the "
			    "target's shared-memory limit together with the rest",
			    v->name, v->why);
	else if (!f && ts && !strcmp(ts->kind, "gpu") && isfinite(ts->smem_per_block) &&
		 v->bytes > ts->smem_per_block) {
		char b[32], lim[32];
		fmt_bytes(v->bytes, b, sizeof(b));
		fmt_bytes(ts->smem_per_block, lim, sizeof(lim));
		add_finding(t, KS_SEV_ERROR, "smem_per_block", "shared_static", v->line,
			    "__shared__ '%s' is %s > %s limit per group on %s", v->name, b, lim,
			    tspec_name);
	}
}

/* the (not extern) __shared__ statement at i: "TYPE NAME[d][d], NAME2[d]", each
 * declarator sized and recorded */
static void shared_statement(struct src *s, struct ks_translation *t, const struct ks_spec *ts,
			     const char *tspec_name, size_t i)
{
	const char *x = s->text;
	struct shared_var v = {.line = line_of(s, i)};
	size_t p = i + 10;
	size_t semi = p;
	while (semi < s->len && x[semi] != ';')
		semi++;
	char decl[512];
	trim_copy(x + p, x + semi, decl, sizeof(decl));
	char *d = skip_qualifiers(decl);
	/* type = tokens before the last identifier that precedes '[' , ',' or end */
	char *first_br = strpbrk(d, "[,=");
	char *name_end = first_br ? first_br : d + strlen(d);
	while (name_end > d && isspace((unsigned char)name_end[-1]))
		name_end--;
	char *name_b = name_end;
	while (name_b > d && is_id(name_b[-1]))
		name_b--;
	char type[128];
	trim_copy(d, name_b, type, sizeof(type));
	trim_copy(name_b, name_end, v.name, sizeof(v.name));
	double tsz = type_size(type);
	struct func *f = func_at(s, i);
	const char *r = name_end;
	for (;;) {
		shared_var_size(s, type, tsz, &r, &v);
		shared_var_record(t, ts, tspec_name, f, &v);
		/* next declarator */
		while (*r && *r != ',')
			r++;
		if (*r != ',')
			break;
		r++;
		while (isspace((unsigned char)*r))
			r++;
		const char *nb = r;
		while (is_id(*r))
			r++;
		trim_copy(nb, r, v.name, sizeof(v.name));
		if (!v.name[0])
			break;
	}
}

/* per function: its static shared memory against the target's limit per group (an error on
 * a GPU, a warning elsewhere), or for information when the target has no limit */
static void shared_per_function(struct src *s, struct ks_translation *t,
				const struct ks_spec *ts, const char *tspec_name)
{
	for (int k = 0; k < s->nfunc; k++) {
		struct func *f = &s->funcs[k];
		if (f->smem_static <= 0)
			continue;
		char b[32], lim[32];
		fmt_bytes(f->smem_static, b, sizeof(b));
		const char *what = f->is_kernel ? "kernel" : "device function";
		if (!ts || !isfinite(ts->smem_per_block)) {
			add_finding(t, KS_SEV_INFO, "smem_per_block", "shared_static", f->smem_line,
				    "%s '%s' declares %s of static __shared__ (%s)", what, f->name, b,
				    f->smem_list);
			continue;
		}
		fmt_bytes(ts->smem_per_block, lim, sizeof(lim));
		if (f->smem_static > ts->smem_per_block)
			add_finding(t, !strcmp(ts->kind, "gpu") ? KS_SEV_ERROR : KS_SEV_WARN,
				    "smem_per_block", "shared_static", f->smem_line,
				    "%s '%s' declares %s of static __shared__ (%s) > %s "
				    "shared/threadgroup memory per group on %s: retile (smaller tiles, "
				    "fewer stages, half precision tiles, or keep operands in registers)",
				    what, f->name, b, f->smem_list, lim, tspec_name);
		else
			add_finding(t, KS_SEV_INFO, "smem_per_block", "shared_static", f->smem_line,
				    "%s '%s' declares %s of static __shared__ (%s): fits the %s of "
				    "%s (%.0f%%)",
				    what, f->name, b, f->smem_list, lim, tspec_name,
				    100.0 * f->smem_static / ts->smem_per_block);
	}
}

/* __shared__ declarations: sizes per function (extern ones are dynamic, sized at launch:
 * see analyse_launches) */
static void analyse_shared(struct src *s, struct ks_translation *t, const struct ks_spec *ts,
			   const char *tspec_name)
{
	for (size_t i = 0; i < s->len; i++)
		if (word_at(s->text, i, "__shared__") && !shared_is_extern(s->text, i))
			shared_statement(s, t, ts, tspec_name, i);
	shared_per_function(s, t, ts, tspec_name);
}

/* dim3 NAME(a, b, c) / dim3 NAME = dim3(...) / dim3 NAME{...}: product of the args */
static int dim3_value(struct src *s, const char *name, double *out)
{
	size_t nl = strlen(name);
	const char *x = s->text;
	for (size_t i = 0; i + 4 < s->len; i++) {
		if (!word_at(x, i, "dim3"))
			continue;
		size_t p = i + 4;
		while (isspace((unsigned char)x[p]))
			p++;
		if (strncmp(x + p, name, nl) || is_id(x[p + nl]))
			continue;
		p += nl;
		while (isspace((unsigned char)x[p]))
			p++;
		if (x[p] == '=') {
			p++;
			while (isspace((unsigned char)x[p]))
				p++;
			if (word_at(x, p, "dim3"))
				p += 4;
			while (isspace((unsigned char)x[p]))
				p++;
		}
		if (x[p] != '(' && x[p] != '{') {
			/* dim3 b = EXPR; */
			const char *semi = strchr(x + p, ';');
			if (!semi)
				return -1;
			char ex[160];
			trim_copy(x + p, semi, ex, sizeof(ex));
			return const_eval(s, ex, out);
		}
		size_t close = match_brace(x, s->len, p);
		double prod = 1;
		size_t a = p + 1;
		while (a < close) {
			size_t z = a;
			int depth = 0;
			while (z < close && (x[z] != ',' || depth)) {
				depth += x[z] == '(';
				depth -= x[z] == ')';
				z++;
			}
			char ex[160];
			trim_copy(x + a, x + z, ex, sizeof(ex));
			double v;
			if (const_eval(s, ex, &v))
				return -1;
			prod *= v;
			a = z + 1;
		}
		*out = prod;
		return 0;
	}
	return -1;
}

static int eval_block(struct src *s, const char *ex, double *out)
{
	if (!const_eval(s, ex, out))
		return 0;
	if (!strncmp(ex, "dim3", 4)) {
		/* dim3(x, y, z) inline */
		const char *o = strchr(ex, '(');
		if (!o)
			return -1;
		double prod = 1;
		char buf[160];
		snprintf(buf, sizeof(buf), "%s", o + 1);
		char *c = strrchr(buf, ')');
		if (c)
			*c = 0;
		char *save = NULL;
		for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			double v;
			if (const_eval(s, tok, &v))
				return -1;
			prod *= v;
		}
		*out = prod;
		return 0;
	}
	int simple = 1;
	for (const char *p = ex; *p; p++)
		simple &= is_id(*p);
	return simple ? dim3_value(s, ex, out) : -1;
}

/* what the launch checks compare against */
struct launch_limits {
	const char *spec; /* the target spec's name */
	double maxt;      /* threads per group (NaN: no limit; a CUDA block is not a CPU
			     thread group, so only GPUs limit it) */
	double simd;      /* SIMD width (NaN: GPUs only) */
	double optin;     /* shared memory per group with opt-in (NaN: unknown) */
	char optin_text[32]; /* optin as "99 KiB" ("" when unknown) */
};

static struct launch_limits launch_limits_of(const struct ks_spec *ts, const char *tspec_name)
{
	int gpu = ts && !strcmp(ts->kind, "gpu");
	struct launch_limits l = {
		.spec = tspec_name,
		.maxt = gpu ? ts->max_threads_per_group : NAN,
		.simd = gpu ? ts->simd_width : NAN,
		.optin = ts ? ts->smem_per_block_optin : NAN,
	};
	if (isfinite(l.optin))
		fmt_bytes(l.optin, l.optin_text, sizeof(l.optin_text));
	return l;
}

/* __launch_bounds__ of every kernel against threads per group and the SIMD width */
static void check_launch_bounds(struct src *s, struct ks_translation *t,
				const struct launch_limits *l)
{
	for (int k = 0; k < s->nfunc; k++) {
		struct func *f = &s->funcs[k];
		if (!f->lb_line)
			continue;
		if (!isfinite(f->launch_bounds)) {
			add_finding(t, KS_SEV_WARN, "threads_per_group", "launch_bounds", f->lb_line,
				    "kernel '%s': __launch_bounds__(%s) is not a constant of this "
				    "file; it must stay <= the target's threads per group",
				    f->name, f->lb_expr);
		} else if (isfinite(l->maxt) && f->launch_bounds > l->maxt) {
			add_finding(t, KS_SEV_ERROR, "threads_per_group", "launch_bounds", f->lb_line,
				    "kernel '%s': __launch_bounds__(%.0f) > %.0f threads per group "
				    "on %s",
				    f->name, f->launch_bounds, l->maxt, l->spec);
		} else if (isfinite(l->simd) && fmod(f->launch_bounds, l->simd) != 0) {
			add_finding(t, KS_SEV_WARN, "threads_per_group", "launch_bounds", f->lb_line,
				    "kernel '%s': %.0f threads per group is not a multiple of the "
				    "SIMD width %.0f of %s (partially filled SIMD-groups)",
				    f->name, f->launch_bounds, l->simd, l->spec);
		}
	}
}

/* the kernel name before the <<< at i, past any <template arguments> */
static void launch_kernel_name(const char *x, size_t i, char *kname, size_t n)
{
	size_t e = i;
	while (e > 0 && isspace((unsigned char)x[e - 1]))
		e--;
	if (e > 0 && x[e - 1] == '>') { /* template arguments */
		int depth = 0;
		while (e > 0) {
			e--;
			depth += x[e] == '>';
			depth -= x[e] == '<';
			if (!depth)
				break;
		}
	}
	size_t b = e;
	while (b > 0 && is_id(x[b - 1]))
		b--;
	trim_copy(x + b, x + e, kname, n);
}

/* the configuration between a (just after "<<<") and close (">>>"): up to 4 arguments split
 * at top-level commas; returns how many */
static int launch_args(const char *a, const char *close, char args[4][160])
{
	int na = 0, depth = 0;
	for (const char *p = a; p <= close && na < 4; p++) {
		if (*p == '(' || *p == '{')
			depth++;
		if (*p == ')' || *p == '}')
			depth--;
		if ((*p == ',' && !depth) || p == close) {
			trim_copy(a, p, args[na++], sizeof(args[0]));
			a = p + 1;
		}
	}
	return na;
}

/* a launch's block size against threads per group and the SIMD width */
static void check_launch_block(struct src *s, struct ks_translation *t,
			       const struct launch_limits *l, const char *kname,
			       const char *block, int line)
{
	double threads;
	if (eval_block(s, block, &threads)) {
		add_finding(t, KS_SEV_INFO, "threads_per_group", "kernel_launch", line,
			    "launch of '%s': block size '%s' is not a constant of this "
			    "file",
			    kname, block);
	} else if (isfinite(l->maxt) && threads > l->maxt) {
		add_finding(t, KS_SEV_ERROR, "threads_per_group", "kernel_launch", line,
			    "launch of '%s' with %.0f threads per block > %.0f threads "
			    "per group on %s",
			    kname, threads, l->maxt, l->spec);
	} else if (isfinite(l->simd) && fmod(threads, l->simd) != 0) {
		add_finding(t, KS_SEV_WARN, "threads_per_group", "kernel_launch", line,
			    "launch of '%s' with %.0f threads per block: not a multiple "
			    "of the SIMD width %.0f of %s",
			    kname, threads, l->simd, l->spec);
	}
}

/* a launch's dynamic shared memory plus its kernel's static shared memory against the
 * opt-in limit */
static void check_launch_smem(struct src *s, struct ks_translation *t,
			      const struct launch_limits *l, const char *kname,
			      const char *smem, int line)
{
	struct func *kf = func_named(s, kname);
	double dyn;
	double stat = kf ? kf->smem_static : 0;
	if (const_eval(s, smem, &dyn)) {
		add_finding(t, KS_SEV_WARN, "smem_dynamic", "shared_dynamic", line,
			    "launch of '%s': dynamic shared memory '%s' is not a "
			    "constant of this file; static + dynamic must stay <= %s on "
			    "%s",
			    kname, smem, l->optin_text[0] ? l->optin_text : "the target limit",
			    l->spec ? l->spec : "the target");
	} else if (isfinite(l->optin) && dyn + stat > l->optin) {
		char tot[32];
		fmt_bytes(dyn + stat, tot, sizeof(tot));
		add_finding(t, KS_SEV_ERROR, "smem_per_block", "shared_dynamic", line,
			    "launch of '%s' uses %s of shared memory (%.0f B dynamic + "
			    "%.0f B static) > %s per group on %s",
			    kname, tot, dyn, stat, l->optin_text, l->spec);
	}
}

/* the kernel<<<grid, block, smem, stream>>> at i */
static void check_launch(struct src *s, struct ks_translation *t, const struct launch_limits *l,
			 size_t i)
{
	const char *x = s->text;
	int line = line_of(s, i);
	char kname[96];
	launch_kernel_name(x, i, kname, sizeof(kname));
	const char *close = strstr(x + i + 3, ">>>");
	if (!close)
		return;
	char args[4][160] = {{0}};
	int na = launch_args(x + i + 3, close, args);
	if (na >= 2)
		check_launch_block(s, t, l, kname, args[1], line);
	if (na >= 3 && strcmp(args[2], "0"))
		check_launch_smem(s, t, l, kname, args[2], line);
}

/* cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, X): X against the
 * opt-in limit */
static void check_optin(struct src *s, struct ks_translation *t, const struct launch_limits *l)
{
	const char *x = s->text;
	const char *key = "cudaFuncAttributeMaxDynamicSharedMemorySize";
	for (const char *p = strstr(x, key); p; p = strstr(p + 1, key)) {
		const char *c = strchr(p, ',');
		const char *end = c ? strchr(c, ')') : NULL;
		if (!c || !end)
			continue;
		char ex[160];
		trim_copy(c + 1, end, ex, sizeof(ex));
		double v;
		int line = line_of(s, (size_t)(p - x));
		if (const_eval(s, ex, &v))
			continue;
		if (isfinite(l->optin) && v > l->optin) {
			char b[32];
			fmt_bytes(v, b, sizeof(b));
			add_finding(t, KS_SEV_ERROR, "smem_per_block", "shared_dynamic", line,
				    "opts in to %s of dynamic shared memory > %s per group on %s "
				    "(no larger opt-in exists there)",
				    b, l->optin_text, l->spec);
		}
	}
}

/* launch bounds, launch configurations and shared-memory opt-ins against the target */
static void analyse_launches(struct src *s, struct ks_translation *t, const struct ks_spec *ts,
			     const char *tspec_name)
{
	struct launch_limits l = launch_limits_of(ts, tspec_name);
	check_launch_bounds(s, t, &l);
	for (size_t i = 0; i + 3 < s->len; i++)
		if (!strncmp(s->text + i, "<<<", 3))
			check_launch(s, t, &l, i);
	check_optin(s, t, &l);
}

/* ---- the analysis ------------------------------------------------------------------------ */

static int record_use(struct ks_translation *t, const struct ks_cmap_concept *c, int line,
		      const char *ltext, size_t llen)
{
	struct ks_translate_use *u = use_find(t, c->id);
	if (!u) {
		struct ks_translate_use *nu = realloc(t->uses, (size_t)(t->nuses + 1) * sizeof(*nu));
		if (!nu)
			return KS_ENOMEM;
		t->uses = nu;
		u = &nu[t->nuses++];
		memset(u, 0, sizeof(*u));
		u->concept = strdup(c->id);
		u->title = strdup(c->title);
		u->equivalent = strdup(c->equivalent);
		u->notes = c->notes ? strdup(c->notes) : NULL;
		if (c->ncons) {
			struct ks_buf cb = KS_BUF_INIT;
			for (int k = 0; k < c->ncons; k++)
				ks_buf_addf(&cb, "%s%s", k ? "; " : "", c->cons[k].text);
			u->constraints = ks_buf_detach(&cb, NULL);
		}
		u->lines = calloc(MAX_LINES_PER_USE, sizeof(int));
		char sn[200];
		trim_copy(ltext, ltext + llen, sn, sizeof(sn));
		u->snippet = strdup(sn);
		if (!u->concept || !u->title || !u->equivalent || !u->lines || !u->snippet)
			return KS_ENOMEM;
	}
	if (u->nlines < MAX_LINES_PER_USE && (!u->nlines || u->lines[u->nlines - 1] != line))
		u->lines[u->nlines++] = line;
	return 0;
}

static void analyse_concepts(struct src *s, const struct ks_cmap *m, struct ks_translation *t,
			     const struct ks_spec *ts, const char *tspec_name)
{
	char *line = malloc(s->len + 1);
	if (!line)
		return;
	for (int l = 0; l < s->nlines; l++) {
		size_t b = s->line_off[l];
		size_t e = l + 1 < s->nlines ? s->line_off[l + 1] - 1 : s->len;
		memcpy(line, s->text + b, e - b);
		line[e - b] = 0;
		for (int i = 0; i < m->n; i++)
			for (int k = 0; k < m->c[i].nre; k++)
				if (!regexec(&m->c[i].re[k], line, 0, NULL, 0)) {
					/* fp64 and warp-width findings only count in device code */
					record_use(t, &m->c[i], l + 1, line, e - b);
					break;
				}
	}
	free(line);
	double simd = ts ? ts->simd_width : NAN;
	for (int i = 0; i < m->n; i++) {
		const struct ks_cmap_concept *c = &m->c[i];
		struct ks_translate_use *u = use_find(t, c->id);
		if (!u)
			continue;
		int first_dev = 0;
		for (int k = 0; k < u->nlines && !first_dev; k++)
			if (in_device_code(s, u->lines[k]))
				first_dev = u->lines[k];
		if (ks_cmap_has_check(c, "fp64") && first_dev) {
			int lacks = ts ? !ks_spec_has_feature(ts, "fp64") : !strcmp(m->target, "metal");
			if (lacks)
				add_finding(t, KS_SEV_ERROR, "fp64", c->id, first_dev,
					    "double precision in device code (%d line%s, first at %d): "
					    "%s has no fp64; %s",
					    u->nlines, u->nlines > 1 ? "s" : "", first_dev,
					    tspec_name ? tspec_name : m->target, c->equivalent);
		}
		if (ks_cmap_has_check(c, "warp_size") && isfinite(simd) && simd != 32 &&
		    (first_dev || strcmp(c->id, "warp_size_assumption")))
			add_finding(t, KS_SEV_WARN, "warp_size", c->id,
				    first_dev ? first_dev : u->lines[0],
				    "%s assumes 32-lane warps (line %d: %s); the SIMD width of %s is "
				    "%.0f",
				    c->title, first_dev ? first_dev : u->lines[0], u->snippet,
				    tspec_name, simd);
		if (c->missing) {
			add_finding(t, c->severity, "feature", c->id, u->lines[0],
				    "%s has no equivalent on %s (line %d: %s); instead: %s", c->title,
				    m->target, u->lines[0], u->snippet, c->equivalent);
		} else if (c->feature && ts && !ks_spec_has_feature(ts, c->feature)) {
			add_finding(t, c->severity, "feature", c->id, u->lines[0],
				    "%s needs feature '%s', which %s does not list (line %d); %s",
				    c->title, c->feature, tspec_name, u->lines[0], c->equivalent);
		}
	}
}

static void ratios(struct ks_translation *t, const struct ks_spec *ts, const struct ks_spec *ss)
{
	t->bandwidth_ratio = t->f32_ratio = t->f16_matrix_ratio = NAN;
	t->source_balance = t->target_balance = NAN;
	if (ts && ts->mem_bandwidth_gbps > 0)
		t->target_balance = ts->peak_gflops_f32 / ts->mem_bandwidth_gbps;
	if (ss && ss->mem_bandwidth_gbps > 0)
		t->source_balance = ss->peak_gflops_f32 / ss->mem_bandwidth_gbps;
	if (!ts || !ss)
		return;
	t->bandwidth_ratio = ts->mem_bandwidth_gbps / ss->mem_bandwidth_gbps;
	t->f32_ratio = ts->peak_gflops_f32 / ss->peak_gflops_f32;
	double tf = isfinite(ts->peak_gflops_f16_matrix) ? ts->peak_gflops_f16_matrix
							 : ts->peak_gflops_f16;
	double sf = isfinite(ss->peak_gflops_f16_matrix) ? ss->peak_gflops_f16_matrix
							 : ss->peak_gflops_f16;
	t->f16_matrix_ratio = tf / sf;
	struct ks_buf b = KS_BUF_INIT;
	ks_buf_addf(&b,
		    "%s has %.3gx the memory bandwidth of %s (%.0f vs %.0f GB/s) and %.3gx its "
		    "FP32 rate (%.3g vs %.3g TFLOPS)",
		    ts->name, t->bandwidth_ratio, ss->name, ts->mem_bandwidth_gbps,
		    ss->mem_bandwidth_gbps, t->f32_ratio, ts->peak_gflops_f32 / 1000,
		    ss->peak_gflops_f32 / 1000);
	if (isfinite(t->f16_matrix_ratio))
		ks_buf_addf(&b, "; best FP16 matrix/vector rate %.3gx (%.3g vs %.3g TFLOPS)",
			    t->f16_matrix_ratio, tf / 1000, sf / 1000);
	ks_buf_addf(&b,
		    ". Machine balance (FP32 FLOP per DRAM byte): %s %.1f, %s %.1f. A "
		    "bandwidth-bound kernel should take about %.3gx the %s time on %s, an FP32 "
		    "compute-bound one about %.3gx",
		    ss->name, t->source_balance, ts->name, t->target_balance, 1 / t->bandwidth_ratio,
		    ss->name, ts->name, 1 / t->f32_ratio);
	if (isfinite(t->f16_matrix_ratio))
		ks_buf_addf(&b, ", a tensor-core-bound one about %.3gx", 1 / t->f16_matrix_ratio);
	ks_buf_adds(&b, ".");
	if (t->target_balance < t->source_balance)
		ks_buf_addf(&b, " %s is relatively richer in bandwidth: kernels with arithmetic "
				"intensity between %.1f and %.1f FLOP/B move from bandwidth-bound to "
				"compute-bound.",
			    ts->name, t->target_balance, t->source_balance);
	else if (t->target_balance > t->source_balance)
		ks_buf_addf(&b, " %s is relatively poorer in bandwidth: kernels with arithmetic "
				"intensity between %.1f and %.1f FLOP/B become bandwidth-bound; "
				"reuse data from threadgroup memory and registers.",
			    ts->name, t->source_balance, t->target_balance);
	t->ratio_text = ks_buf_detach(&b, NULL);
}

void ks_translation_release(struct ks_translation *t)
{
	free(t->target);
	free(t->target_spec);
	free(t->source_spec);
	for (int i = 0; i < t->nuses; i++) {
		free(t->uses[i].concept);
		free(t->uses[i].title);
		free(t->uses[i].equivalent);
		free(t->uses[i].notes);
		free(t->uses[i].constraints);
		free(t->uses[i].lines);
		free(t->uses[i].snippet);
	}
	free(t->uses);
	for (int i = 0; i < t->nfindings; i++) {
		free(t->findings[i].check);
		free(t->findings[i].concept);
		free(t->findings[i].message);
	}
	free(t->findings);
	free(t->ratio_text);
	free(t->hints);
	memset(t, 0, sizeof(*t));
}

static int cmp_finding(const void *a, const void *b)
{
	const struct ks_translate_finding *x = a, *y = b;
	if (x->severity != y->severity)
		return y->severity - x->severity;
	return x->line - y->line;
}

int ks_translate(const char *cuda_src, const char *target, const struct ks_spec *target_spec,
		 const struct ks_spec *source_spec, struct ks_translation *out,
		 struct ks_error *e)
{
	memset(out, 0, sizeof(*out));
	const char *canon = ks_target_canonical(target);
	if (!canon)
		return ks_error_set(e, KS_EINVAL, "unknown target '%s' (metal, cpu, opencl)",
				    target ? target : "");
	struct ks_cmap m;
	int rc = ks_cmap_load(canon, &m, e);
	if (rc)
		return rc;
	struct src s;
	if ((rc = src_load(&s, cuda_src))) {
		src_release(&s);
		ks_cmap_release(&m);
		return ks_error_set(e, rc, "translate: out of memory");
	}
	out->target = strdup(canon);
	out->target_spec = target_spec ? strdup(target_spec->name) : NULL;
	out->source_spec = source_spec ? strdup(source_spec->name) : NULL;
	const char *tsn = target_spec ? target_spec->name : NULL;
	analyse_concepts(&s, &m, out, target_spec, tsn);
	analyse_shared(&s, out, target_spec, tsn);
	analyse_launches(&s, out, target_spec, tsn);
	ratios(out, target_spec, source_spec);
	if (out->nfindings > 1)
		qsort(out->findings, (size_t)out->nfindings, sizeof(*out->findings), cmp_finding);
	/* hints for the concepts in use */
	const char **ids = calloc((size_t)out->nuses + 2, sizeof(char *));
	if (ids) {
		for (int i = 0; i < out->nuses; i++)
			ids[i] = out->uses[i].concept;
		struct ks_buf h = KS_BUF_INIT;
		struct ks_error he = {0};
		if (!ks_hints_text(canon, ids, &h, &he) && h.len)
			out->hints = ks_buf_detach(&h, NULL);
		ks_buf_release(&h);
		free(ids);
	}
	src_release(&s);
	ks_cmap_release(&m);
	return 0;
}

/* ---- renderings -------------------------------------------------------------------------- */

int ks_translation_to_text(const struct ks_translation *t, struct ks_buf *out)
{
	ks_buf_addf(out, "CUDA -> %s translation context", t->target);
	if (t->target_spec || t->source_spec)
		ks_buf_addf(out, " (target spec %s, source spec %s)",
			    t->target_spec ? t->target_spec : "none",
			    t->source_spec ? t->source_spec : "none");
	ks_buf_addf(out, "\n\nCUDA primitives used (%d):\n", t->nuses);
	for (int i = 0; i < t->nuses; i++) {
		const struct ks_translate_use *u = &t->uses[i];
		ks_buf_addf(out, "- %s [%s], line%s ", u->title, u->concept, u->nlines > 1 ? "s" : "");
		for (int k = 0; k < u->nlines && k < 12; k++)
			ks_buf_addf(out, "%s%d", k ? ", " : "", u->lines[k]);
		if (u->nlines > 12)
			ks_buf_addf(out, ", ... (%d in all)", u->nlines);
		ks_buf_addf(out, "\n    e.g. %s\n    -> %s\n", u->snippet, u->equivalent);
		if (u->constraints)
			ks_buf_addf(out, "    constraints: %s\n", u->constraints);
		if (u->notes)
			ks_buf_addf(out, "    note: %s\n", u->notes);
	}
	int nw = 0;
	for (int i = 0; i < t->nfindings; i++)
		nw += t->findings[i].severity == KS_SEV_WARN;
	ks_buf_addf(out, "\nConstraint findings (%d error%s, %d warning%s):\n", t->nerrors,
		    t->nerrors == 1 ? "" : "s", nw, nw == 1 ? "" : "s");
	if (!t->nfindings)
		ks_buf_adds(out, "- none\n");
	for (int i = 0; i < t->nfindings; i++) {
		const struct ks_translate_finding *f = &t->findings[i];
		ks_buf_addf(out, "- %s", f->severity == KS_SEV_ERROR ? "ERROR" :
					 f->severity == KS_SEV_WARN ? "WARN" : "INFO");
		if (f->line)
			ks_buf_addf(out, " line %d", f->line);
		ks_buf_addf(out, " [%s]: %s\n", f->check, f->message);
	}
	if (t->ratio_text)
		ks_buf_addf(out, "\nBandwidth and compute:\n%s\n", t->ratio_text);
	if (t->hints)
		ks_buf_addf(out, "\nTarget hints:\n%s", t->hints);
	return ks_buf_adds(out, "");
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

int ks_translation_to_json(const struct ks_translation *t, struct ks_buf *out,
			   struct ks_error *e)
{
	json_t *o = json_object(), *uses = json_array(), *fs = json_array(), *r = json_object();
	json_object_set_new(o, "target", json_string(t->target));
	json_object_set_new(o, "target_spec", t->target_spec ? json_string(t->target_spec) : json_null());
	json_object_set_new(o, "source_spec", t->source_spec ? json_string(t->source_spec) : json_null());
	for (int i = 0; i < t->nuses; i++) {
		const struct ks_translate_use *u = &t->uses[i];
		json_t *j = json_object(), *lines = json_array();
		for (int k = 0; k < u->nlines; k++)
			json_array_append_new(lines, json_integer(u->lines[k]));
		json_object_set_new(j, "concept", json_string(u->concept));
		json_object_set_new(j, "title", json_string(u->title));
		json_object_set_new(j, "lines", lines);
		json_object_set_new(j, "snippet", json_string(u->snippet));
		json_object_set_new(j, "equivalent", json_string(u->equivalent));
		if (u->constraints)
			json_object_set_new(j, "constraints", json_string(u->constraints));
		if (u->notes)
			json_object_set_new(j, "notes", json_string(u->notes));
		json_array_append_new(uses, j);
	}
	for (int i = 0; i < t->nfindings; i++) {
		const struct ks_translate_finding *f = &t->findings[i];
		json_t *j = json_object();
		json_object_set_new(j, "severity", json_string(ks_severity_name(f->severity)));
		json_object_set_new(j, "check", json_string(f->check));
		json_object_set_new(j, "concept", f->concept ? json_string(f->concept) : json_null());
		json_object_set_new(j, "line", json_integer(f->line));
		json_object_set_new(j, "message", json_string(f->message));
		json_array_append_new(fs, j);
	}
	json_object_set_new(o, "uses", uses);
	json_object_set_new(o, "findings", fs);
	json_object_set_new(o, "errors", json_integer(t->nerrors));
	json_object_set_new(r, "bandwidth", num_or_null(t->bandwidth_ratio));
	json_object_set_new(r, "f32", num_or_null(t->f32_ratio));
	json_object_set_new(r, "f16_matrix", num_or_null(t->f16_matrix_ratio));
	json_object_set_new(r, "source_balance", num_or_null(t->source_balance));
	json_object_set_new(r, "target_balance", num_or_null(t->target_balance));
	json_object_set_new(r, "text", t->ratio_text ? json_string(t->ratio_text) : json_null());
	json_object_set_new(o, "ratios", r);
	json_object_set_new(o, "hints", t->hints ? json_string(t->hints) : json_null());
	int rc = ks_json_to_buf(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6),
				out);
	json_decref(o);
	rc = rc ? rc : ks_buf_adds(out, "\n");
	return rc ? ks_error_set(e, rc, "render translation as json") : 0;
}
