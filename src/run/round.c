/* One round's compiles and evaluations, and the order between them (round.h). */
#include <pthread.h>

#include "run/round.h"

struct compile_arg {
	const struct ks_round_ops *ops;
	int i;
};

static void *compile_thread(void *p)
{
	struct compile_arg *a = p;
	a->ops->compile(a->ops->ctx, a->i);
	return NULL;
}

int ks_round_run(int n, const int *compile, int overlap, const struct ks_round_ops *ops)
{
	pthread_t th[KS_ROUND_MAX];
	struct compile_arg args[KS_ROUND_MAX];
	int started[KS_ROUND_MAX] = {0}, rc = 0;
	if (n > KS_ROUND_MAX)
		n = KS_ROUND_MAX;
	for (int i = 0; i < n; i++) {
		if (!compile[i])
			continue;
		args[i] = (struct compile_arg){.ops = ops, .i = i};
		started[i] = pthread_create(&th[i], NULL, compile_thread, &args[i]) == 0;
		if (!started[i])
			ops->compile(ops->ctx, i);
	}
	for (int i = 0; i < n && !overlap; i++)
		if (started[i]) {
			pthread_join(th[i], NULL);
			started[i] = 0;
		}
	for (int i = 0; i < n && !rc; i++) {
		/* joined in proposal order: when i is settled, 0..i have all been joined */
		if (started[i]) {
			pthread_join(th[i], NULL);
			started[i] = 0;
		}
		rc = ops->settle(ops->ctx, i);
	}
	/* a stopped round (an error) still waits for its compilers: the caller releases
	 * their artifacts after this returns */
	for (int i = 0; i < n; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	return rc;
}
