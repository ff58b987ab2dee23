/* Parsers of the mlx kernel file and artifact, and launch evaluation (mlx_kernel.h). */
#include "backend/mlx_kernel.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/expr.h"

const char *ks_mlx_flavour_name(enum ks_mlx_flavour f)
{
	return f == KS_MLX_CUDA ? "cuda" : f == KS_MLX_METAL ? "metal" : "native";
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* copy [p, p+len) without surrounding blanks into out; 0 or -1 when it does not fit */
static int copy_trim(char *out, size_t n, const char *p, size_t len)
{
	while (len && isspace((unsigned char)*p))
		p++, len--;
	while (len && isspace((unsigned char)p[len - 1]))
		len--;
	if (len >= n)
		return -1;
	memcpy(out, p, len);
	out[len] = '\0';
	return 0;
}

/* "a, min(b, c), d": up to three expressions split at top-level commas; missing ones are 1 */
static int split3(const char *v, char out[3][KS_MLX_EXPR], int line, int col,
		  const char *key, struct ks_error *e)
{
	int n = 0, depth = 0;
	const char *start = v;
	for (const char *p = v;; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		if ((*p == ',' && depth == 0) || !*p) {
			if (n == 3)
				return ks_error_set(e, KS_EPARSE, "%d:%d: %s takes at most three values (x, y, z)",
						    line, col, key);
			if (copy_trim(out[n], KS_MLX_EXPR, start, (size_t)(p - start)) || !out[n][0])
				return ks_error_set(e, KS_EPARSE, "%d:%d: %s: expected an expression before '%c'",
						    line, col + (int)(start - v), key, *p ? *p : ' ');
			n++;
			start = p + 1;
		}
		if (!*p)
			break;
	}
	for (; n < 3; n++)
		snprintf(out[n], KS_MLX_EXPR, "1");
	return 0;
}

static int is_ident(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

static int directive(struct ks_mlx_kernel *k, const char *key, const char *val, int line,
		     int col, int kcol, struct ks_error *e)
{
	if (!strcmp(key, "flavour") || !strcmp(key, "flavor")) {
		if (!strcmp(val, "cuda"))
			k->flavour = KS_MLX_CUDA;
		else if (!strcmp(val, "metal"))
			k->flavour = KS_MLX_METAL;
		else if (!strcmp(val, "native"))
			k->flavour = KS_MLX_NATIVE;
		else
			return ks_error_set(e, KS_EPARSE, "%d:%d: flavour: expected cuda, metal or native, got '%s'",
					    line, col, val);
		k->have_flavour = 1;
		return 0;
	}
	if (!strcmp(key, "grid"))
		return split3(val, k->grid, line, col, key, e);
	if (!strcmp(key, "threadgroup"))
		return split3(val, k->threadgroup, line, col, key, e);
	if (!strcmp(key, "init") || !strcmp(key, "shared_memory") || !strcmp(key, "native")) {
		char *dst = !strcmp(key, "init") ? k->init
			    : !strcmp(key, "native") ? k->native
						     : k->shared_memory;
		size_t n = !strcmp(key, "native") ? KS_MLX_NAME : KS_MLX_EXPR;
		if (!val[0] || copy_trim(dst, n, val, strlen(val)))
			return ks_error_set(e, KS_EPARSE, "%d:%d: %s: expected a value (at most %zu characters)",
					    line, col, key, n - 1);
		if (!strcmp(key, "native") && !is_ident(dst))
			return ks_error_set(e, KS_EPARSE, "%d:%d: native: expected an op name like softmax, got '%s'",
					    line, col, dst);
		return 0;
	}
	if (!strcmp(key, "template")) {
		const char *eq = strchr(val, '=');
		if (k->ntemplate == KS_MLX_MAX_TEMPLATE)
			return ks_error_set(e, KS_EPARSE, "%d:%d: more than %d template lines", line, col,
					    KS_MLX_MAX_TEMPLATE);
		struct ks_mlx_tdecl *t = &k->tmpl[k->ntemplate];
		if (!eq || copy_trim(t->name, sizeof(t->name), val, (size_t)(eq - val)) ||
		    !is_ident(t->name) || copy_trim(t->expr, sizeof(t->expr), eq + 1, strlen(eq + 1)) ||
		    !t->expr[0])
			return ks_error_set(e, KS_EPARSE, "%d:%d: template: expected NAME = expression, got '%s'",
					    line, col, val);
		t->line = line;
		k->ntemplate++;
		return 0;
	}
	if (!strcmp(key, "include"))
		return ks_error_set(e, KS_EPARSE,
				    "%d:%d: include '%s' is not resolved here: the backend resolves "
				    "includes against the task's folder when it writes the artifact",
				    line, kcol, val);
	return ks_error_set(e, KS_EPARSE,
			    "%d:%d: unknown @mlx directive '%s' (known: flavour, grid, threadgroup, "
			    "template, init, shared_memory, native, header, include, body)",
			    line, kcol, key);
}

static char *dup_range(const char *a, const char *b)
{
	char *s = malloc((size_t)(b - a) + 1);
	if (s) {
		memcpy(s, a, (size_t)(b - a));
		s[b - a] = '\0';
	}
	return s;
}

int ks_mlx_kernel_parse(const char *text, struct ks_mlx_kernel *k, struct ks_error *e)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->init, sizeof(k->init), "nan");
	snprintf(k->shared_memory, sizeof(k->shared_memory), "0");
	const char *header_start = NULL, *header_end = NULL, *body_start = NULL;
	int line = 0, have_grid = 0, have_tg = 0;
	for (const char *p = text; p && *p && !body_start;) {
		line++;
		const char *nl = strchr(p, '\n');
		const char *end = nl ? nl : p + strlen(p);
		const char *q = skip_ws(p);
		if (!header_start && !strncmp(q, "#define", 7) && (q[7] == ' ' || q[7] == '\t')) {
			/* a knob value baked in (a run's best.mlx): a template arg */
			char val[KS_MLX_EXPR + KS_MLX_NAME + 16];
			if (copy_trim(val, sizeof(val), q + 8, (size_t)(end - q - 8)))
				return ks_error_set(e, KS_EPARSE, "%d:1: #define too long", line);
			size_t nl_ = strcspn(val, " \t");
			if (!val[nl_])
				return ks_error_set(e, KS_EPARSE,
						    "%d:1: '#define NAME VALUE' before the body is a "
						    "template arg and needs a value",
						    line);
			val[nl_] = '=';
			int rc = directive(k, "template", val, line, 1, 1, e);
			if (rc)
				return rc;
			k->tmpl[k->ntemplate - 1].from_define = 1;
		} else if (!strncmp(q, "//", 2) && !strncmp(skip_ws(q + 2), "@mlx", 4)) {
			const char *d = skip_ws(skip_ws(q + 2) + 4);
			int col = (int)(d - p) + 1;
			char key[64] = "", val[KS_MLX_EXPR * 3 + 8];
			size_t kl = strcspn(d, ": \t\r\n");
			if (kl == 0 || kl >= sizeof(key))
				return ks_error_set(e, KS_EPARSE, "%d:%d: expected a directive after '@mlx'",
						    line, col);
			memcpy(key, d, kl);
			const char *rest = skip_ws(d + kl);
			if (!strcmp(key, "header") || !strcmp(key, "body")) {
				if (*rest && *rest != '\r' && *rest != '\n')
					return ks_error_set(e, KS_EPARSE,
							    "%d:%d: '@mlx %s' stands alone on its line; "
							    "the %s starts on the next",
							    line, col, key, key);
				if (!strcmp(key, "header")) {
					if (header_start)
						return ks_error_set(e, KS_EPARSE, "%d:%d: a second '@mlx header'",
								    line, col);
					header_start = nl ? nl + 1 : end;
				} else {
					header_end = p;
					body_start = nl ? nl + 1 : end;
					k->body_line = line + 1;
				}
			} else {
				if (*rest != ':')
					return ks_error_set(e, KS_EPARSE, "%d:%d: expected ':' after '%s'",
							    line, col + (int)kl, key);
				rest = skip_ws(rest + 1);
				if (copy_trim(val, sizeof(val), rest, (size_t)(end - rest)))
					return ks_error_set(e, KS_EPARSE, "%d:%d: the value of '%s' is too long",
							    line, col, key);
				int rc = directive(k, key, val, line, (int)(rest - p) + 1, col, e);
				if (rc)
					return rc;
				have_grid |= !strcmp(key, "grid");
				have_tg |= !strcmp(key, "threadgroup");
			}
		}
		p = nl ? nl + 1 : NULL;
	}
	if (!k->have_flavour) {
		if (!k->native[0])
			return ks_error_set(e, KS_EPARSE,
					    "0:0: no '// @mlx flavour: cuda|metal|native' line (docs/mlx.md)");
		k->flavour = KS_MLX_NATIVE;
	}
	if (k->flavour == KS_MLX_NATIVE) {
		if (!k->native[0])
			return ks_error_set(e, KS_EPARSE, "0:0: flavour native needs '// @mlx native: OP'");
		return 0;
	}
	if (k->native[0])
		return ks_error_set(e, KS_EPARSE, "0:0: 'native:' belongs to flavour native only");
	if (!have_grid || !have_tg)
		return ks_error_set(e, KS_EPARSE, "0:0: a %s kernel needs '// @mlx grid: X, Y, Z' and "
						  "'// @mlx threadgroup: X, Y, Z' (threads, not blocks)",
				    ks_mlx_flavour_name(k->flavour));
	if (!body_start)
		return ks_error_set(e, KS_EPARSE,
				    "0:0: no '// @mlx body' line: the kernel body follows that line");
	k->header = header_start ? dup_range(header_start, header_end > header_start ? header_end
											: header_start)
				 : strdup("");
	k->body = strdup(body_start);
	if (!k->header || !k->body)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	ks_mlx_compact(k->header);
	ks_mlx_compact(k->body);
	return 0;
}

