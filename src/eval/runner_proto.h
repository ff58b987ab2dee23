/* The private protocol between the evaluator and ksearch-runner.
 *
 * The runner is exec'd with a scrubbed environment and these descriptors:
 *   KS_RUNNER_FD_CMD    commands from the evaluator, one text line each
 *   KS_RUNNER_FD_REPLY  replies, one text line each
 *   KS_RUNNER_FD_OUT    a shared memory file the runner copies a set's outputs into
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
 *   alloc <nsets>                                [ok <bytes> <host_ns> <device_ns>]
 *                                                 host pages mapped and touched, device
 *                                                 buffers allocated
 *   fill <set> <seed>                            [ok <gen_ns> <upload_ns> <checksum_ns>
 *                                                  <cached_bytes>]
 *                                                 inputs regenerated (or copied from a set
 *                                                 of the same seed, or read from the input
 *                                                 cache: cached_bytes of them), made
 *                                                 read-only
 *   call <set>                                   [done <ns> <inputs_intact> <poison_ns>
 *                                                  <call_ns> <download_ns> <checksum_ns>]
 *                                                 outputs poisoned before, copied to the
 *                                                 shared file right after the call; the
 *                                                 last four: the runner's wall time of
 *                                                 each step (the evaluator's breakdown)
 *   snap <set>                                   [ok]  copy a set's current outputs
 *   time <warmup> <min_reps> <min_ns> <max_reps> <max_ns> [<ci_ppm> <ci_min_reps>]
 *                                                [times <n> <warm_ns> <block_ns> <t0> ...]
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

#define KS_RUNNER_PROTO_VERSION 1
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

#endif
