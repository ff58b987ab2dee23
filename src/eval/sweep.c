/* Leftovers of killed evaluations: a runner's scratch folder (scratch/run-PID-XXXXXX), a
 * compile's temporary library (kernels/xx/HASH/kernel.so.tmp.PID), a half-written input
 * cache file (inputs/vN/NAME.bin.tmp.PID) and a runner's pids cgroup whose process is gone;
 * and compiled kernels beyond the cache's LRU cap (ks_cache_trim_kernels).
 * Removed once per process, before the first evaluation; folders of live processes (other
 * ksearch processes share the cache) are left alone. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "eval/evaluator.h"
#include "eval/sandbox.h"
#include "ksearch/cache.h"
#include "ksearch/task.h"
#include "util/fs.h"

/* the pid a leftover's name carries after prefix; 0 when it carries none */
static long name_pid(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	if (strncmp(name, prefix, n))
		return 0;
	char *end;
	long pid = strtol(name + n, &end, 10);
	return end != name + n && pid > 0 ? pid : 0;
}

static int pid_gone(long pid)
{
	return kill((pid_t)pid, 0) && errno == ESRCH;
}

static int sweep_scratch(void)
{
	char dir[PATH_MAX], path[PATH_MAX * 2];
	snprintf(dir, sizeof(dir), "%s/scratch", ks_cache_root());
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int removed = 0;
	time_t now = time(NULL);
	struct dirent *de;
	while ((de = readdir(d))) {
		long pid = name_pid(de->d_name, "run-");
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		struct stat st;
		/* older ksearch named them run-XXXXXX, without a pid: a day old is abandoned */
		int stale = pid ? pid_gone(pid)
				: !strncmp(de->d_name, "run-", 4) && !lstat(path, &st) &&
					  now - st.st_mtime > 86400;
		if (stale && ks_rm_rf(path) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

/* the files in dir whose name holds tag followed by the pid of a process that is gone
 * ("kernel.so.tmp.PID", "NAME.bin.tmp.PID") */
static int sweep_dead_tmp(const char *dir, const char *tag)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int removed = 0;
	char path[PATH_MAX * 2];
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *at = strstr(de->d_name, tag);
		long pid = at ? name_pid(at, tag) : 0;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (pid && pid_gone(pid) && unlink(path) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

static int sweep_kernels(void)
{
	char root[PATH_MAX], sub[PATH_MAX * 2], leaf[PATH_MAX * 3];
	snprintf(root, sizeof(root), "%s/kernels", ks_cache_root());
	DIR *d = opendir(root);
	if (!d)
		return 0;
	int removed = 0;
	struct dirent *a;
	while ((a = readdir(d))) {
		if (a->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", root, a->d_name);
		DIR *s = opendir(sub);
		if (!s)
			continue;
		struct dirent *b;
		while ((b = readdir(s)))
			if (b->d_name[0] != '.') {
				snprintf(leaf, sizeof(leaf), "%s/%s", sub, b->d_name);
				removed += sweep_dead_tmp(leaf, "kernel.so.tmp.");
			}
		closedir(s);
	}
	closedir(d);
	return removed;
}

/* the input cache's temporaries: a 256 MiB tensor left by a killed write is worth finding */
static int sweep_inputs(void)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/inputs/v%d", ks_cache_root(), KS_INPUTS_VERSION);
	return sweep_dead_tmp(dir, ".tmp.");
}

static int swept;

static void sweep_once(void)
{
	swept = sweep_scratch() + sweep_kernels() + sweep_inputs() + ks_cgroup_sweep() +
		ks_cache_trim_kernels(KS_KERNEL_CACHE_CAP_BYTES, KS_KERNEL_CACHE_MIN_AGE_S);
}

int ks_eval_sweep(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, sweep_once);
	return swept;
}
