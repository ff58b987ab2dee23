/* The private protocol between the evaluator and ksearch-runner.
 *
 * The runner is exec'd with a scrubbed environment and these descriptors:
 *   KS_RUNNER_FD_CMD    commands from the evaluator, one text line each
 *   KS_RUNNER_FD_REPLY  replies, one text line each
 *   KS_RUNNER_FD_OUT    a shared memory file, sealed against shrinking and growing, that
 *                       holds the outputs of the sets alloc says (ks_runner_out_layout):
 *                       the kernel writes there itself on the host device, a device's
 *                       outputs are downloaded there
 * stdout and stderr go to a capped log pipe, so a kernel's prints never reach the protocol.
 *
 * Commands (replies in brackets; any command may instead get "error <message>"):
 *   hello                                        [ok ksearch-runner <version> <main_ns>]
 *                                                 main_ns: CLOCK_MONOTONIC when the
 *                                                 runner's main began (the evaluator's
 *                                                 spawn to there: exec and loader)
 *   inputs <dir>                                 [ok]  the input cache (rest of the line),
 *                                                 before sandbox: read-only there, read by
 *                                                 fill (src/task/input_cache.h)
 *   sandbox <scratch>                            [ok]  landlock + seccomp from load on
 *   load <path-to-so>                            [ok <sandbox_ns> <load_ns> <init_ns>]
 *                                                 sandbox entered, dlopen and
 *                                                 ks__entry_v1 found, device initialised
 *   tensor <i> <dtype> <numel> <is_out> <kind> <a> <b> <key>   [ok]
 *   params <n> <v0> ...                          [ok]
 *   alloc <nsets> [<nshared>]                    [ok <bytes> <host_ns> <device_ns> <stride>
 *                                                  <direct>]
 *                                                 host pages mapped and touched, device
 *                                                 buffers allocated; the outputs of the
 *                                                 first nshared sets (all by default) in
 *                                                 the output file, the others the
 *                                                 runner's own; stride: the bytes of a set
 *                                                 there; direct: 1 when the kernel writes
 *                                                 there itself
 *   fill <set> <seed>                            [ok <gen_ns> <upload_ns> <checksum_ns>
 *                                                  <cached_bytes>]
 *                                                 inputs regenerated (or copied from a set
 *                                                 of the same seed, or read from the input
 *                                                 cache: cached_bytes of them), made
 *                                                 read-only
 *   call <set>                                   [done <ns> <inputs_intact> <poison_ns>
 *                                                  <call_ns> <download_ns> <checksum_ns>]
 *                                                 outputs poisoned before, in the shared
 *                                                 file right after the call; the
 *                                                 last four: the runner's wall time of
 *                                                 each step (the evaluator's breakdown)
 *   snap <set>                                   [ok]  a set's current outputs into the
 *                                                 shared file (downloaded from a device;
 *                                                 an error for a set not there)
 *   time <warmup> <min_reps> <min_ns> <max_reps> <max_ns> [<ci_ppm> <ci_min_reps>]
 *                                                [times <n> <warm_ns> <block_ns> <span_ns>
 *                                                  <t0> ... <preempted>]
 *                                                 span: from reading the command to the
 *                                                 reply (the evaluator's wall clock bounds
 *                                                 it from below and above); preempted:
 *                                                 the runner's involuntary context
 *                                                 switches during the timed calls, all
 *                                                 threads (ks_os_preemptions), -1 where
 *                                                 not counted; last, so an evaluator that
 *                                                 reads only the n samples stops before it
 *                                                 reps until min_reps and min_ns, or until
 *                                                 at least ci_min_reps put the median
 *                                                 within +-ci_ppm/1e6 (95%), at most
 *                                                 max_reps / max_ns
 *   reset                                        [ok <ns>]  forget the workload: tensors, params
 *                                                 and sets go, the kernel stays loaded and
 *                                                 the device initialised (error: the device
 *                                                 cannot; start a new runner instead)
 *   quit
 * Unsolicited lines the runner may send before dying:
 *   violation <what>      the sandbox stopped something (-> SANDBOX_VIOLATION)
 *   alloc_failed <bytes>  an allocation failed under the memory limit (-> MEMORY_LIMIT)
 *   launch_failed <what>  a device launch or execution error (-> RUNTIME_ERROR)
 *   launch_failed compile error: <log>   a kernel the device compiles at its first call
 *                         (mlx) did not compile (-> COMPILE_ERROR)
 */
#ifndef KS_EVAL_RUNNER_PROTO_H
#define KS_EVAL_RUNNER_PROTO_H

#define KS_RUNNER_PROTO_VERSION 2
#define KS_RUNNER_FD_CMD 3
#define KS_RUNNER_FD_REPLY 4
#define KS_RUNNER_FD_OUT 5

/* runner exit codes besides 0 */
#define KS_RUNNER_EXIT_VIOLATION 97
#define KS_RUNNER_EXIT_MEMORY 98
#define KS_RUNNER_EXIT_PROTO 99
#define KS_RUNNER_EXIT_LAUNCH 96

#define KS_RUNNER_MAX_TENSORS 32
#define KS_RUNNER_MAX_PARAMS 32
#define KS_RUNNER_MAX_SETS 64
#define KS_RUNNER_MAX_REPS 20000

#include <stddef.h>

/* The shared output file's layout, the same in the runner and the evaluator: a set's output
 * tensors one after the other, each starting on a page (a kernel may assume its buffers are
 * aligned as an mmap is), the sets one after the other, set s at s * stride.  offs[i] gets
 * the offset of tensor i in a set (outputs only: is_out[i]); returns the stride. */
static inline size_t ks_runner_out_layout(const size_t *bytes, const int *is_out, int n,
					  size_t page, size_t *offs)
{
	size_t off = 0;
	for (int i = 0; i < n; i++) {
		offs[i] = off;
		if (is_out[i])
			off += ((bytes[i] ? bytes[i] : 1) + page - 1) / page * page;
	}
	return off;
}

#endif
