/* Times OpenBLAS's cblas_sgemm (row-major C = A B, what tasks/matmul/library.c calls) at
 * one size with whatever core OPENBLAS_CORETYPE or OpenBLAS's detection picks:
 *
 *   openblas_cores M N K [SECONDS]
 *
 * prints "core M N K median_us spread_pct gflops calls": the median of single timed calls
 * after 3 untimed ones, over at least SECONDS (1) and 20 calls; spread = interquartile range
 * / median.  bench/cpu/openblas_cores.sh runs it for each core, interleaved. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

char *openblas_get_corename(void);

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return fprintf(stderr, "usage: openblas_cores M N K [SECONDS]\n"), 2;
	int m = atoi(argv[1]), n = atoi(argv[2]), k = atoi(argv[3]);
	double secs = argc > 4 ? atof(argv[4]) : 1.0;
	float *a = malloc(sizeof(float) * (size_t)m * k), *b = malloc(sizeof(float) * (size_t)k * n),
	      *c = malloc(sizeof(float) * (size_t)m * n);
	double *t = malloc(sizeof(double) * 100000);
	if (!a || !b || !c || !t)
		return 1;
	srand(1);
	for (size_t i = 0; i < (size_t)m * k; i++)
		a[i] = (float)rand() / RAND_MAX - 0.5f;
	for (size_t i = 0; i < (size_t)k * n; i++)
		b[i] = (float)rand() / RAND_MAX - 0.5f;
	for (int i = 0; i < 3; i++)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1, a, k, b, n, 0, c, n);
	int calls = 0;
	double start = now();
	while (calls < 100000 && (calls < 20 || now() - start < secs)) {
		double t0 = now();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1, a, k, b, n, 0, c, n);
		t[calls++] = (now() - t0) * 1e6;
	}
	qsort(t, (size_t)calls, sizeof(double), cmp);
	double med = t[calls / 2], iqr = t[calls * 3 / 4] - t[calls / 4];
	printf("%s %d %d %d %.1f %.1f %.1f %d\n", openblas_get_corename(), m, n, k, med,
	       100 * iqr / med, 2.0 * m * n * k / med / 1e3, calls);
	return 0;
}
