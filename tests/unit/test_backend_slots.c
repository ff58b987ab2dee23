/* Every registered backend's capability slots, read through the accessors that fill the
 * defaults (include/ksearch/backend.h): complete, consistent with each other, and the
 * defaults themselves on a backend that fills none of the optional slots (never
 * registered).  Runs from the source root (ctest's working directory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "backend/cuda.h"
#include "ksearch/backend.h"
#include "ksearch/run.h"
#include "ksearch/task.h"
#include "tap.h"
#include "util/fs.h"
#include "util/env.h"

static int list_ok(const char *const *l, int absolute)
{
	for (; l && *l; l++)
		if (!(*l)[0] || (absolute && (*l)[0] != '/'))
			return 0;
	return 1;
}

static void check_backend(const struct ks_backend_i *b, const struct ks_task *t)
{
	const char *n = b->name;
	is_int(b->version, KS_BACKEND_VERSION, "version");
	ok(n && n[0] && b->lang && b->ext && b->runner && b->compile,
	   "%s: name, lang, ext, runner and compile are set", n);
	ok(ks_backend_find(n) == b, "%s: found by its name", n);

	const struct ks_abi *abi = ks_backend_abi(b);
	ok(abi && abi->lang && !strcmp(abi->lang, b->lang), "%s: its ABI's language is its lang (%s)",
	   n, abi && abi->lang ? abi->lang : "none");
	ok(ks_abi_find(n) == abi && ks_abi_find(b->lang) != NULL, "%s: ABI found by backend and language",
	   n);
	int types = 1;
	for (int d = 0; d < KS_NDTYPES; d++)
		types &= abi->ctype[d] && abi->ctype[d][0];
	ok(types, "%s: every dtype has a spelling", n);
	struct ks_buf p = KS_BUF_INIT;
	int rc = ks_abi_prototype(abi, t, &p);
	ok(rc == 0 && strstr(ks_buf_str(&p), t->name), "%s: prototype: %s", n, ks_buf_str(&p));
	ks_buf_reset(&p);
	/* a backend that compiles a shim must get one; one that dispatches itself must not */
	int shim = ks_abi_shim(abi, t, &p);
	ok(abi->no_shim ? shim == KS_EINVAL : shim == 0 && strstr(ks_buf_str(&p), "ks__entry_v1"),
	   "%s: shim %s", n, abi->no_shim ? "refused" : "generated");
	ks_buf_release(&p);

	const struct ks_sandbox_needs *s = ks_backend_sandbox(b);
	ok(s && list_ok(s->read_paths, 1) && list_ok(s->rw_paths, 1) &&
		   list_ok(s->device_prefixes, 0) && list_ok(s->syscalls, 0),
	   "%s: sandbox needs: absolute paths, non-empty names", n);

	const char *ref = ks_backend_device_reference(b);
	char want[64];
	snprintf(want, sizeof(want), "reference.%s", b->ext);
	ok(!ref || !strcmp(ref, want), "%s: a device reference is reference.<ext> (%s)", n,
	   ref ? ref : "none");
	ok(!(ref && ks_backend_on_host(b)), "%s: a host backend has no device reference", n);

	/* spec detection: a backend without the slot says so as data */
	struct ks_buf y = KS_BUF_INIT;
	struct ks_error e = {0};
	if (!b->detect_spec)
		ok(ks_backend_detect_spec(n, 0, 0, &y, &e) == KS_EUNAVAILABLE &&
			   strstr(e.msg, "no device detection"),
		   "%s: no detect_spec: unavailable (%s)", n, e.msg);
	else
		ok(!ks_backend_on_host(b), "%s: detects a device, so it is not the host", n);
	ks_buf_release(&y);
}

