/* A task's Python reference (reference.py): the expected outputs of one workload and seed,
 * computed by python3 in a process of its own.  The inputs are generated here exactly as a
 * runner generates them (ks_init_fill with the same keys and seed), written to an exchange
 * folder with a spec, and the script of pyref_driver.h calls the task's reference() on
 * them.  reference.py is the task's code, as untrusted as a kernel: Python runs inside
 * ksearch-cc-jail, which shows it only the system, the interpreter's own folders, the task
 * (read-only) and the exchange folder (its one writable place), gives it none of ksearch's
 * environment (the API key included), no socket of any kind (--no-sockets: not even a
 * host's UNIX socket) and memory, file-size and CPU limits. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backends.h"
#include "eval/evaluator.h"
#include "eval/pyref_driver.h"
#include "eval/runner_client.h"
#include "util/exe_path.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/env.h"

#define PY_MAX_ROOTS 16

/* the interpreter and the folders it reads, asked once per process */
struct py_env {
	int asked;
	char exe[PATH_MAX];
	int nroots;
	char roots[PY_MAX_ROOTS][PATH_MAX];
};
static struct py_env py;

static const char *python_name(void)
{
	const char *p = ks_env_get()->python;
	return p && *p ? p : "python3";
}

/* sys.executable (a pyenv shim is a script: the real interpreter is what the jail runs;
 * a virtual environment's link stays, it is how the interpreter finds the environment)
 * and the prefixes and sys.path entries its imports read */
