#include "cli/cli.h"

int cmd_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ksearch: 'run' is not available in this build yet\n");
	return KS_EXIT_USAGE;
}
