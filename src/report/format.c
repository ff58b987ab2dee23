/* Small formatting helpers shared by the report renderers. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "report/report_impl.h"
#include "util/utf8.h"

size_t rp_utf8_valid(const char *s)
{
	/* a NUL-terminated string: a sequence never reads past its terminator, since a NUL is
	 * no continuation byte */
	return ks_utf8_seq((const unsigned char *)s, 4);
}

int rp_utf8_clean(struct ks_buf *b, const char *s)
{
	return ks_utf8_clean(b, s ? s : "", s ? strlen(s) : 0);
}

/* at p, anything but a valid single byte: an invalid byte becomes U+FFFD (XML parsers
 * reject invalid UTF-8), a multi-byte sequence goes whole; returns the bytes consumed (0: a
 * single byte, left to the caller) */
static size_t add_multibyte(struct ks_buf *b, const char *p, int *rc)
{
	size_t n = rp_utf8_valid(p);
	if (n == 1)
		return 0;
	*rc = n ? ks_buf_add(b, p, n) : ks_buf_adds(b, "\xef\xbf\xbd");
	return n ? n : 1;
}

int rp_html_esc(struct ks_buf *b, const char *s)
{
	int rc = 0;
	for (const char *p = s ? s : ""; *p && !rc; p++) {
		unsigned char ch = (unsigned char)*p;
		size_t m = add_multibyte(b, p, &rc);
		if (m) {
			p += m - 1;
			continue;
		}
		switch (ch) {
		case '&': rc = ks_buf_adds(b, "&amp;"); break;
		case '<': rc = ks_buf_adds(b, "&lt;"); break;
		case '>': rc = ks_buf_adds(b, "&gt;"); break;
		case '"': rc = ks_buf_adds(b, "&quot;"); break;
		case '\'': rc = ks_buf_adds(b, "&#39;"); break;
		default:
			if ((ch < 0x20 && ch != '\n' && ch != '\t') || ch == 0x7F)
				ch = ' ';
			rc = ks_buf_add(b, &ch, 1);
		}
	}
	return rc;
}

int rp_md_esc(struct ks_buf *b, const char *s)
{
	/* what can start markup inside a line; '_' only at a word boundary (intraword
	 * underscores never emphasise, so BLOCK_M stays readable in the raw file) */
	static const char special[] = "\\`*[]<>|~&";
	int rc = 0;
	for (const char *p = s ? s : ""; *p && !rc; p++) {
		unsigned char ch = (unsigned char)*p;
		size_t m = add_multibyte(b, p, &rc);
		if (m) {
			p += m - 1;
			continue;
		}
		if (ch < 0x20)
			ch = ' ';
		int esc = ch && strchr(special, ch);
		if (ch == '_')
			esc = p == s || !isalnum((unsigned char)p[-1]) || !isalnum((unsigned char)p[1]);
		if (esc)
			rc = ks_buf_add(b, "\\", 1);
		if (!rc)
			rc = ks_buf_add(b, &ch, 1);
	}
	return rc;
}

int rp_md_code(struct ks_buf *b, const char *s)
{
	int rc = ks_buf_adds(b, "`");
	for (const char *p = s ? s : ""; *p && !rc; p++) {
		unsigned char ch = (unsigned char)*p;
		size_t m = add_multibyte(b, p, &rc);
		if (m) {
			p += m - 1;
			continue;
		}
		if (ch < 0x20)
			ch = ' ';
		if (ch == '`')
			ch = '\'';
		rc = ch == '|' ? ks_buf_adds(b, "\\|") : ks_buf_add(b, &ch, 1);
	}
	return rc ? rc : ks_buf_adds(b, "`");
}

void rp_first_line(const char *text, char *dst, size_t max)
{
	const char *p = text ? text : "";
	dst[0] = 0;
	if (!max)
		return;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\r' || p[len - 1] == '\t'))
			len--;
		if (len) {
			if (len >= max) {
				/* cut on a UTF-8 character boundary and mark it */
				if (max < 8)
					return;
				len = max - 4;
				while (len && ((unsigned char)p[len] & 0xC0) == 0x80)
					len--;
				memcpy(dst, p, len);
				memcpy(dst + len, "...", 4);
			} else {
				memcpy(dst, p, len);
				dst[len] = 0;
			}
			return;
		}
		if (!end)
			return;
		p = end + 1;
	}
}

