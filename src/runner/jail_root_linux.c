/* The file system seen inside ksearch-cc-jail on Linux (see jail.h). */
#include "runner/jail.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define JAIL_MAX 160
#define OLD_NAME ".ks-old-root"
#define OLD "/" OLD_NAME /* where the host's root hangs while the new one is filled */

struct jail_entry {
	char path[PATH_MAX];   /* where it appears in the jail: its own (resolved) path */
	char target[PATH_MAX]; /* a link's text ("" for a bind mount) */
	int rw, dir;
};

struct jail_plan {
	struct jail_entry e[JAIL_MAX];
	int n;
	char cwd[PATH_MAX];
};

static void plan_add(struct jail_plan *p, const char *path, const char *target, int rw, int dir)
{
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->e[i].path, path)) {
			p->e[i].rw |= rw;
			return;
		}
	if (p->n == JAIL_MAX)
		return;
	struct jail_entry *x = &p->e[p->n++];
	snprintf(x->path, sizeof(x->path), "%s", path);
	snprintf(x->target, sizeof(x->target), "%s", target ? target : "");
	x->rw = rw;
	x->dir = dir;
}

/* path as given: bound at its resolved path; when path itself is a link (/lib -> usr/lib on
 * a merged /usr), the link is made too, so the names the compiler uses keep working */
static void plan_path(struct jail_plan *p, const char *path, int rw)
{
	char real[PATH_MAX], link[PATH_MAX], abs[PATH_MAX * 2];
	struct stat st;
	if (!realpath(path, real) || stat(real, &st))
		return; /* nothing there: nothing to show */
	plan_add(p, real, NULL, rw, S_ISDIR(st.st_mode));
	ssize_t k = readlink(path, link, sizeof(link) - 1);
	if (k <= 0)
		return;
	link[k] = '\0';
	const char *slash = strrchr(path, '/');
	char folder[PATH_MAX];
	snprintf(folder, sizeof(folder), "%.*s", slash ? (int)(slash - path) : 0, path);
	if (!realpath(folder[0] ? folder : (path[0] == '/' ? "/" : "."), real))
		return;
	snprintf(abs, sizeof(abs), "%s/%s", strcmp(real, "/") ? real : "", slash ? slash + 1 : path);
	if (strlen(abs) < PATH_MAX)
		plan_add(p, abs, link, 0, 0);
}

static int by_length(const void *a, const void *b)
{
	return (int)strlen(((const struct jail_entry *)a)->path) -
	       (int)strlen(((const struct jail_entry *)b)->path);
}

/* the entry already mounted that holds path (NULL: none, path is in the empty root) */
static const struct jail_entry *mounted_over(const struct jail_plan *p, int upto,
					     const char *path)
{
	for (int i = 0; i < upto; i++) {
		size_t n = strlen(p->e[i].path);
		if (!p->e[i].target[0] && !strncmp(path, p->e[i].path, n) &&
		    (path[n] == '/' || n == 1))
			return &p->e[i];
	}
	return NULL;
}

/* mkdir -p in the new root (never inside a bind mount: callers check mounted_over first) */
static int make_dirs(const char *path)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return mkdir(p, 0755) && errno != EEXIST ? -1 : 0;
}

/* MS_RDONLY on a bind mount, keeping the flags a user namespace may not clear */
static void make_readonly(const char *path)
{
	struct statvfs sv;
	unsigned long keep = 0;
	if (!statvfs(path, &sv))
		keep = (sv.f_flag & ST_NOSUID ? MS_NOSUID : 0) | (sv.f_flag & ST_NODEV ? MS_NODEV : 0) |
		       (sv.f_flag & ST_NOEXEC ? MS_NOEXEC : 0) |
		       (sv.f_flag & ST_NOATIME ? MS_NOATIME : 0) |
		       (sv.f_flag & ST_NODIRATIME ? MS_NODIRATIME : 0) |
		       (sv.f_flag & ST_RELATIME ? MS_RELATIME : 0);
	/* best effort: Landlock keeps the folder read-only where the remount is refused */
	(void)mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | keep, NULL);
}

