/* `// @mlx include: PATH` in a kernel file's header (docs/mlx.md, "Includes"): the backend
 * replaces the line with the text of PATH, a file of the task's folder, so that a kernel
 * file can run device code another backend's kernel holds (the attention MLX template runs
 * templates/cuda/flash2.cu's) without a copy of it.
 *
 * The included text sees the knob values as macros, as a cuda-backend kernel sees them
 * (-DNAME=VALUE): `#define NAME VALUE` before it, `#undef NAME` after it, so that in the
 * body they are the constexpr template args MLX declares, as in any kernel file.  The knob
 * values are the defines the candidate was compiled with and the file's own leading
 * `#define` lines (a run's best.mlx).
 *
 * Resolved here, in the library, before the runner's sandbox: the artifact holds the
 * expanded text, so its hash changes when the included file does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/mlx_kernel.h"
#include "util/fs.h"

#define MLX_INCLUDE_MAX (4 << 20)

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* the directive of a "// @mlx KEY..." line (p at the line's start), or NULL */
static const char *mlx_directive(const char *p)
{
	const char *q = skip_ws(p);
	if (strncmp(q, "//", 2))
		return NULL;
	q = skip_ws(q + 2);
	return strncmp(q, "@mlx", 4) ? NULL : skip_ws(q + 4);
}

static int is_word(const char *d, const char *w)
{
	size_t n = strlen(w);
	return !strncmp(d, w, n) && !(d[n] == '_' || (d[n] >= 'a' && d[n] <= 'z'));
}

/* a path inside the task's folder: relative, no "..", plain characters */
static int path_ok(const char *p)
{
	if (!p[0] || p[0] == '/')
		return 0;
	for (const char *s = p; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("._-/", *s)))
			return 0;
	for (const char *s = p; (s = strstr(s, "..")); s += 2)
		if ((s == p || s[-1] == '/') && (s[2] == '/' || !s[2]))
			return 0;
	return 1;
}

/* the knob macros around an included file: NAME VALUE pairs, the defines first */
struct macros {
	int n;
	char name[KS_MLX_MAX_TEMPLATE * 2][KS_MLX_NAME];
	char value[KS_MLX_MAX_TEMPLATE * 2][KS_MLX_EXPR];
};

static void add_macro(struct macros *m, const char *name, size_t nlen, const char *value,
		      size_t vlen)
{
	if (m->n == KS_MLX_MAX_TEMPLATE * 2 || nlen == 0 || nlen >= KS_MLX_NAME ||
	    vlen >= KS_MLX_EXPR)
		return; /* the parser refuses such a file or define anyway */
	for (int i = 0; i < m->n; i++)
		if (strlen(m->name[i]) == nlen && !strncmp(m->name[i], name, nlen))
			return;
	snprintf(m->name[m->n], KS_MLX_NAME, "%.*s", (int)nlen, name);
	snprintf(m->value[m->n], KS_MLX_EXPR, "%.*s", (int)vlen, value);
	m->n++;
}

static void collect_macros(const char *source, const char *const *defines, struct macros *m)
{
	m->n = 0;
	for (const char *const *d = defines; d && *d; d++) {
		const char *eq = strchr(*d, '=');
		if (eq)
			add_macro(m, *d, (size_t)(eq - *d), eq + 1, strlen(eq + 1));
		else
			add_macro(m, *d, strlen(*d), "1", 1);
	}
	/* the file's #define lines before its header and body (the parser's template args) */
	for (const char *p = source; p && *p;) {
		const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
		const char *d = mlx_directive(p), *q = skip_ws(p);
		if (d && (is_word(d, "header") || is_word(d, "body")))
			break;
		if (!strncmp(q, "#define", 7) && (q[7] == ' ' || q[7] == '\t')) {
			const char *n0 = skip_ws(q + 8), *n1 = n0;
			while (n1 < end && *n1 != ' ' && *n1 != '\t')
				n1++;
			const char *v0 = skip_ws(n1), *v1 = end;
			while (v1 > v0 && (v1[-1] == ' ' || v1[-1] == '\t' || v1[-1] == '\r'))
				v1--;
			if (v1 > v0)
				add_macro(m, n0, (size_t)(n1 - n0), v0, (size_t)(v1 - v0));
		}
		p = nl ? nl + 1 : NULL;
	}
}

