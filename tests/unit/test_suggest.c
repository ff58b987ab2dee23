/* The edit distance and the nearest-name suggestion behind every "did you mean". */
#include <string.h>

#include "ksearch/suggest.h"
#include "tap.h"

int main(void)
{
	is_int(ks_edit_distance("", ""), 0, "empty strings");
	is_int(ks_edit_distance("run", ""), 3, "against empty: its length");
	is_int(ks_edit_distance("softmax", "sofmax"), 1, "a deletion");
	is_int(ks_edit_distance("budget", "budgte"), 1, "an adjacent swap counts once");
	is_int(ks_edit_distance("kitten", "sitting"), 3, "the classic pair");
	is_int(ks_edit_distance("abc", "xyz"), 3, "all substituted");
	static const char *const cmds[] = {"run", "eval", "report", "tasks", "compare", NULL};
	const char *s = ks_suggest("rn", cmds, -1);
	ok(s && !strcmp(s, "run"), "rn -> run");
	s = ks_suggest("compar", cmds, -1);
	ok(s && !strcmp(s, "compare"), "compar -> compare");
	ok(ks_suggest("zzz", cmds, -1) == NULL, "nothing near: no suggestion");
	ok(ks_suggest("run", cmds, -1) == NULL, "the word itself is never suggested");
	ok(ks_suggest("xy", cmds, -1) == NULL, "short words need distance 1");
	static const char *const two[] = {"cpu", "cuda"};
	s = ks_suggest("cpuu", two, 2);
	ok(s && !strcmp(s, "cpu"), "with a count: cpuu -> cpu");
	char longw[400];
	memset(longw, 'a', sizeof(longw) - 1);
	longw[sizeof(longw) - 1] = '\0';
	ok(ks_edit_distance(longw, "a") >= 0, "very long names do not overflow");
	return tap_done();
}
