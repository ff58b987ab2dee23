/* The llm / cmd policies' model connection: transport from the options, client budgets,
 * price table, record hook into the run store, replay of recorded runs. */
#include "policy/llm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ksearch/secret.h"
#include "ksearch/log.h"

static int has(const char *s)
{
	return s && s[0];
}

int ks_llm_policy_check(const struct ks_run_opts *o, enum ks_llm_kind kind, struct ks_error *e)
{
	const char *ctx = o->context;
	if (has(ctx) && strcmp(ctx, "none") && strcmp(ctx, "spec") && strcmp(ctx, "full"))
		return ks_error_set(e, KS_EINVAL, "--context '%s': expected none, spec or full", ctx);
	const char *eff = o->llm_reasoning_effort;
	if (has(eff) && strcmp(eff, "low") && strcmp(eff, "medium") && strcmp(eff, "high"))
		return ks_error_set(e, KS_EINVAL,
				    "--llm-reasoning-effort '%s': expected low, medium or high", eff);
	if (has(o->llm_replay))
		return 0;
	if (kind == KS_LLM_CMD && !has(o->llm_cmd))
		return ks_error_set(e, KS_EINVAL,
				    "--policy cmd needs --llm-cmd 'COMMAND' (or --llm-replay RUN_DIR)");
	if (kind == KS_LLM_HTTP && (!has(o->llm_base_url) || !has(o->llm_model)))
		return ks_error_set(e, KS_EINVAL,
				    "--policy llm needs --llm-base-url URL and --llm-model NAME (or "
				    "--llm-replay RUN_DIR)");
	return 0;
}

const char *ks_llm_policy_store_purpose(const char *purpose)
{
	static const char *const known[] = {"init",    "edit",   "action", "debug",
					    "improve", "direct", "repeat"};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (purpose && !strcmp(purpose, known[i]))
			return known[i];
	return "repair";
}

/* ---- record hook ---------------------------------------------------------------------- */

static void on_exchange(const struct ks_llm_exchange *x, void *ctx)
{
	struct ks_llm_policy *p = ctx;
	if (x->seq < p->skip_records)
		return; /* a resumed run retracing what is stored already */
	if (x->status == KS_EINTERRUPTED)
		return; /* the run stopped while waiting: a resume asks the same question again */
	struct ks_store_llm row = {
		.round = p->round ? *p->round : 0,
		.purpose = ks_llm_policy_store_purpose(x->purpose),
		.model = x->model,
		.params = x->params_json,
		.prompt = x->prompt,
		.reply = x->reply,
		.prompt_tokens = x->prompt_tokens,
		.completion_tokens = x->completion_tokens,
		.latency_ms = x->latency_s * 1e3,
		.cost = x->cost_known ? x->cost_usd : NAN,
		.status = ks_llm_status_text(x->status),
		.error = x->error,
	};
	struct ks_error e = {0};
	if (ks_store_add_llm(p->store, &row, NULL, &e))
		ks_warn("llm exchange %d not recorded: %s", x->seq, e.msg);
}

/* A live failure that no retry or later call can mend: the shell found no program to run
 * (126: not executable, 127: not found), or the endpoint has never answered (a wrong URL,
 * no network, a refused key).  Once it has answered, a failure is a blip the run survives. */
static int live_failure(struct ks_llm_policy *p, int rc, const struct ks_llm_reply *out,
			struct ks_error *e)
{
	char msg[sizeof(e->msg)];
	snprintf(msg, sizeof(msg), "%s", e->msg);
	if (p->kind == KS_LLM_CMD && rc == KS_EIO && (out->status == 126 || out->status == 127))
		return ks_error_set(e, KS_EUNAVAILABLE, "%s; check --llm-cmd", msg);
	int replied = out->status >= 200 && out->status < 300; /* a reply that was unusable */
	if (p->kind == KS_LLM_HTTP && !p->live_answered && !replied)
		return ks_error_set(e, KS_EUNAVAILABLE,
				    "the model endpoint has not answered once in this run: %s; check "
				    "--llm-base-url, the network and KSEARCH_API_KEY",
				    msg);
	return rc;
}

