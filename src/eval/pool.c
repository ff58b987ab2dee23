/* The client side of the worker protocol: a pool of worker processes, one per device,
 * each fed one job at a time by its own thread.  A worker that dies is restarted and its
 * job re-queued; a job that outlives two workers is reported, never dropped. */
#include "ksearch/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eval/wire.h"
#include "ksearch/log.h"
#include "util/fs.h"
#include "util/os.h"
#include "util/proc.h"

#ifndef KS_VERSION
#define KS_VERSION "0"
#endif

#define MAX_WORKERS 64
#define JOB_DEATHS 2 /* workers lost while a job ran before the job is given up */

struct worker {
	struct ks_pool *pool;
	int slot, device;
	pid_t pid;               /* -1: not running */
	int to_fd, from_fd;
	char cmd[1024];          /* what was started, for messages */
	int failed_starts;       /* in a row */
	int gone;                /* given up after max_starts failed starts */
	struct ks_error start_err;
	struct ks_buf in;        /* the last reply */
	pthread_t th;
};

struct ks_pool {
	char backend[64];
	char *worker_cmd;
	char exe[PATH_MAX];
	double start_timeout_s, job_timeout_s;
	int max_starts;
	int n;
	struct worker w[MAX_WORKERS];
	/* the batch in progress */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ks_pool_job *jobs;
	struct ks_eval_result *results;
	int *deaths;
	int *queue, qlen;        /* job indexes waiting, next first */
	int remaining;           /* jobs not finished */
	long long next_id;
};

void ks_pool_opts_init(struct ks_pool_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = "cpu";
	o->start_timeout_s = 120;
	o->max_starts = 3;
}

int ks_pool_parse_devices(const char *s, int *out, int max, int *n, struct ks_error *e)
{
	*n = 0;
	const char *p = s ? s : "";
	if (!*p)
		return ks_error_set(e, KS_EINVAL, "--devices expects device numbers like 0,1; got ''");
	while (*p) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p || errno || v < 0 || v > 4095 || (*end && *end != ','))
			return ks_error_set(e, KS_EINVAL,
					    "--devices expects device numbers like 0,1; got '%s'", s);
		for (int i = 0; i < *n; i++)
			if (out[i] == (int)v)
				return ks_error_set(e, KS_EINVAL, "--devices lists device %ld twice", v);
		if (*n >= max)
			return ks_error_set(e, KS_EINVAL, "--devices lists more than %d devices", max);
		out[(*n)++] = (int)v;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return ks_error_set(e, KS_EINVAL,
					    "--devices expects device numbers like 0,1; got '%s'", s);
	}
	return 0;
}

/* ---- one worker process ---------------------------------------------------------------- */

