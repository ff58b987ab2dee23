/* Python text shared by the exporters that write Python (mlx, torch). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "export/exporters.h"

/* a Python string literal of s, one source line per literal line */
void ks_py_add_str(struct ks_buf *out, const char *s)
{
	ks_buf_adds(out, "(\n");
	if (!*s)
		ks_buf_adds(out, "    \"\"\n");
	while (*s) {
		ks_buf_adds(out, "    \"");
		for (; *s && *s != '\n'; s++) {
			unsigned char c = (unsigned char)*s;
			if (c == '\\' || c == '"')
				ks_buf_addf(out, "\\%c", c);
			else if (c == '\t')
				ks_buf_adds(out, "\\t");
			else if (c < 0x20 || c == 0x7f)
				ks_buf_addf(out, "\\x%02x", c);
			else
				ks_buf_add(out, s, 1);
		}
		ks_buf_adds(out, *s == '\n' ? "\\n\"\n" : "\"\n");
		if (*s)
			s++;
	}
	ks_buf_adds(out, ")\n");
}

/* ksearch expression -> Python; only ?: has no spelling here */
int ks_py_add_expr(struct ks_buf *out, const char *x, const char *what, struct ks_error *e)
{
	ks_buf_adds(out, "(");
	for (const char *p = x; *p;) {
		if (isalpha((unsigned char)*p) || *p == '_') {
			const char *q = p;
			while (isalnum((unsigned char)*q) || *q == '_' || *q == '.')
				q++;
			size_t n = (size_t)(q - p);
			if (n == 8 && !strncmp(p, "ceil_div", 8))
				ks_buf_adds(out, "_ceil_div");
			else if ((n == 5 && !strncmp(p, "floor", 5)) || (n == 4 && !strncmp(p, "ceil", 4)) ||
				 (n == 4 && !strncmp(p, "sqrt", 4)) || (n == 4 && !strncmp(p, "log2", 4)))
				ks_buf_addf(out, "math.%.*s", (int)n, p);
			else
				ks_buf_add(out, p, n);
			p = q;
		} else if (*p == '/') {
			ks_buf_adds(out, "//");
			p++;
		} else if (!strncmp(p, "&&", 2) || !strncmp(p, "||", 2)) {
			ks_buf_adds(out, *p == '&' ? " and " : " or ");
			p += 2;
		} else if (*p == '!' && p[1] != '=') {
			ks_buf_adds(out, " not ");
			p++;
		} else if (*p == '?') {
			return ks_error_set(e, KS_EINVAL, "%s '%s': the export cannot translate '?:'",
					    what, x);
		} else {
			ks_buf_add(out, p, 1);
			p++;
		}
	}
	return ks_buf_adds(out, ")");
}

/* "x.shape[1]" when an input's shape names param p alone */
int ks_py_param_source(const struct ks_task *t, const char *p, char *out, size_t n)
{
	for (int i = 0; i < t->ninputs; i++)
		for (int d = 0; d < t->tensors[i].ndim; d++)
			if (!strcmp(t->tensors[i].shape[d], p)) {
				snprintf(out, n, "%s.shape[%d]", t->tensors[i].name, d);
				return 1;
			}
	return 0;
}

