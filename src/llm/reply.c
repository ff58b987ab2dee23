/* Reply parsing: code from fenced blocks, JSON from fenced or bare text, correction
 * prompts.  Replies are untrusted input: any bytes, any size, NULs, broken fences. */
#include "ksearch/llm.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MAX_BLOCKS 256
#define MAX_JSON_STARTS 32

struct block {
	size_t start, end;  /* content bytes [start, end) */
	size_t fence, past; /* the whole block, fences included: [fence, past) */
	int line;           /* 1-based line of the opening fence */
	char lang[16];      /* info string's first word, lower case ("" for bare) */
	int closed;
};

/* one line [s, e) of text; returns the start of the next line */
static size_t line_end(const char *t, size_t len, size_t s, size_t *content_end)
{
	size_t i = s;
	while (i < len && t[i] != '\n')
		i++;
	*content_end = i;
	return i < len ? i + 1 : len;
}

/* is [s, e) a fence line?  Sets its char, run length and the info string position. */
static int fence_parse(const char *t, size_t s, size_t e, char *ch, size_t *run, size_t *info)
{
	size_t i = s, ind = 0;
	while (i < e && t[i] == ' ' && ind < 4) {
		i++;
		ind++;
	}
	if (ind > 3 || i >= e || (t[i] != '`' && t[i] != '~'))
		return 0;
	char c = t[i];
	size_t n = 0;
	while (i < e && t[i] == c) {
		i++;
		n++;
	}
	if (n < 3)
		return 0;
	*ch = c;
	*run = n;
	*info = i;
	return 1;
}

static int blank(const char *t, size_t s, size_t e)
{
	for (size_t i = s; i < e; i++)
		if (!isspace((unsigned char)t[i]))
			return 0;
	return 1;
}

/* collect fenced blocks; returns how many, *unterminated gets the line of an open fence
 * with non-blank content after it (0 when none) */
static int blocks_scan(const char *t, size_t len, struct block *b, int max, int *unterminated)
{
	size_t pos = 0;
	int line = 1, n = 0;
	*unterminated = 0;
	while (pos < len) {
		size_t ce, next = line_end(t, len, pos, &ce), run, info;
		char ch;
		if (!fence_parse(t, pos, ce, &ch, &run, &info)) {
			pos = next;
			line++;
			continue;
		}
		struct block blk = {.start = next, .fence = pos, .line = line};
		size_t k = info, w = 0;
		while (k < ce && t[k] == ' ')
			k++;
		while (k < ce && !isspace((unsigned char)t[k]) && !strchr("{:,;", t[k]) &&
		       w + 1 < sizeof(blk.lang))
			blk.lang[w++] = (char)tolower((unsigned char)t[k++]);
		blk.lang[w] = '\0';
		/* find the closing fence */
		size_t p = next;
		int l = line + 1;
		while (p < len) {
			size_t ce2, nx2 = line_end(t, len, p, &ce2), run2, info2;
			char ch2;
			if (fence_parse(t, p, ce2, &ch2, &run2, &info2) && ch2 == ch && run2 >= run &&
			    blank(t, info2, ce2)) {
				blk.end = p;
				blk.past = nx2;
				blk.closed = 1;
				pos = nx2;
				line = l + 1;
				break;
			}
			p = nx2;
			l++;
		}
		if (!blk.closed) {
			if (!blank(t, next, len))
				*unterminated = blk.line;
			break;
		}
		if (n < max)
			b[n++] = blk;
	}
	return n;
}

/* language classes: 2 = matches the wanted language, 1 = some code language or bare,
 * 0 = not code (json, yaml, text, shell, ...) */
static int lang_family(const char *l)
{
	static const struct {
		const char *name;
		int fam;
	} map[] = {
		{"c", 1},      {"h", 1},      {"cuda", 2},  {"cu", 2},     {"cuh", 2},
		{"cpp", 3},    {"c++", 3},    {"cxx", 3},   {"cc", 3},     {"hpp", 3},
		{"metal", 4},  {"msl", 4},    {"opencl", 5}, {"cl", 5},    {"hip", 6},
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(l, map[i].name))
			return map[i].fam;
	return 0;
}

static int lang_class(const char *blk, const char *want)
{
	if (!blk[0])
		return 1;
	int fb = lang_family(blk);
	if (!fb)
		return 0;
	if (want && want[0] && fb == lang_family(want))
		return 2;
	return 1;
}

