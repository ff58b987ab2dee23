/* The order of a search round's compiles and evaluations (src/run/round.c), with a fake
 * compile and settle: no compiler, no device.  The last candidate's compile waits for the
 * first evaluation to begin; with overlap it must see it begin, without it it must not
 * (where the wait ends by its time limit).  No timing is asserted: the limits only bound
 * how long a broken order takes to show. */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "run/round.h"
#include "tap.h"

#define N 4

struct fake {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int compiled[N];    /* compile i has ended */
	int compiles[N];    /* times compile i ran */
	int settled[N];     /* order of settles: settled[k] = i */
	int nsettled;
	int settle_began;   /* the first settle has begun */
	int last_saw_settle; /* the last compile saw a settle begin while it ran */
	int early;          /* a settle found one of 0..i not compiled */
	int late_compile;   /* a settle found a compile of the round still running (no overlap) */
	int overlap;
	int stop_at;        /* settle returns nonzero at this index (-1: never) */
	double wait_s;      /* how long the last compile waits for the first settle */
};

static void fake_compile(void *ctx, int i)
{
	struct fake *f = ctx;
	pthread_mutex_lock(&f->mu);
	if (i == N - 1) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += (time_t)f->wait_s;
		until.tv_nsec += (long)((f->wait_s - (double)(time_t)f->wait_s) * 1e9);
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		int rc = 0;
		while (!f->settle_began && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&f->cv, &f->mu, &until);
		f->last_saw_settle = f->settle_began;
	}
	f->compiled[i] = 1;
	f->compiles[i]++;
	pthread_mutex_unlock(&f->mu);
}

static int fake_settle(void *ctx, int i)
{
	struct fake *f = ctx;
	pthread_mutex_lock(&f->mu);
	f->settle_began = 1;
	pthread_cond_broadcast(&f->cv);
	for (int k = 0; k <= i; k++)
		f->early |= !f->compiled[k];
	for (int k = 0; k < N; k++)
		f->late_compile |= !f->compiled[k];
	f->settled[f->nsettled++] = i;
	pthread_mutex_unlock(&f->mu);
	return i == f->stop_at ? -5 : 0;
}

static void fake_run(struct fake *f, int overlap, int stop_at, double wait_s, int *rc)
{
	*f = (struct fake){.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER,
			   .overlap = overlap, .stop_at = stop_at, .wait_s = wait_s};
	int compile[N] = {1, 1, 1, 1};
	struct ks_round_ops ops = {.compile = fake_compile, .settle = fake_settle, .ctx = f};
	*rc = ks_round_run(N, compile, overlap, &ops);
}

static int in_order(const struct fake *f, int n)
{
	if (f->nsettled != n)
		return 0;
	for (int k = 0; k < n; k++)
		if (f->settled[k] != k)
			return 0;
	return 1;
}

int main(void)
{
	struct fake f;
	int rc;

	/* a device backend: the first candidate is evaluated while the last still compiles */
	fake_run(&f, 1, -1, 30, &rc);
	is_int(rc, 0, "overlap: the round succeeds");
	ok(f.last_saw_settle, "overlap: an evaluation began while a later candidate compiled");
	ok(!f.early, "overlap: candidate i is evaluated only once 0..i are compiled");
	ok(in_order(&f, N), "overlap: evaluated in proposal order");

	/* the cpu backend: no evaluation while any compile of the round runs */
	fake_run(&f, 0, -1, 0.3, &rc);
	is_int(rc, 0, "no overlap: the round succeeds");
	ok(!f.last_saw_settle && !f.late_compile,
	   "no overlap: every compile ended before the first evaluation");
	ok(in_order(&f, N), "no overlap: evaluated in proposal order");

	/* an error stops the round: the rest is not settled, every compile has still ended */
	fake_run(&f, 1, 1, 30, &rc);
	is_int(rc, -5, "a settle's error is the round's");
	ok(in_order(&f, 2), "... and the later candidates are not settled");
	int all = 1;
	for (int k = 0; k < N; k++)
		all &= f.compiles[k] == 1;
	ok(all, "... and every compile ran once and ended before the round returned");

	/* a candidate the store holds already is settled without a compile */
	f = (struct fake){.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER,
			  .stop_at = -1, .wait_s = 0};
	int some[N] = {1, 0, 1, 0};
	f.compiled[1] = f.compiled[3] = 1; /* nothing to wait for */
	struct ks_round_ops ops = {.compile = fake_compile, .settle = fake_settle, .ctx = &f};
	rc = ks_round_run(N, some, 1, &ops);
	ok(rc == 0 && in_order(&f, N) && f.compiles[1] == 0 && f.compiles[3] == 0 &&
		   f.compiles[0] == 1 && f.compiles[2] == 1,
	   "only the candidates marked are compiled; all are settled in order");
	return tap_done();
}
