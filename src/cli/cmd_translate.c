/* ksearch translate FILE --to metal|cpu|opencl: the CUDA -> target context pack. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ksearch/eval.h"
#include "ksearch/knowledge.h"

static const char *usage_text = "ksearch translate FILE.cu --to metal|cpu|opencl [--spec NAME] "
				"[--from-spec NAME] [--json]";
static const char *about_text =
	"Lists the CUDA primitives FILE uses (with line numbers) and their equivalents on the\n"
	"target, every hard constraint the code would violate on the target spec (shared\n"
	"memory per group, threads per group, SIMD width, fp64, missing features such as\n"
	"wgmma or TMA), bandwidth/compute ratios between the source and target specs, and the\n"
	"target hints that apply.  This is the context an LLM receives.  --spec host detects\n"
	"the local CPU.  Exit status 1 when an error-level constraint is violated.";

static int load_spec(const char *name, struct ks_spec *s, int *have)
{
	struct ks_error e = {0};
	*have = 0;
	if (!name || !*name || !strcmp(name, "none"))
		return 0;
	int rc = !strcmp(name, "host") ? ks_spec_detect_host(s, &e) : ks_spec_load(name, s, &e);
	if (rc) {
		fprintf(stderr, "ksearch: %s\n", e.msg);
		return -1;
	}
	*have = 1;
	return 0;
}

/* default specs: metal -> m3-max, source -> h100 (from the concept map's defaults) */
static const char *default_target_spec(const char *to)
{
	return !strcmp(to, "metal") || !strcmp(to, "mlx") ? "m3-max" : NULL;
}

int cmd_translate(int argc, char **argv)
{
	int json = 0, verbose = 0;
	const char *to = NULL, *spec = NULL, *from = "h100";
	const struct ks_opt opts[] = {
		KS_OPT_STR("to", &to, "TARGET", "metal, cpu or opencl (required)"),
		KS_OPT_STR("spec", &spec, "NAME", "target spec (metal: m3-max by default; host: detect)"),
		KS_OPT_STR("from-spec", &from, "NAME", "source spec for ratios (default h100; none)"),
		KS_OPT_FLAG("json", &json, "machine-readable output"),
		KS_OPT_FLAG("verbose", &verbose, "debug logging"),
		KS_OPT_END,
	};
	const char *pos[1];
	int npos = 0;
	int r = ks_opts_parse(argc, argv, opts, usage_text, about_text, pos, 1, &npos, NULL);
	if (r)
		return r > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	ks_cli_log_init(verbose);
	if (npos != 1 || !to) {
		fprintf(stderr, "ksearch: translate needs %s\nusage: %s\n",
			npos != 1 ? "one CUDA source file" : "a target: --to metal, cpu or opencl",
			usage_text);
		return KS_EXIT_USAGE;
	}
	if (!spec)
		spec = default_target_spec(to);
	/* a regular file without NUL bytes: a folder or a FIFO is an error, not empty input */
	struct ks_buf src = KS_BUF_INIT;
	ks_buf_init(&src, 8u << 20);
	struct ks_error re = {0};
	int rc = KS_EXIT_OK;
	if (ks_kernel_source_read(pos[0], 8u << 20, &src, &re)) {
		fprintf(stderr, "ksearch: %s\n", re.msg);
		rc = KS_EXIT_USAGE;
	}
	struct ks_spec ts, ss;
	int have_t = 0, have_s = 0;
	ks_spec_init(&ts);
	ks_spec_init(&ss);
	if (rc || load_spec(spec, &ts, &have_t) || load_spec(from, &ss, &have_s)) {
		rc = KS_EXIT_USAGE;
		goto out;
	}
	if (!strstr(ks_buf_str(&src), "__global__"))
		fprintf(stderr, "ksearch: note: '%s' defines no __global__ kernel; the pack below "
				"maps only the CUDA primitives found in it\n",
			pos[0]);
	struct ks_translation t;
	struct ks_error e = {0};
	if (ks_translate(ks_buf_str(&src), to, have_t ? &ts : NULL, have_s ? &ss : NULL, &t, &e)) {
		fprintf(stderr, "ksearch: %s\n", e.msg);
		rc = KS_EXIT_USAGE;
		goto out;
	}
	struct ks_buf b = KS_BUF_INIT;
	if (json ? ks_translation_to_json(&t, &b, &e) : ks_translation_to_text(&t, &b)) {
		fprintf(stderr, "ksearch: %s\n", e.msg[0] ? e.msg : "render failed");
		rc = KS_EXIT_USAGE;
	} else if (!(rc = ks_cli_print_buf("translate", &b))) {
		rc = t.nerrors ? KS_EXIT_FAIL : KS_EXIT_OK;
	}
	ks_buf_release(&b);
	ks_translation_release(&t);
out:
	ks_spec_release(&ts);
	ks_spec_release(&ss);
	ks_buf_release(&src);
	return rc;
}
