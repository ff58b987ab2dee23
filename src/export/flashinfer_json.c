/* The flashinfer exporter: a flashinfer-bench Solution (JSON) for one kernel.  flashinfer-bench
 * builds a Solution from its `sources` and calls `spec.entry_point`; ours is main.py::run, the
 * torch module of torch_py.c (value-returning: destination_passing_style false) reading the
 * kernel from its own source entry, so the Solution's definition must name the inputs as the
 * task does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "export/exporters.h"
#include "ksearch/backend.h"

/* named as `report --to flashinfer-trace` names the run's Traces, so that
 * TraceSet.get_solution finds this Solution from its candidate's Traces: the definition's
 * own name (an imported task's flashinfer.json) and "<task>_ksearch_<candidate id>" (a
 * kernel file: "<task>_ksearch_<backend>"); the caller frees *side */
static void fi_names(const struct ks_export_item *it, json_t **side, const char **def,
		     char *name, size_t n)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/flashinfer.json", it->task->dir);
	*side = json_load_file(path, 0, NULL);
	*def = json_string_value(json_object_get(*side, "definition"));
	if (!*def)
		*def = it->task->name;
	long long id = 0;
	const char *label = it->variants[0].label;
	if (label && sscanf(label, "candidate %lld", &id) == 1)
		snprintf(name, n, "%s_ksearch_%lld", it->task->name, id);
	else
		snprintf(name, n, "%s_ksearch_%s", it->task->name, it->backend);
}

static int fi_write(const struct ks_export_item *items, int n, struct ks_export_out *o,
		    struct ks_error *e)
{
	if (n != 1)
		return ks_error_set(e, KS_EINVAL, "a flashinfer-bench Solution holds one kernel, not %d",
				    n);
	const struct ks_export_item *it = &items[0];
	struct ks_buf main_py = KS_BUF_INIT, desc = KS_BUF_INIT;
	int rc = ks_torch_module(it, 1, "kernel", "run", &main_py, e);
	if (rc)
		goto out;
	int cuda = !strcmp(ks_export_ext(it), "cu");
	char name[256];
	const char *def;
	json_t *side;
	fi_names(it, &side, &def, name, sizeof(name));
	ks_buf_addf(&desc, "A %s kernel found by ksearch on backend %s (%s), %s, knobs %s",
		    cuda ? "CUDA" : "C", it->backend,
		    it->origin, it->variants[0].label, it->variants[0].knobs);
	if (it->nvariants > 1)
		ks_buf_addf(&desc, "; %d variants chosen by shape", it->nvariants);
	/* where it comes from and how fast it measured, as sentences of the description */
	struct ks_buf prov = KS_BUF_INIT;
	ks_export_provenance(&prov, it, ". ");
	for (const char *p = ks_buf_str(&prov); *p; p++)
		ks_buf_add(&desc, *p == '\n' ? "" : p, *p != '\n');
	ks_buf_release(&prov);
	json_t *sources = json_array();
	json_array_append_new(sources, json_pack("{s:s, s:s}", "path", "main.py", "content",
						 ks_buf_str(&main_py)));
	for (int v = 0; v < it->nvariants; v++) {
		char file[160];
		struct ks_buf k = KS_BUF_INIT;
		ks_export_kernel_name(it, v, file, sizeof(file));
		ks_export_kernel_source(it, v, &k);
		json_array_append_new(sources,
				      json_pack("{s:s, s:s}", "path", file, "content", ks_buf_str(&k)));
		ks_buf_release(&k);
	}
	json_t *doc = json_pack(
		"{s:s, s:s, s:s, s:s, s:{s:s, s:[s], s:s, s:[s], s:b}, s:o}", "name", name,
		"definition", def, "description", ks_buf_str(&desc), "author", "ksearch",
		"spec", "language", "python", "target_hardware", cuda ? "NVIDIA_GPU" : "CPU",
		"entry_point", "main.py::run", "dependencies", "torch",
		"destination_passing_style", 0, "sources",
		sources);
	char *text = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;
	if (!text)
		rc = ks_error_set(e, KS_ENOMEM, "build the Solution JSON");
	else
		ks_buf_addf(ks_export_out_file(o, "solution.json"), "%s\n", text);
	free(text);
	json_decref(doc);
	json_decref(side);
out:
	ks_buf_release(&main_py);
	ks_buf_release(&desc);
	return rc;
}

const struct ks_exporter_i ks_exporter_flashinfer = {
	.version = KS_EXPORTER_VERSION,
	.name = "flashinfer",
	.backends = ks_export_host_and_cuda,
	.summary = "a flashinfer-bench Solution JSON: main.py::run and the kernel source",
	.write = fi_write,
};
