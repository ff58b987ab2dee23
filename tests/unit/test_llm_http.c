/* HTTP transport against the fake OpenAI-compatible server: replies, usage, retries,
 * Retry-After, timeouts, truncation, size cap, parse errors, auth errors, redaction,
 * budgets. */
#include "ksearch/llm.h"
#include "ksearch/log.h"
#include "tap.h"

#include "../fake_llm/fake_llm.h"

#include <math.h>
#include <time.h>

#define KEY "sk-test-SECRET-4242"

/* ---- seams: sleeps are recorded, not slept */
static double slept[16];
static int nslept;
static time_t fixed_wall;

static void fake_sleep(double s)
{
	if (nslept < 16)
		slept[nslept] = s;
	nslept++;
}

static time_t fake_wall(void)
{
	return fixed_wall;
}

static double fake_random(void)
{
	return 0.5;
}

/* ---- log capture */
static char logged[1 << 16];
static size_t logged_len;

static void log_sink(enum ks_log_level level, const char *line, void *ctx)
{
	size_t n = strlen(line);
	if (logged_len + n + 2 < sizeof(logged)) {
		memcpy(logged + logged_len, line, n);
		logged_len += n;
		logged[logged_len++] = '\n';
		logged[logged_len] = '\0';
	}
}

/* ---- record capture */
struct recs {
	int n;
	char all[1 << 16];
	int last_status;
	long last_pt;
	char last_purpose[32];
};

static void on_record(const struct ks_llm_exchange *x, void *ctx)
{
	struct recs *r = ctx;
	r->n++;
	r->last_status = x->status;
	r->last_pt = x->prompt_tokens;
	snprintf(r->last_purpose, sizeof(r->last_purpose), "%s", x->purpose);
	size_t len = strlen(r->all);
	snprintf(r->all + len, sizeof(r->all) - len, "%s|%s|%s|%s|%s|%s\n", x->model,
		 x->params_json, x->prompt, x->reply, x->error ? x->error : "",
		 x->log ? x->log : "");
}

static void cfg_fast(struct ks_llm_http_config *c, const char *url)
{
	ks_llm_http_config_defaults(c);
	c->base_url = url;
	c->model = "fake-model";
	c->api_key = KEY;
	c->timeout_s = 5;
	c->connect_timeout_s = 2;
	c->max_retries = 3;
	c->backoff_base_s = 1;
	c->backoff_cap_s = 8;
}

static const struct ks_llm_msg msgs[] = {
	{"system", "You are a kernel engineer."},
	{"user", "PURPOSE: action\nWrite the kernel."},
};

/* One call through a client.  script != NULL starts a fresh server running it (a group of
 * scenarios shares one server: steps are consumed in order, and Python starts slowly on a
 * loaded machine); NULL reuses the running one. */
static int one_call(const char *script, struct ks_llm_http_config *cfg, struct fake_llm *f,
		    struct ks_llm_reply *out, struct ks_error *e)
{
	struct ks_llm_transport t;
	nslept = 0;
	if (script && fake_llm_start(f, script)) {
		ok(0, "fake server started");
		return -1;
	}
	cfg->base_url = f->url;
	int rc = ks_llm_http_open(cfg, &t, e);
	if (rc)
		return rc;
	struct ks_llm c;
	ks_llm_init(&c, &t);
	rc = ks_llm_complete(&c, "action", msgs, 2, out, e);
	ks_llm_release(&c);
	ks_llm_transport_close(&t);
	return rc;
}

