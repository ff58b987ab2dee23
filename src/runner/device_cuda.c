/* The CUDA device: buffers live in device memory, the kernel's host function launches on
 * ksearch's stream, and each call is timed with events on that stream.
 *
 * What a call measures (docs/cuda.md):
 *   start event, launch, stop event on ksearch's stream (a blocking stream, so work on the
 *   legacy default stream is ordered between the two events); wait for the stop event; then
 *   cudaDeviceSynchronize(), which also waits for work the kernel hid on another stream.
 *   When that second wait takes longer than on an idle device (measured at init), device
 *   work outlived the kernel's stream: the call then counts as long as the host saw it,
 *   from before the start event to the end of the device-wide wait, less an idle
 *   device-wide wait (measured at init); never less than the events and the extra wait.
 *   Only the idle wait is taken off: the rest of an empty call's steps (the stop event,
 *   its wait) run while hidden work runs, so taking them off too timed a private-stream
 *   kernel 2-35% faster than its twin on the given stream (t0402 on an H100).
 *   A kernel that returns before its work on a private stream is done so saves neither
 *   the launch nor the wait (issue 39: before, only the wait was counted, and such a
 *   softmax was timed 3-19% faster than the same kernel on the given stream).  The
 *   runner's wall clock around the call cross-checks the sum of the times in the evaluator
 *   as for every device.
 * Any CUDA error ends the call with -1 and the runner exits: a context that saw an
 * illegal address or a launch failure is never reused. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backends.h"
#include "runner/runner.h"
#include "util/clock.h"
#include "util/env.h"

/* calibration samples of an idle cudaDeviceSynchronize */
#define IDLE_SAMPLES 64
/* device work that outlives the stream by less than this is not distinguishable from
 * host jitter; it is the most a kernel can hide per call */
#define HIDDEN_MARGIN_NS 2000u

static struct {
	int device;
	cudaStream_t stream;
	cudaEvent_t start, stop;
	void *flush;
	size_t flush_bytes;
	unsigned flush_value;
	uint64_t idle_ns, idle_limit_ns; /* idle device sync: median, and the detection limit */
	unsigned long calls, hidden_calls;
} cu;