int ks_reply_code(const char *reply, size_t len, const char *lang, struct ks_buf *code,
		  char *lang_out, struct ks_error *e)
{
	struct block blocks[MAX_BLOCKS];
	int unterminated = 0;
	if (lang_out)
		lang_out[0] = '\0';
	if (!reply)
		return ks_error_set(e, KS_EPARSE, "reply is empty");
	int n = blocks_scan(reply, len, blocks, MAX_BLOCKS, &unterminated);
	if (unterminated)
		return ks_error_set(e, KS_EPARSE,
				    "reply has an unterminated code fence at line %d (reply cut "
				    "short?)",
				    unterminated);
	int best = -1, best_class = 0;
	for (int i = 0; i < n; i++) {
		int c = lang_class(blocks[i].lang, lang);
		if (!c)
			continue;
		size_t sz = blocks[i].end - blocks[i].start;
		if (c > best_class ||
		    (c == best_class && sz > blocks[best].end - blocks[best].start)) {
			best = i;
			best_class = c;
		}
	}
	if (best < 0) {
		if (n)
			return ks_error_set(e, KS_EPARSE,
					    "reply has no code block (only a ```%s block)",
					    blocks[0].lang[0] ? blocks[0].lang : "text");
		return ks_error_set(e, KS_EPARSE, "reply has no code block");
	}
	size_t s = blocks[best].start, en = blocks[best].end;
	if (blank(reply, s, en))
		return ks_error_set(e, KS_EPARSE, "reply's code block at line %d is empty",
				    blocks[best].line);
	if (memchr(reply + s, '\0', en - s))
		return ks_error_set(e, KS_EPARSE, "reply's code block at line %d holds a NUL byte",
				    blocks[best].line);
	ks_buf_reset(code);
	if (ks_buf_add(code, reply + s, en - s))
		return ks_error_set(e, KS_ELIMIT, "reply's code block is larger than %zu bytes",
				    code->cap);
	if (lang_out)
		snprintf(lang_out, 16, "%s", blocks[best].lang);
	return 0;
}

/* ---------------------------------------------------------------- JSON */

