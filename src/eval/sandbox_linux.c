/* The Linux sandbox (the platform of sandbox.h): namespaces and rlimits for the child,
 * no capabilities, Landlock file rules, a seccomp deny filter, a pid filter and an
 * allow-list with a supervisor of opens for the runner; Landlock, no network and, on
 * request, no sockets for the compiler's jail.  A pids cgroup per runner is cgroup_linux.c's. */
#include "eval/sandbox.h"
#include "eval/sandbox_impl.h"

#include "ksearch/backend.h"
#include "util/env.h"

#include <dirent.h>
#include <pthread.h>
#include <termios.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* older kernel headers (Debian 12 ships ABI 2) lack the newer rights */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

/* the hand-written pid filter below reads 64-bit arguments as two 32-bit words */
#if defined(__x86_64__)
#define KS_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define KS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "ksearch's sandbox knows x86_64 and aarch64 only"
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define KS_ARG_LO_OFF 0u
#define KS_ARG_HI_OFF 4u
#else
#define KS_ARG_LO_OFF 4u
#define KS_ARG_HI_OFF 0u
#endif

/* ---- the child, between fork and exec: async-signal-safe calls only --------------- */

/* v in decimal at the end of buf (at least 24 bytes); returns where it starts */
static char *decimal(char *buf, size_t n, unsigned long long v)
{
	char *p = buf + n - 1;
	*p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) && p > buf);
	return p;
}

/* "ID ID 1": the id maps to itself */
static const char *id_map(char *buf, size_t n, unsigned long long id)
{
	char d[24];
	const char *v = decimal(d, sizeof(d), id);
	size_t len = strlen(v);
	if (2 * len + 4 > n)
		return "";
	memcpy(buf, v, len);
	buf[len] = ' ';
	memcpy(buf + len + 1, v, len);
	memcpy(buf + 2 * len + 1, " 1", 3);
	return buf;
}

/* a user namespace where this process keeps its own uid and gid (an ordinary user's way to
 * mount namespaces); 0 or -1 */
static int own_user_namespace(int flags)
{
	char u[64], g[64];
	const char *uid = id_map(u, sizeof(u), getuid()), *gid = id_map(g, sizeof(g), getgid());
	if (unshare(CLONE_NEWUSER | flags) || ks_sandbox_write_text("/proc/self/uid_map", uid))
		return -1;
	(void)ks_sandbox_write_text("/proc/self/setgroups", "deny");
	return ks_sandbox_write_text("/proc/self/gid_map", gid);
}

/* A mount namespace of the child's own (a private network namespace with it when asked):
 * scratch becomes a tmpfs of scratch_bytes, so a kernel cannot fill the cache's file system,
 * and without exec rights, so nothing written there can be mapped as code.  Root makes it
 * directly, an ordinary user inside a user namespace of its own uid; where neither can
 * (user namespaces off), scratch stays a folder of the cache. */
static void private_namespaces(const struct ks_sandbox_limits *lim)
{
	int flags = (lim->scratch ? CLONE_NEWNS : 0) | (lim->isolate_network ? CLONE_NEWNET : 0);
	if (!flags || (unshare(flags) && own_user_namespace(flags))) {
		if (lim->isolate_network) /* what root could always do before */
			(void)unshare(CLONE_NEWNET);
		return;
	}
	if (!lim->scratch || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return;
	char sz[24], opts[96] = "mode=0700,nr_inodes=16384,size=";
	const char *v = decimal(sz, sizeof(sz), lim->scratch_bytes);
	memcpy(opts + strlen(opts), v, strlen(v) + 1);
	(void)mount("ksearch-scratch", lim->scratch, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		    opts);
}

static int linux_child_prepare(const struct ks_sandbox_limits *lim)
{
	if (setsid() < 0)
		return -errno;
	/* die with the evaluator: an orphaned runner must never keep a core busy */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (lim->parent && getppid() != lim->parent)
		_exit(127);
	/* first, so every thread the runner will start counts against its pids.max */
	if (lim->cgroup && ks_sandbox_write_text(lim->cgroup, "0"))
		return -EPERM;
	ks_sandbox_rlimits(lim);
	/* a private, empty network namespace where we may create one (root, or user
	 * namespaces; seccomp blocks sockets either way), and scratch's quota */
	private_namespaces(lim);
	return 0;
}

/* ---- privileges ------------------------------------------------------------------ */

/* Root's powers come from capabilities: without them renicing to a higher priority,
 * fanotify, mknod of devices, chattr +i, raw I/O and module loading all fail whatever
 * system call a kernel reaches them through.  Every capability goes: the bounding set
 * first (so nothing can come back through exec or a file capability), then the ambient
 * set, then effective/permitted/inheritable.  Called with no_new_privs already set. */
static int drop_privileges(char *why, size_t n)
{
	for (int cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL) {
			/* EPERM: no CAP_SETPCAP, so not root; such a process may not lower its
			 * bounding set, and need not: with no_new_privs no exec can raise what
			 * it holds, and the check below proves that is nothing */
			if (errno == EPERM)
				break;
			snprintf(why, n, "drop capability %d from the bounding set: %s", cap,
				 strerror(errno));
			return -1;
		}
	/* EINVAL: a kernel without ambient capabilities has none to clear */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL) {
		snprintf(why, n, "clear ambient capabilities: %s", strerror(errno));
		return -1;
	}
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data)) {
		snprintf(why, n, "drop capabilities: %s", strerror(errno));
		return -1;
	}
	/* the kernel must now hold nothing: check rather than trust */
	memset(data, 0xff, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) || data[0].effective || data[1].effective ||
	    data[0].permitted || data[1].permitted) {
		snprintf(why, n, "capabilities are still held after dropping them");
		return -1;
	}
	return 0;
}

