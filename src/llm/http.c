/* HTTP transport: the OpenAI-compatible chat-completions API over libcurl, with retries
 * (exponential backoff, jitter, Retry-After), a reply-size cap and key redaction. */
#include "ksearch/llm.h"
#include "ksearch/secret.h"
#include "ksearch/log.h"
#include "util/json.h"
#include "util/utf8.h"

#include <ctype.h>
#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HTTP_DEFAULT_REPLY_CAP ((size_t)4 << 20)
#define HTTP_MAX_REQUEST ((size_t)64 << 20)

struct http {
	char *url;  /* {base_url}/chat/completions */
	char *base_url;
	char *model;
	char *api_key;
	char *reasoning_effort;
	char *max_tokens_field;
	char **headers; /* NULL-terminated copies */
	double temperature;
	long max_tokens;
	double timeout_s, connect_timeout_s;
	int max_retries;
	double backoff_base_s, backoff_cap_s, retry_after_cap_s;
	size_t max_reply_bytes;
	int verbose;
};

/* one attempt's response */
struct attempt {
	struct ks_buf body;
	int over_cap;
	int has_retry_after;
	double retry_after_s;
	struct http *h;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_init_rc;

static void curl_init_once(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : KS_EHTTP;
}

void ks_llm_http_config_defaults(struct ks_llm_http_config *c)
{
	memset(c, 0, sizeof(*c));
	c->temperature = -1;
	c->timeout_s = 600;
	c->connect_timeout_s = 10;
	c->max_retries = 5;
	c->backoff_base_s = 1;
	c->backoff_cap_s = 60;
	c->retry_after_cap_s = 120;
	c->max_reply_bytes = HTTP_DEFAULT_REPLY_CAP;
}

static void http_close(void *ctx)
{
	struct http *h = ctx;
	free(h->url);
	free(h->base_url);
	free(h->model);
	if (h->api_key) {
		/* do not leave the key in freed memory */
		volatile char *p = h->api_key;
		while (*p)
			*p++ = 0;
		free(h->api_key);
	}
	free(h->reasoning_effort);
	free(h->max_tokens_field);
	for (char **p = h->headers; p && *p; p++)
		free(*p);
	free(h->headers);
	free(h);
}

static const char *http_model(void *ctx)
{
	return ((struct http *)ctx)->model;
}

static const char *http_secret(void *ctx)
{
	return ((struct http *)ctx)->api_key;
}

/* hide the key in e->msg (a server may echo it back in an error body) */
static void msg_scrub(const struct http *h, struct ks_error *e)
{
	if (e)
		ks_secret_scrub(e->msg, sizeof(e->msg));
}

static int http_params_json(void *ctx, struct ks_buf *out)
{
	struct http *h = ctx;
	json_t *o = json_object();
	if (!o)
		return KS_ENOMEM;
	json_object_set_new(o, "base_url", json_string(h->base_url));
	json_object_set_new(o, "model", json_string(h->model));
	if (h->temperature >= 0)
		json_object_set_new(o, "temperature", json_real(h->temperature));
	if (h->max_tokens > 0)
		json_object_set_new(o, h->max_tokens_field, json_integer(h->max_tokens));
	if (h->reasoning_effort)
		json_object_set_new(o, "reasoning_effort", json_string(h->reasoning_effort));
	json_object_set_new(o, "timeout_s", json_real(h->timeout_s));
	json_object_set_new(o, "max_retries", json_integer(h->max_retries));
	int rc = ks_json_to_buf(o, JSON_COMPACT | JSON_SORT_KEYS, out);
	json_decref(o);
	return rc;
}

/* ---------------------------------------------------------------- request body */

/* a JSON string of s with invalid UTF-8 replaced by U+FFFD (compiler logs can hold any
 * byte; JSON cannot) */
static json_t *json_text(const char *s)
{
	struct ks_buf b;
	ks_buf_init(&b, HTTP_MAX_REQUEST);
	json_t *j = ks_utf8_clean(&b, s, strlen(s)) ? NULL : json_stringn(ks_buf_str(&b), b.len);
	ks_buf_release(&b);
	return j;
}

static char *request_body(struct http *h, const struct ks_llm_msg *msgs, int nmsg)
{
	json_t *o = json_object(), *arr = json_array();
	char *s = NULL;
	if (!o || !arr)
		goto out;
	for (int i = 0; i < nmsg; i++) {
		json_t *m = json_object(), *c = json_text(msgs[i].content ? msgs[i].content : "");
		if (!m || !c) {
			json_decref(m);
			json_decref(c);
			goto out;
		}
		json_object_set_new(m, "role", json_string(msgs[i].role ? msgs[i].role : "user"));
		json_object_set_new(m, "content", c);
		json_array_append_new(arr, m);
	}
	json_object_set_new(o, "model", json_string(h->model));
	json_object_set_new(o, "messages", arr);
	arr = NULL;
	if (h->temperature >= 0)
		json_object_set_new(o, "temperature", json_real(h->temperature));
	if (h->max_tokens > 0)
		json_object_set_new(o, h->max_tokens_field, json_integer(h->max_tokens));
	if (h->reasoning_effort)
		json_object_set_new(o, "reasoning_effort", json_string(h->reasoning_effort));
	json_object_set_new(o, "stream", json_false());
	s = json_dumps(o, JSON_COMPACT);
out:
	json_decref(arr);
	json_decref(o);
	return s;
}

/* ---------------------------------------------------------------- curl callbacks */

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct attempt *a = ud;
	if (ks_buf_add(&a->body, p, size * n)) {
		a->over_cap = 1;
		return 0; /* aborts the transfer */
	}
	return size * n;
}

