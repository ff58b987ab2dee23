/* ksearch spec list | show NAME | detect: hardware specs from knowledge/specs/. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <string.h>

#include "cli/cli.h"
#include "ksearch/backend.h"
#include "ksearch/knowledge.h"
#include "util/fs.h"

static const char *usage_text = "ksearch spec list | show NAME|FILE [--json] | detect [--backend cuda [--device N]] [--json] "
				"[--save FILE] [--fresh]";
static const char *about_text =
	"Hardware specs: warp/SIMD width, threads per group, shared memory, caches, bandwidth,\n"
	"peak rates and matrix units, each field with its source and basis (documented,\n"
	"derived, estimated, measured).  'detect' fills a spec for the host CPU from /proc and\n"
	"sysfs and measures copy bandwidth and FMA rate (about 1 second, bounded by 2).\n"
	"\n"
	"A measured figure is the roof '% of roofline' is taken against, so it must not be low.\n"
	"Each one records when, by which probe and at what load it was measured; a probe that\n"
	"shared the CPUs with other work (load above the core count) is flagged.  The best\n"
	"figure of every detection on this machine is kept in $KSEARCH_CACHE/specs/ and a\n"
	"lower measurement never replaces it (runs and 'eval --spec auto' use it too); after\n"
	"a hardware or BIOS change, --fresh measures again and replaces it.";

static int print_spec(const struct ks_spec *s, int json)
{
	struct ks_buf b = KS_BUF_INIT;
	struct ks_error e = {0};
	int rc = json ? ks_spec_to_json(s, &b, &e) : ks_spec_to_text(s, &b);
	if (rc) {
		fprintf(stderr, "ksearch: %s\n", e.msg[0] ? e.msg : ks_strerror(rc));
		ks_buf_release(&b);
		return KS_EXIT_USAGE;
	}
	rc = ks_cli_print_buf("spec", &b);
	ks_buf_release(&b);
	return rc;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static int do_list(int json)
{
	char **names;
	int n;
	struct ks_error e = {0};
	if (ks_spec_list(&names, &n, &e)) {
		fprintf(stderr, "ksearch: %s\n", e.msg);
		return KS_EXIT_USAGE;
	}
	int rc = KS_EXIT_OK;
	if (json)
		fputs("[", stdout);
	for (int i = 0; i < n; i++) {
		struct ks_spec s;
		if (ks_spec_load(names[i], &s, &e)) {
			fprintf(stderr, "ksearch: %s\n", e.msg);
			rc = KS_EXIT_USAGE;
			continue;
		}
		double bw = s.mem_bandwidth_gbps, f = s.peak_gflops_f32, sm = s.smem_per_block;
		if (json) {
			printf("%s\n  {\"name\": ", i ? "," : "");
			json_str(s.name);
			printf(", \"kind\": ");
			json_str(s.kind);
			printf(", \"title\": ");
			json_str(s.title);
			printf(", \"template\": %s}", s.is_template ? "true" : "false");
		} else if (s.is_template)
			printf("%-10s %-4s %-44s (template, filled by 'spec detect')\n", s.name,
			       s.kind, s.title);
		else
			printf("%-10s %-4s %-44s %7.0f GB/s %8.1f TFLOPS f32 %4.0f KiB smem\n",
			       s.name, s.kind, s.title, bw, f / 1000, sm / 1024);
		ks_spec_release(&s);
	}
	if (json)
		fputs("\n]\n", stdout);
	ks_spec_list_free(names, n);
	return rc;
}

/* --save's file can be written (checked before detection, which takes seconds): -1 after
 * saying why */
