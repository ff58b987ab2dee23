/* LLM transports, the call wrapper (budget, cost, record hook), prompt templates, context
 * assembly under a token budget and reply parsing.  See docs/llm.md.
 *
 * Layers, bottom up:
 *   struct ks_llm_transport   one chat exchange: http (OpenAI-compatible), cmd, files,
 *                             replay
 *   struct ks_llm             wraps a transport: budget limits, usage counters, price
 *                             table, key redaction and the record hook (run store)
 *   ks_prompt_, ks_context_  templates in prompts/ and their pieces
 *   ks_reply_*                code and JSON extraction from untrusted replies
 *
 * Nothing here prints to stdout; log lines go through ks_log and never carry the key. */
#ifndef KSEARCH_LLM_H
#define KSEARCH_LLM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"

/* ---------------------------------------------------------------- messages, replies */

/* One chat message.  role is "system", "user" or "assistant"; content a C string. */
struct ks_llm_msg {
	const char *role;
	const char *content;
};

/* The answer of one exchange, whichever transport produced it.  Owned by the caller;
 * free the contents with ks_llm_reply_release(). */
struct ks_llm_reply {
	char *content;          /* reply text, NUL-terminated (may hold inner NULs: use len) */
	size_t len;             /* bytes in content */
	char *reasoning;        /* "reasoning_content" when the endpoint sent one, else NULL */
	char *model;            /* model the server says answered, else NULL */
	char *finish_reason;    /* "stop", "length", ... or NULL */
	char *log;              /* cmd transport: the command's stderr (capped), else NULL */
	long prompt_tokens;     /* -1 when the endpoint did not say */
	long completion_tokens; /* -1 when the endpoint did not say */
	double latency_s;       /* wall time of the exchange, retries and waits included */
	double cost_usd;        /* from the price table (ks_llm), 0 when unknown */
	int status;             /* last HTTP status (http), exit status (cmd), 0 (replay) */
	int attempts;           /* requests made (1 without retries) */
};

void ks_llm_reply_release(struct ks_llm_reply *r);

/* Render messages as one text ("### system\n...\n\n### user\n...") for the cmd transport
 * and for records.  The format is stable: replays and run stores compare it. */
int ks_llm_msgs_text(const struct ks_llm_msg *msgs, int nmsg, struct ks_buf *out);

/* ---------------------------------------------------------------- seams */

/* Clock, sleep and randomness used by retries and latency, replaceable in tests
 * (a test swaps the table).  The defaults use CLOCK_MONOTONIC, nanosleep and a seeded xorshift. */
struct ks_llm_sys {
	double (*now)(void);          /* monotonic seconds */
	void (*sleep)(double seconds);
	double (*random)(void);       /* uniform in [0, 1) for backoff jitter */
	time_t (*wall)(void);         /* wall clock, for Retry-After given as an HTTP date */
};

/* the table in use; tests assign members and restore ks_llm_sys_default afterwards */
extern struct ks_llm_sys ks_llm_sys;
extern const struct ks_llm_sys ks_llm_sys_default;

/* ---------------------------------------------------------------- transports */

#define KS_LLM_TRANSPORT_VERSION 1

/* One transport: a struct of function pointers plus its private context.
 * complete() performs one exchange.  purpose ("init", "edit", "action", "debug",
 * "improve", ...) is passed so the replay transport can check that the run asks for the
 * replies in the order they were recorded; http and cmd ignore it.  On failure it
 * returns a negative enum ks_err, sets e and leaves out released. */
struct ks_llm_transport {
	int version;       /* KS_LLM_TRANSPORT_VERSION */
	const char *name;  /* "http", "cmd", "replay" */
	int (*complete)(void *ctx, const char *purpose, const struct ks_llm_msg *msgs, int nmsg,
			struct ks_llm_reply *out, struct ks_error *e);
	/* model name for records (may be NULL) */
	const char *(*model)(void *ctx);
	/* request parameters as a JSON object for records, never holding secrets (may be NULL) */
	int (*params_json)(void *ctx, struct ks_buf *out);
	/* a secret this transport holds (the API key) so ks_llm can redact it (may be NULL) */
	const char *(*secret)(void *ctx);
	void (*close)(void *ctx);
	void *ctx;
};

