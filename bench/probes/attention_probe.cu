/* A quick check of a CUDA attention template on one shape, without ksearch (for a GPU machine
 * where ksearch does not build): fp16 inputs from a fixed xorshift normal generator, the
 * template's attention() entry, an fp32 online-softmax reference on the GPU (one thread per
 * query), and the task's tolerance: per element atol 2e-3 + rtol 2e-2, and the relative L2
 * error of the whole output at most 5e-3.  The output is set to NaN first, so an element the
 * kernel skips fails.  q and o are [batch, heads, seqlen, head_dim], k and v [batch, kv_heads,
 * kv_seqlen, head_dim]; query head h reads kv head h / (heads / kv_heads); causal is top-left
 * (key j visible to query i iff j <= i).  With REPS > 0 it also times REPS back-to-back calls
 * after 3 warm-up calls with CUDA events: no L2 flush between calls, so the figure is a little
 * better than bench/cuda/attention.py's protocol.
 *
 *   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -DKS_TEMPLATE='"FILE.cu"' \
 *        [-DKNOB=V ...] -o probe bench/probes/attention_probe.cu
 *   ./probe BATCH HEADS KV_HEADS SEQLEN KV_SEQLEN HEAD_DIM CAUSAL [SD [REPS]]
 *
 * SD scales q and k (large logits); exit 0 when the output is within tolerance, 1 when not,
 * 2 on a usage or CUDA error. */
#include KS_TEMPLATE
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define MAX_D 128

static __global__ void reference(const __half *q, const __half *k, const __half *v, float *o,
				 int bh, int heads, int kv_heads, int len, int kv_len, int d,
				 int causal)
{
	long row = blockIdx.x * (long)blockDim.x + threadIdx.x;
	if (row >= (long)bh * len)
		return;
	int i = (int)(row % len), qh = (int)(row / len); /* qh = b * heads + h */
	/* kv head b * kv_heads + h / (heads / kv_heads), written out the long way on purpose:
	 * the kernels may simplify it, the reference should not share their shortcut */
	long kvh = (long)(qh / heads) * kv_heads + qh % heads / (heads / kv_heads);
	const __half *kh = k + kvh * kv_len * d, *vh = v + kvh * kv_len * d;
	float qv[MAX_D], acc[MAX_D], m = -INFINITY, l = 0, scale = 1.f / sqrtf((float)d);
	for (int c = 0; c < d; c++) {
		qv[c] = __half2float(q[row * d + c]);
		acc[c] = 0;
	}
	int keys = causal ? (i + 1 < kv_len ? i + 1 : kv_len) : kv_len;
	for (int j = 0; j < keys; j++) {
		float s = 0;
		for (int c = 0; c < d; c++)
			s += qv[c] * __half2float(kh[(long)j * d + c]);
		s *= scale;
		float mn = fmaxf(m, s), a = expf(m - mn), p = expf(s - mn);
		l = l * a + p;
		for (int c = 0; c < d; c++)
			acc[c] = acc[c] * a + p * __half2float(vh[(long)j * d + c]);
		m = mn;
	}
	for (int c = 0; c < d; c++)
		o[row * d + c] = acc[c] / l;
}

static unsigned long long rng_state = 88172645463325252ull;

static double uniform01(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return ((rng_state >> 11) + 0.5) / 9007199254740992.0;
}

