/* Every knob template shipped under tasks/ parses, and its task loads: a broken template
 * would otherwise only show up when someone runs a search on that task and backend.  Then
 * each task's search space loads per backend, with the host's spec on the cpu and the
 * shipped H200 spec on cuda: the require expressions evaluate and leave feasible
 * configurations.  (The kernels themselves run in tests/cli/t0150-shipped-cpu.sh, t0400.) */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "ksearch/knowledge.h"
#include "ksearch/task.h"
#include "ksearch/template.h"
#include "search/space.h"
#include "tap.h"
#include "util/fs.h"

static void spaces(void)
{
	char **names = NULL;
	int n = 0;
	struct ks_error e = {0};
	int rc = ks_task_list(&names, &n, &e);
	ok(rc == 0 && n >= 5, "shipped tasks: %d", n);
	struct ks_spec host, h200;
	ok(ks_spec_detect_host(&host, &e) == 0, "host spec: %s", e.msg);
	ok(ks_spec_load("h200", &h200, &e) == 0, "h200 spec: %s", e.msg);
	static const struct {
		const char *backend, *ext;
	} be[] = {{"cpu", "c"}, {"cuda", "cu"}};
	for (int i = 0; i < n; i++) {
		struct ks_task *t;
		if (ks_task_load(names[i], &t, &e)) {
			ok(0, "load %s: %s", names[i], e.msg);
			continue;
		}
		for (size_t b = 0; b < sizeof(be) / sizeof(be[0]); b++) {
			char dir[4096];
			snprintf(dir, sizeof(dir), "%s/templates/%s", t->dir, be[b].backend);
			if (!ks_path_exists(dir))
				continue;
			struct ks_search_space sp;
			memset(&sp, 0, sizeof(sp));
			rc = ks_search_space_load(&sp, t, be[b].backend, be[b].ext, b ? &h200 : &host,
						  &e);
			ok(rc == 0, "%s/%s: the search space loads %s", t->name, be[b].backend,
			   rc ? e.msg : "");
			ok(rc || sp.total_feasible > 0,
			   "%s/%s: %ld feasible configurations in %d templates", t->name,
			   be[b].backend, sp.total_feasible, sp.n);
			if (!rc)
				ks_search_space_release(&sp);
		}
		ks_task_free(t);
	}
	ks_spec_release(&host);
	ks_spec_release(&h200);
	ks_strv_free(names, n);
}

int main(void)
{
	const char *roots[] = {"tasks"};
	DIR *d = opendir(roots[0]);
	ok(d != NULL, "tasks/ is readable");
	struct dirent *task;
	int ntemplates = 0;
	while (d && (task = readdir(d))) {
		if (task->d_name[0] == '.')
			continue;
		char dir[512];
		snprintf(dir, sizeof(dir), "tasks/%s", task->d_name);
		struct ks_task *t = NULL;
		struct ks_error e = {0};
		ok(ks_task_load(dir, &t, &e) == 0, "task %s loads %s", task->d_name, e.msg);
		ks_task_free(t);
		const char *backends[] = {"cpu", "cuda"};
		for (int b = 0; b < 2; b++) {
			char tdir[600];
			snprintf(tdir, sizeof(tdir), "%s/templates/%s", dir, backends[b]);
			DIR *td = opendir(tdir);
			struct dirent *f;
			while (td && (f = readdir(td))) {
				if (f->d_name[0] == '.')
					continue;
				char path[1200];
				snprintf(path, sizeof(path), "%s/%s", tdir, f->d_name);
				struct ks_template *tp = NULL;
				struct ks_error te = {0};
				int rc = ks_template_load(path, &tp, &te);
				ok(rc == 0, "template %s parses %s", path, te.msg);
				if (tp) {
					ok(tp->nknobs > 0 && ks_template_size(tp) > 1,
					   "template %s has a design space (%ld configurations)", path,
					   ks_template_size(tp));
					ks_template_free(tp);
				}
				ntemplates++;
			}
			if (td)
				closedir(td);
		}
	}
	if (d)
		closedir(d);
	ok(ntemplates >= 8, "at least two families per shipped task (found %d templates)", ntemplates);
	spaces();
	return tap_done();
}
