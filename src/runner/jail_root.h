/* The file system seen inside ksearch-cc-jail: a private mount namespace whose root is an
 * empty, read-only tmpfs holding exactly the folders and files the jail may use, each at its
 * own path (read-only, or writable for rw), the links among them (/lib -> usr/lib) and
 * /dev/null.  Nothing else exists there: `__has_include("/etc/shadow")`, stat() or a
 * host's UNIX socket find nothing, where Landlock alone (which still applies on top) forbids
 * reading a file but not seeing that it is there.
 *
 * As root the namespace is the process's own; any other user gets it inside a user
 * namespace that maps only the user's ids (and a network namespace of its own with it).
 * Returns 0 with the new root in place, 1 when no namespace can be made here (a container
 * or kernel that forbids both: the host's view stays, as before), -1 with why set when it
 * failed half-way (the caller must not run anything then). */
#ifndef KS_RUNNER_JAIL_ROOT_H
#define KS_RUNNER_JAIL_ROOT_H

#include <stddef.h>

int ks_jail_root(const char *const *ro, const char *const *rw, char *why, size_t n);

#endif