/* ---- Landlock -------------------------------------------------------------------- */

/* what a read-only path grants: run, read, list */
#define LL_READ (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)

static long ll_abi(void)
{
	return syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
}

static const char *audit_path(void);

static const char *linux_describe(void)
{
	static char text[80];
	long abi = ll_abi();
	/* audit mode lets calls off the allow-list through: the record says so */
	const char *seccomp = audit_path() ? "seccomp in audit mode" : "seccomp";
	if (abi > 0)
		snprintf(text, sizeof(text), "%s + landlock abi %ld", seccomp, abi);
	else
		snprintf(text, sizeof(text), "%s (landlock unavailable)", seccomp);
	return text;
}

/* A ruleset handling every file-system right this kernel's Landlock ABI knows (REFER from
 * ABI 2, TRUNCATE from 3), so that whatever no rule grants is denied; *handled gets them. */
static int ll_ruleset(long abi, __u64 *handled, char *why, size_t n)
{
	*handled = LL_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
		   LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
		   LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
		   LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
		   LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
	if (abi >= 2)
		*handled |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		*handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
	struct landlock_ruleset_attr attr = {.handled_access_fs = *handled};
	int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rs < 0)
		snprintf(why, n, "landlock ruleset: %s", strerror(errno));
	return rs;
}

static int ll_allow(int ruleset, const char *path, __u64 access)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	struct landlock_path_beneath_attr pb = {.allowed_access = access, .parent_fd = fd};
	long rc = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
	int err = errno;
	close(fd);
	/* a file (not a directory) only takes file rights: retry with those */
	if (rc && err == EINVAL) {
		fd = open(path, O_PATH | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		pb.parent_fd = fd;
		pb.allowed_access = access & (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |
					      LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE);
		rc = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
		err = errno;
		close(fd);
	}
	return rc ? -err : 0;
}

/* the /dev entries whose names start with prefix (say /dev/nvidia0, /dev/nvidia-uvm): only these */
static int allow_device_nodes(int rs, const char *prefix, __u64 access)
{
	DIR *d = opendir("/dev");
	if (!d)
		return 0;
	struct dirent *de;
	int rc = 0;
	char path[300];
	while (!rc && (de = readdir(d)))
		if (!strncmp(de->d_name, prefix, strlen(prefix))) {
			snprintf(path, sizeof(path), "/dev/%s", de->d_name);
			rc = ll_allow(rs, path, access);
		}
	closedir(d);
	return rc;
}

