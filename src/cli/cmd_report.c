#include "cli/cli.h"

int cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ksearch: 'report' is not available in this build yet\n");
	return KS_EXIT_USAGE;
}
