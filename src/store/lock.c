/* One writer per run: an exclusive flock on DIR/run.lock, held by the process for the
 * whole run and released by the kernel when it exits, however it exits. */
#include "ksearch/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

int ks_run_lock(const char *dir, int *fd_out, struct ks_error *e)
{
	char path[4096];
	*fd_out = -1;
	if (snprintf(path, sizeof(path), "%s/run.lock", dir) >= (int)sizeof(path))
		return ks_error_set(e, KS_ELIMIT, "run folder path too long");
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return ks_error_set(e, KS_EIO, "open '%s': %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int err = errno;
		close(fd);
		if (err == EWOULDBLOCK)
			return ks_error_set(e, KS_EINVAL,
					    "'%s' is in use by another ksearch process (a run has "
					    "one writer: wait for it to end or stop it first)",
					    dir);
		return ks_error_set(e, KS_EIO, "lock '%s': %s", path, strerror(err));
	}
	*fd_out = fd;
	return 0;
}

void ks_run_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}
