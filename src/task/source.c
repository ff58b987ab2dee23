/* Reading a kernel's source from a file: only a regular file, never one with NUL bytes
 * (C strings end there: the compiler would see another program than the one given), with
 * its `// @ksearch include: PATH` lines replaced by the files they name (docs/tasks.md,
 * "Including another task's files").
 *
 * Includes are expanded here, where a file becomes the source text, so that everything
 * downstream (the template parser, the compiler, the store's hash, an LLM's prompt, an
 * export) sees one self-contained program: a variant task (attention_bf16) holds a two-line
 * wrapper, not a copy of attention's kernels, and its candidates' hashes change when the
 * included file does.  Text a policy or an LLM writes is never a file read here, so it
 * cannot include anything. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ksearch/task.h"
#include "task/task_priv.h"
#include "util/fs.h"

static int read_regular(const char *path, size_t max, struct ks_buf *out, struct ks_error *e)
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

const char *ks_source_include_path(const char *line, size_t n, size_t *plen)
{
	static const char kw[] = "@ksearch include:";
	const char *p = line, *end = line + n;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (end - p < 2 || strncmp(p, "//", 2))
		return NULL;
	for (p += 2; p < end && (*p == ' ' || *p == '\t'); p++)
		;
	if ((size_t)(end - p) < sizeof(kw) - 1 || strncmp(p, kw, sizeof(kw) - 1))
		return NULL;
	for (p += sizeof(kw) - 1; p < end && (*p == ' ' || *p == '\t'); p++)
		;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	*plen = (size_t)(end - p);
	return p;
}

/* the folder of path, for an include relative to it */
static void folder_of(const char *path, char *out, size_t n)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(out, n, ".");
	else
		snprintf(out, n, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

/* src (read from path) with its include lines expanded into out */
static int expand(const char *path, const struct ks_buf *src, size_t max, struct ks_buf *out,
		  struct ks_error *e)
{
	char dir[PATH_MAX], full[PATH_MAX + 256];
	folder_of(path, dir, sizeof(dir));
	int lineno = 0, rc = 0;
	for (const char *l = ks_buf_str(src); *l && !rc; lineno++) {
		size_t n = strcspn(l, "\n"), plen;
		const char *p = ks_source_include_path(l, n, &plen);
		if (!p) {
			ks_buf_add(out, l, n + (l[n] == '\n'));
		} else if (plen == 0 || *p == '/') {
			rc = ks_error_set(e, KS_EPARSE, "%s:%d:%d: an include names a file relative to "
					  "this file's folder (e.g. '../../../attention/templates/"
					  "cuda/flash2.cu'), %s",
					  path, lineno + 1, (int)(p - l) + 1,
					  plen ? "not an absolute path" : "and this one names none");
		} else if (snprintf(full, sizeof(full), "%s/%.*s", dir, (int)plen, p) >=
			   (int)sizeof(full)) {
			rc = ks_error_set(e, KS_ELIMIT, "%s:%d: include path too long", path, lineno + 1);
		} else {
			struct ks_buf inc = KS_BUF_INIT;
			size_t dummy;
			rc = read_regular(full, max, &inc, e);
			if (rc)
				ks_error_wrap(e, "%s:%d:%d: the file it includes", path, lineno + 1,
					      (int)(p - l) + 1);
			/* one level: a file meant to be included is a whole kernel itself */
			for (const char *m = ks_buf_str(&inc); !rc && *m;) {
				size_t k = strcspn(m, "\n");
				if (ks_source_include_path(m, k, &dummy))
					rc = ks_error_set(e, KS_EPARSE, "%s:%d: includes '%s', which "
							  "includes another file: includes go one "
							  "level deep",
							  path, lineno + 1, full);
				m += k + (m[k] == '\n');
			}
			if (!rc) {
				ks_buf_add(out, inc.data, inc.len);
				if (inc.len && inc.data[inc.len - 1] != '\n')
					ks_buf_adds(out, "\n");
			}
			ks_buf_release(&inc);
		}
		l += n + (l[n] == '\n');
	}
	if (!rc && (ks_buf_failed(out) || out->len > max))
		rc = ks_error_set(e, KS_ELIMIT, "'%s' with its includes is over %zu bytes", path, max);
	return rc;
}

int ks_kernel_source_read(const char *path, size_t max, struct ks_buf *out, struct ks_error *e)
{
	struct ks_buf raw = KS_BUF_INIT;
	int rc = read_regular(path, max, &raw, e);
	if (!rc && !strstr(ks_buf_str(&raw), "@ksearch include:")) {
		ks_buf_release(out);
		*out = raw;
		return 0;
	}
	if (!rc) {
		ks_buf_reset(out);
		rc = expand(path, &raw, max, out, e);
	}
	ks_buf_release(&raw);
	return rc;
}
