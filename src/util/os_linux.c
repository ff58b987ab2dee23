/* The Linux side of util/os.h. */
#include "util/os.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

const char ks_os_name[] = "linux";

int ks_os_pipe(int fd[2])
{
	return pipe2(fd, O_CLOEXEC);
}

int ks_os_socketpair(int fd[2])
{
	return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd);
}

int ks_os_random(void *buf, size_t n)
{
	return getrandom(buf, n, 0) == (ssize_t)n ? 0 : -1;
}

int ks_os_rename_noreplace(int fromdir, const char *from, int todir, const char *to)
{
	return renameat2(fromdir, from, todir, to, RENAME_NOREPLACE);
}

int ks_os_cpus(void)
{
	cpu_set_t set;
	long cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set)
							      : sysconf(_SC_NPROCESSORS_ONLN);
	return cpus < 1 ? 1 : (int)cpus;
}

#ifdef SYS_close_range
int ks_os_close_range(unsigned lo, unsigned hi)
{
	return lo > hi ? 0 : (int)syscall(SYS_close_range, lo, hi, 0);
}
#else
int ks_os_close_range(unsigned lo, unsigned hi)
{
	errno = ENOSYS;
	return -1;
}
#endif

int ks_os_exe_path(char *out, size_t n)
{
	ssize_t len = readlink("/proc/self/exe", out, n - 1);
	if (len <= 0)
		return -1;
	out[len] = '\0';
	return 0;
}

/* a memfd sealed at its size: a truncate by anyone gets EPERM */
int ks_os_fixed_shm(const char *name, size_t bytes)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd >= 0 && (ftruncate(fd, (off_t)bytes) ||
			fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

void ks_os_hugepages(void *p, size_t n)
{
	madvise(p, n, MADV_HUGEPAGE);
}

void ks_os_qsort_r(void *base, size_t n, size_t size,
		   int (*cmp)(const void *a, const void *b, void *ctx), void *ctx)
{
	qsort_r(base, n, size, cmp, ctx);
}

int ks_os_execvpe(const char *file, char *const argv[], char *const env[])
{
	return execvpe(file, argv, env);
}

void ks_os_clearenv(void)
{
	clearenv();
}

void ks_os_cpu_model(char *out, size_t n)
{
	char line[512];
	snprintf(out, n, "?");
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(out, n, "%s", strchr(line, ':') + 2);
			out[strcspn(out, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
}

long ks_os_mem_kb(void)
{
	char line[512];
	long mem_kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %ld kB", &mem_kb) == 1)
			break;
	if (f)
		fclose(f);
	return mem_kb;
}

/* RUSAGE_SELF sums every thread's counts, the ones that ended included (Linux's
 * getrusage(2)): a kernel's OpenMP threads are in it */
long long ks_os_preemptions(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_SELF, &ru) ? -1 : (long long)ru.ru_nivcsw;
}