/* free the transport's context; t may be NULL or already closed */
void ks_llm_transport_close(struct ks_llm_transport *t);

/* --- http: OpenAI-compatible POST {base_url}/chat/completions */

struct ks_llm_http_config {
	const char *base_url;         /* e.g. "https://api.openai.com/v1" (no trailing path) */
	const char *model;            /* "gpt-4.1", "gemini-2.5-pro", "qwen2.5-coder:32b", ... */
	const char *api_key;          /* sent as "Authorization: Bearer KEY"; NULL/"": none */
	double temperature;           /* < 0: not sent */
	long max_tokens;              /* <= 0: not sent */
	const char *max_tokens_field; /* NULL: "max_tokens"; OpenAI reasoning models want
					 "max_completion_tokens" */
	const char *reasoning_effort; /* "low"/"medium"/"high"; NULL: not sent */
	double timeout_s;             /* whole request (default 600) */
	double connect_timeout_s;     /* TCP/TLS connect (default 10) */
	int max_retries;              /* retries after the first attempt (default 5) */
	double backoff_base_s;        /* first backoff (default 1), doubled per retry */
	double backoff_cap_s;         /* largest backoff (default 60) */
	double retry_after_cap_s;     /* largest honoured Retry-After (default 120) */
	size_t max_reply_bytes;       /* response body cap, KS_ELIMIT beyond (default 4 MiB) */
	const char *const *headers;   /* extra "Name: value" headers, NULL-terminated, or NULL */
	int verbose;                  /* debug-log the wire headers (Authorization redacted) */
};

/* fill the defaults above (temperature -1, no key, no headers) */
void ks_llm_http_config_defaults(struct ks_llm_http_config *c);

/* Open an http transport; the strings in cfg are copied.  Errors: KS_EINVAL for a missing
 * base_url/model or a malformed URL. */
int ks_llm_http_open(const struct ks_llm_http_config *cfg, struct ks_llm_transport *t,
		     struct ks_error *e);

/* --- cmd: /bin/sh -c CMD with the prompt on stdin, the reply on stdout */

struct ks_llm_cmd_config {
	const char *command;      /* shell command line */
	const char *label;        /* model name for records (default: "cmd") */
	double timeout_s;         /* kill the process group after this (default 600) */
	size_t max_reply_bytes;   /* stdout cap, KS_ELIMIT beyond (default 4 MiB) */
	size_t max_stderr_bytes;  /* stderr kept for the log (default 64 KiB; the rest dropped) */
};

void ks_llm_cmd_config_defaults(struct ks_llm_cmd_config *c);
int ks_llm_cmd_open(const struct ks_llm_cmd_config *cfg, struct ks_llm_transport *t,
		    struct ks_error *e);

/* --- files: each request written as a numbered file, the reply read from another, so any
 * agent or person who can read and write files is the model (docs/llm.md, --policy files).
 * Request N goes to DIR/NNNN-PURPOSE.prompt.md (the messages as ks_llm_msgs_text writes
 * them); its reply is DIR/NNNN.reply.md, taken once it is non-empty and has held its size
 * for settle_s.  Token counts are unknown (-1). */

struct ks_llm_files_config {
	const char *dir;          /* folder of the exchange files (created, with a README.md) */
	int first;                /* number of the first request (1; a resumed run: the next) */
	double timeout_s;         /* <= 0: wait as long as it takes; else KS_ETIMEOUT */
	double poll_s;            /* how often the reply is looked for (0.2) */
	double settle_s;          /* a reply is read once its size held still this long (0.5) */
	size_t max_reply_bytes;   /* KS_ELIMIT beyond (4 MiB) */
	int (*cancelled)(void *ctx); /* may be NULL; 1: stop waiting (KS_EINTERRUPTED) */
	void *cancel_ctx;
};

