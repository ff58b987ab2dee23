/* ksearch run TASK: the main job — a K-Search over the task's optimization actions. */
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "ksearch/strategy.h"
#include "ksearch/suggest.h"
#include "ksearch/backend.h"
#include "ksearch/log.h"
#include "ksearch/policy.h"
#include "ksearch/run.h"
#include "ksearch/secret.h"
#include "ksearch/store.h"
#include "ksearch/task.h"
#include "util/env.h"
#include "util/units.h"

static const char usage[] = "ksearch run TASK [options]";
static const char about[] =
	"Search for a faster kernel for TASK (a shipped task name or a task folder).\n"
	"The built-in policy explores the task's knob templates as a K-Search world model:\n"
	"families are first actions, knob moves refine the best nodes, and every measured\n"
	"effect updates the tree.  Each candidate is compiled (in parallel), checked on\n"
	"several seeds and timed against the baseline (one at a time, on quiet cores), and\n"
	"committed to DIR/run.db as it completes.  At the end the top candidates are\n"
	"re-measured, interleaved with the baseline; the best goes to DIR/best.<ext> and\n"
	"DIR/report.md / report.html tell the story.\n\n"
	"With --policy llm an OpenAI-compatible model (--llm-base-url, --llm-model; key from\n"
	"KSEARCH_API_KEY, else OPENAI_API_KEY) builds the world model, writes, debugs and\n"
	"improves the kernels and edits the tree from the measurements; --policy cmd asks a\n"
	"command instead (--llm-cmd); --policy files writes each prompt to\n"
	"DIR/llm/NNNN-PURPOSE.prompt.md and waits for DIR/llm/NNNN.reply.md, so an agent or a\n"
	"person with no API is the model ('ksearch prompt' shows what the prompts hold).\n"
	"Every exchange is recorded in run.db; --llm-replay DIR reproduces a recorded run\n"
	"without a model (docs/llm.md).\n\n"
	"Stop with Ctrl-C (the run is finalised: the best so far goes to DIR/best.<ext> on its\n"
	"search-phase figure, not re-measured); continue later with --resume DIR.\n"
	"Exit status: 0 the run completed (see the report for what it found), 130 it was\n"
	"stopped by Ctrl-C (143: SIGTERM) after saving what it had, 2 usage or infrastructure\n"
	"error.";

#define ETA_WINDOW 10

struct status_line {
	int tty;
	int last_len;
	/* when each of the last finished candidates finished (elapsed seconds), for the ETA */
	double done_at[ETA_WINDOW + 1];
	int done_n, done_evaluated;
};