static double retry_after_parse(const char *v)
{
	while (*v == ' ' || *v == '\t')
		v++;
	char *end;
	double s = strtod(v, &end);
	if (end != v && (*end == '\0' || isspace((unsigned char)*end)) && isfinite(s))
		return s < 0 ? 0 : s;
	time_t t = curl_getdate(v, NULL);
	if (t < 0)
		return -1;
	double d = difftime(t, ks_llm_sys.wall());
	return d < 0 ? 0 : d;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct attempt *a = ud;
	size_t len = size * n;
	static const char key[] = "retry-after:";
	if (len > sizeof(key) - 1 && len < 256 && !strncasecmp(p, key, sizeof(key) - 1)) {
		char v[256];
		memcpy(v, p + sizeof(key) - 1, len - (sizeof(key) - 1));
		v[len - (sizeof(key) - 1)] = '\0';
		char *e = v + strlen(v);
		while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' '))
			*--e = '\0';
		double s = retry_after_parse(v);
		if (s >= 0) {
			a->has_retry_after = 1;
			a->retry_after_s = s;
		}
	}
	return len;
}

/* verbose wire log, one line per header, credentials redacted */
static int on_debug(CURL *c, curl_infotype type, char *data, size_t size, void *ud)
{
	const struct http *h = ud;
	const char *dir;
	if (type == CURLINFO_HEADER_OUT)
		dir = ">";
	else if (type == CURLINFO_HEADER_IN)
		dir = "<";
	else
		return 0;
	size_t i = 0;
	while (i < size) {
		size_t j = i;
		while (j < size && data[j] != '\n' && data[j] != '\r')
			j++;
		size_t len = j - i;
		if (len) {
			static const char *const hidden[] = {"authorization:", "x-api-key:",
							     "api-key:", "x-goog-api-key:",
							     "proxy-authorization:"};
			int redact = 0;
			for (size_t k = 0; k < sizeof(hidden) / sizeof(hidden[0]); k++)
				if (len >= strlen(hidden[k]) &&
				    !strncasecmp(data + i, hidden[k], strlen(hidden[k])))
					redact = (int)strlen(hidden[k]);
			if (!redact && h->api_key && h->api_key[0] &&
			    memmem(data + i, len, h->api_key, strlen(h->api_key)))
				redact = 1;
			if (redact)
				ks_debug("http %s %.*s [REDACTED]", dir, redact, data + i);
			else
				ks_debug("http %s %.*s", dir, (int)(len > 300 ? 300 : len), data + i);
		}
		while (j < size && (data[j] == '\n' || data[j] == '\r'))
			j++;
		i = j;
	}
	return 0;
}

