/* Compile a kernel plus its generated shim into a shared library, through a
 * content-addressed cache: the same source, shim, compiler, flags and defines never
 * compile twice. */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/backends.h"
#include "ksearch/cache.h"
#include "util/exe_path.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/proc.h"
#include "util/env.h"

int ks_compile_cache_dir(const char *hash, char *out, size_t n, struct ks_error *e)
{
	if (snprintf(out, n, "%s/kernels/%.2s/%s", ks_cache_root(), hash, hash) >= (int)n)
		return ks_error_set(e, KS_ELIMIT, "cache path too long");
	return 0;
}

/* split flags on spaces into argv (no shell quoting: flags are simple words) */
static int push_words(char **argv, int argc, int max, char *flags)
{
	char *save = NULL; /* strtok_r: rounds compile in parallel threads */
	for (char *tok = strtok_r(flags, " \t", &save); tok && argc < max;
	     tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	return argc;
}

/* ---- the compiler's sandbox (ksearch-cc-jail) ------------------------------------- */

#define JAIL_AS ((unsigned long long)2 << 30)     /* cc1 on real kernels stays far below */
#define JAIL_FSIZE ((unsigned long long)256 << 20) /* a shared library of a kernel */
#define JAIL_CPU 120                               /* the compile timeout */

/* what every toolchain reads: system binaries, libraries and headers, and the dynamic
 * linker's configuration (not the rest of /etc) */
const char *const ks_jail_system_ro[] = {
	"/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc/ld.so.cache",
	"/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", NULL};

struct jail {
	char *argv[288];
	int argc;
	char paths[12][PATH_MAX]; /* storage for the paths computed here */
	int npaths;
	const char *roots[96];    /* every readable root, for scrubbing the log */
	int nroots;
};

static void jail_add(struct jail *j, const char *opt, const char *path)
{
	if (j->argc + 2 > 96) /* the rest of argv is the compiler's */
		return;
	j->argv[j->argc++] = (char *)opt;
	j->argv[j->argc++] = (char *)path;
	if (j->nroots < (int)(sizeof(j->roots) / sizeof(j->roots[0])))
		j->roots[j->nroots++] = path;
}

static char *jail_path(struct jail *j)
{
	return j->npaths < (int)(sizeof(j->paths) / sizeof(j->paths[0])) ? j->paths[j->npaths++]
									  : NULL;
}

/* the toolchain's own prefix: /usr/local/cuda-12.8 for .../bin/nvcc (where its headers,
 * libraries and configuration live) */
static void jail_toolchain(struct jail *j, const char *compiler)
{
	char found[PATH_MAX] = "", *p;
	if (strchr(compiler, '/')) {
		snprintf(found, sizeof(found), "%s", compiler);
	} else {
		const char *path = ks_env_get()->path;
		char dirs[8192];
		snprintf(dirs, sizeof(dirs), "%s", path ? path : "/usr/bin:/bin");
		for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d && !found[0];
		     d = strtok_r(NULL, ":", &save)) {
			snprintf(found, sizeof(found), "%s/%s", d, compiler);
			if (access(found, X_OK))
				found[0] = '\0';
		}
	}
	char *real = found[0] ? realpath(found, NULL) : NULL;
	if (!real || !(p = jail_path(j))) {
		free(real);
		return;
	}
	snprintf(p, PATH_MAX, "%s", real);
	free(real);
	for (int up = 0; up < 2; up++) /* .../bin/cc -> ... */
		if ((real = strrchr(p, '/')) && real != p)
			*real = '\0';
	jail_add(j, "--ro", p);
}

/* user flags are trusted: their include and library folders are readable */
static void jail_flag_paths(struct jail *j, const char *flags)
{
	for (const char *f = flags; f && (f = strstr(f, "-")); f++) {
		if ((f[1] != 'I' && f[1] != 'L') || (f != flags && f[-1] != ' ') || f[2] != '/')
			continue;
		char *p = jail_path(j);
		if (!p)
			return;
		size_t n = strcspn(f + 2, " \t");
		snprintf(p, PATH_MAX, "%.*s", (int)(n < PATH_MAX ? n : PATH_MAX - 1), f + 2);
		jail_add(j, "--ro", p);
	}
}

