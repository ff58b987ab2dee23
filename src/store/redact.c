/* Credential redaction for text the store writes (see ks_redact in ksearch/store.h).
 *
 * Two passes: registered secret values are replaced wherever they occur, then pattern rules
 * run over the result.  The pattern rules only fire on values that look like credentials
 * (long enough, letters and digits, not followed by a call or an index) so that kernel code
 * quoted in prompts and replies is kept byte for byte. */
#include "store/store_impl.h"
#include "ksearch/secret.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define REDACTED "[REDACTED]"
#define SECRET_MIN KS_SECRET_MIN

static int is_word(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-';
}

static int is_tok(char c)
{
	return isalnum((unsigned char)c) || strchr("._~+/=-", c) != NULL;
}

/* length of the run of credential characters at p */
static size_t tok_len(const char *p, const char *end)
{
	const char *q = p;
	while (q < end && is_tok(*q) && *q)
		q++;
	return (size_t)(q - p);
}

/* a value that looks like a credential rather than a word, number or expression */
static int looks_secret(const char *v, size_t n, const char *end)
{
	int digit = 0, alpha = 0;
	if (n < SECRET_MIN)
		return 0;
	for (size_t i = 0; i < n; i++) {
		digit |= isdigit((unsigned char)v[i]) != 0;
		alpha |= isalpha((unsigned char)v[i]) != 0;
	}
	if (v + n < end && (v[n] == '(' || v[n] == '['))
		return 0;
	return digit && alpha;
}

struct prefix_rule {
	const char *prefix;
	size_t min_tail; /* credential characters required after the prefix */
};

static const struct prefix_rule prefix_rules[] = {
	{"sk-", 16},    {"ghp_", 20},  {"gho_", 20},  {"ghu_", 20},  {"ghs_", 20},
	{"ghr_", 20},   {"github_pat_", 20},          {"AIza", 30},  {"hf_", 30},
	{"xoxb-", 10},  {"xoxp-", 10}, {"xoxa-", 10}, {"xoxs-", 10}, {"AKIA", 16},
};

/* length of a well-known key format at p, 0 when none */
static size_t match_prefix(const char *p, const char *end)
{
	for (size_t k = 0; k < sizeof(prefix_rules) / sizeof(prefix_rules[0]); k++) {
		size_t pl = strlen(prefix_rules[k].prefix);
		if ((size_t)(end - p) < pl || memcmp(p, prefix_rules[k].prefix, pl))
			continue;
		const char *q = p + pl;
		while (q < end && is_word(*q))
			q++;
		if ((size_t)(q - p) - pl >= prefix_rules[k].min_tail)
			return (size_t)(q - p);
	}
	return 0;
}

static int name_suffix_secret(const char *name, size_t n)
{
	static const char *const suffixes[] = {"key", "token", "secret", "password", "passwd"};
	for (size_t k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++) {
		size_t sl = strlen(suffixes[k]);
		if (n >= sl && !strncasecmp(name + n - sl, suffixes[k], sl))
			return 1;
	}
	return 0;
}

static int redact_patterns(const char *text, size_t len, struct ks_buf *out)
{
	const char *p = text, *end = text + len, *flushed = text;
	/* a failed add leaves out failed: checked once at the end */
#define FLUSH_TO(q)                                                                      \
	do {                                                                             \
		ks_buf_add(out, flushed, (size_t)((q)-flushed));                         \
		flushed = (q);                                                           \
	} while (0)
#define EMIT_REDACTED(skip_to)                                                           \
	do {                                                                             \
		ks_buf_adds(out, REDACTED);                                              \
		p = flushed = (skip_to);                                                 \
	} while (0)
	while (p < end) {
		if (!is_word(*p) || (p > text && is_word(p[-1]))) {
			p++;
			continue;
		}
		size_t n = match_prefix(p, end);
		if (n) {
			FLUSH_TO(p);
			EMIT_REDACTED(p + n);
			continue;
		}
		const char *w = p;
		while (w < end && is_word(*w))
			w++;
		size_t wl = (size_t)(w - p);
		/* Authorization schemes: "Bearer <token>", "Basic <base64>" */
		if ((wl == 6 && !strncasecmp(p, "bearer", 6)) || (wl == 5 && !strncasecmp(p, "basic", 5))) {
			const char *v = w;
			while (v < end && (*v == ' ' || *v == '\t'))
				v++;
			size_t vl = tok_len(v, end);
			if (v > w && looks_secret(v, vl, end)) {
				FLUSH_TO(v);
				EMIT_REDACTED(v + vl);
				continue;
			}
		}
		/* name = value, name: value, "name": "value" */
		if (name_suffix_secret(p, wl)) {
			const char *v = w;
			if (v < end && (*v == '"' || *v == '\''))
				v++;
			while (v < end && (*v == ' ' || *v == '\t'))
				v++;
			if (v < end && (*v == '=' || *v == ':')) {
				v++;
				while (v < end && (*v == ' ' || *v == '\t'))
					v++;
				if (v < end && (*v == '"' || *v == '\''))
					v++;
				size_t vl = tok_len(v, end);
				if (looks_secret(v, vl, end)) {
					FLUSH_TO(v);
					EMIT_REDACTED(v + vl);
					continue;
				}
			}
		}
		p = w;
	}
	FLUSH_TO(end);
	return ks_buf_failed(out);
#undef FLUSH_TO
#undef EMIT_REDACTED
}

int ks_redact_text(const char *text, size_t len, struct ks_buf *out)
{
	struct ks_buf tmp;
	ks_buf_init(&tmp, out->cap ? out->cap : 0);
	int rc = ks_secret_redact(text, len, &tmp);
	if (!rc)
		rc = redact_patterns(tmp.data ? tmp.data : "", tmp.len, out);
	ks_buf_release(&tmp);
	return rc;
}

int ks_redact(const char *text, struct ks_buf *out)
{
	if (!text || !out)
		return KS_EINVAL;
	return ks_redact_text(text, strlen(text), out);
}
