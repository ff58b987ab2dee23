/* The input cache's names and reads, shared by the evaluator and the runner (input_cache.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "task/input_cache.h"
#include "util/hash.h"

void ks_input_cache_name(enum ks_dtype t, size_t numel, const struct ks_init *init,
			 uint64_t key, uint64_t seed, char out[KS_INPUT_CACHE_NAME])
{
	char text[256], hex[65];
	snprintf(text, sizeof(text), "%s %zu %d %.17g %.17g %llu %llu", ks_dtype_name(t), numel,
		 (int)init->kind, init->a, init->b, (unsigned long long)key,
		 (unsigned long long)seed);
	ks_sha256_str_hex(text, hex);
	snprintf(out, KS_INPUT_CACHE_NAME, "%.24s.bin", hex);
}

int ks_input_cache_read(const char *dir, const char *name, void *dst, size_t bytes)
{
	char path[4352];
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	struct stat st;
	int rc = -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size != bytes)
		goto out;
	size_t got = 0;
	while (got < bytes) {
		ssize_t n = read(fd, (char *)dst + got, bytes - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out; /* shrank while read: the caller generates instead */
		got += (size_t)n;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}
