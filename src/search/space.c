#include "search/space.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/backend.h"
#include "ksearch/log.h"
#include "util/fs.h"

struct lookup_ctx {
	const struct ks_task *task;
	const struct ks_workload **wl;
	const struct ks_spec *spec;
};

static int lookup(int w, const char *name, size_t len, double *out, void *vctx)
{
	struct lookup_ctx *c = vctx;
	return ks_template_task_name(c->task, w < 0 ? NULL : c->wl[w], c->spec, name, len, out);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ks_search_space_load(struct ks_search_space *sp, const struct ks_task *t,
			 const char *backend, const char *ext, const struct ks_spec *spec,
			 struct ks_error *e)
{
	memset(sp, 0, sizeof(*sp));
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/templates/%s", t->dir, backend);
	DIR *d = opendir(dir);
	if (!d)
		return ks_error_set(e, KS_ENOTFOUND,
				    "task '%s' has no knob templates for backend '%s' (expected %s/*.%s)",
				    t->name, backend, dir, ext);
	char *names[64];
	int nn = 0;
	struct dirent *de;
	size_t el = strlen(ext);
	while ((de = readdir(d)) && nn < 64) {
		size_t l = strlen(de->d_name);
		if (l > el + 1 && de->d_name[l - el - 1] == '.' && !strcmp(de->d_name + l - el, ext))
			names[nn++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, (size_t)nn, sizeof(char *), cmp_str);
	int rc = 0;
	const struct ks_workload *wl[512];
	int nwl = 0;
	for (int i = 0; i < t->nworkloads && nwl < 512; i++)
		if (ks_workload_for_backend(&t->workloads[i], backend))
			wl[nwl++] = &t->workloads[i];
	for (int i = 0; i < t->nchecks && nwl < 512; i++)
		if (ks_workload_for_backend(&t->checks[i], backend))
			wl[nwl++] = &t->checks[i];
	struct lookup_ctx ctx = {t, wl, spec};
	sp->tpl = calloc((size_t)nn + 1, sizeof(*sp->tpl));
	sp->feasible = calloc((size_t)nn + 1, sizeof(*sp->feasible));
	if (!sp->tpl || !sp->feasible) {
		rc = ks_error_set(e, KS_ENOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < nn; i++) {
		char path[PATH_MAX + 256];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		struct ks_template *tp;
		if ((rc = ks_template_load(path, &tp, e)))
			goto out;
		char why[256] = "";
		if (!ks_backend_template_runs(ks_backend_find(backend), tp->source, why, sizeof(why))) {
			ks_info("template '%s' cannot run here (%s); left out of the search", path, why);
			ks_template_free(tp);
			continue;
		}
		struct ks_config_set cs;
		if ((rc = ks_template_enumerate(tp, nwl, lookup, &ctx, &cs, e))) {
			ks_template_free(tp);
			goto out;
		}
		if (cs.n == 0) {
			ks_warn("template '%s' has no feasible configuration here; skipped", path);
			ks_config_set_release(&cs);
			ks_template_free(tp);
			continue;
		}
		sp->tpl[sp->n] = tp;
		sp->feasible[sp->n] = cs;
		sp->total_feasible += cs.n;
		sp->n++;
	}
	if (sp->n == 0 && !rc)
		rc = ks_error_set(e, KS_ENOTFOUND, "no usable knob template in '%s'", dir);
	if (!rc)
		rc = ks_template_family_clash(sp->tpl, sp->n, e);
	sp->space.ntemplates = sp->n;
	sp->space.templates = sp->tpl;
	sp->space.feasible = sp->feasible;
out:
	for (int i = 0; i < nn; i++)
		free(names[i]);
	if (rc)
		ks_search_space_release(sp);
	return rc;
}

void ks_search_space_release(struct ks_search_space *sp)
{
	for (int i = 0; i < sp->n; i++) {
		ks_config_set_release(&sp->feasible[i]);
		ks_template_free(sp->tpl[i]);
	}
	free(sp->tpl);
	free(sp->feasible);
	memset(sp, 0, sizeof(*sp));
}

void ks_search_space_defines(const struct ks_template *t, const int *cfg, struct ks_buf *ident,
			     char defs[][128], const char **list, int max)
{
	int n = 0;
	for (int k = 0; k < t->nknobs && n < max - 1; k++) {
		snprintf(defs[n], 128, "%s=%s", t->knobs[k].name, t->knobs[k].values[cfg[k]]);
		list[n] = defs[n];
		if (ident)
			ks_buf_addf(ident, "%s-D%s", n ? " " : "", defs[n]);
		n++;
	}
	list[n] = NULL;
}

void ks_search_space_knobs_json(const struct ks_template *t, const int *cfg, struct ks_buf *out)
{
	ks_buf_adds(out, "{");
	for (int k = 0; k < t->nknobs; k++)
		ks_buf_addf(out, "%s\"%s\": \"%s\"", k ? ", " : "", t->knobs[k].name,
			    t->knobs[k].values[cfg[k]]);
	ks_buf_adds(out, "}");
}
