/* The LLM client: budget limits, usage counters, cost, redaction and the record hook
 * around any transport; the seams; shared reply helpers. */
#include "ksearch/llm.h"
#include "ksearch/secret.h"
#include "ksearch/log.h"
#include "util/clock.h"
#include "util/fs.h"
#include "util/env.h"

#include <jansson.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- seams */

static void sys_sleep(double s)
{
	if (!(s > 0))
		return;
	struct timespec ts;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static pthread_mutex_t rng_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t rng_state;

static double sys_random(void)
{
	pthread_mutex_lock(&rng_lock);
	if (!rng_state) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		rng_state = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ 0x9e3779b97f4a7c15ull;
	}
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	uint64_t v = rng_state;
	pthread_mutex_unlock(&rng_lock);
	return (double)(v >> 11) * (1.0 / 9007199254740992.0);
}

static time_t sys_wall(void)
{
	return time(NULL);
}

const struct ks_llm_sys ks_llm_sys_default = {
	.now = ks_clock_s,
	.sleep = sys_sleep,
	.random = sys_random,
	.wall = sys_wall,
};

struct ks_llm_sys ks_llm_sys = {
	.now = ks_clock_s,
	.sleep = sys_sleep,
	.random = sys_random,
	.wall = sys_wall,
};

/* ---------------------------------------------------------------- replies, messages */

void ks_llm_reply_release(struct ks_llm_reply *r)
{
	if (!r)
		return;
	free(r->content);
	free(r->reasoning);
	free(r->model);
	free(r->finish_reason);
	free(r->log);
	memset(r, 0, sizeof(*r));
	r->prompt_tokens = -1;
	r->completion_tokens = -1;
}

int ks_llm_msgs_text(const struct ks_llm_msg *msgs, int nmsg, struct ks_buf *out)
{
	int rc = 0;
	for (int i = 0; i < nmsg && !rc; i++) {
		if (i)
			rc = ks_buf_adds(out, "\n\n");
		if (!rc)
			rc = ks_buf_addf(out, "### %s\n", msgs[i].role ? msgs[i].role : "user");
		if (!rc && msgs[i].content)
			rc = ks_buf_adds(out, msgs[i].content);
	}
	if (!rc)
		rc = ks_buf_add(out, "", 0);
	return rc;
}

void ks_llm_transport_close(struct ks_llm_transport *t)
{
	if (!t)
		return;
	if (t->close && t->ctx)
		t->close(t->ctx);
	t->ctx = NULL;
	t->close = NULL;
}

/* ---------------------------------------------------------------- status words */

static const struct {
	int code;
	const char *text;
} status_words[] = {
	{0, "ok"},
	{KS_ETIMEOUT, "timeout"},
	{KS_ELIMIT, "too_large"},
	{KS_EPARSE, "parse_error"},
	{KS_EHTTP, "http_error"},
	{KS_EBUDGET, "budget"},
	{KS_EPROTO, "replay_mismatch"},
	{KS_ENOTFOUND, "replay_exhausted"},
};

const char *ks_llm_status_text(int status)
{
	for (size_t i = 0; i < sizeof(status_words) / sizeof(status_words[0]); i++)
		if (status_words[i].code == status)
			return status_words[i].text;
	return "error";
}

int ks_llm_status_parse(const char *text)
{
	for (size_t i = 0; text && i < sizeof(status_words) / sizeof(status_words[0]); i++)
		if (!strcmp(status_words[i].text, text))
			return status_words[i].code;
	return KS_EIO;
}

/* ---------------------------------------------------------------- prices */

int ks_llm_prices_add(struct ks_llm_prices *p, const char *model, double in_per_m,
		      double out_per_m)
{
	struct ks_llm_price *v = realloc(p->v, (size_t)(p->n + 1) * sizeof(*v));
	if (!v)
		return KS_ENOMEM;
	p->v = v;
	v[p->n].model = strdup(model);
	if (!v[p->n].model)
		return KS_ENOMEM;
	v[p->n].input_per_m = in_per_m;
	v[p->n].output_per_m = out_per_m;
	p->n++;
	return 0;
}

