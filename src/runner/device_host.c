/* The host device: kernels run on the CPU in the runner's own threads. */
#include "runner/runner.h"
#include "util/clock.h"

static int host_init(char *why, size_t n)
{
	return 0;
}

static void *host_alloc(void *host, size_t bytes)
{
	return host;
}

static int host_copy(void *dst, const void *src, size_t bytes)
{
	return 0;
}

static int host_call(void (*launch)(int, void *), int set, uint64_t *ns, char *err, size_t n)
{
	uint64_t t0 = ks_clock_ns();
	launch(set, NULL);
	*ns = ks_clock_ns() - t0;
	return 0;
}

static void host_release(void *dev, size_t bytes)
{
	(void)dev; /* the runner unmaps the host memory itself */
	(void)bytes;
}

static void *host_stream(void)
{
	return NULL;
}

static const struct ks_runner_device host_device = {
	.name = "host",
	.sandbox = NULL, /* the base rules: the cpu backend has no sandbox needs */
	.init = host_init,
	.alloc = host_alloc,
	.upload = host_copy,
	.download = host_copy,
	.protect_inputs = 1,
	.call = host_call,
	.between_reps = NULL,
	.stream = host_stream,
	.release = host_release,
};

const struct ks_runner_device *ks_runner_device_get(void)
{
	return &host_device;
}
