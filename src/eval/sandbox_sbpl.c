/* Seatbelt profiles written from the sandbox's needs (contract in sandbox_impl.h).
 *
 * SBPL is a Scheme dialect: the last rule that matches an operation decides it, paths are
 * strings matched after symlinks are resolved, and "(deny default)" refuses every
 * operation no rule allows: files, network, process creation, Mach and IOKit services,
 * signals to others.  What each part allows mirrors Linux's Landlock list (sandbox_linux.c,
 * landlock_enter) for macOS's layout. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "eval/sandbox_impl.h"
#include "ksearch/backend.h"

/* reads for everything the runner links and the C library consults: system libraries and
 * frameworks (the dyld cache lives under /System), time zones, Homebrew's libomp (/opt) */
static const char *const runner_system_ro[] = {
	"/usr", "/System", "/Library/Apple", "/private/etc", "/private/var/db/timezone", "/opt",
	"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", NULL};

/* the toolchains a compile reads and runs: Apple's command line tools or Xcode (xcrun at
 * /usr/bin finds them through xcode_select_link), Homebrew's compilers and libomp */
static const char *const compiler_system_ro[] = {
	"/usr", "/bin", "/System", "/Library/Developer/CommandLineTools",
	"/Applications/Xcode.app", "/private/var/db/xcode_select_link", "/private/etc",
	"/private/var/db/timezone", "/opt", "/usr/local", NULL};

/* s as an SBPL string literal */
static void sb_string(struct ks_buf *b, const char *s)
{
	ks_buf_adds(b, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			ks_buf_adds(b, "\\");
		ks_buf_add(b, s, 1);
	}
	ks_buf_adds(b, "\"");
}

/* (subpath "REAL") for path: the resolved path where it exists, else path as given */
static void sb_subpath(struct ks_buf *b, const char *path)
{
	char real[PATH_MAX];
	ks_buf_adds(b, " (subpath ");
	sb_string(b, realpath(path, real) ? real : path);
	ks_buf_adds(b, ")");
}

/* one rule "(allow OPS (subpath P)...)" for the non-empty paths of list; nothing when none */
static void sb_allow_paths(struct ks_buf *b, const char *ops, const char *const *list)
{
	int any = 0;
	for (const char *const *p = list; p && *p; p++)
		any |= (*p)[0] != '\0';
	if (!any)
		return;
	ks_buf_addf(b, "(allow %s", ops);
	for (const char *const *p = list; p && *p; p++)
		if ((*p)[0])
			sb_subpath(b, *p);
	ks_buf_adds(b, ")\n");
}

/* one rule "(allow OP (FILTER "NAME")...)" for the names of list */
static void sb_allow_names(struct ks_buf *b, const char *op, const char *filter,
			   const char *const *list)
{
	if (!list || !list[0])
		return;
	ks_buf_addf(b, "(allow %s", op);
	for (const char *const *p = list; *p; p++) {
		ks_buf_addf(b, " (%s ", filter);
		sb_string(b, *p);
		ks_buf_adds(b, ")");
	}
	ks_buf_adds(b, ")\n");
}

/* what any confined process needs to start threads, read its own state and the CPU's */
static void sb_prologue(struct ks_buf *b)
{
	ks_buf_adds(b, "(version 1)\n"
		       "(deny default)\n"
		       "(allow signal (target self))\n"
		       "(allow process-info* (target self))\n"
		       "(allow sysctl-read)\n"
		       "(allow file-read-metadata)\n");
}

/* the kernel, or its whole folder for a runtime that reads files beside it */
static void sb_kernel(struct ks_buf *b, const char *kernel_path, int whole_folder)
{
	char folder[PATH_MAX];
	const char *paths[] = {kernel_path, NULL};
	if (whole_folder && strlen(kernel_path) < sizeof(folder)) {
		strcpy(folder, kernel_path);
		char *slash = strrchr(folder, '/');
		if (slash && slash != folder) {
			*slash = '\0';
			paths[0] = folder;
		}
	}
	sb_allow_paths(b, "file-read* file-map-executable", paths);
}

void ks_sbpl_runner(struct ks_buf *out, const char *scratch, const char *kernel_path,
		    const char *read_dir, const struct ks_sandbox_needs *needs)
{
	static const struct ks_sandbox_needs none = {0};
	if (!needs)
		needs = &none;
	sb_prologue(out);
	sb_allow_paths(out, "file-read* file-map-executable", runner_system_ro);
	sb_allow_paths(out, "file-read*", needs->read_paths);
	if (kernel_path)
		sb_kernel(out, kernel_path, needs->artifact_folder);
	/* the input cache: read, never written (the evaluator writes it) */
	const char *inputs[] = {read_dir, NULL};
	sb_allow_paths(out, "file-read*", read_dir ? inputs : NULL);
	const char *scratch_list[] = {scratch, NULL};
	sb_allow_paths(out, "file-read* file-write*", scratch_list);
	sb_allow_paths(out, "file-read* file-write*", needs->rw_paths);
	/* /dev/null written to, as Linux allows */
	ks_buf_adds(out, "(allow file-write-data (literal \"/dev/null\"))\n");
	/* the output file the evaluator shares (util/os_macos.c: a POSIX shared-memory object
	 * named /ks-..., its name removed before the runner starts) */
	ks_buf_adds(out, "(allow ipc-posix-shm-read-data ipc-posix-shm-write-data "
			 "(ipc-posix-name-regex #\"^/ks-\"))\n");
	sb_allow_names(out, "mach-lookup", "global-name", needs->mach_services);
	sb_allow_names(out, "iokit-open", "iokit-user-client-class", needs->iokit_classes);
	if (needs->iokit_classes && needs->iokit_classes[0])
		ks_buf_adds(out, "(allow iokit-get-properties)\n");
	if (needs->unix_sockets)
		ks_buf_adds(out, "(allow system-socket (socket-domain AF_UNIX))\n"
				 "(allow network-outbound (remote unix-socket))\n");
	/* last, so that no rule above can let a byte out */
	ks_buf_adds(out, "(deny network-outbound (remote ip))\n"
			 "(deny network-inbound network-bind)\n"
			 "(deny process-fork process-exec)\n");
}

void ks_sbpl_compiler(struct ks_buf *out, const char *const *ro, const char *const *rw,
		      int no_sockets)
{
	static const char *const dev_null[] = {"/dev/null", NULL};
	sb_prologue(out);
	sb_allow_paths(out, "file-read* file-map-executable process-exec", compiler_system_ro);
	sb_allow_paths(out, "file-read* file-map-executable process-exec", ro);
	sb_allow_paths(out, "file-read* file-write* file-map-executable", rw);
	sb_allow_paths(out, "file-read* file-write-data", dev_null);
	/* the compiler driver starts its stages (cc1, as, ld); /usr/bin/cc is xcrun's shim, which
	 * reads its preferences through cfprefsd to find the toolchain (no network either way) */
	static const char *const prefs[] = {"com.apple.cfprefsd.daemon", "com.apple.cfprefsd.agent",
					    NULL};
	ks_buf_adds(out, "(allow process-fork)\n(allow user-preference-read)\n");
	sb_allow_names(out, "mach-lookup", "global-name", prefs);
	/* local sockets only (Python's socketpair), never network; none with no_sockets */
	if (!no_sockets)
		ks_buf_adds(out, "(allow system-socket (socket-domain AF_UNIX))\n");
	ks_buf_adds(out, "(deny network*)\n");
}
