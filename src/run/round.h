/* One round of the search driver: its candidates' compiles on threads, their evaluations on
 * the calling thread in proposal order (loop.c).  Apart from the driver so the order of the
 * two can be tested without a compiler or a device (tests/unit/test_round.c). */
#ifndef KS_SEARCH_ROUND_H
#define KS_SEARCH_ROUND_H

struct ks_round_ops {
	/* compile candidate i (on a thread of its own; must not touch what settle uses) */
	void (*compile)(void *ctx, int i);
	/* evaluate, record and observe candidate i (on the calling thread); nonzero stops the
	 * round: the later candidates are not settled */
	int (*settle)(void *ctx, int i);
	void *ctx;
};

/* at most this many candidates in a round (one propose call's) */
#define KS_ROUND_MAX 16

/* Compile every i < n (n <= KS_ROUND_MAX) with compile[i] set, settle 0..n-1 in order, return the first
 * nonzero settle (0 when none).  overlap 0: every compile has ended before the first settle
 * (a host's timing must not share its cores with compilers); overlap 1: settle(i) starts
 * once the compiles of 0..i have ended, while the later ones go on.  Every compile has
 * ended when it returns.  A compile whose thread cannot be started runs on the calling
 * thread before any settle. */
int ks_round_run(int n, const int *compile, int overlap, const struct ks_round_ops *ops);

#endif