static void test_success(void)
{
	struct fake_llm f;
	struct ks_llm_http_config cfg;
	struct ks_llm_reply r;
	struct ks_error e = {0};
	cfg_fast(&cfg, NULL);
	cfg.temperature = 0.25;
	cfg.max_tokens = 1000;
	const char *hdrs[] = {"X-Test-Header: yes", NULL};
	cfg.headers = hdrs;
	int rc = one_call("[{\"content\": \"```c\\nint x;\\n```\", \"model\": \"fake-2\","
			  " \"usage\": {\"prompt_tokens\": 120, \"completion_tokens\": 30}},"
			  " {\"content\": \"ok\", \"reasoning_content\": \"think\", \"usage\": null}]",
			  &cfg, &f, &r, &e);
	is_int(rc, 0, "success");
	is_str(r.content, "```c\nint x;\n```", "content");
	is_int(r.prompt_tokens, 120, "prompt tokens");
	is_int(r.completion_tokens, 30, "completion tokens");
	is_str(r.model, "fake-2", "reported model");
	is_int(r.status, 200, "status");
	is_int(r.attempts, 1, "one attempt");
	ok(r.latency_s > 0 && r.latency_s < 5, "latency measured (%.3f)", r.latency_s);
	char *req = fake_llm_request_n(&f, 0);
	ok(strstr(req, "\"Authorization\": \"Bearer " KEY "\"") != NULL, "key sent as bearer");
	ok(strstr(req, "\"path\": \"/v1/chat/completions\"") != NULL, "path");
	ok(strstr(req, "\"model\": \"fake-model\"") != NULL, "model in body");
	ok(strstr(req, "\"role\": \"system\", \"content\": \"You are a kernel engineer.\"") ||
		   strstr(req, "\"content\": \"You are a kernel engineer.\", \"role\": \"system\""),
	   "messages in body");
	ok(strstr(req, "\"temperature\": 0.25") != NULL, "temperature sent");
	ok(strstr(req, "\"max_tokens\": 1000") != NULL, "max_tokens sent");
	ok(strstr(req, "reasoning_effort") == NULL, "reasoning_effort not sent when unset");
	ok(strstr(req, "\"X-Test-Header\": \"yes\"") != NULL, "extra header sent");
	free(req);
	ks_llm_reply_release(&r);

	/* reasoning_content, missing usage, reasoning_effort sent */
	cfg_fast(&cfg, NULL);
	cfg.reasoning_effort = "high";
	cfg.max_tokens = 64;
	cfg.max_tokens_field = "max_completion_tokens";
	rc = one_call(NULL, &cfg, &f, &r, &e);
	is_int(rc, 0, "reply without usage");
	is_str(r.reasoning, "think", "reasoning_content kept");
	is_int(r.prompt_tokens, -1, "unknown prompt tokens");
	req = fake_llm_request_n(&f, 1);
	ok(strstr(req, "\"reasoning_effort\": \"high\"") != NULL, "reasoning_effort sent");
	ok(strstr(req, "temperature") == NULL, "temperature not sent when unset");
	ok(strstr(req, "\"max_completion_tokens\": 64") && !strstr(req, "\"max_tokens\""),
	   "max tokens under the configured field name");
	free(req);
	fake_llm_stop(&f);
	ks_llm_reply_release(&r);
}

static void test_retry_after(void)
{
	struct fake_llm f;
	struct ks_llm_http_config cfg;
	struct ks_llm_reply r;
	struct ks_error e = {0};
	cfg_fast(&cfg, NULL);
	int rc = one_call("[{\"status\": 429, \"retry_after\": \"7\"}, {\"content\": \"after\"},"
			  " {\"status\": 503, \"retry_after\": \"Sun, 29 Nov 2026 17:00:00 GMT\"},"
			  " {\"status\": 429, \"retry_after\": \"100000\"}, {\"content\": \"x\"},"
			  " {\"status\": 429, \"retry_after\": \"1\"}, {\"status\": 429},"
			  " {\"status\": 429}]",
			  &cfg, &f, &r, &e);
	is_int(rc, 0, "429 then success");
	is_str(r.content, "after", "reply after retry");
	is_int(r.attempts, 2, "two attempts");
	is_int(nslept, 1, "one wait");
	ok(fabs(slept[0] - 7) < 1e-9, "waited Retry-After seconds (%.3f)", slept[0]);
	is_int(fake_llm_count(&f), 2, "server saw two requests");
	ks_llm_reply_release(&r);

	/* HTTP-date form, relative to the wall-clock seam; capped */
	struct tm tm = {.tm_year = 126, .tm_mon = 10, .tm_mday = 29, .tm_hour = 17};
	fixed_wall = timegm(&tm) - 5;
	cfg_fast(&cfg, NULL);
	rc = one_call(NULL, &cfg, &f, &r, &e);
	is_int(rc, 0, "date Retry-After then success");
	ok(nslept == 2 && fabs(slept[0] - 5) < 1e-9, "waited until the date (%.3f)", slept[0]);
	ok(nslept == 2 && fabs(slept[1] - 120) < 1e-9, "Retry-After capped (%.3f)", slept[1]);
	ks_llm_reply_release(&r);

	/* 429 forever: gives up after max_retries */
	cfg_fast(&cfg, NULL);
	cfg.max_retries = 2;
	int before = fake_llm_count(&f);
	rc = one_call(NULL, &cfg, &f, &r, &e);
	is_int(rc, KS_EHTTP, "429 forever fails");
	ok(strstr(e.msg, "gave up after 3 attempts") && strstr(e.msg, "429"), "message: %s",
	   e.msg);
	is_int(fake_llm_count(&f) - before, 3, "1 + max_retries requests");
	fake_llm_stop(&f);
}

