/* The machine fingerprint (contract in machine.h). */
#include "util/machine.h"
#include "util/os.h"

#include <stdio.h>
#include <unistd.h>

const char *ks_machine_fingerprint(void)
{
	static char fp[512];
	if (fp[0])
		return fp;
	char model[256];
	ks_os_cpu_model(model, sizeof(model));
	long mem_kb = ks_os_mem_kb();
	snprintf(fp, sizeof(fp), "%s|%ld cpus|%ld kB", model, sysconf(_SC_NPROCESSORS_ONLN), mem_kb);
	return fp;
}