static int save_target_ok(const char *path)
{
	struct stat st;
	char dir[4096];
	const char *slash = strrchr(path, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
		 slash ? path : ".");
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "ksearch: --save '%s': a directory; name a file (NAME.yaml)\n", path);
		return -1;
	}
	if (access(dir, W_OK)) {
		fprintf(stderr, "ksearch: --save '%s': cannot write in '%s': %s\n", path, dir,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* on stderr, after a host detection: where each measured roof came from, and what this
 * detection measured where an earlier, higher figure stands */
static void print_roofs(const struct ks_spec *s, const struct ks_detect_opts *o)
{
	const struct {
		const char *field, *unit;
		double now;
		const struct ks_spec_measure *probe;
	} figs[] = {{"mem_bandwidth_gbps", "GB/s", o->bw_gbps, &o->bw},
		    {"peak_gflops_f32", "GFLOP/s", o->fma_gflops, &o->fma}};
	for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++) {
		const struct ks_spec_measure *m = ks_spec_measure_of(s, figs[i].field);
		double v;
		char text[512];
		if (!m || ks_spec_field(s, figs[i].field, &v))
			continue;
		ks_spec_measure_text(m, (double)time(NULL), text, sizeof(text));
		fprintf(stderr, "%s %.4g %s: %s\n", figs[i].field, v, figs[i].unit, text);
		if (m->from_cache) {
			ks_spec_measure_text(figs[i].probe, 0, text, sizeof(text));
			fprintf(stderr, "  this detection: %.4g %s, %s\n", figs[i].now, figs[i].unit,
				text);
		}
	}
	if (o->cache_path[0])
		fprintf(stderr, "best figures of this machine: %s%s\n", o->cache_path,
			o->fresh ? " (replaced: --fresh)" : "");
}

/* the spec name a saved file gets: its file name without .yaml, so that 'spec show FILE'
 * loads it back (the loader checks that the two agree) */
static void saved_name(const char *save, char *out, size_t n)
{
	const char *base = strrchr(save, '/') ? strrchr(save, '/') + 1 : save;
	size_t bl = strlen(base);
	if (bl > 5 && !strcmp(base + bl - 5, ".yaml"))
		bl -= 5;
	snprintf(out, n, "%.*s", (int)bl, base);
}

static int do_show(const char *name, int json)
{
	struct ks_spec s;
	struct ks_error e = {0};
	if (ks_spec_load(name, &s, &e)) {
		fprintf(stderr, "ksearch: %s\n", e.msg);
		return KS_EXIT_USAGE;
	}
	int rc = print_spec(&s, json);
	ks_spec_release(&s);
	return rc;
}

/* a backend's device: its spec document, shown through the loader, or saved under the
 * file's name and shown from the file */
static int detect_device(const char *backend, int device, const char *save, int json)
{
	struct ks_buf y = KS_BUF_INIT, doc = KS_BUF_INIT;
	struct ks_spec s;
	struct ks_error e = {0};
	ks_spec_init(&s);
	int rc = ks_backend_detect_spec(backend, device, 1, &y, &e);
	if (!rc && !save && !(rc = ks_spec_load_text(ks_buf_str(&y), &s, &e)))
		goto show;
	if (!rc) {
		char name[256];
		saved_name(save, name, sizeof(name));
		const char *nm = strstr(ks_buf_str(&y), "\nname: "), *eol = nm ? strchr(nm + 1, '\n') : NULL;
		ks_buf_add(&doc, ks_buf_str(&y), nm ? (size_t)(nm - y.data) : y.len);
		if (nm)
			ks_buf_addf(&doc, "\nname: %s%s", name, eol ? eol : "\n");
		if (!(rc = ks_file_write_buf(save, &doc, &e)))
			rc = ks_spec_load(save, &s, &e);
	}
show:
	if (rc)
		fprintf(stderr, "ksearch: %s\n", e.msg);
	else
		rc = print_spec(&s, json);
	ks_spec_release(&s);
	ks_buf_release(&y);
	ks_buf_release(&doc);
	return rc ? KS_EXIT_USAGE : KS_EXIT_OK;
}

/* the host: detected, its roofs' provenance on stderr, saved under the file's name */
static int detect_host(int fresh, const char *save, int json)
{
	struct ks_spec s;
	struct ks_detect_opts dopt = {.fresh = fresh};
	struct ks_error e = {0};
	if (ks_spec_detect_host_ex(&s, &dopt, &e)) {
		fprintf(stderr, "ksearch: %s\n", e.msg);
		return KS_EXIT_USAGE;
	}
	print_roofs(&s, &dopt);
	int rc = 0;
	if (save) {
		char name[256];
		saved_name(save, name, sizeof(name));
		char *own = s.name, *nn = strdup(name);
		s.name = nn ? nn : own;
		struct ks_buf y = KS_BUF_INIT;
		if ((rc = ks_spec_to_yaml(&s, &y, &e)) || (rc = ks_file_write_buf(save, &y, &e)))
			fprintf(stderr, "ksearch: write '%s': %s\n", save, e.msg);
		ks_buf_release(&y);
		if (nn)
			free(own);
	}
	rc = rc ? KS_EXIT_USAGE : print_spec(&s, json);
	ks_spec_release(&s);
	return rc;
}

int cmd_spec(int argc, char **argv)
{
	static const char *const subs[] = {"list", "show", "detect", NULL};
	int json = 0, verbose = 0, device = 0, fresh = 0;
	const char *save = NULL, *backend = NULL;
	const struct ks_opt opts[] = {
		KS_OPT_FLAG("json", &json, "machine-readable output"),
		KS_OPT_STR("save", &save, "FILE", "detect: also write the spec as YAML to FILE"),
		KS_OPT_STR("backend", &backend, "cuda", "detect: a backend's device instead of the host CPU"),
		KS_OPT_INT("device", &device, 0, 4095, "N", "detect: which device of that backend (0)"),
		KS_OPT_FLAG("fresh", &fresh, "detect: replace the cached best figures with this "
					     "measurement, even when lower"),
		KS_OPT_FLAG("verbose", &verbose, "debug logging"),
		KS_OPT_END,
	};
	const char *pos[3];
	int npos = 0;
	int r = ks_opts_parse(argc, argv, opts, usage_text, about_text, pos, 3, &npos, NULL);
	if (r)
		return r > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	ks_cli_log_init(verbose);
	const char *sub = npos ? pos[0] : "list";
	int known = 0;
	for (int i = 0; subs[i]; i++)
		known |= !strcmp(sub, subs[i]);
	if (!known) {
		ks_cli_unknown_sub("spec", sub, subs);
		goto usage;
	}
	if (!strcmp(sub, "show") && npos != 2) {
		fprintf(stderr, "ksearch: spec show needs one spec: a name from 'ksearch spec list' or "
				"a YAML file\n");
		goto usage;
	}
	if (!strcmp(sub, "show"))
		return do_show(pos[1], json);
	if (npos > 1) {
		fprintf(stderr, "ksearch: spec %s takes no other argument ('%s')\n", sub,
			pos[npos - 1]);
		goto usage;
	}
	if (!strcmp(sub, "list"))
		return do_list(json);
	if (save && save_target_ok(save))
		return KS_EXIT_USAGE;
	if (backend && !ks_backend_on_host(ks_backend_find(backend)))
		return detect_device(backend, device, save, json);
	return detect_host(fresh, save, json);
usage:
	fprintf(stderr, "usage: %s\n", usage_text);
	return KS_EXIT_USAGE;
}