static void test_server_errors(void)
{
	struct fake_llm f;
	struct ks_llm_http_config cfg;
	struct ks_llm_reply r;
	struct ks_error e = {0};
	int before;
	cfg_fast(&cfg, NULL);
	int rc = one_call("[{\"status\": 500}, {\"status\": 502}, {\"content\": \"fine\"},"
			  " {\"status\": 401, \"body\": \"{\\\"error\\\": {\\\"message\\\": \\\"bad key\\\"}}\"},"
			  " {\"status\": 404}, {\"malformed\": true}, {\"no_choices\": true},"
			  " {\"content_null\": true, \"reasoning_content\": \"hmm\"}]",
			  &cfg, &f, &r, &e);
	is_int(rc, 0, "500, 502 then success");
	is_int(r.attempts, 3, "three attempts");
	/* base 1 s, jitter fixed at 0.5: d/2 + 0.5*d/2 = 0.75 d */
	ok(nslept == 2 && fabs(slept[0] - 0.75) < 1e-9 && fabs(slept[1] - 1.5) < 1e-9,
	   "exponential backoff with jitter (%.3f, %.3f)", slept[0], slept[1]);
	ks_llm_reply_release(&r);

	/* from here on a retry would eat the next scenario's step: the counts catch it */
	before = fake_llm_count(&f);
	rc = one_call(NULL, &cfg, &f, &r, &e);
	is_int(rc, KS_EHTTP, "401 fails");
	ok(strstr(e.msg, "authentication failed") && strstr(e.msg, "KSEARCH_API_KEY") &&
		   strstr(e.msg, "bad key"),
	   "401 message: %s", e.msg);
	is_int(fake_llm_count(&f) - before, 1, "401 not retried");
	is_int(nslept, 0, "no wait on 401");

	before = fake_llm_count(&f);
	rc = one_call(NULL, &cfg, &f, &r, &e);
	is_int(rc, KS_EHTTP, "404 fails");
	ok(strstr(e.msg, "--llm-model") != NULL, "404 message: %s", e.msg);
	is_int(fake_llm_count(&f) - before, 1, "404 not retried");

	rc = one_call(NULL, &cfg, &f, &r, &e);
	is_int(rc, KS_EPARSE, "malformed JSON body is a parse error");
	ok(strstr(e.msg, "not JSON") != NULL, "malformed message: %s", e.msg);

	rc = one_call(NULL, &cfg, &f, &r, &e);
	is_int(rc, KS_EPARSE, "missing choices is a parse error");
	ok(strstr(e.msg, "no choices") != NULL, "no-choices message: %s", e.msg);

	rc = one_call(NULL, &cfg, &f, &r, &e);
	is_int(rc, KS_EPARSE, "null content is an error");
	ok(strstr(e.msg, "no text content") != NULL, "null content message: %s", e.msg);
	is_int(fake_llm_count(&f), 8, "parse errors not retried");
	fake_llm_stop(&f);
}