/* recorded replies first (a resumed run retraces its path), then the live model */
static int chain_complete(void *ctx, const char *purpose, const struct ks_llm_msg *msgs,
			  int nmsg, struct ks_llm_reply *out, struct ks_error *e)
{
	struct ks_llm_policy *p = ctx;
	if (p->replay_left > 0) {
		int idx = p->npurposes - p->replay_left; /* the recorded exchange served now */
		p->replay_left--;
		int rc = p->replay.complete(p->replay.ctx, purpose, msgs, nmsg, out, e);
		if (rc != KS_EPROTO)
			return rc;
		/* the resumed run took another path than the recorded one: ask the model */
		ks_warn("resume: %s; asking the model from here", e ? e->msg : "replay diverged");
		p->replay_left = 0;
		p->skip_records = idx; /* from here on the exchanges are new: record them */
	}
	struct ks_error local = {0};
	int rc = p->live.complete(p->live.ctx, purpose, msgs, nmsg, out, e ? e : &local);
	if (!rc)
		p->live_answered = 1;
	return rc ? live_failure(p, rc, out, e ? e : &local) : 0;
}

static const char *chain_model(void *ctx)
{
	struct ks_llm_policy *p = ctx;
	struct ks_llm_transport *t = p->replay_left > 0 || !p->chain_live ? &p->replay : &p->live;
	return t->model ? t->model(t->ctx) : NULL;
}

static int chain_params(void *ctx, struct ks_buf *out)
{
	struct ks_llm_policy *p = ctx;
	struct ks_llm_transport *t = p->replay_left > 0 || !p->chain_live ? &p->replay : &p->live;
	return t->params_json ? t->params_json(t->ctx, out) : ks_buf_adds(out, "{}");
}

static const char *chain_secret(void *ctx)
{
	struct ks_llm_policy *p = ctx;
	return p->chain_live && p->live.secret ? p->live.secret(p->live.ctx) : NULL;
}

static void chain_close(void *ctx)
{
	(void)ctx; /* the parts are closed by ks_llm_policy_close */
}

/* 1 when url names this machine, where servers commonly run without a key */
static int url_is_local(const char *url)
{
	if (!strncmp(url, "unix:", 5))
		return 1;
	const char *h = strstr(url, "://");
	h = h ? h + 3 : url;
	size_t n = strcspn(h, "/?#");
	const char *at = memchr(h, '@', n); /* user:password@host */
	if (at) {
		n -= (size_t)(at + 1 - h);
		h = at + 1;
	}
	size_t len = h[0] == '[' ? strcspn(h, "]") + 1 : strcspn(h, ":/?#");
	if (len > n)
		len = n;
	return (len == 9 && !strncasecmp(h, "localhost", 9)) ||
	       (len == 5 && !strncmp(h, "[::1]", 5)) || (len > 4 && !strncmp(h, "127.", 4));
}

static int open_live(struct ks_llm_policy *p, const struct ks_llm_policy_cfg *cfg, int recorded,
		     struct ks_error *e)
{
	const struct ks_run_opts *o = cfg->o;
	if (cfg->kind == KS_LLM_FILES) {
		struct ks_llm_files_config fc;
		ks_llm_files_config_defaults(&fc);
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s/llm", cfg->run_dir ? cfg->run_dir : ".");
		fc.dir = dir;
		fc.first = recorded + 1; /* a resumed run goes on with the next number */
		fc.timeout_s = o->llm_timeout_s;
		fc.cancelled = cfg->cancelled;
		fc.cancel_ctx = cfg->cancel_ctx;
		return ks_llm_files_open(&fc, &p->live, e);
	}
	if (cfg->kind == KS_LLM_CMD) {
		struct ks_llm_cmd_config cc;
		ks_llm_cmd_config_defaults(&cc);
		cc.command = o->llm_cmd;
		if (o->llm_timeout_s > 0)
			cc.timeout_s = o->llm_timeout_s;
		return ks_llm_cmd_open(&cc, &p->live, e);
	}
	struct ks_llm_http_config hc;
	ks_llm_http_config_defaults(&hc);
	hc.base_url = o->llm_base_url;
	hc.model = o->llm_model;
	hc.api_key = o->llm_api_key;
	hc.temperature = o->llm_temperature;
	hc.max_tokens = o->llm_max_tokens;
	hc.reasoning_effort = has(o->llm_reasoning_effort) ? o->llm_reasoning_effort : NULL;
	if (o->llm_timeout_s > 0)
		hc.timeout_s = o->llm_timeout_s;
	int rc = ks_llm_http_open(&hc, &p->live, e);
	if (!rc && !has(o->llm_api_key) && !url_is_local(o->llm_base_url))
		ks_warn("no API key (KSEARCH_API_KEY, else OPENAI_API_KEY) is set: requests to '%s' "
			"go without one; set it unless the endpoint needs none",
			o->llm_base_url);
	return rc;
}

