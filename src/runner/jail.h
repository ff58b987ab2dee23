/* The system's half of ksearch-cc-jail (cc_jail.c parses the options and scrubs the
 * environment): jail_linux.c, jail_macos.c. */
#ifndef KS_RUNNER_JAIL_H
#define KS_RUNNER_JAIL_H

#include <stddef.h>

/* first thing in main: die with the parent where the system can say so, and (Linux, as
 * root) a private network namespace with nothing in it */
void ks_jail_prepare(void);
/* right before exec: the file system, privileges and sockets of the jail (ro[] read-only,
 * rw[] writable, both NULL-terminated; no_sockets: no socket at all); 0, or -1 with why
 * set (the caller must not run anything then) */
int ks_jail_confine(const char *const *ro, const char *const *rw, int no_sockets, char *why,
		    size_t n);

#endif