/* ---------------------------------------------------------------- responses */

/* a short printable excerpt of an error body: its "error.message" when it has one */
static void body_excerpt(const struct ks_buf *b, char *out, size_t n)
{
	out[0] = '\0';
	json_t *j = json_loadb(ks_buf_str(b), b->len, JSON_ALLOW_NUL, NULL);
	if (j) {
		json_t *err = json_object_get(j, "error");
		json_t *msg = json_is_object(err) ? json_object_get(err, "message") : err;
		if (!json_is_string(msg))
			msg = json_object_get(j, "message");
		if (json_is_string(msg))
			snprintf(out, n, "%s", json_string_value(msg));
		json_decref(j);
		if (out[0])
			goto clean;
	}
	size_t k = 0;
	for (size_t i = 0; i < b->len && k + 1 < n && k < 200; i++)
		out[k++] = (char)b->data[i];
	out[k] = '\0';
clean:
	for (char *p = out; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
}

static char *json_strdup(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) ? strdup(json_string_value(v)) : NULL;
}

/* message.content may be a string or a list of {"type":"text","text":...} parts */
static int content_take(json_t *c, struct ks_llm_reply *out, size_t cap)
{
	struct ks_buf b;
	ks_buf_init(&b, cap);
	int rc = 0;
	if (json_is_string(c)) {
		rc = ks_buf_add(&b, json_string_value(c), json_string_length(c));
	} else if (json_is_array(c)) {
		size_t i;
		json_t *part;
		json_array_foreach(c, i, part) {
			json_t *t = json_object_get(part, "text");
			if (json_is_string(t))
				rc = ks_buf_add(&b, json_string_value(t), json_string_length(t));
			if (rc)
				break;
		}
	} else {
		return KS_EPARSE;
	}
	if (!rc)
		rc = ks_buf_add(&b, "", 0);
	if (rc) {
		ks_buf_release(&b);
		return rc;
	}
	out->content = ks_buf_detach(&b, &out->len);
	return 0;
}

static int response_parse(struct http *h, const struct ks_buf *b, struct ks_llm_reply *out,
			  struct ks_error *e)
{
	json_error_t je;
	json_t *j = json_loadb(ks_buf_str(b), b->len, JSON_ALLOW_NUL, &je);
	char ex[256];
	if (!j)
		return ks_error_set(e, KS_EPARSE,
				    "response from '%s' is not JSON (line %d col %d: %s)", h->url,
				    je.line, je.column, je.text);
	int rc = 0;
	json_t *choices = json_object_get(j, "choices");
	if (!json_is_array(choices) || json_array_size(choices) == 0) {
		body_excerpt(b, ex, sizeof(ex));
		rc = ks_error_set(e, json_object_get(j, "error") ? KS_EHTTP : KS_EPARSE,
				  "response from '%s' has no choices: %s", h->url, ex);
		goto out;
	}
	json_t *c0 = json_array_get(choices, 0);
	json_t *msg = json_object_get(c0, "message");
	if (!json_is_object(msg)) {
		rc = ks_error_set(e, KS_EPARSE, "response from '%s': choices[0] has no message",
				  h->url);
		goto out;
	}
	json_t *content = json_object_get(msg, "content");
	json_t *reasoning = json_object_get(msg, "reasoning_content");
	if (!json_is_string(reasoning))
		reasoning = json_object_get(msg, "reasoning");
	if (json_is_string(reasoning))
		out->reasoning = strdup(json_string_value(reasoning));
	if (content_take(content, out, h->max_reply_bytes)) {
		rc = ks_error_set(e, KS_EPARSE,
				  "response from '%s': choices[0].message has no text content%s",
				  h->url, out->reasoning ? " (only reasoning_content)" : "");
		goto out;
	}
	out->finish_reason = json_strdup(c0, "finish_reason");
	out->model = json_strdup(j, "model");
	json_t *usage = json_object_get(j, "usage");
	json_t *pt = json_object_get(usage, "prompt_tokens");
	json_t *ct = json_object_get(usage, "completion_tokens");
	out->prompt_tokens = json_is_integer(pt) ? (long)json_integer_value(pt) : -1;
	out->completion_tokens = json_is_integer(ct) ? (long)json_integer_value(ct) : -1;
out:
	json_decref(j);
	return rc;
}

