/* ksearch export RUN_DIR|KERNEL... --to TARGET: found kernels as code for another
 * framework, through the exporter table (include/ksearch/export.h). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "ksearch/export.h"
#include "ksearch/template.h"
#include "util/fs.h"

#define MAX_ITEMS 16

static const char usage[] =
	"ksearch export RUN_DIR|KERNEL... --to c|torch|mlx|flashinfer [--task TASK] [--define A=1,B=2]\n"
	"       [--per-shape] [--out PATH]";
static const char about[] =
	"Write the kernels a run found (its best kernel; with --per-shape, when other candidates\n"
	"won some workloads by more than the noise, those too, chosen by shape) or kernel files\n"
	"as code for another framework.  A kernel file names its task with --task unless it is a run's\n"
	"best file, whose header says it.  A knob template (an @ksearch block) is exported with\n"
	"its knobs' defaults, or the values --define gives.  docs/export.md describes each target.\n"
	"Targets:\n"
	"  c           a folder (--out DIR, required): NAME.h with the prototype and the knob\n"
	"              values as #defines, the kernel source(s), NAME_dispatch.c|.cu choosing by\n"
	"              shape (--per-shape), a Makefile building libNAME.a (cc or nvcc), example.c\n"
	"  torch       a Python module: one torch.library op per task (torch.ops.ksearch.NAME),\n"
	"              built with torch.utils.cpp_extension.load_inline; cpu and cuda runs\n"
	"  mlx         a Python module; each function builds mx.fast.cuda_kernel or metal_kernel\n"
	"              with the found body and launch (docs/mlx.md); mlx runs\n"
	"  flashinfer  a flashinfer-bench Solution JSON (main.py::run and the kernel source)\n"
	"One-file targets write to --out FILE or stdout.\n\n"
	"Exit status: 0 written, 2 usage error or a kernel the target cannot take.";

static int knob_takes(const struct ks_knob *kb, const char *v)
{
	for (int i = 0; i < kb->nvalues; i++)
		if (!strcmp(kb->values[i], v))
			return 1;
	return 0;
}

/* A knob template's values (ks_cli_knob_values) baked in as the '#define NAME VALUE' lines
 * a run's best file starts with, and every knob's value into *knobs as the JSON object a
 * run's store keeps ({"VEC": "8"}), from which the exporters write the header's #defines.
 * Other files are left as they are; --define has nothing to set in them. */
static int bake_knobs(const char *path, struct ks_buf *src, const char *defines, char **knobs,
		      struct ks_error *e)
{
	if (!strstr(ks_buf_str(src), "@ksearch"))
		return defines ? ks_error_set(e, KS_EINVAL,
					      "--define: '%s' is not a knob template (no @ksearch block)",
					      path)
			       : 0;
	struct ks_template *t = NULL;
	struct ks_defines vals;
	struct ks_buf out = KS_BUF_INIT, json = KS_BUF_INIT;
	ks_defines_init(&vals);
	int rc = ks_cli_knob_values(ks_buf_str(src), path, defines, &vals, e);
	if (!rc)
		rc = ks_template_parse(ks_buf_str(src), src->len, path, &t, e);
	if (rc) {
		ks_defines_release(&vals);
		return rc;
	}
	char val[256];
	ks_buf_adds(&json, "{");
	for (int k = 0; k < t->nknobs; k++) {
		const char *name = t->knobs[k].name;
		int i = ks_defines_find(&vals, name);
		const char *v = i >= 0 ? vals.value[i] : NULL;
		if (v)
			ks_buf_addf(&out, "#define %s %s\n", name, v);
		else
			v = ks_defines_in_source(ks_buf_str(src), name, val, sizeof(val));
		if (v && knob_takes(&t->knobs[k], v)) /* a number or an identifier: no escaping */
			ks_buf_addf(&json, "%s\"%s\": \"%s\"", json.len > 1 ? ", " : "", name, v);
	}
	ks_buf_adds(&json, "}");
	ks_buf_add(&out, src->data, src->len);
	if (!(rc = ks_buf_failed(&out)) && !(rc = ks_buf_failed(&json))) {
		ks_buf_reset(src);
		rc = ks_buf_add(src, out.data, out.len);
	}
	if (!rc && !(*knobs = ks_buf_detach(&json, NULL)))
		rc = KS_ENOMEM;
	ks_buf_release(&json);
	ks_buf_release(&out);
	ks_defines_release(&vals);
	ks_template_free(t);
	return rc ? ks_error_set(e, rc, "'%s': out of memory", path) : 0;
}

/* per item: the variants chosen by shape, or the per-shape winners left out */
static void say_shapes(const struct ks_export_loaded *l, int n, int per_shape, const char **pos)
{
	for (int i = 0; i < n; i++)
		if (l[i].item.nvariants > 1)
			fprintf(stderr, "%s: %d candidates won different workloads: the export chooses by "
					"shape\n",
				l[i].task->name, l[i].item.nvariants);
		else if (l[i].shape_wins && !per_shape)
			fprintf(stderr, "%s: another candidate is faster on %d workload%s (ksearch report "
					"'%s', per-shape pick); --per-shape exports them too, chosen by shape\n",
				l[i].task->name, l[i].shape_wins, l[i].shape_wins == 1 ? "" : "s", pos[i]);
}

