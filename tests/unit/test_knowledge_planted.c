/* The assertion checks have teeth: planted kernels that pass a task's ordinary workload but
 * break one expert property (max subtraction, tail handling, state carry, causal diagonal,
 * running-max rescale) fail at least one "assert:" workload, and correct kernels pass all.
 * Inputs are drawn from the check's initialisers by a small generator of this test (the
 * evaluator uses the task module's generator; only the distributions matter here). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/knowledge.h"
#include "tap.h"

/* ---- inputs ------------------------------------------------------------------------- */

static uint64_t rng_state;

static double uniform01(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
	return sqrt(-2 * log(uniform01())) * cos(6.283185307179586 * uniform01());
}

static void fill(float *x, size_t n, const char *init, uint64_t seed)
{
	double a, b;
	rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
	for (size_t i = 0; i < n; i++) {
		double v;
		if (sscanf(init, "normal(%lf, %lf)", &a, &b) == 2)
			v = a + b * gauss();
		else if (sscanf(init, "uniform(%lf, %lf)", &a, &b) == 2)
			v = a + (b - a) * uniform01();
		else if (sscanf(init, "softplus(normal(%lf, %lf))", &a, &b) == 2)
			v = log1p(exp(a + b * gauss()));
		else if (sscanf(init, "-exp(normal(%lf, %lf))", &a, &b) == 2)
			v = -exp(a + b * gauss());
		else
			v = strtod(init, NULL);
		x[i] = (float)v;
	}
}

/* allclose + no NaN/Inf, as the evaluator compares */
static int close_all(const float *got, const double *want, size_t n, double atol, double rtol)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(got[i]) || fabs(got[i] - want[i]) > atol + rtol * fabs(want[i]))
			return 0;
	return 1;
}

/* ---- tasks -------------------------------------------------------------------------------- */

static struct ks_task *task(const char *name, const char *cls, const char *const *params, int np,
			    const char *const *inputs, const char *const *defaults, int ni,
			    const double *w0)
{
	struct ks_task *t = calloc(1, sizeof(*t));
	t->name = (char *)name;
	t->cls = (char *)cls;
	t->nparams = np;
	t->params = calloc((size_t)np, sizeof(*t->params));
	for (int i = 0; i < np; i++) {
		t->params[i].name = (char *)params[i];
		t->params[i].dtype = KS_DT_I32;
	}
	t->ntensors = t->ninputs = ni;
	t->tensors = calloc((size_t)ni, sizeof(*t->tensors));
	for (int i = 0; i < ni; i++) {
		t->tensors[i].name = (char *)inputs[i];
		t->tensors[i].init = (char *)defaults[i];
	}
	t->nworkloads = 1;
	t->workloads = calloc(1, sizeof(*t->workloads));
	t->workloads[0].values = (double *)w0;
	struct ks_error e = {0};
	int rc = ks_assertions_apply(t, &e);
	ok(rc == 0 && t->nchecks > 0, "%s: %d assert checks", name, t->nchecks);
	return t;
}

static void task_free(struct ks_task *t)
{
	for (int i = 0; i < t->nchecks; i++) {
		free(t->checks[i].name);
		free(t->checks[i].values);
		for (int k = 0; k < t->ntensors; k++)
			free(t->checks[i].init[k]);
		free(t->checks[i].init);
	}
	free(t->checks);
	free(t->workloads);
	free(t->params);
	free(t->tensors);
	free(t);
}

static const char *init_of(const struct ks_task *t, const struct ks_workload *w, int i)
{
	return w->init && w->init[i] ? w->init[i] : t->tensors[i].init;
}

/* ---- softmax -------------------------------------------------------------------------------- */

typedef void (*softmax_fn)(const float *x, float *y, int rows, int cols);

static void softmax_good(const float *x, float *y, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * cols;
		float m = -INFINITY, s = 0;
		for (int c = 0; c < cols; c++)
			m = fmaxf(m, xr[c]);
		for (int c = 0; c < cols; c++)
			s += expf(xr[c] - m);
		for (int c = 0; c < cols; c++)
			y[(size_t)r * cols + c] = expf(xr[c] - m) / s;
	}
}

static void softmax_nomax(const float *x, float *y, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * cols;
		float s = 0;
		for (int c = 0; c < cols; c++)
			s += expf(xr[c]);
		for (int c = 0; c < cols; c++)
			y[(size_t)r * cols + c] = expf(xr[c]) / s;
	}
}

