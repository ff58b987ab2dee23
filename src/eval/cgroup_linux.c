/* A pids cgroup per runner: a bound on the threads a kernel can start (issue 39).
 *
 * RLIMIT_NPROC binds an ordinary user, but the kernel exempts uid 0 from it whatever the
 * process's capabilities, so as root one kernel started 6000 threads.  Where the pids
 * controller is mounted and this process may write there (root; cgroup v2 at
 * /sys/fs/cgroup, or v1's pids hierarchy), each runner joins a cgroup of its own,
 * <hierarchy>/ksearch/run-PID-N, before it execs, and pids.max bounds its threads.  The
 * cgroup is removed when the runner is gone, and a dead process's by the sweep. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/sandbox.h"
#include "util/fs.h"

static char root[PATH_MAX]; /* <hierarchy>/ksearch, "" when there is none to use */

/* 1 when file (a cgroup's cgroup.controllers) lists the pids controller */
static int lists_pids(const char *file)
{
	struct ks_buf b = KS_BUF_INIT;
	int yes = ks_file_read(file, 4096, &b, NULL) == 0;
	if (yes) {
		const char *p = ks_buf_str(&b);
		yes = 0;
		for (const char *q = strstr(p, "pids"); q && !yes; q = strstr(q + 1, "pids"))
			yes = (q == p || q[-1] == ' ') && (q[4] == ' ' || q[4] == '\n' || !q[4]);
	}
	ks_buf_release(&b);
	return yes;
}

/* <base>/ksearch made, with the pids controller for its children (v2: enabled in the
 * subtree of base and of ksearch; v1: every cgroup of the hierarchy has it) */
static int make_root(const char *base, int v2)
{
	char path[PATH_MAX];
	if (v2)
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", base);
	if (v2 && !lists_pids(path) && ks_sandbox_write_text(path, "+pids"))
		return -1;
	snprintf(root, sizeof(root), "%s/ksearch", base);
	if (mkdir(root, 0755) && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	if (v2 && !lists_pids(path) && ks_sandbox_write_text(path, "+pids"))
		return -1;
	/* a try: one cgroup made and removed, so later failures are not the norm */
	snprintf(path, sizeof(path), "%s/probe-%d", root, (int)getpid());
	if (mkdir(path, 0755))
		return -1;
	char max[PATH_MAX + 16];
	snprintf(max, sizeof(max), "%s/pids.max", path);
	int ok = access(max, W_OK) == 0;
	rmdir(path);
	return ok ? 0 : -1;
}

static void find_root(void)
{
	if (geteuid() != 0)
		return; /* RLIMIT_NPROC binds */
	if (lists_pids("/sys/fs/cgroup/cgroup.controllers") && make_root("/sys/fs/cgroup", 1) == 0)
		return;
	if (lists_pids("/sys/fs/cgroup/unified/cgroup.controllers") &&
	    make_root("/sys/fs/cgroup/unified", 1) == 0)
		return;
	if (access("/sys/fs/cgroup/pids/cgroup.procs", W_OK) == 0 &&
	    make_root("/sys/fs/cgroup/pids", 0) == 0)
		return;
	root[0] = '\0';
}

static const char *cgroup_root(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, find_root);
	return root[0] ? root : NULL;
}

int ks_cgroup_available(void)
{
	return cgroup_root() != NULL;
}

int ks_cgroup_create(long max_pids, char *dir, size_t n)
{
	static unsigned long serial;
	const char *r = cgroup_root();
	if (!r)
		return -1;
	snprintf(dir, n, "%s/run-%d-%lu", r, (int)getpid(),
		 __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED));
	if (mkdir(dir, 0755))
		return -1;
	char path[PATH_MAX + 16], max[32];
	snprintf(path, sizeof(path), "%s/pids.max", dir);
	snprintf(max, sizeof(max), "%ld", max_pids);
	if (ks_sandbox_write_text(path, max)) {
		rmdir(dir);
		return -1;
	}
	return 0;
}

void ks_cgroup_remove(const char *dir)
{
	/* the runner was reaped; its threads leave the cgroup a moment later */
	for (int i = 0; i < 100 && rmdir(dir) && errno == EBUSY; i++)
		usleep(1000);
}

int ks_cgroup_sweep(void)
{
	const char *r = cgroup_root();
	DIR *d = r ? opendir(r) : NULL;
	if (!d)
		return 0;
	int removed = 0;
	struct dirent *de;
	char path[PATH_MAX * 2];
	while ((de = readdir(d))) {
		char *end;
		long pid = strncmp(de->d_name, "run-", 4) ? 0 : strtol(de->d_name + 4, &end, 10);
		snprintf(path, sizeof(path), "%s/%s", r, de->d_name);
		if (pid > 0 && kill((pid_t)pid, 0) && errno == ESRCH && rmdir(path) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}
