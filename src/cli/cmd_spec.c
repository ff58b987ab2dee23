#include "cli/cli.h"

int cmd_spec(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ksearch: 'spec' is not available in this build yet\n");
	return KS_EXIT_USAGE;
}