static void fmt_dur(char *dst, size_t n, double s)
{
	if (s < 0 || !(s < 1e7))
		snprintf(dst, n, "?");
	else if (s >= 3600)
		snprintf(dst, n, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
	else
		snprintf(dst, n, "%dm%02ds", (int)s / 60, (int)s % 60);
}

/* Seconds left in the search: the rate over the last few finished candidates, leaving out
 * the first one (it also paid for the first compile round and the baseline's timing, so
 * it would make the first estimate a multiple of the real one).  -1 until three candidates
 * have finished in this process (two intervals span a compile round). */
static double eta_estimate(struct status_line *sl, const struct ks_run_progress *p)
{
	if (p->finished && p->evaluated != sl->done_evaluated) {
		sl->done_evaluated = p->evaluated;
		if (sl->done_n == ETA_WINDOW + 1) {
			memmove(sl->done_at, sl->done_at + 1, sizeof(double) * ETA_WINDOW);
			sl->done_n--;
		}
		sl->done_at[sl->done_n++] = p->elapsed_s;
	}
	int left = p->budget - p->evaluated;
	if (left <= 0 || sl->done_n < 3)
		return -1;
	double per = (sl->done_at[sl->done_n - 1] - sl->done_at[0]) / (sl->done_n - 1);
	return per * left;
}

static int term_width(void)
{
	struct winsize ws;
	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	const char *c = ks_env_get()->columns;
	int w = c ? atoi(c) : 0;
	return w >= 20 && w <= 1000 ? w : 80;
}

/* at most max bytes of s, never ending inside a UTF-8 sequence */
static int utf8_cut(const char *s, int len, int max)
{
	if (len <= max)
		return len;
	while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	return max;
}

static void on_progress(const struct ks_run_progress *p, void *ctx)
{
	struct status_line *sl = ctx;
	char eta[32], elapsed[32];
	fmt_dur(eta, sizeof(eta), eta_estimate(sl, p));
	fmt_dur(elapsed, sizeof(elapsed), p->elapsed_s);
	char best[32] = "-";
	if (p->best_speedup > 0)
		snprintf(best, sizeof(best), "%.2fx", p->best_speedup);
	char line[512];
	int n;
	if (!strcmp(p->phase, "search"))
		n = snprintf(line, sizeof(line), "[%d/%d] %s | best %s | failures %d | ETA %s | %s",
			     p->evaluated, p->budget, elapsed, best, p->failed, eta,
			     p->action ? p->action : "");
	else
		n = snprintf(line, sizeof(line), "[%s] %s | %s", p->phase, elapsed,
			     p->action ? p->action : "");
	if (n < 0)
		return;
	if (n >= (int)sizeof(line))
		n = (int)sizeof(line) - 1;
	if (sl->tty) {
		/* one line that never wraps: a wrapped line cannot be rewritten with \r */
		n = utf8_cut(line, n, term_width() - 1);
		fprintf(stderr, "\r%.*s%*s", n, line, sl->last_len > n ? sl->last_len - n : 0, "");
		sl->last_len = n;
	} else if (strcmp(p->phase, "search") || p->finished) {
		/* plain log lines: one per finished candidate and per phase change */
		if (p->finished)
			fprintf(stderr, "%.*s -> %s\n", n, line, p->last_status ? p->last_status : "?");
		else
			fprintf(stderr, "%.*s\n", n, line);
	}
	fflush(stderr);
}

static struct status_line *log_line_owner;

static void log_sink(enum ks_log_level level, const char *line, void *ctx)
{
	static const char *tag[] = {"debug: ", "", "warning: ", "error: "};
	struct status_line *sl = log_line_owner;
	if (sl && sl->tty && sl->last_len) {
		fprintf(stderr, "\r%*s\r", sl->last_len, "");
		sl->last_len = 0;
	}
	struct ks_buf safe = KS_BUF_INIT; /* never a key on the terminal */
	if (ks_redact(line, &safe) == 0)
		line = ks_buf_str(&safe);
	fprintf(stderr, "%s%s\n", tag[level], line);
	ks_buf_release(&safe);
}

/* the signal that asked the run to stop (0: none) */
static volatile sig_atomic_t stop_signal;

static void on_sigint(int sig)
{
	stop_signal = sig;
	ks_run_request_stop();
}

static int one_of(const char *v, const char *const *words)
{
	for (; *words; words++)
		if (!strcmp(v, *words))
			return 1;
	return 0;
}

/* the registered backends, "cpu, cuda, mlx" (those built into this ksearch) */
static const char *backend_names(void)
{
	static char names[128];
	names[0] = '\0';
	const struct ks_backend_i *const *bs = ks_backend_list();
	for (int i = 0; bs[i]; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
			 bs[i]->name);
	return names;
}

/* "; did you mean 'x'?" for a near miss among names (NULL-terminated), else "" */
static const char *did_you_mean(const char *word, const char *const *names)
{
	static char out[96];
	const char *near = ks_suggest(word, names, -1);
	out[0] = '\0';
	if (near)
		snprintf(out, sizeof(out), "; did you mean '%s'?", near);
	return out;
}

static const char *did_you_mean_backend(const char *word)
{
	const char *names[16];
	int n = 0;
	const struct ks_backend_i *const *bs = ks_backend_list();
	for (int i = 0; bs[i] && n < 15; i++)
		names[n++] = bs[i]->name;
	names[n] = NULL;
	return did_you_mean(word, names);
}

/* --out DIR: ksearch writes run.db, report.md, best.<ext> ... into DIR, so a folder that
 * holds other files and no run (the user's report.md, say) is refused, never written over.
 * A new or empty folder, or one holding a run (which open_store refuses or starts again
 * with its own message), is fine.  NULL, or the reason. */
static const char *out_dir_refusal(const char *dir)
{
	static const char *const store[] = {"run.db", "run.db-wal", "run.db-shm", "run.db-journal",
					    "run.lock", NULL};
	static char msg[PATH_MAX + 512];
	DIR *d = opendir(dir);
	if (!d)
		return NULL; /* absent, or not a folder: creating it says why */
	char other[NAME_MAX + 1] = "";
	int run = 0, n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (one_of(de->d_name, store))
			run |= !strcmp(de->d_name, "run.db");
		else if (n++ == 0)
			snprintf(other, sizeof(other), "%s", de->d_name);
	}
	closedir(d);
	if (run || !n)
		return NULL;
	snprintf(msg, sizeof(msg),
		 "--out '%s' holds %d file%s that are not a run ('%s'%s): a run writes run.db, "
		 "report.md, best.<ext> and more there and would overwrite them; choose a new or "
		 "empty folder (or --resume a run's own folder)",
		 dir, n, n == 1 ? "" : "s", other, n > 1 ? ", ..." : "");
	return msg;
}

