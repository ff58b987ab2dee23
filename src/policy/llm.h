/* The llm, cmd and files policies' connection to a model: the transport chosen from the
 * run's options (http, cmd, files, or a replay of a recorded run), the client with its
 * budgets and price table, and the record hook that writes every exchange to the run store.
 *
 * Replay: --llm-replay DIR serves DIR's recorded replies in order.  A resumed run first
 * serves its own recorded replies (so the loop retraces its path without calling the
 * model) and then continues with the live transport; the exchanges already in the store
 * are not recorded twice.
 *
 * A model that cannot be reached at all is an infrastructure fault, not an unusable reply:
 * the live transport's failure comes back as KS_EUNAVAILABLE when the endpoint has not
 * answered once in this process (http) or the shell could not run the command (cmd, exit
 * status 126 or 127). */
#ifndef KS_POLICY_LLM_H
#define KS_POLICY_LLM_H

#include "ksearch/llm.h"
#include "ksearch/run_opts.h"
#include "ksearch/store.h"

/* who answers: an OpenAI-compatible endpoint, a command, or whoever writes reply files */
enum ks_llm_kind { KS_LLM_HTTP, KS_LLM_CMD, KS_LLM_FILES };

struct ks_llm_policy {
	struct ks_llm client;             /* what the search loop calls */
	struct ks_llm_transport live;     /* http or cmd (name NULL when unused) */
	struct ks_llm_transport replay;   /* recorded replies (name NULL when unused) */
	struct ks_llm_transport chain;    /* live runs: recorded replies (resume), then live */
	struct ks_llm_prices prices;
	struct ks_store *store;           /* not owned */
	const int *round;                 /* the run's round counter, for records */
	int skip_records;                 /* exchanges with seq below this are already stored */
	char **purposes;                  /* purpose of each recorded reply being replayed */
	int npurposes;
	int replay_left;                  /* chain: recorded replies not served yet */
	int chain_live;                   /* chain: a live transport follows the replay */
	enum ks_llm_kind kind;            /* the live transport */
	int live_answered;                /* the live transport has given one reply */
};

/* Check the option combination: llm needs a base URL and a model, cmd a command, unless
 * the run replays another run.  KS_EINVAL with a message naming the missing option. */
int ks_llm_policy_check(const struct ks_run_opts *o, enum ks_llm_kind kind, struct ks_error *e);

struct ks_llm_policy_cfg {
	const struct ks_run_opts *o;
	enum ks_llm_kind kind;
	struct ks_store *store;
	int resumed;                      /* the store already holds this run's exchanges */
	const int *round;                 /* the run's round counter, for records */
	const char *run_dir;              /* files: prompts and replies in RUN_DIR/llm */
	int (*cancelled)(void *ctx);      /* files: stop waiting (Ctrl-C) */
	void *cancel_ctx;
};

/* Set p up for a run (p must stay at its address until closed).  KS_EINVAL when
 * --llm-replay names a run without recorded exchanges; warns once when no API key is set
 * for an endpoint on another machine. */
int ks_llm_policy_open(struct ks_llm_policy *p, const struct ks_llm_policy_cfg *cfg,
		       struct ks_error *e);
void ks_llm_policy_close(struct ks_llm_policy *p);

/* While recorded replies are being served: the purpose of the next one ("improve",
 * "edit", ...), so the loop takes the recorded path where the path depends on noisy
 * timings; NULL when the next reply comes from a live model or nothing is left. */
const char *ks_llm_policy_peek(const struct ks_llm_policy *p);

/* Load the exchanges recorded in store (a resumed run's own) into p->replay and
 * p->purposes; *count gets their number (llm_replay.c). */
int ks_llm_replay_load(struct ks_llm_policy *p, struct ks_store *store, int *count,
		       struct ks_error *e);
/* The same from --llm-replay DIR: a run folder (its run.db) or a replay fixture folder
 * (DIR/exchanges.jsonl: one JSON object per line with the store's field names purpose,
 * status, reply, error, model, prompt, prompt_tokens, completion_tokens). */
int ks_llm_replay_load_dir(struct ks_llm_policy *p, const char *dir, int *count,
			   struct ks_error *e);

/* the purpose as the run store spells it: correction rounds ("edit-fix") are "repair" */
const char *ks_llm_policy_store_purpose(const char *purpose);

#endif
