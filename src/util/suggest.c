/* Edit distance and the nearest name (contract in suggest.h). */
#include "ksearch/suggest.h"

#include <string.h>

#define SUGGEST_MAX 255

int ks_edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	n = n > SUGGEST_MAX ? SUGGEST_MAX : n;
	m = m > SUGGEST_MAX ? SUGGEST_MAX : m;
	/* three rows of the Damerau-Levenshtein (optimal string alignment) table */
	int rows[3][SUGGEST_MAX + 1];
	int *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= m; j++)
		prev[j] = (int)j;
	for (size_t i = 1; i <= n; i++) {
		cur[0] = (int)i;
		for (size_t j = 1; j <= m; j++) {
			int cost = a[i - 1] != b[j - 1];
			int d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (prev[j - 1] + cost < d)
				d = prev[j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			cur[j] = d;
		}
		int *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[m];
}

const char *ks_suggest(const char *word, const char *const *cands, int n)
{
	const char *best = NULL;
	int best_d = 0;
	size_t len = strlen(word);
	int limit = len <= 4 ? 1 : (int)(len / 3) < 2 ? 2 : (int)(len / 3);
	for (int i = 0; n < 0 ? cands[i] != NULL : i < n; i++) {
		if (!cands[i] || !strcmp(cands[i], word))
			continue;
		int d = ks_edit_distance(word, cands[i]);
		if (d <= limit && (!best || d < best_d)) {
			best = cands[i];
			best_d = d;
		}
	}
	return best;
}
