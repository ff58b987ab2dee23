/* Every knob template shipped under tasks/ parses, and its task loads: a broken template
 * would otherwise only show up when someone runs a search on that task and backend. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "ksearch/task.h"
#include "ksearch/template.h"
#include "tap.h"

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
	return tap_done();
}
