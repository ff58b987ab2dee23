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

/* write text to path; on failure say why (strerror) and return -1 */
static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int bad = !f || fputs(text, f) < 0;
	int err = errno;
	if (f && fclose(f) && !bad) {
		bad = 1;
		err = errno;
	}
	if (bad)
		fprintf(stderr, "ksearch: write '%s': %s\n", path, strerror(err));
	return bad ? -1 : 0;
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

int cmd_spec(int argc, char **argv)
{
	int json = 0, verbose = 0, device = 0, fresh = 0;
	const char *save = NULL, *backend = NULL;
	const struct ks_opt opts[] = {
		{"json", KS_OPT_FLAG, &json, NULL, "machine-readable output"},
		{"save", KS_OPT_STR, &save, "FILE", "detect: also write the spec as YAML to FILE"},
		{"backend", KS_OPT_STR, &backend, "cuda", "detect: a backend's device instead of the host CPU"},
		{"device", KS_OPT_INT, &device, "N", "detect: which device of that backend (0)"},
		{"fresh", KS_OPT_FLAG, &fresh, NULL, "detect: replace the cached best figures with "
						     "this measurement, even when lower"},
		{"verbose", KS_OPT_FLAG, &verbose, NULL, "debug logging"},
		{0},
	};
	const char *pos[3];
	int npos = 0;
	int r = ks_opts_parse(argc, argv, opts, usage_text, about_text, pos, 3, &npos);
	if (r)
		return r > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	ks_cli_log_init(verbose);
	const char *sub = npos ? pos[0] : "list";
	struct ks_error e = {0};
	static const char *const subs[] = {"list", "show", "detect", NULL};
	int known = 0;
	for (int i = 0; subs[i]; i++)
		known |= !strcmp(sub, subs[i]);
	if (!known) {
		ks_cli_unknown_sub("spec", sub, subs);
		goto usage;
	}
	if (!strcmp(sub, "list")) {
		if (npos > 1)
			goto extra;
		return do_list(json);
	}
	if (!strcmp(sub, "show")) {
		if (npos != 2) {
			fprintf(stderr, "ksearch: spec show needs one spec: a name from 'ksearch spec "
					"list' or a YAML file\n");
			goto usage;
		}
		struct ks_spec s;
		if (ks_spec_load(pos[1], &s, &e)) {
			fprintf(stderr, "ksearch: %s\n", e.msg);
			return KS_EXIT_USAGE;
		}
		int rc = print_spec(&s, json);
		ks_spec_release(&s);
		return rc;
	}
	if (npos != 1) /* detect */
		goto extra;
	if (save && save_target_ok(save))
		return KS_EXIT_USAGE;
	if (backend && !ks_backend_on_host(ks_backend_find(backend))) {
		/* the device's spec document; saved as is, shown through the spec loader */
		struct ks_buf y = KS_BUF_INIT;
		int rc = KS_EXIT_USAGE;
		struct ks_spec s;
		ks_spec_init(&s);
		if (ks_backend_detect_spec(backend, device, 1, &y, &e)) {
			fprintf(stderr, "ksearch: %s\n", e.msg);
			goto gpu_out;
		}
		if (!save) {
			if (ks_spec_load_text(ks_buf_str(&y), &s, &e)) {
				fprintf(stderr, "ksearch: %s\n", e.msg);
				goto gpu_out;
			}
			rc = print_spec(&s, json);
			goto gpu_out;
		}
		/* a spec's name is its file name (the loader checks it): rename the document */
		const char *base = strrchr(save, '/') ? strrchr(save, '/') + 1 : save;
		size_t bl = strlen(base) > 5 && !strcmp(base + strlen(base) - 5, ".yaml")
				    ? strlen(base) - 5
				    : strlen(base);
		const char *nm = strstr(ks_buf_str(&y), "\nname: ");
		struct ks_buf doc = KS_BUF_INIT;
		if (nm) {
			const char *eol = strchr(nm + 1, '\n');
			ks_buf_add(&doc, y.data, (size_t)(nm - y.data));
			ks_buf_addf(&doc, "\nname: %.*s", (int)bl, base);
			ks_buf_adds(&doc, eol ? eol : "\n");
		} else {
			ks_buf_adds(&doc, ks_buf_str(&y));
		}
		int bad = write_text(save, ks_buf_str(&doc));
		ks_buf_release(&doc);
		if (bad)
			goto gpu_out;
		if (ks_spec_load(save, &s, &e)) {
			fprintf(stderr, "ksearch: %s\n", e.msg);
			goto gpu_out;
		}
		rc = print_spec(&s, json);
	gpu_out:
		ks_spec_release(&s);
		ks_buf_release(&y);
		return rc;
	}
	{
		struct ks_spec s;
		struct ks_detect_opts dopt = {.fresh = fresh};
		if (ks_spec_detect_host_ex(&s, &dopt, &e)) {
			fprintf(stderr, "ksearch: %s\n", e.msg);
			return KS_EXIT_USAGE;
		}
		print_roofs(&s, &dopt);
		int rc = KS_EXIT_OK;
		if (save) {
			/* the file name is the spec name, so `spec show FILE` loads it back */
			const char *b = strrchr(save, '/');
			b = b ? b + 1 : save;
			size_t bl = strlen(b);
			if (bl > 5 && !strcmp(b + bl - 5, ".yaml")) {
				char *nn = strndup(b, bl - 5);
				if (nn) {
					free(s.name);
					s.name = nn;
				}
			}
			struct ks_buf y = KS_BUF_INIT;
			if (ks_spec_to_yaml(&s, &y, &e)) {
				fprintf(stderr, "ksearch: write '%s': %s\n", save, e.msg);
				rc = KS_EXIT_USAGE;
			} else if (write_text(save, ks_buf_str(&y))) {
				rc = KS_EXIT_USAGE;
			}
			ks_buf_release(&y);
		}
		if (!rc)
			rc = print_spec(&s, json);
		ks_spec_release(&s);
		return rc;
	}
extra:
	fprintf(stderr, "ksearch: spec %s takes no other argument ('%s')\n", sub, pos[npos - 1]);
usage:
	fprintf(stderr, "usage: %s\n", usage_text);
	return KS_EXIT_USAGE;
}
