/* Compile a kernel plus its generated shim into a shared library, through a
 * content-addressed cache: the same source, shim, compiler, flags and defines never
 * compile twice. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backends.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/proc.h"

int ks_compile_cache_dir(const char *hash, char *out, size_t n, struct ks_error *e)
{
	if (snprintf(out, n, "%s/kernels/%.2s/%s", ks_cache_root(), hash, hash) >= (int)n)
		return ks_error_set(e, KS_ELIMIT, "cache path too long");
	return 0;
}

/* split flags on spaces into argv (no shell quoting: flags are simple words) */
static int push_words(char **argv, int argc, int max, char *flags)
{
	for (char *tok = strtok(flags, " \t"); tok && argc < max; tok = strtok(NULL, " \t"))
		argv[argc++] = tok;
	return argc;
}

int ks_compile_shared(const struct ks_backend_i *be, const char *compiler, const char *flags,
		      const struct ks_compile_req *req, struct ks_artifact *a,
		      struct ks_error *e)
{
	const char *backend = be->name, *ext = be->ext;
	struct ks_buf shim = KS_BUF_INIT;
	int rc = ks_abi_shim(ks_backend_abi(be), req->task, &shim);
	if (rc) {
		ks_buf_release(&shim);
		return ks_error_set(e, rc, "generate the shim for task '%s'", req->task->name);
	}
	struct ks_sha256 h;
	ks_sha256_init(&h);
	ks_sha256_update_str(&h, backend);
	ks_sha256_update_str(&h, compiler);
	ks_sha256_update_str(&h, flags);
	for (const char *const *d = req->defines; d && *d; d++)
		ks_sha256_update_str(&h, *d);
	ks_sha256_update_str(&h, ks_buf_str(&shim));
	ks_sha256_update_str(&h, req->source);
	ks_sha256_hex(&h, a->hash);

	char dir[PATH_MAX], src[PATH_MAX + 32], shimp[PATH_MAX + 32], lib[PATH_MAX + 32],
		ok[PATH_MAX + 32], logp[PATH_MAX + 32];
	if ((rc = ks_compile_cache_dir(a->hash, dir, sizeof(dir), e)))
		goto out;
	snprintf(src, sizeof(src), "%s/kernel.%s", dir, ext);
	snprintf(shimp, sizeof(shimp), "%s/shim.%s", dir, ext);
	snprintf(lib, sizeof(lib), "%s/kernel.so", dir);
	snprintf(ok, sizeof(ok), "%s/ok", dir);
	snprintf(logp, sizeof(logp), "%s/compile.log", dir);
	snprintf(a->path, sizeof(a->path), "%s", lib);
	if (ks_path_exists(ok) && ks_path_exists(lib)) {
		a->ok = 1;
		a->cached = 1;
		ks_file_read(logp, 64 << 10, &a->log, NULL);
		goto out;
	}
	if ((rc = ks_mkdir_p(dir, e)) ||
	    (rc = ks_file_write_atomic(src, req->source, strlen(req->source), e)) ||
	    (rc = ks_file_write_atomic(shimp, shim.data, shim.len, e)))
		goto out;

	char flagcopy[4096], incdir[PATH_MAX + 16], tmplib[PATH_MAX + 48];
	snprintf(flagcopy, sizeof(flagcopy), "%s", flags);
	snprintf(incdir, sizeof(incdir), "-I%s/include", ks_data_root());
	snprintf(tmplib, sizeof(tmplib), "%s.tmp.%d", lib, (int)getpid());
	char *argv[128], defs[64][256];
	int argc = 0, nd = 0;
	argv[argc++] = (char *)compiler;
	argc = push_words(argv, argc, 80, flagcopy);
	argv[argc++] = incdir;
	for (const char *const *d = req->defines; d && *d && nd < 64; d++, nd++) {
		snprintf(defs[nd], sizeof(defs[nd]), "-D%s", *d);
		argv[argc++] = defs[nd];
	}
	argv[argc++] = src;
	argv[argc++] = shimp;
	argv[argc++] = (char *)"-o";
	argv[argc++] = tmplib;
	argv[argc++] = (char *)"-lm";
	argv[argc] = NULL;

	struct ks_proc_result pr;
	ks_buf_reset(&a->log);
	if ((rc = ks_proc_run(argv, dir, 120, &a->log, &pr, e)))
		goto out;
	if (pr.timed_out) {
		ks_buf_adds(&a->log, "\ncompiler timed out after 120 s");
		a->ok = 0;
	} else if (!pr.exited || pr.code != 0) {
		if (pr.exited && pr.code == 127)
			ks_buf_addf(&a->log, "\ncompiler '%s' could not be run", compiler);
		a->ok = 0;
	} else if (rename(tmplib, lib) == 0) {
		a->ok = 1;
		ks_file_write_atomic(logp, ks_buf_str(&a->log), a->log.len, NULL);
		ks_file_write_atomic(ok, "", 0, NULL);
	} else {
		rc = ks_error_set(e, KS_EIO, "rename '%s': %s", tmplib, strerror(errno));
	}
	unlink(tmplib);
out:
	ks_buf_release(&shim);
	return rc;
}