static void test_transport_faults(void)
{
	struct ks_llm_transport t0;
	struct fake_llm f;
	struct ks_llm_http_config cfg;
	struct ks_llm_reply r;
	struct ks_error e = {0};
	int before;

	cfg_fast(&cfg, NULL);
	cfg.timeout_s = 0.5;
	cfg.max_retries = 0;
	int rc = one_call("[{\"hang\": 3, \"content\": \"late\"},"
			  " {\"hang\": 3, \"content\": \"late\"}, {\"content\": \"on time\"},"
			  " {\"truncate\": true}, {\"truncate\": true}, {\"content\": \"whole\"},"
			  " {\"big\": 5000000}, {\"big\": 5000000}, {\"big\": 5000000}]",
			  &cfg, &f, &r, &e);
	is_int(rc, KS_ETIMEOUT, "hung connection times out");
	ok(strstr(e.msg, "timed out") != NULL, "timeout message: %s", e.msg);

	cfg_fast(&cfg, NULL);
	cfg.timeout_s = 0.5;
	cfg.max_retries = 1;
	rc = one_call(NULL, &cfg, &f, &r, &e);
	is_int(rc, 0, "timeout then retry succeeds");
	is_str(r.content, "on time", "reply of the retry");
	ks_llm_reply_release(&r);

	cfg_fast(&cfg, NULL);
	cfg.max_retries = 0;
	rc = one_call(NULL, &cfg, &f, &r, &e);
	is_int(rc, KS_EHTTP, "truncated body is an error");
	ok(r.content == NULL, "no partial content");

	cfg_fast(&cfg, NULL);
	rc = one_call(NULL, &cfg, &f, &r, &e);
	is_int(rc, 0, "truncated body retried");
	is_str(r.content, "whole", "whole reply after truncation");
	ks_llm_reply_release(&r);

	cfg_fast(&cfg, NULL);
	before = fake_llm_count(&f);
	rc = one_call(NULL, &cfg, &f, &r, &e);
	is_int(rc, KS_ELIMIT, "5 MB reply hits the cap");
	ok(strstr(e.msg, "4194304-byte cap") != NULL, "cap message: %s", e.msg);
	is_int(fake_llm_count(&f) - before, 1, "size cap not retried");

	cfg_fast(&cfg, NULL);
	cfg.max_reply_bytes = 8 << 20;
	rc = one_call(NULL, &cfg, &f, &r, &e);
	is_int(rc, 0, "5 MB reply fits a larger cap");
	is_int(r.len, 5000000, "all bytes");
	ks_llm_reply_release(&r);

	/* a caller without an error record still gets the right code */
	cfg_fast(&cfg, f.url);
	rc = ks_llm_http_open(&cfg, &t0, &e);
	rc = t0.complete(t0.ctx, "x", msgs, 2, &r, NULL);
	is_int(rc, KS_ELIMIT, "code kept without an error record");
	ks_llm_reply_release(&r);
	ks_llm_transport_close(&t0);
	fake_llm_stop(&f);

	/* nothing listens: connection refused, retried, then fails */
	cfg_fast(&cfg, "http://127.0.0.1:1/v1");
	cfg.max_retries = 2;
	struct ks_llm_transport t;
	nslept = 0;
	rc = ks_llm_http_open(&cfg, &t, &e);
	is_int(rc, 0, "open");
	rc = t.complete(t.ctx, "x", msgs, 2, &r, &e);
	is_int(rc, KS_EHTTP, "connection refused");
	is_int(nslept, 2, "connection errors retried");
	ks_llm_transport_close(&t);

	/* bad configuration */
	cfg_fast(&cfg, "ftp://x");
	rc = ks_llm_http_open(&cfg, &t, &e);
	is_int(rc, KS_EINVAL, "non-http url rejected");
	cfg_fast(&cfg, "http://x");
	cfg.model = "";
	rc = ks_llm_http_open(&cfg, &t, &e);
	is_int(rc, KS_EINVAL, "missing model rejected");
	ok(strstr(e.msg, "--llm-model") != NULL, "message names the option: %s", e.msg);
}

