/* The library yardstick: the task's library.<ext> (a vendor library's version of the task,
 * OpenBLAS or cuBLAS for matmul) compiled like a kernel and linked against the library that
 * task.yaml's `library` map names for the backend.  A library that is not installed here
 * leaves the yardstick off with a note; it is never an error. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "backend/backends.h"
#include "eval/evaluator.h"
#include "ksearch/log.h"
#include "util/fs.h"
#include "util/proc.h"

/* `pkg-config --cflags` or `--libs` of pkg into out; 0 when pkg-config knows the package */
static int pkg_config(const char *what, const char *pkg, char *out, size_t n)
{
	char *argv[] = {(char *)"pkg-config", (char *)what, (char *)pkg, NULL};
	struct ks_buf b = KS_BUF_INIT;
	struct ks_proc_result pr;
	struct ks_error e = {0};
	b.cap = 4096;
	int ok = ks_proc_run(argv, NULL, 30, &b, &pr, &e) == 0 && pr.exited && pr.code == 0;
	if (ok) {
		const char *s = ks_buf_str(&b);
		size_t len = strcspn(s, "\n");
		snprintf(out, n, "%.*s", (int)len, s);
	}
	ks_buf_release(&b);
	return ok ? 0 : -1;
}

int ks_eval_library_setup(struct ks_evaluator *ev, struct ks_error *e)
{
	const struct ks_task *t = ev->task;
	struct ks_yardstick *y = &ev->yard[KS_YARD_LIBRARY];
	const struct ks_task_library *lib = ks_task_library_for(t, ev->be->name);
	char file[64], path[PATH_MAX];
	snprintf(file, sizeof(file), "library.%s", ev->be->ext);
	ks_path_join(path, sizeof(path), t->dir, file);
	if (!lib) {
		ks_debug("task '%s' has no library for backend '%s'", t->name, ev->be->name);
		return 0;
	}
	if (!ks_path_exists(path)) {
		ks_warn("task '%s' declares the library '%s' for '%s' but has no %s: it is not "
			"timed", t->name, lib->name, ev->be->name, file);
		return 0;
	}
	snprintf(y->label, sizeof(y->label), "%s", lib->name);
	char cflags[512] = "", libs[1024] = "", flags[2048];
	if (lib->pkg && (pkg_config("--cflags", lib->pkg, cflags, sizeof(cflags)) ||
			 pkg_config("--libs", lib->pkg, libs, sizeof(libs)))) {
		ks_warn("library '%s' is not timed: pkg-config does not know '%s' (not installed "
			"here?)", lib->name, lib->pkg);
		return 0;
	}
	if (lib->libs)
		snprintf(libs + strlen(libs), sizeof(libs) - strlen(libs), " %s", lib->libs);
	snprintf(flags, sizeof(flags), "%s %s",
		 ev->o.cflags ? ev->o.cflags : ev->be->default_flags, cflags);
	struct ks_buf src = KS_BUF_INIT;
	int rc = ks_kernel_source_read(path, 4 << 20, &src, e);
	if (rc) {
		ks_buf_release(&src);
		return rc;
	}
	struct ks_compile_req req = {.task = t, .source = ks_buf_str(&src), .flags = flags,
				     .libs = libs};
	rc = ev->be->compile(&req, &y->art, e);
	ks_buf_release(&src);
	if (rc)
		return rc;
	if (!y->art.ok) {
		/* a missing header or library is the usual reason; the first lines say which */
		ks_warn("library '%s' is not timed: %s does not build here:\n%.600s", lib->name,
			file, ks_buf_str(&y->art.log));
		return 0;
	}
	y->on = 1;
	ks_info("timing %s (%s) beside the baseline", lib->name, file);
	return 0;
}
