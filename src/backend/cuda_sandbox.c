/* What the CUDA driver needs inside the runner's sandbox (measured on an H200 with
 * bench/cuda/sandbox_probe.sh).  Plain data, linked into ksearch-runner-cuda as well, whose
 * device (src/runner/device_cuda.c) points to it as ks_backend_cuda does. */
#include "backend/backends.h"

/* driver state, device enumeration, the toolkit's libraries */
static const char *const cuda_read[] = {
	"/proc/driver", "/proc/devices", "/proc/modules", "/proc/sys", "/proc/self/mountinfo",
	"/sys/bus", "/sys/devices", "/sys/module", "/sys/class", "/sys/dev", "/dev/char",
	"/etc/nvidia", "/etc/OpenCL", "/run/nvidia-persistenced", "/var/run/nvidia-persistenced",
	"/usr/local/cuda", "/usr/local/nvidia", NULL};

/* /dev/nvidia0, /dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidia-caps/...: only these */
static const char *const cuda_devices[] = {"nvidia", NULL};

/* the driver may share memory between its threads through /dev/shm files */
static const char *const cuda_rw[] = {"/dev/shm", NULL};

const struct ks_sandbox_needs ks_sandbox_cuda = {
	/* the driver maps far more address space than it uses */
	.unlimited_address_space = 1,
	.read_paths = cuda_read,
	.device_prefixes = cuda_devices,
	.rw_paths = cuda_rw,
	/* it talks to local daemons (persistenced) over UNIX sockets at start-up */
	.unix_sockets = 1,
	.syscalls = NULL,
};
