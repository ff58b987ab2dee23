/* The monotonic clock, in seconds (timeouts, deadlines, wall-clock cross-checks). */
#ifndef KS_UTIL_CLOCK_H
#define KS_UTIL_CLOCK_H

double ks_clock_s(void);

#endif
