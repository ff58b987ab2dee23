/* How close a kernel comes to the tolerance: reads shapes (B H KV L LK D causal sigma_qk)
 * from stdin, draws q, k ~ normal(0, sigma), v ~ normal(0, 1) rounded to the element type,
 * runs reference.c and the kernel, prints max |err|, the largest |err| / (atol + rtol|ref|)
 * (> 1 fails) and the relative L2 error (the task's l2 bounds it).  measure.sh builds it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if ATTN_BF16
#define T uint16_t
static float ld(T h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static T st(float f) { uint32_t u; memcpy(&u, &f, 4); u += 0x7fffu + ((u >> 16) & 1u); return (T)(u >> 16); }
#define ATOL 5e-3
#else
#define T _Float16
static float ld(T h) { return (float)h; }
static T st(float f) { return (T)f; }
#define ATOL 2e-3
#endif
#define RTOL 2e-2
typedef void fn(const T *, const T *, const T *, T *, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t);
fn ref_attention, emu_attention, nr_attention, base_attention;
static uint64_t rs = 12345;
static double gauss(void) { /* Box-Muller */
	rs = rs * 6364136223846793005ull + 1442695040888963407ull; double a = ((rs >> 11) + 0.5) / 9007199254740992.0;
	rs = rs * 6364136223846793005ull + 1442695040888963407ull; double b = ((rs >> 11) + 0.5) / 9007199254740992.0;
	return sqrt(-2 * log(a)) * cos(6.283185307179586 * b); }
int main(int argc, char **argv)
{
	int B, H, KH, L, LK, D, C; double sig;
	fn *k_ = argc < 2 ? NULL : !strcmp(argv[1], "emu") ? emu_attention : !strcmp(argv[1], "nr") ? nr_attention : !strcmp(argv[1], "base") ? base_attention : NULL;
	if (!k_) { fprintf(stderr, "usage: measure emu|base|nr < shapes\n"); return 2; }
	while (scanf("%d %d %d %d %d %d %d %lf", &B, &H, &KH, &L, &LK, &D, &C, &sig) == 8) {
		size_t nq = (size_t)B * H * L * D, nk = (size_t)B * KH * LK * D;
		T *q = malloc(nq * 2), *k = malloc(nk * 2), *v = malloc(nk * 2), *o1 = malloc(nq * 2), *o2 = malloc(nq * 2);
		for (size_t i = 0; i < nq; i++) q[i] = st(sig * gauss());
		for (size_t i = 0; i < nk; i++) { k[i] = st(sig * gauss()); v[i] = st(gauss()); }
		ref_attention(q, k, v, o1, B, H, KH, L, LK, D, C);
		k_(q, k, v, o2, B, H, KH, L, LK, D, C);
		double ma = 0, mr = 0, e2 = 0, w2 = 0;
		for (size_t i = 0; i < nq; i++) {
			double w = ld(o1[i]), g = ld(o2[i]), e = fabs(g - w);
			if (!(e == e)) e = INFINITY;
			ma = fmax(ma, e); mr = fmax(mr, e / (ATOL + RTOL * fabs(w))); e2 += e * e; w2 += w * w;
		}
		printf("B%d H%d KV%d L%d LK%d D%d c%d sig%g: max_abs %.3g  max err/(atol+rtol|ref|) %.3f  rel_l2 %.3g\n", B, H, KH, L, LK, D, C, sig, ma, mr, sqrt(e2 / w2));
		fflush(stdout);
		free(q); free(k); free(v); free(o1); free(o2);
	}
	return 0;
}
