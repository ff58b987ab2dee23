/* A quick check of a CUDA attention template on one shape, without ksearch (for a GPU machine
 * where ksearch does not build): fp16 inputs from a fixed xorshift normal generator, the
 * template's attention() entry, an fp32 online-softmax reference on the GPU (one thread per
 * query), and the task's tolerance per element (atol 2e-3 + rtol 2e-2).  The output is set to
 * NaN first, so an element the kernel skips fails.  With REPS > 0 it also times REPS
 * back-to-back calls after 3 warm-up calls with CUDA events: no L2 flush between calls, so the
 * figure is a little better than bench/cuda/attention.py's protocol.
 *
 *   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -DKS_TEMPLATE='"FILE.cu"' \
 *        [-DKNOB=V ...] -o probe bench/cuda/attention_probe.cu
 *   ./probe BATCH HEADS SEQLEN HEAD_DIM CAUSAL [SD [REPS]]
 *
 * SD scales q and k (large logits); exit 0 when every element is within tolerance. */
#include KS_TEMPLATE
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define MAX_D 128

static __global__ void reference(const __half *q, const __half *k, const __half *v, float *o,
				 int bh, int len, int d, int causal)
{
	long row = blockIdx.x * (long)blockDim.x + threadIdx.x;
	if (row >= (long)bh * len)
		return;
	int i = (int)(row % len);
	long head = row - i; /* first row of this (batch, head) */
	float acc[MAX_D], m = -INFINITY, l = 0, scale = 1.f / sqrtf((float)d);
	for (int c = 0; c < d; c++)
		acc[c] = 0;
	int keys = causal ? i + 1 : len;
	for (int j = 0; j < keys; j++) {
		float s = 0;
		for (int c = 0; c < d; c++)
			s += __half2float(q[row * d + c]) * __half2float(k[(head + j) * d + c]);
		s *= scale;
		float mn = fmaxf(m, s), a = expf(m - mn), p = expf(s - mn);
		l = l * a + p;
		for (int c = 0; c < d; c++)
			acc[c] = acc[c] * a + p * __half2float(v[(head + j) * d + c]);
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

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: %s BATCH HEADS SEQLEN HEAD_DIM CAUSAL [SD [REPS]]\n", argv[0]);
		return 2;
	}
	int b = atoi(argv[1]), h = atoi(argv[2]), len = atoi(argv[3]), d = atoi(argv[4]);
	int causal = atoi(argv[5]), reps = argc > 7 ? atoi(argv[7]) : 0;
	float sd = argc > 6 ? (float)atof(argv[6]) : 1;
	if (d > MAX_D) {
		fprintf(stderr, "head_dim above %d\n", MAX_D);
		return 2;
	}
	size_t n = (size_t)b * h * len * d;
	std::vector<__half> hq(n), hk(n), hv(n), ho(n);
	for (size_t i = 0; i < n; i++) {
		hq[i] = __float2half(sd * normal());
		hk[i] = __float2half(sd * normal());
		hv[i] = __float2half(normal());
	}
	__half *q, *k, *v, *o;
	float *ref;
	cudaMalloc(&q, n * 2);
	cudaMalloc(&k, n * 2);
	cudaMalloc(&v, n * 2);
	cudaMalloc(&o, n * 2);
	cudaMalloc(&ref, n * 4);
	cudaMemcpy(q, hq.data(), n * 2, cudaMemcpyHostToDevice);
	cudaMemcpy(k, hk.data(), n * 2, cudaMemcpyHostToDevice);
	cudaMemcpy(v, hv.data(), n * 2, cudaMemcpyHostToDevice);
	cudaMemset(o, 0xff, n * 2); /* NaN in fp16 */
	attention(q, k, v, o, b, h, len, d, causal, 0);
	cudaError_t err = cudaDeviceSynchronize();
	if (err) {
		printf("CUDA error %s\n", cudaGetErrorString(err));
		return 2;
	}
	reference<<<(unsigned)((b * h * (long)len + 127) / 128), 128>>>(q, k, v, ref, b * h, len, d,
								  causal);
	cudaDeviceSynchronize();
	std::vector<float> hr(n);
	cudaMemcpy(hr.data(), ref, n * 4, cudaMemcpyDeviceToHost);
	cudaMemcpy(ho.data(), o, n * 2, cudaMemcpyDeviceToHost);
	double worst = 0;
	size_t bad = 0, first = n;
	for (size_t i = 0; i < n; i++) {
		double got = __half2float(ho[i]), want = hr[i], diff = fabs(got - want);
		if (!(diff <= 2e-3 + 2e-2 * fabs(want))) { /* NaN fails too */
			first = first == n ? i : first;
			bad++;
		}
		if (!(diff <= worst))
			worst = diff;
	}
	printf("B%d H%d L%d D%d causal %d sd %g: max abs err %.3g, %zu bad", b, h, len, d, causal,
	       sd, worst, bad);
	if (bad)
		printf(" (first: row %zu col %zu got %g want %g)", first / d % len, first % d,
		       __half2float(ho[first]), hr[first]);
	if (reps > 0) {
		cudaEvent_t start, stop;
		cudaEventCreate(&start);
		cudaEventCreate(&stop);
		for (int i = 0; i < 3; i++)
			attention(q, k, v, o, b, h, len, d, causal, 0);
		cudaEventRecord(start);
		for (int i = 0; i < reps; i++)
			attention(q, k, v, o, b, h, len, d, causal, 0);
		cudaEventRecord(stop);
		cudaEventSynchronize(stop);
		float ms;
		cudaEventElapsedTime(&ms, start, stop);
		double us = ms * 1e3 / reps;
		double flops = causal ? 2.0 * b * h * len * (len + 1.0) * d
				      : 4.0 * b * h * (double)len * len * d;
		printf(" | %.1f us, %.0f TFLOP/s", us, flops / us * 1e-6);
	}
	printf("\n");
	return bad ? 1 : 0;
}
