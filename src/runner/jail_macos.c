/* macOS's jail: the compiler's Seatbelt profile (sandbox_macos.c), which holds the file
 * rules itself; Darwin has no mount namespaces to hide the rest of the file system and no
 * parent-death signal (the compile's timeout ends the process group instead). */
#include "eval/sandbox.h"
#include "runner/jail.h"

void ks_jail_prepare(void)
{
}

int ks_jail_confine(const char *const *ro, const char *const *rw, int no_sockets, char *why,
		    size_t n)
{
	return ks_sandbox_enter_compiler(ro, rw, no_sockets, why, n);
}
