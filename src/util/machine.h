/* What this machine is, for caches whose entries hold only where they were measured (the
 * results cache, the cached host spec). */
#ifndef KS_UTIL_MACHINE_H
#define KS_UTIL_MACHINE_H

/* "CPU model|N cpus|M kB": the same kernel times differently on another CPU, and a roof
 * measured on one machine is not another's */
const char *ks_machine_fingerprint(void);

#endif