static int status_retryable(long st)
{
	return st == 408 || st == 409 || st == 425 || st == 429 || st == 500 || st == 502 ||
	       st == 503 || st == 504 || st == 529;
}

static int status_error(struct http *h, long st, const struct ks_buf *b, struct ks_error *e)
{
	char ex[256];
	body_excerpt(b, ex, sizeof(ex));
	switch (st) {
	case 401:
		return ks_error_set(e, KS_EHTTP,
				    "authentication failed (HTTP 401 from '%s'): check "
				    "KSEARCH_API_KEY: %s",
				    h->url, ex);
	case 403:
		return ks_error_set(e, KS_EHTTP,
				    "permission denied (HTTP 403 from '%s'): check the key's access "
				    "to model '%s': %s",
				    h->url, h->model, ex);
	case 404:
		return ks_error_set(e, KS_EHTTP,
				    "not found (HTTP 404 from '%s'): check --llm-base-url and "
				    "--llm-model '%s': %s",
				    h->url, h->model, ex);
	case 400:
		return ks_error_set(e, KS_EHTTP, "bad request (HTTP 400 from '%s'): %s", h->url,
				    ex);
	default:
		return ks_error_set(e, KS_EHTTP, "HTTP %ld from '%s': %s", st, h->url, ex);
	}
}

/* ---------------------------------------------------------------- one exchange */

enum verdict { V_DONE, V_RETRY, V_FAIL };

static enum verdict attempt_run(struct http *h, struct curl_slist *hdrs, const char *body,
				struct attempt *a, long *status, struct ks_error *e)
{
	CURL *c = curl_easy_init();
	char cerr[CURL_ERROR_SIZE] = "";
	if (!c) {
		ks_error_set(e, KS_ENOMEM, "curl_easy_init failed");
		return V_FAIL;
	}
	curl_easy_setopt(c, CURLOPT_URL, h->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, a);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(h->timeout_s * 1000));
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(h->connect_timeout_s * 1000));
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)h->max_reply_bytes);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(c, CURLOPT_USERAGENT, "ksearch/" KS_VERSION);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	if (h->verbose) {
		curl_easy_setopt(c, CURLOPT_DEBUGFUNCTION, on_debug);
		curl_easy_setopt(c, CURLOPT_DEBUGDATA, h);
		curl_easy_setopt(c, CURLOPT_VERBOSE, 1L);
	}
	CURLcode cc = curl_easy_perform(c);
	*status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	curl_easy_cleanup(c);
	const char *why = cerr[0] ? cerr : curl_easy_strerror(cc);
	switch (cc) {
	case CURLE_OK:
		break;
	case CURLE_WRITE_ERROR:
	case CURLE_FILESIZE_EXCEEDED:
		if (a->over_cap || cc == CURLE_FILESIZE_EXCEEDED) {
			ks_error_set(e, KS_ELIMIT,
				     "reply from '%s' larger than the %zu-byte cap "
				     "(max_reply_bytes)",
				     h->url, h->max_reply_bytes);
			return V_FAIL;
		}
		ks_error_set(e, KS_EHTTP, "'%s': %s", h->url, why);
		return V_FAIL;
	case CURLE_OPERATION_TIMEDOUT:
		ks_error_set(e, KS_ETIMEOUT, "request to '%s' timed out: %s", h->url, why);
		return V_RETRY;
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_GOT_NOTHING:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		ks_error_set(e, KS_EHTTP, "request to '%s' failed: %s", h->url, why);
		return V_RETRY;
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
		ks_error_set(e, KS_EINVAL, "bad llm base url '%s': %s", h->base_url, why);
		return V_FAIL;
	default:
		ks_error_set(e, KS_EHTTP, "request to '%s' failed: %s", h->url, why);
		return V_FAIL;
	}
	if (*status >= 200 && *status < 300)
		return V_DONE;
	status_error(h, *status, &a->body, e);
	return status_retryable(*status) ? V_RETRY : V_FAIL;
}