static const char *run_usage_error(const struct ks_run_opts *o)
{
	static char msg[512];
	struct ks_error se = {0};
	if (o->strategy && !ks_strategy_find(o->strategy) && ks_strategy_unknown(o->strategy, &se))
		snprintf(msg, sizeof(msg), "--strategy: %s", se.msg);
	else if (o->backend && !ks_backend_find(o->backend))
		snprintf(msg, sizeof(msg), "unknown --backend '%s' (built here: %s)%s", o->backend,
			 backend_names(), did_you_mean_backend(o->backend));
	else if (o->devices && (!o->devices[0] || strspn(o->devices, "0123456789,") != strlen(o->devices)))
		snprintf(msg, sizeof(msg), "--devices expects device numbers like 0,1; got '%s'",
			 o->devices);
	else if (o->llm_base_url && strncmp(o->llm_base_url, "http://", 7) &&
		 strncmp(o->llm_base_url, "https://", 8))
		snprintf(msg, sizeof(msg), "--llm-base-url must start with http:// or https://, got '%s'",
			 o->llm_base_url);
	else
		return o->out_dir && !o->resume_dir ? out_dir_refusal(o->out_dir) : NULL;
	return msg;
}

/* ---- the command line --------------------------------------------------------------- */

static const char *const policies[] = {"builtin", "llm", "cmd", "files", NULL};
static const char *const contexts[] = {"none", "spec", "full", NULL};

/* what the command line sets: the run's options, and what only this command reads */
static struct run_cli {
	struct ks_run_opts o;
	int seed, llm_max_calls, llm_max_tokens, json, verbose;
	uint64_t given; /* bit i: opts[i] was on the command line */
} cli;