void ks_llm_files_config_defaults(struct ks_llm_files_config *c);
int ks_llm_files_open(const struct ks_llm_files_config *cfg, struct ks_llm_transport *t,
		      struct ks_error *e);

/* --- replay: recorded replies served in order */

struct ks_llm_replay_entry {
	const char *purpose;     /* what the recorded call was for; must match the new call */
	const char *content;     /* recorded reply */
	size_t len;              /* bytes in content */
	const char *model;       /* recorded model (may be NULL) */
	long prompt_tokens;      /* recorded usage (-1 unknown) */
	long completion_tokens;
	int status;              /* 0, or the recorded failure: replayed as that error */
	const char *error;       /* recorded error message when status != 0 (may be NULL) */
};

/* Copies the entries.  Asking for more replies than recorded fails with KS_ENOTFOUND;
 * asking for a different purpose than the next recorded one fails with KS_EPROTO. */
int ks_llm_replay_open(const struct ks_llm_replay_entry *entries, int n,
		       struct ks_llm_transport *t, struct ks_error *e);

/* ---------------------------------------------------------------- prices */

struct ks_llm_price {
	char *model;         /* exact model name, or a prefix ending in '*' ("gpt-4.1*") */
	double input_per_m;  /* USD per million prompt tokens */
	double output_per_m; /* USD per million completion tokens */
};

struct ks_llm_prices {
	struct ks_llm_price *v;
	int n;
};

/* Load {"gpt-4.1": {"input": 2.0, "output": 8.0}, "gemini-*": {...}} from a JSON file. */
int ks_llm_prices_load(const char *path, struct ks_llm_prices *out, struct ks_error *e);
int ks_llm_prices_add(struct ks_llm_prices *p, const char *model, double in_per_m,
		      double out_per_m);
/* cost of a call; 0 (and *known = 0) when the model is not in the table or usage unknown */
double ks_llm_prices_cost(const struct ks_llm_prices *p, const char *model, long prompt_tokens,
			  long completion_tokens, int *known);
void ks_llm_prices_release(struct ks_llm_prices *p);

/* ---------------------------------------------------------------- client */

/* What the record hook receives after every exchange, successful or not.  Every string
 * has been redacted: each secret is replaced by "[REDACTED]".  Valid during the call. */
struct ks_llm_exchange {
	int seq;                  /* 0, 1, 2, ... per client */
	const char *purpose;
	const char *transport;    /* "http", "cmd", "replay" */
	const char *model;
	const char *params_json;  /* request parameters (no key), "{}" when none */
	const char *prompt;       /* all messages as text (ks_llm_msgs_text) */
	const char *reply;        /* reply content, "" on failure */
	size_t reply_len;
	const char *reasoning;    /* NULL when none */
	const char *log;          /* cmd stderr, NULL when none */
	long prompt_tokens;       /* -1 unknown */
	long completion_tokens;   /* -1 unknown */
	double latency_s;
	double cost_usd;
	int cost_known;           /* 0: the model has no price or usage is unknown */
	int status;               /* 0 or the negative enum ks_err of the failure */
	int wire_status;          /* HTTP status / exit status / 0 */
	int attempts;
	const char *error;        /* failure message, NULL on success */
};

typedef void (*ks_llm_record_fn)(const struct ks_llm_exchange *x, void *ctx);

/* status of an exchange as a word for the run store: "ok", "timeout", "too_large",
 * "parse_error", "http_error", "budget", "replay_mismatch", "replay_exhausted", "error" */
const char *ks_llm_status_text(int status);
/* the inverse (for loading replays): a code for each word, KS_EIO for "error" and for
 * anything unknown, 0 for "ok" */
int ks_llm_status_parse(const char *text);