static int jail_start(struct jail *j, const struct ks_compile_req *req, const char *compiler,
		      const char *flags, const char *outdir, struct ks_error *e)
{
	memset(j, 0, sizeof(*j));
	char *exe = jail_path(j);
	int rc = ks_runner_path("ksearch-cc-jail", exe, PATH_MAX, e);
	if (rc)
		return rc;
	j->argv[j->argc++] = exe;
	for (size_t i = 0; ks_jail_system_ro[i]; i++)
		jail_add(j, "--ro", ks_jail_system_ro[i]);
	char *inc = jail_path(j);
	snprintf(inc, PATH_MAX, "%s/include", ks_data_root());
	jail_add(j, "--ro", inc);
	if (req->task && req->task->dir)
		jail_add(j, "--ro", req->task->dir);
	jail_toolchain(j, compiler);
	jail_flag_paths(j, flags);
	jail_flag_paths(j, req->libs);
	jail_add(j, "--rw", outdir);
	static char as[32], fsize[32], cpu[32];
	snprintf(as, sizeof(as), "%llu", JAIL_AS);
	snprintf(fsize, sizeof(fsize), "%llu", JAIL_FSIZE);
	snprintf(cpu, sizeof(cpu), "%d", JAIL_CPU);
	const char *lim[] = {"--as", as, "--fsize", fsize, "--cpu", cpu, "--"};
	for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++)
		j->argv[j->argc++] = (char *)lim[i];
	return 0;
}

static int under_root(const struct jail *j, const char *path, size_t n)
{
	for (int i = 0; i < j->nroots; i++) {
		size_t r = strlen(j->roots[i]);
		if (r <= n && !strncmp(path, j->roots[i], r) && (r == n || path[r] == '/'))
			return 1;
	}
	return 0;
}

/* Compiler output quotes the lines it complains about.  A diagnostic about a file outside
 * the readable folders (possible only where Landlock is missing) loses its quoted text:
 * the line "FILE:LINE:COL: message" stays, the context lines after it go. */
static void scrub_log(const struct jail *j, struct ks_buf *log)
{
	struct ks_buf out = KS_BUF_INIT;
	const char *p = ks_buf_str(log);
	int dropping = 0;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		const char *colon = memchr(p, ':', len);
		if (p[0] == '/' && colon) {
			dropping = !under_root(j, p, (size_t)(colon - p));
			ks_buf_add(&out, p, len + (nl ? 1 : 0));
		} else if (dropping && (p[0] == ' ' || p[0] == '\t')) {
			/* the quoted source and its caret */
		} else {
			dropping = 0;
			ks_buf_add(&out, p, len + (nl ? 1 : 0));
		}
		p += len + (nl ? 1 : 0);
	}
	ks_buf_reset(log);
	ks_buf_add(log, out.data ? out.data : "", out.len);
	ks_buf_release(&out);
}

/* 1 when the library at path is larger than KS_ARTIFACT_MAX_BYTES, saying so in log: a
 * kernel has no use for that much code or data, and it would stay in the kernel cache
 * (issue 39: a 240 MiB kernel.so did) */
static int artifact_too_big(const char *path, struct ks_buf *log)
{
	struct stat st;
	if (stat(path, &st) || (unsigned long long)st.st_size <= KS_ARTIFACT_MAX_BYTES)
		return 0;
	ks_buf_addf(log, "%sthe compiled library is %.1f MiB, more than the %llu MiB a kernel may "
			 "be: keep large tables out of the source (compute them, or make them "
			 "smaller)",
		    log->len ? "\n" : "", (double)st.st_size / (1 << 20),
		    KS_ARTIFACT_MAX_BYTES >> 20);
	return 1;
}

/* text with each fixed-width integer type named by the compiler's own macro
 * (int32_t -> __INT32_TYPE__): the same types, without <stdint.h> */
