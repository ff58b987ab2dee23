/* The worker side of the protocol (`ksearch worker`): frames in, frames out, one evaluator
 * kept per (task, options) so the reference and the baseline are built once, and a
 * per-device lock file held while a candidate is evaluated. */
#include "ksearch/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "eval/wire.h"
#include "ksearch/backend.h"
#include "ksearch/knowledge.h"
#include "ksearch/log.h"
#include "util/clock.h"
#include "util/fs.h"

#ifndef KS_VERSION
#define KS_VERSION "0"
#endif

/* ---- framing ------------------------------------------------------------------------ */

/* read exactly n bytes; *got counts what arrived.  deadline < 0: none */
static int read_full(int fd, unsigned char *p, size_t n, double deadline, size_t *got,
		     int *eof, struct ks_error *e)
{
	*got = 0;
	*eof = 0;
	while (*got < n) {
		int ms = -1;
		if (deadline >= 0) {
			double left = deadline - ks_clock_s();
			if (left <= 0)
				return ks_error_set(e, KS_ETIMEOUT, "no complete message in time "
								   "(%zu of %zu bytes arrived)",
						    *got, n);
			ms = (int)(left * 1e3) + 1;
		}
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int pr = poll(&pfd, 1, ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return ks_error_set(e, KS_ESYS, "poll: %s", strerror(errno));
		if (pr == 0)
			continue; /* the deadline check above decides */
		ssize_t r = read(fd, p + *got, n - *got);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return ks_error_set(e, KS_EIO, "read: %s", strerror(errno));
		if (r == 0 && (*eof = 1))
			return ks_error_set(e, KS_EIO, "end of stream after %zu of %zu bytes",
					    *got, n);
		*got += (size_t)r;
	}
	return 0;
}

/* one frame; *clean_eof set when the stream ended before its first byte */
static int frame_read(int fd, double timeout_s, size_t cap, struct ks_buf *out,
		      int *clean_eof, struct ks_error *e)
{
	double deadline = timeout_s < 0 ? -1 : ks_clock_s() + timeout_s;
	unsigned char hdr[4];
	size_t got;
	int eof;
	ks_buf_reset(out);
	int rc = read_full(fd, hdr, 4, deadline, &got, &eof, e);
	*clean_eof = rc && eof && got == 0;
	if (rc) {
		if (eof && got)
			ks_error_set(e, KS_EIO, "end of stream inside a message header (%zu of 4 bytes)", got);
		return rc;
	}
	size_t len = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 | hdr[3];
	if (len > cap) {
		char shown[5];
		for (int i = 0; i < 4; i++)
			shown[i] = hdr[i] >= 32 && hdr[i] < 127 ? (char)hdr[i] : '?';
		shown[4] = '\0';
		return ks_error_set(e, KS_ELIMIT,
				    "message of %zu bytes is over the %zu-byte cap (it began '%s')",
				    len, cap, shown);
	}
	if ((rc = ks_buf_grow(out, len + 1)))
		return ks_error_set(e, rc, "out of memory for a %zu-byte message", len);
	if ((rc = read_full(fd, (unsigned char *)out->data, len, deadline, &got, &eof, e)))
		return rc;
	out->len = len;
	out->data[len] = '\0';
	return 0;
}

int ks_worker_read_frame(int fd, double timeout_s, size_t cap, struct ks_buf *out,
			 struct ks_error *e)
{
	int clean;
	return frame_read(fd, timeout_s, cap, out, &clean, e);
}

int ks_worker_write_frame(int fd, const char *data, size_t len, struct ks_error *e)
{
	if (len > KS_WORKER_MSG_CAP)
		return ks_error_set(e, KS_ELIMIT, "message of %zu bytes is over the %zu-byte cap",
				    len, KS_WORKER_MSG_CAP);
	unsigned char hdr[4] = {(unsigned char)(len >> 24), (unsigned char)(len >> 16),
				(unsigned char)(len >> 8), (unsigned char)len};
	for (int part = 0; part < 2; part++) {
		const unsigned char *p = part ? (const unsigned char *)data : hdr;
		size_t n = part ? len : 4, done = 0;
		while (done < n) {
			ssize_t w = write(fd, p + done, n - done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return ks_error_set(e, KS_EIO, "write: %s", strerror(errno));
			done += (size_t)w;
		}
	}
	return 0;
}

/* ---- the server ----------------------------------------------------------------------- */

struct ev_entry {
	char *key;               /* task + "\n" + options JSON */
	struct ks_task *task;
	json_t *opts_json;       /* owns the option strings */
	const char *defs[KS_WIRE_MAX_DEFINES + 1];
	struct ks_eval_opts o;
	struct ks_evaluator *ev;
	unsigned long used;
};

struct server {
	const struct ks_worker_config *cfg;
	int out_fd;
	const struct ks_backend_i *be;
	struct ks_error probe;   /* why the backend is unavailable (code 0: it is) */
	struct ev_entry *cache;
	int ncache, maxcache;
	unsigned long tick;
	int lock_fd;             /* per-device lock file, -1 when no device */
};

static int send_json(struct server *s, json_t *msg, struct ks_error *e)
{
	char *txt = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(msg);
	if (!txt)
		return ks_error_set(e, KS_ENOMEM, "out of memory for a reply");
	int rc = ks_worker_write_frame(s->out_fd, txt, strlen(txt), e);
	free(txt);
	return rc;
}

static int send_error(struct server *s, json_int_t job, const char *msg, struct ks_error *e)
{
	ks_warn("worker: job %lld: %s", (long long)job, msg);
	return send_json(s, json_pack("{sssIss}", "type", "error", "job", job, "message", msg), e);
}

static void entry_release(struct ev_entry *en)
{
	ks_evaluator_free(en->ev);
	ks_task_free(en->task);
	json_decref(en->opts_json);
	free(en->key);
	memset(en, 0, sizeof(*en));
}

/* the evaluator for (task, options), built on first use; the least recently used one
 * makes room */
static int evaluator_get(struct server *s, const char *task, json_t *opts, struct ev_entry **out,
			 struct ks_error *e)
{
	char *ojs = json_dumps(opts, JSON_COMPACT | JSON_SORT_KEYS);
	if (!ojs)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	size_t klen = strlen(task) + strlen(ojs) + 2;
	char *key = malloc(klen);
	if (!key) {
		free(ojs);
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	}
	snprintf(key, klen, "%s\n%s", task, ojs);
	free(ojs);
	for (int i = 0; i < s->ncache; i++)
		if (!strcmp(s->cache[i].key, key)) {
			free(key);
			s->cache[i].used = ++s->tick;
			*out = &s->cache[i];
			return 0;
		}
	struct ev_entry en = {.key = key, .opts_json = json_incref(opts)};
	int rc;
	if ((rc = ks_wire_opts_parse(opts, &en.o, en.defs, e)))
		goto fail;
	if (strcmp(en.o.backend, s->cfg->backend)) {
		rc = ks_error_set(e, KS_EINVAL, "this worker serves backend '%s', not '%s'",
				  s->cfg->backend, en.o.backend);
		goto fail;
	}
	/* the same assertions as `ksearch eval` and `ksearch run` add */
	if ((rc = ks_task_load(task, &en.task, e)) || (rc = ks_assertions_apply(en.task, e)))
		goto fail;
	ks_info("worker: preparing task '%s' (reference and baseline)", en.task->name);
	if ((rc = ks_evaluator_new(en.task, &en.o, &en.ev, e)))
		goto fail;
	int slot = s->ncache;
	if (s->ncache == s->maxcache) {
		slot = 0;
		for (int i = 1; i < s->ncache; i++)
			if (s->cache[i].used < s->cache[slot].used)
				slot = i;
		entry_release(&s->cache[slot]);
	} else {
		s->ncache++;
	}
	en.used = ++s->tick;
	s->cache[slot] = en;
	*out = &s->cache[slot];
	return 0;
fail:
	entry_release(&en);
	return rc;
}

static void device_lock(struct server *s, int op)
{
	if (s->lock_fd < 0)
		return;
	while (flock(s->lock_fd, op) && errno == EINTR)
		;
}

static int handle_hello(struct server *s, json_t *msg, struct ks_error *e)
{
	json_int_t proto = json_integer_value(json_object_get(msg, "protocol"));
	if (proto != KS_WORKER_PROTOCOL) {
		char why[128];
		snprintf(why, sizeof(why), "protocol %lld is not spoken here (this worker speaks %d)",
			 (long long)proto, KS_WORKER_PROTOCOL);
		return send_error(s, 0, why, e);
	}
	if (s->probe.code) {
		char why[1100];
		snprintf(why, sizeof(why), "backend '%s' is not usable on this worker: %s",
			 s->cfg->backend, s->probe.msg);
		return send_error(s, 0, why, e);
	}
	struct ks_buf target = KS_BUF_INIT;
	target.cap = 4096;
	if (!s->be->describe_target || s->be->describe_target(&target))
		ks_buf_adds(&target, s->be->name);
	json_t *r = json_pack("{sssisssisssssssI}", "type", "hello", "protocol", KS_WORKER_PROTOCOL,
			      "role", "worker", "device", s->cfg->device, "backend", s->be->name,
			      "ksearch", KS_VERSION, "target", ks_buf_str(&target), "pid",
			      (json_int_t)getpid());
	ks_buf_release(&target);
	return send_json(s, r, e);
}

/* the fields every job carries; NULL strings when missing (the caller checks) */
static int job_fields(json_t *msg, json_int_t *job, const char **task, json_t **opts,
		      const char **source)
{
	json_t *j = json_object_get(msg, "job");
	*job = json_is_integer(j) ? json_integer_value(j) : 0;
	*task = json_string_value(json_object_get(msg, "task"));
	*opts = json_object_get(msg, "options");
	*source = json_string_value(json_object_get(msg, "source"));
	return json_is_integer(j) && *task && *source && json_is_object(*opts) ? 0 : -1;
}

static int handle_evaluate(struct server *s, json_t *msg, struct ks_error *e)
{
	json_int_t job;
	const char *task, *source;
	json_t *opts;
	if (job_fields(msg, &job, &task, &opts, &source))
		return send_error(s, job, "evaluate needs 'job', 'task', 'options' and 'source'", e);
	const char *path = json_string_value(json_object_get(msg, "path"));
	const char *defs[KS_WIRE_MAX_DEFINES + 1];
	struct ks_error je = {0};
	struct ev_entry *en;
	json_t *dj = json_object_get(msg, "defines");
	if (ks_wire_strings(dj, defs, KS_WIRE_MAX_DEFINES, "defines", &je) ||
	    evaluator_get(s, task, opts, &en, &je))
		return send_error(s, job, je.msg, e);
	struct ks_eval_result r;
	device_lock(s, LOCK_EX);
	double t0 = ks_clock_s();
	int rc = ks_evaluator_run(en->ev, source, path ? path : "kernel",
				  dj && !json_is_null(dj) ? defs : NULL, &r, &je);
	device_lock(s, LOCK_UN);
	if (rc) {
		ks_eval_result_release(&r);
		return send_error(s, job, je.msg, e);
	}
	ks_debug("worker: job %lld: %s in %.1f s", (long long)job, ks_status_name(r.status),
		 ks_clock_s() - t0);
	struct ks_buf human = KS_BUF_INIT;
	human.cap = KS_WORKER_MSG_CAP;
	ks_eval_result_json(en->task, s->cfg->backend, path ? path : "", &r, &human);
	json_t *hj = json_loads(ks_buf_str(&human), 0, NULL);
	ks_buf_release(&human);
	json_t *reply = json_pack("{sssIsoso}", "type", "result", "job", job, "result",
				  hj ? hj : json_object(), "detail", ks_wire_result(&r));
	ks_eval_result_release(&r);
	if (!reply)
		return send_error(s, job, "out of memory for the result", e);
	return send_json(s, reply, e);
}

static int handle_compile(struct server *s, json_t *msg, struct ks_error *e)
{
	json_int_t job;
	const char *task, *source;
	json_t *opts;
	if (job_fields(msg, &job, &task, &opts, &source))
		return send_error(s, job, "compile needs 'job', 'task', 'options' and 'source'", e);
	const char *defs[KS_WIRE_MAX_DEFINES + 1];
	struct ks_error je = {0};
	struct ev_entry *en;
	json_t *dj = json_object_get(msg, "defines");
	if (ks_wire_strings(dj, defs, KS_WIRE_MAX_DEFINES, "defines", &je) ||
	    evaluator_get(s, task, opts, &en, &je))
		return send_error(s, job, je.msg, e);
	struct ks_artifact a;
	ks_artifact_init(&a);
	struct ks_compile_req req = {.task = en->task, .source = source,
				     .defines = dj && !json_is_null(dj) ? defs : en->o.defines,
				     .flags = en->o.cflags};
	int rc = s->be->compile(&req, &a, &je);
	if (rc) {
		ks_artifact_release(&a);
		return send_error(s, job, je.msg, e);
	}
	json_t *reply = json_pack("{sssIsbsssssssb}", "type", "compiled", "job", job, "ok", a.ok,
				  "log", ks_buf_str(&a.log), "resources", a.resources, "hash",
				  a.hash, "cached", a.cached);
	ks_artifact_release(&a);
	return send_json(s, reply, e);
}

static int open_lock(const struct ks_worker_config *cfg)
{
	if (cfg->device < 0)
		return -1;
	char dir[PATH_MAX], path[PATH_MAX + 64];
	snprintf(dir, sizeof(dir), "%s/locks", ks_cache_root());
	if (ks_mkdir_p(dir, NULL))
		return -1;
	snprintf(path, sizeof(path), "%s/%s-device-%d.lock", dir, cfg->backend, cfg->device);
	return open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
}

int ks_worker_serve(int in_fd, int out_fd, const struct ks_worker_config *cfg,
		    struct ks_error *e)
{
	struct server s = {.cfg = cfg, .out_fd = out_fd,
			   .maxcache = cfg->max_evaluators > 0 ? cfg->max_evaluators : 4};
	s.cache = calloc((size_t)s.maxcache, sizeof(*s.cache));
	if (!s.cache)
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	signal(SIGPIPE, SIG_IGN);
	if (ks_backend_get(cfg->backend, &s.be, &s.probe) == 0)
		s.probe.code = 0;
	else if (!s.probe.code)
		s.probe.code = KS_EUNAVAILABLE;
	s.lock_fd = open_lock(cfg);
	if (cfg->device >= 0 && s.lock_fd < 0)
		ks_warn("worker: no lock file for device %d: %s", cfg->device, strerror(errno));
	struct ks_buf in = KS_BUF_INIT;
	in.cap = KS_WORKER_MSG_CAP + 1;
	int rc = 0;
	for (;;) {
		int clean;
		rc = frame_read(in_fd, -1, KS_WORKER_MSG_CAP, &in, &clean, e);
		if (rc) {
			if (clean)
				rc = 0; /* the client went away between messages */
			break;
		}
		json_error_t je;
		json_t *msg = json_loadb(in.data, in.len, 0, &je);
		const char *type = json_string_value(json_object_get(msg, "type"));
		if (!msg || !type) {
			char why[256];
			snprintf(why, sizeof(why), "not a message: %s",
				 msg ? "no \"type\"" : je.text);
			json_decref(msg);
			if ((rc = send_error(&s, 0, why, e)))
				break;
			continue;
		}
		int stop = 0;
		if (!strcmp(type, "hello")) {
			rc = handle_hello(&s, msg, e);
		} else if (!strcmp(type, "shutdown")) {
			rc = send_json(&s, json_pack("{ss}", "type", "bye"), e);
			stop = 1;
		} else if (s.probe.code) {
			rc = send_error(&s, json_integer_value(json_object_get(msg, "job")),
					s.probe.msg, e);
		} else if (!strcmp(type, "evaluate")) {
			rc = handle_evaluate(&s, msg, e);
		} else if (!strcmp(type, "compile")) {
			rc = handle_compile(&s, msg, e);
		} else {
			char why[128];
			snprintf(why, sizeof(why), "unknown message type '%.40s'", type);
			rc = send_error(&s, json_integer_value(json_object_get(msg, "job")), why, e);
		}
		json_decref(msg);
		if (rc || stop)
			break;
	}
	ks_buf_release(&in);
	for (int i = 0; i < s.ncache; i++)
		entry_release(&s.cache[i]);
	free(s.cache);
	if (s.lock_fd >= 0)
		close(s.lock_fd);
	return rc;
}
