/* Reading a kernel's source from a file: only a regular file, never one with NUL bytes
 * (C strings end there: the compiler would see another program than the one given). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ksearch/eval.h"
#include "util/fs.h"

int ks_kernel_source_read(const char *path, size_t max, struct ks_buf *out, struct ks_error *e)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer before the check below */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return ks_error_set(e, errno == ENOENT ? KS_ENOTFOUND : KS_EIO, "open '%s': %s",
				    path, strerror(errno));
	struct stat st;
	int rc = fstat(fd, &st);
	close(fd);
	if (rc)
		return ks_error_set(e, KS_EIO, "stat '%s': %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return ks_error_set(e, KS_EINVAL, "'%s' is not a regular file (%s): a kernel source "
				    "must be one",
				    path, S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
					  : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
											: "a special file");
	if ((rc = ks_file_read(path, max, out, e)))
		return rc;
	const char *nul = memchr(out->data, '\0', out->len);
	if (nul)
		return ks_error_set(e, KS_EINVAL, "'%s' contains a NUL byte at offset %zu: a kernel "
				    "source must be text",
				    path, (size_t)(nul - out->data));
	return 0;
}
