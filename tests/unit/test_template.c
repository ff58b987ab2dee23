/* Knob templates: parsing, positions in errors, configuration space, feasibility over
 * several workloads, defines, neighbours and move keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/template.h"
#include "tap.h"

#define FIXTURE "tests/fixtures/templates/attn_tiled.c"

struct wl {
	double L, D, smem;
};

static int lookup(int w, const char *name, size_t len, double *out, void *ctx)
{
	const struct wl *ws = ctx;
	if (w < 0)
		return KS_ENOTFOUND;
	if (len == 1 && name[0] == 'L')
		*out = ws[w].L;
	else if (len == 1 && name[0] == 'D')
		*out = ws[w].D;
	else if (len == 19 && !memcmp(name, "spec.smem_per_block", len))
		*out = ws[w].smem;
	else
		return KS_ENOTFOUND;
	return 0;
}

static int lookup_nospec(int w, const char *name, size_t len, double *out, void *ctx)
{
	if (len > 5 && !memcmp(name, "spec.", 5))
		return KS_ENOTFOUND;
	return lookup(w, name, len, out, ctx);
}

/* parse text that must fail; the message must contain want */
static void bad(const char *text, const char *want, const char *name)
{
	struct ks_template *t = NULL;
	struct ks_error e = {0};
	int rc = ks_template_parse(text, strlen(text), "k.c", &t, &e);
	ok(rc != 0 && t == NULL, "%s: rejected", name);
	ok(strstr(e.msg, want) != NULL, "%s: '%s' contains '%s'", name, e.msg, want);
}

