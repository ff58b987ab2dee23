/* Filling a tensor in ranges (as the runner's threads do) gives exactly the values of one
 * whole fill, for every initialiser, dtype and range boundary (odd starts included). */
#include <stdlib.h>
#include <string.h>

#include "ksearch/task.h"
#include "tap.h"

int main(void)
{
	const char *inits[] = {"normal(0, 3)", "uniform(-2, 5)", "softplus(normal(0, 1))",
			       "-exp(normal(0, 1))", "randint(0, 17)", "0.25"};
	enum ks_dtype types[] = {KS_DT_F32, KS_DT_F16, KS_DT_BF16, KS_DT_F64, KS_DT_I32};
	const size_t n = 1001;
	for (size_t i = 0; i < sizeof(inits) / sizeof(inits[0]); i++) {
		struct ks_init in;
		ok(ks_init_parse(inits[i], &in, NULL, NULL) == 0, "parse %s", inits[i]);
		for (size_t d = 0; d < sizeof(types) / sizeof(types[0]); d++) {
			size_t bytes = n * ks_dtype_size(types[d]);
			unsigned char *whole = malloc(bytes), *parts = malloc(bytes);
			ks_init_fill(&in, types[d], whole, n, 0x1234abcdULL, 7);
			memset(parts, 0x5a, bytes);
			/* uneven ranges: odd and even starts, a single element, the tail */
			size_t cuts[] = {0, 1, 2, 5, 6, 333, 334, 999, 1000, 1001};
			for (size_t c = 0; c + 1 < sizeof(cuts) / sizeof(cuts[0]); c++)
				ks_init_fill_range(&in, types[d], parts, cuts[c], cuts[c + 1] - cuts[c],
						   0x1234abcdULL, 7);
			ok(memcmp(whole, parts, bytes) == 0, "%s as %s: ranges equal one fill",
			   inits[i], ks_dtype_name(types[d]));
			free(whole);
			free(parts);
		}
	}
	return tap_done();
}