static void builtin_types(const char *text, struct ks_buf *out)
{
	static const char *const names[][2] = {
		{"int32_t", "__INT32_TYPE__"}, {"int64_t", "__INT64_TYPE__"},
		{"uint16_t", "__UINT16_TYPE__"}, {"uint32_t", "__UINT32_TYPE__"},
		{"int16_t", "__INT16_TYPE__"}, {"uint8_t", "__UINT8_TYPE__"},
		{"int8_t", "__INT8_TYPE__"}, {"uint64_t", "__UINT64_TYPE__"}};
	for (const char *p = text; *p;) {
		size_t k = 0, n = sizeof(names) / sizeof(names[0]);
		while (k < n && (strncmp(p, names[k][0], strlen(names[k][0])) ||
				 (p > text && (p[-1] == '_' || isalnum((unsigned char)p[-1])))))
			k++;
		if (k < n) {
			ks_buf_adds(out, names[k][1]);
			p += strlen(names[k][0]);
		} else {
			ks_buf_add(out, p++, 1);
		}
	}
}

/* The task's entry-point prototype as a header every source is compiled with (-include):
 * a kernel that defines the entry point with other types is a compile error ("conflicting
 * types"), where before it built a library that read its buffers as the wrong type (issue
 * 39).  A C header includes nothing, so the kernel's own feature macros (_GNU_SOURCE) still
 * come before the first system header; a C++ build (cuda) gets the shim's includes and
 * sees an overload instead, which the link then refuses. */
static int prototype_header(const struct ks_backend_i *be, const struct ks_task *t,
			    struct ks_buf *out)
{
	const struct ks_abi *abi = ks_backend_abi(be);
	const int c_abi = !abi->shim_linkage; /* as the shim: C names from a C++ compiler */
	struct ks_buf proto = KS_BUF_INIT;
	int rc = ks_abi_prototype(abi, t, &proto);
	ks_buf_addf(out, "/* generated by ksearch from %s/task.yaml: the entry point every "
			 "kernel defines */\n",
		    t->name);
	if (c_abi) {
		ks_buf_adds(out, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n");
		builtin_types(ks_buf_str(&proto), out);
		ks_buf_adds(out, "\n#ifdef __cplusplus\n}\n#endif\n");
	} else {
		ks_buf_addf(out, "#include <stdint.h>\n%s%s\n",
			    abi->shim_includes ? abi->shim_includes : "", ks_buf_str(&proto));
	}
	ks_buf_release(&proto);
	return rc ? rc : ks_buf_failed(out) ? KS_ELIMIT : 0;
}

/* the cache key of a compile: everything that goes into the library */
static void artifact_hash(const char *backend, const char *compiler, const char *flags,
			  const struct ks_compile_req *req, const char *shim, const char *proto,
			  char *hex)
{
	struct ks_sha256 h;
	ks_sha256_init(&h);
	ks_sha256_update_str(&h, backend);
	ks_sha256_update_str(&h, compiler);
	ks_sha256_update_str(&h, flags);
	for (const char *const *d = req->defines; d && *d; d++)
		ks_sha256_update_str(&h, *d);
	if (req->libs)
		ks_sha256_update_str(&h, req->libs);
	ks_sha256_update_str(&h, shim);
	ks_sha256_update_str(&h, proto);
	ks_sha256_update_str(&h, req->source);
	ks_sha256_hex(&h, hex);
}

int ks_compile_shared(const struct ks_backend_i *be, const char *compiler, const char *flags,
		      const struct ks_compile_req *req, struct ks_artifact *a,
		      struct ks_error *e)
{
	const char *backend = be->name, *ext = be->ext;
	struct ks_buf shim = KS_BUF_INIT, proto = KS_BUF_INIT;
	int rc = ks_abi_shim(ks_backend_abi(be), req->task, &shim);
	if (!rc)
		rc = prototype_header(be, req->task, &proto);
	if (rc) {
		ks_buf_release(&shim);
		ks_buf_release(&proto);
		return ks_error_set(e, rc, "generate the shim for task '%s'", req->task->name);
	}
	artifact_hash(backend, compiler, flags, req, ks_buf_str(&shim), ks_buf_str(&proto), a->hash);

