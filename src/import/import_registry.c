/* The importers' table (contract in include/ksearch/import.h). */
#include <stdio.h>
#include <string.h>

#include "import/import_impl.h"
#include "ksearch/suggest.h"

static const struct ks_importer_i *const importers[] = {
	&ks_importer_flashinfer,
	&ks_importer_kernelbench,
	NULL,
};

const struct ks_importer_i *const *ks_importer_list(void)
{
	return importers;
}

int ks_importer_get(const char *name, const struct ks_importer_i **out, struct ks_error *e)
{
	const char *names[8];
	int n = 0;
	for (int i = 0; importers[i]; i++) {
		if (!strcmp(importers[i]->name, name)) {
			*out = importers[i];
			return 0;
		}
		names[n++] = importers[i]->name;
	}
	const char *near = ks_suggest(name, names, n);
	for (int i = 0; !near && *name && i < n; i++) /* "flashinfer": a prefix of the name */
		if (!strncmp(names[i], name, strlen(name)))
			near = names[i];
	char known[256] = "", near_txt[96] = "";
	for (int i = 0, k = 0; i < n && k < (int)sizeof(known); i++)
		k += snprintf(known + k, sizeof(known) - (size_t)k, "%s%s", i ? ", " : "", names[i]);
	if (near)
		snprintf(near_txt, sizeof(near_txt), "; did you mean '%s'?", near);
	return ks_error_set(e, KS_ENOTFOUND, "unknown problem format '%s' (known: %s)%s", name,
			    known, near_txt);
}
