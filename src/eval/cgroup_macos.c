/* macOS has no cgroups, so no pids bound of a runner's own: its Seatbelt profile refuses
 * new processes, and its threads meet only XNU's per-task thread limit (RLIMIT_NPROC counts
 * processes there, not threads).  Not run on a Mac yet (docs/macos.md). */
#include "eval/sandbox.h"

int ks_cgroup_available(void)
{
	return 0;
}

int ks_cgroup_create(long max_pids, char *dir, size_t n)
{
	return -1;
}

void ks_cgroup_remove(const char *dir)
{
}

int ks_cgroup_sweep(void)
{
	return 0;
}
