/* The machine fingerprint (contract in machine.h). */
#include "util/machine.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *ks_machine_fingerprint(void)
{
	static char fp[512];
	if (fp[0])
		return fp;
	char model[256] = "?", line[512];
	long mem_kb = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
	f = fopen("/proc/meminfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %ld kB", &mem_kb) == 1)
			break;
	if (f)
		fclose(f);
	snprintf(fp, sizeof(fp), "%s|%ld cpus|%ld kB", model, sysconf(_SC_NPROCESSORS_ONLN), mem_kb);
	return fp;
}