static int landlock_enter(const char *scratch, const char *kernel_path, const char *read_dir,
			  const struct ks_sandbox_needs *needs, char *why, size_t n)
{
	long abi = ll_abi();
	if (abi <= 0)
		return 0; /* older kernels: seccomp alone, described in the eval log */
	__u64 handled;
	int rs = ll_ruleset(abi, &handled, why, n);
	if (rs < 0)
		return -1;
	/* reads: system libraries and data, CPU topology, this process's own /proc */
	static const char *const ro[] = {"/usr", "/lib", "/lib64", "/lib32", "/etc/ld.so.cache",
					 "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
					 "/sys/devices/system/cpu", "/sys/devices/system/node",
					 "/proc/cpuinfo", "/proc/meminfo", "/proc/stat",
					 "/dev/null", "/dev/zero", "/dev/urandom", "/opt"};
	int rc = 0;
	for (size_t i = 0; i < sizeof(ro) / sizeof(ro[0]) && !rc; i++)
		rc = ll_allow(rs, ro[i], LL_READ);
	/* what the backend's runtime needs besides (ks_sandbox_needs): driver state read, its
	 * device nodes read-write, shared-memory files */
	for (const char *const *p = needs->read_paths; p && *p && !rc; p++)
		rc = ll_allow(rs, *p, LL_READ);
	for (const char *const *p = needs->device_prefixes; p && *p && !rc; p++)
		rc = allow_device_nodes(rs, *p, LL_READ | LANDLOCK_ACCESS_FS_WRITE_FILE);
	for (const char *const *p = needs->rw_paths; p && *p && !rc; p++)
		rc = ll_allow(rs, *p, handled);
	if (!rc && kernel_path) {
		char folder[PATH_MAX];
		char *slash = NULL;
		/* a truncated copy could end in an ancestor's slash: the file alone then */
		if (snprintf(folder, sizeof(folder), "%s", kernel_path) < (int)sizeof(folder))
			slash = strrchr(folder, '/');
		const int whole = needs->artifact_folder && slash && slash != folder;
		if (whole)
			*slash = '\0';
		rc = ll_allow(rs, whole ? folder : kernel_path, LL_READ);
	}
	/* the input cache: read, never written (the evaluator writes it); never the reference
	 * cache beside it, which holds the expected outputs */
	if (!rc && read_dir)
		rc = ll_allow(rs, read_dir, LL_READ);
	/* threads name themselves through /proc/self/task/N/comm, opened with O_TRUNC; the
	 * CUDA driver fails to initialise (cudaErrorOperatingSystem) when it cannot name its
	 * threads, so truncation is allowed here (measured on an H200, bench/cuda/sandbox_probe.sh) */
	if (!rc)
		rc = ll_allow(rs, "/proc/self",
			      LL_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | (handled & LANDLOCK_ACCESS_FS_TRUNCATE));
	if (!rc)
		rc = ll_allow(rs, scratch, handled);
	if (rc) {
		snprintf(why, n, "landlock rule: %s", strerror(-rc));
		close(rs);
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_landlock_restrict_self, rs, 0)) {
		snprintf(why, n, "landlock restrict: %s", strerror(errno));
		close(rs);
		return -1;
	}
	close(rs);
	return 0;
}

/* ---- seccomp --------------------------------------------------------------------- */

/* "pid is 0 or the caller" takes two comparisons of one argument, which libseccomp (2.5)
 * cannot put in one rule: those checks are a second, hand-written filter stacked on top of
 * libseccomp's (the kernel applies the strictest answer of all filters).  Each entry: a
 * system call, the argument holding the pid, and optionally another argument that must
 * equal a value for the call to name a process at all (setpriority's PRIO_PROCESS). */
struct pid_rule {
	const char *name;
	int pid_arg;
	int kind_arg; /* -1: none */
	unsigned kind;
};

static const struct pid_rule pid_rules[] = {
	{"prlimit64", 0, -1, 0},        {"sched_setaffinity", 0, -1, 0},
	{"sched_setscheduler", 0, -1, 0}, {"sched_setparam", 0, -1, 0},
	{"sched_setattr", 0, -1, 0},     {"migrate_pages", 0, -1, 0},
	{"move_pages", 0, -1, 0},        {"get_robust_list", 0, -1, 0},
	{"setpriority", 1, 0, PRIO_PROCESS},
	{"ioprio_set", 1, 0, 1 /* IOPRIO_WHO_PROCESS */},
	{"fcntl", 2, 1, F_SETOWN},
};

#define ARG_LO(i) ((unsigned)offsetof(struct seccomp_data, args) + 8u * (unsigned)(i) + KS_ARG_LO_OFF)
#define ARG_HI(i) ((unsigned)offsetof(struct seccomp_data, args) + 8u * (unsigned)(i) + KS_ARG_HI_OFF)

/* Appends: if nr matches and (no kind, or kind matches), allow only a pid argument of 0
 * or self; everything else falls through to the next rule. */
static size_t pid_rule_emit(struct sock_filter *f, size_t k, int nr, const struct pid_rule *r,
			    unsigned self)
{
	/* 9 instructions without a kind check, 11 with; a jump skips that many instructions */
	int kinded = r->kind_arg >= 0;
	unsigned skip = kinded ? 9 : 7;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, skip);
	if (kinded) {
		f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(r->kind_arg));
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, r->kind, 0, 7);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_HI(r->pid_arg));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(r->pid_arg));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0);
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, self, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	return k;
}

