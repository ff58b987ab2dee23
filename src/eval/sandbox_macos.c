/* The macOS sandbox (the platform of sandbox.h): a session of its own and rlimits for the
 * child; for the runner and for the compiler's jail a Seatbelt profile written from the same
 * needs as Linux's Landlock and seccomp rules (sandbox_sbpl.c), entered with sandbox_init
 * right before the kernel is loaded or the compiler runs.  What Linux has and this lacks:
 * a parent-death signal (a runner notices its evaluator is gone at its next read of the
 * command pipe), an enforced address-space limit (Darwin does not apply RLIMIT_AS), the
 * open supervisor (a refused open fails with EPERM instead of ending the runner as a
 * SANDBOX_VIOLATION) and a pids cgroup.  Compiled for aarch64-macos in CI
 * (.ci/cross-macos); not run on a Mac yet (docs/macos.md). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "eval/sandbox_impl.h"

/* libsystem_sandbox's entry points, part of libSystem.  The SDK's <sandbox.h> marks them
 * deprecated (since 10.8) though they remain the way a process confines itself; declared
 * here so the build needs neither that header nor an exception to -Werror.  flags 0: the
 * profile is SBPL text. */
int sandbox_init(const char *profile, uint64_t flags, char **errorbuf);
void sandbox_free_error(char *errorbuf);

#define SBPL_CAP ((size_t)256 << 10)

/* profile entered, or -1 with Seatbelt's message (or the profile's size) in why */
static int seatbelt_enter(struct ks_buf *profile, const char *what, char *why, size_t n)
{
	int rc = -1;
	char *err = NULL;
	if (ks_buf_failed(profile))
		snprintf(why, n, "seatbelt: the %s profile exceeds %zu bytes", what, SBPL_CAP);
	else if (sandbox_init(ks_buf_str(profile), 0, &err))
		snprintf(why, n, "seatbelt (%s profile): %s", what, err ? err : "sandbox_init failed");
	else
		rc = 0;
	if (err)
		sandbox_free_error(err);
	ks_buf_release(profile);
	return rc;
}

static int macos_enter(const char *scratch, const char *kernel_path, const char *read_dir,
		       const struct ks_sandbox_needs *needs,
		       void (*open_check)(const char *path, int flags), char *why, size_t n)
{
	struct ks_buf profile;
	ks_buf_init(&profile, SBPL_CAP);
	ks_sbpl_runner(&profile, scratch, kernel_path, read_dir, needs);
	return seatbelt_enter(&profile, "runner", why, n);
}

static int macos_enter_compiler(const char *const *ro, const char *const *rw, int no_sockets,
				char *why, size_t n)
{
	struct ks_buf profile;
	ks_buf_init(&profile, SBPL_CAP);
	ks_sbpl_compiler(&profile, ro, rw, no_sockets);
	return seatbelt_enter(&profile, "compiler", why, n);
}

static const char *macos_describe(void)
{
	return "seatbelt + rlimits";
}

const struct ks_sandbox_platform ks_sandbox_native = {
	.version = KS_SANDBOX_PLATFORM_VERSION,
	.name = "macos",
	.child_prepare = ks_sandbox_child_plain,
	.enter = macos_enter,
	.enter_compiler = macos_enter_compiler,
	.describe = macos_describe,
};

/* Seatbelt refuses with EPERM; a SIGSYS here is a bad system call number, which Darwin's
 * siginfo does not carry */
int ks_sandbox_trapped_syscall(const siginfo_t *si)
{
	return -1;
}

int ks_sandbox_syscall_name(int nr, char *out, size_t n)
{
	return -1;
}