void ks_mlx_kernel_release(struct ks_mlx_kernel *k)
{
	free(k->header);
	free(k->body);
	k->header = k->body = NULL;
}

/* ---- artifact ---------------------------------------------------------------------- */

static int artifact_line(struct ks_mlx_artifact *a, char *l, int line, struct ks_error *e)
{
	char word[16] = "";
	int off = 0;
	if (sscanf(l, "%15s %n", word, &off) < 1)
		return 0;
	char *rest = l + off;
	if (!strcmp(word, "task"))
		return copy_trim(a->task, sizeof(a->task), rest, strlen(rest))
			       ? ks_error_set(e, KS_EPARSE, "artifact line %d: task name too long", line)
			       : 0;
	if (!strcmp(word, "chain")) {
		a->chain = atoi(rest);
		return a->chain >= 1 && a->chain <= KS_MLX_MAX_CHAIN
			       ? 0
			       : ks_error_set(e, KS_EPARSE, "artifact line %d: chain 1..%d", line,
					      KS_MLX_MAX_CHAIN);
	}
	if (!strcmp(word, "timer")) {
		if (!strcmp(rest, "wall") || !strcmp(rest, "events")) {
			a->timer = strcmp(rest, "wall") ? KS_MLX_TIMER_EVENTS : KS_MLX_TIMER_WALL;
			return 0;
		}
		return ks_error_set(e, KS_EPARSE, "artifact line %d: timer wall or events", line);
	}
	if (!strcmp(word, "header")) {
		if (!strcmp(rest, "inline") || !strcmp(rest, "file")) {
			a->header_file = !strcmp(rest, "file");
			return 0;
		}
		return ks_error_set(e, KS_EPARSE, "artifact line %d: header inline or file", line);
	}
	if (!strcmp(word, "param")) {
		if (a->nparams == KS_MLX_MAX_PARAMS ||
		    copy_trim(a->params[a->nparams], KS_MLX_NAME, rest, strlen(rest)))
			return ks_error_set(e, KS_EPARSE, "artifact line %d: bad param", line);
		a->nparams++;
		return 0;
	}
	if (!strcmp(word, "define")) {
		if (a->ndefines == KS_MLX_MAX_TEMPLATE ||
		    sscanf(rest, "%63s %63s", a->defines[a->ndefines][0], a->defines[a->ndefines][1]) != 2)
			return ks_error_set(e, KS_EPARSE, "artifact line %d: bad define", line);
		a->ndefines++;
		return 0;
	}
	if (!strcmp(word, "tensor")) {
		if (a->ntensors == KS_MLX_MAX_TENSORS)
			return ks_error_set(e, KS_EPARSE, "artifact line %d: too many tensors", line);
		struct ks_mlx_tensor *t = &a->tensors[a->ntensors];
		char dir[8], dt[8];
		int n = 0;
		if (sscanf(rest, "%7s %63s %7s %n", dir, t->name, dt, &n) < 3 ||
		    ks_dtype_parse(dt, &t->dtype))
			return ks_error_set(e, KS_EPARSE, "artifact line %d: bad tensor", line);
		t->is_output = !strcmp(dir, "out");
		for (char *s = rest + n; *s && strcmp(s, "-");) {
			size_t len = strcspn(s, ";");
			if (t->ndim == KS_MAX_DIMS || copy_trim(t->shape[t->ndim], KS_MLX_EXPR, s, len))
				return ks_error_set(e, KS_EPARSE, "artifact line %d: bad shape", line);
			t->ndim++;
			s += len + (s[len] == ';');
		}
		a->ntensors++;
		return 0;
	}
	return ks_error_set(e, KS_EPARSE, "artifact line %d: unknown '%s'", line, word);
}