static int pid_filter_load(pid_t self)
{
	struct sock_filter f[8 + 12 * sizeof(pid_rules) / sizeof(pid_rules[0])];
	size_t k = 0;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	/* another architecture's calls are libseccomp's filter's business (it kills them) */
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KS_AUDIT_ARCH, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	for (size_t i = 0; i < sizeof(pid_rules) / sizeof(pid_rules[0]); i++) {
		int nr = seccomp_syscall_resolve_name(pid_rules[i].name);
		if (nr != __NR_SCMP_ERROR && nr >= 0)
			k = pid_rule_emit(f, k, nr, &pid_rules[i], (unsigned)self);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = {.len = (unsigned short)k, .filter = f};
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) ? -errno : 0;
}

/* Every system call that names a process acts on the caller only: signalling, limiting,
 * renicing, pinning or moving the memory of anything else (ksearch, the baseline's runner)
 * raises SIGSYS.  0 means "the caller"; a thread id other than the process id is refused
 * too (glibc names another thread that way: pthread_setaffinity_np on another thread is a
 * violation, docs/evaluation.md). */
static int trap_other_processes(scmp_filter_ctx ctx, pid_t self)
{
	const scmp_datum_t me = (scmp_datum_t)self;
	int rc = 0;
	/* setpriority / ioprio_set of groups and users: as root, "user 0" is everybody */
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(setpriority), 1,
				      SCMP_A0(SCMP_CMP_NE, PRIO_PROCESS));
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(ioprio_set), 1,
				      SCMP_A0(SCMP_CMP_NE, 1 /* IOPRIO_WHO_PROCESS */));
	/* signals: only to this process (tgkill names the process first, then a thread) */
	static const int signal_self[] = {SCMP_SYS(kill), SCMP_SYS(tgkill),
					  SCMP_SYS(rt_sigqueueinfo), SCMP_SYS(rt_tgsigqueueinfo)};
	for (size_t i = 0; i < sizeof(signal_self) / sizeof(signal_self[0]) && !rc; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, signal_self[i], 1,
				      SCMP_A0(SCMP_CMP_NE, me));
	/* SIGIO/SIGURG delivery to another process through a descriptor's owner */
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(fcntl), 1,
				      SCMP_A1(SCMP_CMP_EQ, F_SETOWN_EX));
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(ioctl), 1,
				      SCMP_A1(SCMP_CMP_EQ, FIOSETOWN));
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(ioctl), 1,
				      SCMP_A1(SCMP_CMP_EQ, SIOCSPGRP));
	/* what ksearch set before the kernel loaded stays: the parent-death signal and the
	 * CPU-time limit (lowering other limits only hurts the kernel itself) */
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(prctl), 1,
				      SCMP_A0(SCMP_CMP_EQ, PR_SET_PDEATHSIG));
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(prlimit64), 2,
				      SCMP_A1(SCMP_CMP_EQ, RLIMIT_CPU), SCMP_A2(SCMP_CMP_NE, 0));
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(setrlimit), 1,
				      SCMP_A0(SCMP_CMP_EQ, RLIMIT_CPU));
	return rc;
}

/* The deny filter: what no kernel may do, whatever its backend allows, and what stays
 * refused in audit mode.  Conditional rules (threads only, signals to the runner only,
 * AF_UNIX only) live here too: the allow-list below lets the call through, this filter
 * looks at its arguments. */
