#include "util/fs.h"
#include "util/env.h"
#include "util/os.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ks_file_read(const char *path, size_t max, struct ks_buf *out, struct ks_error *e)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer before fstat says what it is */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return ks_error_set(e, errno == ENOENT ? KS_ENOTFOUND : KS_EIO, "open '%s': %s",
				    path, strerror(errno));
	const char *what = NULL;
	if (fstat(fd, &st) || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK))
		what = strerror(errno);
	else if (S_ISDIR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
		what = S_ISDIR(st.st_mode)    ? "a directory, not a file"
		       : S_ISFIFO(st.st_mode) ? "a FIFO, not a file"
					      : "a socket, not a file";
	if (what) {
		close(fd);
		return ks_error_set(e, KS_EIO, "read '%s': %s", path, what);
	}
	ks_buf_reset(out);
	if (out->cap == 0 || out->cap > max)
		out->cap = max;
	char chunk[65536];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return ks_error_set(e, KS_EIO, "read '%s': %s", path, strerror(errno));
		}
		if (n == 0)
			break;
		if (ks_buf_add(out, chunk, (size_t)n)) {
			close(fd);
			return ks_error_set(e, KS_ELIMIT, "read '%s': larger than %zu bytes", path,
					    max);
		}
	}
	close(fd);
	if (ks_buf_grow(out, 0) == 0 && out->data)
		out->data[out->len] = '\0';
	else if (!out->data && ks_buf_add(out, "", 0))
		return ks_error_set(e, KS_ENOMEM, "read '%s': out of memory", path);
	return 0;
}

int ks_file_write_atomic(const char *path, const void *data, size_t len, struct ks_error *e)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return ks_error_set(e, KS_ELIMIT, "path too long '%s'", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return ks_error_set(e, KS_EIO, "create '%s': %s", tmp, strerror(errno));
	const char *p = data;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int err = errno;
			close(fd);
			unlink(tmp);
			return ks_error_set(e, KS_EIO, "write '%s': %s", tmp, strerror(err));
		}
		p += n;
		len -= (size_t)n;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		int err = errno;
		unlink(tmp);
		return ks_error_set(e, KS_EIO, "write '%s': %s", path, strerror(err));
	}
	return 0;
}

int ks_file_write_buf(const char *path, const struct ks_buf *b, struct ks_error *e)
{
	int rc = ks_buf_failed(b);
	if (rc)
		return ks_error_set(e, rc, "'%s' not written: its text could not be built whole (%s)",
				    path, ks_strerror(rc));
	return ks_file_write_atomic(path, ks_buf_str(b), b->len, e);
}

int ks_mkdir_p(const char *path, struct ks_error *e)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return ks_error_set(e, KS_ELIMIT, "path too long '%s'", path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return ks_error_set(e, KS_EIO, "mkdir '%s': %s", p, strerror(errno));
		*s = '/';
	}
	if (mkdir(p, 0755) != 0 && errno != EEXIST)
		return ks_error_set(e, KS_EIO, "mkdir '%s': %s", p, strerror(errno));
	if (!ks_is_dir(p))
		return ks_error_set(e, KS_EIO, "mkdir '%s': exists and is not a directory", p);
	return 0;
}

/* Removing a tree, which a kernel may have left in its scratch folder: every step is taken
 * relative to an open directory, never through a path (so neither depth nor PATH_MAX
 * matters), never follows a link, and holds at most RM_DEPTH directories open.  A folder
 * found deeper than that is moved up to the top of the tree and removed from there, so
 * memory and descriptors stay bounded however deep the tree is. */
#define RM_DEPTH 32

struct rm_level {
	DIR *d;
	char name[NAME_MAX + 1]; /* this level's name in the level above */
};

/* the directory name in parent, opened for removing what it holds (a folder the kernel
 * made unreadable is made readable first: it is ours to remove) */
static DIR *rm_open(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES && !fchmodat(parent, name, 0700, 0))
		fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d && fd >= 0)
		close(fd);
	return d;
}