int ks_mlx_artifact_parse(const char *text, struct ks_mlx_artifact *a, struct ks_error *e)
{
	memset(a, 0, sizeof(*a));
	a->chain = 1;
	size_t ml = strlen(KS_MLX_ARTIFACT_MAGIC);
	if (strncmp(text, KS_MLX_ARTIFACT_MAGIC, ml) || text[ml] != '\n')
		return ks_error_set(e, KS_EPARSE, "not an mlx artifact (no '%s' line)",
				    KS_MLX_ARTIFACT_MAGIC);
	const char *p = text + ml + 1;
	for (int line = 2; *p; line++) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len == 6 && !strncmp(p, "kernel", 6)) {
			int rc = ks_mlx_kernel_parse(nl ? nl + 1 : "", &a->kernel, e);
			return rc ? ks_error_wrap(e, "kernel") : 0;
		}
		char l[2048];
		if (len >= sizeof(l))
			return ks_error_set(e, KS_EPARSE, "artifact line %d too long", line);
		memcpy(l, p, len);
		l[len] = '\0';
		int rc = artifact_line(a, l, line, e);
		if (rc)
			return rc;
		if (!nl)
			break;
		p = nl + 1;
	}
	return ks_error_set(e, KS_EPARSE, "artifact has no 'kernel' section");
}

