/* The ksearch command: one file per subcommand (cmd_<name>.c), dispatched from main.c.
 * Subcommands use only the public ks_ API and the option table below. */
#ifndef KS_CLI_H
#define KS_CLI_H

#include <stdio.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"

/* exit codes, documented in `ksearch --help` */
enum {
	KS_EXIT_OK = 0,    /* success; for eval: the kernel passed */
	KS_EXIT_FAIL = 1,  /* the kernel (or run) was evaluated and did not pass */
	KS_EXIT_USAGE = 2, /* bad usage or an infrastructure fault */
};

enum ks_opt_kind { KS_OPT_FLAG, KS_OPT_STR, KS_OPT_INT, KS_OPT_DOUBLE };

struct ks_opt {
	const char *name;  /* long name without dashes: "budget" */
	enum ks_opt_kind kind;
	void *dst;         /* int* for FLAG/INT, const char** for STR, double* for DOUBLE */
	const char *arg;   /* metavariable for help: "N" */
	const char *help;  /* one line */
};

/* Parse argv[1..] against opts; positionals are collected in pos (at most maxpos).
 * Prints a clear error and returns -1 on bad usage; returns 1 when --help was given
 * (after printing usage + the option table), else 0. */
int ks_opts_parse(int argc, char **argv, const struct ks_opt *opts, const char *usage,
		  const char *about, const char **pos, int maxpos, int *npos);
void ks_opts_help(FILE *f, const char *usage, const char *about, const struct ks_opt *opts);

/* 0 when min <= v <= max, else prints "option '--NAME' must be from MIN to MAX" and -1
 * (NaN is never in range) */
int ks_opt_range(const char *name, double v, double min, double max);

/* install the stderr log sink; verbose lowers the level to debug */
void ks_cli_log_init(int verbose);

/* into out, "A=1,B=2": defines (--define's list, may be NULL), then each knob of src's
 * @ksearch block that neither it nor a '#define NAME' line of src gives, at its default */
int ks_cli_knob_values(const char *src, const char *path, const char *defines,
		       struct ks_buf *out, struct ks_error *e);

/* on stderr: "ksearch: unknown 'CMD' subcommand 'WORD' (expected a, b or c); did you mean
 * 'b'?"; subs is NULL-terminated */
void ks_cli_unknown_sub(const char *cmd, const char *word, const char *const *subs);

int cmd_run(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_tasks(int argc, char **argv);
int cmd_tasks_import(int argc, char **argv); /* 'tasks import', from cmd_tasks */
int cmd_spec(int argc, char **argv);
int cmd_translate(int argc, char **argv);
int cmd_worker(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_prompt(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_doctor(int argc, char **argv);

#endif