static const struct ks_opt opts[] = {
	KS_OPT_STR("backend", &cli.o.backend, "B", "where kernels run: cpu (default), cuda or mlx"),
	KS_OPT_STR("strategy", &cli.o.strategy, "S",
		   "wm (world model, default), evolve, random, exhaustive (every configuration "
		   "once, small spaces), anneal (simulated annealing, the classical autotuner)"),
	KS_OPT_ENUM("policy", &cli.o.policy, policies, "P",
		    "who proposes and writes code: builtin (default), llm, cmd, files"),
	KS_OPT_STR("llm-base-url", &cli.o.llm_base_url, "URL",
		   "llm: OpenAI-compatible endpoint (https://api.openai.com/v1)"),
	KS_OPT_STR("llm-model", &cli.o.llm_model, "NAME", "llm: model name"),
	KS_OPT_STR("llm-cmd", &cli.o.llm_cmd, "CMD", "cmd: command, prompt on stdin, reply on stdout"),
	KS_OPT_STR("llm-replay", &cli.o.llm_replay, "RUN_DIR",
		   "replay that run's recorded replies instead of asking a model"),
	KS_OPT_INT("llm-max-calls", &cli.llm_max_calls, 0, 1e9, "N", "stop asking after N exchanges"),
	KS_OPT_INT("llm-max-failures", &cli.o.llm_max_failures, 0, 1e6, "N",
		   "stop after N model replies in a row that give nothing new (8)"),
	KS_OPT_DOUBLE("llm-max-cost", &cli.o.llm_max_cost, 0, 1e9, "USD",
		      "stop asking at this cost (needs --llm-prices)"),
	KS_OPT_DOUBLE("llm-temperature", &cli.o.llm_temperature, 0, 2, "X",
		      "sampling temperature (0 to 2)"),
	KS_OPT_INT("llm-max-tokens", &cli.llm_max_tokens, 0, 1e9, "N", "reply length limit"),
	KS_OPT_STR("llm-reasoning-effort", &cli.o.llm_reasoning_effort, "E",
		   "low, medium or high (models that take it)"),
	KS_OPT_DURATION("llm-timeout", &cli.o.llm_timeout_s, 0.001, INFINITY, "S",
			"limit per model request (600s; files: none unless given)"),
	KS_OPT_STR("llm-prices", &cli.o.llm_prices, "FILE", "price table (USD per million tokens)"),
	KS_OPT_STR("prompts", &cli.o.prompts_dir, "DIR", "prompt templates (<data root>/prompts)"),
	KS_OPT_ENUM("context", &cli.o.context, contexts, "LEVEL",
		    "what the prompts add: none, spec, full (default)"),
	KS_OPT_INT("budget", &cli.o.budget, 1, 1e6, "N", "candidates to evaluate in total (40)"),
	KS_OPT_DURATION("time-limit", &cli.o.time_limit_s, 0, INFINITY, "DURATION",
			"stop proposing after this long, e.g. 30m (none)"),
	KS_OPT_INT("seed", &cli.seed, 0, 2147483647, "S", "same seed, same proposals (1)"),
	KS_OPT_STR("out", &cli.o.out_dir, "DIR",
		   "run folder (runs/<task>-<time>): new, empty, or a start to redo; never one "
		   "holding other files"),
	KS_OPT_STR("resume", &cli.o.resume_dir, "DIR",
		   "continue an interrupted run to its budget (with --devices or --worker-cmd again "
		   "to evaluate on workers: where it runs is not part of the run)"),
	KS_OPT_FLAG("fresh", &cli.o.fresh,
		    "evaluate every candidate: no result of an earlier run "
		    "($KSEARCH_CACHE/results/results.sqlite)"),
	KS_OPT_INT("jobs", &cli.o.jobs, 1, 256, "N",
		   "proposals compiled in parallel per round (2; device backends such as cuda: "
		   "half the cores, 2 to 8)"),
	KS_OPT_STR("spec", &cli.o.spec, "NAME|auto", "hardware spec (auto: the host, or the local GPU)"),
	KS_OPT_INT("top", &cli.o.final_top, 0, KS_RUN_MAX_TOP, "N",
		   "candidates re-measured at the end (3; 0 to 16, 0: none, the search's figures stand)"),
	KS_OPT_DURATION("timeout", &cli.o.eval.timeout_s, 0.001, INFINITY, "S",
			"limit per kernel call or timing block (60s)"),
	KS_OPT_SIZE("memory-limit", &cli.o.eval.memory_limit, "SIZE",
		    "memory a kernel may allocate (2G)"),
	KS_OPT_DURATION("min-time", &cli.o.eval.min_time_s, 0, INFINITY, "S",
			"timing floor per candidate (0.1s)"),
	KS_OPT_STR("workloads", &cli.o.eval.workloads, "all|N,..",
		   "tune for these timed workloads only (indexes as 'tasks show' lists them)"),
	KS_OPT_INT("threads", &cli.o.eval.threads, 0, 4096, "N",
		   "OMP_NUM_THREADS for kernels (OPENBLAS_NUM_THREADS for the library too)"),
	KS_OPT_STR("cflags", &cli.o.eval.cflags, "FLAGS", "compiler flags"),
	KS_OPT_FLAG("json", &cli.json, "print one JSON object at the end"),
	KS_OPT_FLAG("verbose", &cli.verbose, "log more"),
	KS_OPT_STR("devices", &cli.o.devices, "0,1,..",
		   "evaluate on one 'ksearch worker' per device, a batch at a time"),
	KS_OPT_STR("worker-cmd", &cli.o.worker_cmd, "CMD",
		   "start workers with this shell command ({device}: the number)"),
	KS_OPT_END,
};

/* An option only a policy that asks a model reads (--llm-*, --prompts, --context), given
 * with one that asks none (builtin): a usage error, not an option ignored without a word.
 * NULL when there is none. */
