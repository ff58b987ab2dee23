#include "cli/cli.h"

int cmd_translate(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ksearch: 'translate' is not available in this build yet\n");
	return KS_EXIT_USAGE;
}
