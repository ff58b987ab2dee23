/* ksearch worker --backend B [--device N]: serve the worker protocol on stdin/stdout. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ksearch/worker.h"
#include "util/env.h"

static const char usage[] = "ksearch worker --backend B [--device N]";
static const char about[] =
	"Serve evaluations over stdin/stdout with the ksearch worker protocol (length-\n"
	"prefixed JSON messages: hello, evaluate, compile, shutdown; see docs/workers.md).\n"
	"A worker is normally started by 'ksearch run' or 'ksearch eval' (--devices 0,1 or\n"
	"--worker-cmd 'ssh host ksearch worker --backend cuda --device {device}'), not by\n"
	"hand.  --device N sets KSEARCH_DEVICE=N for the kernels it runs and takes the\n"
	"per-device lock while timing; CUDA_VISIBLE_DEVICES is left as it is.  Nothing but\n"
	"protocol messages goes to stdout; logs go to stderr.\n\n"
	"Exit status: 0 after 'shutdown' or the end of input, 2 on a broken stream.";

int cmd_worker(int argc, char **argv)
{
	const char *backend = NULL;
	int device = -1, verbose = 0;
	const struct ks_opt opts[] = {
		KS_OPT_STR("backend", &backend, "B", "the backend it serves: cpu, cuda, ..."),
		KS_OPT_INT("device", &device, 0, 4095, "N", "the device it serves (sets KSEARCH_DEVICE)"),
		KS_OPT_FLAG("verbose", &verbose, "log every job to stderr"),
		KS_OPT_END,
	};
	int prc = ks_opts_parse(argc, argv, opts, usage, about, NULL, 0, NULL, NULL);
	if (prc)
		return prc > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	if (!backend) {
		fprintf(stderr, "ksearch worker: needs --backend\nusage: %s\n", usage);
		return KS_EXIT_USAGE;
	}
	if (device >= 0) {
		char v[16];
		snprintf(v, sizeof(v), "%d", device);
		setenv("KSEARCH_DEVICE", v, 1); /* for the runners it starts */
		ks_env_reload();
	}
	/* the protocol owns the real stdout; anything else printed goes to stderr */
	fflush(stdout);
	int out = fcntl(1, F_DUPFD_CLOEXEC, 3);
	if (out < 0 || dup2(2, 1) < 0) {
		perror("ksearch worker: dup");
		return KS_EXIT_USAGE;
	}
	ks_cli_log_init(verbose);
	struct ks_worker_config cfg = {.backend = backend, .device = device};
	struct ks_error e = {0};
	int rc = ks_worker_serve(0, out, &cfg, &e);
	close(out);
	if (rc) {
		fprintf(stderr, "ksearch worker: %s\n", e.msg);
		return KS_EXIT_USAGE;
	}
	return KS_EXIT_OK;
}
