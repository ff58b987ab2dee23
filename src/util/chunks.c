/* A parallel loop over fixed chunks (contract in chunks.h). */
#include <pthread.h>
#include <unistd.h>

#include "util/chunks.h"
#include "util/os.h"

#define CHUNKS_MAX_THREADS 16

struct chunks_job {
	size_t n, chunk, nchunks;
	int nthreads;
	void (*fn)(void *ctx, size_t c, size_t begin, size_t end);
	void *ctx;
};

struct chunks_worker {
	const struct chunks_job *job;
	int id;
};

size_t ks_chunks_count(size_t n, size_t chunk)
{
	if (chunk == 0)
		chunk = 1;
	return n == 0 ? 1 : (n + chunk - 1) / chunk;
}

/* thread id takes chunks id, id + nthreads, ...: which thread runs a chunk never changes
 * what the chunk computes */
static void *chunks_worker_run(void *arg)
{
	const struct chunks_worker *w = arg;
	const struct chunks_job *j = w->job;
	for (size_t c = (size_t)w->id; c < j->nchunks; c += (size_t)j->nthreads) {
		size_t begin = c * j->chunk;
		size_t end = begin + j->chunk < j->n ? begin + j->chunk : j->n;
		j->fn(j->ctx, c, begin, end);
	}
	return NULL;
}

void ks_chunks_run(size_t n, size_t chunk, int threads,
		   void (*fn)(void *ctx, size_t c, size_t begin, size_t end), void *ctx)
{
	if (chunk == 0)
		chunk = 1;
	if (threads <= 0) {
		/* the cores this process may run on (a worker pinned to some, a cgroup's cpuset),
		 * else the online ones */
		threads = ks_os_cpus();
	}
	if (threads > CHUNKS_MAX_THREADS)
		threads = CHUNKS_MAX_THREADS;
	struct chunks_job job = {n, chunk, ks_chunks_count(n, chunk), threads, fn, ctx};
	if ((size_t)job.nthreads > job.nchunks)
		job.nthreads = (int)job.nchunks;
	struct chunks_worker w[CHUNKS_MAX_THREADS];
	pthread_t th[CHUNKS_MAX_THREADS];
	int started[CHUNKS_MAX_THREADS] = {0};
	for (int i = 0; i < job.nthreads; i++)
		w[i] = (struct chunks_worker){&job, i};
	/* thread 0 is the caller */
	for (int i = 1; i < job.nthreads; i++)
		started[i] = pthread_create(&th[i], NULL, chunks_worker_run, &w[i]) == 0;
	chunks_worker_run(&w[0]);
	for (int i = 1; i < job.nthreads; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
		else
			chunks_worker_run(&w[i]);
	}
}
