/* The library yardstick: the task's library.<ext> (a vendor library's version of the task,
 * OpenBLAS or cuBLAS for matmul) compiled like a kernel and linked against the library that
 * task.yaml's `library` map names for the backend.  A library that is not installed here
 * leaves the yardstick off with a note; it is never an error. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backends.h"
#include "eval/evaluator.h"
#include "eval/runner_client.h"
#include "ksearch/log.h"
#include "util/exe_path.h"
#include "util/fs.h"
#include "util/proc.h"

#define DESCRIBE_MAX 512 /* bytes kept of one answer */

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

/* ---- what the library runs here (task.yaml's describe and cores) ------------------ */

/* 1 when /proc/cpuinfo lists flag for the first CPU ("flags" on x86, "Features" on arm) */
static int cpu_has(const char *flag)
{
	struct ks_buf b = KS_BUF_INIT;
	int has = 0;
	if (!ks_file_read("/proc/cpuinfo", 1 << 20, &b, NULL)) {
		char *save = NULL;
		for (char *l = strtok_r(b.data, "\n", &save); l && !has; l = strtok_r(NULL, "\n", &save)) {
			if (strncmp(l, "flags", 5) && strncmp(l, "Features", 8))
				continue;
			char *w = strchr(l, ':');
			for (char *s2 = NULL, *t = w ? strtok_r(w + 1, " \t", &s2) : NULL; t && !has;
			     t = strtok_r(NULL, " \t", &s2))
				has = !strcmp(t, flag);
			break;
		}
	}
	ks_buf_release(&b);
	return has;
}

/* the first of lib's fit entries whose flag this CPU has (its widest ISA), or NULL */
static const struct ks_task_core_fit *cpu_fit(const struct ks_task_library *lib)
{
	for (int i = 0; i < lib->nfit; i++)
		if (cpu_has(lib->fit[i].flag))
			return &lib->fit[i];
	return NULL;
}

static int core_in(const char *core, const struct ks_task_core_fit *fit)
{
	for (char **c = fit->cores; *c; c++)
		if (!strcasecmp(core, *c))
			return 1;
	return 0;
}

/* probe.c: prints each describe function's answer on a line of its own */
static int probe_write(const struct ks_task_library *lib, const char *dir, struct ks_error *e)
{
	struct ks_buf src = KS_BUF_INIT;
	char path[PATH_MAX + 16];
	ks_buf_adds(&src, "#include <stdio.h>\n");
	for (char **f = lib->describe; *f; f++)
		ks_buf_addf(&src, "extern const char *%s(void);\n", *f);
	ks_buf_adds(&src, "static void say(const char *s)\n{\n\tfputs(\"ks-describe: \", stdout);\n"
			  "\tfor (; s && *s; s++)\n\t\tputchar(*s == '\\n' ? ' ' : *s);\n"
			  "\tputchar('\\n');\n}\nint main(void)\n{\n");
	for (char **f = lib->describe; *f; f++)
		ks_buf_addf(&src, "\tsay(%s());\n", *f);
	ks_buf_adds(&src, "\treturn 0;\n}\n");
	snprintf(path, sizeof(path), "%s/probe.c", dir);
	int rc = ks_file_write_buf(path, &src, e);
	ks_buf_release(&src);
	return rc;
}

/* run argv (the jail's options, then "--", then the program's words in cmd) in dir; the
 * output into out.  0 when the program ran and exited 0 */
static int jailed(const struct ks_task *t, const char *dir, const char *env, const char *cmd,
		  struct ks_buf *out)
{
	char jail[PATH_MAX], words[4096], *argv[160];
	struct ks_error e = {0};
	int n = 0;
	if (ks_runner_path("ksearch-cc-jail", jail, sizeof(jail), &e))
		return -1;
	argv[n++] = jail;
	for (int i = 0; ks_jail_system_ro[i] && n < 60; i++) {
		argv[n++] = "--ro";
		argv[n++] = (char *)ks_jail_system_ro[i];
	}
	char *more[] = {"--ro", t->dir, "--rw", (char *)dir, "--as", "17179869184", "--cpu", "60",
			"--no-sockets", NULL};
	for (int i = 0; more[i]; i++)
		argv[n++] = more[i];
	if (env && *env) {
		argv[n++] = "--env";
		argv[n++] = (char *)env;
	}
	argv[n++] = "--";
	snprintf(words, sizeof(words), "%s", cmd);
	char *save = NULL;
	for (char *w = strtok_r(words, " \t", &save); w && n < 158; w = strtok_r(NULL, " \t", &save))
		argv[n++] = w;
	argv[n] = NULL;
	struct ks_proc_result res;
	ks_buf_reset(out);
	return ks_proc_run(argv, dir, 60, out, &res, &e) || !res.exited || res.code ? -1 : 0;
}

/* the library's answers, run with env ("VAR=VALUE" or ""): the first into core, all of
 * them into info; 0 when the probe ran */