/* Running totals (calls that failed count too: they may have cost money). */
struct ks_llm_usage {
	long calls;
	long failures;
	long prompt_tokens;       /* sums over the calls that reported them */
	long completion_tokens;
	long tokens_unknown;      /* calls that reported no token counts (cmd, files) */
	double cost_usd;
	double latency_s;
};

struct ks_llm_limits {
	long max_calls;   /* <= 0: unlimited */
	double max_cost;  /* USD; <= 0: unlimited */
	long max_tokens;  /* prompt + completion; <= 0: unlimited */
};

struct ks_llm {
	struct ks_llm_transport *transport; /* not owned */
	struct ks_llm_limits limits;
	const struct ks_llm_prices *prices; /* not owned, may be NULL */
	ks_llm_record_fn record;            /* may be NULL */
	void *record_ctx;
	struct ks_llm_usage usage;
	int in_flight;                      /* calls started, not finished (count to limits) */
	int next_seq;                       /* seq of the next exchange */
	pthread_mutex_t lock;               /* guards usage, in_flight, next_seq, record */
};

/* Bind a client to a transport.  The transport's secret (if any) and the values of
 * $KSEARCH_API_KEY and $OPENAI_API_KEY are registered for redaction in the process's one
 * secret registry (ksearch/secret.h). */
void ks_llm_init(struct ks_llm *c, struct ks_llm_transport *t);
void ks_llm_release(struct ks_llm *c);

/* One exchange through the transport with budget checks, usage counting, cost and the
 * record hook.  Safe to call from several threads at once when the transport is (http,
 * cmd: yes; replay: one caller, since order matters); calls in flight count against
 * max_calls, and the record hook runs under the client's lock, one exchange at a time.  Fails with KS_EBUDGET before calling the transport when max_calls,
 * max_cost or max_tokens is already reached; otherwise returns the transport's result.
 * The error message in e is redacted too. */
int ks_llm_complete(struct ks_llm *c, const char *purpose, const struct ks_llm_msg *msgs,
		    int nmsg, struct ks_llm_reply *out, struct ks_error *e);

/* ---------------------------------------------------------------- prompt templates */

/* A template variable.  Templates use {{name}} (name: [A-Za-z_][A-Za-z0-9_]*); rendering
 * fails on a placeholder with no variable.  Other braces are literal text, so JSON
 * examples in templates need no escaping. */
struct ks_prompt_var {
	const char *name;
	const char *value;
};

/* Render tmpl into out.  what names the template in errors ("action.txt"). */
int ks_prompt_render(const char *what, const char *tmpl, const struct ks_prompt_var *vars,
		     int nvars, struct ks_buf *out, struct ks_error *e);
/* Load prompts/<name> from dir (NULL: <ks_data_root()>/prompts) into out (cap 256 KiB). */
int ks_prompt_load(const char *dir, const char *name, struct ks_buf *out, struct ks_error *e);
/* load + render */
int ks_prompt_render_file(const char *dir, const char *name, const struct ks_prompt_var *vars,
			  int nvars, struct ks_buf *out, struct ks_error *e);

/* ---------------------------------------------------------------- context under budget */

/* Named pieces of a prompt with priorities.  When the whole does not fit the token
 * budget (tokens ~ bytes/4) pieces are shortened or dropped whole, lowest priority
 * first: a piece with a short form switches to it, a list piece drops its oldest entries
 * down to keep_min, then the piece is dropped.  Required pieces are never shortened or
 * dropped.  Text is never cut, so a JSON document or code block stays whole. */
struct ks_context_piece {
	const char *name;       /* template variable name ("parent_code") */
	const char *text;       /* full form (for a list piece: a header, may be NULL) */
	const char *short_text; /* shorter form (tree summary: open actions + best), or NULL */
	const char *const *entries; /* list piece: entries oldest first (feedback), or NULL */
	int nentries;
	int keep_min;           /* list piece: entries never dropped (the newest ones) */
	int priority;           /* higher survives longer */
	int required;           /* never shortened or dropped */
	int optional_section;   /* ks_llm_prompt_build: when the piece is empty, its section is
				   left out (the "## " heading right above the placeholder's line
				   and that line), not shown empty */
};

