/* Where ksearch's helper executables (runners, the compiler's jail) are: beside the running
 * executable, or in $KSEARCH_RUNNER_DIR. */
#include "util/exe_path.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/fs.h"
#include "util/env.h"

int ks_runner_path(const char *name, char *out, size_t n, struct ks_error *e)
{
	const char *env = ks_env_get()->runner_dir;
	char dir[PATH_MAX];
	if (env && env[0])
		snprintf(dir, sizeof(dir), "%s", env);
	else if (ks_exe_dir(dir, sizeof(dir)))
		return ks_error_set(e, KS_ESYS, "cannot find the running executable");
	snprintf(out, n, "%s/%s", dir, name);
	if (access(out, X_OK))
		return ks_error_set(e, KS_ENOTFOUND,
				    "'%s' not found: %s must sit beside ksearch (was it built? A "
				    "backend's runner is built only when CMake finds its toolkit, e.g. "
				    "CUDA for ksearch-runner-cuda: install it, then rebuild)",
				    out, name);
	return 0;
}
