#include "cli/cli.h"

int cmd_tasks(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ksearch: 'tasks' is not available in this build yet\n");
	return KS_EXIT_USAGE;
}