static const char *model_option_error(const char *policy)
{
	static char msg[256];
	if (ks_policy_uses_model(policy))
		return NULL;
	for (int i = 0; opts[i].name; i++) {
		const char *n = opts[i].name;
		if ((strncmp(n, "llm-", 4) && strcmp(n, "prompts") && strcmp(n, "context")) ||
		    !(cli.given >> i & 1))
			continue;
		const char *needs = "llm, cmd or files";
		if (!strcmp(n, "llm-cmd"))
			needs = "cmd";
		else if (!strcmp(n, "llm-base-url") || !strcmp(n, "llm-model"))
			needs = "llm";
		snprintf(msg, sizeof(msg), "--%s needs --policy %s (the %s policy asks no model)", n,
			 needs, policy);
		return msg;
	}
	return NULL;
}

/* argv into cli: -1 usage error (said), 1 --help (shown), 0 */
static int run_parse(int argc, char **argv)
{
	struct ks_run_opts *o = &cli.o;
	ks_run_opts_init(o);
	cli.seed = (int)o->seed;
	const char *pos[1];
	int npos = 0;
	int rc = ks_opts_parse(argc, argv, opts, usage, about, pos, 1, &npos, &cli.given);
	if (rc)
		return rc;
	if (npos != 1 && !o->resume_dir) {
		fprintf(stderr, "ksearch run: needs a TASK (see 'ksearch tasks list')\nusage: %s\n",
			usage);
		return -1;
	}
	o->task = npos ? pos[0] : NULL;
	/* which options were given: a resumed run refuses ones that differ from its own */
	static const struct {
		const char *name;
		unsigned bit;
	} given[] = {{"budget", KS_RUN_GIVEN_BUDGET}, {"backend", KS_RUN_GIVEN_BACKEND},
		     {"strategy", KS_RUN_GIVEN_STRATEGY}, {"policy", KS_RUN_GIVEN_POLICY},
		     {"out", KS_RUN_GIVEN_OUT}};
	o->given = npos ? KS_RUN_GIVEN_TASK : 0;
	for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); i++)
		o->given |= ks_opt_given(opts, cli.given, given[i].name) ? given[i].bit : 0;
	o->seed = (uint64_t)cli.seed;
	o->llm_max_calls = cli.llm_max_calls;
	o->llm_max_tokens = cli.llm_max_tokens;
	/* the key comes from the environment only, and is redacted from everything printed */
	o->llm_api_key = ks_env_get()->api_key;
	if (!o->llm_api_key || !o->llm_api_key[0])
		o->llm_api_key = ks_env_get()->openai_api_key;
	if (o->llm_api_key && o->llm_api_key[0])
		ks_secret_add(o->llm_api_key);
	return 0;
}

/* everything checked before a run folder or database exists: said, and -1 */
static int run_refusal(const struct ks_run_opts *o)
{
	const char *bad = run_usage_error(o);
	if (!bad && !o->resume_dir) /* a resumed run's options are its own */
		bad = model_option_error(o->policy);
	if (bad) {
		fprintf(stderr, "ksearch run: %s\n", bad);
		return -1;
	}
	struct ks_error e = {0};
	if (o->task && !o->resume_dir) {
		struct ks_task *t = NULL;
		int rc = ks_task_load(o->task, &t, &e);
		ks_task_free(t);
		if (rc) {
			fprintf(stderr, "ksearch run: %s\n", e.msg);
			return -1;
		}
	}
	/* an unknown policy or a missing model option is said before anything is written */
	if (!o->resume_dir && ks_policy_check(o, &e)) {
		fprintf(stderr, "ksearch run: %s\n", e.msg);
		return -1;
	}
	return 0;
}

/* ---- where the time went: one table of figures, written on one line (--json) or as rows
 * under 100 columns ---- */

/* a row: its label and its figures (seconds) */
struct time_row {
	const char *label;
	int n;
	const char *name[KS_PART_COUNT + 2];
	double s[KS_PART_COUNT + 2];
};

/* the candidate's own (compile, the evaluation's phases, the rest), the runner's steps, the
 * steps of the runner's start */
