/* What the platforms of the sandbox share (sandbox.c), for sandbox_*.c only. */
#ifndef KS_EVAL_SANDBOX_IMPL_H
#define KS_EVAL_SANDBOX_IMPL_H

#include "eval/sandbox.h"
#include "ksearch/buf.h"

/* In the child between fork and exec: lim's address-space and CPU limits, the file size
 * (64 MiB unless lim says), no core files, 256 descriptors, 4096 processes */
void ks_sandbox_rlimits(const struct ks_sandbox_limits *lim);
/* The child's preparation where the system offers nothing more: its own session, gone when
 * its parent already is, and the rlimits; 0 or -errno */
int ks_sandbox_child_plain(const struct ks_sandbox_limits *lim);

/* Seatbelt profiles (SBPL, macOS's sandbox language) written from the same needs as Linux's
 * rules (sandbox_sbpl.c): portable text, checked on Linux (tests/unit/test_sbpl.c) and
 * handed to sandbox_init on macOS (sandbox_macos.c).  Everything is denied but what is
 * listed; no network, no new processes.  Paths are resolved (Seatbelt matches real paths:
 * /tmp is /private/tmp) and quoted.  The runner's: reads of the system's libraries and data,
 * of the kernel (its folder with needs->artifact_folder), of read_dir (NULL: none) and of
 * needs->read_paths; reads and writes under scratch and needs->rw_paths; needs' Mach
 * services, IOKit classes and, with unix_sockets, local sockets.  out fails (ks_buf_failed)
 * when the text does not fit. */
void ks_sbpl_runner(struct ks_buf *out, const char *scratch, const char *kernel_path,
		    const char *read_dir, const struct ks_sandbox_needs *needs);
/* The compiler's: reads and execution under the system's toolchain folders and ro[], reads
 * and writes under rw[] (NULL-terminated), /dev/null; new processes (the compiler's own
 * stages) only from what it may read; no network, and with no_sockets no socket at all. */
void ks_sbpl_compiler(struct ks_buf *out, const char *const *ro, const char *const *rw,
		      int no_sockets);

#endif
