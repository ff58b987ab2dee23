#include "cli/cli.h"

int cmd_eval(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ksearch: 'eval' is not available in this build yet\n");
	return KS_EXIT_USAGE;
}