static int place(const struct jail_plan *p, int i, char *why, size_t n)
{
	const struct jail_entry *x = &p->e[i];
	char from[PATH_MAX + sizeof(OLD)], parent[PATH_MAX];
	const struct jail_entry *over = mounted_over(p, i, x->path);
	snprintf(parent, sizeof(parent), "%s", x->path);
	*strrchr(parent, '/') = '\0';
	if (!over && parent[0] && make_dirs(parent))
		goto fail;
	if (x->target[0]) {
		if (!over && symlink(x->target, x->path) && errno != EEXIST)
			goto fail;
		return 0;
	}
	if (!over) {
		int fd = x->dir ? mkdir(x->path, 0755) : open(x->path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			goto fail;
		if (!x->dir && fd >= 0)
			close(fd);
	}
	snprintf(from, sizeof(from), "%s%s", OLD, x->path);
	if (mount(from, x->path, NULL, MS_BIND | MS_REC, NULL))
		goto fail;
	if (!x->rw)
		make_readonly(x->path);
	return 0;
fail:
	snprintf(why, n, "show '%s' in the jail: %s", x->path, strerror(errno));
	return -1;
}

/* a user namespace that maps only the caller's ids, for a caller that is not root */
static int user_namespace(void)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET))
		return -1;
	char map[64];
	int fd, ok = 1;
	const char *files[] = {"/proc/self/setgroups", "/proc/self/uid_map", "/proc/self/gid_map"};
	for (int i = 0; i < 3 && ok; i++) {
		int len = i == 0   ? snprintf(map, sizeof(map), "deny")
			  : i == 1 ? snprintf(map, sizeof(map), "%u %u 1", uid, uid)
				   : snprintf(map, sizeof(map), "%u %u 1", gid, gid);
		fd = open(files[i], O_WRONLY | O_CLOEXEC);
		ok = fd >= 0 && write(fd, map, (size_t)len) == len;
		if (fd >= 0)
			close(fd);
	}
	return ok ? 0 : -1;
}

static int fill_root(struct jail_plan *p, char *why, size_t n)
{
	qsort(p->e, (size_t)p->n, sizeof(p->e[0]), by_length);
	for (int i = 0; i < p->n; i++)
		if (place(p, i, why, n))
			return -1;
	/* the working folder, so relative paths in the compiler's arguments still resolve */
	if (!mounted_over(p, p->n, p->cwd) && strcmp(p->cwd, "/"))
		make_dirs(p->cwd);
	if (umount2(OLD, MNT_DETACH) || rmdir(OLD)) {
		snprintf(why, n, "detach the host's root: %s", strerror(errno));
		return -1;
	}
	(void)mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL);
	if (chdir(p->cwd) && chdir("/")) {
		snprintf(why, n, "chdir: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int ks_jail_root(const char *const *ro, const char *const *rw, char *why, size_t n)
{
	struct jail_plan *p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(why, n, "out of memory");
		return -1;
	}
	int rc = 1;
	why[0] = '\0';
	if (!getcwd(p->cwd, sizeof(p->cwd)))
		snprintf(p->cwd, sizeof(p->cwd), "/");
	for (int i = 0; ro && ro[i]; i++)
		plan_path(p, ro[i], 0);
	for (int i = 0; rw && rw[i]; i++)
		plan_path(p, rw[i], 1);
	plan_add(p, "/dev/null", NULL, 1, 0);
	/* as root the namespace is its own; a user gets one inside a user namespace.  Where
	 * neither is allowed the host's view stays (Landlock's rules still hold) */
	if ((geteuid() == 0 ? unshare(CLONE_NEWNS) : user_namespace()) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=16384,mode=755"))
		goto out; /* a namespace without mount rights (AppArmor's, say): the host's view */
	if (chdir("/tmp") || mkdir(OLD_NAME, 0700) || syscall(SYS_pivot_root, ".", OLD_NAME)) {
		/* nothing moved yet: the host's view again */
		if (chdir(p->cwd) || umount2("/tmp", MNT_DETACH)) {
			snprintf(why, n, "undo a root of its own: %s", strerror(errno));
			rc = -1;
		}
		goto out;
	}
	/* from here on a failure leaves the jail half-built: it must not run anything */
	rc = chdir("/") ? -1 : fill_root(p, why, n);
	if (rc && !why[0])
		snprintf(why, n, "a root of its own: %s", strerror(errno));
out:
	free(p);
	return rc;
}