static void test_redaction_and_budget(void)
{
	struct fake_llm f;
	struct ks_llm_http_config cfg;
	struct ks_llm_reply r;
	struct ks_error e = {0};
	struct recs recs = {0};
	struct ks_llm_transport t;
	struct ks_llm c;
	struct ks_llm_prices prices = {0};
	int rc;

	logged_len = 0;
	logged[0] = '\0';
	ks_log_set(log_sink, NULL, KS_LOG_DEBUG);
	if (fake_llm_start(&f, "[{\"content\": \"echo " KEY "\"}, {\"status\": 401, \"body\": "
			       "\"{\\\"error\\\": \\\"key " KEY " invalid\\\"}\"},"
			       " {\"status\": 429, \"retry_after\": \"0\", \"body\": \"slow down " KEY "\"},"
			       " {\"content\": \"three\", \"usage\": {\"prompt_tokens\": 1000000,"
			       " \"completion_tokens\": 500000}}, {\"content\": \"four\"}]")) {
		ok(0, "fake server started");
		return;
	}
	cfg_fast(&cfg, f.url);
	cfg.verbose = 1;
	cfg.model = "fake-model";
	rc = ks_llm_http_open(&cfg, &t, &e);
	is_int(rc, 0, "open");
	ks_llm_init(&c, &t);
	c.record = on_record;
	c.record_ctx = &recs;
	ks_llm_prices_add(&prices, "fake-*", 2.0, 8.0);
	c.prices = &prices;
	c.limits.max_calls = 4;
	c.limits.max_cost = 5.0;
	struct ks_llm_msg leak[] = {{"user", "PURPOSE: edit\nmy key is " KEY " oops"}};

	rc = ks_llm_complete(&c, "edit", leak, 1, &r, &e);
	is_int(rc, 0, "call 1");
	ok(strstr(r.content, KEY) != NULL, "the caller still sees the real reply");
	ks_llm_reply_release(&r);
	rc = ks_llm_complete(&c, "edit", leak, 1, &r, &e);
	is_int(rc, KS_EHTTP, "call 2 fails with 401");
	ok(strstr(e.msg, KEY) == NULL && strstr(e.msg, "[REDACTED]") != NULL,
	   "error message redacted: %s", e.msg);
	rc = ks_llm_complete(&c, "init", leak, 1, &r, &e);
	is_int(rc, 0, "call 3 (after a 429 whose body echoes the key)");
	ok(strstr(logged, "retrying") != NULL, "the retry was logged");
	ok(fabs(r.cost_usd - (2.0 + 4.0)) < 1e-9, "cost from the price table (%.4f)", r.cost_usd);
	ks_llm_reply_release(&r);
	is_int(recs.n, 3, "three exchanges recorded");
	is_str(recs.last_purpose, "init", "purpose recorded");
	is_int(recs.last_pt, 1000000, "tokens recorded");
	ok(strstr(recs.all, KEY) == NULL, "key absent from every record");
	ok(strstr(recs.all, "my key is [REDACTED] oops") != NULL, "prompt redacted");
	ok(strstr(recs.all, "echo [REDACTED]") != NULL, "reply redacted");
	ok(strstr(recs.all, "\"model\":\"fake-model\"") != NULL, "params recorded");
	ok(strstr(logged, KEY) == NULL, "key absent from the log");
	ok(strstr(logged, "Authorization: [REDACTED]") != NULL, "verbose log redacts the header");

	/* budget: cost 6 > 5 now, so the next call is refused before the wire */
	int before = fake_llm_count(&f);
	rc = ks_llm_complete(&c, "init", leak, 1, &r, &e);
	is_int(rc, KS_EBUDGET, "cost budget");
	ok(strstr(e.msg, "cost budget") != NULL, "budget message: %s", e.msg);
	is_int(fake_llm_count(&f), before, "no request past the budget");
	c.limits.max_cost = 0;
	rc = ks_llm_complete(&c, "init", leak, 1, &r, &e);
	is_int(rc, 0, "call 4 within the call budget");
	ks_llm_reply_release(&r);
	rc = ks_llm_complete(&c, "init", leak, 1, &r, &e);
	is_int(rc, KS_EBUDGET, "call budget");
	is_int(c.usage.calls, 4, "calls counted");
	is_int(c.usage.failures, 1, "failures counted");
	is_int(c.usage.prompt_tokens, 11 + 1000000 + 11, "prompt tokens summed");
	ks_llm_release(&c);
	ks_llm_transport_close(&t);
	ks_llm_prices_release(&prices);
	ks_log_set(NULL, NULL, KS_LOG_INFO);
	fake_llm_stop(&f);
}

