/* Run a shell command with data on stdin, capturing capped stdout and stderr, under a
 * timeout that kills the whole process group.  Used by the cmd policy transport. */
#ifndef KS_LLM_CMD_H
#define KS_LLM_CMD_H

#include <stddef.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"

struct ks_cmd_result {
	int exited;           /* 1 when the command exited (status valid) */
	int status;           /* exit status, or the signal number when !exited */
	int timed_out;        /* killed by the timeout */
	int out_over_cap;     /* stdout exceeded its cap (the command was killed) */
	size_t err_dropped;   /* stderr bytes dropped beyond its cap */
};

/* Run `/bin/sh -c command` in its own process group with the environment passed through,
 * write input to its stdin (a command that does not read it is fine), collect stdout
 * into out (out->cap is the limit) and stderr into err (err->cap bytes kept, the rest
 * counted and dropped); reading stops 0.2 s after the shell exits even when something it
 * left running still holds stdout, and the process group goes with it.  Returns 0 when the
 * command ran to completion whatever its exit
 * status; KS_ETIMEOUT after timeout_s (process group killed); KS_ELIMIT when stdout
 * exceeded its cap; KS_ESYS when it could not be started. */
int ks_cmd_run(const char *command, const char *input, size_t input_len, double timeout_s,
	       struct ks_buf *out, struct ks_buf *err, struct ks_cmd_result *res,
	       struct ks_error *e);

#endif