static int cu_fail(cudaError_t rc, const char *what, char *err, size_t n)
{
	snprintf(err, n, "%s: %s (%s)", what, cudaGetErrorName(rc), cudaGetErrorString(rc));
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* How long cudaDeviceSynchronize takes on an idle device (after cuda_call's events around
 * an empty launch), and its spread */
static int calibrate_idle(char *why, size_t n)
{
	uint64_t s[IDLE_SAMPLES];
	for (int i = 0; i < IDLE_SAMPLES; i++) {
		cudaError_t rc = cudaEventRecord(cu.start, cu.stream);
		if (rc == cudaSuccess)
			rc = cudaEventRecord(cu.stop, cu.stream);
		if (rc == cudaSuccess)
			rc = cudaEventSynchronize(cu.stop);
		uint64_t t0 = ks_clock_ns();
		if (rc == cudaSuccess)
			rc = cudaDeviceSynchronize();
		uint64_t t1 = ks_clock_ns();
		s[i] = t1 - t0;
		if (rc != cudaSuccess)
			return cu_fail(rc, "calibrate synchronisation", why, n);
	}
	qsort(s, IDLE_SAMPLES, sizeof(s[0]), cmp_u64);
	cu.idle_ns = s[IDLE_SAMPLES / 2];
	cu.idle_limit_ns = s[IDLE_SAMPLES * 9 / 10] * 2 + HIDDEN_MARGIN_NS;
	return 0;
}

/* A call whose device work outlived ksearch's stream (wait beyond the idle limit): as long
 * as the host saw it (whole: from before the start event to the end of the device-wide
 * wait) less an idle device-wide wait, and never less than the events plus the extra wait */
static uint64_t hidden_call_ns(uint64_t events_ns, uint64_t wait, uint64_t whole)
{
	uint64_t counted = events_ns + (wait - cu.idle_ns);
	uint64_t host = whole > cu.idle_ns ? whole - cu.idle_ns : 0;
	return host > counted ? host : counted;
}

/* The runner's environment is scrubbed (no LD_LIBRARY_PATH), so a driver that is found
 * only through it (containers mount it under /usr/local/nvidia) would be missing when
 * libcudart looks for it.  Load it first by full path: libcudart's own dlopen of
 * "libcuda.so.1" then finds it by its soname. */
static void preload_driver(void)
{
	static const char *const paths[] = {
		"libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1",
		"/usr/local/nvidia/lib/libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
		"/usr/lib64/libcuda.so.1", "/usr/lib/aarch64-linux-gnu/libcuda.so.1",
		"/usr/lib/wsl/lib/libcuda.so.1"};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (dlopen(paths[i], RTLD_NOW | RTLD_GLOBAL))
			return;
}

static int cuda_init(char *why, size_t n)
{
	preload_driver();
	const char *d = ks_env_get()->device;
	cu.device = d && d[0] ? atoi(d) : 0;
	/* spin while waiting: wake-up latency stays small and steady, which the hidden-work
	 * check relies on; fails harmlessly when the kernel's constructors already made a
	 * context */
	if (cudaSetDeviceFlags(cudaDeviceScheduleSpin) != cudaSuccess)
		(void)cudaGetLastError();
	int count = 0;
	cudaError_t rc = cudaGetDeviceCount(&count);
	if (rc != cudaSuccess)
		return cu_fail(rc, "cudaGetDeviceCount", why, n);
	if (cu.device < 0 || cu.device >= count) {
		snprintf(why, n, "KSEARCH_DEVICE=%d but %d device(s) are visible", cu.device, count);
		return -1;
	}
	if ((rc = cudaSetDevice(cu.device)) != cudaSuccess)
		return cu_fail(rc, "cudaSetDevice", why, n);
	if ((rc = cudaFree(NULL)) != cudaSuccess)
		return cu_fail(rc, "create the context", why, n);
	if ((rc = cudaStreamCreate(&cu.stream)) != cudaSuccess)
		return cu_fail(rc, "cudaStreamCreate", why, n);
	if ((rc = cudaEventCreate(&cu.start)) != cudaSuccess ||
	    (rc = cudaEventCreate(&cu.stop)) != cudaSuccess)
		return cu_fail(rc, "cudaEventCreate", why, n);
	int l2 = 0;
	if ((rc = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, cu.device)) != cudaSuccess)
		return cu_fail(rc, "read the L2 size", why, n);
	cu.flush_bytes = (size_t)(l2 > 0 ? l2 : 64 << 20) * 2;
	if ((rc = cudaMalloc(&cu.flush, cu.flush_bytes)) != cudaSuccess)
		return cu_fail(rc, "allocate the L2 flush buffer", why, n);
	return calibrate_idle(why, n);
}

static void *cuda_alloc(void *host, size_t bytes)
{
	void *p = NULL;
	if (cudaMalloc(&p, bytes) != cudaSuccess) {
		(void)cudaGetLastError();
		return NULL;
	}
	return p;
}

static void cuda_release(void *dev, size_t bytes)
{
	(void)bytes;
	if (cudaFree(dev) != cudaSuccess)
		(void)cudaGetLastError(); /* a broken context fails the next call */
}

static int cuda_upload(void *dev, const void *host, size_t bytes)
{
	return cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess ? 0 : -1;
}

static int cuda_download(void *host, const void *dev, size_t bytes)
{
	return cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost) == cudaSuccess ? 0 : -1;
}

/* cuMemsetD16Async / cuMemsetD32Async (the runtime has only a byte memset), looked up in
 * the driver libcudart loaded, once */
typedef int (*memset_d16_fn)(unsigned long long dst, unsigned short v, size_t n, void *stream);
typedef int (*memset_d32_fn)(unsigned long long dst, unsigned int v, size_t n, void *stream);

static void *driver_symbol(const char *name)
{
	void *fn = NULL;
	enum cudaDriverEntryPointQueryResult q;
	if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) !=
		    cudaSuccess ||
	    q != cudaDriverEntryPointSuccess) {
		(void)cudaGetLastError();
		return NULL;
	}
	return fn;
}