static void fate(pid_t pid, int st, char *out, size_t n)
{
	if (pid <= 0)
		snprintf(out, n, "still running");
	else if (WIFEXITED(st))
		snprintf(out, n, "exited with status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(out, n, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(out, n, "ended");
}

/* wait up to grace_s for the process to end on its own, then kill its group; describe */
static void worker_reap(struct worker *w, double grace_s, char *why, size_t n)
{
	if (w->to_fd >= 0)
		close(w->to_fd);
	if (w->from_fd >= 0)
		close(w->from_fd);
	w->to_fd = w->from_fd = -1;
	if (w->pid <= 0) {
		if (why)
			snprintf(why, n, "not running");
		return;
	}
	int st = 0;
	pid_t r = 0;
	for (int i = 0; i < (int)(grace_s * 50) && r == 0; i++) {
		r = waitpid(w->pid, &st, WNOHANG);
		if (r == 0)
			usleep(20000);
	}
	if (r == 0) {
		kill(-w->pid, SIGKILL);
		kill(w->pid, SIGKILL);
		r = waitpid(w->pid, &st, 0);
	}
	if (why)
		fate(r, st, why, n);
	w->pid = -1;
}

static void worker_kill(struct worker *w, char *why, size_t n)
{
	if (w->pid > 0) {
		kill(-w->pid, SIGKILL);
		kill(w->pid, SIGKILL);
	}
	worker_reap(w, 0, why, n);
}

/* "{device}" -> the number */
static void expand_cmd(const char *tmpl, int device, char *out, size_t n)
{
	size_t len = 0;
	out[0] = '\0';
	for (const char *p = tmpl; *p && len + 1 < n;) {
		if (!strncmp(p, "{device}", 8)) {
			len += (size_t)snprintf(out + len, n - len, "%d", device < 0 ? 0 : device);
			if (len >= n)
				len = n - 1;
			p += 8;
		} else {
			out[len++] = *p++;
			out[len] = '\0';
		}
	}
}

static int send_msg(struct worker *w, json_t *msg, struct ks_error *e)
{
	char *txt = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(msg);
	if (!txt)
		return ks_error_set(e, KS_ENOMEM, "out of memory for a message");
	int rc = ks_worker_write_frame(w->to_fd, txt, strlen(txt), e);
	free(txt);
	return rc;
}

static int worker_start(struct worker *w, struct ks_error *e)
{
	struct ks_pool *p = w->pool;
	char devs[16];
	snprintf(devs, sizeof(devs), "%d", w->device < 0 ? 0 : w->device);
	char *argv_direct[] = {p->exe, (char *)"worker", (char *)"--backend", p->backend,
			       (char *)"--device", devs, NULL};
	char *argv_sh[] = {(char *)"/bin/sh", (char *)"-c", w->cmd, NULL};
	char **argv = argv_direct;
	if (p->worker_cmd) {
		expand_cmd(p->worker_cmd, w->device, w->cmd, sizeof(w->cmd));
		argv = argv_sh;
	} else {
		snprintf(w->cmd, sizeof(w->cmd), "%s worker --backend %s --device %s", p->exe,
			 p->backend, devs);
	}
	int to[2] = {-1, -1}, from[2] = {-1, -1};
	if (ks_os_pipe(to) || ks_os_pipe(from)) {
		int err = errno;
		for (int i = 0; i < 2; i++) {
			if (to[i] >= 0)
				close(to[i]);
			if (from[i] >= 0)
				close(from[i]);
		}
		return ks_error_set(e, KS_ESYS, "pipe: %s", strerror(err));
	}
	/* stdin and stdout carry the protocol; stderr stays the user's */
	struct ks_spawn sp = {.argv = argv, .nfd = 2, .fd = {to[0], from[1]}};
	pid_t pid;
	int src = ks_spawn(&sp, &pid, e);
	if (src) {
		close(to[0]);
		close(to[1]);
		close(from[0]);
		close(from[1]);
		ks_error_wrap(e, "worker command '%s'", w->cmd);
		return src;
	}
	close(to[0]);
	close(from[1]);
	w->pid = pid;
	w->to_fd = to[1];
	w->from_fd = from[0];
	char why[128];
	int rc = send_msg(w, json_pack("{sssisssssssi}", "type", "hello", "protocol",
					 KS_WORKER_PROTOCOL, "role", "client", "ksearch", KS_VERSION,
					 "backend", p->backend, "device", w->device),
			  e);
	if (rc == 0)
		rc = ks_worker_read_frame(w->from_fd, p->start_timeout_s, KS_WORKER_MSG_CAP, &w->in,
					  e);
	if (rc) {
		char msg[1024];
		snprintf(msg, sizeof(msg), "%s", e ? e->msg : "");
		worker_kill(w, why, sizeof(why));
		if (rc == KS_EIO)
			return ks_error_set(e, KS_EIO, "worker command '%s' ended before its hello (%s)",
					    w->cmd, why);
		if (rc == KS_ETIMEOUT)
			return ks_error_set(e, KS_ETIMEOUT, "worker command '%s' did not say hello "
							    "within %.1f s",
					    w->cmd, p->start_timeout_s);
		return ks_error_set(e, KS_EPROTO,
				    "worker command '%s' does not speak the ksearch worker protocol: %s",
				    w->cmd, msg);
	}
	json_error_t je;
	json_t *h = json_loadb(w->in.data, w->in.len, 0, &je);
	const char *type = json_string_value(json_object_get(h, "type"));
	const char *role = json_string_value(json_object_get(h, "role"));
	const char *be = json_string_value(json_object_get(h, "backend"));
	json_int_t proto = json_integer_value(json_object_get(h, "protocol"));
	if (!h || !type)
		rc = ks_error_set(e, KS_EPROTO,
				  "worker command '%s' is not a ksearch worker: its first message "
				  "is not a JSON message",
				  w->cmd);
	else if (!strcmp(type, "error"))
		rc = ks_error_set(e, KS_EUNAVAILABLE, "worker '%s' refused: %s", w->cmd,
				  json_string_value(json_object_get(h, "message"))
					  ? json_string_value(json_object_get(h, "message"))
					  : "(no message)");
	else if (strcmp(type, "hello"))
		rc = ks_error_set(e, KS_EPROTO, "worker command '%s' answered '%.40s' to hello",
				  w->cmd, type);
	else if (!role || strcmp(role, "worker"))
		rc = ks_error_set(e, KS_EPROTO,
				  "worker command '%s' is not a ksearch worker: it echoed the "
				  "client's hello",
				  w->cmd);
	else if (proto != KS_WORKER_PROTOCOL)
		rc = ks_error_set(e, KS_EPROTO, "worker '%s' speaks protocol %lld, this ksearch %d",
				  w->cmd, (long long)proto, KS_WORKER_PROTOCOL);
	else if (!be || strcmp(be, p->backend))
		rc = ks_error_set(e, KS_EPROTO, "worker '%s' serves backend '%s', expected '%s'",
				  w->cmd, be ? be : "(none)", p->backend);
	if (rc == 0)
		ks_debug("worker %d (device %d, pid %d): %s", w->slot, w->device, (int)pid,
			 json_string_value(json_object_get(h, "target"))
				 ? json_string_value(json_object_get(h, "target"))
				 : "");
	json_decref(h);
	if (rc)
		worker_kill(w, NULL, 0);
	return rc;
}

/* ---- jobs -------------------------------------------------------------------------- */

static double job_deadline_s(const struct ks_pool *p, const struct ks_pool_job *j)
{
	if (p->job_timeout_s > 0)
		return p->job_timeout_s;
	const struct ks_eval_opts *o = j->opts;
	double to = o && o->timeout_s > 0 ? o->timeout_s : 60;
	int seeds = o && o->nseeds > 3 ? o->nseeds : 3;
	int blocks = o && o->blocks > 1 ? o->blocks : 1;
	int units = j->units > 0 ? j->units : 16;
	/* every call, timing block and (first time) reference run may take the timeout */
	return to * units * (11.0 * seeds + 2.0 * blocks + 4) + 300;
}

enum outcome { JOB_DONE, JOB_FAILED, WORKER_DIED };

/* send job i to w and wait for the answer */
static enum outcome job_run(struct worker *w, struct ks_pool_job *j, long long id,
			    struct ks_eval_result *res, struct ks_error *e)
{
	struct ks_pool *p = w->pool;
	if (!j->task || !j->source) {
		ks_error_set(e, KS_EINVAL, "a job needs a task and a source");
		return JOB_FAILED;
	}
	json_t *defs = NULL;
	if (j->defines) {
		defs = json_array();
		for (int i = 0; j->defines[i]; i++)
			json_array_append_new(defs, json_string(j->defines[i]));
	}
	struct ks_eval_opts dflt;
	ks_eval_opts_init(&dflt);
	json_t *msg = json_pack("{sssIsssssossss}", "type", "evaluate", "job", (json_int_t)id,
				"task", j->task, "backend", p->backend, "options",
				ks_wire_opts(j->opts ? j->opts : &dflt), "source", j->source,
				"path", j->path ? j->path : "kernel");
	if (!msg) {
		json_decref(defs);
		ks_error_set(e, KS_ENOMEM, "out of memory for a job");
		return JOB_FAILED;
	}
	if (defs)
		json_object_set_new(msg, "defines", defs);
	if (send_msg(w, msg, e))
		return WORKER_DIED;
	int rc = ks_worker_read_frame(w->from_fd, job_deadline_s(p, j), KS_WORKER_MSG_CAP, &w->in,
				      e);
	if (rc == KS_EIO && e && strstr(e->msg, "after 0 of 4"))
		ks_error_set(e, KS_EIO, "its output ended");
	if (rc)
		return WORKER_DIED;
	json_error_t je;
	json_t *r = json_loadb(w->in.data, w->in.len, 0, &je);
	const char *type = json_string_value(json_object_get(r, "type"));
	json_int_t rid = json_integer_value(json_object_get(r, "job"));
	enum outcome out = WORKER_DIED;
	if (!r || !type) {
		ks_error_set(e, KS_EPROTO, "the reply is not a message: %s", r ? "no type" : je.text);
	} else if (!strcmp(type, "error") && (rid == id || rid == 0)) {
		const char *m = json_string_value(json_object_get(r, "message"));
		ks_error_set(e, KS_EIO, "worker on device %d: %s", w->device, m ? m : "(no message)");
		out = JOB_FAILED;
	} else if (strcmp(type, "result") || rid != id) {
		ks_error_set(e, KS_EPROTO, "expected the result of job %lld, got '%.40s' of job %lld",
			     id, type, (long long)rid);
	} else if (ks_wire_result_parse(json_object_get(r, "detail"), res, e) == 0) {
		out = JOB_DONE;
	} else {
		ks_error_wrap(e, "result of job %lld", id);
	}
	json_decref(r);
	return out;
}

/* fail every queued job with the error that made the last worker give up (locked) */
static void fail_queue(struct ks_pool *p, const struct ks_error *why)
{
	for (int k = 0; k < p->qlen; k++) {
		struct ks_pool_job *j = &p->jobs[p->queue[k]];
		j->rc = why->code ? why->code : KS_EIO;
		snprintf(j->err.msg, sizeof(j->err.msg), "no worker left: %s", why->msg);
		j->err.code = j->rc;
		p->remaining--;
	}
	p->qlen = 0;
}

static int alive_workers(const struct ks_pool *p)
{
	int n = 0;
	for (int i = 0; i < p->n; i++)
		n += !p->w[i].gone;
	return n;
}

static void *worker_thread(void *arg)
{
	struct worker *w = arg;
	struct ks_pool *p = w->pool;
	pthread_mutex_lock(&p->mu);
	while (p->remaining > 0 && !w->gone) {
		if (p->qlen == 0) {
			pthread_cond_wait(&p->cv, &p->mu);
			continue;
		}
		if (w->pid <= 0) {
			pthread_mutex_unlock(&p->mu);
			if (w->failed_starts)
				usleep(200000u * (unsigned)w->failed_starts);
			struct ks_error se = {0};
			int rc = worker_start(w, &se);
			pthread_mutex_lock(&p->mu);
			if (rc) {
				ks_warn("worker %d (device %d) did not start: %s", w->slot, w->device,
					se.msg);
				w->start_err = se;
				if (++w->failed_starts >= p->max_starts) {
					w->gone = 1;
					if (alive_workers(p) == 0)
						fail_queue(p, &se);
					pthread_cond_broadcast(&p->cv);
				}
				continue;
			}
			w->failed_starts = 0;
			continue; /* the queue may have changed meanwhile */
		}
		int i = p->queue[0];
		memmove(p->queue, p->queue + 1, (size_t)(--p->qlen) * sizeof(*p->queue));
		long long id = ++p->next_id;
		struct ks_pool_job *j = &p->jobs[i];
		j->attempts++;
		pthread_mutex_unlock(&p->mu);
		struct ks_error je = {0};
		struct ks_eval_result res;
		memset(&res, 0, sizeof(res));
		enum outcome oc = job_run(w, j, id, &res, &je);
		char why[128] = "";
		if (oc == WORKER_DIED)
			worker_kill(w, why, sizeof(why));
		pthread_mutex_lock(&p->mu);
		if (oc == JOB_DONE) {
			p->results[i] = res;
			j->rc = 0;
			p->remaining--;
		} else if (oc == JOB_FAILED) {
			j->rc = je.code ? je.code : KS_EIO;
			j->err = je;
			p->remaining--;
		} else if (++p->deaths[i] >= JOB_DEATHS) {
			j->rc = KS_EIO;
			j->err.code = KS_EIO;
			snprintf(j->err.msg, sizeof(j->err.msg),
				 "'%s': %d workers died while evaluating it (last: %s; worker %s)",
				 j->path ? j->path : "kernel", p->deaths[i], je.msg, why);
			ks_warn("%s", j->err.msg);
			p->remaining--;
		} else {
			ks_warn("worker %d (device %d) lost during '%s' (%s; %s): restarting it and "
				"re-queueing the job",
				w->slot, w->device, j->path ? j->path : "kernel", je.msg, why);
			memmove(p->queue + 1, p->queue, (size_t)p->qlen * sizeof(*p->queue));
			p->queue[0] = i;
			p->qlen++;
		}
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int ks_pool_evaluate_batch(struct ks_pool *p, struct ks_pool_job *jobs, int n,
			   struct ks_eval_result *results, struct ks_error *e)
{
	if (n <= 0)
		return 0;
	memset(results, 0, (size_t)n * sizeof(*results));
	p->queue = calloc((size_t)n, sizeof(*p->queue));
	p->deaths = calloc((size_t)n, sizeof(*p->deaths));
	if (!p->queue || !p->deaths) {
		free(p->queue);
		free(p->deaths);
		p->queue = p->deaths = NULL;
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	}
	p->jobs = jobs;
	p->results = results;
	p->remaining = n;
	p->qlen = 0;
	for (int i = 0; i < n; i++) {
		jobs[i].rc = 0;
		jobs[i].attempts = 0;
		ks_error_clear(&jobs[i].err);
		p->queue[p->qlen++] = i;
	}
	int started = 0;
	for (int i = 0; i < p->n; i++) {
		struct worker *w = &p->w[i];
		/* a worker given up earlier gets one more chance per batch */
		w->gone = 0;
		w->failed_starts = 0;
		if (pthread_create(&w->th, NULL, worker_thread, w) == 0)
			started++;
		else
			w->gone = 2; /* no thread to join */
	}
	if (!started) {
		pthread_mutex_lock(&p->mu);
		struct ks_error none = {.code = KS_ESYS, .msg = "cannot start threads"};
		fail_queue(p, &none);
		pthread_mutex_unlock(&p->mu);
	}
	for (int i = 0; i < p->n; i++)
		if (p->w[i].gone != 2)
			pthread_join(p->w[i].th, NULL);
	free(p->queue);
	free(p->deaths);
	p->queue = p->deaths = NULL;
	p->jobs = NULL;
	p->results = NULL;
	for (int i = 0; i < n; i++)
		if (jobs[i].rc) {
			if (e) {
				e->code = jobs[i].rc;
				snprintf(e->msg, sizeof(e->msg), "%s", jobs[i].err.msg);
			}
			return jobs[i].rc;
		}
	return 0;
}

/* ---- the pool ------------------------------------------------------------------------- */

int ks_pool_new(const struct ks_pool_opts *o, struct ks_pool **out, struct ks_error *e)
{
	*out = NULL;
	int nd = o->devices && o->ndevices > 0 ? o->ndevices : 1;
	if (nd > MAX_WORKERS)
		return ks_error_set(e, KS_EINVAL, "at most %d workers", MAX_WORKERS);
	struct ks_pool *p = calloc(1, sizeof(*p));
	if (!p)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	snprintf(p->backend, sizeof(p->backend), "%s", o->backend ? o->backend : "cpu");
	p->start_timeout_s = o->start_timeout_s > 0 ? o->start_timeout_s : 120;
	p->job_timeout_s = o->job_timeout_s;
	p->max_starts = o->max_starts > 0 ? o->max_starts : 3;
	p->n = nd;
	int rc = 0;
	for (int i = 0; i < nd; i++) {
		struct worker *w = &p->w[i];
		w->pool = p;
		w->slot = i;
		w->device = o->devices && o->ndevices > 0 ? o->devices[i] : 0;
		w->pid = -1;
		w->to_fd = w->from_fd = -1;
		ks_buf_init(&w->in, KS_WORKER_MSG_CAP + 1);
	}
	if (o->worker_cmd && o->worker_cmd[0]) {
		if (!(p->worker_cmd = strdup(o->worker_cmd))) {
			rc = ks_error_set(e, KS_ENOMEM, "out of memory");
			goto fail;
		}
	} else {
		char dir[PATH_MAX - 16];
		if (ks_exe_dir(dir, sizeof(dir))) {
			rc = ks_error_set(e, KS_ESYS, "cannot find the running executable");
			goto fail;
		}
		snprintf(p->exe, sizeof(p->exe), "%s/ksearch", dir);
		if (access(p->exe, X_OK)) {
			rc = ks_error_set(e, KS_ENOTFOUND,
					  "'%s' not found: start workers with --worker-cmd instead",
					  p->exe);
			goto fail;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < nd; i++)
		if ((rc = worker_start(&p->w[i], e)))
			goto fail;
	*out = p;
	return 0;
fail:
	ks_pool_free(p);
	return rc;
}

int ks_pool_size(const struct ks_pool *p)
{
	return p ? p->n : 0;
}

void ks_pool_free(struct ks_pool *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n; i++) {
		struct worker *w = &p->w[i];
		if (w->pid > 0) {
			if (send_msg(w, json_pack("{ss}", "type", "shutdown"), NULL) == 0)
				ks_worker_read_frame(w->from_fd, 5, 4096, &w->in, NULL);
			worker_reap(w, 5, NULL, 0);
		}
		ks_buf_release(&w->in);
	}
	free(p->worker_cmd);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
}
