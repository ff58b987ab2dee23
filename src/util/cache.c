/* The cache's contents, sizes, clearing, and the compiled kernels' LRU cap
 * (include/ksearch/cache.h). */
#include "ksearch/cache.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/fs.h"

/* what ksearch keeps under each name it writes */
static const struct {
	const char *name, *what;
} known[] = {
	{"kernels", "compiled kernels (least recently used go beyond 1 GiB)"},
	{"inputs", "generated input tensors of 1 MiB or more, by seed"},
	{"reference", "expected outputs, by task, workload and seed"},
	{"results", "evaluations kept across runs, reused unless --fresh"},
	{"specs", "the best roofs measured on each machine (spec detect --fresh measures anew)"},
	{"scratch", "runners' working folders (a running evaluation's are kept)"},
};

static const char *what_of(const char *name)
{
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(known[i].name, name))
			return known[i].what;
	return "";
}

/* nftw's callback has no context: one walk at a time */
static unsigned long long walk_bytes, walk_files;

static int count(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)path;
	(void)f;
	if (type == FTW_F || type == FTW_SL) {
		walk_bytes += (unsigned long long)st->st_size;
		walk_files++;
	}
	return 0;
}

static void measure(const char *path, unsigned long long *bytes, unsigned long long *files)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&lock);
	walk_bytes = walk_files = 0;
	nftw(path, count, 16, FTW_PHYS);
	*bytes = walk_bytes;
	*files = walk_files;
	pthread_mutex_unlock(&lock);
}

/* scratch/run-PID-...: the pid's process is alive */
static int scratch_live(const char *name)
{
	char *end;
	long pid = strncmp(name, "run-", 4) ? 0 : strtol(name + 4, &end, 10);
	return pid > 0 && !(kill((pid_t)pid, 0) && errno == ESRCH);
}

static int any_live(const char *dir)
{
	DIR *d = opendir(dir);
	int live = 0;
	struct dirent *de;
	while (d && !live && (de = readdir(d)))
		live = scratch_live(de->d_name);
	if (d)
		closedir(d);
	return live;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct ks_cache_entry *)a)->name,
		      ((const struct ks_cache_entry *)b)->name);
}

int ks_cache_list(struct ks_cache_entry **out, int *n, struct ks_error *e)
{
	*out = NULL;
	*n = 0;
	DIR *d = opendir(ks_cache_root());
	if (!d)
		return errno == ENOENT ? 0 : ks_error_set(e, KS_EIO, "open the cache '%s': %s",
							  ks_cache_root(), strerror(errno));
	struct dirent *de;
	int cap = 0, rc = 0;
	while (!rc && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*n == cap) {
			struct ks_cache_entry *g = realloc(*out, sizeof(**out) * (size_t)(cap = cap * 2 + 8));
			if (!g) {
				rc = ks_error_set(e, KS_ENOMEM, "out of memory");
				break;
			}
			*out = g;
		}
		struct ks_cache_entry *c = &(*out)[(*n)++];
		memset(c, 0, sizeof(*c));
		snprintf(c->name, sizeof(c->name), "%s", de->d_name);
		c->what = what_of(c->name);
		char path[PATH_MAX];
		ks_path_join(path, sizeof(path), ks_cache_root(), c->name);
		c->is_dir = ks_is_dir(path);
		measure(path, &c->bytes, &c->files);
		c->in_use = !strcmp(c->name, "scratch") && any_live(path);
	}
	closedir(d);
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
		return rc;
	}
	qsort(*out, (size_t)*n, sizeof(**out), by_name);
	return 0;
}

/* scratch: every folder but those of live processes (a running evaluation's runners) */
static void clear_scratch(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[PATH_MAX * 2];
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && !scratch_live(de->d_name)) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			ks_rm_rf(path);
		}
	if (d)
		closedir(d);
}

int ks_cache_clear(const char *name, unsigned long long *freed, struct ks_error *e)
{
	*freed = 0;
	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return ks_error_set(e, KS_EINVAL, "'%s' is not an entry of the cache", name);
	char path[PATH_MAX];
	if (ks_path_join(path, sizeof(path), ks_cache_root(), name))
		return ks_error_set(e, KS_ELIMIT, "cache path too long");
	struct stat st;
	if (lstat(path, &st))
		return ks_error_set(e, KS_ENOTFOUND, "the cache '%s' has no '%s' (see 'ksearch cache')",
				    ks_cache_root(), name);
	unsigned long long before, after, files;
	measure(path, &before, &files);
	if (!strcmp(name, "scratch"))
		clear_scratch(path);
	else if (S_ISDIR(st.st_mode))
		ks_rm_rf(path);
	else
		unlink(path);
	after = 0;
	if (ks_path_exists(path))
		measure(path, &after, &files);
	*freed = before > after ? before - after : 0;
	if (after && strcmp(name, "scratch"))
		return ks_error_set(e, KS_EIO, "could not remove all of '%s'", path);
	return 0;
}

/* ---- the compiled kernels' LRU cap -------------------------------------------------- */

struct kernel_dir {
	char path[PATH_MAX];
	time_t used;
	unsigned long long bytes;
};

/* a kernel folder's last use: its "ok" file's time (compile.c touches it on every hit) */
static time_t last_use(const char *dir)
{
	char ok[PATH_MAX + 8];
	struct stat st;
	snprintf(ok, sizeof(ok), "%s/ok", dir);
	if (stat(ok, &st) == 0 || stat(dir, &st) == 0)
		return st.st_mtime;
	return 0;
}

/* kernels/XX/HASH folders into *out (*n), with their sizes and last uses (as many as
 * memory allows) */
static void kernel_dirs(struct kernel_dir **out, int *n)
{
	char root[PATH_MAX], sub[PATH_MAX * 2];
	snprintf(root, sizeof(root), "%s/kernels", ks_cache_root());
	DIR *d = opendir(root);
	int cap = 0;
	struct dirent *a, *b;
	while (d && (a = readdir(d))) {
		snprintf(sub, sizeof(sub), "%s/%s", root, a->d_name);
		DIR *s = a->d_name[0] == '.' ? NULL : opendir(sub);
		while (s && (b = readdir(s))) {
			if (b->d_name[0] == '.')
				continue;
			if (*n == cap) {
				struct kernel_dir *g = realloc(*out, sizeof(**out) * (size_t)(cap = cap * 2 + 64));
				if (!g)
					break;
				*out = g;
			}
			struct kernel_dir *k = &(*out)[(*n)++];
			snprintf(k->path, sizeof(k->path), "%s/%s", sub, b->d_name);
			unsigned long long files;
			measure(k->path, &k->bytes, &files);
			k->used = last_use(k->path);
		}
		if (s)
			closedir(s);
	}
	if (d)
		closedir(d);
}

static int by_use(const void *a, const void *b)
{
	time_t x = ((const struct kernel_dir *)a)->used, y = ((const struct kernel_dir *)b)->used;
	return x < y ? -1 : x > y;
}

int ks_cache_trim_kernels(unsigned long long cap, long min_age_s)
{
	struct kernel_dir *k = NULL;
	int n = 0, removed = 0;
	kernel_dirs(&k, &n);
	unsigned long long total = 0;
	for (int i = 0; i < n; i++)
		total += k[i].bytes;
	qsort(k, (size_t)n, sizeof(*k), by_use);
	time_t now = time(NULL);
	for (int i = 0; i < n && total > cap && now - k[i].used >= min_age_s; i++)
		if (ks_rm_rf(k[i].path) == 0) {
			total -= k[i].bytes;
			removed++;
		}
	free(k);
	return removed;
}
