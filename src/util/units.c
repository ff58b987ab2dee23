#include "util/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ks_parse_size(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	/* strtod takes "nan" and "inf": neither is a size */
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	double mul = 1;
	switch (toupper((unsigned char)*end)) {
	case 'K':
		mul = 1024.0;
		end++;
		break;
	case 'M':
		mul = 1024.0 * 1024;
		end++;
		break;
	case 'G':
		mul = 1024.0 * 1024 * 1024;
		end++;
		break;
	case 'T':
		mul = 1024.0 * 1024 * 1024 * 1024;
		end++;
		break;
	}
	if (toupper((unsigned char)*end) == 'B')
		end++;
	if (*end || v * mul >= 0x1p62)
		return -1;
	*out = (size_t)(v * mul);
	return 0;
}

int ks_parse_duration(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	/* "nan" and "inf" would switch every limit off */
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	double mul = 1;
	if (!strcmp(end, "ms"))
		mul = 1e-3;
	else if (!strcmp(end, "s") || !*end)
		mul = 1;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		mul = 60;
	else if (!strcmp(end, "h"))
		mul = 3600;
	else
		return -1;
	if (v * mul > 1e9) /* some thirty years: surely a typo */
		return -1;
	*out = v * mul;
	return 0;
}

const char *ks_format_bytes(double bytes, char *out, size_t n)
{
	static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	int u = 0;
	for (; bytes >= 1024 && u < 6; u++)
		bytes /= 1024;
	snprintf(out, n, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
	return out;
}
