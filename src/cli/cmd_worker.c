#include "cli/cli.h"

int cmd_worker(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ksearch: 'worker' is not available in this build yet\n");
	return KS_EXIT_USAGE;
}
