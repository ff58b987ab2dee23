/* Linux's jail: a mount namespace holding only the jail's paths (jail_root_linux.c), then
 * the compiler's sandbox (Landlock, no capabilities, no network, sandbox_linux.c), which
 * cc_jail.c enters. */
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "runner/jail.h"

void ks_jail_prepare(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* as root: a private network namespace with nothing in it (seccomp refuses network
	 * sockets anyway; a user's jail gets one with its user namespace, in ks_jail_root) */
	if (geteuid() == 0)
		(void)unshare(CLONE_NEWNET);
}
