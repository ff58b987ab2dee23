/* The assertion checks on the shipped tasks, loaded by the real task loader: every class
 * file applies, the workloads have valid shapes and initialisers, and ks_task_free owns
 * what ks_assertions_apply appended. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/knowledge.h"
#include "ksearch/task.h"
#include "tap.h"

int main(void)
{
	char **names = NULL;
	int n = 0;
	struct ks_error e = {0};
	int rc = ks_task_list(&names, &n, &e);
	ok(rc == 0 && n >= 4, "shipped tasks: %d", n);
	int classes = 0;
	for (int i = 0; i < n; i++) {
		struct ks_task *t;
		if (ks_task_load(names[i], &t, &e)) {
			ok(0, "load %s: %s", names[i], e.msg);
			continue;
		}
		int before = t->nchecks, added = 0;
		struct ks_buf skipped = KS_BUF_INIT;
		ok(ks_assertions_apply_ex(t, &skipped, &added, &e) == 0, "%s: apply: %s", t->name,
		   e.msg);
		if (!ks_assertions_class(t->cls)) {
			is_int(added, 0, "class without assertions adds nothing");
		} else {
			classes++;
			ok(added >= 5, "%s (%s): %d assert checks added%s%s", t->name, t->cls, added,
			   skipped.len ? "; skipped: " : "", ks_buf_str(&skipped));
			is_int(t->nchecks, before + added, "appended after the task's own checks");
		}
		for (int c = before; c < t->nchecks; c++) {
			const struct ks_workload *w = &t->checks[c];
			ok(!strncmp(w->name, "assert:", 7), "%s: %s is prefixed", t->name, w->name);
			int shapes = 1;
			for (int k = 0; k < t->ntensors; k++) {
				int64_t dims[KS_MAX_DIMS];
				size_t numel = 0;
				struct ks_error se = {0};
				if (ks_workload_shape(t, w, k, dims, &numel, &se) || numel < 1) {
					shapes = 0;
					ok(0, "%s %s tensor %s: %s", t->name, w->name,
					   t->tensors[k].name, se.msg);
				}
				const char *init = ks_workload_init(t, w, k);
				struct ks_init in;
				int col = 0;
				if (k < t->ninputs && ks_init_parse(init, &in, &col, &se))
					ok(0, "%s %s: initialiser '%s': %s", t->name, w->name, init,
					   se.msg);
			}
			ok(shapes, "%s %s: every tensor has a valid shape", t->name, w->name);
			struct ks_buf lb = KS_BUF_INIT;
			ks_workload_label(t, w, &lb);
			ok(strstr(ks_buf_str(&lb), w->name) != NULL, "label: %s", ks_buf_str(&lb));
			ks_buf_release(&lb);
		}
		ks_buf_release(&skipped);
		ks_task_free(t);
	}
	ok(classes >= 4, "reduction, matmul, attention and scan tasks all get assertions");
	ks_strv_free(names, n);
	return tap_done();
}