static double backoff_delay(struct http *h, int retry, const struct attempt *a)
{
	if (a->has_retry_after)
		return a->retry_after_s < h->retry_after_cap_s ? a->retry_after_s
							       : h->retry_after_cap_s;
	double d = h->backoff_base_s * pow(2.0, retry);
	if (d > h->backoff_cap_s)
		d = h->backoff_cap_s;
	/* equal jitter: half fixed, half random, so clients spread out but never hammer */
	return d / 2 + ks_llm_sys.random() * d / 2;
}

static int http_exchange(struct http *h, const char *purpose, const struct ks_llm_msg *msgs,
			 int nmsg, struct ks_llm_reply *out, struct ks_error *e);

static int http_complete(void *ctx, const char *purpose, const struct ks_llm_msg *msgs,
			 int nmsg, struct ks_llm_reply *out, struct ks_error *e)
{
	/* a local error record: retries and messages need one even when the caller has none */
	struct ks_error local = {0};
	int rc = http_exchange(ctx, purpose, msgs, nmsg, out, &local);
	if (rc && e)
		*e = local;
	return rc;
}

static int http_exchange(struct http *h, const char *purpose, const struct ks_llm_msg *msgs,
			 int nmsg, struct ks_llm_reply *out, struct ks_error *e)
{
	struct curl_slist *hdrs = NULL, *tmp;
	char *body = NULL;
	int rc = 0;
	double t0 = ks_llm_sys.now();
	pthread_once(&curl_once, curl_init_once);
	if (curl_init_rc)
		return ks_error_set(e, KS_EHTTP, "curl_global_init failed");
	body = request_body(h, msgs, nmsg);
	if (!body)
		return ks_error_set(e, KS_ENOMEM, "build request for '%s': out of memory", h->url);
	const char *fixed[] = {"Content-Type: application/json", "Accept: application/json",
			       "Expect:"};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		tmp = curl_slist_append(hdrs, fixed[i]);
		if (!tmp)
			goto nomem;
		hdrs = tmp;
	}
	if (h->api_key && h->api_key[0]) {
		struct ks_buf auth;
		ks_buf_init(&auth, 8192);
		if (ks_buf_addf(&auth, "Authorization: Bearer %s", h->api_key)) {
			ks_buf_release(&auth);
			goto nomem;
		}
		tmp = curl_slist_append(hdrs, ks_buf_str(&auth));
		memset(auth.data, 0, auth.len);
		ks_buf_release(&auth);
		if (!tmp)
			goto nomem;
		hdrs = tmp;
	}
	for (char **p = h->headers; p && *p; p++) {
		tmp = curl_slist_append(hdrs, *p);
		if (!tmp)
			goto nomem;
		hdrs = tmp;
	}
	for (int retry = 0;; retry++) {
		struct attempt a = {.h = h};
		long status = 0;
		ks_buf_init(&a.body, h->max_reply_bytes);
		out->attempts = retry + 1;
		enum verdict v = attempt_run(h, hdrs, body, &a, &status, e);
		out->status = (int)status;
		if (v == V_DONE) {
			rc = response_parse(h, &a.body, out, e);
			ks_buf_release(&a.body);
			break;
		}
		rc = e->code ? e->code : KS_EHTTP;
		if (v == V_FAIL || retry >= h->max_retries) {
			if (v == V_RETRY && retry > 0)
				ks_error_wrap(e, "gave up after %d attempts", retry + 1);
			ks_buf_release(&a.body);
			if (!rc)
				rc = KS_EHTTP;
			break;
		}
		double d = backoff_delay(h, retry, &a);
		msg_scrub(h, e);
		ks_warn("llm request '%s' attempt %d: %s; retrying in %.1fs",
			purpose ? purpose : "", retry + 1, e->msg, d);
		ks_buf_release(&a.body);
		ks_llm_sys.sleep(d);
	}
	goto out;
nomem:
	rc = ks_error_set(e, KS_ENOMEM, "build request for '%s': out of memory", h->url);
out:
	curl_slist_free_all(hdrs);
	free(body);
	out->latency_s = ks_llm_sys.now() - t0;
	msg_scrub(h, e);
	if (rc) {
		/* keep the wire facts for the record, drop partial content */
		free(out->content);
		out->content = NULL;
		out->len = 0;
	}
	return rc;
}

