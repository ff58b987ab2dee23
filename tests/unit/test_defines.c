/* util/defines: the one parser of knob values in both spellings, and the one baker. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"
#include "tap.h"
#include "util/defines.h"

static void test_parse(void)
{
	struct ks_defines d;
	struct ks_error e = {0};
	ks_defines_init(&d);
	is_int(ks_defines_parse(&d, "-DBM=64 -DBN=32  -DNDEBUG", &e), 0, "the store's spelling");
	is_int(d.n, 3, "three pairs");
	is_str(d.name[0], "BM", "a name");
	is_str(d.value[1], "32", "a value");
	ok(d.value[2] == NULL, "a bare name has no value");
	is_str(d.list[0], "BM=64", "the compiler's pair");
	is_str(d.list[2], "NDEBUG", "a bare name's pair");
	ok(d.list[3] == NULL, "the list ends with NULL");
	is_int(ks_defines_parse(&d, "VEC=8,UNROLL=4, TILE=2", &e), 0, "--define's spelling appends");
	is_int(d.n, 6, "six pairs");
	is_int(ks_defines_find(&d, "UNROLL"), 4, "find");
	is_int(ks_defines_find(&d, "UNROL"), -1, "a prefix is not the name");
	ks_defines_release(&d);
	is_int(d.n, 0, "release empties");
	is_int(ks_defines_parse(&d, NULL, &e) + ks_defines_parse(&d, " , ", &e), 0, "nothing to parse");
	is_int(d.n, 0, "... adds nothing");
	is_int(ks_defines_parse(&d, "A=1,=4", &e), KS_EINVAL, "a pair without a name is refused");
	ok(strstr(e.msg, "'=4'") != NULL, "... naming it: %s", e.msg);
	is_int(d.n, 1, "... and the pairs before are kept");
	is_int(ks_defines_parse(&d, "B-C=1", &e), KS_EINVAL, "a name that is no identifier");
	ks_defines_release(&d);
	char many[KS_DEFINES_MAX * 8 + 16] = "";
	for (int i = 0; i <= KS_DEFINES_MAX; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "K%d=1 ", i);
	is_int(ks_defines_parse(&d, many, &e), KS_ELIMIT, "more pairs than KS_DEFINES_MAX");
	is_int(d.n, KS_DEFINES_MAX, "... keeps the ones that fit");
	ks_defines_release(&d);
}

static void test_bake(void)
{
	struct ks_buf b = KS_BUF_INIT;
	is_int(ks_defines_bake("-DVEC=16 -DUNROLL=4 -DFAST", &b, NULL), 0, "bake");
	is_str(ks_buf_str(&b), "#define VEC 16\n#define UNROLL 4\n#define FAST\n", "#define lines");
	ks_buf_reset(&b);
	is_int(ks_defines_bake("", &b, NULL), 0, "bake of nothing");
	is_int((long long)b.len, 0, "... writes nothing");
	ks_buf_release(&b);
	ks_buf_init(&b, 8);
	is_int(ks_defines_bake("-DVEC=16", &b, NULL), KS_ELIMIT, "a full buffer's error");
	ks_buf_release(&b);

	char v[32];
	const char *src = "/* x */\n#define VEC 16\n#define UNROLL\t4 \n#define VECTOR 2\n";
	is_str(ks_defines_in_source(src, "VEC", v, sizeof(v)), "16", "a #define line's value");
	is_str(ks_defines_in_source(src, "UNROLL", v, sizeof(v)), "4",
	       "after a tab, without the space after");
	ok(!ks_defines_in_source(src, "VECT", v, sizeof(v)), "a prefix of a defined name is not defined");
	ok(!ks_defines_in_source("int VEC = 2;\n", "VEC", v, sizeof(v)), "no #define line");
}

int main(void)
{
	test_parse();
	test_bake();
	return tap_done();
}
