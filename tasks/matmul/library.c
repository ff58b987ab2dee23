/* The library yardstick on the CPU: OpenBLAS's cblas_sgemm (row-major, C = A B), linked
 * through pkg-config's openblas (task.yaml's library map).  OpenBLAS runs its own thread
 * pool: OPENBLAS_NUM_THREADS follows --threads, all cores otherwise, like the kernels. */
#include <cblas.h>
#include <stdint.h>

void matmul(const float *a, const float *b, float *c, int32_t m, int32_t n, int32_t k)
{
	if (m <= 0 || n <= 0)
		return;
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f,
		    c, n);
}