static int probe_run(const struct ks_task *t, const char *dir, const char *env, char *core,
		     size_t ncore, char *info, size_t ninfo)
{
	struct ks_buf out;
	ks_buf_init(&out, 16384);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "%s/probe", dir);
	int rc = jailed(t, dir, env, cmd, &out);
	core[0] = info[0] = '\0';
	char *save = NULL;
	for (char *l = rc || !out.data ? NULL : strtok_r(out.data, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		if (strncmp(l, "ks-describe: ", 13))
			continue;
		l += 13;
		if (!core[0])
			snprintf(core, ncore, "%.*s", (int)strcspn(l, " "), l);
		size_t used = strlen(info);
		snprintf(info + used, ninfo - used, "%s%.*s", used ? "; " : "", DESCRIBE_MAX, l);
	}
	ks_buf_release(&out);
	return rc || !core[0] ? -1 : 0;
}

/* where the library runs a fallback core on this CPU: ask for the one that fits through its
 * variable (y->env), unless the user set it; core is what it runs in the end */
static void fit_core(const struct ks_task *t, const struct ks_task_library *lib,
		     const char *dir, struct ks_yardstick *y, char *core, size_t ncore,
		     char *info, size_t ninfo)
{
	const struct ks_task_core_fit *fit = cpu_fit(lib);
	if (!fit || core_in(core, fit))
		return;
	if (y->env[0]) {
		ks_warn("%s runs its %s core (%s) on this CPU with %s, which its %s core uses: its "
			"timings understate it", lib->name, core, y->env, fit->flag, fit->cores[0]);
		return;
	}
	char was[64], env[sizeof(y->env)], got[64], got_info[1024];
	snprintf(was, sizeof(was), "%s", core);
	snprintf(env, sizeof(env), "%s=%s", lib->core_var, fit->cores[0]);
	if (probe_run(t, dir, env, got, sizeof(got), got_info, sizeof(got_info)) ||
	    !core_in(got, fit)) {
		ks_warn("%s picked its %s core, a fallback on this CPU with %s, and %s does not "
			"change that: its timings understate it", lib->name, was, fit->flag, env);
		return;
	}
	snprintf(y->env, sizeof(y->env), "%s", env);
	snprintf(core, ncore, "%s", got);
	snprintf(info, ninfo, "%s", got_info);
	ks_warn("%s picked its %s core, a fallback on this CPU with %s: timing its %s core "
		"instead (%s; set %s to choose another)", lib->name, was, fit->flag, got, env,
		lib->core_var);
}

/* Ask the library what it runs here (task.yaml's describe) through a small program built and
 * run in the compiler's jail with the flags the yardstick has; the first answer labels the
 * yardstick ("OpenBLAS (SkylakeX)"), every timing of it carries that label.  Best effort:
 * a library that cannot say keeps its plain name, with a note. */
static void library_describe(struct ks_evaluator *ev, const struct ks_task_library *lib,
			     const char *cflags, const char *libs)
{
	struct ks_yardstick *y = &ev->yard[KS_YARD_LIBRARY];
	const char *user = lib->core_var ? getenv(lib->core_var) : NULL;
	if (user && *user && !strchr(user, '='))
		snprintf(y->env, sizeof(y->env), "%s=%s", lib->core_var, user);
	char dir[PATH_MAX], cmd[8192], core[64], info[1024];
	struct ks_error e = {0};
	struct ks_buf out;
	ks_buf_init(&out, 16384);
	snprintf(dir, sizeof(dir), "%s/scratch", ks_cache_root());
	if (ks_mkdir_p(dir, &e) ||
	    snprintf(dir, sizeof(dir), "%s/scratch/run-%d-XXXXXX", ks_cache_root(), (int)getpid()) < 0 ||
	    !mkdtemp(dir) || probe_write(lib, dir, &e)) {
		ks_warn("cannot ask %s what it runs: %s", lib->name, e.msg[0] ? e.msg : "no scratch folder");
		goto out;
	}
	snprintf(cmd, sizeof(cmd), "cc %s probe.c -o probe %s", cflags, libs);
	if (jailed(ev->task, dir, NULL, cmd, &out) ||
	    probe_run(ev->task, dir, y->env, core, sizeof(core), info, sizeof(info))) {
		ks_warn("cannot ask %s what it runs (%s): %.300s", lib->name, lib->describe[0],
			ks_buf_str(&out));
		goto out;
	}
	fit_core(ev->task, lib, dir, y, core, sizeof(core), info, sizeof(info));
	snprintf(y->label, sizeof(y->label), "%s (%s)", lib->name, core);
	ks_info("%s runs: %s%s%s", lib->name, info, y->env[0] ? ", with " : "", y->env);
out:
	ks_buf_release(&out);
	if (dir[0] && strstr(dir, "/scratch/run-"))
		ks_rm_rf(dir);
}

/* the runners get y->env: the library's core, picked or passed on */
static void library_env(struct ks_evaluator *ev, struct ks_yardstick *y)
{
	const int max = (int)(sizeof(ev->env) / sizeof(ev->env[0])) - 1;
	int n = 0;
	while (n < max && ev->env[n])
		n++;
	if (y->env[0] && n < max) {
		ev->env[n++] = y->env;
		ev->env[n] = NULL;
	}
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
	if (lib->describe)
		library_describe(ev, lib, cflags, libs);
	library_env(ev, y);
	ks_info("timing %s (%s) beside the baseline", y->label, file);
	return 0;
}