/* Suggested priorities, so every prompt gives way in the same order: feedback and
 * translation context are summarized or dropped first, the task never. */
#define KS_CONTEXT_PRIO_TASK 100       /* summary, prototype, tolerance (required) */
#define KS_CONTEXT_PRIO_CODE 90        /* parent / candidate / best code */
#define KS_CONTEXT_PRIO_ACTION 85      /* the action being implemented */
#define KS_CONTEXT_PRIO_HARDWARE 70    /* spec: limits, bandwidth, primitives */
#define KS_CONTEXT_PRIO_FEEDBACK 60    /* per-workload results, newest kept (keep_min) */
#define KS_CONTEXT_PRIO_TREE 50        /* whole tree; short form: open + best closed */
#define KS_CONTEXT_PRIO_TRANSLATION 40 /* CUDA -> target mapping and hints */

enum ks_context_form {
	KS_CONTEXT_FORM_FULL,
	KS_CONTEXT_FORM_SHORT,
	KS_CONTEXT_FORM_DROPPED,
};

struct ks_context {
	struct ks_context_piece *pieces; /* copies of the caller's structs (strings borrowed) */
	int n;
	enum ks_context_form *form;      /* per piece after ks_context_fit */
	int *kept;                       /* list pieces: newest entries kept */
	char **rendered;                 /* per piece, the text given to the template */
	long tokens;                     /* estimate after fitting */
	const char *omitted_note;        /* text for a dropped piece (default below) */
};

#define KS_CONTEXT_OMITTED "(omitted to fit the context budget)"

/* tokens estimate of a text: ceil(bytes / 4) */
long ks_context_estimate(size_t bytes);
int ks_context_init(struct ks_context *c, const struct ks_context_piece *pieces, int n,
		    struct ks_error *e);
void ks_context_release(struct ks_context *c);
/* Decide each piece's form so pieces + reserve_tokens (template text, reply room) fit
 * budget_tokens.  KS_ELIMIT when even the required pieces do not fit. */
int ks_context_fit(struct ks_context *c, long budget_tokens, long reserve_tokens,
		   struct ks_error *e);
/* the text of piece i after fitting ("" + note when dropped) */
const char *ks_context_text(const struct ks_context *c, int i);
/* the pieces as template variables: vars must hold c->n entries */
void ks_context_vars(const struct ks_context *c, struct ks_prompt_var *vars);

/* ---------------------------------------------------------------- whole prompts */

/* Everything one request needs: the templates, the context pieces and the small fixed
 * values.  Placeholders of a template are filled from vars and from the pieces by name. */
struct ks_llm_prompt {
	const char *dir;                        /* --prompts DIR, NULL: <data root>/prompts */
	const char *purpose;                    /* template "<purpose>.txt": init, edit, ... */
	const struct ks_context_piece *pieces;  /* fitted to the budget */
	int npieces;
	const struct ks_prompt_var *vars;       /* backend, language, node_id, max_new_nodes */
	int nvars;
	long budget_tokens;                     /* prompt budget (context window minus the
						   reply's room); <= 0: unlimited */
};

/* Render system.txt into system and <purpose>.txt into user with the pieces fitted so the
 * two together stay within the budget (template text and vars are reserved first).
 * ctx_out (may be NULL) gets the fitting decisions for logging; release it after. */
int ks_llm_prompt_build(const struct ks_llm_prompt *p, struct ks_buf *system,
			struct ks_buf *user, struct ks_context *ctx_out, struct ks_error *e);

/* ---------------------------------------------------------------- reply parsing */

/* Extract the code of a reply: the fenced block (```c, ```cuda, ```cpp, ```metal, bare
 * ```) whose language matches lang (NULL: any code language), the longest when several
 * do.  lang_out (16 bytes, may be NULL) gets the fence's language ("" for bare).
 * Errors (KS_EPARSE): "reply has no code block", "reply has an unterminated code fence
 * at line N". */