void ks_llm_prices_release(struct ks_llm_prices *p)
{
	for (int i = 0; i < p->n; i++)
		free(p->v[i].model);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

double ks_llm_prices_cost(const struct ks_llm_prices *p, const char *model, long prompt_tokens,
			  long completion_tokens, int *known)
{
	const struct ks_llm_price *best = NULL;
	size_t best_len = 0;
	if (known)
		*known = 0;
	if (!p || !model || prompt_tokens < 0 || completion_tokens < 0)
		return 0;
	for (int i = 0; i < p->n; i++) {
		const char *m = p->v[i].model;
		size_t n = strlen(m);
		if (n && m[n - 1] == '*') {
			if (!strncmp(model, m, n - 1) && (!best || n - 1 > best_len)) {
				best = &p->v[i];
				best_len = n - 1;
			}
		} else if (!strcmp(model, m)) {
			best = &p->v[i];
			break;
		}
	}
	if (!best)
		return 0;
	if (known)
		*known = 1;
	return ((double)prompt_tokens * best->input_per_m +
		(double)completion_tokens * best->output_per_m) /
	       1e6;
}

static int price_field(json_t *o, const char *k1, const char *k2, double *out)
{
	json_t *v = json_object_get(o, k1);
	if (!v)
		v = json_object_get(o, k2);
	if (!v || !json_is_number(v))
		return -1;
	*out = json_number_value(v);
	return *out >= 0 ? 0 : -1;
}

int ks_llm_prices_load(const char *path, struct ks_llm_prices *out, struct ks_error *e)
{
	struct ks_buf b;
	json_error_t je;
	ks_buf_init(&b, 1 << 20);
	int rc = ks_file_read(path, 1 << 20, &b, e);
	if (rc) {
		ks_buf_release(&b);
		return rc;
	}
	json_t *root = json_loadb(ks_buf_str(&b), b.len, 0, &je);
	ks_buf_release(&b);
	if (!root)
		return ks_error_set(e, KS_EPARSE, "price table '%s' line %d col %d: %s", path,
				    je.line, je.column, je.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return ks_error_set(e, KS_EPARSE, "price table '%s': expected an object", path);
	}
	const char *model;
	json_t *v;
	json_object_foreach(root, model, v) {
		double in, outp;
		if (!json_is_object(v) || price_field(v, "input", "input_per_m", &in) ||
		    price_field(v, "output", "output_per_m", &outp)) {
			ks_error_set(e, KS_EPARSE,
				     "price table '%s': model '%s' needs non-negative numbers "
				     "\"input\" and \"output\" (USD per million tokens)",
				     path, model);
			json_decref(root);
			return KS_EPARSE;
		}
		if (ks_llm_prices_add(out, model, in, outp)) {
			json_decref(root);
			return ks_error_set(e, KS_ENOMEM, "price table '%s': out of memory", path);
		}
	}
	json_decref(root);
	return 0;
}

/* ---------------------------------------------------------------- client */

void ks_llm_init(struct ks_llm *c, struct ks_llm_transport *t)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->transport = t;
	if (t && t->secret)
		ks_secret_add(t->secret(t->ctx));
	ks_secret_add(ks_env_get()->api_key);
	ks_secret_add(ks_env_get()->openai_api_key);
}

void ks_llm_release(struct ks_llm *c)
{
	pthread_mutex_destroy(&c->lock);
}

/* a redacted copy as a NUL-terminated heap string (NULL in, NULL out) */
static char *redact_dupn(const struct ks_llm *c, const char *s, size_t len, size_t *outlen)
{
	if (outlen)
		*outlen = 0;
	if (!s)
		return NULL;
	struct ks_buf b;
	ks_buf_init(&b, len * 2 + 64);
	if (ks_secret_redact(s, len, &b)) {
		ks_buf_release(&b);
		char *d = strdup("[unredactable text dropped]");
		if (d && outlen)
			*outlen = strlen(d);
		return d;
	}
	return ks_buf_detach(&b, outlen);
}

static char *redact_dup(const struct ks_llm *c, const char *s, size_t len)
{
	return redact_dupn(c, s, len, NULL);
}

static int budget_check(const struct ks_llm *c, struct ks_error *e)
{
	const struct ks_llm_limits *l = &c->limits;
	const struct ks_llm_usage *u = &c->usage;
	if (l->max_calls > 0 && u->calls + c->in_flight >= l->max_calls)
		return ks_error_set(e, KS_EBUDGET, "llm call budget spent: %ld of %ld calls made",
				    u->calls + c->in_flight, l->max_calls);
	if (l->max_cost > 0 && u->cost_usd >= l->max_cost)
		return ks_error_set(e, KS_EBUDGET, "llm cost budget spent: $%.4f of $%.4f",
				    u->cost_usd, l->max_cost);
	if (l->max_tokens > 0 && u->prompt_tokens + u->completion_tokens >= l->max_tokens)
		return ks_error_set(e, KS_EBUDGET, "llm token budget spent: %ld of %ld tokens",
				    u->prompt_tokens + u->completion_tokens, l->max_tokens);
	return 0;
}

