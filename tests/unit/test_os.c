/* The calls that differ between systems (src/util/os.h), as each promises, on whichever
 * system runs the test: descriptors closed on exec, a rename that never replaces, a shared
 * file nobody can shrink, qsort's context, an emptied environment, the executable's path. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "util/os.h"

extern char **environ;

static int cloexec(int fd)
{
	int f = fcntl(fd, F_GETFD);
	return f >= 0 && (f & FD_CLOEXEC);
}

static int by_key(const void *a, const void *b, void *ctx)
{
	const int *key = ctx;
	return key[*(const int *)a] - key[*(const int *)b];
}

static void descriptors(void)
{
	int p[2], s[2];
	ok(ks_os_pipe(p) == 0 && cloexec(p[0]) && cloexec(p[1]), "pipe: both ends close on exec");
	ok(write(p[1], "x", 1) == 1, "... and carry data");
	close(p[0]), close(p[1]);
	ok(ks_os_socketpair(s) == 0 && cloexec(s[0]) && cloexec(s[1]), "socketpair: both close on exec");
	close(s[0]), close(s[1]);
	int fd = ks_os_fixed_shm("ks-test", 1 << 16);
	struct stat st;
	ok(fd >= 0 && cloexec(fd) && fstat(fd, &st) == 0 && st.st_size == 1 << 16,
	   "fixed shm: %d bytes, closed on exec", 1 << 16);
	int shrunk = ftruncate(fd, 4096);
	ok(shrunk != 0, "... which nobody can shrink (%s)", strerror(errno));
	ok(ftruncate(fd, 1 << 20) != 0, "... or grow");
	close(fd);
	ok(ks_os_close_range(1000, 999) == 0 || errno == ENOSYS,
	   "close_range of nothing: done, or the system has none");
}

static void files(void)
{
	char dir[] = "/tmp/ks-os-XXXXXX";
	if (!ok(mkdtemp(dir) != NULL, "a folder"))
		return;
	int d = open(dir, O_RDONLY | O_DIRECTORY);
	ok(mkdirat(d, "a", 0700) == 0 && mkdirat(d, "b", 0700) == 0, "folders a and b");
	ok(ks_os_rename_noreplace(d, "a", d, "b") != 0 && errno == EEXIST,
	   "rename onto an existing name: EEXIST");
	ok(ks_os_rename_noreplace(d, "a", d, "c") == 0 && faccessat(d, "c", F_OK, 0) == 0,
	   "rename onto a free name: moved");
	unlinkat(d, "b", AT_REMOVEDIR), unlinkat(d, "c", AT_REMOVEDIR);
	close(d);
	rmdir(dir);
	char exe[4096];
	ok(ks_os_exe_path(exe, sizeof(exe)) == 0 && exe[0] == '/' && strstr(exe, "test_os"),
	   "the executable's absolute path: %s", exe);
}

static void misc(void)
{
	unsigned char a[300] = {0}, b[300] = {0};
	ok(ks_os_random(a, sizeof(a)) == 0 && ks_os_random(b, sizeof(b)) == 0 &&
		   memcmp(a, b, sizeof(a)),
	   "300 random bytes, twice, differ");
	ok(ks_os_cpus() >= 1, "cores: %d", ks_os_cpus());
	int key[] = {30, 10, 20}, idx[] = {0, 1, 2};
	ks_os_qsort_r(idx, 3, sizeof(int), by_key, key);
	ok(idx[0] == 1 && idx[1] == 2 && idx[2] == 0, "qsort_r hands its context to cmp");
	char model[256];
	ks_os_cpu_model(model, sizeof(model));
	ok(model[0] != '\0', "the CPU's model: %s", model);
	ok(ks_os_mem_kb() >= 0, "memory: %ld kB", ks_os_mem_kb());
	setenv("KS_TEST_OS", "1", 1);
	ks_os_clearenv();
	ok(!environ || !environ[0], "clearenv leaves no variable");
	ok(setenv("KS_TEST_OS", "2", 1) == 0 && !strcmp(getenv("KS_TEST_OS"), "2"),
	   "... and the environment works after");
}

int main(void)
{
	descriptors();
	files();
	misc();
	return tap_done();
}