static int py_discover(struct ks_error *e)
{
	if (py.asked)
		return py.exe[0] ? 0 : ks_error_set(e, KS_EUNAVAILABLE, "'%s' did not start", python_name());
	py.asked = 1;
	char *argv[] = {(char *)python_name(), "-c",
			"import sys, os\n"
			"venv = sys.prefix != sys.base_prefix\n"
			"print(sys.executable if venv else os.path.realpath(sys.executable))\n"
			"for p in [sys.prefix, sys.base_prefix] + sys.path:\n"
			"    if p and os.path.isabs(p) and os.path.exists(p): print(os.path.realpath(p))\n",
			NULL};
	struct ks_buf out = KS_BUF_INIT;
	struct ks_proc_result res;
	int rc = ks_proc_run(argv, NULL, 30, &out, &res, e);
	if (!rc && (!res.exited || res.code)) {
		rc = ks_error_set(e, KS_EUNAVAILABLE, "'%s' did not start: %.200s", python_name(),
				  ks_buf_str(&out));
	}
	for (char *save = NULL, *l = rc ? NULL : strtok_r(out.data, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		if (!py.exe[0])
			snprintf(py.exe, sizeof(py.exe), "%s", l);
		else if (py.nroots < PY_MAX_ROOTS)
			snprintf(py.roots[py.nroots++], PATH_MAX, "%s", l);
	}
	ks_buf_release(&out);
	if (!rc && !py.exe[0])
		rc = ks_error_set(e, KS_EUNAVAILABLE, "'%s' did not say where it is", python_name());
	return rc;
}

/* spec.txt and the input files of (w, seed) in dir */
static int write_exchange(const struct ks_task *t, const struct ks_workload *w,
			  unsigned long long seed, const char *dir, struct ks_error *e)
{
	struct ks_buf spec = KS_BUF_INIT;
	char path[PATH_MAX];
	int rc = 0;
	for (int i = 0; i < t->nparams; i++)
		ks_buf_addf(&spec, "param %s %s %.17g\n", t->params[i].name,
			    ks_dtype_name(t->params[i].dtype), w->values[i]);
	for (int j = 0; j < t->ntensors && !rc; j++) {
		const struct ks_tensor_decl *d = &t->tensors[j];
		int64_t dims[KS_MAX_DIMS];
		size_t numel;
		if ((rc = ks_workload_shape(t, w, j, dims, &numel, e)))
			break;
		ks_buf_addf(&spec, "%s %s %s ", d->is_output ? "output" : "input", d->name,
			    ks_dtype_name(d->dtype));
		for (int k = 0; k < d->ndim; k++)
			ks_buf_addf(&spec, "%s%lld", k ? "," : "", (long long)dims[k]);
		ks_buf_addf(&spec, "%s t%d.bin\n", d->ndim ? "" : "-", j);
		if (d->is_output)
			continue;
		struct ks_init init;
		if ((rc = ks_init_parse(ks_workload_init(t, w, j), &init, NULL, e)))
			break;
		size_t bytes = numel * ks_dtype_size(d->dtype);
		void *data = malloc(bytes ? bytes : 1);
		if (!data) {
			rc = ks_error_set(e, KS_ENOMEM, "out of memory for input '%s'", d->name);
			break;
		}
		ks_init_fill(&init, d->dtype, data, numel, ks_tensor_key(t, w, j), seed);
		snprintf(path, sizeof(path), "%s/t%d.bin", dir, j);
		rc = ks_file_write_atomic(path, data, bytes, e);
		free(data);
	}
	if (!rc) {
		snprintf(path, sizeof(path), "%s/spec.txt", dir);
		rc = ks_file_write_buf(path, &spec, e);
	}
	if (!rc) {
		snprintf(path, sizeof(path), "%s/driver.py", dir);
		rc = ks_file_write_atomic(path, ks_pyref_driver, strlen(ks_pyref_driver), e);
	}
	ks_buf_release(&spec);
	return rc;
}

/* the outputs in task order, each checked for its size */
static int read_outputs(const struct ks_task *t, const struct ks_workload *w, const char *dir,
			unsigned char *out, size_t out_bytes, struct ks_error *e)
{
	size_t off = 0;
	for (int j = 0; j < t->ntensors; j++) {
		if (!t->tensors[j].is_output)
			continue;
		int64_t dims[KS_MAX_DIMS];
		size_t numel;
		int rc = ks_workload_shape(t, w, j, dims, &numel, e);
		if (rc)
			return rc;
		size_t bytes = numel * ks_dtype_size(t->tensors[j].dtype);
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/t%d.bin", dir, j);
		struct ks_buf b = KS_BUF_INIT;
		rc = ks_file_read(path, bytes + 1, &b, e);
		if (!rc && (b.len != bytes || off + bytes > out_bytes))
			rc = ks_error_set(e, KS_EPROTO, "reference.py wrote %zu bytes of output '%s', expected %zu",
					  b.len, t->tensors[j].name, bytes);
		if (!rc)
			memcpy(out + off, b.data, bytes);
		ks_buf_release(&b);
		if (rc)
			return rc;
		off += bytes;
	}
	return 0;
}

int ks_task_has_pyref(const struct ks_task *t)
{
	char c[PATH_MAX], p[PATH_MAX];
	return !ks_path_join(c, sizeof(c), t->dir, "reference.c") && !ks_path_exists(c) &&
	       !ks_path_join(p, sizeof(p), t->dir, "reference.py") && ks_path_exists(p);
}

/* argv of python3 in ksearch-cc-jail: reads the system, the interpreter's folders and ro
 * (NULL: none), writes rw only; script and args after it */
static int jail_argv(char **argv, int cap, char *jail, size_t jail_n, const char *ro,
		     const char *rw, char *as, char *cpu, char *const script_args[],
		     struct ks_error *e)
{
	int rc = ks_runner_path("ksearch-cc-jail", jail, jail_n, e), n = 0;
	if (rc)
		return rc;
	argv[n++] = jail;
	for (int i = 0; ks_jail_system_ro[i] && n < cap - 40; i++) {
		argv[n++] = "--ro";
		argv[n++] = (char *)ks_jail_system_ro[i];
	}
	for (int i = 0; i < py.nroots && n < cap - 30; i++) {
		argv[n++] = "--ro";
		argv[n++] = py.roots[i];
	}
	if (ro) {
		argv[n++] = "--ro";
		argv[n++] = (char *)ro;
	}
	/* torch reads /dev/urandom when it starts */
	char *more[] = {"--ro", "/proc/cpuinfo", "--ro", "/sys/devices/system/cpu", "--ro",
			"/dev/urandom", "--rw",
			(char *)rw, "--as", as, "--fsize", "17179869184", "--cpu", cpu,
			"--no-sockets", "--", py.exe, "-I", "-B", NULL};
	for (int i = 0; more[i]; i++)
		argv[n++] = more[i];
	for (int i = 0; script_args[i] && n < cap - 1; i++)
		argv[n++] = script_args[i];
	argv[n] = NULL;
	return 0;
}

int ks_python_jailed(const char *ro, const char *rw, char *const script_args[],
		     double timeout_s, size_t mem_bytes, struct ks_buf *log,
		     struct ks_proc_result *res, struct ks_error *e)
{
	int rc = py_discover(e);
	if (rc)
		return rc;
	char *argv[112], jail[PATH_MAX], as[32], cpu[32];
	snprintf(as, sizeof(as), "%zu", mem_bytes);
	snprintf(cpu, sizeof(cpu), "%.0f", timeout_s * 4 + 10);
	if ((rc = jail_argv(argv, 112, jail, sizeof(jail), ro, rw, as, cpu, script_args, e)))
		return rc;
	return ks_proc_run(argv, rw, timeout_s, log, res, e);
}

int ks_pyref_run(const struct ks_task *t, const struct ks_workload *w, unsigned long long seed,
		 double timeout_s, size_t mem_bytes, unsigned char *out, size_t out_bytes,
		 struct ks_error *e)
{
	int rc = py_discover(e);
	if (rc)
		return rc;
	char dir[PATH_MAX], ref[PATH_MAX], driver[PATH_MAX];
	const char *tmp = ks_env_get()->tmpdir;
	snprintf(dir, sizeof(dir), "%s/ksearch-pyref-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return ks_error_set(e, KS_ESYS, "create a folder for reference.py in '%s'", dir);
	char *rdir = realpath(dir, NULL), *rtask = realpath(t->dir, NULL);
	if (rdir)
		snprintf(dir, sizeof(dir), "%s", rdir);
	free(rdir);
	snprintf(ref, sizeof(ref), "%s/reference.py", rtask ? rtask : t->dir);
	snprintf(driver, sizeof(driver), "%s/driver.py", dir);
	if ((rc = write_exchange(t, w, seed, dir, e)))
		goto out;
	char *args[] = {driver, ref, dir, NULL};
	struct ks_buf log;
	ks_buf_init(&log, 16384);
	struct ks_proc_result res;
	if ((rc = ks_python_jailed(rtask ? rtask : t->dir, dir, args, timeout_s, mem_bytes, &log,
				   &res, e)))
		goto out_log;
	if (res.timed_out) {
		rc = ks_error_set(e, KS_ETIMEOUT, "reference.py took longer than %.0f s", timeout_s);
	} else if (!res.exited || res.code) {
		/* the last line is the reason (a traceback ends with the exception) */
		char *s = log.data ? log.data : "";
		size_t len = strlen(s);
		while (len && s[len - 1] == '\n')
			s[--len] = '\0';
		char *last = strrchr(s, '\n');
		rc = ks_error_set(e, res.exited && res.code == 4 ? KS_EUNAVAILABLE : KS_EIO,
				  "reference.py %s %d: %.300s", res.exited ? "exited with" : "got signal",
				  res.code, last ? last + 1 : s);
	} else {
		rc = read_outputs(t, w, dir, out, out_bytes, e);
	}
out_log:
	ks_buf_release(&log);
out:
	free(rtask);
	ks_rm_rf(dir);
	return rc;
}