/* line and column (1-based) of byte offset off */
static void line_col(const char *t, size_t off, int *line, int *col)
{
	int l = 1, c = 1;
	for (size_t i = 0; i < off; i++) {
		if (t[i] == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	*line = l;
	*col = c;
}

/* end (exclusive) of the balanced value starting at s, 0 when it never closes */
static size_t balanced_end(const char *t, size_t len, size_t s)
{
	char stack[512];
	int depth = 0, in_str = 0;
	for (size_t i = s; i < len; i++) {
		char c = t[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"') {
			in_str = 1;
		} else if (c == '{' || c == '[') {
			if (depth >= (int)sizeof(stack))
				return 0;
			stack[depth++] = c == '{' ? '}' : ']';
		} else if (c == '}' || c == ']') {
			if (!depth || stack[depth - 1] != c)
				return 0;
			if (--depth == 0)
				return i + 1;
		}
	}
	return 0;
}

static int want_ok(json_t *j, int want)
{
	return (want == '{' && json_is_object(j)) || (want == '[' && json_is_array(j)) ||
	       (!want && (json_is_object(j) || json_is_array(j)));
}

static const char *want_name(int want)
{
	return want == '{' ? "object" : want == '[' ? "array" : "object or array";
}

/* parse reply[s, en); on a syntax error fill e with reply-relative position */
static int json_try(const char *reply, size_t s, size_t en, int want, struct ks_buf *out,
		    struct ks_error *e)
{
	json_error_t je;
	json_t *j = json_loadb(reply + s, en - s, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		int line, col;
		line_col(reply, s, &line, &col);
		if (je.line <= 1)
			col += je.column > 0 ? je.column - 1 : 0;
		else {
			line += je.line - 1;
			col = je.column;
		}
		return ks_error_set(e, KS_EPARSE, "reply JSON invalid at line %d col %d: %s", line,
				    col, je.text);
	}
	int good = want_ok(j, want);
	json_decref(j);
	if (!good) {
		int line, col;
		line_col(reply, s, &line, &col);
		return ks_error_set(e, KS_EPARSE, "reply JSON at line %d is not an %s", line,
				    want_name(want));
	}
	ks_buf_reset(out);
	if (ks_buf_add(out, reply + s, en - s))
		return ks_error_set(e, KS_ELIMIT, "reply JSON larger than %zu bytes", out->cap);
	return 0;
}

static int lang_is_json(const char *l)
{
	return !strcmp(l, "json") || !strcmp(l, "jsonc") || !strcmp(l, "json5");
}

/* the first block from k on in a language other than JSON (n when none); a bare fence
 * is not foreign: models put JSON in those too */
static int next_foreign(const struct block *b, int n, int k)
{
	while (k < n && (!b[k].lang[0] || lang_is_json(b[k].lang)))
		k++;
	return k;
}

int ks_reply_json(const char *reply, size_t len, int want, struct ks_buf *out,
		  struct ks_error *e)
{
	struct block blocks[MAX_BLOCKS];
	int unterminated = 0;
	if (!reply)
		return ks_error_set(e, KS_EPARSE, "reply is empty");
	int n = blocks_scan(reply, len, blocks, MAX_BLOCKS, &unterminated);
	/* fenced ```json blocks first: the last valid one wins (models restate corrected
	 * versions after a first draft) */
	int first_err = 0;
	struct ks_error fe = {0};
	for (int i = n - 1; i >= 0; i--) {
		if (!lang_is_json(blocks[i].lang))
			continue;
		size_t s = blocks[i].start, en = blocks[i].end;
		while (s < en && isspace((unsigned char)reply[s]))
			s++;
		while (en > s && isspace((unsigned char)reply[en - 1]))
			en--;
		struct ks_error le = {0};
		int rc = json_try(reply, s, en, want, out, &le);
		if (!rc)
			return 0;
		if (!first_err) {
			first_err = rc;
			fe = le;
		}
	}
	if (first_err) {
		if (e)
			*e = fe;
		return first_err;
	}
	if (unterminated)
		return ks_error_set(e, KS_EPARSE,
				    "reply has an unterminated fence at line %d (reply cut short?)",
				    unterminated);
	/* bare text: balanced scan from each opening bracket, skipping blocks in another
	 * language (a kernel's braces are not JSON) */
	int tries = 0, unclosed_line = 0, k = next_foreign(blocks, n, 0), foreign = k;
	size_t i = 0;
	while (i < len && tries < MAX_JSON_STARTS) {
		size_t stop = k < n ? blocks[k].fence : len;
		if (i >= stop) {
			i = blocks[k].past;
			k = next_foreign(blocks, n, k + 1);
			continue;
		}
		char c = reply[i];
		if (!((c == '{' && want != '[') || (c == '[' && want != '{'))) {
			i++;
			continue;
		}
		size_t en = balanced_end(reply, stop, i);
		tries++;
		if (!en) {
			if (!unclosed_line) {
				int col;
				line_col(reply, i, &unclosed_line, &col);
			}
			i++;
			continue;
		}
		struct ks_error le = {0};
		int rc = json_try(reply, i, en, want, out, &le);
		if (!rc)
			return 0;
		if (!first_err) {
			first_err = rc;
			fe = le;
		}
		/* do not hunt inside a rejected value for fragments */
		i = en;
	}
	if (first_err) {
		if (e)
			*e = fe;
		return first_err;
	}
	if (unclosed_line)
		return ks_error_set(e, KS_EPARSE,
				    "reply JSON %s starting at line %d is never closed",
				    want_name(want), unclosed_line);
	if (foreign < n)
		return ks_error_set(e, KS_EPARSE,
				    "reply has no JSON %s (it has a ```%s block: the JSON was "
				    "expected in a ```json block)",
				    want_name(want), blocks[foreign].lang);
	return ks_error_set(e, KS_EPARSE, "reply has no JSON %s", want_name(want));
}

/* skip markdown decoration at the start of a line */
static size_t note_skip(const char *t, size_t s, size_t e)
{
	while (s < e && strchr(" \t-*#>_", t[s]))
		s++;
	return s;
}

/* if [s, e) starts with an UPPER_CASE tag followed by ':', the offset after the colon and
 * its decoration; 0 otherwise */
static size_t note_tag(const char *t, size_t s, size_t e, const char *tag)
{
	size_t i = note_skip(t, s, e), k = i;
	if (tag) {
		size_t n = strlen(tag);
		if (e - i < n || memcmp(t + i, tag, n))
			return 0;
		k = i + n;
	} else {
		while (k < e && (isupper((unsigned char)t[k]) || t[k] == '_'))
			k++;
		if (k - i < 3)
			return 0;
	}
	while (k < e && (t[k] == '*' || t[k] == '_'))
		k++;
	if (k >= e || t[k] != ':')
		return 0;
	k++;
	while (k < e && (t[k] == '*' || t[k] == '_' || t[k] == ' ' || t[k] == '\t'))
		k++;
	return k;
}

int ks_reply_note(const char *reply, size_t len, const char *tag, struct ks_buf *out)
{
	size_t pos = 0;
	int found = 0, rc = 0;
	if (!reply || !tag || !tag[0])
		return KS_EINVAL;
	ks_buf_reset(out);
	while (pos < len && !rc) {
		size_t ce, next = line_end(reply, len, pos, &ce), run, info;
		char ch;
		size_t cr = ce;
		if (cr > pos && reply[cr - 1] == '\r')
			cr--;
		if (!found) {
			size_t k = note_tag(reply, pos, cr, tag);
			if (k) {
				found = 1;
				rc = ks_buf_add(out, reply + k, cr - k);
			}
		} else {
			if (blank(reply, pos, cr) || note_tag(reply, pos, cr, NULL) ||
			    fence_parse(reply, pos, cr, &ch, &run, &info))
				break;
			rc = ks_buf_add(out, "\n", 1);
			if (!rc)
				rc = ks_buf_add(out, reply + pos, cr - pos);
		}
		pos = next;
	}
	if (rc)
		return rc;
	if (!found)
		return KS_ENOTFOUND;
	if (!out->data)
		return ks_buf_add(out, "", 0);
	return 0;
}

int ks_reply_correction(const char *problem, const char *expect, struct ks_buf *out)
{
	return ks_buf_addf(out,
			   "Your previous reply could not be used: %s.\n"
			   "Reply again with %s. Nothing else: do not apologise or explain.",
			   problem && problem[0] ? problem : "it could not be parsed",
			   expect && expect[0] ? expect : "the requested format only");
}
