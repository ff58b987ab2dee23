/* What a task's folder may reach.  ksearch reads a task's files itself, outside any jail,
 * and shows them: YAML errors quote task.yaml, compile errors quote baseline.c, `tasks show`
 * prints README.md.  So a task whose task.yaml links to /etc/shadow, or whose baseline.c
 * includes ../../../etc/shadow, would have ksearch read that file and print it.  A task's
 * files are its own or a sibling task's (a folder next to it holding a task.yaml: the
 * variant tasks include their base task's kernels), never anything else; checked once,
 * when the task loads, for every link in its folder and every `// @ksearch include:`
 * line of a file in it. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "task/task_priv.h"
#include "util/fs.h"

#define FILES_DEPTH 4           /* task/templates/<backend>/x.c is 2 */
#define FILES_MAX 4096          /* entries a task folder may hold (to FILES_DEPTH) */
#define FILES_SCAN_MAX (8 << 20) /* a file larger than this is not a source */

struct files_ctx {
	char dir[PATH_MAX];    /* the task folder, resolved */
	char parent[PATH_MAX]; /* the folder holding it, resolved */
	int seen;
	struct ks_error *e;
};

/* 1 when real (a resolved path) is in the task folder or in a sibling task's */
static int reachable(const struct files_ctx *c, const char *real)
{
	if (ks_path_within(real, c->dir, NULL, 0))
		return 1;
	size_t n = strlen(c->parent);
	n = n == 1 ? 0 : n; /* a task right under "/" */
	if (strncmp(real, c->parent, n) || real[n] != '/')
		return 0;
	char sibling[PATH_MAX], yaml[PATH_MAX + 16];
	snprintf(sibling, sizeof(sibling), "%.*s", (int)strcspn(real + n + 1, "/") + (int)n + 1,
		 real);
	snprintf(yaml, sizeof(yaml), "%s/task.yaml", sibling);
	return ks_path_within(yaml, sibling, NULL, 0) && ks_path_within(real, sibling, NULL, 0);
}

/* what: "'PATH'" (a link) or "PATH:LINE: the file it includes"; to: where it leads */
static int refuse(struct files_ctx *c, const char *what, const char *to)
{
	return ks_error_set(c->e, KS_EINVAL,
			    "%s leads out of the task's folder%s%s%s: a task may use its own files "
			    "and those of its sibling tasks, nothing else (copy the file into the "
			    "task's folder)",
			    what, to[0] ? " (to '" : "", to, to[0] ? "')" : "");
}

/* the include lines of the file at path (a regular file of the task) */
static int check_includes(struct files_ctx *c, const char *path)
{
	struct ks_buf b = KS_BUF_INIT;
	if (ks_file_read(path, FILES_SCAN_MAX, &b, NULL) || !strstr(ks_buf_str(&b), "@ksearch include:")) {
		ks_buf_release(&b);
		return 0;
	}
	char folder[PATH_MAX], target[PATH_MAX * 2], real[PATH_MAX], where[PATH_MAX + 64];
	snprintf(folder, sizeof(folder), "%s", path);
	*strrchr(folder, '/') = '\0';
	int rc = 0, line = 1;
	for (const char *l = ks_buf_str(&b); *l && !rc; line++) {
		size_t n = strcspn(l, "\n"), plen;
		const char *p = ks_source_include_path(l, n, &plen);
		if (p && plen && *p != '/') {
			snprintf(target, sizeof(target), "%s/%.*s", folder, (int)plen, p);
			if (!ks_path_within(target, "/", real, sizeof(real)) || !reachable(c, real)) {
				snprintf(where, sizeof(where), "%s:%d: the file it includes", path,
					 line);
				rc = refuse(c, where, real);
			}
		}
		l += n + (l[n] == '\n');
	}
	ks_buf_release(&b);
	return rc;
}

/* every entry of the folder path, depth levels below the task folder */
static int check_folder(struct files_ctx *c, const char *path, int depth)
{
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int rc = 0;
	struct dirent *de;
	char child[PATH_MAX], real[PATH_MAX], where[PATH_MAX + 4];
	while (!rc && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++c->seen > FILES_MAX) {
			rc = ks_error_set(c->e, KS_ELIMIT, "task folder '%s' holds more than %d files "
					  "and folders: a task is a few files", c->dir, FILES_MAX);
			break;
		}
		if (snprintf(child, sizeof(child), "%s/%s", path, de->d_name) >= (int)sizeof(child))
			continue;
		struct stat st;
		if (lstat(child, &st))
			continue;
		if (S_ISLNK(st.st_mode)) {
			/* a dangling link reads as nothing; one that resolves must stay near */
			if (ks_path_within(child, "/", real, sizeof(real)) && !reachable(c, real)) {
				snprintf(where, sizeof(where), "'%s'", child);
				rc = refuse(c, where, real);
			}
		} else if (S_ISDIR(st.st_mode) && depth < FILES_DEPTH) {
			rc = check_folder(c, child, depth + 1);
		} else if (S_ISREG(st.st_mode) && st.st_size <= FILES_SCAN_MAX) {
			rc = check_includes(c, child);
		}
	}
	closedir(d);
	return rc;
}

int ks_task_files_check(const char *dir, struct ks_error *e)
{
	struct files_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	c->e = e;
	int rc = 0;
	char up[PATH_MAX + 4];
	snprintf(up, sizeof(up), "%s/..", dir);
	if (!ks_path_within(dir, "/", c->dir, sizeof(c->dir)) ||
	    !ks_path_within(up, "/", c->parent, sizeof(c->parent)))
		rc = ks_error_set(e, KS_ENOTFOUND, "task folder '%s': %s", dir, strerror(errno));
	else
		rc = check_folder(c, dir, 0);
	free(c);
	return rc;
}