/* a backend that fills only what is required: every accessor gives the default */
static void check_defaults(const struct ks_task *t)
{
	const struct ks_backend_i bare = {.version = KS_BACKEND_VERSION, .name = "bare",
					  .lang = "c", .ext = "c", .runner = "ksearch-runner"};
	const struct ks_abi *abi = ks_backend_abi(&bare);
	ok(abi && abi == ks_abi_find("c"), "default ABI: the C ABI");
	struct ks_buf p = KS_BUF_INIT;
	ks_abi_prototype(abi, t, &p);
	is_str(ks_buf_str(&p), "void softmax(const float *x, float *y, int32_t rows, int32_t cols);",
	       "default ABI writes the C prototype");
	ks_buf_release(&p);
	const struct ks_sandbox_needs *s = ks_backend_sandbox(&bare);
	ok(s && !s->unlimited_address_space && !s->read_paths && !s->device_prefixes &&
		   !s->rw_paths && !s->unix_sockets && !s->syscalls,
	   "default sandbox needs: the base rules, address space limited");
	ok(ks_backend_device_reference(&bare) == NULL, "default: no device reference");
	ok(!ks_backend_timing_tolerates_host_load(&bare) &&
		   !ks_backend_timing_tolerates_host_load(NULL),
	   "default: a round's compiles end before its first timing");
	ok(!ks_backend_on_host(&bare) && !ks_backend_on_host(NULL),
	   "default: not on the host (--spec auto asks detect_spec, which is absent)");
	struct ks_buf y = KS_BUF_INIT;
	struct ks_error e = {0};
	ok(ks_backend_detect_spec("no-such-backend", 0, 0, &y, &e) == KS_ENOTFOUND,
	   "detect_spec of an unknown backend: not found (%s)", e.msg);
	ks_buf_release(&y);
}

static void check_languages(const struct ks_task *t)
{
	ok(ks_abi_find("metal") && ks_abi_find("metal")->no_shim, "metal: a language without a backend");
	ok(ks_abi_find("fortran") == NULL && ks_abi_find(NULL) == NULL, "unknown language: none");
	struct ks_buf p = KS_BUF_INIT;
	ok(ks_abi_prototype(NULL, t, &p) == KS_EINVAL && ks_abi_shim(NULL, t, &p) == KS_EINVAL,
	   "no ABI: KS_EINVAL");
	ks_buf_release(&p);
}

/* the cuda backend leaves out a template whose "@cuda arch:" line does not name this GPU's
 * target (KSEARCH_CUDA_ARCH stands in for the GPU), on the shipped wgmma template too */