int ks_reply_code(const char *reply, size_t len, const char *lang, struct ks_buf *code,
		  char *lang_out, struct ks_error *e);

/* Extract a JSON value (want '{' object, '[' array, 0 either) from a ```json block or
 * bare text (balanced-bracket scan respecting strings and escapes), validated.  out gets
 * the JSON text.  Errors (KS_EPARSE): "reply has no JSON object",
 * "reply JSON invalid at line 3 col 5: ..." (lines of the reply). */
int ks_reply_json(const char *reply, size_t len, int want, struct ks_buf *out,
		  struct ks_error *e);

/* The text of a reflection note: the line starting with "TAG:" (markdown decoration such as
 * "- ", "**", "#" allowed) up to the next tagged line, blank line or fence.  KS_ENOTFOUND
 * when the reply has none.  Tags of the edit prompt: CURRENT, FOLLOW_THROUGH,
 * UPDATE_BELIEF, PERF_GAP. */
int ks_reply_note(const char *reply, size_t len, const char *tag, struct ks_buf *out);

/* Build the correction prompt of a bounded retry:
 * "Your previous reply could not be used: PROBLEM.\nReply again with EXPECT. ..." */
int ks_reply_correction(const char *problem, const char *expect, struct ks_buf *out);

/* ---------------------------------------------------------------- ask with corrections */

enum ks_llm_want {
	KS_LLM_WANT_TEXT,        /* any non-empty reply */
	KS_LLM_WANT_CODE,        /* one fenced code block (ks_reply_code) */
	KS_LLM_WANT_JSON_OBJECT, /* a JSON object (ks_reply_json '{') */
	KS_LLM_WANT_JSON_ARRAY,  /* a JSON array (ks_reply_json '[') */
	KS_LLM_WANT_JSON,        /* a JSON object or array (edit scripts come as either) */
};

struct ks_llm_ask {
	const char *purpose; /* "init", "edit", "action", "debug", "improve" */
	const char *system;  /* system message or NULL */
	const char *user;    /* the rendered prompt */
	enum ks_llm_want want;
	const char *lang;    /* KS_LLM_WANT_CODE: "c", "cuda", "metal" (NULL: any) */
	int max_fixes;       /* correction rounds after an unusable reply (0: none) */
	size_t max_code;     /* KS_LLM_WANT_CODE: a larger code block is an unusable reply
				(told to the model like any other); 0: no limit */
	/* optional: told of every unusable reply, the corrected ones included (purpose is the
	 * round's: "edit" or "edit-fix"; why the parser's reason) */
	void (*unusable)(void *ctx, const char *purpose, const char *why);
	void *unusable_ctx;
};

/* What ks_llm_ask takes from one reply r to q: the code block of q's language, the JSON or
 * the text q wants, into out; KS_EPARSE (with the reason told to the model) when r holds
 * none.  `ksearch prompt --reply` shows what a run takes from a recorded reply with it. */
int ks_llm_ask_extract(const struct ks_llm_ask *q, const struct ks_llm_reply *r,
		       struct ks_buf *out, struct ks_error *e);

/* Ask, parse, and on an unusable reply ask again (up to max_fixes times) with the reply
 * and a correction prompt appended to the conversation.  A correction round is its own
 * exchange with purpose "<purpose>-fix" and a user message starting "PURPOSE:
 * <purpose>-fix", so records, replays and the fake server see it.  out gets the extracted
 * code / JSON / text; reply (may be NULL) gets the raw reply it came from (reflection
 * notes, reasoning, tokens), on KS_EPARSE the last unusable one (a kernel may sit beside
 * broken JSON); free it with ks_llm_reply_release().  Returns KS_EPARSE with the last parse
 * error when no reply was usable;
 * transport and budget errors end at once. */
int ks_llm_ask(struct ks_llm *c, const struct ks_llm_ask *q, struct ks_buf *out,
	       struct ks_llm_reply *reply, struct ks_error *e);

#endif
