/* ksearch export RUN_DIR|KERNEL... --to TARGET: found kernels as code for another
 * framework, through the exporter table (include/ksearch/export.h). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "ksearch/export.h"
#include "util/fs.h"

#define MAX_ITEMS 16

static const char usage[] =
	"ksearch export RUN_DIR|KERNEL... --to c|torch|mlx|flashinfer [--task TASK] [--out PATH]";
static const char about[] =
	"Write the kernels a run found (its best kernel and, when other candidates won some\n"
	"workloads by more than the noise, those too, chosen by shape) or kernel files as code\n"
	"for another framework.  A kernel file names its task with --task unless it is a run's\n"
	"best file, whose header says it.  docs/export.md describes each target.\n"
	"Targets:\n"
	"  c           a folder (--out DIR, required): NAME.h with the prototype and the knob\n"
	"              values as #defines, the kernel source(s), NAME_dispatch.c|.cu when several\n"
	"              candidates won, a Makefile building libNAME.a (cc or nvcc), example.c\n"
	"  torch       a Python module: one torch.library op per task (torch.ops.ksearch.NAME),\n"
	"              built with torch.utils.cpp_extension.load_inline; cpu and cuda runs\n"
	"  mlx         a Python module; each function builds mx.fast.cuda_kernel or metal_kernel\n"
	"              with the found body and launch (docs/mlx.md); mlx runs\n"
	"  flashinfer  a flashinfer-bench Solution JSON (main.py::run and the kernel source)\n"
	"One-file targets write to --out FILE or stdout.\n\n"
	"Exit status: 0 written, 2 usage error or a kernel the target cannot take.";

/* write every file of o under dir (made when missing) */
static int write_folder(const char *dir, const struct ks_export_out *o, struct ks_error *e)
{
	int rc = ks_mkdir_p(dir, e);
	for (int i = 0; i < o->nfiles && !rc; i++) {
		char path[PATH_MAX];
		ks_path_join(path, sizeof(path), dir, o->names[i]);
		rc = ks_file_write_atomic(path, o->files[i].data, o->files[i].len, e);
	}
	return rc;
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
	const char *to = NULL, *task_name = NULL, *out_path = NULL;
	const struct ks_opt opts[] = {
		{"to", KS_OPT_STR, &to, "TARGET", "what to write: c, torch, mlx, flashinfer"},
		{"task", KS_OPT_STR, &task_name, "TASK", "the task of kernel files without a run header"},
		{"out", KS_OPT_STR, &out_path, "PATH", "the folder (c) or file to write; one-file targets: stdout without"},
		{NULL, 0, NULL, NULL, NULL},
	};
	const char *pos[MAX_ITEMS];
	int npos = 0;
	int prc = ks_opts_parse(argc, argv, opts, usage, about, pos, MAX_ITEMS, &npos);
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
	static struct ks_export_loaded loaded[MAX_ITEMS];
	struct ks_export_item items[MAX_ITEMS];
	struct ks_export_out out;
	struct ks_error e = {0};
	int rc = KS_EXIT_USAGE, n = 0;
	ks_export_out_init(&out);
	for (; n < npos; n++) {
		if (ks_export_load(pos[n], task_name, &loaded[n], &e)) {
			fprintf(stderr, "ksearch export: %s\n", e.msg);
			n++;
			goto out;
		}
		if (!ks_exporter_takes(ex, loaded[n].backend)) {
			fprintf(stderr, "ksearch export: '%s' was found on backend %s; --to %s takes "
					"kernels of backend%s",
				loaded[n].origin, loaded[n].backend, ex->name,
				ex->backends[1] ? "s " : " ");
			for (int b = 0; ex->backends[b]; b++)
				fprintf(stderr, "%s%s", b ? ", " : "", ex->backends[b]);
			fprintf(stderr, "\n");
			n++;
			goto out;
		}
		items[n] = loaded[n].item;
	}
	if (ex->write(items, n, &out, &e)) {
		fprintf(stderr, "ksearch export: %s\n", e.msg);
		goto out;
	}
	if (ex->folder) {
		if (write_folder(out_path, &out, &e)) {
			fprintf(stderr, "ksearch export: %s\n", e.msg);
			goto out;
		}
		fprintf(stderr, "wrote %s/ (%d files; %d kernel%s, target %s): make -C %s\n", out_path,
			out.nfiles, n, n == 1 ? "" : "s", ex->name, out_path);
	} else if (out_path) {
		if (ks_file_write_atomic(out_path, out.files[0].data, out.files[0].len, &e)) {
			fprintf(stderr, "ksearch export: %s\n", e.msg);
			goto out;
		}
		fprintf(stderr, "wrote %s (%d kernel%s, target %s)\n", out_path, n, n == 1 ? "" : "s",
			ex->name);
	} else {
		fwrite(out.files[0].data, 1, out.files[0].len, stdout);
	}
	for (int i = 0; i < n; i++)
		if (items[i].nvariants > 1)
			fprintf(stderr, "%s: %d candidates won different workloads: the export chooses by "
					"shape\n",
				items[i].task->name, items[i].nvariants);
	rc = KS_EXIT_OK;
out:
	for (int i = 0; i < n; i++)
		ks_export_loaded_release(&loaded[i]);
	ks_export_out_release(&out);
	return rc;
}
