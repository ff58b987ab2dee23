/* macOS's jail: the compiler's Seatbelt profile (sandbox_macos.c), which holds the file
 * rules itself; Darwin has no mount namespaces to hide the rest of the file system and no
 * parent-death signal (the compile's timeout ends the process group instead). */
#include "runner/jail.h"

void ks_jail_prepare(void)
{
}

/* the Seatbelt profile ks_sandbox_enter_compiler enters holds the file rules */
int ks_jail_root(const char *const *ro, const char *const *rw, char *why, size_t n)
{
	(void)ro, (void)rw, (void)why, (void)n;
	return 1;
}