int ks_mlx_resolve_includes(const char *task_dir, const char *source,
			    const char *const *defines, struct ks_buf *out, struct ks_error *e)
{
	struct macros *m = NULL;
	int line = 0, in_header = 0, rc = 0;
	for (const char *p = source; p && *p && !rc;) {
		line++;
		const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
		const char *d = mlx_directive(p);
		if (d && is_word(d, "header"))
			in_header = 1;
		else if (d && is_word(d, "body"))
			in_header = 0;
		if (!d || !is_word(d, "include")) {
			ks_buf_add(out, p, (size_t)(end - p) + (nl ? 1 : 0));
			p = nl ? nl + 1 : NULL;
			continue;
		}
		char path[1024];
		const char *v = skip_ws(d + 7);
		const char *v1 = end;
		while (v1 > v && (v1[-1] == ' ' || v1[-1] == '\t' || v1[-1] == '\r'))
			v1--;
		int col = (int)(d - p) + 1;
		if (*v != ':' || !in_header) {
			rc = ks_error_set(e, KS_EPARSE,
					  *v != ':' ? "%d:%d: expected ':' after 'include'"
						    : "%d:%d: include belongs in the header (between "
						      "'// @mlx header' and '// @mlx body')",
					  line, col);
			break;
		}
		v = skip_ws(v + 1);
		if (v1 - v <= 0 || (size_t)(v1 - v) >= sizeof(path)) {
			rc = ks_error_set(e, KS_EPARSE, "%d:%d: include: expected a path", line, col);
			break;
		}
		snprintf(path, sizeof(path), "%.*s", (int)(v1 - v), v);
		if (!path_ok(path)) {
			rc = ks_error_set(e, KS_EPARSE,
					  "%d:%d: include '%s': expected a path inside the task's folder "
					  "(relative, no '..', letters, digits, '._-/')",
					  line, col, path);
			break;
		}
		char full[4096];
		struct ks_buf text = KS_BUF_INIT;
		struct ks_error fe = {0};
		snprintf(full, sizeof(full), "%s/%s", task_dir ? task_dir : ".", path);
		if (ks_file_read(full, MLX_INCLUDE_MAX, &text, &fe)) {
			rc = ks_error_set(e, KS_EPARSE, "%d:%d: include '%s': %s", line, col, path,
					  fe.msg);
			ks_buf_release(&text);
			break;
		}
		for (const char *q = ks_buf_str(&text); q && *q; q = strchr(q, '\n'), q = q ? q + 1 : NULL)
			if (mlx_directive(q)) {
				rc = ks_error_set(e, KS_EPARSE,
						  "%d:%d: include '%s' holds '// @mlx' lines: an included "
						  "file is plain device code",
						  line, col, path);
				break;
			}
		if (rc) {
			ks_buf_release(&text);
			break;
		}
		if (!m && !(m = malloc(sizeof(*m)))) {
			ks_buf_release(&text);
			rc = ks_error_set(e, KS_ENOMEM, "out of memory");
			break;
		}
		collect_macros(source, defines, m);
		ks_buf_addf(out, "// included: %s (the knob values as macros around it)\n", path);
		for (int i = 0; i < m->n; i++)
			ks_buf_addf(out, "#define %s %s\n", m->name[i], m->value[i]);
		ks_buf_add(out, text.data, text.len);
		if (text.len && text.data[text.len - 1] != '\n')
			ks_buf_adds(out, "\n");
		for (int i = 0; i < m->n; i++)
			ks_buf_addf(out, "#undef %s\n", m->name[i]);
		ks_buf_addf(out, "// end of %s\n", path);
		ks_buf_release(&text);
		p = nl ? nl + 1 : NULL;
	}
	free(m);
	return rc;
}