static void time_rows(const struct ks_run_times *t, struct time_row rows[3])
{
	rows[0] = (struct time_row){.label = "", .n = 0};
	rows[1] = (struct time_row){.label = "runner", .n = 0};
	rows[2] = (struct time_row){.label = "runner start", .n = 0};
	rows[0].name[rows[0].n] = "compile";
	rows[0].s[rows[0].n++] = t->compile_s;
	for (int p = 0; p < KS_PHASE_COUNT; p++) {
		rows[0].name[rows[0].n] = ks_eval_phase_name(p);
		rows[0].s[rows[0].n++] = t->phase_s[p];
	}
	rows[0].name[rows[0].n] = "other";
	rows[0].s[rows[0].n++] = t->other_s;
	for (int p = 0; p < KS_PART_COUNT; p++) {
		struct time_row *r = &rows[p < KS_PART_START_FIRST ? 1 : 2];
		r->name[r->n] = ks_eval_part_name(p);
		r->s[r->n++] = t->part_s[p];
	}
}

/* the table on one line: "per candidate (12 evaluated here): 3.90 s = compile 0.40 s, ...;
 * runner: generate 0.30 s, ...; runner start: exec 0.01 s, ...; input cache 512 MiB" */
static void times_line(const struct ks_run_times *t, struct ks_buf *out)
{
	if (t->by_workers) {
		ks_buf_addf(out, "%d candidates evaluated by workers: their time per phase (compile, "
				 "inputs, check, timing) stays in the workers", t->n);
		return;
	}
	struct time_row rows[3];
	time_rows(t, rows);
	ks_buf_addf(out, "per candidate (%d evaluated here): %.2f s =", t->n, t->total_s);
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < rows[r].n; i++) {
			if (i == 0 && r)
				ks_buf_addf(out, "; %s:", rows[r].label);
			ks_buf_addf(out, "%s %s %.2f s", i ? "," : "", rows[r].name[i], rows[r].s[i]);
		}
	ks_buf_addf(out, "; input cache %.0f MiB", t->cached_bytes / (1 << 20));
}

/* the table as rows: "  runner        generate 0.30, upload 0.10, ...", each wrapped at a
 * figure under 100 columns */
static void times_rows(const struct ks_run_times *t, struct ks_buf *out)
{
	enum { INDENT = 16, WIDTH = 96 };
	struct time_row rows[3];
	time_rows(t, rows);
	rows[0].label = "candidate";
	ks_buf_addf(out, "time: %.2f s per candidate (the mean of %d evaluated here), in seconds:\n",
		    t->total_s, t->n);
	for (int r = 0; r < 3; r++) {
		int col = INDENT;
		ks_buf_addf(out, "  %-*s", INDENT - 2, rows[r].label);
		for (int i = 0; i < rows[r].n; i++) {
			char item[64];
			int len = snprintf(item, sizeof(item), "%s %.2f%s", rows[r].name[i],
					   rows[r].s[i], i + 1 < rows[r].n ? "," : "");
			if (i && col + 1 + len > WIDTH) {
				ks_buf_addf(out, "\n%*s", INDENT, "");
				col = INDENT;
			}
			ks_buf_addf(out, "%s%s", col > INDENT ? " " : "", item);
			col += len + (col > INDENT);
		}
		ks_buf_adds(out, "\n");
	}
	ks_buf_addf(out, "  %-*s%.0f MiB read per candidate\n", INDENT - 2, "input cache",
		    t->cached_bytes / (1 << 20));
}

/* ---- the summary: one printer per format ------------------------------------------- */

/* --json's "llm": token sums are null when no call reported any (a command, a person) */
static json_t *llm_json(const struct ks_run_result *r)
{
	int known = r->llm_tokens_unknown < r->llm_calls || !r->llm_calls;
	return json_pack("{s:I, s:o, s:o, s:I, s:f}", "calls", (json_int_t)r->llm_calls,
			 "prompt_tokens",
			 known ? json_integer((json_int_t)r->llm_prompt_tokens) : json_null(),
			 "completion_tokens",
			 known ? json_integer((json_int_t)r->llm_completion_tokens) : json_null(),
			 "calls_without_tokens", (json_int_t)r->llm_tokens_unknown, "cost",
			 r->llm_cost);
}

/* --json's "best": null when nothing passed */
static json_t *best_json(const struct ks_run_result *r)
{
	if (r->best_candidate < 0)
		return json_null();
	return json_pack("{s:I, s:f, s:o, s:o, s:s, s:s, s:s}", "candidate",
			 (json_int_t)r->best_candidate, "speedup_vs_baseline", r->best_speedup,
			 /* null when no library was timed */
			 "library", r->library[0] ? json_string(r->library) : json_null(),
			 "speedup_vs_library",
			 r->library[0] ? json_real(r->best_library_speedup) : json_null(),
			 "source_file", r->best_source, "action", r->best_action,
			 /* the report's word for which measurement the figure is */
			 "phase", r->best_remeasured ? "final" : "search");
}

