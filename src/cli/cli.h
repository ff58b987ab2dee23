/* The ksearch command: one file per subcommand (cmd_<name>.c), dispatched from main.c.
 * Subcommands use only the public ks_ API and the option table below. */
#ifndef KS_CLI_H
#define KS_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "util/defines.h"

/* exit codes, documented in `ksearch --help` */
enum {
	KS_EXIT_OK = 0,    /* success; for eval: the kernel passed */
	KS_EXIT_FAIL = 1,  /* the kernel (or run) was evaluated and did not pass */
	KS_EXIT_USAGE = 2, /* bad usage or an infrastructure fault */
};

/* An option's kind says what its value is and how it is checked, so that a command's table
 * (git's OPT_BOOL, OPT_INTEGER, ...) is the whole of its parsing: a value out of its range or
 * not among its words is refused with a clear message, never capped or ignored. */
enum ks_opt_kind {
	KS_OPT_KIND_FLAG,     /* int *: 1 when given; takes no value */
	KS_OPT_KIND_STR,      /* const char **: the text */
	KS_OPT_KIND_ENUM,     /* const char **: one of words */
	KS_OPT_KIND_INT,      /* int *: an integer from min to max */
	KS_OPT_KIND_DOUBLE,   /* double *: a finite number from min to max */
	KS_OPT_KIND_DURATION, /* double *, seconds: "90s", "30m", "2h", "250ms", "5" (s); min..max */
	KS_OPT_KIND_SIZE,     /* size_t *, bytes: "512M", "2G", "4096" */
};

struct ks_opt {
	const char *name;         /* long name without dashes: "budget" */
	enum ks_opt_kind kind;
	void *dst;                /* where the value goes (the kind says its type) */
	const char *arg;          /* metavariable for help: "N" */
	const char *help;         /* one line */
	double min, max;          /* INT, DOUBLE, DURATION: the values taken (max INFINITY: any
				     above min) */
	const char *const *words; /* ENUM: the values taken, NULL-terminated */
};

/* the table's rows; the conditional makes the compiler check dst's type */
#define KS_OPT_DST(d, type) ((void *)(1 ? (d) : (type *)0))
#define KS_OPT_FLAG(n, d, h)                                                                \
	{.name = n, .kind = KS_OPT_KIND_FLAG, .dst = KS_OPT_DST(d, int), .help = h}
#define KS_OPT_STR(n, d, a, h)                                                              \
	{.name = n, .kind = KS_OPT_KIND_STR, .dst = KS_OPT_DST(d, const char *), .arg = a, .help = h}
#define KS_OPT_ENUM(n, d, w, a, h)                                                          \
	{.name = n, .kind = KS_OPT_KIND_ENUM, .dst = KS_OPT_DST(d, const char *), .arg = a,     \
	 .help = h, .words = w}
#define KS_OPT_INT(n, d, lo, hi, a, h)                                                      \
	{.name = n, .kind = KS_OPT_KIND_INT, .dst = KS_OPT_DST(d, int), .arg = a, .help = h,    \
	 .min = lo, .max = hi}
#define KS_OPT_DOUBLE(n, d, lo, hi, a, h)                                                   \
	{.name = n, .kind = KS_OPT_KIND_DOUBLE, .dst = KS_OPT_DST(d, double), .arg = a,         \
	 .help = h, .min = lo, .max = hi}
#define KS_OPT_DURATION(n, d, lo, hi, a, h)                                                 \
	{.name = n, .kind = KS_OPT_KIND_DURATION, .dst = KS_OPT_DST(d, double), .arg = a,       \
	 .help = h, .min = lo, .max = hi}
#define KS_OPT_SIZE(n, d, a, h)                                                             \
	{.name = n, .kind = KS_OPT_KIND_SIZE, .dst = KS_OPT_DST(d, size_t), .arg = a, .help = h}
#define KS_OPT_END {.name = NULL}

/* Parse argv[1..] against opts (at most 64 rows); positionals are collected in pos (at most
 * maxpos), and bit i of *given (may be NULL) says opts[i] was on the command line.  Prints a
 * clear error and returns -1 on bad usage; returns 1 when --help was given (after printing
 * usage + the option table), else 0. */
int ks_opts_parse(int argc, char **argv, const struct ks_opt *opts, const char *usage,
		  const char *about, const char **pos, int maxpos, int *npos, uint64_t *given);
void ks_opts_help(FILE *f, const char *usage, const char *about, const struct ks_opt *opts);
/* 1 when the option called name is among given (ks_opts_parse's) */
int ks_opt_given(const struct ks_opt *opts, uint64_t given, const char *name);

/* install the stderr log sink; verbose lowers the level to debug */
void ks_cli_log_init(int verbose);

/* into out (emptied first): the pairs of defines (--define's "A=1,B=2", may be NULL),
 * checked against src's @ksearch block when it has one, then each knob of that block that
 * neither they nor a '#define NAME' line of src give, at its default */
int ks_cli_knob_values(const char *src, const char *path, const char *defines,
		       struct ks_defines *out, struct ks_error *e);

/* on stderr: "ksearch: unknown 'CMD' subcommand 'WORD' (expected a, b or c); did you mean
 * 'b'?"; subs is NULL-terminated */
void ks_cli_unknown_sub(const char *cmd, const char *word, const char *const *subs);

/* b on stdout, whole: KS_EXIT_OK; KS_EXIT_USAGE after saying why on stderr ("ksearch CMD:
 * ...") when b failed (a cap, out of memory: nothing of it is printed) or stdout did */
int ks_cli_print_buf(const char *cmd, const struct ks_buf *b);

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