/* the fake server's purpose mode: replies matched on "PURPOSE: x" in the prompt */
static void test_purpose_mode(void)
{
	struct fake_llm f;
	struct ks_llm_http_config cfg;
	struct ks_llm_transport t;
	struct ks_llm_reply r;
	struct ks_error e = {0};
	int rc;
	if (fake_llm_start(&f, "{\"purposes\": {\"action\": [{\"content\": \"A1\"}, "
			       "{\"content\": \"A2\"}], \"edit\": [{\"content\": \"E1\"}],"
			       " \"*\": [{\"content\": \"ANY\"}]}}")) {
		ok(0, "fake server started");
		return;
	}
	cfg_fast(&cfg, f.url);
	rc = ks_llm_http_open(&cfg, &t, &e);
	is_int(rc, 0, "open");
	struct ks_llm_msg a[] = {{"user", "PURPOSE: action\n..."}};
	struct ks_llm_msg ed[] = {{"system", "s"}, {"user", "PURPOSE: edit\n..."}};
	struct ks_llm_msg o[] = {{"user", "PURPOSE: init\n..."}};
	const char *want[] = {"A1", "E1", "A2", "ANY"};
	const struct ks_llm_msg *seq[] = {a, ed, a, o};
	int nseq[] = {1, 2, 1, 1};
	for (int i = 0; i < 4; i++) {
		rc = t.complete(t.ctx, "", seq[i], nseq[i], &r, &e);
		ok(rc == 0 && r.content && !strcmp(r.content, want[i]), "purpose reply %d is %s (%s)",
		   i, want[i], rc ? e.msg : r.content);
		ks_llm_reply_release(&r);
	}
	char *req = fake_llm_requests(&f);
	ok(strstr(req, "\"purpose\": \"edit\"") != NULL, "server logged the purpose");
	free(req);
	ks_llm_transport_close(&t);
	fake_llm_stop(&f);
}

/* the scripted softmax run (tests/fake_llm/scripts/softmax_cpu.json) parses end to end
 * through ks_llm_ask: the fixture the search-loop scenario test relies on */