static int deny_filter_load(const struct ks_sandbox_needs *needs)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	/* these raise SIGSYS: the runner's handler reports the syscall and exits */
	static const char *const trapped[] = {
		"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
		"execve", "execveat", "fork", "vfork", "ptrace", "process_vm_readv",
		"process_vm_writev", "mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
		"bpf", "perf_event_open", "io_uring_setup", "keyctl", "add_key", "request_key",
		"init_module", "finit_module", "delete_module", "kexec_load", "reboot", "swapon",
		"swapoff", "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid",
		"personality", "userfaultfd", "kcmp", "pidfd_open", "pidfd_getfd",
		"pidfd_send_signal", "sethostname", "setdomainname", "acct", "quotactl",
		"name_to_handle_at", "open_by_handle_at", "fanotify_init", "process_madvise",
		"process_mrelease", "tkill"};
	int rc = 0;
	for (size_t i = 0; i < sizeof(trapped) / sizeof(trapped[0]) && !rc; i++) {
		int nr = seccomp_syscall_resolve_name(trapped[i]);
		/* GPU drivers talk to local daemons over UNIX sockets at start-up: for them only
		 * network sockets are refused (and the network namespace is empty anyway) */
		int unix_ok = needs->unix_sockets &&
			      (!strcmp(trapped[i], "socket") || !strcmp(trapped[i], "connect") ||
			       !strcmp(trapped[i], "socketpair") || !strcmp(trapped[i], "bind") ||
			       !strcmp(trapped[i], "listen") || !strcmp(trapped[i], "accept") ||
			       !strcmp(trapped[i], "accept4"));
		if (nr == __NR_SCMP_ERROR || nr < 0 || unix_ok)
			continue;
		rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, nr, 0);
	}
	if (needs->unix_sockets && !rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(socket), 1,
				      SCMP_A0(SCMP_CMP_NE, AF_UNIX));
	/* clone: threads only (OpenMP needs them); clone3 hides its flags in memory, so it
	 * answers ENOSYS and glibc falls back to clone */
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(clone), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (!rc)
		rc = trap_other_processes(ctx, getpid());
	/* the CPU-time limit's SIGXCPU must end the runner, as a TIMEOUT */
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(rt_sigaction), 2,
				      SCMP_A0(SCMP_CMP_EQ, SIGXCPU), SCMP_A1(SCMP_CMP_NE, 0));
	/* nobody may take the SIGSYS handler away from the runner */
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(rt_sigaction), 2,
				      SCMP_A0(SCMP_CMP_EQ, SIGSYS), SCMP_A1(SCMP_CMP_NE, 0));
	if (!rc)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc;
}

/* ---- seccomp: the allow-list ----------------------------------------------------- */

/* What every runner may call once the kernel can run: measured with strace over every
 * shipped task's CPU kernels and MLX native baselines (MLX's CPU build), the baselines
 * timed too and OpenMP's threads included: scripts/seccomp_measure.sh, docs/evaluation.md */
static const char *const allowed_measured[] = {
	"brk", "mmap", "munmap", "mprotect", "madvise",
	/* threads (clone: threads only, which the deny filter checks; clone3: ENOSYS) */
	"clone", "clone3", "futex", "set_robust_list", "rseq", "exit", "exit_group",
	"sched_getaffinity", "getpid", "sysinfo", "rt_sigaction", "rt_sigprocmask",
	/* the kernel library, scratch, the system files Landlock lets it read, the pipes */
	"openat", "close", "read", "write", "newfstatat",
	/* OpenBLAS binds its thread buffers to NUMA nodes (measured: a task's library.c
	 * yardstick calling cblas_sgemm, KSEARCH_SECCOMP_AUDIT) */
	"mbind", NULL};

/* ... plus what the C library, libgomp and libm make of ordinary kernel code (time, sleep,
 * randomness, stdio, scratch files, its own limits, placement and signals, thread start-up
 * on newer C libraries), not seen in the shipped kernels but harmless with no capability
 * inside Landlock and the deny filter: derived, not measured */
static const char *const allowed_libc[] = {
	"mremap", "mincore", "mlock", "munlock", "get_mempolicy", "map_shadow_stack",
	"set_tid_address", "gettid", "sched_yield", "membarrier", "restart_syscall",
	"clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
	"getrandom", "getcpu", "uname", "getuid", "geteuid", "getgid", "getegid", "getppid",
	"getpgrp", "getrlimit", "prlimit64", "setrlimit", "getrusage", "times", "prctl",
	"sched_getparam", "sched_getscheduler", "sched_get_priority_max", "sched_get_priority_min",
	"sched_setaffinity", "sched_setscheduler", "sched_setparam", "getpriority", "setpriority",
	"rt_sigreturn", "sigaltstack", "rt_sigpending", "rt_sigtimedwait", "rt_sigsuspend",
	"pause", "alarm", "kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
	"open", "stat", "lstat", "fstat", "statx", "access", "faccessat", "faccessat2",
	"readlink", "readlinkat", "getcwd", "getdents64", "lseek", "pread64", "pwrite64",
	"readv", "writev", "preadv", "pwritev", "dup", "dup2", "dup3", "fcntl", "close_range",
	"ftruncate", "fallocate", "fsync", "fdatasync", "msync", "fadvise64", "mkdir", "mkdirat",
	"unlink", "unlinkat", "rmdir", "rename", "renameat", "renameat2", "umask",
	"pipe", "pipe2", "poll", "ppoll", "select", "pselect6", NULL};

/* calls allowed for some values of one argument only */
struct arg_allow {
	const char *name;
	int arg;
	unsigned long value;
};

