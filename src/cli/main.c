/* ksearch: argument dispatch only; every subcommand lives in cmd_<name>.c. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "ksearch/suggest.h"
#include "util/env.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{"run", cmd_run, "search for a faster kernel for a task (the main job)"},
	{"eval", cmd_eval, "check and time one kernel file against a task"},
	{"report", cmd_report, "regenerate the reports of a run from its database"},
	{"compare", cmd_compare, "per workload, is one run's best kernel faster than another's"},
	{"tasks", cmd_tasks, "list the shipped tasks or show one (prototype, workloads)"},
	{"prompt", cmd_prompt, "print what a run with a model would send it (no run, no model)"},
	{"spec", cmd_spec, "list, show or detect hardware specs"},
	{"translate", cmd_translate, "map a CUDA source onto another target's primitives"},
	{"export", cmd_export, "write a run's kernels for C, PyTorch, flashinfer-bench or MLX (--to)"},
	{"worker", cmd_worker, "serve evaluations over stdin/stdout (used by run/eval)"},
	{"cache", cmd_cache, "list what the cache holds (compiled kernels, inputs, ...) or clear it"},
	{"doctor", cmd_doctor, "run what matters here and print a report to paste into an issue"},
};

/* "  NAME  what; default: X", the text wrapped at a word under 100 columns */
static void env_row(FILE *f, const struct ks_env_var *v)
{
	enum { INDENT = 27, WIDTH = 96 };
	char text[512];
	snprintf(text, sizeof(text), "%s; default: %s", v->what, v->dflt);
	int col = fprintf(f, "  %-*s", INDENT - 3, v->name);
	if (col > INDENT - 1) /* a name longer than the column: its text on the next line */
		col = fprintf(f, "\n%*s", INDENT - 1, "") - 1;
	for (const char *w = text; *w;) {
		int len = (int)strcspn(w, " ");
		if (col + 1 + len > WIDTH && col > INDENT)
			col = fprintf(f, "\n%*s", INDENT - 1, "") - 1;
		col += fprintf(f, " %.*s", len, w);
		w += len + (w[len] == ' ');
	}
	fputc('\n', f);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ksearch <command> [options]\n\n"
		   "ksearch searches for faster GPU/CPU kernels: it keeps a scored tree of\n"
		   "optimization actions, writes candidate kernels, checks them against a\n"
		   "reference and times them on real hardware.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nFirst steps:\n"
		   "  ksearch tasks list                  the shipped tasks\n"
		   "  ksearch run softmax --budget 20     search with the built-in policy on the CPU\n"
		   "  ksearch eval softmax my_softmax.c   check and time your own kernel\n"
		   "\n'ksearch help <command>' (or 'ksearch <command> --help') explains each command;\n"
		   "'ksearch --version' prints the version.\n"
		   "\nexit codes: 0 success (eval: the kernel passed), 1 the kernel or run was\n"
		   "evaluated and did not pass, 2 usage or infrastructure error.\n"
		   "\nENVIRONMENT (read once, at the start):\n");
	int n;
	const struct ks_env_var *vars = ks_env_vars(&n);
	for (int i = 0; i < n; i++)
		env_row(f, &vars[i]);
}

static const struct command *command_find(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

static int not_a_command(const char *name)
{
	const char *names[16];
	int n = 0;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]) && n < 15; i++)
		names[n++] = commands[i].name;
	names[n++] = "help";
	const char *near = ks_suggest(name, names, n);
	if (near)
		fprintf(stderr, "ksearch: '%s' is not a command; did you mean '%s'?\n", name, near);
	else
		fprintf(stderr, "ksearch: '%s' is not a command; see 'ksearch --help'\n", name);
	return KS_EXIT_USAGE;
}

/* ksearch help CMD [SUB]: what 'ksearch CMD [SUB] --help' prints */
static int help(int argc, char **argv)
{
	const struct command *c = command_find(argv[2]);
	if (!c)
		return not_a_command(argv[2]);
	char *args[8] = {argv[2]};
	int n = 1;
	for (int i = 3; i < argc && n < 6; i++)
		args[n++] = argv[i];
	args[n++] = "--help";
	args[n] = NULL;
	return c->fn(n, args);
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "help"))
		return help(argc, argv);
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? KS_EXIT_USAGE : KS_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ksearch %s\n", KS_VERSION);
		return KS_EXIT_OK;
	}
	const struct command *c = command_find(argv[1]);
	return c ? c->fn(argc - 1, argv + 1) : not_a_command(argv[1]);
}