int ks_mlx_header_in_file(const struct ks_mlx_artifact *a)
{
	return a->header_file && a->kernel.flavour == KS_MLX_CUDA;
}

void ks_mlx_artifact_release(struct ks_mlx_artifact *a)
{
	ks_mlx_kernel_release(&a->kernel);
}

/* ---- launch ------------------------------------------------------------------------ */

struct lookup_ctx {
	const struct ks_mlx_artifact *a;
	const double *params;
	const struct ks_mlx_launch *l;
};

static int lookup(const char *name, size_t len, double *out, void *vctx)
{
	const struct lookup_ctx *c = vctx;
	for (int i = 0; i < c->a->nparams; i++)
		if (strlen(c->a->params[i]) == len && !strncmp(c->a->params[i], name, len)) {
			*out = c->params[i];
			return 0;
		}
	/* knobs and earlier template args, by name (ints and bools) */
	for (int i = 0; c->l && i < c->l->ntargs; i++)
		if (strlen(c->l->targs[i].name) == len && !strncmp(c->l->targs[i].name, name, len) &&
		    c->l->targs[i].kind != KS_MLX_TARG_DTYPE) {
			*out = c->l->targs[i].value;
			return 0;
		}
	return KS_ENOTFOUND;
}

static int eval_int(const char *what, const char *expr, struct lookup_ctx *c, int *out,
		    struct ks_error *e)
{
	double v;
	int col = 0;
	int rc = ks_expr_eval(expr, lookup, c, &v, &col, e);
	if (rc)
		return ks_error_wrap(e, "%s '%s' (column %d)", what, expr, col);
	if (!isfinite(v) || v != floor(v) || fabs(v) > 2147483647.0)
		return ks_error_set(e, KS_EINVAL, "%s '%s' = %g is not an int", what, expr, v);
	*out = (int)v;
	return 0;
}

