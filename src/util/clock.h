/* The one monotonic clock (timeouts, deadlines, kernel timing, wall-clock cross-checks).
 * Shared by the library and the sandboxed runner; the runner binds it at load time, before
 * any kernel is loaded, so a kernel cannot interpose it. */
#ifndef KS_UTIL_CLOCK_H
#define KS_UTIL_CLOCK_H

#include <stdint.h>

/* seconds since an arbitrary start, as a double (about 0.1 us resolution over months) */
double ks_clock_s(void);
/* nanoseconds since the same start, exact (kernel timing) */
uint64_t ks_clock_ns(void);

#endif