/* assumes cols is a multiple of 32 (a vector/SIMD-group width): the tail is never touched */
static void softmax_tail32(const float *x, float *y, int rows, int cols)
{
	int c32 = cols / 32 * 32;
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * cols;
		float m = -INFINITY, s = 0;
		for (int c = 0; c < c32; c++)
			m = fmaxf(m, xr[c]);
		for (int c = 0; c < c32; c++)
			s += expf(xr[c] - m);
		for (int c = 0; c < c32; c++)
			y[(size_t)r * cols + c] = expf(xr[c] - m) / s;
	}
}

/* 1 when fn passes workload w (values/init of t) */
static int run_softmax(const struct ks_task *t, const struct ks_workload *w, softmax_fn fn)
{
	int rows = (int)w->values[0], cols = (int)w->values[1];
	size_t n = (size_t)rows * cols;
	float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	double *ref = malloc(n * sizeof(double));
	fill(x, n, init_of(t, w, 0), 1);
	for (size_t i = 0; i < n; i++)
		y[i] = NAN; /* poisoned, as the evaluator does */
	for (int r = 0; r < rows; r++) {
		double m = -INFINITY, s = 0;
		for (int c = 0; c < cols; c++)
			m = fmax(m, x[(size_t)r * cols + c]);
		for (int c = 0; c < cols; c++)
			s += exp(x[(size_t)r * cols + c] - m);
		for (int c = 0; c < cols; c++)
			ref[(size_t)r * cols + c] = exp(x[(size_t)r * cols + c] - m) / s;
	}
	fn(x, y, rows, cols);
	int pass = close_all(y, ref, n, 1e-6, 1e-4);
	free(x);
	free(y);
	free(ref);
	return pass;
}

/* ---- matmul ---------------------------------------------------------------------------------- */

typedef void (*mm_fn)(const float *a, const float *b, float *c, int m, int n, int k);

static void mm_good(const float *a, const float *b, float *c, int m, int n, int k)
{
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++) {
			float s = 0;
			for (int p = 0; p < k; p++)
				s += a[(size_t)i * k + p] * b[(size_t)p * n + j];
			c[(size_t)i * n + j] = s;
		}
}

/* 16x16x16 tiles without edge masking: only full tiles are computed */
static void mm_tile16(const float *a, const float *b, float *c, int m, int n, int k)
{
	int m16 = m / 16 * 16, n16 = n / 16 * 16, k16 = k / 16 * 16;
	for (int i = 0; i < m16; i++)
		for (int j = 0; j < n16; j++) {
			float s = 0;
			for (int p = 0; p < k16; p++)
				s += a[(size_t)i * k + p] * b[(size_t)p * n + j];
			c[(size_t)i * n + j] = s;
		}
}

static int run_mm(const struct ks_task *t, const struct ks_workload *w, mm_fn fn)
{
	int m = (int)w->values[0], n = (int)w->values[1], k = (int)w->values[2];
	float *a = malloc((size_t)m * k * sizeof(float)), *b = malloc((size_t)k * n * sizeof(float));
	float *c = malloc((size_t)m * n * sizeof(float));
	double *ref = malloc((size_t)m * n * sizeof(double));
	fill(a, (size_t)m * k, init_of(t, w, 0), 2);
	fill(b, (size_t)k * n, init_of(t, w, 1), 3);
	for (size_t i = 0; i < (size_t)m * n; i++)
		c[i] = NAN;
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++) {
			double s = 0;
			for (int p = 0; p < k; p++)
				s += (double)a[(size_t)i * k + p] * b[(size_t)p * n + j];
			ref[(size_t)i * n + j] = s;
		}
	fn(a, b, c, m, n, k);
	int pass = close_all(c, ref, (size_t)m * n, 1e-3, 1e-3);
	free(a);
	free(b);
	free(c);
	free(ref);
	return pass;
}

/* ---- selective scan (core recurrence) -------------------------------------------------- */

/* h = exp(dt*A) h + dt*B*u, y = C.h with dt = softplus(delta + bias); batch 1, float */
typedef void (*scan_fn)(const float *u, const float *delta, const float *A, const float *B,
			const float *C, float *y, int dim, int L, int N, int chunk);