/* move the folder name of parent to the top level under a fresh name: 0 when moved */
static int rm_hoist(int parent, const char *name, int top, unsigned long *seq)
{
	char fresh[64];
	for (int tries = 0; tries < 1000; tries++) {
		snprintf(fresh, sizeof(fresh), ".ks-rm-%lu", (*seq)++);
		if (!ks_os_rename_noreplace(parent, name, top, fresh))
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

/* remove everything under the open directory lv[0].d; -1 when something stayed */
static int rm_contents(struct rm_level *lv)
{
	int depth = 0, failed = 0, hoisted = 0, top = dirfd(lv[0].d);
	unsigned long seq = 0;
	for (;;) {
		int fd = dirfd(lv[depth].d);
		struct dirent *de = readdir(lv[depth].d);
		if (!de && depth == 0) {
			if (!hoisted)
				break;
			/* folders moved up may come after the point the listing had reached */
			hoisted = 0;
			rewinddir(lv[0].d);
			continue;
		}
		if (!de) {
			closedir(lv[depth--].d);
			if (unlinkat(dirfd(lv[depth].d), lv[depth + 1].name, AT_REMOVEDIR))
				failed = 1;
			continue;
		}
		const char *name = de->d_name;
		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		if (de->d_type != DT_DIR && !unlinkat(fd, name, 0))
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN && errno != EISDIR) {
			failed = 1;
			continue;
		}
		if (!unlinkat(fd, name, AT_REMOVEDIR))
			continue;
		if (depth + 1 == RM_DEPTH) {
			if (rm_hoist(fd, name, top, &seq))
				failed = 1;
			else
				hoisted = 1;
			continue;
		}
		DIR *sub = rm_open(fd, name);
		if (!sub) {
			failed = 1;
			continue;
		}
		lv[++depth].d = sub;
		snprintf(lv[depth].name, sizeof(lv[depth].name), "%s", name);
	}
	return failed ? -1 : 0;
}

int ks_rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	struct rm_level *lv = calloc(RM_DEPTH, sizeof(*lv));
	if (!lv || !(lv[0].d = rm_open(AT_FDCWD, path))) {
		free(lv);
		return -1;
	}
	int rc = rm_contents(lv);
	closedir(lv[0].d);
	free(lv);
	return rc ? rc : rmdir(path);
}

int ks_path_within(const char *path, const char *dir, char *real, size_t n)
{
	char *rp = realpath(path, NULL), *rd = realpath(dir, NULL);
	int in = 0;
	if (rp && rd) {
		size_t len = strlen(rd);
		/* "/" holds everything; "/a/b" holds "/a/b" and "/a/b/...", not "/a/bc" */
		in = !strncmp(rp, rd, len) &&
		     (rp[len] == '\0' || rp[len] == '/' || (len == 1 && rd[0] == '/'));
	}
	if (real && n)
		snprintf(real, n, "%s", rp ? rp : "");
	free(rp);
	free(rd);
	return in;
}

int ks_path_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

int ks_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int ks_path_join(char *out, size_t n, const char *a, const char *b)
{
	int w;
	if (b[0] == '/' || !a || !a[0])
		w = snprintf(out, n, "%s", b);
	else
		w = snprintf(out, n, "%s%s%s", a, a[strlen(a) - 1] == '/' ? "" : "/", b);
	return w < 0 || (size_t)w >= n ? KS_ELIMIT : 0;
}

int ks_exe_dir(char *out, size_t n)
{
	char exe[PATH_MAX];
	if (ks_os_exe_path(exe, sizeof(exe)))
		return KS_ESYS;
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	return snprintf(out, n, "%s", exe) >= (int)n ? KS_ELIMIT : 0;
}

#ifndef KS_SOURCE_DIR
#define KS_SOURCE_DIR ""
#endif

const char *ks_data_root(void)
{
	static char root[PATH_MAX];
	if (root[0])
		return root;
	const char *env = ks_env_get()->home;
	char probe[PATH_MAX + 32];
	if (env && env[0]) {
		snprintf(root, sizeof(root), "%s", env);
		return root;
	}
	char exe[PATH_MAX];
	if (ks_exe_dir(exe, sizeof(exe)) == 0) {
		/* installed layout: <prefix>/bin/ksearch with <prefix>/share/ksearch */
		snprintf(probe, sizeof(probe), "%s/../share/ksearch/tasks", exe);
		if (ks_is_dir(probe)) {
			snprintf(probe, sizeof(probe), "%s/../share/ksearch", exe);
			goto resolved;
		}
		/* build tree inside the source tree: <src>/build/ksearch */
		snprintf(probe, sizeof(probe), "%s/../tasks", exe);
		if (ks_is_dir(probe)) {
			snprintf(probe, sizeof(probe), "%s/..", exe);
			goto resolved;
		}
	}
	snprintf(root, sizeof(root), "%s", KS_SOURCE_DIR[0] ? KS_SOURCE_DIR : ".");
	return root;
resolved:
	/* without the "..": paths in messages read /src/tasks/x, not /src/build/../tasks/x */
	if (!realpath(probe, root))
		snprintf(root, sizeof(root), "%s", probe);
	return root;
}

const char *ks_cache_root(void)
{
	static char root[PATH_MAX];
	if (root[0])
		return root;
	const char *env = ks_env_get()->cache;
	const char *xdg = ks_env_get()->xdg_cache_home;
	const char *home = ks_env_get()->user_home;
	if (env && env[0])
		snprintf(root, sizeof(root), "%s", env);
	else if (xdg && xdg[0])
		snprintf(root, sizeof(root), "%s/ksearch", xdg);
	else if (home && home[0])
		snprintf(root, sizeof(root), "%s/.cache/ksearch", home);
	else
		snprintf(root, sizeof(root), "/tmp/ksearch-cache-%d", (int)getuid());
	return root;
}
