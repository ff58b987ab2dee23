/* Test helper: start tests/fake_llm/fake_llm_server.py with a script, read its port,
 * stop it.  Header-only (static functions) so each unit test stays one file. */
#ifndef KS_TEST_FAKE_LLM_H
#define KS_TEST_FAKE_LLM_H

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct fake_llm {
	pid_t pid;
	int port;
	char dir[256];    /* scratch folder holding script.json and requests.jsonl */
	char log[320];    /* requests.jsonl */
	char url[64];     /* http://127.0.0.1:PORT/v1 */
};

static int fake_llm_start(struct fake_llm *f, const char *script_json)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/ks-fake-llm-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	char script[320];
	snprintf(script, sizeof(script), "%s/script.json", f->dir);
	snprintf(f->log, sizeof(f->log), "%s/requests.jsonl", f->dir);
	FILE *s = fopen(script, "w");
	if (!s)
		return -1;
	fputs(script_json, s);
	fclose(s);
	int p[2];
	if (pipe(p))
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	posix_spawn_file_actions_addclose(&fa, p[1]);
	char *argv[] = {"python3", "tests/fake_llm/fake_llm_server.py", "--script", script,
			"--log", f->log, "--lifetime", "60", "--idle", "30", NULL};
	int rc = posix_spawnp(&f->pid, "python3", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (rc) {
		close(p[0]);
		return -1;
	}
	char line[32];
	size_t n = 0;
	while (n + 1 < sizeof(line)) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		if (poll(&pf, 1, 10000) <= 0)
			break;
		ssize_t k = read(p[0], line + n, 1);
		if (k <= 0 || line[n] == '\n')
			break;
		n++;
	}
	line[n] = '\0';
	close(p[0]);
	f->port = atoi(line);
	snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d/v1", f->port);
	return f->port > 0 ? 0 : -1;
}

static void fake_llm_stop(struct fake_llm *f)
{
	if (f->pid > 0) {
		kill(f->pid, SIGTERM);
		waitpid(f->pid, NULL, 0);
		f->pid = 0;
	}
	char cmd[400];
	if (f->dir[0] && !getenv("KS_KEEP_FAKE")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
		if (system(cmd)) {
			/* best effort */
		}
	}
}

/* the recorded requests (JSON lines) as one malloc'd string, "" when none */
static char *fake_llm_requests(const struct fake_llm *f)
{
	FILE *s = fopen(f->log, "r");
	if (!s)
		return strdup("");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	char chunk[4096];
	size_t k;
	while ((k = fread(chunk, 1, sizeof(chunk), s)) > 0) {
		if (len + k + 1 > cap) {
			cap = (len + k + 1) * 2;
			buf = realloc(buf, cap);
		}
		memcpy(buf + len, chunk, k);
		len += k;
	}
	fclose(s);
	if (!buf)
		return strdup("");
	buf[len] = '\0';
	return buf;
}

/* request n (0-based) as one malloc'd JSON line, "" when there is none */
static char *fake_llm_request_n(const struct fake_llm *f, int n)
{
	char *all = fake_llm_requests(f), *p = all;
	for (int i = 0; i < n && p; i++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	char *line = NULL;
	if (p && *p) {
		char *end = strchr(p, '\n');
		line = end ? strndup(p, (size_t)(end - p)) : strdup(p);
	}
	free(all);
	return line ? line : strdup("");
}

/* number of requests the server received */
static int fake_llm_count(const struct fake_llm *f)
{
	char *r = fake_llm_requests(f);
	int n = 0;
	for (char *p = r; *p; p++)
		n += *p == '\n';
	free(r);
	return n;
}

#endif
