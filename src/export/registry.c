/* The exporters compiled into ksearch (include/ksearch/export.h), and the output files
 * they fill. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "export/exporters.h"
#include "util/fs.h"

static const struct ks_exporter_i *const exporters[] = {
	&ks_exporter_c,
	&ks_exporter_torch,
	&ks_exporter_mlx,
	&ks_exporter_flashinfer,
	NULL,
};

const char *const ks_export_host_and_cuda[] = {"cpu", "cuda", NULL};

int ks_export_one_per_task(const struct ks_export_item *items, int n, const char *what,
			   struct ks_error *e)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (!strcmp(items[j].task->name, items[i].task->name))
				return ks_error_set(e, KS_EINVAL, "two kernels for task '%s' (%s, %s): "
								  "one %s per task",
						    items[i].task->name, items[j].origin,
						    items[i].origin, what);
	return 0;
}

const struct ks_exporter_i *const *ks_exporter_list(void)
{
	return exporters;
}

const struct ks_exporter_i *ks_exporter_find(const char *name)
{
	const struct ks_exporter_i *const *x = exporters;
	while (name && *x && strcmp((*x)->name, name))
		x++;
	return name ? *x : NULL;
}

int ks_exporter_takes(const struct ks_exporter_i *ex, const char *backend)
{
	for (const char *const *b = ex->backends; b && *b && backend; b++)
		if (!strcmp(*b, backend))
			return 1;
	return 0;
}

int ks_exporter_check(const struct ks_exporter_i *ex, const struct ks_export_loaded *l,
		      struct ks_error *e)
{
	char list[128] = "";
	size_t len = 0;
	if (ks_exporter_takes(ex, l->backend))
		return 0;
	for (int b = 0; ex->backends[b] && len < sizeof(list); b++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", b ? ", " : "",
					ex->backends[b]);
	return ks_error_set(e, KS_EINVAL, "'%s' was found on backend %s; --to %s takes kernels of "
					  "backend%s %s",
			    l->origin, l->backend, ex->name, ex->backends[1] ? "s" : "", list);
}

int ks_export_out_write(const struct ks_export_out *o, const char *path, int folder,
			struct ks_error *e)
{
	if (!folder)
		return ks_file_write_buf(path, &o->files[0], e);
	int rc = ks_mkdir_p(path, e);
	for (int i = 0; i < o->nfiles && !rc; i++) {
		char file[PATH_MAX];
		ks_path_join(file, sizeof(file), path, o->names[i]);
		rc = ks_file_write_buf(file, &o->files[i], e);
	}
	return rc;
}

void ks_export_out_init(struct ks_export_out *o)
{
	memset(o, 0, sizeof(*o));
}

void ks_export_out_release(struct ks_export_out *o)
{
	for (int i = 0; i < o->nfiles; i++)
		ks_buf_release(&o->files[i]);
	o->nfiles = 0;
}

struct ks_buf *ks_export_out_file(struct ks_export_out *o, const char *name)
{
	if (o->nfiles == KS_EXPORT_MAX_FILES)
		return NULL;
	snprintf(o->names[o->nfiles], sizeof(o->names[0]), "%s", name);
	ks_buf_init(&o->files[o->nfiles], (size_t)16 << 20);
	return &o->files[o->nfiles++];
}