static void known_targets(char *out, size_t n)
{
	size_t len = 0;
	out[0] = 0;
	for (const struct ks_exporter_i *const *x = ks_exporter_list(); *x && len < n; x++)
		len += (size_t)snprintf(out + len, n - len, "%s%s", len ? ", " : "", (*x)->name);
}

int cmd_export(int argc, char **argv)
{
	const char *to = NULL, *task_name = NULL, *out_path = NULL, *defines = NULL;
	int per_shape = 0;
	const struct ks_opt opts[] = {
		KS_OPT_STR("to", &to, "TARGET", "what to write: c, torch, mlx, flashinfer"),
		KS_OPT_STR("task", &task_name, "TASK",
			   "the task of kernel files without a run header (or of a run whose task "
			   "folder moved)"),
		KS_OPT_STR("define", &defines, "A=1,B=2",
			   "knob values of a template, among its values (default: each knob's default)"),
		KS_OPT_FLAG("per-shape", &per_shape,
			    "a run's per-shape winners too: the entry point picks the kernel by the "
			    "shape (the best for shapes the run did not measure)"),
		KS_OPT_STR("out", &out_path, "PATH",
			   "the folder (c) or file to write; one-file targets: stdout without"),
		KS_OPT_END,
	};
	const char *pos[MAX_ITEMS];
	int npos = 0;
	int prc = ks_opts_parse(argc, argv, opts, usage, about, pos, MAX_ITEMS, &npos, NULL);
	if (prc)
		return prc > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	const struct ks_exporter_i *ex = to ? ks_exporter_find(to) : NULL;
	char known[256];
	known_targets(known, sizeof(known));
	if (!ex || npos < 1 || (ex->folder && !out_path)) {
		char why[512];
		if (!to)
			snprintf(why, sizeof(why), "needs --to TARGET (%s)", known);
		else if (!ex)
			snprintf(why, sizeof(why), "unknown target '%s' (known: %s)", to, known);
		else if (npos < 1)
			snprintf(why, sizeof(why), "needs RUN_DIR or a kernel file");
		else
			snprintf(why, sizeof(why), "--to %s writes a folder: give --out DIR", ex->name);
		fprintf(stderr, "ksearch export: %s\nusage: %s\n", why, usage);
		return KS_EXIT_USAGE;
	}
	/* "found/" and "found" are one folder: say "wrote found/", not "found//" */
	char dir[PATH_MAX];
	if (ex->folder) {
		size_t len = strlen(out_path);
		while (len > 1 && out_path[len - 1] == '/')
			len--;
		snprintf(dir, sizeof(dir), "%.*s", (int)len, out_path);
		out_path = dir;
	}
	static struct ks_export_loaded loaded[MAX_ITEMS];
	struct ks_export_item items[MAX_ITEMS];
	struct ks_export_out out;
	struct ks_error e = {0};
	int rc = KS_EXIT_USAGE, n = 0;
	ks_export_out_init(&out);
	for (; n < npos; n++) {
		if (ks_is_dir(pos[n]) && defines) {
			fprintf(stderr, "ksearch export: --define sets the knobs of a template file; "
					"'%s' is a run folder (its best kernel has its values)\n",
				pos[n]);
			goto out;
		}
		if (!ks_is_dir(pos[n]) && per_shape) {
			fprintf(stderr, "ksearch export: --per-shape takes a run folder (its per-shape "
					"pick); '%s' is a kernel file\n",
				pos[n]);
			goto out;
		}
		if (ks_export_load(pos[n], task_name, per_shape ? KS_EXPORT_PER_SHAPE : 0,
				   &loaded[n], &e) ||
		    (!ks_is_dir(pos[n]) &&
		     bake_knobs(pos[n], &loaded[n].mem[0], defines, &loaded[n].knobs[0], &e))) {
			fprintf(stderr, "ksearch export: %s\n", e.msg);
			n++;
			goto out;
		}
		if (ks_exporter_check(ex, &loaded[n], &e)) {
			fprintf(stderr, "ksearch export: %s\n", e.msg);
			n++;
			goto out;
		}
		if (!ks_is_dir(pos[n])) {
			loaded[n].item.variants[0].source = ks_buf_str(&loaded[n].mem[0]);
			if (loaded[n].knobs[0])
				loaded[n].item.variants[0].knobs = loaded[n].knobs[0];
		}
		items[n] = loaded[n].item;
	}
	if (ex->write(items, n, &out, &e)) {
		fprintf(stderr, "ksearch export: %s\n", e.msg);
		goto out;
	}
	if (out_path && ks_export_out_write(&out, out_path, ex->folder, &e)) {
		fprintf(stderr, "ksearch export: %s\n", e.msg);
		goto out;
	}
	if (ex->folder)
		fprintf(stderr, "wrote %s/ (%d files; %d kernel%s, target %s): make -C %s\n", out_path,
			out.nfiles, n, n == 1 ? "" : "s", ex->name, out_path);
	else if (out_path)
		fprintf(stderr, "wrote %s (%d kernel%s, target %s)\n", out_path, n, n == 1 ? "" : "s",
			ex->name);
	else
		fwrite(out.files[0].data, 1, out.files[0].len, stdout);
	say_shapes(loaded, n, per_shape, pos);
	rc = KS_EXIT_OK;
out:
	for (int i = 0; i < n; i++)
		ks_export_loaded_release(&loaded[i]);
	ks_export_out_release(&out);
	return rc;
}
