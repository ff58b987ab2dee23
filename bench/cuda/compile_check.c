/* compile_check TASK_DIR KERNEL.cu [NAME=VALUE ...]: compile a CUDA kernel for a task
 * exactly as the cuda backend does (shim, flags, cache), without a GPU when
 * KSEARCH_CUDA_ARCH is set.  Prints the ptxas resources; exit 0 compiled, 1 compile
 * error (log on stderr), 2 could not try.  Used by tests/cli/t0400-cuda.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda.h"
#include "ksearch/task.h"
#include "util/fs.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: compile_check TASK_DIR KERNEL.cu [NAME=VALUE ...]\n");
		return 2;
	}
	struct ks_error e = {0};
	struct ks_task *t = NULL;
	struct ks_buf src = KS_BUF_INIT;
	struct ks_artifact a;
	ks_artifact_init(&a);
	int rc = 2;
	if (ks_task_load(argv[1], &t, &e) || ks_kernel_source_read(argv[2], 4 << 20, &src, &e)) {
		fprintf(stderr, "compile_check: %s\n", e.msg);
		goto out;
	}
	/* a task's library.cu links the library task.yaml names for cuda (-lcublas) */
	const char *base = strrchr(argv[2], '/');
	const struct ks_task_library *lib = ks_task_library_for(t, "cuda");
	const char *libs = lib && !strcmp(base ? base + 1 : argv[2], "library.cu") ? lib->libs : NULL;
	if (ks_cuda_compile_only(t, ks_buf_str(&src), (const char *const *)argv + 3, libs, &a, &e)) {
		fprintf(stderr, "compile_check: %s\n", e.msg);
		goto out;
	}
	if (!a.ok) {
		fprintf(stderr, "%s\n", ks_buf_str(&a.log));
		rc = 1;
		goto out;
	}
	printf("%s\n", a.resources);
	rc = 0;
out:
	ks_artifact_release(&a);
	ks_buf_release(&src);
	ks_task_free(t);
	return rc;
}