static void check_cuda_arch_line(void)
{
	const struct ks_backend_i *cu = ks_backend_find("cuda");
	const char *tpl = "/* @ksearch ... @end */\n/* @cuda arch: 90a 100a\n * why */\n";
	char why[256] = "";
	setenv("KSEARCH_CUDA_ARCH", "80", 1);
	ks_env_reload();
	ok(!ks_backend_template_runs(cu, tpl, why, sizeof(why)) && strstr(why, "90a 100a") &&
		   strstr(why, "sm_80"),
	   "sm_80: a 90a/100a template is left out (%s)", why);
	ok(ks_backend_template_runs(cu, "/* no arch line */", why, sizeof(why)),
	   "sm_80: a template without the line runs");
	setenv("KSEARCH_CUDA_ARCH", "sm_90a", 1);
	ks_env_reload();
	ok(ks_backend_template_runs(cu, tpl, why, sizeof(why)), "sm_90a: the template runs");
	setenv("KSEARCH_CUDA_ARCH", "9.0", 1); /* a 9.0 GPU builds for 90a */
	ks_env_reload();
	ok(ks_backend_template_runs(cu, tpl, why, sizeof(why)), "compute capability 9.0: runs");
	setenv("KSEARCH_CUDA_ARCH", "100a", 1);
	ks_env_reload();
	ok(ks_backend_template_runs(cu, tpl, why, sizeof(why)), "sm_100a: runs (named second)");
	struct ks_buf src = KS_BUF_INIT;
	struct ks_error e = {0};
	setenv("KSEARCH_CUDA_ARCH", "100a", 1);
	ks_env_reload();
	if (ok(ks_file_read("tasks/attention/templates/cuda/flash_wgmma.cu", 1 << 20, &src, &e) == 0,
	       "read flash_wgmma.cu (%s)", e.msg)) {
		ok(!ks_backend_template_runs(cu, ks_buf_str(&src), why, sizeof(why)),
		   "flash_wgmma.cu is left out on sm_100a (%s)", why);
		setenv("KSEARCH_CUDA_ARCH", "90a", 1);
		ks_env_reload();
		ok(ks_backend_template_runs(cu, ks_buf_str(&src), why, sizeof(why)),
		   "flash_wgmma.cu runs on sm_90a");
	}
	/* the mlx backend asks the same of its CUDA templates (on MLX's CUDA build; here, with
	 * MLX's CPU build or none, its probe leaves every template in, so the gate is asked
	 * directly) */
	ks_buf_release(&src);
	src = (struct ks_buf)KS_BUF_INIT;
	if (ok(ks_file_read("tasks/attention/templates/mlx/flash_wgmma.cuda.mlx", 1 << 20, &src,
			    &e) == 0,
	       "read flash_wgmma.cuda.mlx (%s)", e.msg)) {
		setenv("KSEARCH_CUDA_ARCH", "80", 1);
		ks_env_reload();
		ok(!ks_cuda_arch_line_runs(ks_buf_str(&src), why, sizeof(why)) &&
			   !strcmp(strstr(why, "\"") ? strstr(why, "\"") : "", "\"@cuda arch: 90a\" only; this GPU builds for sm_80"),
		   "flash_wgmma.cuda.mlx is left out on sm_80 (%s)", why);
		setenv("KSEARCH_CUDA_ARCH", "90a", 1);
		ks_env_reload();
		ok(ks_cuda_arch_line_runs(ks_buf_str(&src), why, sizeof(why)),
		   "flash_wgmma.cuda.mlx runs on sm_90a");
	}
	ks_buf_release(&src);
	unsetenv("KSEARCH_CUDA_ARCH");
	ks_env_reload();
}

int main(void)
{
	struct ks_task *t = NULL;
	struct ks_error e = {0};
	if (!ok(ks_task_load("tests/fixtures/tasks/softmax", &t, &e) == 0, "load softmax (%s)", e.msg))
		return tap_done();
	int n = 0;
	for (const struct ks_backend_i *const *b = ks_backend_list(); *b; b++, n++)
		check_backend(*b, t);
	ok(n >= 2, "%d backends registered", n);
	ok(ks_backend_on_host(ks_backend_find("cpu")) && !ks_backend_on_host(ks_backend_find("cuda")),
	   "cpu runs on the host, cuda on a device");
	ok(!ks_backend_sandbox(ks_backend_find("cpu"))->unlimited_address_space &&
		   ks_backend_sandbox(ks_backend_find("cuda"))->unlimited_address_space,
	   "address space: limited for cpu, not for cuda (as before version 2)");
	/* the quiet-cores rule: host timing never shares a round with its compiles */
	ok(!ks_backend_timing_tolerates_host_load(ks_backend_find("cpu")) &&
		   ks_backend_timing_tolerates_host_load(ks_backend_find("cuda")) &&
		   ks_backend_timing_tolerates_host_load(ks_backend_find("mlx")),
	   "cpu times after its round's compiles; cuda and mlx evaluate while later ones compile");
	/* --jobs default from the on_host capability: more compiles where timing is on a device */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int want = cpus / 2 > 8 ? 8 : cpus / 2 < 2 ? 2 : (int)(cpus / 2);
	is_int(ks_run_default_jobs(ks_backend_find("cpu")), 2, "cpu: 2 proposals per round");
	is_int(ks_run_default_jobs(ks_backend_find("cuda")), want,
	       "cuda: half the cores, 2 to 8 proposals per round");
	check_defaults(t);
	check_languages(t);
	check_cuda_arch_line();
	ks_task_free(t);
	return tap_done();
}
