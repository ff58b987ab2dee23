/* Worker protocol framing: round trip, partial reads, truncation, oversize, deadlines,
 * and a worker (ks_worker_serve) that answers garbage with an error and keeps serving. */
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksearch/worker.h"
#include "tap.h"

struct dribble {
	int fd;
	const unsigned char *data;
	size_t len;
};

/* write one byte at a time with pauses, so the reader sees every partial read */
static void *dribble_writer(void *arg)
{
	struct dribble *d = arg;
	for (size_t i = 0; i < d->len; i++) {
		if (write(d->fd, d->data + i, 1) != 1)
			break;
		usleep(i < 8 ? 20000 : 200);
	}
	close(d->fd);
	return NULL;
}

static void frame(const char *body, unsigned char *out, size_t *n)
{
	size_t len = strlen(body);
	out[0] = (unsigned char)(len >> 24);
	out[1] = (unsigned char)(len >> 16);
	out[2] = (unsigned char)(len >> 8);
	out[3] = (unsigned char)len;
	memcpy(out + 4, body, len);
	*n = len + 4;
}

struct serve_arg {
	int in, out;
	int rc;
	struct ks_error e;
};

static void *serve_thread(void *arg)
{
	struct serve_arg *s = arg;
	struct ks_worker_config cfg = {.backend = "cpu", .device = -1};
	s->rc = ks_worker_serve(s->in, s->out, &cfg, &s->e);
	close(s->out);
	return NULL;
}

static json_t *ask(int to, int from, const char *body)
{
	struct ks_buf in = KS_BUF_INIT;
	json_t *j = NULL;
	if (ks_worker_write_frame(to, body, strlen(body), NULL) == 0 &&
	    ks_worker_read_frame(from, 60, KS_WORKER_MSG_CAP, &in, NULL) == 0)
		j = json_loads(ks_buf_str(&in), 0, NULL);
	ks_buf_release(&in);
	return j;
}