static void scan_run(const float *u, const float *delta, const float *A, const float *B,
		     const float *C, float *y, int dim, int L, int N, int chunk)
{
	for (int d = 0; d < dim; d++) {
		float h[64] = {0};
		for (int t = 0; t < L; t++) {
			if (chunk && t % chunk == 0)
				memset(h, 0, sizeof(h)); /* the planted bug: no carry */
			float dt = log1pf(expf(delta[(size_t)d * L + t] - 2.5f));
			float acc = 0;
			for (int s = 0; s < N; s++) {
				h[s] = expf(dt * A[d * N + s]) * h[s] + dt * B[(size_t)s * L + t] * u[(size_t)d * L + t];
				acc += C[(size_t)s * L + t] * h[s];
			}
			y[(size_t)d * L + t] = acc;
		}
	}
}

static int run_scan(const struct ks_task *t, const struct ks_workload *w, int chunk)
{
	int batch = (int)w->values[0], dim = (int)w->values[1], L = (int)w->values[2];
	int N = (int)w->values[3];
	if (batch != 1)
		dim *= batch; /* batches are independent channels for this model */
	size_t dl = (size_t)dim * L, nl = (size_t)N * L;
	float *u = malloc(dl * 4), *dl_ = malloc(dl * 4), *A = malloc((size_t)dim * N * 4);
	float *B = malloc(nl * 4), *C = malloc(nl * 4), *y = malloc(dl * 4);
	double *ref = malloc(dl * sizeof(double));
	float *yr = malloc(dl * 4);
	fill(u, dl, init_of(t, w, 0), 4);
	fill(dl_, dl, init_of(t, w, 1), 5);
	fill(A, (size_t)dim * N, init_of(t, w, 2), 6);
	fill(B, nl, init_of(t, w, 3), 7);
	fill(C, nl, init_of(t, w, 4), 8);
	scan_run(u, dl_, A, B, C, yr, dim, L, N, 0);
	for (size_t i = 0; i < dl; i++)
		ref[i] = yr[i];
	scan_run(u, dl_, A, B, C, y, dim, L, N, chunk);
	int pass = close_all(y, ref, dl, 3e-3, 2e-2);
	free(u);
	free(dl_);
	free(A);
	free(B);
	free(C);
	free(y);
	free(yr);
	free(ref);
	return pass;
}

/* ---- attention (one head at a time, float) ---------------------------------------------- */

enum attn_bug { ATTN_GOOD, ATTN_STRICT_CAUSAL, ATTN_NO_RESCALE };

static void attn(const float *q, const float *k, const float *v, float *o, int L, int D,
		 int causal, enum attn_bug bug)
{
	const float scale = 1.0f / sqrtf((float)D);
	for (int i = 0; i < L; i++) {
		float m = -INFINITY, l = 0, acc[256] = {0};
		int first = 1;
		for (int j0 = 0; j0 < L; j0 += 16) {
			float s[16];
			float bm = -INFINITY;
			for (int j = j0; j < j0 + 16 && j < L; j++) {
				int masked = causal && (bug == ATTN_STRICT_CAUSAL ? j >= i : j > i);
				float d = 0;
				for (int c = 0; c < D; c++)
					d += q[i * D + c] * k[j * D + c];
				s[j - j0] = masked ? -INFINITY : d * scale;
				bm = fmaxf(bm, s[j - j0]);
			}
			float mn = (bug == ATTN_NO_RESCALE && !first) ? m : fmaxf(m, bm);
			if (mn == -INFINITY)
				continue; /* fully masked block so far */
			float corr = expf(m - mn);
			l *= corr;
			for (int c = 0; c < D; c++)
				acc[c] *= corr;
			for (int j = j0; j < j0 + 16 && j < L; j++) {
				float p = expf(s[j - j0] - mn);
				l += p;
				for (int c = 0; c < D; c++)
					acc[c] += p * v[j * D + c];
			}
			m = mn;
			first = 0;
		}
		for (int c = 0; c < D; c++)
			o[i * D + c] = acc[c] / l;
	}
}

static int run_attn(const struct ks_task *t, const struct ks_workload *w, enum attn_bug bug)
{
	int BH = (int)(w->values[0] * w->values[1]), L = (int)w->values[2], D = (int)w->values[3];
	int causal = (int)w->values[4];
	size_t n = (size_t)BH * L * D;
	float *q = malloc(n * 4), *k = malloc(n * 4), *v = malloc(n * 4), *o = malloc(n * 4);
	float *of = malloc(n * 4);
	double *ref = malloc(n * sizeof(double));
	fill(q, n, init_of(t, w, 0), 9);
	fill(k, n, init_of(t, w, 1), 10);
	fill(v, n, init_of(t, w, 2), 11);
	for (int h = 0; h < BH; h++) {
		size_t off = (size_t)h * L * D;
		attn(q + off, k + off, v + off, of + off, L, D, causal, ATTN_GOOD);
		attn(q + off, k + off, v + off, o + off, L, D, causal, bug);
	}
	for (size_t i = 0; i < n; i++)
		ref[i] = of[i];
	int pass = close_all(o, ref, n, 2e-3, 2e-2);
	free(q);
	free(k);
	free(v);
	free(o);
	free(of);
	free(ref);
	return pass;
}

