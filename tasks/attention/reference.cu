/* Trusted GPU reference for attention: what reference.c computes, on the device. ksearch takes
 * the expected outputs of the large workloads (at least 1e10 flops) from this file, run in a
 * runner process of its own (docs/evaluation.md).
 *
 * Why it can be trusted: one thread per query does reference.c's arithmetic in double, in
 * reference.c's order: each score is a sum over d = 0, 1, ..., head_dim-1 of q*k, times
 * scale = 1/sqrt(head_dim); m is the max over the visible keys; then for j = 0, 1, ... in order
 * p = exp(s - m), l += p, acc[d] += p * v[j][d]; finally o = acc / l rounded to f16 (bf16 in
 * attention_bf16) once.  The only difference is that scores are computed twice (once for m,
 * once for p) instead of being stored, and that the device may fuse a multiply and an add
 * (one rounding instead of two, 1e-16 relative in double): outputs equal reference.c's after
 * the output rounding except, rarely, by one unit.  acc lives in the thread's local memory
 * (head_dim <= 256).
 *
 * What validates it: tests/cli/t0400-cuda.sh evaluates this file as a candidate on a GPU,
 * against reference.c on the small workloads and every check (attention's; attention_bf16's
 * has been compiled, not yet run on a GPU). */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

/* The element type of q, k, v, o.  A variant's wrapper (tasks/attention_bf16/reference.cu)
 * defines ATTN_BF16 1 and its entry point's name before including this file.  ATTN_STORE
 * rounds a double once, to nearest even, as reference.c does. */
#ifndef ATTN_BF16
#define ATTN_BF16 0
#define ATTN_FN attention
#endif

#if ATTN_BF16
#include <cuda_bf16.h>
#define ATTN_T __nv_bfloat16
#define ATTN_LOAD(x) __bfloat162float(x)
#define ATTN_STORE(d) __double2bfloat16(d)
#else
#define ATTN_T __half
#define ATTN_LOAD(x) __half2float(x)
#define ATTN_STORE(d) __double2half(d)
#endif

#define MAX_HD 256

__device__ static double score(const ATTN_T *qi, const ATTN_T *kj, int hd, double scale)
{
	double s = 0.0;
	for (int d = 0; d < hd; d++)
		s += (double)ATTN_LOAD(qi[d]) * (double)ATTN_LOAD(kj[d]);
	return s * scale;
}

/* one thread per query row r = (b * heads + h) * seqlen + i; its kv head is
 * b * kv_heads + h / (heads / kv_heads) (grouped-query heads); causal is top-left aligned */
__global__ void attention_reference(const ATTN_T *q, const ATTN_T *k, const ATTN_T *v, ATTN_T *o,
				    int64_t rows, int heads, int kv_heads, int seqlen, int kv_seqlen,
				    int hd, int causal)
{
	const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	const int i = (int)(r % seqlen);
	const int64_t bh = r / seqlen, b = bh / heads, h = bh % heads;
	const int64_t kvhead = (b * kv_heads + h / (heads / kv_heads)) * kv_seqlen * hd;
	const ATTN_T *qi = q + r * hd, *kh = k + kvhead, *vh = v + kvhead;
	const double scale = 1.0 / sqrt((double)hd);
	const int nkeys = causal && i + 1 < kv_seqlen ? i + 1 : kv_seqlen;
	double m = -INFINITY, l = 0.0, acc[MAX_HD];
	for (int j = 0; j < nkeys; j++) {
		const double s = score(qi, kh + (int64_t)j * hd, hd, scale);
		if (s > m)
			m = s;
	}
	for (int d = 0; d < hd; d++)
		acc[d] = 0.0;
	for (int j = 0; j < nkeys; j++) {
		const double p = exp(score(qi, kh + (int64_t)j * hd, hd, scale) - m);
		l += p;
		for (int d = 0; d < hd; d++)
			acc[d] += p * (double)ATTN_LOAD(vh[(int64_t)j * hd + d]);
	}
	for (int d = 0; d < hd; d++)
		o[r * hd + d] = ATTN_STORE(acc[d] / l);
}

void ATTN_FN(const ATTN_T *q, const ATTN_T *k, const ATTN_T *v, ATTN_T *o, int32_t batch,
	     int32_t heads, int32_t kv_heads, int32_t seqlen, int32_t kv_seqlen, int32_t head_dim,
	     int32_t causal, cudaStream_t stream)
{
	const int64_t rows = (int64_t)batch * heads * seqlen;
	if (rows <= 0 || head_dim <= 0 || head_dim > MAX_HD || kv_heads <= 0 ||
	    heads % kv_heads || kv_seqlen <= 0)
		return; /* o stays unwritten: nothing is claimed for an unsupported shape */
	attention_reference<<<(unsigned)((rows + 127) / 128), 128, 0, stream>>>(
		q, k, v, o, rows, heads, kv_heads, seqlen, kv_seqlen, head_dim, causal);
}
