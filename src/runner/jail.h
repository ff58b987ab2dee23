/* The system's half of ksearch-cc-jail (cc_jail.c parses the options and scrubs the
 * environment): jail_linux.c, jail_macos.c. */
#ifndef KS_RUNNER_JAIL_H
#define KS_RUNNER_JAIL_H

#include <stddef.h>

/* first thing in main: die with the parent where the system can say so, and (Linux, as
 * root) a private network namespace with nothing in it */
void ks_jail_prepare(void);
/* Right before exec, with the compiler's sandbox after it (ks_sandbox_enter_compiler): the
 * file system the jail sees.  Linux (jail_root_linux.c): a private mount namespace whose
 * root is an empty, read-only tmpfs holding exactly the folders and files of ro[]
 * (read-only) and rw[] (writable), both NULL-terminated, each at its own path, the links
 * among them (/lib -> usr/lib) and /dev/null.  Nothing else exists there:
 * `__has_include("/etc/shadow")`, stat() or a host's UNIX socket find nothing, where
 * Landlock alone (which still applies on top) forbids reading a file but not seeing that
 * it is there.  As root the namespace is the process's own; any other user gets it inside
 * a user namespace that maps only the user's ids (and a network namespace of its own).
 * Returns 0 with the new root in place, 1 when the system cannot narrow the view (a
 * container or kernel that forbids both namespaces; macOS, where the Seatbelt profile
 * holds the file rules itself), -1 with why set when it failed half-way (the caller must
 * not run anything then). */
int ks_jail_root(const char *const *ro, const char *const *rw, char *why, size_t n);

#endif