static void record_exchange(struct ks_llm *c, int seq, const char *purpose,
			    const struct ks_llm_msg *msgs, int nmsg,
			    const struct ks_llm_reply *r, int rc, const char *errmsg, int cost_known)
{
	struct ks_llm_transport *t = c->transport;
	struct ks_buf prompt, params;
	ks_buf_init(&prompt, 0);
	ks_buf_init(&params, 1 << 16);
	if (ks_llm_msgs_text(msgs, nmsg, &prompt))
		ks_buf_reset(&prompt);
	if (!t->params_json || t->params_json(t->ctx, &params) || !params.len) {
		ks_buf_reset(&params);
		ks_buf_adds(&params, "{}");
	}
	const char *model = t->model ? t->model(t->ctx) : NULL;
	char *x_prompt = redact_dup(c, ks_buf_str(&prompt), prompt.len);
	char *x_params = redact_dup(c, ks_buf_str(&params), params.len);
	size_t x_reply_len = 0;
	char *x_reply = redact_dupn(c, r->content ? r->content : "", r->content ? r->len : 0,
				    &x_reply_len);
	char *x_reason = r->reasoning ? redact_dup(c, r->reasoning, strlen(r->reasoning)) : NULL;
	char *x_log = r->log ? redact_dup(c, r->log, strlen(r->log)) : NULL;
	char *x_err = errmsg ? redact_dup(c, errmsg, strlen(errmsg)) : NULL;
	struct ks_llm_exchange x = {
		.seq = seq,
		.purpose = purpose ? purpose : "",
		.transport = t->name ? t->name : "",
		.model = r->model ? r->model : (model ? model : ""),
		.params_json = x_params ? x_params : "{}",
		.prompt = x_prompt ? x_prompt : "",
		.reply = x_reply ? x_reply : "",
		.reply_len = x_reply_len,
		.reasoning = x_reason,
		.log = x_log,
		.prompt_tokens = r->prompt_tokens,
		.completion_tokens = r->completion_tokens,
		.latency_s = r->latency_s,
		.cost_usd = r->cost_usd,
		.cost_known = cost_known,
		.status = rc,
		.wire_status = r->status,
		.attempts = r->attempts,
		.error = rc ? (x_err ? x_err : "") : NULL,
	};
	c->record(&x, c->record_ctx);
	free(x_prompt);
	free(x_params);
	free(x_reply);
	free(x_reason);
	free(x_log);
	free(x_err);
	ks_buf_release(&prompt);
	ks_buf_release(&params);
}

int ks_llm_complete(struct ks_llm *c, const char *purpose, const struct ks_llm_msg *msgs,
		    int nmsg, struct ks_llm_reply *out, struct ks_error *e)
{
	struct ks_llm_transport *t = c->transport;
	struct ks_error local = {0};
	memset(out, 0, sizeof(*out));
	out->prompt_tokens = -1;
	out->completion_tokens = -1;
	if (!t || !t->complete || t->version != KS_LLM_TRANSPORT_VERSION)
		return ks_error_set(e, KS_EINVAL, "llm transport not set up");
	if (nmsg <= 0 || !msgs)
		return ks_error_set(e, KS_EINVAL, "llm call '%s' has no messages",
				    purpose ? purpose : "");
	pthread_mutex_lock(&c->lock);
	int rc = budget_check(c, e);
	int seq = c->next_seq;
	if (!rc) {
		c->in_flight++;
		c->next_seq++;
	}
	pthread_mutex_unlock(&c->lock);
	if (rc)
		return rc;
	double t0 = ks_llm_sys.now();
	rc = t->complete(t->ctx, purpose, msgs, nmsg, out, &local);
	if (out->latency_s <= 0)
		out->latency_s = ks_llm_sys.now() - t0;
	const char *model = out->model ? out->model : (t->model ? t->model(t->ctx) : NULL);
	int known = 0;
	out->cost_usd = ks_llm_prices_cost(c->prices, model, out->prompt_tokens,
					   out->completion_tokens, &known);
	pthread_mutex_lock(&c->lock);
	c->in_flight--;
	c->usage.calls++;
	if (rc)
		c->usage.failures++;
	if (out->prompt_tokens < 0 || out->completion_tokens < 0)
		c->usage.tokens_unknown++;
	if (out->prompt_tokens > 0)
		c->usage.prompt_tokens += out->prompt_tokens;
	if (out->completion_tokens > 0)
		c->usage.completion_tokens += out->completion_tokens;
	c->usage.cost_usd += out->cost_usd;
	c->usage.latency_s += out->latency_s;
	struct ks_error red = {0};
	if (rc) {
		char *m = redact_dup(c, local.msg, strlen(local.msg));
		ks_error_set(&red, rc, "llm %s call '%s': %s", t->name ? t->name : "",
			     purpose ? purpose : "", m ? m : "failed");
		free(m);
		if (e)
			*e = red;
	}
	if (c->record)
		record_exchange(c, seq, purpose, msgs, nmsg, out, rc, rc ? local.msg : NULL,
				known);
	pthread_mutex_unlock(&c->lock);
	if (rc) {
		ks_warn("llm %s call '%s' failed after %.2fs: %s", t->name ? t->name : "",
			purpose ? purpose : "", out->latency_s, red.msg);
		ks_llm_reply_release(out);
		return rc;
	}
	ks_debug("llm %s call '%s': %zu reply bytes, %ld+%ld tokens, %.2fs", t->name,
		 purpose ? purpose : "", out->len, out->prompt_tokens, out->completion_tokens,
		 out->latency_s);
	return 0;
}