	char dir[PATH_MAX], src[PATH_MAX + 32], shimp[PATH_MAX + 32], lib[PATH_MAX + 32],
		ok[PATH_MAX + 32], logp[PATH_MAX + 32], protop[PATH_MAX + 32];
	if ((rc = ks_compile_cache_dir(a->hash, dir, sizeof(dir), e)))
		goto out;
	snprintf(src, sizeof(src), "%s/kernel.%s", dir, ext);
	snprintf(shimp, sizeof(shimp), "%s/shim.%s", dir, ext);
	snprintf(protop, sizeof(protop), "%s/prototype.h", dir);
	snprintf(lib, sizeof(lib), "%s/kernel.so", dir);
	snprintf(ok, sizeof(ok), "%s/ok", dir);
	snprintf(logp, sizeof(logp), "%s/compile.log", dir);
	snprintf(a->path, sizeof(a->path), "%s", lib);
	if (ks_path_exists(ok) && ks_path_exists(lib)) {
		a->ok = 1;
		a->cached = 1;
		ks_file_read(logp, 64 << 10, &a->log, NULL);
		utimensat(AT_FDCWD, ok, NULL, 0); /* its last use, for the cache's LRU cap */
		goto out;
	}
	if ((rc = ks_mkdir_p(dir, e)) ||
	    (rc = ks_file_write_atomic(src, req->source, strlen(req->source), e)) ||
	    (rc = ks_file_write_buf(shimp, &shim, e)) ||
	    (rc = ks_file_write_buf(protop, &proto, e)))
		goto out;

	char flagcopy[4096], libcopy[1024], incdir[PATH_MAX + 16], tmplib[PATH_MAX + 48];
	snprintf(flagcopy, sizeof(flagcopy), "%s", flags);
	snprintf(libcopy, sizeof(libcopy), "%s", req->libs ? req->libs : "");
	snprintf(incdir, sizeof(incdir), "-I%s/include", ks_data_root());
	snprintf(tmplib, sizeof(tmplib), "%s.tmp.%d", lib, (int)getpid());
	struct jail *jail = calloc(1, sizeof(*jail));
	if (!jail) {
		rc = ks_error_set(e, KS_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = jail_start(jail, req, compiler, flags, dir, e))) {
		free(jail);
		goto out;
	}
	char **argv = jail->argv, defs[64][256];
	int argc = jail->argc, nd = 0;
	argv[argc++] = (char *)compiler;
	argc = push_words(argv, argc, argc + 80, flagcopy);
	argv[argc++] = incdir;
	argv[argc++] = (char *)"-include";
	argv[argc++] = protop;
	for (const char *const *d = req->defines; d && *d && nd < 64; d++, nd++) {
		snprintf(defs[nd], sizeof(defs[nd]), "-D%s", *d);
		argv[argc++] = defs[nd];
	}
	argv[argc++] = src;
	argv[argc++] = shimp;
	argv[argc++] = (char *)"-o";
	argv[argc++] = tmplib;
	argv[argc++] = (char *)"-lm";
	argc = push_words(argv, argc, argc + 16, libcopy);
	argv[argc] = NULL;

	struct ks_proc_result pr;
	ks_buf_reset(&a->log);
	rc = ks_proc_run(argv, dir, JAIL_CPU, &a->log, &pr, e);
	if (!rc)
		scrub_log(jail, &a->log);
	free(jail);
	if (rc)
		goto out;
	if (pr.timed_out) {
		ks_buf_adds(&a->log, "\ncompiler timed out after 120 s");
		a->ok = 0;
	} else if (!pr.exited || pr.code != 0) {
		if (pr.exited && pr.code == 127)
			ks_buf_addf(&a->log, "\ncompiler '%s' could not be run", compiler);
		else if (!pr.exited && (pr.code == SIGKILL || pr.code == SIGXCPU))
			ks_buf_addf(&a->log, "\nthe compiler was stopped by its limits (%llu MiB of "
					     "memory, %d s of CPU)",
				    JAIL_AS >> 20, JAIL_CPU);
		a->ok = 0;
	} else if (artifact_too_big(tmplib, &a->log)) {
		a->ok = 0;
	} else if (rename(tmplib, lib) == 0) {
		a->ok = 1;
		ks_file_write_buf(logp, &a->log, NULL);
		ks_file_write_atomic(ok, "", 0, NULL);
	} else {
		rc = ks_error_set(e, KS_EIO, "rename '%s': %s", tmplib, strerror(errno));
	}
	unlink(tmplib);
out:
	ks_buf_release(&shim);
	ks_buf_release(&proto);
	return rc;
}
