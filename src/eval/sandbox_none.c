/* The platform of a system without a sandbox (sandbox.h): a session and rlimits only.
 * ks_sandbox_check refuses candidate kernels here unless the user passes --no-sandbox, so
 * nothing untrusted reaches the runner; the compiler's jail keeps its limits and scrubbed
 * environment.  Compiled everywhere: tests make it a process's platform
 * (ks_sandbox_platform_set) to check the refusal (tests/unit/test_sandbox_platform.c). */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "eval/sandbox_impl.h"
#include "util/os.h"

static int none_available(char *why, size_t n)
{
	snprintf(why, n, "this build of ksearch has no sandbox for %s", ks_os_name);
	return -1;
}

static int none_enter(const char *scratch, const char *kernel_path, const char *read_dir,
		      const struct ks_sandbox_needs *needs,
		      void (*open_check)(const char *path, int flags), char *why, size_t n)
{
	return none_available(why, n);
}

static int none_enter_compiler(const char *const *ro, const char *const *rw, int no_sockets,
			       char *why, size_t n)
{
	return 0;
}

static const char *none_describe(void)
{
	return "none (no sandbox on this system)";
}

const struct ks_sandbox_platform ks_sandbox_none = {
	.version = KS_SANDBOX_PLATFORM_VERSION,
	.name = "none",
	.available = none_available,
	.child_prepare = ks_sandbox_child_plain,
	.enter = none_enter,
	.enter_compiler = none_enter_compiler,
	.describe = none_describe,
};
