/* ks_rm_rf on trees a hostile kernel can leave in its scratch folder (issue 39 item 6):
 * deeper than PATH_MAX and than one stack frame per level fits in the stack, with few
 * descriptors to spare, unreadable folders and links that lead out of the tree. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "util/fs.h"

/* deep enough that a path to the bottom is longer than PATH_MAX and that one frame of a
 * PATH_MAX buffer per level overflows this process's stack (the machine's limit) */
static int deep_levels(void)
{
	struct rlimit rl;
	long levels = PATH_MAX;
	if (!getrlimit(RLIMIT_STACK, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    (long)(rl.rlim_cur / (PATH_MAX / 2)) > levels)
		levels = (long)(rl.rlim_cur / (PATH_MAX / 2));
	return levels > (1 << 16) ? 1 << 16 : (int)levels;
}

/* root/d/d/d/... levels deep, a file every 7 levels, made through descriptors */
static int make_deep(const char *root, int levels)
{
	if (mkdir(root, 0700))
		return -1;
	int fd = open(root, O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < levels && fd >= 0; i++) {
		if (mkdirat(fd, "d", 0700))
			break;
		if (i % 7 == 0)
			close(openat(fd, "f", O_WRONLY | O_CREAT, 0600));
		int sub = openat(fd, "d", O_RDONLY | O_DIRECTORY);
		close(fd);
		fd = sub;
	}
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int open_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void test_deep(const char *base)
{
	char root[PATH_MAX];
	snprintf(root, sizeof(root), "%s/deep", base);
	int levels = deep_levels();
	ok(make_deep(root, levels) == 0, "a tree %d levels deep is made", levels);
	/* few descriptors: one per level would run out long before the bottom */
	struct rlimit old, few = {48, 48};
	getrlimit(RLIMIT_NOFILE, &old);
	few.rlim_max = old.rlim_max;
	setrlimit(RLIMIT_NOFILE, &few);
	int before = open_fds();
	int rc = ks_rm_rf(root);
	int after = open_fds();
	setrlimit(RLIMIT_NOFILE, &old);
	is_int(rc, 0, "ks_rm_rf removes it with 48 descriptors");
	ok(!ks_path_exists(root), "nothing of it is left");
	is_int(after, before, "no descriptor is left open");
}

static void test_locked_and_links(const char *base)
{
	char root[PATH_MAX], p[PATH_MAX + 64], outside[PATH_MAX];
	snprintf(root, sizeof(root), "%s/links", base);
	snprintf(outside, sizeof(outside), "%s/outside", base);
	mkdir(outside, 0700);
	snprintf(p, sizeof(p), "%s/keep.txt", outside);
	close(open(p, O_WRONLY | O_CREAT, 0600));
	mkdir(root, 0700);
	snprintf(p, sizeof(p), "%s/to-outside", root);
	ok(symlink(outside, p) == 0, "a link to a folder outside the tree");
	snprintf(p, sizeof(p), "%s/locked", root);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/locked/inner", root);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/locked", root);
	chmod(p, 0);
	is_int(ks_rm_rf(root), 0, "a tree with a link out and a folder of mode 000 is removed");
	ok(!ks_path_exists(root), "nothing of it is left");
	snprintf(p, sizeof(p), "%s/keep.txt", outside);
	ok(ks_path_exists(p), "what the link pointed at is untouched");
	ks_rm_rf(outside);
}

int main(void)
{
	char base[] = "/tmp/ks-test-fs-XXXXXX";
	if (!mkdtemp(base))
		return tap_skip_all("cannot make a temporary folder");
	test_deep(base);
	test_locked_and_links(base);
	is_int(ks_rm_rf(base), 0, "the test's own folder is removed");
	is_int(ks_rm_rf(base), 0, "removing what is not there succeeds");
	return tap_done();
}