void rp_fmt_duration(double s, char *dst, size_t n)
{
	if (!isfinite(s) || s < 0)
		snprintf(dst, n, "unknown");
	else if (s < 60)
		snprintf(dst, n, "%.1f s", s);
	else if (s < 3600)
		snprintf(dst, n, "%d min %02d s", (int)(s / 60), (int)fmod(s, 60));
	else
		snprintf(dst, n, "%d h %02d min", (int)(s / 3600), (int)fmod(s / 60, 60));
}

void rp_fmt_knobs(const char *knobs_json, char *dst, size_t n)
{
	json_t *k = knobs_json ? json_loads(knobs_json, 0, NULL) : NULL;
	const char *key;
	json_t *v;
	size_t len = 0;
	dst[0] = 0;
	if (json_is_object(k)) {
		json_object_foreach(k, key, v)
		{
			char val[96];
			if (json_is_string(v))
				snprintf(val, sizeof(val), "%s", json_string_value(v));
			else if (json_is_integer(v))
				snprintf(val, sizeof(val), "%lld", (long long)json_integer_value(v));
			else if (json_is_real(v))
				snprintf(val, sizeof(val), "%g", json_real_value(v));
			else if (json_is_boolean(v))
				snprintf(val, sizeof(val), "%s", json_is_true(v) ? "true" : "false");
			else
				snprintf(val, sizeof(val), "...");
			int w = snprintf(dst + len, n - len, "%s%s=%s", len ? " " : "", key, val);
			if (w < 0 || (size_t)w >= n - len) {
				dst[len] = 0;
				break;
			}
			len += (size_t)w;
		}
	}
	json_decref(k);
}

void rp_fmt_status(const struct rp_cand *c, char *dst, size_t n)
{
	const struct ks_store_candidate *s = c->c;
	if (!s->has_result)
		snprintf(dst, n, "%s", s->has_final ? "final only" : "not evaluated");
	else if (s->has_final && s->final_status && s->status && strcmp(s->final_status, s->status))
		snprintf(dst, n, "%s, final %s", s->status, s->final_status);
	else
		snprintf(dst, n, "%s", s->status ? s->status : "?");
}

const char *rp_status_color(const char *status)
{
	static const struct {
		const char *status, *color;
	} map[] = {
		{"PASSED", "#1f77b4"},          {"COMPILE_ERROR", "#7f7f7f"},
		{"RUNTIME_ERROR", "#d62728"},   {"TIMEOUT", "#ff7f0e"},
		{"MEMORY_LIMIT", "#8c564b"},    {"INCORRECT_NUMERICAL", "#e377c2"},
		{"SANDBOX_VIOLATION", "#111111"}, {"SUSPICIOUS", "#bcbd22"},
	};
	for (size_t i = 0; status && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(status, map[i].status))
			return map[i].color;
	return "#9467bd";
}

int rp_find_cand(const struct rp_run *r, int64_t id)
{
	/* ids are 1, 2, ... in insertion order: try the direct slot first */
	if (id >= 1 && (size_t)id <= r->ncands && r->cands[id - 1].c->id == id)
		return (int)(id - 1);
	for (size_t i = 0; i < r->ncands; i++)
		if (r->cands[i].c->id == id)
			return (int)i;
	return -1;
}

int rp_timed_workloads(const struct rp_run *r, int *idx, int max)
{
	int n = 0;
	for (size_t i = 0; i < r->nworkloads && n < max; i++)
		if (!r->workloads[i].is_check)
			idx[n++] = (int)i;
	return n;
}

void rp_fmt_target(const struct rp_run *r, char *dst, size_t n)
{
	if (!r->target[0])
		snprintf(dst, n, "(not recorded)");
	else if (strcmp(r->target, "auto"))
		snprintf(dst, n, "%s", r->target);
	else if (r->spec_title[0] && r->spec_name[0] && strcmp(r->spec_title, r->spec_name))
		snprintf(dst, n, "auto: %s (%s), detected at the start of the run", r->spec_title,
			 r->spec_name);
	else if (r->spec_name[0] || r->spec_title[0])
		snprintf(dst, n, "auto: %s, detected at the start of the run",
			 r->spec_title[0] ? r->spec_title : r->spec_name);
	else
		snprintf(dst, n, "auto (detected at the start of the run)");
}