static const char *type_of(json_t *j)
{
	const char *t = json_string_value(json_object_get(j, "type"));
	return t ? t : "(none)";
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	struct ks_error e = {0};
	struct ks_buf b = KS_BUF_INIT;
	int p[2];

	/* round trip, two messages back to back */
	if (pipe(p))
		return 1;
	ok(ks_worker_write_frame(p[1], "{\"a\":1}", 7, &e) == 0, "write a frame");
	ok(ks_worker_write_frame(p[1], "{}", 2, &e) == 0, "write a second frame");
	ok(ks_worker_read_frame(p[0], 1, 1024, &b, &e) == 0 && b.len == 7 &&
		   !strcmp(ks_buf_str(&b), "{\"a\":1}"),
	   "read the first back exactly (%s)", ks_buf_str(&b));
	ok(ks_worker_read_frame(p[0], 1, 1024, &b, &e) == 0 && !strcmp(ks_buf_str(&b), "{}"),
	   "read the second: frames do not run into each other");
	/* nothing more: the deadline applies */
	is_int(ks_worker_read_frame(p[0], 0.1, 1024, &b, &e), KS_ETIMEOUT, "no data: timeout");
	close(p[1]);
	is_int(ks_worker_read_frame(p[0], 1, 1024, &b, &e), KS_EIO, "closed: end of stream");
	close(p[0]);

	/* partial reads: the frame arrives a byte at a time */
	unsigned char buf[256];
	size_t n;
	frame("{\"type\":\"hello\",\"protocol\":1}", buf, &n);
	if (pipe(p))
		return 1;
	struct dribble d = {p[1], buf, n};
	pthread_t th;
	pthread_create(&th, NULL, dribble_writer, &d);
	int rc = ks_worker_read_frame(p[0], 10, 1024, &b, &e);
	pthread_join(th, NULL);
	ok(rc == 0 && !strcmp(ks_buf_str(&b), "{\"type\":\"hello\",\"protocol\":1}"),
	   "a frame written byte by byte is reassembled (%s)", rc ? e.msg : "");
	close(p[0]);

	/* truncated: the header promises more than arrives */
	frame("{\"type\":\"hello\"}", buf, &n);
	if (pipe(p))
		return 1;
	if (write(p[1], buf, n - 3) < 0)
		return 1;
	close(p[1]);
	rc = ks_worker_read_frame(p[0], 1, 1024, &b, &e);
	ok(rc == KS_EIO && strstr(e.msg, "of 16 bytes"), "truncated body: end of stream (%s)",
	   e.msg);
	close(p[0]);
	if (pipe(p))
		return 1;
	if (write(p[1], buf, 2) < 0)
		return 1;
	close(p[1]);
	rc = ks_worker_read_frame(p[0], 1, 1024, &b, &e);
	ok(rc == KS_EIO && strstr(e.msg, "header"), "truncated header (%s)", e.msg);
	close(p[0]);

	/* oversize: refused from the header alone */
	if (pipe(p))
		return 1;
	if (write(p[1], "HTTP/1.1 200 OK\r\n", 17) < 0)
		return 1;
	rc = ks_worker_read_frame(p[0], 1, KS_WORKER_MSG_CAP, &b, &e);
	ok(rc == KS_ELIMIT && strstr(e.msg, "began 'HTTP'"), "garbage length is over the cap (%s)",
	   e.msg);
	ok(b.alloc < 4096, "and nothing was allocated for it");
	frame("{\"x\":\"0123456789\"}", buf, &n);
	if (write(p[1], buf, n) < 0)
		return 1;
	close(p[1]);
	close(p[0]);
	if (pipe(p))
		return 1;
	if (write(p[1], buf, n) < 0)
		return 1;
	is_int(ks_worker_read_frame(p[0], 1, 8, &b, &e), KS_ELIMIT, "a caller's smaller cap applies");
	is_int(ks_worker_write_frame(p[1], "x", KS_WORKER_MSG_CAP + 1, &e), KS_ELIMIT,
	       "writing over the cap is refused");
	close(p[0]);
	is_int(ks_worker_write_frame(p[1], "{}", 2, &e), KS_EIO, "writing to a closed pipe");
	close(p[1]);

	/* a worker answers garbage with an error message and keeps serving */
	int to[2], from[2];
	if (pipe(to) || pipe(from))
		return 1;
	struct serve_arg sa = {.in = to[0], .out = from[1]};
	pthread_create(&th, NULL, serve_thread, &sa);
	json_t *r = ask(to[1], from[0], "{\"type\":\"hello\",\"protocol\":1,\"role\":\"client\"}");
	ok(!strcmp(type_of(r), "hello") &&
		   !strcmp(json_string_value(json_object_get(r, "role")), "worker") &&
		   json_integer_value(json_object_get(r, "protocol")) == KS_WORKER_PROTOCOL &&
		   !strcmp(json_string_value(json_object_get(r, "backend")), "cpu"),
	   "hello is answered with the worker's hello");
	json_decref(r);
	r = ask(to[1], from[0], "{\"type\":\"hello\",\"protocol\":99}");
	ok(!strcmp(type_of(r), "error") &&
		   strstr(json_string_value(json_object_get(r, "message")), "protocol 99"),
	   "another protocol version is refused");
	json_decref(r);
	r = ask(to[1], from[0], "this is not json");
	ok(!strcmp(type_of(r), "error") && json_integer_value(json_object_get(r, "job")) == 0,
	   "garbage gets an error reply");
	json_decref(r);
	r = ask(to[1], from[0], "{\"type\":\"evaluate\",\"job\":7}");
	ok(!strcmp(type_of(r), "error") && json_integer_value(json_object_get(r, "job")) == 7 &&
		   strstr(json_string_value(json_object_get(r, "message")), "needs"),
	   "an incomplete job is refused with its job id");
	json_decref(r);
	r = ask(to[1], from[0],
		"{\"type\":\"evaluate\",\"job\":8,\"task\":\"no-such-task-here\",\"options\":{},"
		"\"source\":\"\"}");
	ok(!strcmp(type_of(r), "error") && json_integer_value(json_object_get(r, "job")) == 8,
	   "a task that does not load is an error for that job (%s)",
	   json_string_value(json_object_get(r, "message")));
	json_decref(r);
	r = ask(to[1], from[0],
		"{\"type\":\"evaluate\",\"job\":9,\"task\":\"x\",\"options\":{\"backend\":\"cuda\"},"
		"\"source\":\"\"}");
	ok(!strcmp(type_of(r), "error") &&
		   strstr(json_string_value(json_object_get(r, "message")), "serves backend 'cpu'"),
	   "a job for another backend is refused");
	json_decref(r);
	r = ask(to[1], from[0], "{\"type\":\"shutdown\"}");
	ok(!strcmp(type_of(r), "bye"), "shutdown is answered with bye");
	json_decref(r);
	pthread_join(th, NULL);
	is_int(sa.rc, 0, "and the worker ends cleanly");
	close(to[1]);
	close(from[0]);
	close(to[0]);

	/* an oversize frame breaks the stream: the worker stops with an error */
	if (pipe(to) || pipe(from))
		return 1;
	sa = (struct serve_arg){.in = to[0], .out = from[1]};
	pthread_create(&th, NULL, serve_thread, &sa);
	if (write(to[1], "\xff\xff\xff\xff", 4) < 0)
		return 1;
	pthread_join(th, NULL);
	is_int(sa.rc, KS_ELIMIT, "the worker refuses an oversize frame and stops");
	close(to[1]);
	close(to[0]);
	close(from[0]);

	/* a worker whose input ends between messages ends cleanly */
	if (pipe(to) || pipe(from))
		return 1;
	sa = (struct serve_arg){.in = to[0], .out = from[1]};
	pthread_create(&th, NULL, serve_thread, &sa);
	close(to[1]);
	pthread_join(th, NULL);
	is_int(sa.rc, 0, "end of input between messages is an orderly end");
	close(to[0]);
	close(from[0]);

	/* devices */
	int devs[8], nd = 0;
	ok(ks_pool_parse_devices("0,1,3", devs, 8, &nd, &e) == 0 && nd == 3 && devs[2] == 3,
	   "devices 0,1,3");
	ok(ks_pool_parse_devices("0,x", devs, 8, &nd, &e) == KS_EINVAL, "devices 0,x refused");
	ok(ks_pool_parse_devices("1,1", devs, 8, &nd, &e) == KS_EINVAL, "a device twice refused");
	ok(ks_pool_parse_devices("0,", devs, 8, &nd, &e) == KS_EINVAL, "a trailing comma refused");
	ok(ks_pool_parse_devices("-1", devs, 8, &nd, &e) == KS_EINVAL, "negative refused");
	ks_buf_release(&b);
	return tap_done();
}
