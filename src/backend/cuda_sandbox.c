/* What the CUDA driver needs inside the runner's sandbox: the files and sockets measured on
 * an H200 with bench/cuda/sandbox_probe.sh, the system calls derived (below).  Plain data, linked into ksearch-runner-cuda as well, whose
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

/* System calls beyond the common allow-list (src/eval/sandbox_linux.c) that the CUDA driver,
 * runtime and NVRTC, and MLX on a GPU, may make.  Derived, not measured (no GPU where this
 * was written): from the driver's public interface (device files driven by ioctl, memory
 * mapped from them, worker threads woken through eventfds, pipes and epoll, local daemons
 * over UNIX sockets).  MLX's CPU build needs none of them (measured, docs/evaluation.md).
 * Audit mode (KSEARCH_SECCOMP_AUDIT, bench/cuda/seccomp_audit.sh) lists what a GPU run
 * needs beyond these. */
const char *const ks_sandbox_gpu_syscalls[] = {
	/* the device files: every request is an ioctl (FIOSETOWN/SIOCSPGRP stay refused) */
	"ioctl",
	/* device memory mapped into the process, pinned host memory, NUMA placement */
	"mlock2", "mlockall", "munlockall", "mbind", "set_mempolicy",
	/* the driver's worker threads: wake-ups and waits */
	"eventfd", "eventfd2", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait",
	"epoll_pwait", "epoll_pwait2", "timerfd_create", "timerfd_settime", "timerfd_gettime",
	"futex_waitv",
	/* persistenced and other local daemons: AF_UNIX only (the deny filter checks) */
	"socket", "connect", "socketpair", "bind", "listen", "accept", "accept4", "sendmsg",
	"recvmsg", "sendto", "recvfrom", "sendmmsg", "recvmmsg", "getsockopt", "setsockopt",
	"getsockname", "getpeername", "shutdown",
	/* /dev/shm files shared between the driver's threads, lock files */
	"flock", "fchmod", "fchown", "link", "linkat", "symlink", "symlinkat", "utimensat",
	/* NVRTC and MLX ask about users, groups and file systems */
	"getresuid", "getresgid", "getgroups", "statfs", "fstatfs", "sched_getattr",
	"capget", "readahead",
	/* the driver needs it at start-up (NVIDIA/OpenShell#1696); off the CPU runner's list,
	 * where its pages would escape --memory-limit (issue 39) */
	"memfd_create", NULL};

const struct ks_sandbox_needs ks_sandbox_cuda = {
	/* the driver maps far more address space than it uses */
	.unlimited_address_space = 1,
	.read_paths = cuda_read,
	.device_prefixes = cuda_devices,
	.rw_paths = cuda_rw,
	/* it talks to local daemons (persistenced) over UNIX sockets at start-up */
	.unix_sockets = 1,
	.syscalls = ks_sandbox_gpu_syscalls,
	/* W^X not refused until measured with the driver (docs/evaluation.md) */
	.wx_memory = 1,
};