static const struct arg_allow allowed_args[] = {
	/* ioctl for ordinary code: only "is this a terminal" and its size (stdio asks) */
	{"ioctl", 1, TCGETS},
	{"ioctl", 1, TIOCGWINSZ},
	/* x86 AMX: the tile registers are the process's only on request (measured: the
	 * matmul_bf16 amx.c template); ARCH_GET_XCOMP_SUPP, _GET_XCOMP_PERM, _REQ_XCOMP_PERM */
	{"arch_prctl", 0, 0x1021},
	{"arch_prctl", 0, 0x1022},
	{"arch_prctl", 0, 0x1023},
};

static int is_supervised(int nr, int *path_arg, int *flags_arg);

/* the names' calls allowed, but for the supervised ones (supervised_rules) */
static int allow_names(scmp_filter_ctx ctx, const char *const *names)
{
	int rc = 0, pa, fa;
	for (; names && *names && !rc; names++) {
		int nr = seccomp_syscall_resolve_name(*names);
		if (nr != __NR_SCMP_ERROR && nr >= 0 && !is_supervised(nr, &pa, &fa))
			rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0); /* else: not on this arch */
	}
	return rc;
}

/* The supervisor: a thread of the runner that the allow-list filter hands some calls to
 * (SCMP_ACT_NOTIFY) and that lets them go on.  File opens, always: the runner's open_check
 * sees each path first, so an open that breaks the rules is reported (SANDBOX_VIOLATION)
 * even as a raw system call, which the runner's open wrappers never see and which Landlock
 * refuses without a word (issue 39).  In audit mode, every call off the list too: its name
 * is appended to the audit file once.  The thread is filtered like every other (it makes
 * only ioctls on the listener, preads and writes) and blocks every signal, so no handler a
 * kernel installs runs on it.  A kernel that stops it only hangs its own opens. */
static struct {
	int listener, file, mem;
	unsigned char seen[1024];
	void (*open_check)(const char *path, int flags);
} sup = {-1, -1, -1, {0}, NULL};

/* the calls whose path the supervisor reads: (path argument, flags argument) */
static const struct {
	const char *name;
	int path_arg, flags_arg;
} supervised[] = {{"openat", 1, 2}, {"open", 0, 1}};

static int is_supervised(int nr, int *path_arg, int *flags_arg)
{
	for (size_t i = 0; i < sizeof(supervised) / sizeof(supervised[0]); i++)
		if (nr == seccomp_syscall_resolve_name(supervised[i].name)) {
			*path_arg = supervised[i].path_arg;
			*flags_arg = supervised[i].flags_arg;
			return 1;
		}
	return 0;
}

/* the calling thread's string at addr, through /proc/self/mem: a bad address reads as an
 * error, never a fault in the supervisor */
static int read_path(unsigned long long addr, char *out, size_t n)
{
	size_t got = 0;
	while (got + 1 < n) {
		ssize_t r = pread(sup.mem, out + got, n - 1 - got > 256 ? 256 : n - 1 - got,
				  (off_t)(addr + got));
		if (r <= 0)
			return -1;
		if (memchr(out + got, '\0', (size_t)r))
			return 0;
		got += (size_t)r;
	}
	out[n - 1] = '\0';
	return 0;
}

static void audit_note(int nr)
{
	if (sup.file < 0 || nr < 0 || nr >= (int)sizeof(sup.seen) || sup.seen[nr])
		return;
	sup.seen[nr] = 1;
	char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
	dprintf(sup.file, "%s %d %s\n", program_invocation_short_name, nr, name ? name : "?");
	free(name);
}

static void *supervisor_loop(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		struct seccomp_notif req;
		memset(&req, 0, sizeof(req));
		if (ioctl(sup.listener, SECCOMP_IOCTL_NOTIF_RECV, &req)) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			return NULL;
		}
		int path_arg, flags_arg;
		char path[4096];
		if (!is_supervised(req.data.nr, &path_arg, &flags_arg))
			audit_note(req.data.nr);
		else if (sup.open_check && read_path(req.data.args[path_arg], path, sizeof(path)) == 0)
			sup.open_check(path, (int)req.data.args[flags_arg]); /* may end the runner */
		struct seccomp_notif_resp resp = {.id = req.id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
		if (ioctl(sup.listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) && errno == EINVAL) {
			/* a kernel before 5.5 cannot continue the call: it fails instead */
			resp.flags = 0;
			resp.error = -ENOSYS;
			ioctl(sup.listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		}
	}
}

/* what the allow-list filter does with the supervised calls: hand them to the supervisor
 * when it checks opens, else allow them like the rest of their list.  In audit mode the
 * filter's default hands them over already (libseccomp refuses a rule that repeats it). */