/* a knob value or template expression as an MLX template argument */
static int targ_value(struct ks_mlx_targ *t, const char *text, struct lookup_ctx *c,
		      struct ks_error *e)
{
	enum ks_dtype dt;
	if (!strcmp(text, "true") || !strcmp(text, "false")) {
		t->kind = KS_MLX_TARG_BOOL;
		t->value = text[0] == 't';
		return 0;
	}
	if (!ks_dtype_parse(text, &dt)) {
		t->kind = KS_MLX_TARG_DTYPE;
		t->value = (int)dt;
		return 0;
	}
	t->kind = KS_MLX_TARG_INT;
	char what[KS_MLX_NAME + 32];
	snprintf(what, sizeof(what), "template arg %s", t->name);
	return eval_int(what, text, c, &t->value, e);
}

static int add_targ(struct ks_mlx_launch *l, const char *name, const char *text,
		    struct lookup_ctx *c, struct ks_error *e)
{
	for (int i = 0; i < l->ntargs; i++)
		if (!strcmp(l->targs[i].name, name))
			return ks_error_set(e, KS_EINVAL,
					    "template arg '%s' is given twice (params and knobs are "
					    "template args already)",
					    name);
	if (l->ntargs == (int)(sizeof(l->targs) / sizeof(l->targs[0])))
		return ks_error_set(e, KS_ELIMIT, "too many template args");
	struct ks_mlx_targ *t = &l->targs[l->ntargs];
	snprintf(t->name, sizeof(t->name), "%s", name);
	int rc = targ_value(t, text, c, e);
	if (!rc)
		l->ntargs++;
	return rc;
}

/* whether the artifact's defines (--define, the knob tuning) give name a value */
static int defined(const struct ks_mlx_artifact *a, const char *name)
{
	for (int i = 0; i < a->ndefines; i++)
		if (!strcmp(a->defines[i][0], name))
			return 1;
	return 0;
}

int ks_mlx_launch_resolve(const struct ks_mlx_artifact *a, const double *params,
			  struct ks_mlx_launch *out, struct ks_error *e)
{
	memset(out, 0, sizeof(*out));
	struct lookup_ctx c = {a, params, out};
	const struct ks_mlx_kernel *k = &a->kernel;
	int rc = 0;
	for (int i = 0; i < a->ntensors && !rc; i++)
		for (int d = 0; d < a->tensors[i].ndim && !rc; d++) {
			char what[KS_MLX_NAME + 32];
			snprintf(what, sizeof(what), "shape of %s", a->tensors[i].name);
			rc = eval_int(what, a->tensors[i].shape[d], &c, &out->shape[i][d], e);
		}
	if (rc || k->flavour == KS_MLX_NATIVE)
		return rc;
	for (int i = 0; i < a->nparams && !rc; i++) {
		char v[64];
		snprintf(v, sizeof(v), "%.17g", params[i]);
		rc = add_targ(out, a->params[i], v, &c, e);
	}
	for (int i = 0; i < a->ndefines && !rc; i++)
		rc = add_targ(out, a->defines[i][0], a->defines[i][1], &c, e);
	for (int i = 0; i < k->ntemplate && !rc; i++)
		if (!k->tmpl[i].from_define || !defined(a, k->tmpl[i].name))
			rc = add_targ(out, k->tmpl[i].name, k->tmpl[i].expr, &c, e);
	for (int i = 0; i < 3 && !rc; i++) {
		rc = eval_int("grid", k->grid[i], &c, &out->grid[i], e);
		if (!rc)
			rc = eval_int("threadgroup", k->threadgroup[i], &c, &out->threadgroup[i], e);
		if (!rc && (out->grid[i] < 1 || out->threadgroup[i] < 1))
			rc = ks_error_set(e, KS_EINVAL, "grid and threadgroup must be >= 1 on every axis "
							"(axis %d: grid %d, threadgroup %d)",
					  i, out->grid[i], out->threadgroup[i]);
	}
	if (!rc)
		rc = eval_int("shared_memory", k->shared_memory, &c, &out->shared_memory, e);
	if (rc)
		return rc;
	if (!strcmp(k->init, "none"))
		return 0;
	out->has_init = 1;
	if (!strcmp(k->init, "nan")) {
		out->init = NAN;
		return 0;
	}
	int col = 0;
	rc = ks_expr_eval(k->init, lookup, &c, &out->init, &col, e);
	return rc ? ks_error_wrap(e, "init '%s' (column %d)", k->init, col) : 0;
}
