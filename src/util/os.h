/* What differs between the systems ksearch builds on, behind one set of calls: Linux
 * (os_linux.c) and macOS (os_macos.c).  CMake compiles the file of the system it builds for
 * (a source named *_linux.c or *_macos.c belongs to that system only), so no function body
 * elsewhere needs an #ifdef.  Linked into the runner and the compiler's jail too: libc only. */
#ifndef KS_UTIL_OS_H
#define KS_UTIL_OS_H

#include <stddef.h>

/* How the system's C compiler builds a kernel: KS_OS_CC_FLAGS the cpu backend's default
 * optimisation, KS_OS_CC_OPENMP what turns OpenMP on (the references' loops), KS_OS_CC_SHARED
 * what makes a shared library that names no undefined symbol.  Apple's clang has no OpenMP
 * (a kernel's pragmas are ignored and it runs on one core; Homebrew's libomp brings it back
 * with --cflags), takes -mcpu for Apple's cores, and its linker refuses undefined symbols
 * by itself (it knows no -z defs). */
#if defined(__APPLE__) && defined(__aarch64__)
#define KS_OS_CC_FLAGS "-O3 -mcpu=apple-m1"
#define KS_OS_CC_OPENMP ""
#define KS_OS_CC_SHARED "-shared -fPIC"
#elif defined(__APPLE__)
#define KS_OS_CC_FLAGS "-O3 -march=native"
#define KS_OS_CC_OPENMP ""
#define KS_OS_CC_SHARED "-shared -fPIC"
#else
#define KS_OS_CC_FLAGS "-O3 -march=native -fopenmp"
#define KS_OS_CC_OPENMP "-fopenmp"
#define KS_OS_CC_SHARED "-shared -fPIC -Wl,-z,defs"
#endif

/* "linux", "macos": the system this build is for */
extern const char ks_os_name[];

/* a pipe whose ends are closed on exec; 0, or -1 with errno */
int ks_os_pipe(int fd[2]);
/* a pair of connected stream sockets closed on exec; 0, or -1 with errno */
int ks_os_socketpair(int fd[2]);
/* n random bytes from the system; 0, or -1 (the caller falls back to the clock) */
int ks_os_random(void *buf, size_t n);
/* rename from (under fromdir) to to (under todir) unless to exists (EEXIST); 0 or -1 */
int ks_os_rename_noreplace(int fromdir, const char *from, int todir, const char *to);
/* the cores this process may run on (a cpuset, a pinned worker), else the online ones */
int ks_os_cpus(void);
/* close descriptors lo..hi in one call where the system has one; -1 (ENOSYS) where not,
 * and the caller closes them one by one */
int ks_os_close_range(unsigned lo, unsigned hi);
/* the running executable's absolute path; 0, or -1 */
int ks_os_exe_path(char *out, size_t n);
/* A shared-memory file of bytes whose size nobody can change once it exists (a process
 * it is handed to cannot shrink it under this one's mapping: SIGBUS), closed on exec;
 * the descriptor, or -1 with errno. */
int ks_os_fixed_shm(const char *name, size_t bytes);
/* a hint that the anonymous memory at p of n bytes is better in huge pages (nothing where
 * the system has no such hint) */
void ks_os_hugepages(void *p, size_t n);
/* qsort with a context argument handed to cmp (glibc's qsort_r order) */
void ks_os_qsort_r(void *base, size_t n, size_t size,
		   int (*cmp)(const void *a, const void *b, void *ctx), void *ctx);
/* execvp with the environment env (glibc's execvpe); returns only on failure.  In a forked
 * child only: elsewhere than Linux it makes env the process's environment first. */
int ks_os_execvpe(const char *file, char *const argv[], char *const env[]);
/* empty the environment (clearenv) */
void ks_os_clearenv(void);
/* the CPU's model name ("?" when the system does not say) and the memory in kB (0) */
void ks_os_cpu_model(char *out, size_t n);
long ks_os_mem_kb(void);
/* The involuntary context switches of this process so far, all its threads together (the
 * scheduler took the CPU from a thread that could have run on: preempted, not sleeping);
 * -1 where the system does not count them (macOS: getrusage leaves them 0) */
long long ks_os_preemptions(void);

#endif
