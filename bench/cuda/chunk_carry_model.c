/* A CPU model of the arithmetic of tasks/selective_scan/templates/cuda/chunk_carry.cu, step for
 * step: tiles of WPC * 32 * ITEMS steps, lanes owning ITEMS steps, the walk from h = 0 keeping
 * (e, q), the lane pair (2^(A log2e sum dt), Q), the Kogge-Stone scan over 32 lanes (each level
 * reads the previous level's values, as shuffles do), the combine of the warp totals with the
 * tile carry, the carry for the next tile, the second walk from each lane's start state, the
 * polynomial exp2 for the first POLY states of each UNR group.  It compares y with the task's
 * reference.c (double, linked in as ref_scan) within the task's tolerance.  It catches algebra
 * and indexing mistakes of the chunk/carry scheme, not CUDA ones (races, shared memory, the
 * staging): those need the GPU.
 *
 *   cc -O2 -DWPC=2 -DITEMS=8 -DUNR=2 -DPOLY=1 bench/cuda/chunk_carry_model.c \
 *      -x c -Dselective_scan=ref_scan tasks/selective_scan/reference.c -lm -o model
 *   ./model BATCH DIM SEQLEN DSTATE [BIAS_LO BIAS_HI [A_MU]]
 *
 * Prints one line (max abs error, relative L2, worst tolerance ratio) and exits 0 when y is
 * within atol 3e-3 + rtol 2e-2 |ref| everywhere and relative L2 <= 5e-3, else 1. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef WPC
#define WPC 2
#endif
#ifndef ITEMS
#define ITEMS 8
#endif
#ifndef UNR
#define UNR 2
#endif
#ifndef POLY
#define POLY 0
#endif
#define MAXN 16
#define TILE (32 * WPC * ITEMS)
#define LOG2E 1.4426950408889634f

void ref_scan(const _Float16 *u, const _Float16 *delta, const float *A, const _Float16 *B,
	      const _Float16 *C, const float *D, const _Float16 *z, const float *delta_bias,
	      _Float16 *y, int32_t batch, int32_t dim, int32_t seqlen, int32_t dstate);

static float poly_ex2(float x)
{
	x = fminf(fmaxf(x, -125.0f), 125.0f);
	const float t = x + 12582912.0f;
	const float f = x - (t - 12582912.0f);
	float p = 1.340043265e-03f;
	p = fmaf(p, f, 9.676037356e-03f);
	p = fmaf(p, f, 5.550327152e-02f);
	p = fmaf(p, f, 2.402210683e-01f);
	p = fmaf(p, f, 6.931471825e-01f);
	p = fmaf(p, f, 1.000000119e+00f);
	uint32_t pb, tb;
	memcpy(&pb, &p, 4);
	memcpy(&tb, &t, 4);
	pb += tb << 23;
	memcpy(&p, &pb, 4);
	return p;
}

static float softplus(float x)
{
	return x <= 20.0f ? log1pf(expf(x)) : x;
}

static void model(const _Float16 *u, const _Float16 *delta, const float *A, const _Float16 *B,
		  const _Float16 *C, const float *D, const _Float16 *z, const float *delta_bias,
		  _Float16 *y, int batch, int dim, int64_t L, int dstate)
{
	static float dt[WPC][32][ITEMS], dtu[WPC][32][ITEMS], acc[WPC][32][ITEMS], sdt[WPC][32];
	static float e[WPC][32][ITEMS], q[WPC][32][ITEMS], ta[WPC][32], tb[WPC][32];
	for (int64_t bd = 0; bd < (int64_t)batch * dim; bd++) {
		const int64_t b = bd / dim, d = bd % dim;
		float carry[MAXN] = {0};
		for (int64_t t0 = 0; t0 < L; t0 += TILE) {
			for (int w = 0; w < WPC; w++)
				for (int l = 0; l < 32; l++) {
					sdt[w][l] = 0.0f;
					for (int k = 0; k < ITEMS; k++) {
						const int64_t t = t0 + w * 32 * ITEMS + l * ITEMS + k;
						const float uu = t < L ? (float)u[bd * L + t] : 0.0f;
						const float dd = t < L ? (float)delta[bd * L + t] : 0.0f;
						dt[w][l][k] = t < L ? softplus(dd + delta_bias[d]) : 0.0f;
						sdt[w][l] += dt[w][l][k];
						acc[w][l][k] = D[d] * uu;
						dtu[w][l][k] = uu * dt[w][l][k];
					}
				}
			for (int n = 0; n < dstate && n < MAXN; n++) {
				const float a2 = A[d * dstate + n] * LOG2E;
				const int j = n % UNR;
				for (int w = 0; w < WPC; w++)
					for (int l = 0; l < 32; l++) {
						float h = 0.0f;
						for (int k = 0; k < ITEMS; k++) {
							const int64_t t = t0 + w * 32 * ITEMS + l * ITEMS + k;
							const float bv = t < L ? (float)B[(b * dstate + n) * L + t] : 0.0f;
							const float x = dt[w][l][k] * a2;
							e[w][l][k] = j < POLY ? poly_ex2(x) : exp2f(x);
							q[w][l][k] = dtu[w][l][k] * bv;
							h = fmaf(e[w][l][k], h, q[w][l][k]);
						}
						ta[w][l] = exp2f(a2 * sdt[w][l]), tb[w][l] = h;
					}
				for (int w = 0; w < WPC; w++) /* Kogge-Stone, as the shuffles do it */
					for (int o = 1; o < 32; o <<= 1) {
						float pa[32], pb[32];
						memcpy(pa, ta[w], sizeof(pa));
						memcpy(pb, tb[w], sizeof(pb));
						for (int l = o; l < 32; l++) {
							tb[w][l] = fmaf(pa[l], pb[l - o], pb[l]);
							ta[w][l] = pa[l] * pa[l - o];
						}
					}
				float next = 0.0f;
				for (int w = 0; w < WPC; w++) {
					float hw = carry[n];
					for (int v = 0; v < w; v++)
						hw = fmaf(ta[v][31], hw, tb[v][31]);
					if (w == WPC - 1)
						next = fmaf(ta[w][31], hw, tb[w][31]);
					for (int l = 0; l < 32; l++) {
						float h = l == 0 ? hw : fmaf(ta[w][l - 1], hw, tb[w][l - 1]);
						for (int k = 0; k < ITEMS; k++) {
							const int64_t t = t0 + w * 32 * ITEMS + l * ITEMS + k;
							const float cv = t < L ? (float)C[(b * dstate + n) * L + t] : 0.0f;
							h = fmaf(e[w][l][k], h, q[w][l][k]);
							acc[w][l][k] = fmaf(cv, h, acc[w][l][k]);
						}
					}
				}
				carry[n] = next;
			}
			for (int w = 0; w < WPC; w++)
				for (int l = 0; l < 32; l++)
					for (int k = 0; k < ITEMS; k++) {
						const int64_t t = t0 + w * 32 * ITEMS + l * ITEMS + k;
						if (t >= L)
							continue;
						const float zz = z[bd * L + t];
						y[bd * L + t] = (_Float16)(acc[w][l][k] * zz / (1.0f + expf(-zz)));
					}
		}
	}
}

