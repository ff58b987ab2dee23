/* Compiles in parallel threads, as a round of `ksearch run --jobs N` does (src/run/loop.c):
 * distinct sources (nothing comes from the cache), flags of many words, twelve threads at
 * once; every compile must succeed with its own flags and its own cache entry.  The flags were
 * once split with strtok, whose hidden state all threads share: on the H200 two of 40
 * selective-scan candidates failed with "Value '-I...' is not defined for option 'cudart'".
 * That race is too narrow to catch here every time; tests/cli/t0015-thread-safe-libc.sh
 * rules the call out deterministically, this test guards the rest of the parallel path
 * (the cache's temporary files, the jail's argument lists). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ksearch/backend.h"
#include "ksearch/task.h"
#include "tap.h"
#include "util/env.h"

#define THREADS 12

static const struct ks_task *task;
static const struct ks_backend_i *cpu;
static const char *flags = "-O2 -fPIC -shared -std=c11 -Wall -Wextra -Wno-unused-parameter "
			   "-fno-strict-aliasing -ffp-contract=off -fno-math-errno -pipe";
static unsigned long long salt;

struct job {
	int id, ok;
	char source[512], log[256];
};

static void *compile(void *arg)
{
	struct job *j = arg;
	struct ks_artifact a;
	ks_artifact_init(&a);
	struct ks_error e = {0};
	struct ks_compile_req req = {.task = task, .source = j->source, .flags = flags};
	int rc = cpu->compile(&req, &a, &e);
	j->ok = rc == 0 && a.ok;
	snprintf(j->log, sizeof(j->log), "%s", rc ? e.msg : ks_buf_str(&a.log));
	ks_artifact_release(&a);
	return NULL;
}

int main(void)
{
	char cache[] = "/tmp/ks-test-compile-parallel.XXXXXX";
	if (!mkdtemp(cache))
		return 1;
	setenv("KSEARCH_CACHE", cache, 1);
	ks_env_reload();
	salt = (unsigned long long)time(NULL) ^ (unsigned long long)getpid();
	struct ks_task *t = NULL;
	struct ks_error e = {0};
	if (ks_task_load("tests/fixtures/eval/scale", &t, &e)) {
		fprintf(stderr, "task: %s\n", e.msg);
		return 1;
	}
	task = t;
	cpu = ks_backend_find("cpu");
	ok(cpu != NULL, "the cpu backend is registered");
	for (int round = 0; round < 3; round++) {
		struct job js[THREADS];
		pthread_t th[THREADS];
		for (int i = 0; i < THREADS; i++) {
			js[i].id = i;
			snprintf(js[i].source, sizeof(js[i].source),
				 "/* %llu %d %d */\n#include <stdint.h>\n"
				 "void scale(const float *x, float *y, int32_t n)\n"
				 "{ for (int32_t i = 0; i < n; i++) y[i] = 2.0f * x[i]; }\n",
				 salt, round, i);
			pthread_create(&th[i], NULL, compile, &js[i]);
		}
		int all = 1;
		for (int i = 0; i < THREADS; i++) {
			pthread_join(th[i], NULL);
			if (!js[i].ok) {
				all = 0;
				fprintf(stderr, "# round %d, thread %d: %s\n", round, i, js[i].log);
			}
		}
		ok(all, "round %d: %d compiles in parallel threads all succeed", round, THREADS);
	}
	ks_task_free(t);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", cache);
	if (system(cmd)) {
	}
	return tap_done();
}