static json_t *str_or_null(const char *s, int known)
{
	return known && s[0] ? json_string(s) : json_null();
}

/* one JSON object, built with jansson: paths and action titles may hold quotes */
static int print_json(const struct ks_run_result *r)
{
	json_t *d = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:b, s:i}", "run_dir",
			      r->run_dir, "task", r->task, "backend", r->backend, "strategy",
			      r->strategy, "policy", r->policy, "budget", r->budget, "evaluated",
			      r->evaluated, "passed", r->passed, "resumed", r->resumed, "reused",
			      r->reused);
	if (d) {
		json_object_set_new(d, "phases",
				    json_pack("{s:f, s:f, s:i, s:s, s:s}", "search_s", r->search_s,
					      "final_s", r->final_s, "final_rounds", r->final_rounds,
					      "final_stop", r->final_stop, "final_stop_reason",
					      r->final_stop_reason));
		json_object_set_new(d, "per_shape", json_pack("{s:i, s:i}", "timed", r->shape_timed,
							      "won_by_others", r->shape_wins));
		json_object_set_new(d, "cached", json_pack("{s:i, s:f, s:f}", "evaluations", r->cached,
							   "oldest_s", r->cached_age_max_s,
							   "newest_s", r->cached_age_min_s));
		struct ks_buf tl = KS_BUF_INIT;
		if (r->times.n > 0)
			times_line(&r->times, &tl);
		json_object_set_new(d, "time_per_candidate", str_or_null(ks_buf_str(&tl), 1));
		ks_buf_release(&tl);
		json_object_set_new(d, "noisy", json_boolean(r->final_noisy));
		json_object_set_new(d, "noise_reason", str_or_null(r->final_noise, r->final_noisy));
		json_object_set_new(d, "final_verdict", str_or_null(r->final_verdict, 1));
		json_object_set_new(d, "stopped", str_or_null(r->stopped, strcmp(r->stopped, "budget")));
		if (r->uses_model)
			json_object_set_new(d, "llm", llm_json(r));
		json_object_set_new(d, "best", best_json(r));
	}
	char *text = d ? json_dumps(d, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) : NULL;
	json_decref(d);
	if (!text) {
		fprintf(stderr, "ksearch run: could not write the JSON summary (out of memory, or "
				"text that is not UTF-8); the run is in %s\n", r->run_dir);
		return KS_EXIT_USAGE;
	}
	printf("%s\n", text);
	free(text);
	return KS_EXIT_OK;
}

/* "42 s", "3 min", "5 h", "2 days" */
static const char *age_text(double s, char *out, size_t n)
{
	if (s < 120)
		snprintf(out, n, "%.0f s", s);
	else if (s < 7200)
		snprintf(out, n, "%.0f min", s / 60);
	else if (s < 172800)
		snprintf(out, n, "%.0f h", s / 3600);
	else
		snprintf(out, n, "%.0f days", s / 86400);
	return out;
}

/* "best: candidate 12, 3.10x the baseline, 0.98x OpenBLAS (re-measured), ACTION" */
static void print_best(const struct ks_run_result *r)
{
	if (r->best_candidate < 0) {
		printf("no candidate passed; see the failures in the report\n");
		return;
	}
	char vs_lib[96] = "", which[4200];
	if (r->library[0] && r->best_library_speedup > 0)
		snprintf(vs_lib, sizeof(vs_lib), ", %.2fx %s", r->best_library_speedup, r->library);
	/* say which measurement the figure is: only the final's is re-measured */
	if (r->best_remeasured)
		snprintf(which, sizeof(which), "re-measured");
	else if (!r->was_finished && !strncmp(r->stopped, "interrupted", 11))
		snprintf(which, sizeof(which), "search-phase figure, not re-measured: interrupted; "
					       "--resume %s to finish", r->run_dir);
	else
		snprintf(which, sizeof(which), "search-phase figure, not re-measured");
	printf("best: candidate %ld, %.2fx the baseline%s (%s), %s\n      %s\n", r->best_candidate,
	       r->best_speedup, vs_lib, which, r->best_action, r->best_source);
}

