#include "cli/cli.h"
#include "ksearch/suggest.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/log.h"

void ks_opts_help(FILE *f, const char *usage, const char *about, const struct ks_opt *opts)
{
	fprintf(f, "usage: %s\n", usage);
	if (about)
		fprintf(f, "\n%s\n", about);
	if (!opts || !opts[0].name)
		return;
	fprintf(f, "\noptions:\n");
	for (const struct ks_opt *o = opts; o->name; o++) {
		char left[64];
		snprintf(left, sizeof(left), "--%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		fprintf(f, "  %-26s %s\n", left, o->help);
	}
	fprintf(f, "  %-26s %s\n", "--help", "show this help");
}

static const struct ks_opt *find(const struct ks_opt *opts, const char *name, size_t n)
{
	for (const struct ks_opt *o = opts; o && o->name; o++)
		if (strlen(o->name) == n && !strncmp(o->name, name, n))
			return o;
	return NULL;
}

static int set_value(const struct ks_opt *o, const char *v)
{
	char *end;
	switch (o->kind) {
	case KS_OPT_STR:
		*(const char **)o->dst = v;
		return 0;
	case KS_OPT_INT: {
		errno = 0;
		long x = strtol(v, &end, 10);
		if (errno || *end || end == v || x < -2147483647L || x > 2147483647L) {
			fprintf(stderr, "ksearch: option '--%s' expects an integer, got '%s'\n",
				o->name, v);
			return -1;
		}
		*(int *)o->dst = (int)x;
		return 0;
	}
	case KS_OPT_DOUBLE: {
		errno = 0;
		double x = strtod(v, &end);
		if (errno || *end || end == v || !isfinite(x)) {
			fprintf(stderr, "ksearch: option '--%s' expects a number, got '%s'\n",
				o->name, v);
			return -1;
		}
		*(double *)o->dst = x;
		return 0;
	}
	case KS_OPT_FLAG:
		break;
	}
	return -1;
}

int ks_opts_parse(int argc, char **argv, const struct ks_opt *opts, const char *usage,
		  const char *about, const char **pos, int maxpos, int *npos)
{
	int np = 0, only_pos = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_pos || a[0] != '-' || !a[1]) {
			if (np >= maxpos) {
				fprintf(stderr, "ksearch: unexpected argument '%s'\nusage: %s\n", a,
					usage);
				return -1;
			}
			pos[np++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = 1;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			ks_opts_help(stdout, usage, about, opts);
			return 1;
		}
		if (a[1] != '-') {
			fprintf(stderr, "ksearch: unknown option '%s' (options are spelled --name)\n",
				a);
			return -1;
		}
		const char *name = a + 2, *eq = strchr(name, '=');
		size_t n = eq ? (size_t)(eq - name) : strlen(name);
		const struct ks_opt *o = find(opts, name, n);
		if (!o) {
			char word[128];
			const char *names[128];
			int nn = 0;
			snprintf(word, sizeof(word), "%.*s", (int)(n < 127 ? n : 127), name);
			for (const struct ks_opt *k = opts; k->name && nn < 127; k++)
				names[nn++] = k->name;
			names[nn++] = "help";
			const char *near = ks_suggest(word, names, nn);
			if (near)
				fprintf(stderr, "ksearch: unknown option '--%s'; did you mean '--%s'?\n",
					word, near);
			else
				fprintf(stderr, "ksearch: unknown option '--%s'; see '%s --help'\n",
					word, usage);
			return -1;
		}
		if (o->kind == KS_OPT_FLAG) {
			if (eq) {
				fprintf(stderr, "ksearch: option '--%s' takes no value\n", o->name);
				return -1;
			}
			*(int *)o->dst = 1;
			continue;
		}
		const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
		if (!v) {
			fprintf(stderr, "ksearch: option '--%s' needs a value (%s)\n", o->name,
				o->arg ? o->arg : "VALUE");
			return -1;
		}
		if (set_value(o, v))
			return -1;
	}
	if (npos)
		*npos = np;
	return 0;
}

int ks_opt_range(const char *name, double v, double min, double max)
{
	if (v >= min && v <= max)
		return 0;
	fprintf(stderr, "ksearch: option '--%s' must be from %g to %g, got %g\n", name, min, max,
		v);
	return -1;
}

static void log_to_stderr(enum ks_log_level level, const char *line, void *ctx)
{
	static const char *tag[] = {"debug: ", "", "warning: ", "error: "};
	fprintf(stderr, "%s%s\n", tag[level], line);
}

void ks_cli_log_init(int verbose)
{
	ks_log_set(log_to_stderr, NULL, verbose ? KS_LOG_DEBUG : KS_LOG_INFO);
}
