/* ksearch: argument dispatch only; every subcommand lives in cmd_<name>.c. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{"run", cmd_run, "search for a faster kernel for a task (the main job)"},
	{"eval", cmd_eval, "check and time one kernel file against a task"},
	{"report", cmd_report, "regenerate the reports of a run from its database"},
	{"tasks", cmd_tasks, "list the shipped tasks or show one (prototype, workloads)"},
	{"spec", cmd_spec, "list, show or detect hardware specs"},
	{"translate", cmd_translate, "map a CUDA source onto another target's primitives"},
	{"export", cmd_export, "write found kernels as code for another framework (--to mlx)"},
	{"worker", cmd_worker, "serve evaluations over stdin/stdout (used by run/eval)"},
};

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
		   "\n'ksearch <command> --help' explains each command.\n"
		   "\nexit codes: 0 success (eval: the kernel passed), 1 the kernel or run was\n"
		   "evaluated and did not pass, 2 usage or infrastructure error.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? KS_EXIT_USAGE : KS_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ksearch %s\n", KS_VERSION);
		return KS_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "ksearch: '%s' is not a command; see 'ksearch --help'\n", argv[1]);
	return KS_EXIT_USAGE;
}
