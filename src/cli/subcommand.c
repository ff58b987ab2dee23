/* The one message for a subcommand word that is not one (spec frob, tasks shwo). */
#include <stdio.h>

#include "cli/cli.h"
#include "ksearch/suggest.h"

void ks_cli_unknown_sub(const char *cmd, const char *word, const char *const *subs)
{
	const char *near = ks_suggest(word, subs, -1);
	fprintf(stderr, "ksearch: unknown '%s' subcommand '%s' (expected", cmd, word);
	for (int i = 0; subs[i]; i++)
		fprintf(stderr, "%s%s", i == 0 ? " " : subs[i + 1] ? ", " : " or ", subs[i]);
	fprintf(stderr, ")");
	if (near)
		fprintf(stderr, "; did you mean '%s'?", near);
	fprintf(stderr, "\n");
}
