/* The kernel text handed to MLX without comments and indentation (mlx_kernel.h).
 *
 * Why: MLX's custom kernels rebuild their source on every call and hash all of it to find
 * the compiled module (mlx/backend/cuda/custom_kernel.cpp, 0.32: the module name is
 * std::hash of the source, computed in eval_gpu; the Metal path likewise builds the source
 * per call).  The attention template's header is 65 KB, two thirds of it comments and
 * indentation, and that work sits in every timed call (docs/mlx.md, "Kernel text").
 *
 * What is removed is what the C and C++ preprocessors treat as whitespace: comments (each
 * one space), indentation, runs of blanks inside a line, blanks at a line's end.  Every
 * newline stays, so a compiler message's line number is the file's: a comment that spans
 * lines gives its newlines back where its logical line ends (inside a #define, its end is
 * still that directive's).  String, character and raw string literals are copied as they
 * are; a ' inside a number (C++14's 1'000) is not a character literal.  CRLF line ends
 * become LF. */
#include <string.h>

#include "backend/mlx_kernel.h"

static int ident_char(char c)
{
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r';
}

/* the length of the line end at p: "\n" 1, "\r\n" 2 (written as "\n"), else 0 */
static int eol(const char *p)
{
	return p[0] == '\n' ? 1 : p[0] == '\r' && p[1] == '\n' ? 2 : 0;
}

struct compact {
	char *w;        /* write position (never ahead of the read position) */
	char *line;     /* where the current output line starts */
	int pending;    /* newlines of multi-line comments, owed at the logical line's end */
	int spliced;    /* the line continues the previous one (backslash-newline) */
};

/* the output so far ends in an identifier or number token equal to one of the raw string
 * prefixes R, u8R, uR, UR, LR */
static int raw_prefix(const struct compact *c)
{
	const char *e = c->w, *b = e;
	while (b > c->line && ident_char(b[-1]))
		b--;
	size_t n = (size_t)(e - b);
	static const char *const pre[] = {"R", "u8R", "uR", "UR", "LR"};
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (n == strlen(pre[i]) && !memcmp(b, pre[i], n))
			return 1;
	return 0;
}

/* the ' at the output's end continues a number (a digit separator): the token before it
 * starts with a digit */
static int in_number(const struct compact *c)
{
	const char *b = c->w;
	while (b > c->line && (ident_char(b[-1]) || b[-1] == '.' || b[-1] == '\''))
		b--;
	return b < c->w && b[0] >= '0' && b[0] <= '9';
}

/* copy a quoted literal starting at r (the opening quote); returns the read position after
 * it.  A newline the literal does not escape ends it (the compiler reports that, not us). */
static const char *copy_quoted(struct compact *c, const char *r)
{
	char q = *r;
	*c->w++ = *r++;
	while (*r && *r != q && *r != '\n') {
		if (*r == '\\' && r[1])
			*c->w++ = *r++;
		*c->w++ = *r++;
	}
	if (*r == q)
		*c->w++ = *r++;
	return r;
}

/* R"delim( ... )delim": copied whole; newlines inside belong to the literal */
static const char *copy_raw(struct compact *c, const char *r)
{
	const char *d = r + 1, *open = d;
	while (*open && *open != '(' && open - d <= 16 && !blank(*open) && *open != '\n')
		open++;
	if (*open != '(')
		return copy_quoted(c, r); /* not a raw string after all: the compiler will say */
	size_t dn = (size_t)(open - d);
	const char *end = open + 1;
	while (*end && !(*end == ')' && !strncmp(end + 1, d, dn) && end[1 + dn] == '"'))
		end++;
	end = *end ? end + dn + 2 : end;
	for (; r < end; r++) {
		*c->w++ = *r;
		if (*r == '\n') /* the literal's own lines are nobody's indentation */
			c->line = c->w;
	}
	return r;
}

/* the blanks ending the output line go (not one after a backslash: no new splice) */
static void trim_line(struct compact *c)
{
	while (c->w > c->line && blank(c->w[-1]) && !(c->w - 1 > c->line && c->w[-2] == '\\'))
		c->w--;
}

/* the end of a logical line: blanks before it go, the owed newlines come back */
static void end_line(struct compact *c)
{
	trim_line(c);
	for (; c->pending > 0; c->pending--)
		*c->w++ = '\n';
	*c->w++ = '\n';
	c->line = c->w;
}

/* one blank, unless the line is empty so far or already ends in one */
static void put_blank(struct compact *c)
{
	if (c->w > c->line ? !blank(c->w[-1]) : c->spliced)
		*c->w++ = ' ';
}

void ks_mlx_compact(char *text)
{
	if (!text)
		return;
	struct compact c = {.w = text, .line = text};
	const char *r = text;
	while (*r) {
		int n = eol(r + (r[0] == '\\')); /* read before writing: w may be r */
		if (r[0] == '\\' && n) { /* a spliced line: the directive goes on */
			r += 1 + n;
			*c.w++ = '\\';
			*c.w++ = '\n';
			c.line = c.w;
			c.spliced = 1;
		} else if (n && r[0] != '\\') {
			r += n;
			end_line(&c);
			c.spliced = 0;
		} else if (blank(r[0])) {
			put_blank(&c);
			r++;
		} else if (r[0] == '/' && r[1] == '/') {
			while (*r && !eol(r)) /* a backslash-newline continues the comment */
				if (r[0] == '\\' && eol(r + 1))
					c.pending++, r += 1 + eol(r + 1);
				else
					r++;
		} else if (r[0] == '/' && r[1] == '*') {
			const char *e = strstr(r + 2, "*/");
			const char *stop = e ? e + 2 : r + strlen(r);
			for (; r < stop; r++)
				c.pending += *r == '\n';
			put_blank(&c);
		} else if (r[0] == '"') {
			r = raw_prefix(&c) ? copy_raw(&c, r) : copy_quoted(&c, r);
		} else if (r[0] == '\'' && !in_number(&c)) {
			r = copy_quoted(&c, r);
		} else {
			*c.w++ = *r++;
		}
	}
	trim_line(&c); /* the last line, without a newline: owed newlines are dropped with it */
	*c.w = '\0';
}