static int supervised_rules(scmp_filter_ctx ctx, int checking, int auditing)
{
	int rc = 0;
	for (size_t i = 0; i < sizeof(supervised) / sizeof(supervised[0]) && !rc; i++) {
		int nr = seccomp_syscall_resolve_name(supervised[i].name);
		if (nr != __NR_SCMP_ERROR && nr >= 0 && !(checking && auditing))
			rc = seccomp_rule_add(ctx, checking ? SCMP_ACT_NOTIFY : SCMP_ACT_ALLOW, nr, 0);
	}
	return rc;
}

/* The allow-list filter, loaded last (it would refuse the seccomp calls that load the
 * others): the measured and the C library's calls, the backend's own (needs->syscalls),
 * everything else SIGSYS, or in audit mode handed to the supervisor; the supervised calls
 * to the supervisor when it checks opens. */
static int allow_filter_load(const struct ks_sandbox_needs *needs, int auditing)
{
	int checking = sup.open_check && sup.mem >= 0, notify = auditing || checking;
	scmp_filter_ctx ctx = seccomp_init(auditing ? SCMP_ACT_NOTIFY : SCMP_ACT_TRAP);
	if (!ctx)
		return -ENOMEM;
	/* a binary search over the syscall number instead of a linear scan of ~150 */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	int rc = allow_names(ctx, allowed_measured);
	if (!rc)
		rc = allow_names(ctx, allowed_libc);
	if (!rc)
		rc = allow_names(ctx, needs->syscalls);
	if (!rc)
		rc = supervised_rules(ctx, checking, auditing);
	for (size_t i = 0; i < sizeof(allowed_args) / sizeof(allowed_args[0]) && !rc; i++) {
		const struct arg_allow *a = &allowed_args[i];
		int nr = seccomp_syscall_resolve_name(a->name);
		if (nr != __NR_SCMP_ERROR && nr >= 0)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					      SCMP_CMP((unsigned)a->arg, SCMP_CMP_EQ, a->value));
	}
	/* the supervisor's own calls must never be handed to itself */
	static const unsigned long ioctl_sup[] = {SECCOMP_IOCTL_NOTIF_RECV,
						  SECCOMP_IOCTL_NOTIF_SEND};
	for (size_t i = 0; notify && i < 2 && !rc; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				      SCMP_A1(SCMP_CMP_EQ, ioctl_sup[i]));
	if (!rc)
		rc = seccomp_load(ctx);
	if (!rc && notify) {
		sup.listener = seccomp_notify_fd(ctx);
		pthread_t t;
		rc = sup.listener < 0 ? sup.listener
				      : -pthread_create(&t, NULL, supervisor_loop, NULL);
	}
	seccomp_release(ctx);
	return rc;
}

/* KSEARCH_SECCOMP_AUDIT=FILE in ksearch's environment (never the kernel's: the runner
 * reads it before the kernel is loaded, and ksearch builds each runner's environment
 * from its own) switches audit mode on */
static const char *audit_path(void)
{
	const char *p = ks_env_get()->seccomp_audit;
	return p && *p ? p : NULL;
}

/* opened before Landlock, which would refuse a file outside scratch */
static int audit_open(char *why, size_t n)
{
	const char *path = audit_path();
	if (!path)
		return 0;
	sup.file = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (sup.file < 0) {
		snprintf(why, n, "seccomp audit file '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int seccomp_enter(const struct ks_sandbox_needs *needs, char *why, size_t n)
{
	int rc = deny_filter_load(needs);
	if (!rc)
		rc = pid_filter_load(getpid());
	if (!rc)
		rc = allow_filter_load(needs, sup.file >= 0);
	if (rc) {
		snprintf(why, n, "seccomp: %s", strerror(-rc));
		return -1;
	}
	return 0;
}

/* ---- the compiler ----------------------------------------------------------------- */

static int compiler_landlock(const char *const *ro, const char *const *rw, char *why, size_t n)
{
	long abi = ll_abi();
	if (abi <= 0)
		return 0;
	__u64 handled;
	int rs = ll_ruleset(abi, &handled, why, n);
	if (rs < 0)
		return -1;
	int rc = ll_allow(rs, "/dev/null", LL_READ | LANDLOCK_ACCESS_FS_WRITE_FILE |
					       (handled & LANDLOCK_ACCESS_FS_TRUNCATE));
	for (size_t i = 0; ro && ro[i] && !rc; i++)
		rc = ll_allow(rs, ro[i], LL_READ);
	for (size_t i = 0; rw && rw[i] && !rc; i++)
		rc = ll_allow(rs, rw[i], handled);
	if (rc || syscall(SYS_landlock_restrict_self, rs, 0)) {
		snprintf(why, n, "landlock: %s", strerror(rc ? -rc : errno));
		close(rs);
		return -1;
	}
	close(rs);
	return 0;
}

/* --no-sockets: socket() fails for every family (the filter below refuses all but
 * AF_UNIX; this one, stacked on it, refuses AF_UNIX too) */
static int compiler_no_sockets(char *why, size_t n)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc = ctx ? seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 0) : -ENOMEM;
	if (!rc)
		rc = seccomp_load(ctx);
	if (ctx)
		seccomp_release(ctx);
	if (rc)
		snprintf(why, n, "seccomp: %s", strerror(-rc));
	return rc ? -1 : 0;
}

static int linux_enter_compiler(const char *const *ro, const char *const *rw, int no_sockets,
				char *why, size_t n)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		snprintf(why, n, "no_new_privs: %s", strerror(errno));
		return -1;
	}
	if (drop_privileges(why, n) || compiler_landlock(ro, rw, why, n))
		return -1;
	/* no network: sockets other than local ones fail (the compiler needs none) */
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		snprintf(why, n, "seccomp_init failed");
		return -1;
	}
	int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1,
				  SCMP_A0(SCMP_CMP_NE, AF_UNIX));
	if (!rc)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc) {
		snprintf(why, n, "seccomp: %s", strerror(-rc));
		return -1;
	}
	return no_sockets ? compiler_no_sockets(why, n) : 0;
}