static void test_softmax_script(void)
{
	struct fake_llm f;
	struct ks_llm_http_config cfg;
	struct ks_llm_transport t;
	struct ks_llm c;
	struct ks_error e = {0};
	struct ks_buf out, script;
	int rc;
	ks_buf_init(&script, 1 << 20);
	ks_buf_init(&out, 1 << 20);
	FILE *sf = fopen("tests/fake_llm/scripts/softmax_cpu.json", "r");
	ok(sf != NULL, "script fixture present");
	if (!sf)
		return;
	char chunk[4096];
	size_t k;
	while ((k = fread(chunk, 1, sizeof(chunk), sf)) > 0)
		ks_buf_add(&script, chunk, k);
	fclose(sf);
	if (fake_llm_start(&f, ks_buf_str(&script))) {
		ok(0, "fake server started");
		return;
	}
	cfg_fast(&cfg, f.url);
	rc = ks_llm_http_open(&cfg, &t, &e);
	is_int(rc, 0, "open");
	ks_llm_init(&c, &t);
	struct ks_llm_ask init = {.purpose = "init", .system = "sys",
				  .user = "PURPOSE: init\n...", .want = KS_LLM_WANT_JSON_OBJECT,
				  .max_fixes = 1};
	rc = ks_llm_ask(&c, &init, &out, NULL, &e);
	ok(rc == 0 && strstr(ks_buf_str(&out), "\"decision_tree\"") &&
		   strstr(ks_buf_str(&out), "\"node_id\": 3"),
	   "init document (%s)", rc ? e.msg : "ok");
	struct ks_llm_ask act = {.purpose = "action", .system = "sys",
				 .user = "PURPOSE: action\n...", .want = KS_LLM_WANT_CODE,
				 .lang = "c", .max_fixes = 1};
	rc = ks_llm_ask(&c, &act, &out, NULL, &e);
	ok(rc == 0 && strstr(ks_buf_str(&out), "omp parallel for"), "action 1 code");
	rc = ks_llm_ask(&c, &act, &out, NULL, &e);
	ok(rc == 0 && strstr(ks_buf_str(&out), "void softmax"), "action 2 after a correction");
	rc = ks_llm_ask(&c, &act, &out, NULL, &e);
	ok(rc == 0 && strstr(ks_buf_str(&out), "1.0f / s\n"), "action 3: code that will not compile");
	struct ks_llm_ask ed = {.purpose = "edit", .user = "PURPOSE: edit\n...",
				.want = KS_LLM_WANT_JSON_ARRAY, .max_fixes = 1};
	struct ks_llm_reply r;
	rc = ks_llm_ask(&c, &ed, &out, &r, &e);
	ok(rc == 0 && strstr(ks_buf_str(&out), "insert_node"), "edit script");
	struct ks_buf note;
	ks_buf_init(&note, 4096);
	ok(rc == 0 && ks_reply_note(r.content, r.len, "PERF_GAP", &note) == 0 &&
		   strstr(ks_buf_str(&note), "bandwidth bound"),
	   "reflection note");
	ks_buf_release(&note);
	ks_llm_reply_release(&r);
	is_int(c.usage.calls, 6, "six exchanges (one correction)");
	ks_llm_release(&c);
	ks_llm_transport_close(&t);
	fake_llm_stop(&f);
	ks_buf_release(&out);
	ks_buf_release(&script);
}

static void test_prices(void)
{
	struct ks_llm_prices p = {0};
	struct ks_error e = {0};
	int known, rc;
	const char *path = "/tmp/ks-test-prices.json";
	FILE *s = fopen(path, "w");
	fputs("{\"gpt-4.1\": {\"input\": 2, \"output\": 8}, \"gpt-*\": {\"input\": 1, "
	      "\"output\": 1}, \"gpt-4*\": {\"input\": 3, \"output\": 3}}",
	      s);
	fclose(s);
	rc = ks_llm_prices_load(path, &p, &e);
	is_int(rc, 0, "price table loads");
	ok(fabs(ks_llm_prices_cost(&p, "gpt-4.1", 1000000, 1000000, &known) - 10) < 1e-9 && known,
	   "exact match");
	ok(fabs(ks_llm_prices_cost(&p, "gpt-4o", 1000000, 0, &known) - 3) < 1e-9,
	   "longest prefix wins");
	ok(ks_llm_prices_cost(&p, "claude", 1000, 1000, &known) == 0 && !known, "unknown model");
	ok(ks_llm_prices_cost(&p, "gpt-4.1", -1, 10, &known) == 0 && !known, "unknown usage");
	ks_llm_prices_release(&p);
	s = fopen(path, "w");
	fputs("{\"m\": {\"input\": \"cheap\"}}", s);
	fclose(s);
	rc = ks_llm_prices_load(path, &p, &e);
	is_int(rc, KS_EPARSE, "bad price table");
	ok(strstr(e.msg, "'m'") != NULL, "message names the model: %s", e.msg);
	ks_llm_prices_release(&p);
	remove(path);
}

int main(void)
{
	ks_llm_sys.sleep = fake_sleep;
	ks_llm_sys.wall = fake_wall;
	ks_llm_sys.random = fake_random;
	test_success();
	test_retry_after();
	test_server_errors();
	test_transport_faults();
	test_redaction_and_budget();
	test_purpose_mode();
	test_softmax_script();
	test_prices();
	ks_llm_sys = ks_llm_sys_default;
	return tap_done();
}