/* ---- the verdicts ------------------------------------------------------------------------- */

/* how many assert checks the planted kernel fails; it must pass the ordinary workload */
#define VERDICT(t, call_w0, call_check, label, want_fail)                                    \
	do {                                                                                 \
		const struct ks_workload *w = &(t)->workloads[0];                            \
		ok(call_w0, "%s passes the ordinary workload", label);                       \
		int fails = 0;                                                               \
		char which[512] = "";                                                        \
		for (int ci = 0; ci < (t)->nchecks; ci++) {                                  \
			w = &(t)->checks[ci];                                                \
			if (!(call_check)) {                                                 \
				fails++;                                                     \
				size_t l = strlen(which);                                    \
				snprintf(which + l, sizeof(which) - l, " %s", w->name);      \
			}                                                                    \
		}                                                                            \
		if (want_fail)                                                               \
			ok(fails > 0, "%s is caught by:%s", label, which);                   \
		else                                                                         \
			ok(fails == 0, "%s passes every assert check (failed:%s)", label,    \
			   which);                                                           \
	} while (0)

int main(void)
{
	const char *sp[] = {"rows", "cols"}, *sx[] = {"x"}, *sd[] = {"normal(0, 3)"};
	struct ks_task *t = task("softmax", "reduction", sp, 2, sx, sd, 1, (double[]){64, 2048});
	VERDICT(t, run_softmax(t, w, softmax_good), run_softmax(t, w, softmax_good),
		"softmax with max subtraction", 0);
	VERDICT(t, run_softmax(t, w, softmax_nomax), run_softmax(t, w, softmax_nomax),
		"softmax without max subtraction", 1);
	VERDICT(t, run_softmax(t, w, softmax_tail32), run_softmax(t, w, softmax_tail32),
		"softmax ignoring the tail beyond a multiple of 32", 1);
	task_free(t);

	const char *mp[] = {"m", "n", "k"}, *mx[] = {"a", "b"};
	const char *md[] = {"normal(0, 1)", "normal(0, 1)"};
	t = task("matmul", "matmul", mp, 3, mx, md, 2, (double[]){64, 64, 64});
	VERDICT(t, run_mm(t, w, mm_good), run_mm(t, w, mm_good), "matmul", 0);
	VERDICT(t, run_mm(t, w, mm_tile16), run_mm(t, w, mm_tile16),
		"matmul with unmasked 16x16x16 tiles", 1);
	task_free(t);

	const char *cp[] = {"batch", "dim", "seqlen", "dstate"};
	const char *cx[] = {"u", "delta", "A", "B", "C"};
	const char *cd[] = {"normal(0, 1)", "normal(0, 1)", "-exp(normal(0, 1))", "normal(0, 1)",
			    "normal(0, 1)"};
	t = task("selective_scan", "scan", cp, 4, cx, cd, 5, (double[]){1, 8, 256, 16});
	VERDICT(t, run_scan(t, w, 0), run_scan(t, w, 0), "sequential scan", 0);
	VERDICT(t, run_scan(t, w, 256), run_scan(t, w, 256),
		"chunked scan that drops the carried state", 1);
	task_free(t);

	const char *ap[] = {"batch", "heads", "seqlen", "head_dim", "causal"};
	const char *ax[] = {"q", "k", "v"};
	const char *ad[] = {"normal(0, 1)", "normal(0, 1)", "normal(0, 1)"};
	t = task("attention", "attention", ap, 5, ax, ad, 3, (double[]){1, 2, 64, 16, 0});
	VERDICT(t, run_attn(t, w, ATTN_GOOD), run_attn(t, w, ATTN_GOOD), "online-softmax attention", 0);
	VERDICT(t, run_attn(t, w, ATTN_STRICT_CAUSAL), run_attn(t, w, ATTN_STRICT_CAUSAL),
		"attention whose causal mask drops the diagonal", 1);
	VERDICT(t, run_attn(t, w, ATTN_NO_RESCALE), run_attn(t, w, ATTN_NO_RESCALE),
		"attention that never rescales after the first block", 1);
	task_free(t);
	return tap_done();
}
