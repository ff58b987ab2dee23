/* What a fresh process pays for the CUDA driver before a kernel can run: cuInit, then the
 * primary context and a first allocation (docs/results/throughput.md, 2026-12-02). With an
 * argument "hold-init SECONDS" or "hold SECONDS" it keeps the driver (cuInit only, or a
 * context too) open that long instead, so a second copy measures what a process keeping
 * the driver open would save the runners:
 *
 *   cc -O2 -o /tmp/ctx_probe bench/probes/ctx_probe.c -ldl
 *   for i in 1 2 3; do /tmp/ctx_probe; done
 *   /tmp/ctx_probe hold 30 & sleep 4; for i in 1 2 3; do /tmp/ctx_probe; done
 *
 * The driver is loaded with dlopen, as ksearch's own probe does: no CUDA headers needed. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*f_init)(unsigned);
typedef int (*f_get)(int *, int);
typedef int (*f_retain)(void **, int);
typedef int (*f_set)(void *);
typedef int (*f_alloc)(unsigned long long *, size_t);

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* keep what this process holds open for the seconds given */
static int hold(const char *what, int rc, const char *seconds)
{
	printf("keeper: %s rc=%d, holding\n", what, rc);
	fflush(stdout);
	sleep((unsigned)atoi(seconds));
	return 0;
}

int main(int argc, char **argv)
{
	double t0 = now();
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		puts("no libcuda");
		return 1;
	}
	double t1 = now();
	f_init ci = (f_init)dlsym(h, "cuInit");
	f_get dg = (f_get)dlsym(h, "cuDeviceGet");
	f_retain rt = (f_retain)dlsym(h, "cuDevicePrimaryCtxRetain");
	f_set cs = (f_set)dlsym(h, "cuCtxSetCurrent");
	f_alloc ma = (f_alloc)dlsym(h, "cuMemAlloc_v2");
	int r = ci(0);
	double t2 = now();
	if (argc > 2 && !strcmp(argv[1], "hold-init"))
		return hold("cuInit only", r, argv[2]);
	int dev;
	dg(&dev, 0);
	void *ctx;
	r |= rt(&ctx, dev);
	r |= cs(ctx);
	unsigned long long p;
	r |= ma(&p, 1 << 20);
	double t3 = now();
	if (argc > 2 && !strcmp(argv[1], "hold"))
		return hold("ctx", r, argv[2]);
	printf("rc=%d dlopen %.3f s cuInit %.3f s ctx+alloc %.3f s total %.3f s\n", r, t1 - t0,
	       t2 - t1, t3 - t2, t3 - t0);
	return 0;
}
