/* The runner's Landlock rule for the kernel artifact: the file alone, or, for a backend
 * whose needs say artifact_folder (mlx), its whole folder, where KSEARCH_MLX_HEADER=file
 * puts the header.cuh NVRTC reads.  Each case runs in a child that enters the real sandbox
 * (seccomp and the privilege drop skipped, so the test's own calls stay allowed and it runs
 * as any user) and tries both files. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eval/sandbox.h"
#include "ksearch/backend.h"
#include "tap.h"
#include "util/env.h"

/* bit 0: the artifact could not be read, bit 1: the file beside it could not, 4: no sandbox */
static int child_reads(const char *scratch, const char *artifact, const char *sibling,
		       int folder)
{
	pid_t p = fork();
	if (p == 0) {
		struct ks_sandbox_needs needs = {.artifact_folder = folder};
		char why[512];
		/* privileges: dropping them needs CAP_SETPCAP, which a non-root test lacks;
		 * Landlock holds either way */
		setenv("KSEARCH_SANDBOX_SKIP", "seccomp,privileges", 1);
		ks_env_reload();
		if (ks_sandbox_enter(scratch, artifact, NULL, &needs, NULL, why, sizeof(why))) {
			fprintf(stderr, "sandbox: %s\n", why);
			_exit(4);
		}
		int a = open(artifact, O_RDONLY), s = open(sibling, O_RDONLY);
		_exit((a < 0 ? 1 : 0) | (s < 0 ? 2 : 0));
	}
	int st = 0;
	if (p < 0 || waitpid(p, &st, 0) != p)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void)
{
	if (!strstr(ks_sandbox_describe(), "landlock abi"))
		return tap_skip_all("no Landlock in this kernel: the file rules are not there");
	char root[] = "/tmp/ks-sandbox-art-XXXXXX";
	if (!mkdtemp(root))
		return tap_skip_all("mkdtemp");
	char scratch[256], dir[256], artifact[300], sibling[300];
	snprintf(scratch, sizeof(scratch), "%s/scratch", root);
	snprintf(dir, sizeof(dir), "%s/artifact", root);
	snprintf(artifact, sizeof(artifact), "%s/kernel.mlxk", dir);
	snprintf(sibling, sizeof(sibling), "%s/header.cuh", dir);
	if (mkdir(scratch, 0700) || mkdir(dir, 0755))
		return tap_skip_all("mkdir");
	FILE *f = fopen(artifact, "w");
	fputs("artifact\n", f);
	fclose(f);
	f = fopen(sibling, "w");
	fputs("header\n", f);
	fclose(f);

	is_int(child_reads(scratch, artifact, sibling, 0), 2,
	       "the artifact alone: it can be read, the file beside it cannot");
	is_int(child_reads(scratch, artifact, sibling, 1), 0,
	       "artifact_folder: the file beside the artifact can be read too");

	unlink(artifact);
	unlink(sibling);
	rmdir(dir);
	rmdir(scratch);
	rmdir(root);
	return tap_done();
}
