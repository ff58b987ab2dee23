/* ksearch export RUN_DIR|KERNEL... --to TARGET: found kernels as code for another
 * framework, through the exporter table (include/ksearch/export.h). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "ksearch/backend.h"
#include "ksearch/export.h"
#include "ksearch/task.h"
#include "ksearch/template.h"
#include "util/fs.h"

#define MAX_ITEMS 16

static const char usage[] =
	"ksearch export RUN_DIR|KERNEL... --to TARGET [--task TASK] [--define A=1,B=2] [--out FILE]";
static const char about[] =
	"Write the kernels a run found (RUN_DIR/best.<ext>) or kernel files as code for another\n"
	"framework: one file with one function per task, to --out or stdout.  A kernel file\n"
	"names its task with --task unless it is a run's best file, whose header says it.\n"
	"A knob template (an @ksearch block) is exported with its knobs' defaults, or the\n"
	"values --define gives.\n"
	"Targets:\n"
	"  mlx   a Python module; each function builds mx.fast.cuda_kernel or metal_kernel\n"
	"        with the found body and launch (docs/mlx.md)\n\n"
	"Exit status: 0 written, 2 usage error or a kernel the target cannot take.";

/* the value the list "A=1,B=2" gives name, or NULL */
static const char *define_value(const char *defines, const char *name, char *out, size_t n)
{
	size_t len = strlen(name);
	for (const char *p = defines; p && *p;) {
		size_t tl = strcspn(p, ", ");
		if (tl > len && p[len] == '=' && !strncmp(p, name, len)) {
			snprintf(out, n, "%.*s", (int)(tl - len - 1), p + len + 1);
			return out;
		}
		p += tl;
		p += strspn(p, ", ");
	}
	return NULL;
}

/* A knob template's values (ks_cli_knob_values) baked in as the '#define NAME VALUE' lines
 * a run's best file starts with; other files are left as they are. */
static int bake_knobs(const char *path, struct ks_buf *src, const char *defines,
		      struct ks_error *e)
{
	if (!strstr(ks_buf_str(src), "@ksearch"))
		return 0;
	struct ks_template *t = NULL;
	struct ks_buf vals = KS_BUF_INIT, out = KS_BUF_INIT;
	int rc = ks_cli_knob_values(ks_buf_str(src), path, defines, &vals, e);
	if (!rc)
		rc = ks_template_parse(ks_buf_str(src), src->len, path, &t, e);
	if (rc) {
		ks_buf_release(&vals);
		return rc;
	}
	char val[256];
	for (int k = 0; k < t->nknobs && !rc; k++) {
		const char *v = define_value(ks_buf_str(&vals), t->knobs[k].name, val, sizeof(val));
		if (v)
			rc = ks_buf_addf(&out, "#define %s %s\n", t->knobs[k].name, v);
	}
	if (!rc)
		rc = ks_buf_add(&out, src->data, src->len);
	if (!rc) {
		ks_buf_reset(src);
		rc = ks_buf_add(src, out.data, out.len);
	}
	ks_buf_release(&out);
	ks_buf_release(&vals);
	ks_template_free(t);
	return rc ? ks_error_set(e, rc, "'%s': out of memory", path) : 0;
}

/* the task a run's best file names in its header (" * task softmax, backend mlx, ...") */
static int task_from_header(const char *src, const char *backend, char *out, size_t n,
			    char *got_backend, size_t bn)
{
	const char *p = strstr(src, " * task ");
	char task[128], be[64];
	if (!p || p > src + 4096 || sscanf(p, " * task %127[^,], backend %63[^,]", task, be) != 2)
		return 0;
	snprintf(out, n, "%s", task);
	snprintf(got_backend, bn, "%s", be);
	(void)backend;
	return 1;
}