static double gauss(void)
{
	const double a = (rand() + 1.0) / (RAND_MAX + 2.0), c = (rand() + 1.0) / (RAND_MAX + 2.0);
	return sqrt(-2.0 * log(a)) * cos(6.283185307179586 * c);
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: model BATCH DIM SEQLEN DSTATE [BIAS_LO BIAS_HI [A_MU]]\n");
		return 2;
	}
	const int batch = atoi(argv[1]), dim = atoi(argv[2]), L = atoi(argv[3]),
		  dstate = atoi(argv[4]);
	const double blo = argc > 5 ? atof(argv[5]) : -4.0, bhi = argc > 6 ? atof(argv[6]) : -1.0;
	const double amu = argc > 7 ? atof(argv[7]) : 0.0;
	if (batch <= 0 || dim <= 0 || L <= 0 || dstate <= 0 || dstate > MAXN) {
		fprintf(stderr, "model: shape out of range\n");
		return 2;
	}
	const size_t act = (size_t)batch * dim * L, bc = (size_t)batch * dstate * L;
	_Float16 *u = malloc(act * 2), *dl = malloc(act * 2), *z = malloc(act * 2);
	_Float16 *B = malloc(bc * 2), *C = malloc(bc * 2), *y = malloc(act * 2), *r = malloc(act * 2);
	float *A = malloc((size_t)dim * dstate * 4), *D = malloc(dim * 4), *bias = malloc(dim * 4);
	if (!u || !dl || !z || !B || !C || !y || !r || !A || !D || !bias)
		return 2;
	srand(12345);
	for (size_t i = 0; i < act; i++)
		u[i] = gauss(), dl[i] = gauss(), z[i] = gauss();
	for (size_t i = 0; i < bc; i++)
		B[i] = gauss(), C[i] = gauss();
	for (int i = 0; i < dim * dstate; i++)
		A[i] = -exp(amu + gauss());
	for (int i = 0; i < dim; i++) {
		D[i] = 0.5 + rand() / (double)RAND_MAX;
		bias[i] = blo + (bhi - blo) * rand() / (double)RAND_MAX;
	}
	model(u, dl, A, B, C, D, z, bias, y, batch, dim, L, dstate);
	ref_scan(u, dl, A, B, C, D, z, bias, r, batch, dim, L, dstate);
	double maxabs = 0, worst = 0, se = 0, sr = 0;
	for (size_t i = 0; i < act; i++) {
		const double a = y[i], x = r[i], err = fabs(a - x);
		maxabs = err > maxabs ? err : maxabs;
		const double ratio = err / (3e-3 + 2e-2 * fabs(x));
		worst = ratio > worst || isnan(a) ? (isnan(a) ? INFINITY : ratio) : worst;
		se += err * err, sr += x * x;
	}
	const double l2 = sqrt(se / (sr > 0 ? sr : 1));
	const int pass = worst <= 1.0 && l2 <= 5e-3;
	printf("WPC %d ITEMS %d UNR %d POLY %d  b%d d%d L%d n%d: max_abs %.3g rel_l2 %.3g "
	       "worst/tol %.3g %s\n",
	       WPC, ITEMS, UNR, POLY, batch, dim, L, dstate, maxabs, l2, worst,
	       pass ? "PASS" : "FAIL");
	return pass ? 0 : 1;
}
