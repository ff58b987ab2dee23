/* ksearch cache [list] | clear [NAME...]: what the cache holds, and clearing it. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ksearch/cache.h"
#include "util/fs.h"
#include "util/units.h"

static const char usage_text[] = "ksearch cache [list] [--json] | clear [NAME...]";
static const char about_text[] =
	"What ksearch keeps in its cache ($KSEARCH_CACHE, else $XDG_CACHE_HOME/ksearch, else\n"
	"~/.cache/ksearch), and clearing it.  'list' (the default) shows every entry of the\n"
	"cache's folder, whatever wrote it, with its size and number of files:\n"
	"  kernels     compiled kernels; beyond 1 GiB the least recently used go (those unused\n"
	"              for an hour), at the start of an evaluation\n"
	"  inputs      generated input tensors of 1 MiB or more\n"
	"  reference   expected outputs of the tasks' references\n"
	"  scratch     runners' working folders\n"
	"and anything else found there (an entry another version of ksearch wrote, say).\n\n"
	"'clear' removes every entry, or the NAMEs given; all of it is made again when needed\n"
	"(compiles, inputs and reference outputs then take their time once more).  The scratch\n"
	"folders of a running evaluation are kept; clear nothing else while a search runs.\n\n"
	"Exit status: 0 done, 2 usage error or a NAME the cache does not have.";

static void print_list(const struct ks_cache_entry *c, int n)
{
	char b[32];
	unsigned long long bytes = 0, files = 0;
	printf("cache %s\n\n%-16s %10s %9s  %s\n", ks_cache_root(), "entry", "size", "files",
	       "holds");
	for (int i = 0; i < n; i++) {
		printf("%-16s %10s %9llu  %s%s\n", c[i].name, ks_format_bytes((double)c[i].bytes, b, sizeof(b)),
		       c[i].files, c[i].what[0] ? c[i].what : c[i].is_dir ? "(a folder)" : "(a file)",
		       c[i].in_use ? "; in use now" : "");
		bytes += c[i].bytes;
		files += c[i].files;
	}
	printf("%-16s %10s %9llu\n", "total", ks_format_bytes((double)bytes, b, sizeof(b)), files);
}

static void print_json(const struct ks_cache_entry *c, int n)
{
	json_t *arr = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{s:s, s:s, s:b, s:I, s:I, s:b}", "name",
						     c[i].name, "holds", c[i].what, "folder",
						     c[i].is_dir, "bytes", (json_int_t)c[i].bytes,
						     "files", (json_int_t)c[i].files, "in_use",
						     c[i].in_use));
	json_t *o = json_pack("{s:s, s:o}", "cache", ks_cache_root(), "entries", arr);
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	printf("%s\n", s ? s : "{}");
	free(s);
	json_decref(o);
}

/* the names given, or every entry; 0 or an exit code */
static int clear(const char **names, int n)
{
	struct ks_cache_entry *c = NULL;
	struct ks_error e = {0};
	int nc = 0, rc = KS_EXIT_OK;
	if (!n && ks_cache_list(&c, &nc, &e)) {
		fprintf(stderr, "ksearch: %s\n", e.msg);
		return KS_EXIT_USAGE;
	}
	unsigned long long total = 0;
	for (int i = 0; i < (n ? n : nc); i++) {
		unsigned long long freed = 0;
		if (ks_cache_clear(n ? names[i] : c[i].name, &freed, &e)) {
			fprintf(stderr, "ksearch: %s\n", e.msg);
			rc = KS_EXIT_USAGE;
		}
		total += freed;
	}
	char b[32];
	printf("cleared %s from %s\n", ks_format_bytes((double)total, b, sizeof(b)), ks_cache_root());
	free(c);
	return rc;
}

int cmd_cache(int argc, char **argv)
{
	static const char *const subs[] = {"list", "clear", NULL};
	int json = 0;
	const struct ks_opt opts[] = {
		KS_OPT_FLAG("json", &json, "list: one JSON object"),
		KS_OPT_END,
	};
	const char *pos[65];
	int npos = 0;
	int r = ks_opts_parse(argc, argv, opts, usage_text, about_text, pos, 65, &npos, NULL);
	if (r)
		return r > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	const char *sub = npos ? pos[0] : "list";
	if (!strcmp(sub, "clear"))
		return clear(pos + 1, npos - 1);
	if (strcmp(sub, "list")) {
		ks_cli_unknown_sub("cache", sub, subs);
		return KS_EXIT_USAGE;
	}
	if (npos > 1) {
		fprintf(stderr, "ksearch: cache list takes no names\nusage: %s\n", usage_text);
		return KS_EXIT_USAGE;
	}
	struct ks_cache_entry *c = NULL;
	struct ks_error e = {0};
	int n = 0;
	if (ks_cache_list(&c, &n, &e)) {
		fprintf(stderr, "ksearch: %s\n", e.msg);
		return KS_EXIT_USAGE;
	}
	if (json)
		print_json(c, n);
	else
		print_list(c, n);
	free(c);
	return KS_EXIT_OK;
}