int cmd_export(int argc, char **argv)
{
	const char *to = NULL, *task_name = NULL, *out_path = NULL, *defines = NULL;
	const struct ks_opt opts[] = {
		{"to", KS_OPT_STR, &to, "TARGET", "what to write: mlx"},
		{"task", KS_OPT_STR, &task_name, "TASK", "the task of kernel files without a run header"},
		{"define", KS_OPT_STR, &defines, "A=1,B=2",
		 "knob values of a template (default: each knob's default)"},
		{"out", KS_OPT_STR, &out_path, "FILE", "write here instead of stdout"},
		{NULL, 0, NULL, NULL, NULL},
	};
	const char *pos[MAX_ITEMS];
	int npos = 0;
	int prc = ks_opts_parse(argc, argv, opts, usage, about, pos, MAX_ITEMS, &npos);
	if (prc)
		return prc > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	const struct ks_exporter_i *ex = to ? ks_exporter_find(to) : NULL;
	if (!ex || npos < 1) {
		fprintf(stderr, "ksearch export: %s\nusage: %s\n",
			!to ? "needs --to TARGET (mlx)" : !ex ? "unknown target (known: mlx)"
							 : "needs RUN_DIR or a kernel file",
			usage);
		return KS_EXIT_USAGE;
	}
	const struct ks_backend_i *be = ks_backend_find(ex->backend);
	struct ks_export_item items[MAX_ITEMS];
	struct ks_task *tasks[MAX_ITEMS] = {0};
	struct ks_buf srcs[MAX_ITEMS];
	char origins[MAX_ITEMS][PATH_MAX];
	struct ks_buf out = KS_BUF_INIT;
	struct ks_error e = {0};
	int rc = KS_EXIT_USAGE, n = 0;
	for (int i = 0; i < npos; i++)
		ks_buf_init(&srcs[i], 4 << 20);
	for (; n < npos; n++) {
		const char *path = pos[n];
		if (ks_is_dir(path)) {
			snprintf(origins[n], sizeof(origins[n]), "%s/best.%s", path, be ? be->ext : "?");
			if (!ks_path_exists(origins[n])) {
				fprintf(stderr, "ksearch export: '%s' has no best.%s: --to %s takes runs of "
						"backend %s that have finished\n",
					path, be ? be->ext : "?", ex->name, ex->backend);
				goto out;
			}
		} else {
			snprintf(origins[n], sizeof(origins[n]), "%s", path);
		}
		if (ks_file_read(origins[n], 4 << 20, &srcs[n], &e) ||
		    bake_knobs(origins[n], &srcs[n], defines, &e)) {
			fprintf(stderr, "ksearch export: %s\n", e.msg);
			goto out;
		}
		char tname[128] = "", got_be[64] = "";
		if (task_from_header(ks_buf_str(&srcs[n]), ex->backend, tname, sizeof(tname), got_be,
				     sizeof(got_be)) &&
		    strcmp(got_be, ex->backend)) {
			fprintf(stderr, "ksearch export: '%s' was found on backend %s; --to %s takes "
					"kernels of backend %s\n",
				origins[n], got_be, ex->name, ex->backend);
			goto out;
		}
		if (task_name)
			snprintf(tname, sizeof(tname), "%s", task_name);
		if (!tname[0]) {
			fprintf(stderr, "ksearch export: '%s' does not say its task: give --task TASK\n",
				origins[n]);
			goto out;
		}
		if (ks_task_load(tname, &tasks[n], &e)) {
			fprintf(stderr, "ksearch export: %s\n", e.msg);
			goto out;
		}
		items[n] = (struct ks_export_item){.task = tasks[n], .source = ks_buf_str(&srcs[n]),
						   .origin = origins[n]};
	}
	if (ex->write(items, n, &out, &e)) {
		fprintf(stderr, "ksearch export: %s\n", e.msg);
		goto out;
	}
	if (out_path) {
		if (ks_file_write_atomic(out_path, out.data, out.len, &e)) {
			fprintf(stderr, "ksearch export: %s\n", e.msg);
			goto out;
		}
		fprintf(stderr, "wrote %s (%d kernel%s, target %s)\n", out_path, n, n == 1 ? "" : "s",
			ex->name);
	} else {
		fwrite(out.data, 1, out.len, stdout);
	}
	rc = KS_EXIT_OK;
out:
	for (int i = 0; i < npos; i++) {
		ks_buf_release(&srcs[i]);
		ks_task_free(tasks[i]);
	}
	ks_buf_release(&out);
	return rc;
}
