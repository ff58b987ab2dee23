/* Replay transport: serves the replies of a recorded run, in order, so a run reproduces
 * without a model.  The caller loads the entries from the run store. */
#include "ksearch/llm.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct replay {
	struct ks_llm_replay_entry *v;
	int n;
	int next;
	char *model; /* model of the last served entry */
	pthread_mutex_t lock;
};

static void replay_close(void *ctx)
{
	struct replay *r = ctx;
	for (int i = 0; i < r->n; i++) {
		free((char *)r->v[i].purpose);
		free((char *)r->v[i].content);
		free((char *)r->v[i].model);
		free((char *)r->v[i].error);
	}
	free(r->v);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

static char *memdup0(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (!d)
		return NULL;
	if (n)
		memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static int replay_next(struct replay *r, const char *purpose, struct ks_llm_reply *out,
		       struct ks_error *e);

static int replay_complete(void *ctx, const char *purpose, const struct ks_llm_msg *msgs,
			   int nmsg, struct ks_llm_reply *out, struct ks_error *e)
{
	struct replay *r = ctx;
	pthread_mutex_lock(&r->lock);
	int rc = replay_next(r, purpose, out, e);
	pthread_mutex_unlock(&r->lock);
	return rc;
}

static int replay_next(struct replay *r, const char *purpose, struct ks_llm_reply *out,
		       struct ks_error *e)
{
	const char *want = purpose ? purpose : "";
	if (r->next >= r->n)
		return ks_error_set(e, KS_ENOTFOUND,
				    "replay exhausted: the run asked for reply %d ('%s') but only "
				    "%d were recorded",
				    r->next + 1, want, r->n);
	const struct ks_llm_replay_entry *x = &r->v[r->next];
	if (strcmp(x->purpose, want))
		return ks_error_set(e, KS_EPROTO,
				    "replay diverged at reply %d: recorded for '%s', the run asked "
				    "for '%s'",
				    r->next + 1, x->purpose, want);
	if (x->status) {
		/* a recorded failure happens again, so the run takes the same path */
		int code = x->status < 0 ? x->status : KS_EIO;
		r->next++;
		return ks_error_set(e, code, "replayed failure: %s",
				    x->error && x->error[0] ? x->error : ks_strerror(code));
	}
	out->content = memdup0(x->content, x->len);
	if (!out->content)
		return ks_error_set(e, KS_ENOMEM, "replay: out of memory");
	out->len = x->len;
	out->model = x->model ? strdup(x->model) : NULL;
	out->prompt_tokens = x->prompt_tokens;
	out->completion_tokens = x->completion_tokens;
	out->attempts = 1;
	r->model = (char *)x->model;
	r->next++;
	return 0;
}

static const char *replay_model(void *ctx)
{
	struct replay *r = ctx;
	return r->model ? r->model : "replay";
}

int ks_llm_replay_open(const struct ks_llm_replay_entry *entries, int n,
		       struct ks_llm_transport *t, struct ks_error *e)
{
	memset(t, 0, sizeof(*t));
	if (n < 0 || (n > 0 && !entries))
		return ks_error_set(e, KS_EINVAL, "replay: no entries");
	struct replay *r = calloc(1, sizeof(*r));
	if (!r)
		return ks_error_set(e, KS_ENOMEM, "replay: out of memory");
	pthread_mutex_init(&r->lock, NULL);
	r->v = calloc((size_t)(n ? n : 1), sizeof(*r->v));
	if (!r->v) {
		pthread_mutex_destroy(&r->lock);
		free(r);
		return ks_error_set(e, KS_ENOMEM, "replay: out of memory");
	}
	for (int i = 0; i < n; i++) {
		const struct ks_llm_replay_entry *s = &entries[i];
		struct ks_llm_replay_entry *d = &r->v[i];
		const char *c = s->content ? s->content : "";
		size_t len = s->content ? s->len : 0;
		d->purpose = strdup(s->purpose ? s->purpose : "");
		d->content = memdup0(c, len);
		d->model = s->model ? strdup(s->model) : NULL;
		d->error = s->error ? strdup(s->error) : NULL;
		d->status = s->status;
		d->len = len;
		d->prompt_tokens = s->prompt_tokens;
		d->completion_tokens = s->completion_tokens;
		r->n = i + 1;
		if (!d->purpose || !d->content || (s->model && !d->model) ||
		    (s->error && !d->error)) {
			replay_close(r);
			return ks_error_set(e, KS_ENOMEM, "replay: out of memory");
		}
	}
	*t = (struct ks_llm_transport){
		.version = KS_LLM_TRANSPORT_VERSION,
		.name = "replay",
		.complete = replay_complete,
		.model = replay_model,
		.close = replay_close,
		.ctx = r,
	};
	return 0;
}