/* ---------------------------------------------------------------- open */

static char *dup_or_null(const char *s)
{
	return s && s[0] ? strdup(s) : NULL;
}

int ks_llm_http_open(const struct ks_llm_http_config *cfg, struct ks_llm_transport *t,
		     struct ks_error *e)
{
	memset(t, 0, sizeof(*t));
	if (!cfg->base_url || !cfg->base_url[0])
		return ks_error_set(e, KS_EINVAL, "llm base url not set (--llm-base-url)");
	if (strncmp(cfg->base_url, "http://", 7) && strncmp(cfg->base_url, "https://", 8))
		return ks_error_set(e, KS_EINVAL,
				    "llm base url '%s' must start with http:// or https://",
				    cfg->base_url);
	if (!cfg->model || !cfg->model[0])
		return ks_error_set(e, KS_EINVAL, "llm model not set (--llm-model)");
	for (const char *const *p = cfg->headers; p && *p; p++)
		if (!strchr(*p, ':') || strpbrk(*p, "\r\n"))
			return ks_error_set(e, KS_EINVAL, "llm header '%s' is not 'Name: value'",
					    *p);
	struct http *h = calloc(1, sizeof(*h));
	if (!h)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	size_t n = strlen(cfg->base_url);
	while (n && cfg->base_url[n - 1] == '/')
		n--;
	static const char suffix[] = "/chat/completions";
	int has_suffix = n >= sizeof(suffix) - 1 &&
			 !strncmp(cfg->base_url + n - (sizeof(suffix) - 1), suffix,
				  sizeof(suffix) - 1);
	h->url = malloc(n + sizeof(suffix));
	h->base_url = strndup(cfg->base_url, n);
	h->model = strdup(cfg->model);
	h->api_key = dup_or_null(cfg->api_key);
	ks_secret_add(h->api_key);
	h->reasoning_effort = dup_or_null(cfg->reasoning_effort);
	h->max_tokens_field = strdup(cfg->max_tokens_field && cfg->max_tokens_field[0]
					     ? cfg->max_tokens_field
					     : "max_tokens");
	size_t nh = 0;
	for (const char *const *p = cfg->headers; p && *p; p++)
		nh++;
	h->headers = calloc(nh + 1, sizeof(char *));
	int bad = !h->url || !h->base_url || !h->model || !h->headers || !h->max_tokens_field ||
		  (cfg->api_key && cfg->api_key[0] && !h->api_key) ||
		  (cfg->reasoning_effort && cfg->reasoning_effort[0] && !h->reasoning_effort);
	for (size_t i = 0; !bad && i < nh; i++)
		bad = !(h->headers[i] = strdup(cfg->headers[i]));
	if (bad) {
		http_close(h);
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	}
	memcpy(h->url, cfg->base_url, n);
	if (has_suffix)
		h->url[n] = '\0';
	else
		memcpy(h->url + n, suffix, sizeof(suffix));
	h->temperature = cfg->temperature;
	h->max_tokens = cfg->max_tokens;
	h->timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : 600;
	h->connect_timeout_s = cfg->connect_timeout_s > 0 ? cfg->connect_timeout_s : 10;
	h->max_retries = cfg->max_retries >= 0 ? cfg->max_retries : 0;
	h->backoff_base_s = cfg->backoff_base_s >= 0 ? cfg->backoff_base_s : 1;
	h->backoff_cap_s = cfg->backoff_cap_s > 0 ? cfg->backoff_cap_s : 60;
	h->retry_after_cap_s = cfg->retry_after_cap_s > 0 ? cfg->retry_after_cap_s : 120;
	h->max_reply_bytes = cfg->max_reply_bytes ? cfg->max_reply_bytes : HTTP_DEFAULT_REPLY_CAP;
	h->verbose = cfg->verbose;
	*t = (struct ks_llm_transport){
		.version = KS_LLM_TRANSPORT_VERSION,
		.name = "http",
		.complete = http_complete,
		.model = http_model,
		.params_json = http_params_json,
		.secret = http_secret,
		.close = http_close,
		.ctx = h,
	};
	return 0;
}
