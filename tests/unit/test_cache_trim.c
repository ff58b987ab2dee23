/* The compiled kernels' LRU cap (ks_cache_trim_kernels): beyond the cap the folders used
 * least recently go, oldest first, but never one used within min_age_s (a running search may
 * still load it); and the cache's listing counts every entry of its root, whatever wrote it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ksearch/cache.h"
#include "tap.h"
#include "util/fs.h"
#include "util/env.h"

/* a kernel folder kernels/HH/NAME holding bytes in kernel.so, its ok file last used
 * age_s ago */
static void kernel(const char *root, const char *name, size_t bytes, long age_s)
{
	char dir[4096], path[4200];
	snprintf(dir, sizeof(dir), "%s/kernels/%.2s/%s", root, name, name);
	ks_mkdir_p(dir, NULL);
	snprintf(path, sizeof(path), "%s/kernel.so", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (ftruncate(fd, (off_t)bytes))
			perror("ftruncate");
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/ok", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
	struct timespec t[2];
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= age_s;
	t[1] = t[0];
	utimensat(AT_FDCWD, path, t, 0);
}

static int exists(const char *root, const char *name)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/kernels/%.2s/%s", root, name, name);
	return ks_path_exists(dir);
}

int main(void)
{
	char root[] = "/tmp/ks-cache-trim-XXXXXX";
	if (!mkdtemp(root))
		return tap_skip_all("no temporary folder");
	setenv("KSEARCH_CACHE", root, 1);
	ks_env_reload();
	const size_t mib = (size_t)1 << 20;
	kernel(root, "aa01", 3 * mib, 5 * 3600); /* least recently used */
	kernel(root, "bb02", 3 * mib, 4 * 3600);
	kernel(root, "cc03", 3 * mib, 3 * 3600);
	kernel(root, "dd04", 3 * mib, 60);       /* used a minute ago */
	kernel(root, "ee05", 3 * mib, 10);
	/* 15 MiB under a 7 MiB cap: the oldest go until it fits, the fresh ones never */
	int removed = ks_cache_trim_kernels(7 * mib, 3600);
	is_int(removed, 3, "three folders removed");
	ok(!exists(root, "aa01") && !exists(root, "bb02") && !exists(root, "cc03"),
	   "the three least recently used ones");
	ok(exists(root, "dd04") && exists(root, "ee05"),
	   "those used within the hour stay, though the cache is still over its cap");
	is_int(ks_cache_trim_kernels(1ull << 30, 0), 0, "under the cap nothing goes");

	/* the listing: known entries and one that another part of ksearch wrote */
	char other[4200];
	snprintf(other, sizeof(other), "%s/eval-results.db", root);
	int fd = open(other, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0) {
		if (write(fd, "12345", 5) != 5)
			perror("write");
		close(fd);
	}
	struct ks_cache_entry *c = NULL;
	int n = 0;
	struct ks_error e = {0};
	ok(ks_cache_list(&c, &n, &e) == 0, "the cache is listed (%s)", e.msg);
	int kernels = -1, results = -1;
	for (int i = 0; i < n; i++) {
		if (!strcmp(c[i].name, "kernels"))
			kernels = i;
		if (!strcmp(c[i].name, "eval-results.db"))
			results = i;
	}
	ok(kernels >= 0 && c[kernels].bytes == 6 * mib && c[kernels].files == 4,
	   "kernels: 6 MiB in 4 files");
	ok(results >= 0 && c[results].bytes == 5 && !c[results].is_dir && !c[results].what[0],
	   "a file ksearch's cache code does not know is listed too, with its size");
	free(c);
	unsigned long long freed = 0;
	ok(ks_cache_clear("eval-results.db", &freed, &e) == 0 && freed == 5 &&
		   !ks_path_exists(other),
	   "and cleared by name");
	ok(ks_cache_clear("../etc", &freed, &e) != 0, "a name with a slash is refused");
	ok(ks_cache_clear("nothing-here", &freed, &e) != 0 && strstr(e.msg, "has no 'nothing-here'"),
	   "an entry the cache does not have is an error saying so");
	ok(ks_cache_clear("kernels", &freed, &e) == 0 && freed == 6 * mib,
	   "kernels cleared: 6 MiB freed");
	ks_rm_rf(root);
	return tap_done();
}