/* --llm-replay: the recorded replies alone, the resumed part of the path included */
static int open_replay(struct ks_llm_policy *p, const char *dir, struct ks_error *e)
{
	int n = 0;
	int rc = ks_llm_replay_load_dir(p, dir, &n, e);
	if (!rc && n == 0)
		rc = ks_error_set(e, KS_EINVAL,
				  "--llm-replay '%s' holds no recorded LLM exchanges (it was made with "
				  "the builtin policy?)",
				  dir);
	if (!rc)
		ks_info("replaying %d recorded LLM exchanges from %s", n, dir);
	return rc;
}

/* A live model behind the chain (a resumed run's recorded replies first), which also tells a
 * model that cannot be reached from one that failed once */
static int open_chain(struct ks_llm_policy *p, const struct ks_llm_policy_cfg *cfg, int recorded,
		      struct ks_error *e)
{
	int rc = open_live(p, cfg, recorded, e);
	if (!rc && recorded > 0) {
		int n = 0;
		if ((rc = ks_llm_replay_load(p, cfg->store, &n, e)))
			return rc;
		p->replay_left = n;
		ks_info("resume: retracing %d recorded LLM exchanges before asking the model", n);
	}
	p->kind = cfg->kind;
	p->chain_live = 1;
	p->chain = (struct ks_llm_transport){
		.version = KS_LLM_TRANSPORT_VERSION, .name = p->live.name,
		.complete = chain_complete, .model = chain_model, .params_json = chain_params,
		.secret = chain_secret, .close = chain_close, .ctx = p};
	return rc;
}

/* budgets, the key to redact, prices and the record hook of the client */
static int client_setup(struct ks_llm_policy *p, const struct ks_run_opts *o,
			struct ks_llm_transport *use, struct ks_error *e)
{
	ks_llm_init(&p->client, use);
	if (has(o->llm_api_key))
		ks_secret_add(o->llm_api_key);
	p->client.limits.max_calls = o->llm_max_calls;
	p->client.limits.max_cost = o->llm_max_cost;
	if (has(o->llm_prices)) {
		int rc = ks_llm_prices_load(o->llm_prices, &p->prices, e);
		if (rc) {
			ks_llm_release(&p->client);
			return rc;
		}
		p->client.prices = &p->prices;
	}
	p->client.record = on_exchange;
	p->client.record_ctx = p;
	return 0;
}

int ks_llm_policy_open(struct ks_llm_policy *p, const struct ks_llm_policy_cfg *cfg,
		       struct ks_error *e)
{
	const struct ks_run_opts *o = cfg->o;
	memset(p, 0, sizeof(*p));
	p->store = cfg->store;
	p->round = cfg->round;
	int rc = ks_llm_policy_check(o, cfg->kind, e);
	if (rc)
		return rc;
	int recorded = 0;
	if (cfg->resumed) {
		struct ks_store_llm *rows = NULL;
		size_t n = 0;
		if ((rc = ks_store_list_llm(cfg->store, &rows, &n, e)))
			return rc;
		ks_store_free(rows);
		recorded = (int)n;
	}
	int replay = has(o->llm_replay);
	rc = replay ? open_replay(p, o->llm_replay, e) : open_chain(p, cfg, recorded, e);
	p->skip_records = recorded;
	if (!rc)
		rc = client_setup(p, o, replay ? &p->replay : &p->chain, e);
	if (!rc)
		return 0;
	ks_llm_transport_close(&p->live);
	ks_llm_transport_close(&p->replay);
	for (int i = 0; i < p->npurposes; i++)
		free(p->purposes[i]);
	free(p->purposes);
	p->purposes = NULL;
	p->npurposes = 0;
	return rc;
}

void ks_llm_policy_close(struct ks_llm_policy *p)
{
	ks_llm_release(&p->client);
	ks_llm_transport_close(&p->live);
	ks_llm_transport_close(&p->replay);
	ks_llm_prices_release(&p->prices);
	for (int i = 0; i < p->npurposes; i++)
		free(p->purposes[i]);
	free(p->purposes);
	memset(p, 0, sizeof(*p));
}

const char *ks_llm_policy_peek(const struct ks_llm_policy *p)
{
	int seq = p->client.next_seq;
	if (seq >= p->npurposes)
		return NULL;
	return p->purposes[seq];
}
