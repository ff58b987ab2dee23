/* Parsing of human-written sizes ("512M", "2G") and durations ("90s", "30m", "1h"). */
#ifndef KS_UTIL_UNITS_H
#define KS_UTIL_UNITS_H

#include <stddef.h>

/* bytes; suffixes K M G T (powers of 1024), optional trailing B; -1 when malformed */
int ks_parse_size(const char *s, size_t *out);
/* seconds; suffixes ms s m h (none = seconds); -1 when malformed */
int ks_parse_duration(const char *s, double *out);
/* bytes for people, in powers of 1024: "512 bytes", "32.0 GiB"; returns out */
const char *ks_format_bytes(double bytes, char *out, size_t n);

#endif
