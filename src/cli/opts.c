/* The option tables of the subcommands: parsing by kind, the help they print, the stderr log
 * sink. */
#include "cli/cli.h"
#include "ksearch/suggest.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/log.h"
#include "util/units.h"

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

/* "from 0 to 16" / "at least 0.001" (units: " s" for durations) */
static void range_text(const struct ks_opt *o, char *out, size_t n)
{
	const char *unit = o->kind == KS_OPT_KIND_DURATION ? " s" : "";
	if (isinf(o->max))
		snprintf(out, n, "at least %.15g%s", o->min, unit);
	else
		snprintf(out, n, "from %.15g%s to %.15g%s", o->min, unit, o->max, unit);
}

static int in_range(const struct ks_opt *o, double x, const char *v)
{
	if (x >= o->min && x <= o->max)
		return 0;
	char range[96];
	range_text(o, range, sizeof(range));
	fprintf(stderr, "ksearch: option '--%s' must be %s, got %s\n", o->name, range, v);
	return -1;
}

static int set_enum(const struct ks_opt *o, const char *v)
{
	char list[256] = "";
	for (int i = 0; o->words[i]; i++) {
		if (!strcmp(v, o->words[i])) {
			*(const char **)o->dst = o->words[i];
			return 0;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 o->words[i]);
	}
	const char *near = ks_suggest(v, o->words, -1);
	fprintf(stderr, "ksearch: unknown --%s '%s' (%s)%s%s%s\n", o->name, v, list,
		near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
	return -1;
}

/* a number of the option's kind in *x, or -1 after saying what was expected */
static int number(const struct ks_opt *o, const char *v, double *x)
{
	char *end;
	errno = 0;
	long l = 0;
	size_t size = 0;
	switch (o->kind) {
	case KS_OPT_KIND_INT:
		l = strtol(v, &end, 10);
		*x = (double)l;
		if (!errno && !*end && end != v && l >= -2147483647L && l <= 2147483647L)
			return 0;
		fprintf(stderr, "ksearch: option '--%s' expects an integer, got '%s'\n", o->name, v);
		return -1;
	case KS_OPT_KIND_DOUBLE:
		*x = strtod(v, &end);
		if (!errno && !*end && end != v && isfinite(*x))
			return 0;
		fprintf(stderr, "ksearch: option '--%s' expects a number, got '%s'\n", o->name, v);
		return -1;
	case KS_OPT_KIND_DURATION:
		if (!ks_parse_duration(v, x))
			return 0;
		fprintf(stderr, "ksearch: option '--%s' expects a duration like 90s, 30m or 2h, got "
				"'%s'\n", o->name, v);
		return -1;
	case KS_OPT_KIND_SIZE:
		if (!ks_parse_size(v, &size)) {
			*x = (double)size;
			return 0;
		}
		fprintf(stderr, "ksearch: option '--%s' expects a size like 512M or 2G, got '%s'\n",
			o->name, v);
		return -1;
	default:
		return -1;
	}
}

static int set_value(const struct ks_opt *o, const char *v)
{
	double x;
	switch (o->kind) {
	case KS_OPT_KIND_STR:
		*(const char **)o->dst = v;
		return 0;
	case KS_OPT_KIND_ENUM:
		return set_enum(o, v);
	case KS_OPT_KIND_FLAG:
		return -1;
	case KS_OPT_KIND_SIZE:
		if (number(o, v, &x))
			return -1;
		return ks_parse_size(v, (size_t *)o->dst);
	default:
		if (number(o, v, &x) || in_range(o, x, v))
			return -1;
		if (o->kind == KS_OPT_KIND_INT)
			*(int *)o->dst = (int)x;
		else
			*(double *)o->dst = x;
		return 0;
	}
}

static int unknown_option(const struct ks_opt *opts, const char *name, size_t n,
			  const char *usage)
{
	char word[128];
	const char *names[128];
	int nn = 0;
	snprintf(word, sizeof(word), "%.*s", (int)(n < 127 ? n : 127), name);
	for (const struct ks_opt *k = opts; k->name && nn < 127; k++)
		names[nn++] = k->name;
	names[nn++] = "help";
	const char *near = ks_suggest(word, names, nn);
	if (near)
		fprintf(stderr, "ksearch: unknown option '--%s'; did you mean '--%s'?\n", word, near);
	else
		fprintf(stderr, "ksearch: unknown option '--%s'; see '%s --help'\n", word, usage);
	return -1;
}

/* argv[*i], an option: its value taken (from "=V" or the next argument), bit set in given */
static int one_option(int argc, char **argv, int *i, const struct ks_opt *opts,
		      const char *usage, uint64_t *given)
{
	const char *a = argv[*i];
	if (a[1] != '-') {
		fprintf(stderr, "ksearch: unknown option '%s' (options are spelled --name)\n", a);
		return -1;
	}
	const char *name = a + 2, *eq = strchr(name, '=');
	size_t n = eq ? (size_t)(eq - name) : strlen(name);
	const struct ks_opt *o = find(opts, name, n);
	if (!o)
		return unknown_option(opts, name, n, usage);
	if (o - opts < 64)
		*given |= (uint64_t)1 << (o - opts);
	if (o->kind == KS_OPT_KIND_FLAG) {
		if (eq) {
			fprintf(stderr, "ksearch: option '--%s' takes no value\n", o->name);
			return -1;
		}
		*(int *)o->dst = 1;
		return 0;
	}
	const char *v = eq ? eq + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
	if (!v) {
		fprintf(stderr, "ksearch: option '--%s' needs a value (%s)\n", o->name,
			o->arg ? o->arg : "VALUE");
		return -1;
	}
	return set_value(o, v);
}

int ks_opts_parse(int argc, char **argv, const struct ks_opt *opts, const char *usage,
		  const char *about, const char **pos, int maxpos, int *npos, uint64_t *given)
{
	int np = 0, only_pos = 0;
	uint64_t seen = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_pos || a[0] != '-' || !a[1]) {
			if (np >= maxpos) {
				fprintf(stderr, "ksearch: unexpected argument '%s'\nusage: %s\n", a,
					usage);
				return -1;
			}
			pos[np++] = a;
		} else if (!strcmp(a, "--")) {
			only_pos = 1;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			ks_opts_help(stdout, usage, about, opts);
			return 1;
		} else if (one_option(argc, argv, &i, opts, usage, &seen)) {
			return -1;
		}
	}
	if (npos)
		*npos = np;
	if (given)
		*given = seen;
	return 0;
}

int ks_opt_given(const struct ks_opt *opts, uint64_t given, const char *name)
{
	const struct ks_opt *o = find(opts, name, strlen(name));
	return o && o - opts < 64 && (given >> (o - opts) & 1);
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