/* PR_SET_MDWE (Linux 6.3), from <linux/prctl.h> of newer kernels */
#ifndef PR_SET_MDWE
#define PR_SET_MDWE 65
#define PR_MDWE_REFUSE_EXEC_GAIN (1UL << 0)
#endif

/* No memory that is writable and executable, and no executable rights for memory that was
 * not executable: a kernel cannot rewrite the runner's code (its clock, say) in place.  The
 * dynamic loader maps the kernel's library without either, before or after.  Kernels before
 * 6.3 do not know it (EINVAL): the evaluator's wall clock still bounds a clock slowed down
 * (docs/evaluation.md, "Cross-check"). */
static void refuse_wx(void)
{
	(void)prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0L, 0L, 0L);
}

/* KSEARCH_SANDBOX_SKIP=landlock,seccomp,dumpable,privileges,mdwe switches layers off for diagnosis when
 * the runner is started by hand; ksearch never passes this variable to a runner */
static int skipped(const char *layer)
{
	const char *v = ks_env_get()->sandbox_skip;
	return v && strstr(v, layer);
}

static int linux_enter(const char *scratch, const char *kernel_path, const char *read_dir,
		       const struct ks_sandbox_needs *needs,
		       void (*open_check)(const char *path, int flags), char *why, size_t n)
{
	static const struct ks_sandbox_needs base_rules = {0};
	if (!needs)
		needs = &base_rules;
	/* the supervisor reads an opening thread's path through its own memory file */
	sup.open_check = open_check;
	if (open_check)
		sup.mem = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		snprintf(why, n, "no_new_privs: %s", strerror(errno));
		return -1;
	}
	/* set again here, by the runner itself, so it holds whoever started it; the seccomp
	 * filter then keeps the kernel from clearing it */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL)) {
		snprintf(why, n, "parent-death signal: %s", strerror(errno));
		return -1;
	}
	/* the same for every runner, CPU or GPU (the GPU path is not measured yet:
	 * docs/evaluation.md, "What was not measured") */
	if (!skipped("privileges") && drop_privileges(why, n))
		return -1;
	/* a non-dumpable process cannot be read through /proc by its siblings either */
	if (!skipped("dumpable"))
		prctl(PR_SET_DUMPABLE, 0);
	if (!skipped("mdwe") && !needs->wx_memory)
		refuse_wx();
	if (!skipped("seccomp") && audit_open(why, n))
		return -1;
	if (!skipped("landlock") && landlock_enter(scratch, kernel_path, read_dir, needs, why, n))
		return -1;
	return skipped("seccomp") ? 0 : seccomp_enter(needs, why, n);
}

const struct ks_sandbox_platform ks_sandbox_native = {
	.version = KS_SANDBOX_PLATFORM_VERSION,
	.name = "linux",
	.child_prepare = linux_child_prepare,
	.enter = linux_enter,
	.enter_compiler = linux_enter_compiler,
	.describe = linux_describe,
};

int ks_sandbox_trapped_syscall(const siginfo_t *si)
{
	return si->si_syscall;
}

int ks_sandbox_syscall_name(int nr, char *out, size_t n)
{
	char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
	int found = name != NULL;
	if (found)
		snprintf(out, n, "%s", name);
	free(name);
	return found ? 0 : -1;
}