/* where the time went, what was reused, what the model cost */
static void print_costs(const struct ks_run_result *r)
{
	if (r->cached) {
		char young[32], old[32];
		printf("reused: %d evaluation%s of earlier runs from the results cache, measured "
		       "%s to %s ago (--fresh to evaluate everything)\n", r->cached,
		       r->cached == 1 ? "" : "s", age_text(r->cached_age_min_s, young, sizeof(young)),
		       age_text(r->cached_age_max_s, old, sizeof(old)));
	}
	if (r->final_noisy)
		printf("noisy: %s\n", r->final_noise);
	if (r->times.n > 0 && r->times.by_workers) {
		printf("time: %d candidates evaluated by workers, whose time per phase stays there\n",
		       r->times.n);
	} else if (r->times.n > 0) {
		struct ks_buf tr = KS_BUF_INIT;
		times_rows(&r->times, &tr);
		fputs(ks_buf_str(&tr), stdout);
		ks_buf_release(&tr);
	}
	if (r->search_s + r->final_s > 0)
		printf("phases: search %.1f s, final re-measurement %.1f s (%d round%s, %.0f%%)\n",
		       r->search_s, r->final_s, r->final_rounds, r->final_rounds == 1 ? "" : "s",
		       100 * r->final_s / (r->search_s + r->final_s));
	if (r->final_stop_reason[0])
		printf("final stopped: %s\n", r->final_stop_reason);
	if (r->shape_wins)
		printf("per-shape: another candidate is faster on %d of %d timed workloads "
		       "(ksearch report; ksearch export --per-shape)\n",
		       r->shape_wins, r->shape_timed);
	if (r->uses_model && r->llm_calls && r->llm_tokens_unknown >= r->llm_calls)
		printf("llm: %ld calls, tokens unknown (not reported by the model's side), $%.4f\n",
		       r->llm_calls, r->llm_cost);
	else if (r->uses_model)
		printf("llm: %ld calls, %ld prompt + %ld completion tokens%s, $%.4f\n", r->llm_calls,
		       r->llm_prompt_tokens, r->llm_completion_tokens,
		       r->llm_tokens_unknown ? " (some calls did not report theirs)" : "", r->llm_cost);
}

static int print_human(const struct ks_run_result *r)
{
	printf("\nrun %s: %d/%d candidates evaluated, %d passed", r->run_dir, r->evaluated,
	       r->budget, r->passed);
	if (r->was_finished)
		printf(" (%s)", r->stopped);
	else if (r->stopped[0] && strcmp(r->stopped, "budget"))
		printf(" (stopped early: %s)", r->stopped);
	printf("\n");
	print_best(r);
	print_costs(r);
	printf("report: %s/report.md and %s/report.html\n", r->run_dir, r->run_dir);
	return KS_EXIT_OK;
}

int cmd_run(int argc, char **argv)
{
	int rc = run_parse(argc, argv);
	if (rc)
		return rc > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	if (run_refusal(&cli.o))
		return KS_EXIT_USAGE;
	struct status_line sl = {.tty = isatty(2) && !cli.verbose, .last_len = 0};
	log_line_owner = &sl;
	ks_log_set(log_sink, NULL, cli.verbose ? KS_LOG_DEBUG : KS_LOG_INFO);
	signal(SIGINT, on_sigint);
	signal(SIGTERM, on_sigint);
	struct ks_run_result r;
	struct ks_error e = {0};
	rc = ks_run(&cli.o, on_progress, &sl, &r, &e);
	if (sl.tty && sl.last_len)
		fprintf(stderr, "\n");
	if (rc) {
		fprintf(stderr, "ksearch run: %s\n", e.msg);
		if (r.run_dir[0])
			fprintf(stderr, "(what was recorded is in %s/run.db)\n", r.run_dir);
		return KS_EXIT_USAGE;
	}
	rc = cli.json ? print_json(&r) : print_human(&r);
	/* stopped by Ctrl-C (or SIGTERM): what the run had is saved and summed up above, and
	 * the exit status says it was stopped, as a shell expects: 128 + the signal (130) */
	return rc ? rc : stop_signal ? 128 + stop_signal : KS_EXIT_OK;
}