int main(void)
{
	struct ks_template *t = NULL;
	struct ks_error e = {0};
	struct ks_config_set s;
	int cfg[KS_TEMPLATE_MAX_KNOBS], ok_, rc;
	struct wl big = {2048, 64, 16384}, two[2] = {{2048, 64, 16384}, {48, 64, 16384}};

	rc = ks_template_load(FIXTURE, &t, &e);
	ok(rc == 0, "load fixture (%s)", e.msg);
	if (rc)
		return tap_done();
	is_str(t->family, "tiled-online-softmax", "family");
	ok(t->rating == 7 && t->difficulty == 3, "rating and difficulty");
	is_int(t->nknobs, 4, "knobs");
	is_int(t->block_line, 4, "block line");
	is_str(t->knobs[0].name, "BLOCK_M", "knob order kept");
	is_int(t->knobs[0].def, 1, "default index");
	ok(t->knobs[0].impacts[KS_IMPACT_MEMORY_BANDWIDTH] == 7 &&
		   t->knobs[0].impacts[KS_IMPACT_REGISTER_PRESSURE] == 5,
	   "impacts");
	is_str(t->knobs[2].summary, "exp2 trick", "knob summary");
	ok(t->knobs[3].nums[1] == 1, "non-numeric value evaluates to its index");
	is_int(t->knobs[0].line, 10, "knob line");
	is_int(t->nrequire, 2, "requires");
	is_int(t->require[0].line, 15, "require line");
	is_int(t->require[0].col, 6, "require column (after the quote)");
	is_int(ks_template_size(t), 36, "raw space");
	for (long i = 0; i < 36; i++) {
		ks_template_config_at(t, i, cfg);
		if (ks_template_config_index(t, cfg) != i)
			break;
		if (i == 35)
			ok(1, "config index round trip");
	}
	ks_template_config_default(t, cfg);
	ok(cfg[0] == 1 && cfg[1] == 1 && cfg[2] == 1 && cfg[3] == 0, "defaults");

	rc = ks_template_feasible(t, cfg, 1, lookup, &big, &ok_, &e);
	ok(rc == 0 && ok_ == 1, "default feasible (%s)", e.msg);
	cfg[0] = 2;
	rc = ks_template_feasible(t, cfg, 1, lookup, &big, &ok_, &e);
	ok(rc == 0 && ok_ == 0, "BLOCK_M=128 BLOCK_N=32 exceeds shared memory");

	rc = ks_template_enumerate(t, 1, lookup, &big, &s, &e);
	ok(rc == 0, "enumerate (%s)", e.msg);
	is_int(s.n, 16, "feasible for one workload");
	ks_config_set_release(&s);
	rc = ks_template_enumerate(t, 2, lookup, two, &s, &e);
	is_int(s.n, 8, "feasible for all of two workloads (short L forbids BLOCK_M > 48)");
	for (int i = 0; i < s.n; i++)
		if (s.cfg[i * s.nknobs] != 0)
			ok(0, "config %d has BLOCK_M index %d", i, s.cfg[i * s.nknobs]);
	ks_template_config_at(t, s.index[3], cfg);
	is_int(ks_config_set_find(&s, t, cfg), 3, "find");
	cfg[0] = 2;
	is_int(ks_config_set_find(&s, t, cfg), -1, "find absent");
	ks_config_set_release(&s);

	/* an unresolvable name points at the file, line and column of the name */
	ks_template_config_default(t, cfg);
	rc = ks_template_feasible(t, cfg, 1, lookup_nospec, &big, &ok_, &e);
	{
		char want[128];
		int off = (int)(strstr(t->require[0].expr, "spec.") - t->require[0].expr);
		snprintf(want, sizeof(want), FIXTURE ":15:%d: unknown name 'spec.smem_per_block'",
			 6 + off);
		ok(rc == KS_ENOTFOUND && strstr(e.msg, want), "unknown name position ('%s' vs '%s')",
		   e.msg, want);
	}

	{
		char **defs = NULL;
		struct ks_buf b;
		struct ks_knob_move mv[8];
		char key[64];
		int n;
		rc = ks_template_defines(t, cfg, &defs, &e);
		ok(rc == 0 && defs && !strcmp(defs[0], "-DBLOCK_M=64") &&
			   !strcmp(defs[3], "-DSCHED=static") && defs[4] == NULL,
		   "defines");
		ks_template_defines_free(defs);
		ks_buf_init(&b, 0);
		ks_template_config_str(t, cfg, &b);
		is_str(ks_buf_str(&b), "BLOCK_M=64 BLOCK_N=32 USE_EXP2=1 SCHED=static", "config string");
		ks_buf_release(&b);
		n = ks_template_neighbours(t, cfg, mv, 8);
		is_int(n, 6, "neighbours of the default");
		ok(mv[0].knob == 0 && mv[0].to == 0 && mv[1].to == 2, "down before up");
		ks_template_move_key(t, &mv[1], 0, key, sizeof(key));
		ok(!strcmp(key, "BLOCK_M:+1"), "generic move key %s", key);
		ks_template_move_key(t, &mv[1], 1, key, sizeof(key));
		ok(!strcmp(key, "BLOCK_M:64->128"), "exact move key %s", key);
		is_int(ks_template_neighbours(t, cfg, mv, 3), 3, "neighbours capped");
	}
	ks_template_free(t);

	{
		struct ks_template **list = NULL;
		int n = 0;
		rc = ks_template_load_dir("tests/fixtures/templates", &list, &n, &e);
		ok(rc == 0 && n >= 2, "load a template folder (%d, %s)", n, e.msg);
		ok(n >= 2 && strcmp(list[0]->path, list[1]->path) < 0, "in name order");
		ks_template_list_free(list, n);
		rc = ks_template_load_dir("tests/fixtures/no-such-folder", &list, &n, &e);
		ok(rc == KS_EIO && n == 0, "missing folder is an error");
	}

	bad("int x;\n", "no '@ksearch' block", "no block");
	bad("/* @ksearch\nfamily: f\nknobs:\n  A: {values: [1, 2]}\n", "without '@end'", "no end");
	bad("/* @ksearch\nfamily: f\nknobs:\n  A: {values: [1, 2], default: 3}\n@end */",
	    "k.c:4:32: default '3' is not one of the knob's values", "bad default");
	bad("/* @ksearch\nfamily: f\nknobs:\n  A: {values: [1, 2], colour: red}\n@end */",
	    "k.c:4:", "unknown knob key");
	bad("\n\n/* @ksearch\nfamily: f\nrating: 11\nknobs:\n  A: {values: [1, 2]}\n@end */",
	    "k.c:5:9: rating 11 outside [0, 10]", "rating range");
	bad("/* @ksearch\nfamily: f\nknobs:\n  A: {values: [1, 2]}\nrequire:\n  - \"A <= (3\"\n@end */",
	    "k.c:6:13: expected ')'", "expression syntax");
	bad("/* @ksearch\nfamily: f\nknobs:\n  A: {values: [1, 2]\n@end */", "k.c:", "yaml syntax");
	bad("/* @ksearch\nfamily: f\nknobs:\n  2A: {values: [1]}\n@end */", "not a C identifier",
	    "knob name");
	bad("/* @ksearch\nfamily: f\nknobs:\n  A: {values: [1, 1]}\n@end */", "duplicate value",
	    "duplicate value");
	return tap_done();
}