static int cuda_poison(void *dev, size_t count, unsigned elem, uint32_t pattern)
{
	static memset_d16_fn d16;
	static memset_d32_fn d32;
	static int looked;
	if (!looked) {
		looked = 1;
		d16 = (memset_d16_fn)driver_symbol("cuMemsetD16");
		d32 = (memset_d32_fn)driver_symbol("cuMemsetD32");
	}
	int rc = -1;
	if (elem == 1)
		rc = cudaMemsetAsync(dev, (int)pattern, count, cu.stream) == cudaSuccess ? 0 : -1;
	else if (elem == 2 && d16)
		rc = d16((unsigned long long)(uintptr_t)dev, (unsigned short)pattern, count,
			 cu.stream);
	else if (elem == 4 && d32)
		rc = d32((unsigned long long)(uintptr_t)dev, pattern, count, cu.stream);
	/* finished before the call's start event: the memset is never part of its time */
	if (rc == 0 && cudaStreamSynchronize(cu.stream) != cudaSuccess)
		rc = -1;
	if (rc)
		(void)cudaGetLastError(); /* the host path follows */
	return rc ? -1 : 0;
}

static int cuda_call(void (*launch)(int, void *), int set, uint64_t *ns, char *err, size_t n)
{
	uint64_t h0 = ks_clock_ns();
	cudaError_t rc = cudaEventRecord(cu.start, cu.stream);
	if (rc != cudaSuccess)
		return cu_fail(rc, "record the start event", err, n);
	launch(set, cu.stream);
	/* a bad launch configuration is reported here and only here */
	if ((rc = cudaGetLastError()) != cudaSuccess)
		return cu_fail(rc, "kernel launch", err, n);
	if ((rc = cudaEventRecord(cu.stop, cu.stream)) != cudaSuccess)
		return cu_fail(rc, "record the stop event", err, n);
	if ((rc = cudaEventSynchronize(cu.stop)) != cudaSuccess)
		return cu_fail(rc, "kernel execution", err, n);
	uint64_t t0 = ks_clock_ns();
	rc = cudaDeviceSynchronize();
	uint64_t t1 = ks_clock_ns(), wait = t1 - t0;
	if (rc != cudaSuccess)
		return cu_fail(rc, "kernel execution (device-wide synchronisation)", err, n);
	if ((rc = cudaGetLastError()) != cudaSuccess)
		return cu_fail(rc, "after the kernel", err, n);
	float ms = 0;
	if ((rc = cudaEventElapsedTime(&ms, cu.start, cu.stop)) != cudaSuccess)
		return cu_fail(rc, "cudaEventElapsedTime", err, n);
	*ns = (uint64_t)((double)ms * 1e6);
	cu.calls++;
	if (wait > cu.idle_limit_ns) {
		/* the device was still busy after ksearch's stream finished */
		*ns = hidden_call_ns(*ns, wait, t1 - h0);
		if (cu.hidden_calls++ == 0)
			fprintf(stderr,
				"ksearch-runner-cuda: device work continued %.1f us after the stream "
				"the kernel was given had finished (work on another stream?); it is "
				"counted in the call's time\n",
				(double)(wait - cu.idle_ns) * 1e-3);
	}
	return 0;
}

/* overwrite twice the L2 so the next call starts cold; synchronous, so the runner's wall
 * clock around the next call does not include the flush */
static void cuda_between_reps(void)
{
	cu.flush_value = (cu.flush_value + 1) & 0xff;
	if (cudaMemsetAsync(cu.flush, (int)cu.flush_value, cu.flush_bytes, cu.stream) !=
		    cudaSuccess ||
	    cudaStreamSynchronize(cu.stream) != cudaSuccess)
		(void)cudaGetLastError(); /* a broken context fails the next call */
}

static void *cuda_stream(void)
{
	return cu.stream;
}

static const struct ks_runner_device cuda_device = {
	.name = "cuda",
	.sandbox = &ks_sandbox_cuda,
	.init = cuda_init,
	.alloc = cuda_alloc,
	.upload = cuda_upload,
	.download = cuda_download,
	.protect_inputs = 0,
	.call = cuda_call,
	.between_reps = cuda_between_reps,
	.stream = cuda_stream,
	.release = cuda_release,
	.poison = cuda_poison,
};

const struct ks_runner_device *ks_runner_device_get(void)
{
	return &cuda_device;
}
