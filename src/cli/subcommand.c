/* What subcommands share besides the option table: the one message for a subcommand word
 * that is not one (spec frob, tasks shwo), and printing a built text. */
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

int ks_cli_print_buf(const char *cmd, const struct ks_buf *b)
{
	int rc = ks_buf_failed(b);
	if (rc) {
		fprintf(stderr, "ksearch %s: the output could not be built whole (%s); nothing "
				"printed\n", cmd, ks_strerror(rc));
		return KS_EXIT_USAGE;
	}
	if (fwrite(ks_buf_str(b), 1, b->len, stdout) != b->len || fflush(stdout)) {
		fprintf(stderr, "ksearch %s: writing to stdout failed\n", cmd);
		return KS_EXIT_USAGE;
	}
	return KS_EXIT_OK;
}