static float normal(void)
{
	double u1 = uniform01(), u2 = uniform01();
	return (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
}

#define CK(x)                                                                               \
	do {                                                                                \
		cudaError_t e_ = (x);                                                       \
		if (e_ != cudaSuccess) {                                                    \
			printf("CUDA error %s at %s\n", cudaGetErrorString(e_), #x);        \
			return 2;                                                           \
		}                                                                           \
	} while (0)

#ifdef KS_TRACE
/* the phase stamps of the traced CTA's two consumer warpgroups (flash_wgmma.cu, KS_TRACE):
 * every tile's cycles per phase, then the median of each phase over the tiles */
static int print_trace()
{
	static long long tr[2][KS_TRACE_N][KS_TRACE_PHASES];
	CK(cudaMemcpyFromSymbol(tr, ks_trace, sizeof tr));
	static const char *name[KS_TRACE_PHASES] = {"period", "kv_wait", "fence", "s_wgmma",
						    "softmax", "pv_wgmma"};
	std::vector<long long> col[KS_TRACE_PHASES];
	printf("\nwg tile  start %s", name[0]);
	for (int k = 1; k < KS_TRACE_PHASES; k++)
		printf(" %s", name[k]);
	printf(" (cycles; period: to the next tile's top)\n");
	for (int i = 0; i + 1 < KS_TRACE_N; i++)
		for (int w = 0; w < 2; w++) {
			const long long *t = tr[w][i], period = tr[w][i + 1][0] - t[0];
			if (t[0] == 0 || tr[w][i + 1][0] == 0)
				continue; /* fewer tiles than KS_TRACE_N */
			printf("%d %3d %8lld %6lld", w, i, t[0] - tr[0][0][0], period);
			col[0].push_back(period);
			for (int k = 1; k < KS_TRACE_PHASES; k++) {
				printf(" %6lld", t[k] - t[k - 1]);
				col[k].push_back(t[k] - t[k - 1]);
			}
			printf("\n");
		}
	printf("median");
	for (int k = 0; k < KS_TRACE_PHASES; k++) {
		std::vector<long long> &c = col[k];
		std::sort(c.begin(), c.end());
		printf(" %s %lld", name[k], c.empty() ? 0 : c[c.size() / 2]);
	}
	printf("\n");
	return 0;
}
#endif

int main(int argc, char **argv)
{
	if (argc < 8) {
		fprintf(stderr,
			"usage: %s BATCH HEADS KV_HEADS SEQLEN KV_SEQLEN HEAD_DIM CAUSAL [SD [REPS]]\n",
			argv[0]);
		return 2;
	}
	int b = atoi(argv[1]), h = atoi(argv[2]), kvh = atoi(argv[3]), len = atoi(argv[4]);
	int kv_len = atoi(argv[5]), d = atoi(argv[6]), causal = atoi(argv[7]);
	float sd = argc > 8 ? (float)atof(argv[8]) : 1;
	int reps = argc > 9 ? atoi(argv[9]) : 0;
	if (d > MAX_D || d <= 0 || b <= 0 || h <= 0 || kvh <= 0 || h % kvh || len <= 0 ||
	    kv_len <= 0) {
		fprintf(stderr, "bad shape (head_dim 1..%d, heads a multiple of kv_heads)\n", MAX_D);
		return 2;
	}
	size_t nq = (size_t)b * h * len * d, nkv = (size_t)b * kvh * kv_len * d;
	std::vector<__half> hq(nq), hk(nkv), hv(nkv), ho(nq);
	for (size_t i = 0; i < nq; i++)
		hq[i] = __float2half(sd * normal());
	for (size_t i = 0; i < nkv; i++)
		hk[i] = __float2half(sd * normal());
	for (size_t i = 0; i < nkv; i++)
		hv[i] = __float2half(normal());
	__half *q, *k, *v, *o;
	float *ref;
	/* exact sizes: a read past k or v's end is an error compute-sanitizer can name */
	CK(cudaMalloc(&q, nq * 2));
	CK(cudaMalloc(&k, nkv * 2));
	CK(cudaMalloc(&v, nkv * 2));
	CK(cudaMalloc(&o, nq * 2));
	CK(cudaMalloc(&ref, nq * 4));
	CK(cudaMemcpy(q, hq.data(), nq * 2, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(k, hk.data(), nkv * 2, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(v, hv.data(), nkv * 2, cudaMemcpyHostToDevice));
	CK(cudaMemset(o, 0xff, nq * 2)); /* NaN in fp16 */
	attention(q, k, v, o, b, h, kvh, len, kv_len, d, causal, 0);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	reference<<<(unsigned)((b * h * (long)len + 127) / 128), 128>>>(q, k, v, ref, b * h, h, kvh,
								  len, kv_len, d, causal);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	std::vector<float> hr(nq);
	CK(cudaMemcpy(hr.data(), ref, nq * 4, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(ho.data(), o, nq * 2, cudaMemcpyDeviceToHost));
	double worst = 0, e2 = 0, r2 = 0;
	size_t bad = 0, first = nq;
	for (size_t i = 0; i < nq; i++) {
		double got = __half2float(ho[i]), want = hr[i], diff = fabs(got - want);
		if (!(diff <= 2e-3 + 2e-2 * fabs(want))) { /* NaN fails too */
			first = first == nq ? i : first;
			bad++;
		}
		if (!(diff <= worst))
			worst = diff;
		e2 += (got - want) * (got - want);
		r2 += want * want;
	}
	double rel_l2 = sqrt(e2 / (r2 > 0 ? r2 : 1));
	bool ok = bad == 0 && rel_l2 <= 5e-3; /* NaN in rel_l2 fails too */
	printf("B%d H%d KV%d L%d Lkv%d D%d causal %d sd %g: max abs err %.3g, rel l2 %.2g, %zu bad", b,
	       h, kvh, len, kv_len, d, causal, sd, worst, rel_l2, bad);
	if (bad)
		printf(" (first: head %zu row %zu col %zu got %g want %g)", first / d / len,
		       first / d % len, first % d, __half2float(ho[first]), hr[first]);
	if (reps > 0) {
		cudaEvent_t start, stop;
		cudaEventCreate(&start);
		cudaEventCreate(&stop);
		for (int i = 0; i < 3; i++)
			attention(q, k, v, o, b, h, kvh, len, kv_len, d, causal, 0);
		cudaEventRecord(start);
		for (int i = 0; i < reps; i++)
			attention(q, k, v, o, b, h, kvh, len, kv_len, d, causal, 0);
		cudaEventRecord(stop);
		CK(cudaEventSynchronize(stop));
		float ms;
		cudaEventElapsedTime(&ms, start, stop);
		double us = ms * 1e3 / reps;
		/* the task's flops: 4 * batch * heads * head_dim per visible (query, key) pair */
		double pairs = !causal ? (double)len * kv_len
			       : len <= kv_len ? len * (len + 1.0) / 2
					       : kv_len * (kv_len + 1.0) / 2 + (double)(len - kv_len) * kv_len;
		double flops = 4.0 * b * h * d * pairs;
		printf(" | %.1f us, %.0f TFLOP/s", us, flops / us * 1e-6);
	}
#ifdef KS_TRACE
	if (print_trace())
		return 2;
#endif
	printf("%s\n", ok ? "" : "  FAIL");
	return ok ? 0 : 1;
}
