/* The exporters compiled into ksearch (include/ksearch/export.h). */
#include <string.h>

#include "export/exporters.h"

static const struct ks_exporter_i *const exporters[] = {
	&ks_exporter_mlx,
	NULL,
};

const struct ks_exporter_i *const *ks_exporter_list(void)
{
	return exporters;
}

const struct ks_exporter_i *ks_exporter_find(const char *name)
{
	for (int i = 0; name && exporters[i]; i++)
		if (!strcmp(exporters[i]->name, name))
			return exporters[i];
	return NULL;
}
