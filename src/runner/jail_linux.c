/* Linux's jail: a mount namespace holding only the jail's paths (jail_root_linux.c), then
 * the compiler's sandbox (Landlock, no capabilities, no network, sandbox_linux.c). */
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "eval/sandbox.h"
#include "runner/jail.h"
#include "runner/jail_root.h"

void ks_jail_prepare(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* as root: a private network namespace with nothing in it (seccomp refuses network
	 * sockets anyway; a user's jail gets one with its user namespace, in ks_jail_root) */
	if (geteuid() == 0)
		(void)unshare(CLONE_NEWNET);
}

int ks_jail_confine(const char *const *ro, const char *const *rw, int no_sockets, char *why,
		    size_t n)
{
	if (ks_jail_root(ro, rw, why, n) < 0 ||
	    ks_sandbox_enter_compiler(ro, rw, no_sockets, why, n))
		return -1;
	return 0;
}
